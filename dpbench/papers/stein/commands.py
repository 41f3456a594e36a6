"""``dpbench stein-plot RUN``: figures of the Stein GLM runs (spec 003 §6.4).

One panel per dataset label; x = any numeric column (``data.n``, ``data.p``, ``data.m``, ``epsilon``); curves =
mechanism label × a hue column (``epsilon`` or ``data.n``). Styles encode what a curve is, so the diagnostic can
never be mistaken for the paper's private algorithm:

* literal LDP algorithm (privacy_model local, not 2-round): solid, circles;
* 2-round LDP baseline: dash-dot, squares;
* central-noise DIAGNOSTIC (privacy_model central): dotted, crosses, legend prefixed "DIAGNOSTIC";
* non-private baselines (privacy_model none): dashed, black/grey, averaged over ε (they ignore it).

Each point is the median (default; IQR band) or the mean (95 % band mean ± 1.96·std/√R) over all rows at that x
(replicate data draws × noise trials). Medians are the default because the literal LDP errors are heavy-tailed
(near-singular noisy XᵀX, spec 003 §6.6); the paper reports averages. With ``--fit-slope`` (x = ε) the log–log
least-squares slope of every curve is printed, written to ``stein_slopes.csv`` and shown in the panel (the paper
claims error ∝ 1/ε², slope −2).
"""

from __future__ import annotations

import math
import textwrap
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import pandas as pd
import typer
import yaml
from matplotlib import colormaps
from matplotlib.figure import Figure

Z95 = 1.959963984540054
AXIS = {"data.n": "n (private users)", "data.p": "p (dimension)", "data.m": "m (public rows)", "epsilon": "ε"}


def curve_kind(row: pd.Series) -> str:
    if row["privacy_model"] == "none":
        return "nonprivate"
    if row["privacy_model"] == "central":
        return "diagnostic"
    return "twostage" if "twostage" in str(row["mechanism"]) else "ldp"


STYLE = {
    "ldp": {"linestyle": "-", "marker": "o"},
    "twostage": {"linestyle": "-.", "marker": "s"},
    "diagnostic": {"linestyle": ":", "marker": "x"},
    "nonprivate": {"linestyle": "--", "marker": ""},
}


def _fmt(value: Any) -> str:
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        value = int(value)
    if isinstance(value, (int, np.integer)) and abs(value) >= 10_000:
        return f"{value:.0e}".replace("e+0", "e").replace("e+", "e")
    return f"{value:g}" if isinstance(value, (float, np.floating)) else str(value)


def summarise(trials: pd.DataFrame, metric: str, x: str, hue: str, stat: str) -> pd.DataFrame:
    """One row per (panel, curve, x): centre, lo, hi, count."""
    frame = trials.copy()
    frame["_kind"] = frame.apply(curve_kind, axis=1)
    hue_name = AXIS.get(hue, hue).split(" (")[0]
    # non-private fits ignore ε: one curve when the hue is ε, split by the hue otherwise (e.g. curves = n)
    collapse = (frame["_kind"] == "nonprivate") & (hue == "epsilon")
    frame["_hue"] = np.where(collapse, np.nan, frame[hue]) if hue != x else np.nan
    frame["_curve"] = [
        f"{lab}" if c or hue == x else f"{lab}, {hue_name}={_fmt(h)}"
        for lab, c, h in zip(frame["label"], collapse, frame[hue], strict=True)
    ]
    frame = frame[np.isfinite(frame[metric])]
    rows = []
    for (panel, curve, xv), grp in frame.groupby(["dataset", "_curve", x], sort=False):
        v = grp[metric].to_numpy(float)
        if stat == "median":
            centre, lo, hi = (float(q) for q in np.percentile(v, [50, 25, 75]))
        else:
            centre = float(v.mean())
            half = Z95 * float(v.std()) / math.sqrt(len(v))
            lo, hi = centre - half, centre + half
        rows.append({"dataset": panel, "curve": curve, "x": float(xv), "centre": centre, "lo": lo, "hi": hi,
                     "count": len(v), "kind": grp["_kind"].iloc[0], "hue": grp["_hue"].iloc[0],
                     "label": grp["label"].iloc[0]})
    return pd.DataFrame(rows)


