"""Run reports: one self-contained page per run folder (``dpbench report results/<run>``).

The page holds the resolved config, the environment (the run's ``meta.json`` plus the package versions the
report was made with), the datasets with their OLS floor, per metric one overview figure and, per dataset, a
figure and a table of mean ± 95% CI (1.96·std/√R, as in the figures) per (mechanism, ε) with the best private
method of every ε column in bold, and the fit time per mechanism (the runner's per-trial ``seconds``).

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

from dpbench.engine.store import git_commit
from dpbench.plot import build_figure, figure_stem, plot_run
from dpbench.results import Run, aggregate, load_run

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


def fmt(value: Any, digits: int = 3) -> str:
    """Numbers with ``digits`` significant digits; anything else as text."""
    if isinstance(value, (bool, np.bool_)):
        return str(value)
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return "nan" if not np.isfinite(value) else f"{value:.{digits}g}"
    return str(value)


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
    return Table(["item", "value"], rows, note="`run:` rows come from the run's meta.json; `report:` rows are the "
                 "versions installed when this report was written.")


def dataset_key(trials: pd.DataFrame) -> str:
    return "dataset_id" if "dataset_id" in trials else "dataset"


def datasets_table(run: Run) -> Table:
    rows = []
    for ident, info in run.datasets.items():
        rows.append([
            ident,
            fmt(info.get("n")), fmt(info.get("d")), fmt(info.get("delta"), 3), fmt(info.get("trials")),
            fmt(info.get("ols_train_mse"), 4), fmt(info.get("zero_train_mse"), 4),
        ])
    note = "OLS floor: train MSE of the non-private least-squares fit, the lowest any method can reach."
    if run.skipped:
        note += " Skipped: " + "; ".join(f"**{ident}** ({reason})" for ident, reason in run.skipped.items()) + "."
    return Table(["dataset", "n", "d", "δ", "trials", "OLS floor (train MSE)", "‖Y‖²/n (θ = 0)"], rows, note=note)


def private_labels(trials: pd.DataFrame) -> set[str]:
    """Curve labels of private mechanisms (``privacy_model`` other than ``none``); all labels if not recorded."""
    if "privacy_model" not in trials:
        return set(trials["label"].astype(str))
    return set(trials.loc[trials["privacy_model"].astype(str) != "none", "label"].astype(str))


def results_table(
    agg: pd.DataFrame, labels: Sequence[str], candidates: set[str], metric: str, floor: float | None = None
) -> Table:
    """Rows = curve labels, columns = ε, cells "mean ± ci95"; the best private mean per column is marked."""
    epsilons = sorted(agg["epsilon"].unique())
    cells = {(row.label, row.epsilon): row for row in agg.itertuples(index=False)}
    best: dict[float, str] = {}
    for eps in epsilons:
        column = [(cells[(lab, eps)].mean, lab) for lab in labels if (lab, eps) in cells and lab in candidates]
        column = [(m, lab) for m, lab in column if np.isfinite(m)]
        if column:
            best[eps] = (min(column) if lower_is_better(metric) else max(column))[1]
    rows = []
    for lab in labels:
        row: list[Any] = [lab]
        for eps in epsilons:
            point = cells.get((lab, eps))
            text = "" if point is None else f"{point.mean:#.3g} ± {fmt(point.ci95, 2)}"
            row.append((text, best.get(eps) == lab))
        rows.append(row)
    if floor is not None:
        rows.append(["OLS floor (non-private)", *[fmt(floor, 4)] * len(epsilons)])
    counts = sorted({int(c) for c in agg["count"]})
    note = (
        f"mean ± 1.96·std/√R over R = {', '.join(map(str, counts))} trials; **bold**: best private method per ε "
        f"({'lowest' if lower_is_better(metric) else 'highest'} mean; a method whose band overlaps the best one's "
        "is not clearly worse)."
    )
    return Table(["method", *[f"ε = {fmt(e)}" for e in epsilons]], rows, note=note)


def timing_table(run: Run, labels: Sequence[str]) -> Table | None:
    """Mean milliseconds per fit, per method (rows) and dataset (columns), and total fit seconds per method."""
    trials = run.trials
    if "seconds" not in trials:
        return None
    key = dataset_key(trials)
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


def report_metrics(run: Run, metrics: Sequence[str] | None) -> list[str]:
    """The metrics to report: the given ones, else the config's plot metrics, else train_mse."""
    if metrics:
        return list(metrics)
    plot = run.config.get("plot") or {}
    chosen = plot.get("metrics") or [plot.get("metric") or "train_mse"]
    return [str(m) for m in chosen]


def _plot_options(run: Run) -> dict[str, Any]:
    options = dict(run.config.get("plot") or {})
    for key in ("metric", "metrics"):
        options.pop(key, None)
    return options


