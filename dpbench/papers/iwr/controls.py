"""``dpbench analyze iwr-ablation RUN...`` — the IWR-DP ablation of issue 17 (configs/info_weighted/iw_ctrl_*.yaml).

Draws the median (bootstrap 95% band) of ‖θ̂−θ*‖²_Σ vs ε, one row of panels per generator and one column per d, and
prints/writes the paired ratios of medians with bootstrap CIs (fits paired by data draw and noise trial: common
random numbers). Synthetic control, not a reproduction: the paper has no experiments.
Options: ``metric`` (default param_error_sigma), ``pairs`` ("A/B;C/D" of curve labels), ``out`` (figure stem,
default <first run>/iw_ablation), ``title`` (default: the first run's config title), ``caption`` (default: built
from the trials — synthetic control, fits per point, n, ‖θ*‖).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from dpbench import registry
from dpbench.analysis.figures.panels import median_panels
from dpbench.analysis.figures.save import save_figures
from dpbench.analysis.figures.text import metric_name
from dpbench.analysis.runs import load_run
from dpbench.analysis.stats import curve_slopes, fmt_ci, paired_ratio_ci
from dpbench.io.atomic import write_atomic

DEFAULT_PAIRS = (
    ("IWR-DP (W learned)", "AdaSSP"),
    ("IWR-DP (W learned)", "SSP-ball R=1 (unweighted)"),
    ("IWR-DP (W learned)", "IWR, W = I"),
    ("IWR-DP + ball R=1", "SSP-ball R=1 (unweighted)"),
    ("IWR-DP (W learned)", "θ = 0"),
    ("SSP-ball R=1 (unweighted)", "θ = 0"),
)
REFERENCES = ("OLS (non-private)", "θ = 0")
CELL = ["dataset", "data.d", "epsilon"]
PAIR_KEY = ["data_draw", "trial"]


def load_trials(runs: list[Path]) -> pd.DataFrame:
    return pd.concat([load_run(run).trials for run in runs], ignore_index=True)


def parse_pairs(text: str | None) -> list[tuple[str, str]]:
    if not text:
        return list(DEFAULT_PAIRS)
    pairs = []
    for item in text.split(";"):
        num, sep, den = item.partition("/")
        if not sep:
            raise ValueError(f"pairs: {item!r} is not 'numerator/denominator'")
        pairs.append((num.strip(), den.strip()))
    return pairs


def ratio_table(trials: pd.DataFrame, metric: str, pairs: list[tuple[str, str]], seed: int = 0) -> pd.DataFrame:
    """Per (generator, d, ε) and pair: ratio of medians num/den with a paired bootstrap 95% CI."""
    rng = np.random.default_rng(seed)
    labels = set(trials["label"])
    missing = sorted({lab for pair in pairs for lab in pair} - labels)
    if missing:
        raise ValueError(f"labels not in the run(s): {missing}; available: {sorted(labels)}")
    rows = []
    for cell, part in trials.groupby(CELL, sort=False):
        for num, den in pairs:
            a = part[part["label"] == num].set_index(PAIR_KEY)[metric]
            b = part[part["label"] == den].set_index(PAIR_KEY)[metric]
            joined = pd.concat([a.rename("a"), b.rename("b")], axis=1, join="inner")
            ratio, lo, hi = paired_ratio_ci(joined["a"], joined["b"], rng)
            rows.append(
                {
                    **dict(zip(CELL, cell, strict=True)),
                    "numerator": num,
                    "denominator": den,
                    "ratio": ratio,
                    "lo": lo,
                    "hi": hi,
                    "pairs": len(joined),
                }
            )
    return pd.DataFrame(rows)


def _fits_text(trials: pd.DataFrame) -> str:
    """ "16 fits per point (4 draws of θ* and data × 4 noise trials) at d = 5, 20; 6 (3 × 2) at d = 50"."""
    key = [c for c in CELL if c in trials] + ["label"]
    per_d = trials.groupby("data.d", sort=True) if "data.d" in trials else [(None, trials)]
    groups: dict[tuple[int, int, int, int], list[str]] = {}
    for d, part in per_d:
        fits = part.groupby(key).size()
        draws = int(part["data_draw"].nunique()) if "data_draw" in part else 1
        noise = int(part["trial"].nunique()) if "trial" in part else int(fits.max())
        groups.setdefault((int(fits.min()), int(fits.max()), draws, noise), []).append("" if d is None else f"{d:g}")
    parts = []
    for i, ((lo, hi, draws, noise), ds) in enumerate(groups.items()):
        count = f"{lo}" if lo == hi else f"{lo}–{hi}"
        detail = (
            f" fits per point ({draws} draws of θ* and data × {noise} noise trials)"
            if i == 0
            else f" ({draws} × {noise})"
        )
        parts.append(count + detail + (f" at d = {', '.join(ds)}" if any(ds) else ""))
    return "; ".join(parts)


def default_caption(trials: pd.DataFrame, metric: str) -> str:
    """The ablation figure's caption: what it is (synthetic control), the statistic, the fits per point, n and ‖θ*‖."""
    n_text = ""
    if "n" in trials and trials["n"].nunique() == 1:
        n_text = f" n = {int(trials['n'].iloc[0]):,};"
    norm = trials["data.theta_norm"].dropna().unique() if "data.theta_norm" in trials else []
    norm_text = f" ‖θ*‖ = {norm[0]:g} (inside the public ball);" if len(norm) == 1 else ""
    return (
        f"Synthetic control (issue 17) for spec 000 §7.4, not a reproduction (the paper has no experiments). "
        f"Median {metric_name(metric)} ± bootstrap 95% CI over {_fits_text(trials)}.{n_text}{norm_text} "
        f"“ball R=1” curves: projection on a public ball of radius 1. References without band: OLS "
        f"(non-private, black dashed) and "
        f"θ̂ = 0 (grey dotted)."
    )