def fit_slopes(summary: pd.DataFrame) -> pd.DataFrame:
    """Least-squares slope of log(centre) on log(x) per (panel, curve) (Fig 17's 1/ε² check)."""
    out = []
    for (panel, curve), grp in summary.groupby(["dataset", "curve"], sort=False):
        grp = grp[(grp["centre"] > 0) & (grp["x"] > 0)]
        if len(grp) >= 2 and grp["kind"].iloc[0] != "nonprivate":
            slope = float(np.polyfit(np.log(grp["x"]), np.log(grp["centre"]), 1)[0])
            out.append({"dataset": panel, "curve": curve, "slope": slope, "points": len(grp)})
    return pd.DataFrame(out)


def stein_figure(run_dir: Path, metric: str, x: str, hue: str, stat: str = "median", logy: bool = True,
                 fit_slope: bool = False, ncols: int | None = None) -> tuple[Figure, pd.DataFrame]:
    trials = pd.read_csv(run_dir / "trials.csv")
    for column in (metric, x, hue):
        if column not in trials:
            raise ValueError(f"{column!r} is not a column of {run_dir / 'trials.csv'}")
    config = yaml.safe_load((run_dir / "config.yaml").read_text()) or {}
    summary = summarise(trials, metric, x, hue, stat)
    slopes = fit_slopes(summary) if fit_slope else pd.DataFrame()
    panels = list(pd.unique(summary["dataset"]))
    hues = sorted(v for v in pd.unique(summary["hue"]) if not pd.isna(v))
    cmap = colormaps["viridis"]
    color_of = {h: cmap(0.1 + 0.8 * i / max(1, len(hues) - 1)) for i, h in enumerate(hues)}
    grey = {lab: c for lab, c in zip(pd.unique(summary.loc[summary["kind"] == "nonprivate", "label"]),
                                      ("black", "dimgray", "silver"), strict=False)}
    ncols = ncols or min(3, len(panels))
    nrows = math.ceil(len(panels) / ncols)
    caption = str(config.get("caption") or "")
    notes = []
    if "info.root_status" in trials:
        private = trials[trials["privacy_model"] != "none"]
        bad = private["info.root_status"].eq("no_root").mean() if len(private) else 0.0
        notes.append(f"root finder: {100 * bad:.1f}% of private fits found no root (ĉ = c0 fallback, A26)")
    reps = trials.groupby(["dataset_id", "label", "epsilon_index"]).size().max()
    band = "interquartile range" if stat == "median" else "95 % normal CI of the mean"
    notes.append(f"{stat} over all rows per point (replicate data draws × {int(reps)} noise trials each); "
                 f"band = {band}")
    skipped = run_dir / "skipped.json"
    if skipped.exists():
        import json

        for name, why in json.loads(skipped.read_text()).items():
            notes.append(f"SKIPPED {name}: {textwrap.shorten(why, 100)}")
    width = max(7.0, 4.6 * ncols)
    text_lines = textwrap.wrap(caption, int(width * 13))
    text_lines += [line for note in notes for line in textwrap.wrap(note, int(width * 14))]
    fig = Figure(figsize=(width, 3.6 * nrows + 1.6 + 0.16 * len(text_lines)), dpi=150)
    axes = fig.subplots(nrows, ncols, squeeze=False)
    handles: dict[str, Any] = {}
    for index, panel in enumerate(panels):
        ax = axes.flat[index]
        sub = summary[summary["dataset"] == panel]
        for curve in pd.unique(sub["curve"]):
            pts = sub[sub["curve"] == curve].sort_values("x")
            kind = pts["kind"].iloc[0]
            if logy:
                pts = pts[pts["centre"] > 0]
            if pts.empty:
                continue
            color = color_of.get(pts["hue"].iloc[0], "tab:blue")
            if kind == "nonprivate" and pd.isna(pts["hue"].iloc[0]):
                color = grey.get(pts["label"].iloc[0], "black")
            (line,) = ax.plot(pts["x"], pts["centre"], color=color, markersize=5, linewidth=1.4, **STYLE[kind])
            lo = np.where(pts["lo"] > 0, pts["lo"], pts["centre"] / 10) if logy else pts["lo"]
            ax.fill_between(pts["x"], lo, pts["hi"], color=color, alpha=0.12, linewidth=0)
            handles.setdefault(curve, line)
        if fit_slope and not slopes.empty:
            short = {"ldp": "LDP", "diagnostic": "DIAGNOSTIC", "twostage": "2-round"}
            kinds = dict(zip(sub["curve"], sub["kind"], strict=False))
            lines = [f"{short.get(kinds.get(r.curve), '')} {r.curve.split(', ')[-1]}: slope {r.slope:+.2f}"
                     for r in slopes[slopes["dataset"] == panel].itertuples()]
            ax.text(0.02, 0.02, "\n".join(lines), transform=ax.transAxes, fontsize=6.5, va="bottom",
                    bbox={"facecolor": "white", "alpha": 0.7, "linewidth": 0})
        if logy:
            ax.set_yscale("log")
        if x == "epsilon":
            ax.set_xscale("log")
            ticks = sorted(pd.unique(sub["x"]))
            ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
            ax.minorticks_off()
        if x == "data.n":
            ax.ticklabel_format(axis="x", style="sci", scilimits=(0, 0), useMathText=True)
        ax.grid(True, which="major", alpha=0.4)
        ax.set_title("\n".join(textwrap.wrap(str(panel), 48)), fontsize=9)
        ax.set_xlabel(AXIS.get(x, x))
        if index % ncols == 0:
            from dpbench.metrics import LABELS

            ax.set_ylabel(LABELS.get(metric, metric) + (" (median)" if stat == "median" else ""))
    for extra in axes.flat[len(panels):]:
        fig.delaxes(extra)
    title = str(config.get("title") or run_dir.name)
    title_lines = textwrap.wrap(title, int(width * 10.5)) or [""]
    fig.suptitle("\n".join(title_lines), fontsize=11.5, y=0.995)
    legend_cols = max(1, min(len(handles), int(width // 2.6)))
    height = fig.get_figheight()
    extra = 0.2 * (len(title_lines) - 1)
    fig.legend(list(handles.values()), list(handles), loc="upper center", ncol=legend_cols, fontsize=7.5,
               frameon=False, bbox_to_anchor=(0.5, 1 - (0.25 + extra) / height))
    legend_rows = math.ceil(len(handles) / legend_cols)
    panel_lines = max(len(textwrap.wrap(str(p_), 48)) for p_ in panels) if panels else 1
    top = 1 - (0.35 + extra + 0.17 * legend_rows + 0.17 * (panel_lines - 1)) / height
    bottom = (0.55 + 0.16 * len(text_lines)) / height
    fig.subplots_adjust(top=top - 0.25 / height, bottom=bottom, hspace=0.55, wspace=0.28, left=0.85 / width,
                        right=0.98)
    y = 0.08
    for line in reversed(text_lines):
        fig.text(0.5, y / height, line, ha="center", va="bottom", fontsize=7.5, style="italic")
        y += 0.16
    return fig, slopes


def register(app) -> None:
    register_table(app)
    @app.command(name="stein-plot")
    def stein_plot(
        run_dir: Annotated[Path, typer.Argument(help="a Stein run folder (holds trials.csv)")],
        metric: Annotated[str | None, typer.Option(help="stein_err2 | stein_errinf | glm_accuracy")] = None,
        x: Annotated[str | None, typer.Option(help="x column: data.n, data.p, data.m, epsilon")] = None,
        hue: Annotated[str | None, typer.Option(help="curve key: epsilon or data.n")] = None,
        stat: Annotated[
            str | None, typer.Option(help="median (IQR band; default for errors) | mean (95% CI; default accuracy)")
        ] = None,
        logy: Annotated[bool | None, typer.Option("--logy/--lineary")] = None,
        fit_slope: Annotated[bool, typer.Option("--fit-slope", help="log-log slope per curve (x = ε)")] = False,
        out: Annotated[str | None, typer.Option(help="output PNG name (default stein_<metric>_vs_<x>.png)")] = None,
    ) -> None:
        """Stein GLM figure (spec 003 §6.4): LDP solid, 2-round dash-dot, DIAGNOSTIC dotted, baselines dashed."""
        if not (run_dir / "trials.csv").exists():
            typer.echo(f"error: {run_dir / 'trials.csv'} not found (run `dpbench run` first)", err=True)
            raise typer.Exit(code=2)
        metric_name = metric or ((yaml.safe_load((run_dir / "config.yaml").read_text()) or {}).get("plot") or {}).get(
            "metric", "stein_err2")
        stat = stat or ("mean" if metric_name == "glm_accuracy" else "median")
        if stat not in ("mean", "median"):
            typer.echo(f"error: --stat must be mean or median, got {stat!r}", err=True)
            raise typer.Exit(code=2)
        defaults = (yaml.safe_load((run_dir / "config.yaml").read_text()) or {}).get("plot") or {}
        metric = metric or defaults.get("metric", "stein_err2")
        x = x or defaults.get("x", "data.n")
        hue = hue or defaults.get("hue", "epsilon")
        logy = defaults.get("logy", metric != "glm_accuracy") if logy is None else logy
        try:
            fig, slopes = stein_figure(run_dir, metric, x, hue, stat, logy, fit_slope)
        except ValueError as err:
            typer.echo(f"error: {err}", err=True)
            raise typer.Exit(code=2) from None
        name = out or f"stein_{metric}_vs_{x.replace('.', '_')}{'_median' if stat == 'median' else ''}.png"
        fig.savefig(run_dir / name, dpi=150)
        typer.echo(f"wrote {run_dir / name}")
        if fit_slope and not slopes.empty:
            slopes.to_csv(run_dir / "stein_slopes.csv", index=False)
            for r in slopes.itertuples():
                typer.echo(f"slope  {r.dataset} | {r.curve}: {r.slope:+.3f} ({r.points} points)")


#: spec 003 §6.6 (median err2; literal 10 trials with c0 = 1, central 20 trials with c0 = 4)
SPEC_TABLE_66 = {
    (10, 100_000): (1.29, 1.20, 1.44, 0.61, 0.045, 0.012, 2e-3),
    (10, 300_000): (1.22, 1.15, 1.66, 0.026, 0.0057, 0.0013, 5e-4),
    (10, 700_000): (10.1, 2.16, 1.22, 0.0044, 0.0015, 0.0004, 5e-4),
    (20, 700_000): (1.73, 2.12, 1.25, 0.096, 0.010, 0.003, 5e-4),
}


def table_66(trials: pd.DataFrame) -> str:
    """Markdown table: dpbench medians next to the spec's §6.6 values ("ours / spec")."""
    p_of = trials["dataset"].str.extract(r"p = (\d+)")[0].astype(int)
    frame = trials.assign(_p=p_of)
    med = frame.groupby(["_p", "n", "label", "epsilon"])["stein_err2"].median()
    cols = [("literal", 4), ("literal", 10), ("literal", 20), ("central", 4), ("central", 10), ("central", 20)]
    head = "| p | n | " + " | ".join(f"ε = {e:g} {lab}" for lab, e in cols) + " | non-private Stein |"
    lines = [head, "|" + "---|" * (len(cols) + 3)]
    for (p, n), spec in SPEC_TABLE_66.items():
        cells = []
        for (lab, e), ref in zip(cols, spec, strict=False):
            got = med.get((p, n, lab, float(e)), float("nan"))
            cells.append(f"{got:.3g} / {ref:g}")
        nonpriv = frame[(frame["_p"] == p) & (frame["n"] == n) & (frame["label"] == "non-private Stein")]
        cells.append(f"{nonpriv['stein_err2'].median():.2g} / ≈{spec[-1]:g}")
        lines.append(f"| {p} | {n:,} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def register_table(app) -> None:
    @app.command(name="stein-table")
    def stein_table(run_dir: Annotated[Path, typer.Argument(help="results/stein_table66")]) -> None:
        """Print the spec 003 §6.6 table (median err2) recomputed from a stein_table66 run, next to the spec."""
        path = run_dir / "trials.csv"
        if not path.exists():
            typer.echo(f"error: {path} not found (run `dpbench run configs/stein/stein_table66.yaml` first)", err=True)
            raise typer.Exit(code=2)
        text = table_66(pd.read_csv(path))
        (run_dir / "table66.md").write_text(text + "\n")
        typer.echo(text)
