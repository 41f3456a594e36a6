"""``dpbench report PATH``: a self-contained Markdown + HTML page for every run under PATH, of any experiment kind,
with the analyses its config names (see dpbench.analysis.report)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    from dpbench.commands._common import check_writable, user_errors

    @app.command()
    @user_errors
    def report(
        path: Annotated[Path, typer.Argument(help="a run folder, or a folder holding runs (e.g. results/)")],
        metric: Annotated[
            list[str] | None,
            typer.Option("--metric", "-m", help="one figure per metric (default: the config's figure presets)"),
        ] = None,
        html: Annotated[bool, typer.Option("--html/--no-html", help="also write report.html")] = True,
        analyses: Annotated[
            bool, typer.Option("--analyses/--no-analyses", help="run the analyses the config names")
        ] = True,
        out_dir: Annotated[
            Path | None,
            typer.Option(help="folder for the report and its figures (default: the run folder), relative to here"),
        ] = None,
    ) -> None:
        """Write report.md (+ report.html with embedded figures) for runs of any kind: every figure preset with
        its points (stat ± 95% CI per curve and x, best marked) and slopes, the analyses the config names under
        analyses:, fit time per mechanism, environment, config."""
        from dpbench.analysis.report import write_report
        from dpbench.analysis.runs import find_runs

        runs = find_runs(path)
        if not runs:
            raise FileNotFoundError(f"no run (a folder with trials.csv) found under {path}")
        for run_dir in runs:
            folder = None if out_dir is None else (out_dir if len(runs) == 1 else out_dir / run_dir.name)
            check_writable(folder or run_dir)
            written_files = write_report(
                run_dir, metrics=metric or None, html_page=html, analyses=analyses, out_dir=folder
            )
            for written in written_files:
                typer.echo(f"wrote {written}")