def _legend_on_top(fig, title: str) -> None:
    """Move :func:`median_panels`' small legend from the right margin to a readable block under the title and give
    the panels the freed width."""
    if not fig.legends:
        return
    old = fig.legends[0]
    handles, labels = old.legend_handles, [t.get_text() for t in old.get_texts()]
    old.remove()
    width, height = fig.get_size_inches()
    new_width, extra = width - 2.1, 0.75
    fig.set_size_inches(new_width, height + extra)
    ncol = min(len(labels), 4)
    head = 0.42 + 0.2 * -(-len(labels) // ncol)  # title + legend rows, inches
    fig.legend(
        handles,
        labels,
        loc="upper center",
        bbox_to_anchor=(0.5, 1 - 0.4 / (height + extra)),
        ncol=ncol,
        fontsize=9,
        frameon=False,
    )
    if title:
        fig.suptitle(title, fontsize=11, y=1 - 0.08 / (height + extra), va="top")
    caption_in = 0.1 + sum(0.16 * (t.get_text().count("\n") + 1) for t in fig.texts)
    fig.tight_layout(rect=(0, caption_in / (height + extra), 1, 1 - head / (height + extra)))


def ablation_figure(trials: pd.DataFrame, metric: str, title: str, caption: str):
    fig = median_panels(
        trials,
        metric,
        "epsilon",
        rows="dataset",
        cols="data.d",
        reference_labels=REFERENCES,
        title=title,
        caption=caption,
        xlabel="ε",
        ylabel=f"median {metric_name(metric)}",
    )
    _legend_on_top(fig, title)
    return fig


@registry.register_analysis(
    "iwr-ablation",
    summary="IWR-DP ablation figure + paired ratio CIs (issue 17); -o metric= pairs='A/B;C/D' out=STEM",
)
def iw_ablation_analysis(runs: list[Path], options: dict[str, str], echo: Callable[[str], None]) -> None:
    o = registry.analysis_options(
        "iwr-ablation", options, {"metric": "param_error_sigma", "pairs": "", "out": "", "caption": "", "title": ""}
    )
    metric = o["metric"]
    trials = load_trials(runs)
    if metric not in trials:
        raise ValueError(f"metric {metric!r} is not a column of the run(s)")
    table = ratio_table(trials, metric, parse_pairs(o["pairs"]))
    stem = Path(o["out"] or Path(runs[0]) / "iw_ablation")
    table.to_csv(f"{stem}_ratios.csv", index=False)
    shown = table.assign(
        ratio=[fmt_ci(r, lo, hi) for r, lo, hi in zip(table["ratio"], table["lo"], table["hi"], strict=True)]
    )
    with pd.option_context("display.width", 250, "display.max_columns", 20, "display.max_rows", 500):
        for (num, den), part in shown.groupby(["numerator", "denominator"], sort=False):
            echo(f"\nratio of medians {metric}: {num} / {den} (paired bootstrap 95% CI)")
            echo(
                part.pivot_table(
                    index=["dataset", "data.d"], columns="epsilon", values="ratio", aggfunc="first", sort=False
                ).to_string()
            )
    config_title = (load_run(runs[0]).config or {}).get("title")
    title = o["title"] or config_title or f"IWR-DP ablations — {metric_name(metric)}"
    fig = ablation_figure(trials, metric, title, o["caption"] or default_caption(trials, metric))
    for path in save_figures(fig, stem):
        echo(f"wrote {path}")


@registry.register_analysis(
    "iwr-slopes",
    summary="log–log slope of the median error vs n with stratified-bootstrap CIs (E3; issue 17)",
)
def iw_slopes_analysis(runs: list[Path], options: dict[str, str], echo: Callable[[str], None]) -> None:
    """Per (generator, label, ε): slope of log median(metric) vs log n over the run's n values; the fits at each n
    (data draws × noise trials) resampled independently. Spec 000 T12 band: [−2.1, −0.9]."""
    o = registry.analysis_options("iwr-slopes", options, {"metric": "param_error_sigma", "out": ""})
    metric = o["metric"]
    trials = load_trials(runs)
    rows = []
    for (dataset, label, eps), groups, (slope, lo, hi) in curve_slopes(
        trials, ["dataset", "label", "epsilon"], "data.n", metric, np.random.default_rng(0)
    ):
        rows.append(
            {
                "dataset": dataset,
                "label": label,
                "epsilon": eps,
                "n values": len(groups),
                "fits per n": int(min(len(v) for v in groups.values())),
                "slope": slope,
                "lo": lo,
                "hi": hi,
            }
        )
    table = pd.DataFrame(rows)
    out = Path(o["out"] or Path(runs[0]) / f"iw_slopes_{metric}.csv")
    write_atomic(out, table.to_csv(index=False))
    shown = table.assign(
        slope=[fmt_ci(s, lo, hi, 3) for s, lo, hi in zip(table["slope"], table["lo"], table["hi"], strict=True)]
    ).drop(columns=["lo", "hi"])
    with pd.option_context("display.width", 250, "display.max_rows", 200):
        echo(shown.to_string(index=False))
    echo(f"wrote {out}")


for _old in ("iw-ablation", "iw-slopes"):  # the names before the one `iwr` prefix: old commands still run
    registry.register_alias(_old, "iwr" + _old[2:], what="analysis")
