"""TukeyEM's fallback rate vs n per d, from a finished run of configs/leaderboard/tukey_fallback.yaml (issue 35
item 5; docs/leaderboard.md, "When TukeyEM stops falling back").

For every (ε, d, n): the share of trials whose PTR test failed (``info.fallback`` = 1, θ̂ = 0) with its Wilson 95%
interval, the median k̂ (the distance lower bound the test noises) and the number m of models; the smallest n of
the grid from which on (up to the grid's largest n) the fallback rate's upper bound is ≤ 5% ("stops falling back"),
else the n range where it is. Writes ``fallback.md`` (the table) and ``fallback.png`` / ``.pdf`` (rate vs n, one
panel per ε, one line per d, Wilson bars) into the run folder.

Usage: python scripts/tukey_fallback.py results/tukey_fallback
"""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from scipy.stats import binomtest  # noqa: E402

from dpbench.analysis.figures.save import save_figures, write_text  # noqa: E402
from dpbench.analysis.stats import fmt  # noqa: E402

#: "stopped falling back": the Wilson upper bound of the fallback rate is at most this
PASS_UPPER = 0.05


def wilson(successes: int, trials: int) -> tuple[float, float]:
    """Wilson 95% interval of a binomial proportion."""
    ci = binomtest(int(successes), int(trials)).proportion_ci(confidence_level=0.95, method="wilson")
    return float(ci.low), float(ci.high)


def rates(trials: pd.DataFrame) -> pd.DataFrame:
    """Per (epsilon, d, n): trials, fallbacks, rate, lo, hi, median k̂, models."""
    grouped = trials.groupby(["epsilon", "d", "n"])
    table = grouped.agg(
        trials=("info.fallback", "size"),
        fallbacks=("info.fallback", "sum"),
        k_hat=("info.k_hat", "median"),
        models=("info.models", "median"),
    ).reset_index()
    table["rate"] = table["fallbacks"] / table["trials"]
    bounds = [wilson(f, t) for f, t in zip(table["fallbacks"], table["trials"], strict=True)]
    table["lo"], table["hi"] = [b[0] for b in bounds], [b[1] for b in bounds]
    return table


def passing_ns(group: pd.DataFrame) -> str:
    """The n of the grid where the fallback rate's upper bound is ≤ PASS_UPPER, as ranges ("3000–30000"), or "none"."""
    ok = group.sort_values("n")
    runs, current = [], []
    for n, hi in zip(ok["n"], ok["hi"], strict=True):
        if hi <= PASS_UPPER:
            current.append(int(n))
        elif current:
            runs.append(current)
            current = []
    if current:
        runs.append(current)
    if not runs:
        return "none"
    return ", ".join(f"{r[0]}" if len(r) == 1 else f"{r[0]}–{r[-1]}" for r in runs)


def markdown(table: pd.DataFrame) -> str:
    ns = sorted(table["n"].unique())
    lines = []
    for epsilon, at in table.groupby("epsilon"):
        lines.append(
            f"\n| fallback rate [Wilson 95%], ε = {fmt(epsilon)} | "
            + " | ".join(f"n = {int(n)}" for n in ns)
            + f" | n with rate ≤ {PASS_UPPER:.0%} (upper bound) |"
        )
        lines.append("|---" * (len(ns) + 2) + "|")
        for d, group in at.groupby("d"):
            cells = {int(r.n): f"{r.rate:.2f} [{r.lo:.2f}, {r.hi:.2f}]" for r in group.itertuples()}
            lines.append(
                f"| d = {int(d)} | " + " | ".join(cells.get(int(n), "–") for n in ns) + f" | {passing_ns(group)} |"
            )
    return "\n".join(lines).lstrip("\n") + "\n"


def figure(table: pd.DataFrame, stem: Path) -> list[Path]:
    epsilons = sorted(table["epsilon"].unique())
    fig, axes = plt.subplots(1, len(epsilons), figsize=(3.6 * len(epsilons), 3.4), sharey=True, squeeze=False)
    for ax, epsilon in zip(axes[0], epsilons, strict=True):
        for k, (d, group) in enumerate(table[table["epsilon"] == epsilon].groupby("d")):
            group = group.sort_values("n")
            err = np.vstack([group["rate"] - group["lo"], group["hi"] - group["rate"]])
            dodge = 1.0 + 0.06 * (k - 1.5)  # lines that coincide (e.g. all at 1) stay visible side by side
            ax.errorbar(group["n"] * dodge, group["rate"], yerr=err, marker="o", ms=4, capsize=2, label=f"d = {int(d)}")
        ax.set_xscale("log")
        ax.set_title(f"ε = {fmt(epsilon)}")
        ax.set_xlabel("n (rows)")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("fallback rate (θ̂ = 0), Wilson 95%")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, title="TukeyEM, δ = 1/n²", loc="center right", fontsize=8)
    fig.suptitle(
        "TukeyEM: share of trials whose PTR test fails, θ̂ = 0 (sphere_linear, m = min(1000, ⌊n/d⌋); "
        "points dodged ±9% in n so coinciding lines stay visible)",
        fontsize=9,
    )
    fig.tight_layout(rect=(0, 0, 0.9, 1))
    paths = save_figures(fig, stem)
    plt.close(fig)
    return paths


def main(run_dir: str) -> None:
    run = Path(run_dir)
    trials = pd.read_csv(run / "trials.csv")
    table = rates(trials)
    text = markdown(table)
    write_text(run / "fallback.md", text)
    print(text)
    for path in figure(table, run / "fallback"):
        print(f"wrote {path}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    main(sys.argv[1])
