"""Is the leaderboard's diffprivlib number diffprivlib's own? (issue 35 item 5; docs/leaderboard.md, "The peers").

Needs the ``peers`` extra (diffprivlib 0.6.6 with scikit-learn < 1.9), e.g. in a venv of its own:
``python -m venv /tmp/venv-peers && . /tmp/venv-peers/bin/activate && pip install -e ".[test,peers]"``.

Three tables (markdown on stdout):

1. the leaderboard's datasets at one ε: dpbench's ``diffprivlib_lr`` and diffprivlib's ``LinearRegression`` called
   directly as its docs say (``bounds_X`` / ``bounds_y`` given, ``fit_intercept=False``), on the same data with the
   same seed — the largest coefficient difference, the median normalised excess r = (MSE − OLS)/(‖Y‖²/n − OLS)
   with a bootstrap 95% CI over seeds and its mean (the leaderboard's per-dataset cell), the share of trials whose
   released noisy XᵀX is indefinite, and the same excess with the library's default ``fit_intercept=True``;
2. diffprivlib on ``sphere_linear`` data (‖x‖ = 1 exactly, so λ(XᵀX) ≈ n/d) over a grid of n: where the noisy
   quadratic stops being indefinite, the excess falls to OLS's;
3. diffprivlib's own documented example (the diabetes notebook: two features, ``bounds_X=(−0.138, 0.2)``,
   ``bounds_y=(25, 346)``, default intercept): test R² over seeds, as the notebook plots it.

Usage: python scripts/diffprivlib_check.py [--seeds 20] [--epsilon 1] [--datasets housing protein ...]
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

from dpbench import registry
from dpbench.analysis.stats import fmt, median_ci
from dpbench.mechanisms.peers import diffprivlib_lr

LEADERBOARD_DATASETS = (
    "crime pol concreteslump solar protein pendulum fertility housing tecator wine bike autompg energy concrete "
    "elevators gas airfoil breastcancer parkinsons sml keggundirected keggdirected yacht servo autos forest machine "
    "pumadyn32nm kin40k tamielectric"
).split()


def direct_fit(X: np.ndarray, y: np.ndarray, epsilon: float, seed: int, *, intercept: bool = False):
    """diffprivlib's LinearRegression as its docs describe it: the box bounds [−1, 1]^d and [−1, 1] passed, a fresh
    accountant, the generator seeded with ``seed``. Returns the fitted model."""
    lib = diffprivlib_lr.DIFFPRIVLIB
    d = X.shape[1]
    model = lib.models.LinearRegression(
        epsilon=epsilon,
        bounds_X=(-np.ones(d), np.ones(d)),
        bounds_y=(-1.0, 1.0),
        fit_intercept=intercept,
        random_state=seed,
        accountant=lib.BudgetAccountant(),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", lib.utils.PrivacyLeakWarning)
        return model.fit(X, y)


def normalised_excess(X: np.ndarray, y: np.ndarray, theta: np.ndarray, intercept: float = 0.0) -> float:
    """r = (MSE(θ) − MSE(OLS)) / (MSE(0) − MSE(OLS)) on the training rows (the leaderboard's metric)."""
    ols = np.linalg.lstsq(X, y, rcond=None)[0]
    mse_ols, mse_zero = np.mean((y - X @ ols) ** 2), np.mean(y**2)
    return float((np.mean((y - X @ theta - intercept) ** 2) - mse_ols) / (mse_zero - mse_ols))


def ci_text(values: list[float], seed: int = 0) -> str:
    med, lo, hi = median_ci(values, np.random.default_rng(seed))
    return f"{fmt(med)} [{fmt(lo)}, {fmt(hi)}]"


def same_seed_row(name: str, epsilon: float, seeds: int) -> str:
    """One dataset: dpbench's adapter vs the direct call on the same data and seed (table 1)."""
    info = registry.MECHANISMS["diffprivlib_lr"]
    data = registry.get_dataset(name).load(np.random.default_rng(0))
    X, y = data.X_train, data.y_train
    n, d = X.shape
    diffs, r_dpbench, r_direct, indefinite, r_intercept = [], [], [], [], []
    for s in range(seeds):
        result = info.fit(X, y, epsilon, 1.0 / n**2, np.random.default_rng(s))
        seed = int(np.random.default_rng(s).integers(2**31 - 1))  # the adapter's one draw from the trial's rng
        model = direct_fit(X, y, epsilon, seed)
        diffs.append(float(np.max(np.abs(result.theta - model.coef_))))
        r_dpbench.append(normalised_excess(X, y, result.theta))
        r_direct.append(normalised_excess(X, y, model.coef_))
        indefinite.append(result.info["noisy_quadratic_indefinite"])
        with_intercept = direct_fit(X, y, epsilon, seed, intercept=True)
        r_intercept.append(normalised_excess(X, y, with_intercept.coef_, float(with_intercept.intercept_)))
    eig = np.linalg.eigvalsh(X.T @ X)
    return (
        f"| {name} | {n} | {d} | {fmt(eig[0])} / {fmt(eig[-1])} | {max(diffs):.1e} | {ci_text(r_dpbench)} | "
        f"{fmt(np.mean(r_dpbench))} | {ci_text(r_direct)} | "
        f"{np.mean(indefinite):.2f} | {ci_text(r_intercept)} |"
    )


def sphere_row(n: int, d: int, epsilon: float, seeds: int) -> str:
    """diffprivlib (through dpbench) on sphere_linear(n, d) data (table 2)."""
    data = registry.get_dataset("sphere_linear").load(np.random.default_rng(1), n=n, d=d)
    X, y = data.X_train, data.y_train
    info = registry.MECHANISMS["diffprivlib_lr"]
    fits = [info.fit(X, y, epsilon, 1.0 / n**2, np.random.default_rng(s)) for s in range(seeds)]
    r = [normalised_excess(X, y, f.theta) for f in fits]
    lam_min = float(np.linalg.eigvalsh(X.T @ X)[0])
    share = np.mean([f.info["noisy_quadratic_indefinite"] for f in fits])
    return f"| {d} | {n} | {fmt(lam_min)} | {share:.2f} | {ci_text(r)} |"


def documented_example_row(epsilon: float, seeds: int) -> str:
    """diffprivlib's diabetes notebook (two features, its bounds, default intercept): median test R² (table 3)."""
    from sklearn import datasets
    from sklearn.linear_model import LinearRegression as SkLinearRegression
    from sklearn.model_selection import train_test_split

    lib = diffprivlib_lr.DIFFPRIVLIB
    data = datasets.load_diabetes()
    X_tr, X_te, y_tr, y_te = train_test_split(data.data[:, :2], data.target, test_size=0.2, random_state=0)
    baseline = SkLinearRegression().fit(X_tr, y_tr).score(X_te, y_te)
    scores = []
    for s in range(seeds):
        model = lib.models.LinearRegression(
            epsilon=epsilon,
            bounds_X=(-0.138, 0.2),
            bounds_y=(25, 346),
            random_state=s,
            accountant=lib.BudgetAccountant(),
        )
        scores.append(model.fit(X_tr, y_tr).score(X_te, y_te))
    return f"| {fmt(epsilon)} | {ci_text(scores)} | {fmt(baseline)} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--datasets", nargs="*", default=list(LEADERBOARD_DATASETS))
    args = parser.parse_args()
    if diffprivlib_lr.UNAVAILABLE:
        raise SystemExit(f"diffprivlib is unavailable: {diffprivlib_lr.UNAVAILABLE}")
    registry.discover()
    print(f"diffprivlib {diffprivlib_lr.DIFFPRIVLIB.__version__}, ε = {args.epsilon}, {args.seeds} seeds\n")
    print(
        "| dataset | n | d | λ_min / λ_max(XᵀX) | max \\|θ_dpbench − θ_direct\\| | r, dpbench [95% CI] | mean r | "
        "r, direct call | noisy XᵀX indefinite | r, direct, fit_intercept=True |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in args.datasets:
        print(same_seed_row(name, args.epsilon, args.seeds), flush=True)
    print("\n| d | n | λ_min(XᵀX) | noisy XᵀX indefinite | r [95% CI] |\n|---|---|---|---|---|")
    for d in (2, 5, 10):
        for n in (100, 1_000, 10_000, 100_000):
            print(sphere_row(n, d, args.epsilon, args.seeds), flush=True)
    print("\n| ε | test R² (median over seeds) [95% CI] | non-private baseline |\n|---|---|---|")
    for epsilon in (1.0, 10.0, 100.0):
        print(documented_example_row(epsilon, args.seeds), flush=True)


if __name__ == "__main__":
    main()
