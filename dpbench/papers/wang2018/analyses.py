"""Wang 2018's UCI experiment (spec 005 §2a): the paper's metric per repetition and the summary over data sets.

* CV test MSE of (data set, method, ε, repetition) = mean over the 10 folds of the test MSE of one fit per fold
  (``exp_uci.m``'s ``cvErr``).
* Normalised test excess = (CV MSE − non-private CV MSE)/(trivial CV MSE − non-private CV MSE), same data set, ε
  and repetition (0: as good as the non-private ridge; 1: as bad as θ̂ = 0).
* Summary per (method, ε): the median over data sets of the repetition-mean normalised excess, with a percentile
  bootstrap 95% interval over data sets; and the paper's claims as paired comparisons per ε — on how many data sets
  method A's CV MSE (mean over repetitions) is below B's, and the median over data sets of the ratio A/B with its
  bootstrap interval.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from dpbench import registry
from dpbench.analysis.figures.kinds import draw
from dpbench.analysis.figures.save import save_figures
from dpbench.analysis.runs import load_run
from dpbench.analysis.stats import fmt, fmt_ci, format_table, median_ci
from dpbench.contract import Hyper
from dpbench.io.atomic import write_atomic

TRIVIAL, NONPRIVATE = "trivial", "non-private"
PRIVATE = ("SSP", "ObjPert", "OPS", "AdaOPS", "AdaSSP")
#: the paper's claims: (A, B) — A has the lower test error
CLAIMS = (("AdaOPS", "AdaSSP"), ("AdaOPS", "SSP"), ("AdaOPS", "ObjPert"), ("AdaSSP", "SSP"), ("AdaSSP", "ObjPert"))


def cv_errors(trials: pd.DataFrame) -> pd.DataFrame:
    """One row per (dataset, label, epsilon, data_draw): ``cv_mse`` = mean over folds of ``test_mse``."""
    keys = ["dataset", "label", "epsilon", "data_draw"]
    return trials.groupby(keys, as_index=False)["test_mse"].mean().rename(columns={"test_mse": "cv_mse"})


def normalised_excess(cv: pd.DataFrame) -> pd.DataFrame:
    """``cv`` with ``excess`` = (cv_mse − non-private)/(trivial − non-private) of the same dataset, ε and draw."""
    keys = ["dataset", "epsilon", "data_draw"]
    ref = cv.pivot_table(index=keys, columns="label", values="cv_mse")[[TRIVIAL, NONPRIVATE]].reset_index()
    out = cv.merge(ref, on=keys)
    out["excess"] = (out["cv_mse"] - out[NONPRIVATE]) / (out[TRIVIAL] - out[NONPRIVATE])
    return out.drop(columns=[TRIVIAL, NONPRIVATE])


def summary(excess: pd.DataFrame, seed: int = 2018, resamples: int = 2000) -> pd.DataFrame:
    """Per (label, ε): median over data sets of the repetition-mean normalised excess, bootstrap 95% CI."""
    per_dataset = excess.groupby(["label", "epsilon", "dataset"], as_index=False)["excess"].mean()
    rows = []
    for (label, eps), group in per_dataset.groupby(["label", "epsilon"]):
        med, lo, hi = median_ci(group["excess"].to_numpy(), np.random.default_rng([seed, int(eps * 1000)]), resamples)
        rows.append({"label": label, "epsilon": eps, "median": med, "lo": lo, "hi": hi, "datasets": len(group)})
    return pd.DataFrame(rows)


def compare(cv: pd.DataFrame, a: str, b: str, seed: int = 2018, resamples: int = 2000) -> pd.DataFrame:
    """Per ε: data sets where A's CV MSE (mean over repetitions) < B's, and the median ratio A/B with its CI."""
    means = cv.groupby(["label", "epsilon", "dataset"])["cv_mse"].mean().unstack("label")
    rows = []
    for eps, group in means[[a, b]].dropna().groupby(level="epsilon"):
        ratio = (group[a] / group[b]).to_numpy()
        med, lo, hi = median_ci(ratio, np.random.default_rng([seed, int(eps * 1000)]), resamples)
        rows.append({"A": a, "B": b, "epsilon": eps, "A_better": int((ratio < 1).sum()), "datasets": len(ratio),
                     "median_ratio": med, "lo": lo, "hi": hi})  # fmt: skip
    return pd.DataFrame(rows)


def ci_cells(frame: pd.DataFrame, value: str) -> list[str]:
    """ "value [lo, hi]" per row of ``frame``."""
    return [fmt_ci(row[value], row["lo"], row["hi"]) for _, row in frame.iterrows()]


def report_text(table: pd.DataFrame, comparisons: pd.DataFrame) -> str:
    """Markdown: the summary (one row per ε, one column per method) and the claims' paired comparisons."""
    wide = table.assign(cell=ci_cells(table, "median"))
    wide = wide.pivot(index="epsilon", columns="label", values="cell")[[c for c in PRIVATE if c in set(table["label"])]]
    claims = comparisons.assign(
        comparison=comparisons["A"] + " < " + comparisons["B"],
        wins=comparisons["A_better"].astype(str) + "/" + comparisons["datasets"].astype(str),
        ratio=ci_cells(comparisons, "median_ratio"),
    )
    claims = claims.pivot(index="epsilon", columns="comparison", values="wins").join(
        claims.pivot(index="epsilon", columns="comparison", values="ratio"), rsuffix=" (median ratio)"
    )
    datasets = fmt(table["datasets"].max(), 0)
    return (
        f"Median over {datasets} data sets of the normalised test excess (95% bootstrap CI over data sets):\n\n"
        + format_table(wide.reset_index())
        + "\n\nThe paper's claims, per ε: data sets on which A's CV test MSE is below B's (mean over repetitions), "
        "and the median over data sets of MSE_A / MSE_B (95% bootstrap CI):\n\n" + format_table(claims.reset_index())
    )


#: the options of the wang2018_summary analysis and figure kind (figures.py), declared once
OPTIONS = {
    "seed": Hyper(int, default=2018, ge=0, doc="bootstrap seed (one stream per ε)"),
    "resamples": Hyper(int, default=2000, ge=100, doc="bootstrap resamples over data sets"),
}


@registry.register_analysis(
    "wang2018_summary",
    summary="Wang 2018 UCI: CV test MSE per repetition, median normalised test excess per method and ε, the claims",
    options=OPTIONS,
)
def wang2018_summary(runs: list[Path], options: dict[str, str], echo: Callable[[str], None]) -> list[Path]:
    o = registry.analysis_options("wang2018_summary", options)
    written = []
    for run_dir in runs:
        run = load_run(run_dir)
        drawing = draw("wang2018_summary", run, seed=o["seed"], resamples=o["resamples"])  # figures.py
        cv, table = cv_errors(run.trials), drawing.points
        comparisons = pd.concat([compare(cv, a, b, o["seed"], o["resamples"]) for a, b in CLAIMS], ignore_index=True)
        write_atomic(run.path / "wang2018_summary.csv", table.to_csv(index=False))
        write_atomic(run.path / "wang2018_claims.csv", comparisons.to_csv(index=False))
        text = report_text(table, comparisons)
        write_atomic(run.path / "wang2018_summary.md", text + "\n")
        echo(text)
        written += save_figures(drawing.figure, run.path / "wang2018_summary")
        written += [run.path / "wang2018_summary.md"]
    return written
