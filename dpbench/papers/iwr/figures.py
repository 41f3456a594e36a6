"""The information-weighted regression paper's own figure kinds (spec 000 §7.3, §7.7):

* ``iwr_e1`` — E1: PoP_IW (solid) and PoP_SSP (dashed) vs T, and ‖W − W_{0,λ}‖/‖W‖, ‖W − γU_{γλ}‖/‖W‖ vs T, one
  column per generator; drawn from the E1 table (:func:`dpbench.papers.iwr.e1.e1_table`; no run) by the ``iwr_e1``
  analysis.
* ``iwr_e5_ratio`` — E5 (b): the ratio of mean errors Laplace SSP / Alg 1 (± paired bootstrap 95% CI) vs E|φ|/Eφ²
  with the diagonal the two lemmas predict; drawn from an iw_e5_ldp_1d run by the ``iwr_e5`` analysis (or a
  config's ``plots: {ratio: {kind: iwr_e5_ratio}}``).

Registered by discovery; nothing imports this module.
"""

from __future__ import annotations

import textwrap

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from dpbench.analysis.figures.kinds import Drawing, register_figure_kind
from dpbench.analysis.runs import Run, require_columns
from dpbench.papers.iwr.analyses import E5_COLUMNS, E5_OPTIONS, e5_ratios, fits_text

#: colour of each privacy level α of E1
E1_COLOURS = {0.01: "tab:red", 0.1: "tab:blue", 1.0: "tab:green"}


def e1_figure(table: pd.DataFrame) -> Figure:
    """Two rows × one panel per generator: (a) PoP_IW (solid) and PoP_SSP (dashed) vs T; (b) the two distances."""
    gens = list(dict.fromkeys(table["generator"]))
    fig = Figure(figsize=(4.2 * len(gens), 7.4))
    axes = fig.subplots(2, len(gens), squeeze=False)
    for j, g in enumerate(gens):
        sub = table[table["generator"] == g]
        ax, bx = axes[0, j], axes[1, j]
        for a, part in sub.groupby("alpha"):
            c = E1_COLOURS.get(a, None)
            ax.loglog(part["T"], part["pop_iw"], "-", color=c, label=f"PoP_IW, α={a:g}")
            ax.loglog(part["T"], part["pop_ssp"], "--", color=c, label=f"PoP_SSP, α={a:g}")
            bx.loglog(part["T"], part["rel_W_W0"], "-", color=c, label=f"‖W−W_{{0,λ}}‖/‖W‖, α={a:g}")
            bx.loglog(part["T"], part["rel_W_gammaU"], ":", color=c, label=f"‖W−γU_γλ‖/‖W‖, α={a:g}")
        ax.axhline(1.0, color="gray", lw=0.8)
        ax.set_title(g)
        ax.set_xlabel("T")
        bx.set_xlabel("T")
        ax.grid(True, which="major", alpha=0.3)
        bx.grid(True, which="major", alpha=0.3)
        if j == 0:
            ax.set_ylabel("price of privacy")
            bx.set_ylabel("relative distance (op norm)")
    h1, l1 = axes[0, 0].get_legend_handles_labels()
    h2, l2 = axes[1, 0].get_legend_handles_labels()
    fig.legend(h1, l1, loc="upper center", ncol=6, fontsize=8, bbox_to_anchor=(0.5, 0.995))
    fig.legend(h2, l2, loc="lower center", ncol=6, fontsize=8, bbox_to_anchor=(0.5, 0.0))
    fig.suptitle(
        "E1: population information matrices, γ = 1/(α√T), λ = 1/√T — synthetic demonstration of "
        "Lemma 5.7 / Eq. 23 (proposed in spec 000 §7.3), not a reproduction",
        y=0.935,
        fontsize=9,
    )
    fig.subplots_adjust(top=0.86, bottom=0.16, left=0.06, right=0.98, hspace=0.3, wspace=0.25)
    return fig


@register_figure_kind(
    "iwr_e1",
    summary="spec 000 §7.3 E1: PoP_IW vs PoP_SSP and ‖W − W_{0,λ}‖, ‖W − γU_γλ‖ vs T per generator (exact, no run)",
    options={},
    reads="the E1 table (dpbench.papers.iwr.e1.e1_table)",
)
def iwr_e1(table: pd.DataFrame) -> Figure:
    """The E1 figure of ``table`` (one row per generator, α and T)."""
    return e1_figure(table)


