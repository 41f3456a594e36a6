"""Analyses of the information-weighted regression paper (spec 000) run by ``dpbench analyze`` / ``dpbench report``.

* ``iwr_e1`` — E1 (§7.3): population information matrices vs T; no run needed (table, spec comparison, figure).
* ``iwr_ratio`` — the closing notes' number: median(metric | numerator) / median(metric | denominator) per dataset
  and ε (and an extra coordinate such as data.n), with the medians of every curve.
* ``iwr_e5`` — E5 (§7.7): normalised errors E|θ̂−θ*|·E|φ|·α√T and the SSP / Alg 1 ratio vs E|φ|/Eφ².

The per-trial figures (median ± bootstrap 95% CI, log–log) are generic presets (``plots:`` in
configs/info_weighted/*.yaml); E1's and E5's own figures are the figure kinds ``iwr_e1`` and ``iwr_e5_ratio``
(:mod:`dpbench.papers.iwr.figures`), drawn through the kinds' table.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from dpbench import registry
from dpbench.analysis.figures.kinds import draw
from dpbench.analysis.figures.save import save_figures
from dpbench.analysis.runs import load_run, require_columns
from dpbench.analysis.stats import paired_ratio_ci
from dpbench.contract import Hyper
from dpbench.io.atomic import write_atomic


@registry.register_analysis(
    "iwr_e1",
    summary="spec 000 §7.3 E1: PoP_IW vs PoP_SSP and the W interpolation vs T (no run); -o out=results/iwr_e1",
    needs_runs=False,
    options={"out": Hyper(str, default="results/iwr_e1", doc="folder of the tables and the figure")},
)
def iwr_e1(runs: list[Path], options: dict[str, str], echo: Callable[[str], None]) -> list[Path]:
    from dpbench.papers.iwr.e1 import run_e1

    o = registry.analysis_options("iwr_e1", options)
    written = run_e1(Path(o["out"]))
    for kind, path in written.items():
        echo(f"wrote {kind}: {path}")
    return list(written.values())


def ratio_table(
    trials: pd.DataFrame, metric: str, numerator: str, denominator: str, by: tuple[str, ...] = ("dataset_id", "epsilon")
) -> pd.DataFrame:
    """Median(metric | numerator label) / median(metric | denominator label) per ``by`` group."""
    for label in (numerator, denominator):
        if label not in set(trials["label"]):
            raise ValueError(f"iwr_ratio: no curve labelled {label!r}; labels: {', '.join(pd.unique(trials['label']))}")
    med = trials.groupby([*by, "label"])[metric].median().unstack("label")
    out = pd.DataFrame({numerator: med[numerator], denominator: med[denominator]})
    out["ratio"] = out[numerator] / out[denominator]
    return out.reset_index()


@registry.register_analysis(
    "iwr_ratio",
    summary="median table of every curve and the ratio of medians numerator/denominator per dataset "
    "and ε; -o metric=param_error_sigma numerator=LABEL denominator=LABEL by=data.n",
    options={
        "metric": Hyper(str, default="param_error_sigma", doc="the per-trial metric column"),
        "numerator": Hyper(str, default="IWR-DP", doc="the label of the numerator's curve"),
        "denominator": Hyper(str, default="AdaSSP", doc="the label of the denominator's curve"),
        "by": Hyper(str, default="", doc="an extra coordinate of the table (e.g. data.n); empty: none"),
    },
)
def iwr_ratio(runs: list[Path], options: dict[str, str], echo: Callable[[str], None]) -> list[Path]:
    o = registry.analysis_options("iwr_ratio", options)
    written = []
    for run_dir in runs:
        run = load_run(run_dir)
        trials, metric = run.trials, o["metric"]
        for column in (metric, o["by"] or "epsilon"):
            if column not in trials:
                raise ValueError(f"iwr_ratio: {column!r} is not a column of {run.path / 'trials.csv'}")
        keys = ("dataset", o["by"], "epsilon") if o["by"] else ("dataset_id", "epsilon")
        wide = trials.groupby([*keys, "label"], sort=False)[metric].median().unstack("label")
        wide = wide[[lab for lab in run.label_order() if lab in wide.columns]]
        with pd.option_context("display.width", 200, "display.max_rows", 500, "display.max_columns", 30):
            echo(f"median {metric}:\n{wide.to_string(float_format=lambda v: f'{v:.3g}')}")
            ratios = ratio_table(trials, metric, o["numerator"], o["denominator"], by=keys)
            echo(
                f"\nratio of medians {o['numerator']} / {o['denominator']}:\n"
                f"{ratios.to_string(index=False, float_format=lambda v: f'{v:.3g}')}"
            )
        path = run.path / f"iw_ratio_{metric}.csv"
        write_atomic(path, ratios.to_csv(index=False))
        echo(f"wrote {path}")
        written.append(path)
    return written


E5_CELL = ["data.rho", "data.s", "data.n", "epsilon"]  # one point of E5: (ρ, s, T, α)
E5_COLUMNS = ("abs_error_1d", "data.n", "data.rho", "data.s")  # the columns of an iw_e5_ldp_1d run E5 reads
E5_PAIR_KEY = ["data_draw", "trial"]  # Alg 1 and Laplace SSP see the same data and noise seeds (common random numbers)


def e5_ratio_ci(trials: pd.DataFrame, cell: list[str], seed: int = 0, resamples: int = 2000) -> pd.DataFrame:
    """Per cell: the ratio of mean errors Laplace SSP / Alg 1 with a paired percentile-bootstrap 95% CI — fits
    paired by (data_draw, trial), pairs resampled with replacement; one seeded generator, cells in sorted order."""
    rng = np.random.default_rng(seed)
    key = [c for c in E5_PAIR_KEY if c in trials]
    rows = []
    for values, part in trials.groupby(cell, sort=True):
        a = part[part["mechanism"] == "ldp_laplace_ssp_1d"].set_index(key)["abs_error_1d"]
        b = part[part["mechanism"] == "ldp_simple_1d"].set_index(key)["abs_error_1d"]
        joined = pd.concat([a.rename("a"), b.rename("b")], axis=1, join="inner")
        _, lo, hi = paired_ratio_ci(joined["a"], joined["b"], rng, stat=np.mean, resamples=resamples)
        rows.append({**dict(zip(cell, values, strict=True)), "ratio_lo": lo, "ratio_hi": hi, "pairs": len(joined)})
    return pd.DataFrame(rows, columns=[*cell, "ratio_lo", "ratio_hi", "pairs"])


def e5_means(trials: pd.DataFrame) -> pd.DataFrame:
    """Per (ρ, s, T, α) and mechanism: the mean error, E|φ|, Eφ², E|θ̂−θ*|·E|φ|·α√T and Alg 1's theory value."""
    t = trials.assign(
        E_abs_phi=trials["data.rho"] + (1 - trials["data.rho"]) * trials["data.s"],
        E_phi2=trials["data.rho"] + (1 - trials["data.rho"]) * trials["data.s"] ** 2,
    )
    mean = (
        t.groupby([*E5_CELL, "mechanism"])
        .agg(err=("abs_error_1d", "mean"), E_abs_phi=("E_abs_phi", "first"), E_phi2=("E_phi2", "first"))
        .reset_index()
    )
    mean["normalized"] = mean["err"] * mean["E_abs_phi"] * mean["epsilon"] * np.sqrt(mean["data.n"])
    mean["theory_alg1"] = 0.8 * np.sqrt((2 * (4 / mean["epsilon"]) ** 2 + 1) / mean["data.n"]) / mean["E_abs_phi"]
    return mean


