"""Analyses of the information-weighted regression paper (spec 000) run by ``dpbench analyze`` / ``dpbench report``.

* ``iwr_e1`` — E1 (§7.3): population information matrices vs T; no run needed (table, spec comparison, figure).
* ``iwr_ratio`` — the closing notes' number: median(metric | numerator) / median(metric | denominator) per dataset
  and ε (and an extra coordinate such as data.n), with the medians of every curve.
* ``iwr_e5`` — E5 (§7.7): normalised errors E|θ̂−θ*|·E|φ|·α√T and the SSP / Alg 1 ratio vs E|φ|/Eφ².

The figures (median ± bootstrap 95% CI, log–log) are generic presets (``plots:`` in configs/info_weighted/*.yaml).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from dpbench import registry
from dpbench.analysis.figures.save import save_figure
from dpbench.analysis.runs import load_run, require_columns
from dpbench.analysis.stats import paired_ratio_ci
from dpbench.io.atomic import write_atomic


@registry.register_analysis(
    "iwr_e1",
    summary="spec 000 §7.3 E1: PoP_IW vs PoP_SSP and the W interpolation vs T (no run); -o out=results/iwr_e1",
    needs_runs=False,
)
def iwr_e1(runs: list[Path], options: dict[str, str], echo: Callable[[str], None]) -> list[Path]:
    from dpbench.papers.iwr.e1 import run_e1

    o = registry.analysis_options("iwr_e1", options, {"out": "results/iwr_e1"})
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
)
def iwr_ratio(runs: list[Path], options: dict[str, str], echo: Callable[[str], None]) -> list[Path]:
    o = registry.analysis_options(
        "iwr_ratio", options, {"metric": "param_error_sigma", "numerator": "IWR-DP", "denominator": "AdaSSP", "by": ""}
    )
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


def e5_tables(trials: pd.DataFrame, seed: int = 0, resamples: int = 2000) -> tuple[pd.DataFrame, pd.DataFrame]:
    """E5 (spec 000 §7.7): per (ρ, s, T, α) and mechanism the mean error, E|θ̂−θ*|·E|φ|·α√T and Alg 1's theory
    value; and the ratio of mean errors Laplace SSP / Alg 1 (with its paired bootstrap 95% CI) next to E|φ|/Eφ²
    (Lemma 3.1 vs Prop 3.2)."""
    t = trials.copy()
    t["E_abs_phi"] = t["data.rho"] + (1 - t["data.rho"]) * t["data.s"]
    t["E_phi2"] = t["data.rho"] + (1 - t["data.rho"]) * t["data.s"] ** 2
    cell = ["data.rho", "data.s", "data.n", "epsilon"]
    mean = (
        t.groupby([*cell, "mechanism"])
        .agg(err=("abs_error_1d", "mean"), E_abs_phi=("E_abs_phi", "first"), E_phi2=("E_phi2", "first"))
        .reset_index()
    )
    mean["normalized"] = mean["err"] * mean["E_abs_phi"] * mean["epsilon"] * np.sqrt(mean["data.n"])
    mean["theory_alg1"] = 0.8 * np.sqrt((2 * (4 / mean["epsilon"]) ** 2 + 1) / mean["data.n"]) / mean["E_abs_phi"]
    wide = mean.pivot_table(index=cell, columns="mechanism", values="err").reset_index()
    wide["ratio_ssp_over_alg1"] = wide["ldp_laplace_ssp_1d"] / wide["ldp_simple_1d"]
    wide["E_abs_phi_over_E_phi2"] = (wide["data.rho"] + (1 - wide["data.rho"]) * wide["data.s"]) / (
        wide["data.rho"] + (1 - wide["data.rho"]) * wide["data.s"] ** 2
    )
    wide = wide.merge(e5_ratio_ci(t, cell, seed, resamples), on=cell, how="left")
    table = mean.merge(wide[[*cell, "ratio_ssp_over_alg1", "ratio_lo", "ratio_hi", "E_abs_phi_over_E_phi2"]], on=cell)
    return table, wide


def _dodge(wide: pd.DataFrame, spread: float = 1.035) -> np.ndarray:
    """x positions: the points sharing an E|φ|/Eφ² spread evenly around it by factors spread^k (log-symmetric),
    in the order (T, α), so that neither the points nor their CIs hide each other."""
    x = wide["E_abs_phi_over_E_phi2"].to_numpy(float)
    pos = x.copy()
    for value in np.unique(x):
        idx = np.flatnonzero(x == value)
        idx = idx[np.lexsort((wide["epsilon"].to_numpy()[idx], wide["data.n"].to_numpy()[idx]))]
        pos[idx] = value * spread ** (np.arange(idx.size) - (idx.size - 1) / 2)
    return pos


def e5_ratio_figure(wide: pd.DataFrame, path: Path, saturation: float = 0.3, fits: str = "") -> Path:
    """Ratio of mean errors Laplace SSP / Alg 1 (± paired bootstrap 95% CI) vs E|φ|/Eφ², with the diagonal the two
    lemmas predict; the points of one E|φ|/Eφ² are spread horizontally (:func:`_dodge`)."""
    import textwrap

    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 5.9))
    ax = fig.subplots()
    sat = ((wide["ldp_laplace_ssp_1d"] > saturation) | (wide["ldp_simple_1d"] > saturation)).to_numpy()
    xs, ys = _dodge(wide), wide["ratio_ssp_over_alg1"].to_numpy(float)
    lo = wide["ratio_lo"].to_numpy(float) if "ratio_lo" in wide else np.full_like(ys, np.nan)
    hi = wide["ratio_hi"].to_numpy(float) if "ratio_hi" in wide else np.full_like(ys, np.nan)
    for mask, style, label in (
        (~sat, {"marker": "o", "color": "C0", "markersize": 5}, f"neither mean error > {saturation:g}"),
        (
            sat,
            {"marker": "x", "color": "C1", "markersize": 6, "markeredgewidth": 1.5},
            f"saturated (a mean error > {saturation:g})",
        ),
    ):
        if not mask.any():
            continue
        yerr = np.vstack([ys[mask] - lo[mask], hi[mask] - ys[mask]])
        ax.errorbar(
            xs[mask],
            ys[mask],
            yerr=np.where(np.isfinite(yerr), yerr, 0.0),
            linestyle="",
            capsize=2,
            elinewidth=0.9,
            label=label,
            **style,
        )
    lim = [0.8, float(wide["E_abs_phi_over_E_phi2"].max()) * 1.3]
    ax.plot(lim, lim, "k:", label="ratio = E|φ|/Eφ² (Lemma 3.1 vs Prop 3.2)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("E|φ| / Eφ²  (points of one value spread ±15% horizontally)")
    ax.set_ylabel("mean |θ̂−θ*|: Laplace SSP / Alg 1")
    ax.grid(True, which="major", alpha=0.4)
    ax.legend(fontsize=7.5, loc="upper left")
    ax.set_title("E5 (b): ratio of mean errors, Laplace SSP / Alg 1, vs E|φ|/Eφ²", fontsize=9)
    caption = (
        "Synthetic demonstration of Lemma 3.1 vs Prop 3.2 (proposed in spec 000 §7.7), not a reproduction. "
        "One point per (ρ, s, T, α): ratio of mean errors over " + (fits or "all fits") + "; bars: paired "
        "percentile-bootstrap 95% CI (fits paired by data draw and noise trial, 2000 resamples, seed 0). "
        "Within one E|φ|/Eφ² the points are ordered by T, then α (left to right). At ρ = s = 1 (E|φ|/Eφ² = 1) "
        "both mechanisms release the same statistics: ratio exactly 1."
    )
    fig.text(0.5, 0.01, "\n".join(textwrap.wrap(caption, 105)), ha="center", va="bottom", fontsize=7, style="italic")
    fig.tight_layout(rect=(0, 0.11, 1, 1))
    save_figure(fig, path)
    return path


@registry.register_analysis(
    "iwr_e5", summary="spec 000 §7.7 E5: normalised errors E|θ̂−θ*|·E|φ|·α√T and the SSP/Alg 1 ratio figure"
)
def iwr_e5(runs: list[Path], options: dict[str, str], echo: Callable[[str], None]) -> list[Path]:
    registry.analysis_options("iwr_e5", options, {})
    written = []
    for run_dir in runs:
        run = load_run(run_dir)
        require_columns(run, ("abs_error_1d", "data.n", "data.rho", "data.s"), "iwr_e5", "an iw_e5_ldp_1d run has them")
        table, wide = e5_tables(run.trials)
        with pd.option_context("display.width", 200, "display.max_rows", 500):
            echo(table.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
        csv = run.path / "iw_e5_table.csv"
        write_atomic(csv, table.to_csv(index=False))
        counts = run.trials.groupby(["data.rho", "data.s", "data.n", "epsilon", "mechanism"]).size()
        fits = (
            f"{counts.min()}–{counts.max()} fits per mechanism"
            if counts.min() != counts.max()
            else f"{counts.min()} fits per mechanism"
        )
        figure = e5_ratio_figure(wide, run.path / "iw_e5_ratio.png", fits=fits)
        for path in (csv, figure):
            echo(f"wrote {path}")
        written += [csv, figure]
    return written


for _old in ("iw_e1", "iw_ratio", "iw_e5"):  # the names before the one `iwr` prefix: old configs still run
    registry.register_alias(_old, "iwr" + _old[2:], what="analysis")
