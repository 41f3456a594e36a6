"""Run reports: one self-contained page per run folder of any experiment kind (``dpbench report results/<run>``).

The page holds the datasets (with their OLS floor), every figure preset of the config (``plot:`` / ``plots:``)
with, per panel, a table of the points drawn — stat ± its 95% interval, as in the figure, per curve and x value,
the best private method of every column in bold — and the fitted slopes; then the output of every analysis the
config names under ``analyses:`` (text and figures), the fit time per mechanism (the runner's per-trial
``seconds``), the environment (the run's ``meta.json`` plus the package versions the report was made with) and
the resolved config.

``report.md`` links its PNGs in ``report_files/``; ``report.html`` embeds them (base64), so the HTML file alone is
the whole report. Both are rendered from one list of blocks, so they always say the same thing.
"""

from __future__ import annotations

import base64
import html
import platform
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from dpbench.analysis.figures.curves import cell_mask, render
from dpbench.analysis.figures.presets import presets, save
from dpbench.analysis.figures.save import save_figure
from dpbench.analysis.figures.text import axis_name, value_text
from dpbench.analysis.leaderboard import (
    Leaderboard,
    build_leaderboard,
    matrix_markdown,
    plot_profiles,
    summary_markdown,
)
from dpbench.analysis.notes import run_notes
from dpbench.analysis.runs import Run, load_run
from dpbench.analysis.stats import fallback_counts, fallback_sentences, fmt
from dpbench.io import atomic
from dpbench.io.provenance import git_commit

#: what to do when a report page cannot be written (:func:`dpbench.io.atomic.write_failure`)
ADVICE = {"full": "free space and write the report again", "denied": "copy the run folder somewhere writable"}


def write_atomic(path: Path, text: str) -> Path:
    """Write a report page atomically, a full disk or a read-only folder said in words."""
    return atomic.write_atomic(path, text, ADVICE)


REPORT_DIR = "report_files"
#: packages whose versions the report lists (those installed)
PACKAGES = ("dpbench", "numpy", "scipy", "pandas", "matplotlib", "joblib", "scikit-learn", "dask", "distributed")
#: metric-name fragments for which larger is better; every other metric is a loss
HIGHER_IS_BETTER = ("accuracy", "r2", "score", "reward")
#: config.yaml keys left out of the printed config (bookkeeping, not the experiment)
HIDDEN_CONFIG_KEYS = ("fingerprint",)


# ----------------------------------------------------------------------------------------------------------------
# document blocks, rendered to Markdown and HTML


@dataclass
class Heading:
    text: str
    level: int = 2


@dataclass
class Paragraph:
    text: str


@dataclass
class Code:
    text: str
    language: str = ""


@dataclass
class Image:
    path: Path
    alt: str


@dataclass
class Table:
    """``rows`` of cells; a cell is text, or (text, True) to mark it (bold)."""

    header: list[str]
    rows: list[list[Any]]
    note: str = ""


@dataclass
class Report:
    title: str
    path: Path
    blocks: list[Any] = field(default_factory=list)


def _cell(cell: Any) -> tuple[str, bool]:
    return (str(cell[0]), bool(cell[1])) if isinstance(cell, tuple) else (str(cell), False)


def to_markdown(report: Report, base: Path) -> str:
    """GitHub-flavoured Markdown; image paths relative to ``base`` (the folder of the .md file)."""
    out = [f"# {report.title}", ""]
    for block in report.blocks:
        if isinstance(block, Heading):
            out += [f"{'#' * block.level} {block.text}", ""]
        elif isinstance(block, Paragraph):
            out += [block.text, ""]
        elif isinstance(block, Code):
            out += [f"```{block.language}", block.text.rstrip("\n"), "```", ""]
        elif isinstance(block, Image):
            out += [f"![{block.alt}]({block.path.relative_to(base).as_posix()})", ""]
        elif isinstance(block, Table):

            def row(cells: Sequence[Any]) -> str:
                texts = []
                for cell in cells:
                    text, bold = _cell(cell)
                    text = text.replace("|", "\\|")
                    texts.append(f"**{text}**" if bold and text else text)
                return "| " + " | ".join(texts) + " |"

            out += [row(block.header), "|" + "|".join("---" for _ in block.header) + "|"]
            out += [row(r) for r in block.rows]
            out += ["", *([block.note, ""] if block.note else [])]
    return "\n".join(out).rstrip() + "\n"