def e5_ratios(trials: pd.DataFrame, seed: int = 0, resamples: int = 2000) -> pd.DataFrame:
    """Per (ρ, s, T, α): both mean errors, their ratio Laplace SSP / Alg 1 with its paired bootstrap 95% CI
    (:func:`e5_ratio_ci`) and E|φ|/Eφ² (Lemma 3.1 vs Prop 3.2) — the points of the ``iwr_e5_ratio`` figure."""
    wide = e5_means(trials).pivot_table(index=E5_CELL, columns="mechanism", values="err").reset_index()
    wide["ratio_ssp_over_alg1"] = wide["ldp_laplace_ssp_1d"] / wide["ldp_simple_1d"]
    wide["E_abs_phi_over_E_phi2"] = (wide["data.rho"] + (1 - wide["data.rho"]) * wide["data.s"]) / (
        wide["data.rho"] + (1 - wide["data.rho"]) * wide["data.s"] ** 2
    )
    return wide.merge(e5_ratio_ci(trials, E5_CELL, seed, resamples), on=E5_CELL, how="left")


def e5_table(trials: pd.DataFrame, ratios: pd.DataFrame) -> pd.DataFrame:
    """:func:`e5_means` with each cell's ratio, its CI and E|φ|/Eφ² from ``ratios`` (:func:`e5_ratios`)."""
    columns = [*E5_CELL, "ratio_ssp_over_alg1", "ratio_lo", "ratio_hi", "E_abs_phi_over_E_phi2"]
    return e5_means(trials).merge(ratios[columns], on=E5_CELL)


