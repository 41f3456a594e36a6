"""``dpbench report PATH``: a self-contained Markdown + HTML page for every run under PATH (see dpbench.report)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    from dpbench.cli import user_errors

    @app.command()
    @user_errors
    def report(
        path: Annotated[Path, typer.Argument(help="a run folder, or a folder holding runs (e.g. results/)")],
        metric: Annotated[
            list[str] | None,
            typer.Option("--metric", "-m", help="metric(s) to report (default: the config's plot metric(s))"),
        ] = None,
        html: Annotated[bool, typer.Option("--html/--no-html", help="also write report.html")] = True,
    ) -> None:
        """Write report.md (+ report.html with embedded figures): config, environment, figures, mean ± 95% CI per
        (mechanism, ε) with the best method marked, OLS floor, fit time per mechanism."""
        from dpbench.report import write_report
        from dpbench.results import find_runs

        runs = find_runs(path)
        if not runs:
            raise FileNotFoundError(f"no run (a folder with trials.csv) found under {path}")
        for run_dir in runs:
            for written in write_report(run_dir, metrics=metric or None, html_page=html):
                typer.echo(f"wrote {written}")