def config_text(run: Run) -> str:
    shown = {k: v for k, v in run.config.items() if k not in HIDDEN_CONFIG_KEYS}
    return yaml.safe_dump(shown, sort_keys=False, allow_unicode=True) if shown else "(no config.yaml)\n"


def leaderboard_blocks(run: Run, files: Path) -> list[Any]:
    """The leaderboard section (dpbench.leaderboard) at every ε, for runs with ≥ 2 datasets and ≥ 2 private methods."""
    from dpbench.leaderboard import build_leaderboard, matrix_markdown, plot_profiles, summary_markdown

    trials = run.trials
    if "train_mse" not in trials or "epsilon" not in trials or trials[dataset_key(trials)].nunique() < 2:
        return []
    if len(private_labels(trials)) < 2:
        return []
    board = build_leaderboard([run], replicates=500)
    blocks: list[Any] = [
        Heading("Leaderboard across datasets"),
        Paragraph("Normalised excess risk (train MSE − OLS) / (‖Y‖²/n − OLS): median over datasets and mean rank, "
                  "each with a bootstrap 95% interval (trials and datasets resampled); wins/ties/losses count "
                  "datasets where the 95% intervals separate. `dpbench leaderboard` combines several runs."),
    ]
    for eps in board.epsilons:
        blocks += [Heading(f"ε = {fmt(eps)}", level=3), _markdown_table(summary_markdown(board, eps)),
                   _markdown_table(matrix_markdown(board, eps), "Win/tie/loss: row against column.")]
    png = [p for p in plot_profiles(board, files / "performance_profile") if p.suffix == ".png"][0]
    return [*blocks, Image(png, "performance profiles")]


def _markdown_table(text: str, note: str = "") -> Table:
    """A Markdown pipe table (header, rule, rows) as a report Table."""
    lines = [line.strip().strip("|").split(" | ") for line in text.splitlines()]
    return Table([c.strip() for c in lines[0]], [[c.strip() for c in row] for row in lines[2:]], note=note)


def build_report(run_dir: str | Path, metrics: Sequence[str] | None = None) -> Report:
    """Assemble the report of one run folder; figures are written to ``<run>/report_files/``."""
    run = load_run(run_dir)
    files = run.path / REPORT_DIR
    files.mkdir(exist_ok=True)
    report = Report(f"Run report: {run.name}", run.path)
    blocks = report.blocks
    if run.title:
        blocks.append(Paragraph(f"**{run.title}**"))
    if run.caption:
        blocks.append(Paragraph(run.caption))
    trials = run.trials
    key = dataset_key(trials)
    labels = run.label_order()
    candidates = private_labels(trials)
    options = _plot_options(run)
    x = options.get("x", "epsilon")

    blocks += [Heading("Datasets"), datasets_table(run)]
    for metric in report_metrics(run, metrics):
        blocks.append(Heading(f"Metric: {metric}"))
        for path in plot_run(run.path, metric=metric, **options):
            if path.suffix == ".png":
                blocks.append(Image(path, f"{metric} for every dataset"))
        if "epsilon" not in trials:
            continue
        agg = aggregate(run, metric, x="epsilon", by=(key, "label"))
        for ident in pd.unique(trials[key]):
            part = Run(run.path, trials[trials[key] == ident], run.datasets, {}, run.config, run.meta)
            info = run.datasets.get(ident, {})
            title = str(info.get("label") or ident)
            blocks.append(Heading(f"{ident}", level=3))
            if x == "epsilon":  # a per-dataset figure only makes sense along ε (other x axes span datasets)
                figure = build_figure(part, metric=metric, **{**options, "title": "", "caption": "", "ncols": 1})
                png = files / f"{slug(str(ident))}_{figure_stem(metric)}.png"
                figure.savefig(png, dpi=120)
                blocks.append(Image(png, f"{metric} vs ε on {title}"))
            sub = agg[agg[key] == ident].drop(columns=key)
            floor = info.get("ols_train_mse") if metric == "train_mse" else None
            blocks.append(results_table(sub, [lab for lab in labels if lab in set(sub["label"])], candidates,
                                        metric, floor))
    blocks += leaderboard_blocks(run, files)
    timing = timing_table(run, labels)
    if timing is not None:
        blocks += [Heading("Fit time per mechanism"), timing]
    blocks += [Heading("Environment"), environment_table(run), Heading("Config"), Code(config_text(run), "yaml")]
    return report


def write_report(run_dir: str | Path, metrics: Sequence[str] | None = None, html_page: bool = True) -> list[Path]:
    """Write ``report.md`` (and ``report.html``) into the run folder; return the written paths."""
    report = build_report(run_dir, metrics)
    written = [report.path / "report.md"]
    written[0].write_text(to_markdown(report, report.path))
    if html_page:
        written.append(report.path / "report.html")
        written[1].write_text(to_html(report))
    return written