_MD_BOLD = re.compile(r"\*\*(.+?)\*\*")
_MD_CODE = re.compile(r"`([^`]+)`")


def _inline(text: str) -> str:
    """Escape text for HTML, keeping the two inline Markdown marks the report uses (**bold**, `code`)."""
    escaped = html.escape(text)
    escaped = _MD_CODE.sub(r"<code>\1</code>", escaped)
    return _MD_BOLD.sub(r"<strong>\1</strong>", escaped)


STYLE = """
body { font-family: system-ui, sans-serif; max-width: 75rem; margin: 2rem auto; padding: 0 1rem; color: #222; }
table { border-collapse: collapse; margin: 0.5rem 0; font-size: 0.9rem; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.5rem; text-align: right; }
th:first-child, td:first-child { text-align: left; }
td.best { font-weight: bold; background: #eef6ee; }
pre { background: #f5f5f5; padding: 0.75rem; overflow-x: auto; font-size: 0.85rem; }
img { max-width: 100%; }
p.note { color: #555; font-size: 0.85rem; }
"""


def to_html(report: Report) -> str:
    """One HTML file with the figures embedded as base64 PNGs."""
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(report.title)}</title><style>{STYLE}</style></head><body>",
        f"<h1>{html.escape(report.title)}</h1>",
    ]
    for block in report.blocks:
        if isinstance(block, Heading):
            out.append(f"<h{block.level}>{html.escape(block.text)}</h{block.level}>")
        elif isinstance(block, Paragraph):
            out.append(f"<p>{_inline(block.text)}</p>")
        elif isinstance(block, Code):
            out.append(f"<pre><code>{html.escape(block.text)}</code></pre>")
        elif isinstance(block, Image):
            data = base64.b64encode(block.path.read_bytes()).decode("ascii")
            out.append(f'<p><img alt="{html.escape(block.alt)}" src="data:image/png;base64,{data}"></p>')
        elif isinstance(block, Table):
            out.append("<table><thead><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in block.header))
            out.append("</tr></thead><tbody>")
            for row in block.rows:
                cells = []
                for cell in row:
                    text, bold = _cell(cell)
                    cells.append(f'<td class="best">{_inline(text)}</td>' if bold else f"<td>{_inline(text)}</td>")
                out.append("<tr>" + "".join(cells) + "</tr>")
            out.append("</tbody></table>")
            if block.note:
                out.append(f'<p class="note">{_inline(block.note)}</p>')
    out.append("</body></html>")
    return "\n".join(out) + "\n"


# ----------------------------------------------------------------------------------------------------------------
# content


def lower_is_better(metric: str) -> bool:
    return not any(part in metric.lower() for part in HIGHER_IS_BETTER)


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").lower() or "dataset"


def package_versions() -> list[tuple[str, str]]:
    versions = [("python", platform.python_version()), ("commit", git_commit() or "unknown")]
    for name in PACKAGES:
        try:
            versions.append((name, metadata.version(name)))
        except metadata.PackageNotFoundError:
            continue
    return versions


def environment_table(run: Run) -> Table:
    """What the run recorded (meta.json) next to what made the report."""
    rows = [[f"run: {key}", fmt(value, 4)] for key, value in run.meta.items()]
    rows += [[f"report: {name}", version] for name, version in package_versions()]
    return Table(
        ["item", "value"],
        rows,
        note="`run:` rows come from the run's meta.json; `report:` rows are the "
        "versions installed when this report was written.",
    )


def dataset_key(trials: pd.DataFrame) -> str:
    return "dataset_id" if "dataset_id" in trials else "dataset"


#: datasets.json fields shown first (in this order, with these headers); other scalar fields follow
DATASET_FIELDS = {
    "n": "n",
    "d": "d",
    "delta": "δ",
    "trials": "trials",
    "ols_train_mse": "OLS floor (train MSE)",
    "zero_train_mse": "‖Y‖²/n (θ = 0)",
}


def datasets_table(run: Run) -> Table:
    """One row per datasets.json entry (datasets, environments, ...): its scalar fields."""
    entries = {ident: info for ident, info in run.datasets.items() if isinstance(info, dict)}
    scalar = list(
        dict.fromkeys(
            k
            for info in entries.values()
            for k, v in info.items()
            if isinstance(v, (int, float, str, bool)) and k != "label"
        )
    )
    fields = [k for k in DATASET_FIELDS if k in scalar]
    if "ols_train_mse" not in fields:  # not a regression run (e.g. bandit environments): show what there is
        fields += [k for k in scalar if k not in DATASET_FIELDS]
    rows = [[ident, *[fmt(info.get(k, ""), 4) for k in fields]] for ident, info in entries.items()]
    note = (
        "OLS floor: train MSE of the non-private least-squares fit, the lowest any method can reach."
        if "ols_train_mse" in fields
        else ""
    )
    if run.skipped:
        note += " Skipped: " + "; ".join(f"**{ident}** ({reason})" for ident, reason in run.skipped.items()) + "."
    return Table(["dataset", *[DATASET_FIELDS.get(k, k) for k in fields]], rows, note=note.strip())


def private_labels(trials: pd.DataFrame) -> set[str]:
    """Curve labels of private mechanisms (``privacy_model`` other than ``none``); all labels if not recorded."""
    if "privacy_model" not in trials:
        return set(trials["label"].astype(str))
    return set(trials.loc[trials["privacy_model"].astype(str) != "none", "label"].astype(str))


def _cell_text(centre: float, lo: float, hi: float, interval: str) -> str:
    def text(value: float) -> str:
        return fmt(value, 3, trailing_zeros=True)

    if interval == "normal":
        return f"{text(centre)} ± {fmt((hi - lo) / 2, 2)}"
    if interval == "bootstrap" and np.isfinite(lo):
        return f"{text(centre)} [{text(lo)}, {text(hi)}]"
    return text(centre)


def points_table(
    points: pd.DataFrame,
    curves: Sequence[str],
    candidates: set[str],
    metric: str,
    x: str = "epsilon",
    stat: str = "mean",
    interval: str = "normal",
    floor: float | None = None,
    max_columns: int = 10,
) -> Table:
    """Rows = curves, columns = x values (at most ``max_columns``, evenly spread), cells "centre ± half-width"
    (normal) or "centre [lo, hi]" (bootstrap); the best ``candidates`` value per column is marked."""
    xs = sorted(points[x].unique())
    shown = xs if len(xs) <= max_columns else [xs[round(i)] for i in np.linspace(0, len(xs) - 1, max_columns)]
    cells = {(row.curve, row.x): row for row in points.rename(columns={x: "x"}).itertuples(index=False)}
    best: dict[Any, str] = {}
    for value in shown:
        column = [(cells[(c, value)].centre, c) for c in curves if (c, value) in cells and c in candidates]
        column = [(m, c) for m, c in column if np.isfinite(m)]
        if column:
            best[value] = (min(column) if lower_is_better(metric) else max(column))[1]
    rows = []
    for curve in curves:
        row: list[Any] = [curve]
        for value in shown:
            point = cells.get((curve, value))
            text = "" if point is None else _cell_text(point.centre, point.lo, point.hi, interval)
            row.append((text, best.get(value) == curve))
        rows.append(row)
    if floor is not None:
        rows.append(["OLS floor (non-private)", *[fmt(floor, 4)] * len(shown)])
    counts = sorted({int(c) for c in points["count"]})
    counted = ", ".join(map(str, counts)) if len(counts) <= 4 else f"{counts[0]}–{counts[-1]}"
    band = {
        "normal": "± 1.96·se" if stat == "median" else "± 1.96·std/√R",
        "bootstrap": "[95% bootstrap CI]",
        "none": "",
    }[interval]
    name = axis_name(x).split(" (")[0]
    note = (
        f"{stat} {band} over R = {counted} trials; **bold**: best private method per {name} "
        f"({'lowest' if lower_is_better(metric) else 'highest'} {stat}; a method whose band overlaps the best "
        "one's is not clearly worse)."
    )
    if len(shown) < len(xs):
        note += f" {len(shown)} of {len(xs)} {name} values shown."
    return Table(["method", *[f"{name} = {fmt(v)}" for v in shown]], rows, note=note)


def timing_table(run: Run, labels: Sequence[str]) -> Table | None:
    """Mean milliseconds per fit, per method (rows) and dataset (columns), and total fit seconds per method.

    A trial with several rows (e.g. a bandit run's regret checkpoints) counts once."""
    trials = run.trials
    if "seconds" not in trials:
        return None
    key = dataset_key(trials)
    ident = [c for c in trials.columns if c in (key, "label", "epsilon", "trial") or c.startswith(("data.", "hp."))]
    trials = trials.drop_duplicates(ident)
    datasets = list(pd.unique(trials[key]))
    per = trials.groupby(["label", key])["seconds"].mean()
    total = trials.groupby("label")["seconds"].agg(["sum", "count"])
    rows = []
    for lab in labels:
        if lab not in total.index:
            continue
        cells = [fmt(1e3 * per[(lab, ds)], 3) if (lab, ds) in per.index else "" for ds in datasets]
        rows.append([lab, *cells, fmt(total.loc[lab, "sum"], 3), fmt(int(total.loc[lab, "count"]))])
    wall = run.meta.get("wall_seconds_last_invocation")
    note = "ms per fit: mean of the runner's per-trial `seconds` (the mechanism's fit only, not the metrics)."
    if wall is not None:
        note += f" Wall time of the last `dpbench run` invocation: {fmt(float(wall), 3)} s (n_jobs = "
        note += f"{run.meta.get('n_jobs', '?')})."
    return Table(["method", *[f"{ds} (ms/fit)" for ds in datasets], "total fit s", "fits"], rows, note=note)


def config_text(run: Run) -> str:
    shown = {k: v for k, v in run.config.items() if k not in HIDDEN_CONFIG_KEYS}
    return yaml.safe_dump(shown, sort_keys=False, allow_unicode=True) if shown else "(no config.yaml)\n"


def leaderboard_blocks(run: Run, files: Path) -> list[Any]:
    """The leaderboard section (:mod:`dpbench.analysis.leaderboard`) at every ε, for runs with ≥ 2 datasets and ≥ 2
    private methods."""
    trials = run.trials
    if "train_mse" not in trials or "epsilon" not in trials or trials[dataset_key(trials)].nunique() < 2:
        return []
    if len(private_labels(trials)) < 2:
        return []
    board = build_leaderboard([run], replicates=500)
    return [Heading("Leaderboard across datasets"), *board_blocks(board, files, level=3)]


def board_blocks(board: Leaderboard, files: Path, level: int = 2) -> list[Any]:
    """A leaderboard's explanation, per-ε tables and win/tie/loss matrices, notes and the profiles figure."""
    blocks: list[Any] = [
        Paragraph(
            "Normalised excess risk (train MSE − OLS) / (‖Y‖²/n − OLS): median over datasets and mean rank, "
            "each with a bootstrap 95% interval (trials and datasets resampled); wins/ties/losses count "
            "datasets where the 95% intervals separate. `dpbench leaderboard` combines several runs."
        ),
    ]
    for eps in board.epsilons:
        blocks += [Heading(f"ε = {fmt(eps)}", level=level), _markdown_table(summary_markdown(board, eps))]
        if len(board.labels) > 1:
            blocks.append(_markdown_table(matrix_markdown(board, eps), "Win/tie/loss: row against column."))
    if board.reference:
        blocks.append(Paragraph(f"Reference (not ranked): {', '.join(board.reference)}."))
    blocks += [Paragraph(f"Note: {note}") for note in board.notes]
    png = [p for p in plot_profiles(board, files / "performance_profile") if p.suffix == ".png"][0]
    return [*blocks, Image(png, "performance profiles")]


def write_leaderboard_page(board: Leaderboard, out_dir: Path) -> Path:
    """``leaderboard.html``: the leaderboard as a self-contained page (figures embedded), beside leaderboard.md."""
    page = Report(f"Leaderboard over {len(board.datasets)} datasets", out_dir, board_blocks(board, out_dir))
    path = out_dir / "leaderboard.html"
    write_atomic(path, to_html(page))
    return path


def _markdown_table(text: str, note: str = "") -> Table:
    """A Markdown pipe table (header, rule, rows) as a report Table."""
    lines = [line.strip().strip("|").split(" | ") for line in text.splitlines()]
    return Table([c.strip() for c in lines[0]], [[c.strip() for c in row] for row in lines[2:]], note=note)


def figure_blocks(run: Run, stem: str, options: dict[str, Any], files: Path, heading: str) -> list[Any]:
    """One figure preset: the figure, then per panel its table (and, along ε, its own figure), then its slopes."""
    drawing = render(run, **options)
    o = drawing.options
    png = next(p for p in save(drawing, files.parent, stem) if p.suffix == ".png")
    blocks: list[Any] = [Heading(heading), Image(png, f"{o['metric']} vs {o['x']}")]
    points, panel, row = drawing.points, drawing.panel, drawing.row
    grid = [c for c in (row, panel) if c]
    cells = points.loc[~points["baseline"], grid].drop_duplicates().itertuples(index=False, name=None)
    for cell in cells:
        name = " · ".join(str(v) for v in cell)
        part = points[cell_mask(points, panel, cell[-1], row, cell[0] if row else None)]
        blocks.append(Heading(name, level=3))
        if o["x"] == "epsilon" and not row:  # a figure of its own only along ε (other x axes span panels)
            one = render(
                run,
                **{
                    **options,
                    "where": {**(o["where"] or {}), panel: [cell[-1]]},
                    "title": "",
                    "caption": "",
                    "ncols": 1,
                },
            )
            path = files / f"{slug(name)}_{stem}.png"
            save_figure(one.figure, path)
            blocks.append(Image(path, f"{o['metric']} vs ε on {name}"))
        floor = None
        if o["metric"] == "train_mse" and panel in ("dataset", "dataset_id"):
            try:
                floor = run.dataset_info(str(cell[-1])).get("ols_train_mse")
            except KeyError:
                floor = None
        curves = [c for c in dict.fromkeys(points["curve"]) if c in set(part["curve"])]
        candidates = set(part.loc[part["private"].astype(bool), "curve"])
        blocks.append(points_table(part, curves, candidates, o["metric"], o["x"], o["stat"], o["interval"], floor))
    if len(drawing.slopes):
        rows = [
            [
                *(str(r[c]) for c in grid),
                r["curve"],
                f"{r['slope']:+.3f}",
                f"[{r['lo']:+.3f}, {r['hi']:+.3f}]",
                fmt(r["points"]),
                f"{value_text(r['x_min'])}–{value_text(r['x_max'])}",
            ]
            for r in drawing.slopes.to_dict("records")
        ]
        blocks += [
            Heading("Fitted log–log slopes", level=3),
            Table(
                [*grid, "curve", "slope b", "95% CI", "points", f"{axis_name(o['x'])} range"],
                rows,
                note=f"log({o['stat']}) = a + b·log({o['x']}) by least squares; the CI covers the noise of "
                "the points, not a misfit of the power law.",
            ),
        ]
    return blocks


def analysis_blocks(run: Run) -> list[Any]:
    """Run the analyses the config names (``analyses:``): their printed text and the PNGs they wrote."""
    from dpbench import registry

    blocks: list[Any] = []
    for entry in run.config.get("analyses") or []:
        name, options = entry["name"], dict(entry.get("options") or {})
        lines: list[str] = []
        blocks.append(Heading(f"Analysis: {name}"))
        try:
            info = registry.get_analysis(name)
            written = info.run([run.path], options, lines.append) or []
        except (ValueError, KeyError, FileNotFoundError) as err:
            blocks.append(Paragraph(f"**failed**: {err.args[0] if err.args else err}"))
            continue
        blocks.append(Paragraph(info.summary))
        if lines:
            blocks.append(Code("\n".join(lines)))
        blocks += [Image(Path(p), f"{name}: {Path(p).name}") for p in written if Path(p).suffix == ".png"]
    return blocks


def build_report(
    run_dir: str | Path, metrics: Sequence[str] | None = None, analyses: bool = True, out_dir: Path | None = None
) -> Report:
    """Assemble the report of one run folder (any experiment kind): the config's figure presets (or ``metrics``,
    one figure each, from its ``plot:`` block) with their tables, the analyses it names, fit times, environment.
    Its figures are written in ``out_dir`` (default: the run folder)."""
    run = load_run(run_dir)
    out = run.path if out_dir is None else Path(out_dir)
    files = out / REPORT_DIR
    files.mkdir(parents=True, exist_ok=True)
    report = Report(f"Run report: {run.name}", out)
    blocks = report.blocks
    if run.title:
        blocks.append(Paragraph(f"**{run.title}**"))
    if run.caption:
        blocks.append(Paragraph(run.caption))
    if run.meta.get("partial"):  # a run of -d/-m/-e: say how much of the config the table holds
        blocks.append(
            Paragraph(
                f"**Partial run**: {run.meta['partial']} of the config; `dpbench run` without "
                "-d/-m/-e runs the rest into this folder."
            )
        )
    blocks += [Heading("Datasets"), datasets_table(run)]
    blocks += [Paragraph(f"**Note**: {note}") for note in run_notes(run.trials, run.datasets, units=True)]
    blocks += [
        Paragraph(f"**Fallback**: {line}.")
        for line in fallback_sentences(fallback_counts(run.trials, dataset_key(run.trials)))
    ]
    figures = [f for m in metrics for f in presets(run, {"metric": m})] if metrics else presets(run)
    named = bool(run.config.get("plots")) and not metrics
    for stem, options in figures:
        heading = (
            f"Figure {stem.removeprefix('figure_')}: {options['metric']}" if named else f"Metric: {options['metric']}"
        )
        blocks += figure_blocks(run, stem, options, files, heading)
    if analyses:
        blocks += analysis_blocks(run)
    blocks += leaderboard_blocks(run, files)
    timing = timing_table(run, run.label_order())
    if timing is not None:
        blocks += [Heading("Fit time per mechanism"), timing]
    blocks += [Heading("Environment"), environment_table(run), Heading("Config"), Code(config_text(run), "yaml")]
    return report


def write_report(
    run_dir: str | Path,
    metrics: Sequence[str] | None = None,
    html_page: bool = True,
    analyses: bool = True,
    out_dir: Path | None = None,
) -> list[Path]:
    """Write ``report.md`` (and ``report.html``) into ``out_dir`` (default: the run folder); return the paths."""
    report = build_report(run_dir, metrics, analyses, out_dir)
    written = [report.path / "report.md"]
    write_atomic(written[0], to_markdown(report, report.path))
    if html_page:
        written.append(report.path / "report.html")
        write_atomic(written[1], to_html(report))
    return written