def dodge(wide: pd.DataFrame, spread: float = 1.035) -> np.ndarray:
    """x positions: the points sharing an E|φ|/Eφ² spread evenly around it by factors spread^k (log-symmetric),
    in the order (T, α), so that neither the points nor their CIs hide each other."""
    x = wide["E_abs_phi_over_E_phi2"].to_numpy(float)
    pos = x.copy()
    for value in np.unique(x):
        idx = np.flatnonzero(x == value)
        idx = idx[np.lexsort((wide["epsilon"].to_numpy()[idx], wide["data.n"].to_numpy()[idx]))]
        pos[idx] = value * spread ** (np.arange(idx.size) - (idx.size - 1) / 2)
    return pos


def e5_ratio_figure(
    wide: pd.DataFrame, *, saturation: float = 0.3, fits: str = "", seed: int = 0, resamples: int = 2000
) -> Figure:
    """Ratio of mean errors Laplace SSP / Alg 1 (± paired bootstrap 95% CI) vs E|φ|/Eφ², with the diagonal the two
    lemmas predict; the points of one E|φ|/Eφ² are spread horizontally (:func:`dodge`); ``fits``, ``seed`` and
    ``resamples`` say in the caption what each point and its bar are."""
    fig = Figure(figsize=(6.4, 5.9))
    ax = fig.subplots()
    sat = ((wide["ldp_laplace_ssp_1d"] > saturation) | (wide["ldp_simple_1d"] > saturation)).to_numpy()
    xs, ys = dodge(wide), wide["ratio_ssp_over_alg1"].to_numpy(float)
    lo = wide["ratio_lo"].to_numpy(float) if "ratio_lo" in wide else np.full_like(ys, np.nan)
    hi = wide["ratio_hi"].to_numpy(float) if "ratio_hi" in wide else np.full_like(ys, np.nan)
    for mask, style, label in (
        (~sat, {"marker": "o", "color": "C0", "markersize": 5}, f"neither mean error > {saturation:g}"),
        (sat, {"marker": "x", "color": "C1", "markersize": 6, "markeredgewidth": 1.5},
         f"saturated (a mean error > {saturation:g})"),
    ):  # fmt: skip
        if not mask.any():
            continue
        yerr = np.vstack([ys[mask] - lo[mask], hi[mask] - ys[mask]])
        ax.errorbar(xs[mask], ys[mask], yerr=np.where(np.isfinite(yerr), yerr, 0.0), linestyle="", capsize=2,
                    elinewidth=0.9, label=label, **style)  # fmt: skip
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
        f"percentile-bootstrap 95% CI (fits paired by data draw and noise trial, {resamples} resamples, seed {seed}). "
        "Within one E|φ|/Eφ² the points are ordered by T, then α (left to right). At ρ = s = 1 (E|φ|/Eφ² = 1) "
        "both mechanisms release the same statistics: ratio exactly 1."
    )
    fig.text(0.5, 0.01, "\n".join(textwrap.wrap(caption, 105)), ha="center", va="bottom", fontsize=7, style="italic")
    fig.tight_layout(rect=(0, 0.11, 1, 1))
    return fig


@register_figure_kind(
    "iwr_e5_ratio",
    summary="spec 000 §7.7 E5 (b): ratio of mean errors Laplace SSP / Alg 1 (paired bootstrap 95% CI) vs E|φ|/Eφ²",
    options=E5_OPTIONS,
)
def iwr_e5_ratio(run: Run, *, seed: int, resamples: int, saturation: float) -> Drawing:
    """The ratios of ``run`` (``points``: one row per (ρ, s, T, α), :func:`~dpbench.papers.iwr.analyses.e5_ratios`)
    and their figure."""
    require_columns(run, E5_COLUMNS, "iwr_e5_ratio", "an iw_e5_ldp_1d run has them")
    wide = e5_ratios(run.trials, seed, resamples)
    figure = e5_ratio_figure(wide, saturation=saturation, fits=fits_text(run.trials), seed=seed, resamples=resamples)
    return Drawing(figure, wide, options={"seed": seed, "resamples": resamples, "saturation": saturation})
