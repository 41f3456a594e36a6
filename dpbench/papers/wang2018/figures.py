"""Wang 2018's own figure kind, ``wang2018_summary``: the median over data sets of the normalised test excess per
private method against ε (log–log), with its percentile-bootstrap 95% band over data sets and the trivial line.

Drawn from a wang2018 run (:func:`dpbench.papers.wang2018.analyses.summary` of its CV errors); a config names it
as ``plots: {summary: {kind: wang2018_summary}}`` and the ``wang2018_summary`` analysis draws it through the kinds'
table. Registered by discovery; nothing imports this module.
"""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from dpbench.analysis.figures.kinds import Drawing, register_figure_kind
from dpbench.analysis.runs import Run, require_columns
from dpbench.papers.wang2018.analyses import OPTIONS, PRIVATE, cv_errors, normalised_excess, summary


def summary_figure(table: pd.DataFrame) -> Figure:
    """Median normalised test excess vs ε per private method (log–log), with the bootstrap 95% band."""
    fig = Figure(figsize=(6.4, 4.4))
    ax = fig.add_subplot()
    for label in PRIVATE:
        part = table[table["label"] == label].sort_values("epsilon")
        if part.empty:
            continue
        (line,) = ax.plot(part["epsilon"], part["median"], marker="o", label=label)
        ax.fill_between(part["epsilon"], part["lo"], part["hi"], color=line.get_color(), alpha=0.2)
    ax.axhline(1.0, color="black", linestyle=":", label="trivial (θ̂ = 0)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("ε (δ = 1e-6)")
    ax.set_ylabel("median normalised test excess over data sets")
    ax.set_title("Wang (2018) UCI: (MSE − non-private)/(trivial − non-private)")
    ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    return fig


@register_figure_kind(
    "wang2018_summary",
    summary="Wang 2018 UCI: median normalised test excess over data sets vs ε per private method, bootstrap 95% band",
    options=OPTIONS,
)
def wang2018_summary(run: Run, *, seed: int, resamples: int) -> Drawing:
    """The summary table of ``run`` (``points``) and its figure."""
    require_columns(run, ("test_mse", "data_draw"), "wang2018_summary", "a wang2018 run has them")
    table = summary(normalised_excess(cv_errors(run.trials)), seed, resamples)
    return Drawing(summary_figure(table), table, options={"seed": seed, "resamples": resamples})
