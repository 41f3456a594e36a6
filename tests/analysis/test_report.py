"""dpbench report: the page's tables agree with trials.csv, the best method is the right one, HTML is standalone."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from dpbench import __version__
from dpbench.analysis.report import (
    Paragraph,
    Report,
    Table,
    points_table,
    to_html,
    to_markdown,
    write_report,
)
from dpbench.analysis.stats import fmt
from dpbench.cli import app
from dpbench.config import parse_config
from dpbench.engine import run


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    raw = {
        "name": "report_demo",
        "title": "Report demo",
        "caption": "synthetic, 8 trials",
        "output_dir": str(tmp_path_factory.mktemp("report") / "results"),
        "seed": 5,
        "trials": 8,
        "trial_block": 8,
        "epsilons": [0.3, 3.0],
        "datasets": [{"loader": "sphere_linear", "options": {"d": 3}, "grid": {"n": [200, 2000]}}],
        "mechanisms": [{"mechanism": "adassp", "label": "AdaSSP"}, {"mechanism": "ihm", "label": "IHM"}, "ols"],
        "plot": {"metric": "train_mse"},
    }
    return run(parse_config(raw), progress=False, log=lambda m: None)


@pytest.fixture(scope="module")
def written(run_dir):
    return write_report(run_dir)


def section(markdown: str, heading: str) -> str:
    """Text from ``heading`` to the next heading of the same or a higher level."""
    level = heading.split(" ")[0]
    start = markdown.index(heading + "\n")
    rest = markdown[start + len(heading) + 1 :]
    stop = re.search(rf"^#{{1,{len(level)}}} ", rest, flags=re.M)
    return rest[: stop.start()] if stop else rest


def table_rows(text: str) -> dict[str, list[str]]:
    rows = {}
    for line in text.splitlines():
        if line.startswith("| ") and not line.startswith("| method"):
            cells = [c.strip() for c in line.strip("|").split(" | ")]
            rows[cells[0]] = cells[1:]
    return rows


def test_report_files_and_sections(run_dir, written):
    assert [p.name for p in written] == ["report.md", "report.html"]
    markdown = written[0].read_text()
    assert markdown.startswith("# Run report: report_demo")
    assert "**Report demo**" in markdown and "synthetic, 8 trials" in markdown
    for heading in ("## Datasets", "## Metric: train_mse", "## Fit time per mechanism", "## Environment", "## Config"):
        assert heading + "\n" in markdown
    environment = section(markdown, "## Environment")
    assert f"| report: dpbench | {__version__} |" in environment and "| run: commit |" in environment
    assert "name: report_demo" in section(markdown, "## Config") and "fingerprint" not in markdown
    for image in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", markdown):
        assert (run_dir / image).is_file(), image
    assert len(re.findall(r"!\[", markdown)) == 1 + 2 + 1  # overview + one per dataset + the leaderboard profile


def test_tables_match_the_trials_and_mark_the_best_private_method(run_dir, written):
    markdown = written[0].read_text()
    trials = pd.read_csv(run_dir / "trials.csv")
    datasets = json.loads((run_dir / "datasets.json").read_text())
    assert len(datasets) == 2
    for ident, info in datasets.items():
        rows = table_rows(section(markdown, f"### {ident}"))
        assert set(rows) == {"AdaSSP", "IHM", "ols", "OLS floor (non-private)"}
        part = trials[trials.dataset_id == ident]
        for j, eps in enumerate(sorted(part.epsilon.unique())):
            cell = part[part.epsilon == eps]
            means = cell.groupby("label")["train_mse"].mean()
            for label in ("AdaSSP", "IHM", "ols"):
                values = cell.loc[cell.label == label, "train_mse"].to_numpy()
                ci = 1.96 * values.std(ddof=0) / np.sqrt(len(values))
                text = rows[label][j].strip("*")
                assert text == f"{fmt(values.mean(), 3, trailing_zeros=True)} ± {ci:.2g}", (ident, eps, label)
            best = means.drop("ols").idxmin()  # the non-private reference is never "best"
            marked = [label for label in ("AdaSSP", "IHM", "ols") if rows[label][j].startswith("**")]
            assert marked == [best], (ident, eps)
        assert rows["OLS floor (non-private)"][0] == f"{info['ols_train_mse']:.4g}"
    timing = table_rows(section(markdown, "## Fit time per mechanism"))
    for label in ("AdaSSP", "IHM", "ols"):
        fits = int(timing[label][-1])
        assert fits == (trials.label == label).sum()


def test_html_is_self_contained_and_says_the_same(written):
    page = written[1].read_text()
    assert page.startswith("<!DOCTYPE html>")
    sources = re.findall(r'<img[^>]*src="([^"]+)"', page)
    assert len(sources) == 3 + 1 and all(src.startswith("data:image/png;base64,") for src in sources)
    assert not re.search(r'(href|src)="(?!data:)', page)  # nothing outside the file
    markdown = written[0].read_text()
    bold_md = re.findall(r"\*\*([^*]+)\*\*", section(markdown, "## Metric: train_mse"))
    bold_html = re.findall(r'<td class="best">([^<]+)</td>', page)
    assert bold_html == [cell for cell in bold_md if "±" in cell]


def test_higher_is_better_metrics_mark_the_maximum():
    agg = pd.DataFrame(
        {
            "label": ["a", "b", "a", "b"],
            "epsilon": [1.0, 1.0, 2.0, 2.0],
            "mean": [0.6, 0.8, 0.9, 0.7],
            "ci95": [0.01] * 4,
            "count": [10] * 4,
        }
    )
    points = agg.rename(columns={"label": "curve", "mean": "centre"}).assign(
        lo=agg["mean"] - agg["ci95"], hi=agg["mean"] + agg["ci95"]
    )
    accuracy = points_table(points, ["a", "b"], {"a", "b"}, "test_accuracy")
    assert [[cell[1] for cell in row[1:]] for row in accuracy.rows] == [[False, True], [True, False]]
    loss = points_table(points, ["a", "b"], {"a", "b"}, "train_mse")
    assert [[cell[1] for cell in row[1:]] for row in loss.rows] == [[True, False], [False, True]]
    assert "highest mean" in accuracy.note and "lowest mean" in loss.note


def test_fmt_keeps_trailing_zeros_but_no_bare_point():
    values = (0.12, 1.0, 114.2, 1384.0, 0.000123)
    assert [fmt(v, 3, trailing_zeros=True) for v in values] == ["0.120", "1.00", "114", "1.38e+03", "0.000123"]


def test_rendering_escapes_table_pipes_and_html(tmp_path):
    blocks = [Paragraph("x < y, **bold**"), Table(["k|v", "v"], [["a|b", ("<i>", True)]])]
    report = Report("a <b> & c", tmp_path, blocks)
    markdown = to_markdown(report, tmp_path)
    assert "| k\\|v | v |" in markdown and "| a\\|b | **<i>** |" in markdown
    page = to_html(report)
    assert "<h1>a &lt;b&gt; &amp; c</h1>" in page and "x &lt; y, <strong>bold</strong>" in page
    assert '<td class="best">&lt;i&gt;</td>' in page


def test_cli_reports_every_run_under_a_folder_and_rejects_bad_paths(run_dir, tmp_path):
    runner = CliRunner()
    result = runner.invoke(app, ["report", str(run_dir.parent), "--no-html", "-m", "excess"])
    assert result.exit_code == 0, result.output
    assert f"wrote {run_dir / 'report.md'}" in result.output and "report.html" not in result.output
    assert "## Metric: excess" in (run_dir / "report.md").read_text()
    missing = runner.invoke(app, ["report", str(tmp_path / "nowhere")])
    assert missing.exit_code == 2 and "does not exist" in missing.output
    bad_metric = runner.invoke(app, ["report", str(run_dir), "-m", "nonsense"])
    assert bad_metric.exit_code == 2 and "unknown metric 'nonsense'" in bad_metric.output


def test_skipped_datasets_are_listed_with_their_reason(run_dir, tmp_path):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(run_dir, copy, ignore=shutil.ignore_patterns("shards", "report*"))
    (copy / "skipped.json").write_text(json.dumps({"Ghost data": "data unavailable: ghost.csv is missing"}))
    markdown = write_report(copy, html_page=False)[0].read_text()
    assert "Skipped: **Ghost data** (data unavailable: ghost.csv is missing)." in section(markdown, "## Datasets")
