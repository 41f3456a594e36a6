"""The audit's figure kind: overlaid histograms of the black-box audit statistic on D (with the canary) and D' (its
neighbour), the threshold that achieved ε̂_lower marked, log density (the tails carry ε).

Drawn from an audit result (:class:`dpbench.audit.blackbox.AuditResult`, read by its attributes only: ``s1``,
``s0``, ``detail.threshold``, ``mechanism``, ``broken``, ``epsilon``, ``eps_lower``, ``trials``), with the object
API (no pyplot state); :func:`dpbench.audit.blackbox.plot_histograms` saves it through the one atomic writer.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.figure import Figure

from dpbench.analysis.figures.kinds import register_figure_kind
from dpbench.contract import Hyper

#: what this kind reads (not a run: the audit draws it)
READS = "an audit result (dpbench audit --plot)"


@register_figure_kind(
    "audit_histogram",
    summary="the black-box audit statistic on D and D' (log density) with the threshold of ε̂_lower",
    reads=READS,
    options={
        "bins": Hyper(int, default=80, ge=2, doc="histogram bins between the 0.02% and 99.98% quantiles"),
        "tail": Hyper(float, default=0.0002, ge=0.0, lt=0.5, doc="quantile cut at each end of the pooled values"),
    },
)
def audit_histogram(result: Any, *, bins: int, tail: float) -> Figure:
    """Histograms of ``result.s1`` (D) and ``result.s0`` (D') on ``bins`` common bins over the pooled
    [tail, 1 − tail] quantiles; a dashed line at the best threshold; log y."""
    s1, s0 = result.s1[np.isfinite(result.s1)], result.s0[np.isfinite(result.s0)]
    pooled = np.concatenate([s1, s0])
    lo, hi = np.quantile(pooled, [tail, 1.0 - tail]) if pooled.size else (0.0, 1.0)
    edges = np.linspace(lo, hi, bins)
    fig = Figure(figsize=(6, 3.5))
    ax = fig.add_subplot()
    ax.hist(s1, bins=edges, alpha=0.5, label="D (with canary)", density=True)
    ax.hist(s0, bins=edges, alpha=0.5, label="D' (neighbour)", density=True)
    if result.detail is not None:
        ax.axvline(result.detail.threshold, color="k", linestyle="--", linewidth=1, label="best threshold")
    ax.set_yscale("log")
    ax.set_xlabel("statistic ⟨w, θ̂⟩")
    ax.set_ylabel("density (log scale)")
    control = "" if result.broken == "none" else f", control {result.broken}"
    ax.set_title(
        f"{result.mechanism}{control}: ε = {result.epsilon:g}, ε̂_lower = {result.eps_lower:.2f} (N = {result.trials})",
        fontsize=9,
    )
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