def e5_tables(trials: pd.DataFrame, seed: int = 0, resamples: int = 2000) -> tuple[pd.DataFrame, pd.DataFrame]:
    """E5 (spec 000 §7.7): the long table (:func:`e5_table`) and the ratios (:func:`e5_ratios`)."""
    ratios = e5_ratios(trials, seed, resamples)
    return e5_table(trials, ratios), ratios


def fits_text(trials: pd.DataFrame) -> str:
    """How many fits each point of ``trials`` averages, in words (for the figure's caption)."""
    counts = trials.groupby([*E5_CELL, "mechanism"]).size()
    if counts.min() != counts.max():
        return f"{counts.min()}–{counts.max()} fits per mechanism"
    return f"{counts.min()} fits per mechanism"


#: the options of the iwr_e5 analysis and the iwr_e5_ratio figure kind (figures.py), declared once
E5_OPTIONS = {
    "seed": Hyper(int, default=0, ge=0, doc="seed of the paired bootstrap of the ratios"),
    "resamples": Hyper(int, default=2000, ge=100, doc="paired bootstrap resamples per cell"),
    "saturation": Hyper(float, default=0.3, gt=0, doc="a cell is saturated when a mean error exceeds it"),
}


@registry.register_analysis(
    "iwr_e5",
    summary="spec 000 §7.7 E5: normalised errors E|θ̂−θ*|·E|φ|·α√T and the SSP/Alg 1 ratio figure",
    options=E5_OPTIONS,
)
def iwr_e5(runs: list[Path], options: dict[str, str], echo: Callable[[str], None]) -> list[Path]:
    o = registry.analysis_options("iwr_e5", options)
    written = []
    for run_dir in runs:
        run = load_run(run_dir)
        require_columns(run, E5_COLUMNS, "iwr_e5", "an iw_e5_ldp_1d run has them")
        drawing = draw("iwr_e5_ratio", run, **o)  # figures.py
        table = e5_table(run.trials, drawing.points)
        with pd.option_context("display.width", 200, "display.max_rows", 500):
            echo(table.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
        csv = run.path / "iw_e5_table.csv"
        write_atomic(csv, table.to_csv(index=False))
        figures = save_figures(drawing.figure, run.path / "iw_e5_ratio")
        for path in (csv, *figures):
            echo(f"wrote {path}")
        written += [csv, *figures]
    return written


for _old in ("iw_e1", "iw_ratio", "iw_e5"):  # the names before the one `iwr` prefix: old configs still run
    registry.register_alias(_old, "iwr" + _old[2:], what="analysis")
