"""Why Boosted AdaSSP was 10²–10⁴× worse than θ = 0 on the leaderboard (issue 35; docs/leaderboard.md).

Two tables (markdown on stdout), normalised excess r = (MSE(θ) − MSE(OLS)) / (MSE(0) − MSE(OLS)) on the training
rows of the leaderboard's datasets (the papers' normalisation, δ = 1/n²):

1. one dataset, ε = 1: r against the boosting rounds T for the two ridge rules (``paper``: 1.96√d·σ,
   ``spectral``: (2√d + 2√log 20)·σ) and AdaSSP — mean and median over trials with bootstrap 95% intervals, and
   the share of trials worse than θ = 0 (r > 1);
2. every leaderboard dataset at several ε, T = 100: per dataset the mean r over trials (the leaderboard's cell),
   then its median over datasets with a bootstrap 95% interval (datasets resampled), and the share of all trials
   with r > 1.

Usage: python scripts/boosted_ridge_check.py [--trials 100] [--dataset wine] [--board-trials 20]
       [--epsilons 0.1 1 10] [--skip-board]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np
from diffprivlib_check import LEADERBOARD_DATASETS, normalised_excess  # this script's directory

from dpbench import registry
from dpbench.analysis.stats import bootstrap, fmt, median_ci, percentile_interval
from dpbench.mechanisms.ssp import boosted_adassp

Fit = Callable[[np.ndarray, np.ndarray, float, float, np.random.Generator], np.ndarray]


def boosted(T: int, ridge: str) -> Fit:
    hyper = {"T": T, "step": "constant", "x_bound": 1.0, "y_bound": 1.0, "ridge": ridge}
    return lambda X, y, e, d, rng: boosted_adassp.fit(X, y, e, d, rng, **hyper).theta


def adassp() -> Fit:
    info = registry.MECHANISMS["adassp"]
    return lambda X, y, e, d, rng: info.fit(X, y, e, d, rng).theta


def excesses(fit: Fit, X: np.ndarray, y: np.ndarray, epsilon: float, trials: int) -> np.ndarray:
    delta = 1.0 / X.shape[0] ** 2
    return np.array(
        [normalised_excess(X, y, fit(X, y, epsilon, delta, np.random.default_rng(s))) for s in range(trials)]
    )


def mean_ci(values: np.ndarray, seed: int = 0) -> str:
    lo, hi = percentile_interval(bootstrap(values, "mean", np.random.default_rng(seed), 1000))
    return f"{fmt(values.mean())} [{fmt(lo)}, {fmt(hi)}]"


def median_text(values: np.ndarray, seed: int = 0) -> str:
    med, lo, hi = median_ci(values, np.random.default_rng(seed))
    return f"{fmt(med)} [{fmt(lo)}, {fmt(hi)}]"


def load(name: str) -> tuple[np.ndarray, np.ndarray]:
    data = registry.get_dataset(name).load(np.random.default_rng(0))
    return data.X_train, data.y_train


def rounds_table(name: str, trials: int) -> None:
    X, y = load(name)
    print(f"\n| {name} (n = {X.shape[0]}, d = {X.shape[1]}), ε = 1, {trials} trials | mean r [95% CI] "
          "| median r [95% CI] | share r > 1 |")  # fmt: skip
    print("|---|---|---|---|")
    rows: list[tuple[str, Fit]] = [("AdaSSP", adassp())]
    rows += [(f"Boosted, ridge {rule}, T = {T}", boosted(T, rule)) for rule in ("paper", "spectral")
             for T in (1, 3, 10, 30, 100)]  # fmt: skip
    for label, fit in rows:
        r = excesses(fit, X, y, 1.0, trials)
        print(f"| {label} | {mean_ci(r)} | {median_text(r)} | {np.mean(r > 1):.2f} |")


def board_table(epsilons: list[float], trials: int) -> None:
    fits: list[tuple[str, Fit]] = [("AdaSSP", adassp()), ("Boosted T=100, ridge paper", boosted(100, "paper")),
                                   ("Boosted T=100, ridge spectral", boosted(100, "spectral"))]  # fmt: skip
    data = {name: load(name) for name in LEADERBOARD_DATASETS}
    print(f"\n| 30 datasets, {trials} trials each: median over datasets of the mean r [95% CI]; share of trials "
          "with r > 1 | " + " | ".join(f"ε = {e:g}" for e in epsilons) + " |")  # fmt: skip
    print("|---|" + "---|" * len(epsilons))
    for label, fit in fits:
        cells = []
        for epsilon in epsilons:
            per = [excesses(fit, X, y, epsilon, trials) for X, y in data.values()]
            cells.append(f"{median_text(np.array([p.mean() for p in per]))}; {np.mean(np.concatenate(per) > 1):.3f}")
        print(f"| {label} | " + " | ".join(cells) + " |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--dataset", default="wine")
    parser.add_argument("--board-trials", type=int, default=20)
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.1, 1.0, 10.0])
    parser.add_argument("--skip-board", action="store_true")
    args = parser.parse_args()
    registry.discover()
    rounds_table(args.dataset, args.trials)
    if not args.skip_board:
        board_table(args.epsilons, args.board_trials)


if __name__ == "__main__":
    main()
