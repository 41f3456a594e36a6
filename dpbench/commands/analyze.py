"""``dpbench analyze NAME [RUN...]``: run one named analysis contributed by a paper plug-in (see the registry);
``dpbench analyze`` alone lists them. ``dpbench report RUN`` runs the ones a config names under ``analyses:``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def parse_options(pairs: list[str]) -> dict[str, str]:
    """``["seed=50", "output=t.csv"]`` → ``{"seed": "50", "output": "t.csv"}``; a pair without '=' is an error."""
    options = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ValueError(f"option {pair!r} must be key=value")
        options[key.strip()] = value.strip()
    return options


def register(app: typer.Typer) -> None:
    from dpbench.commands._common import user_errors

    @app.command()
    @user_errors
    def analyze(
        name: Annotated[str | None, typer.Argument(help="analysis name (without it: list the analyses)")] = None,
        runs: Annotated[list[Path] | None, typer.Argument(help="run folders the analysis reads")] = None,
        option: Annotated[
            list[str] | None, typer.Option("--option", "-o", help="analysis option key=value (repeatable)")
        ] = None,
    ) -> None:
        """Run the named analysis (a paper's table or figure that is not a per-trial plot) on RUN folders."""
        from dpbench import registry

        if name is None:
            registry.discover()
            typer.echo(f"  {'name':<20} {'needs a run':<12} summary")
            for item in sorted(registry.ANALYSES.values(), key=lambda a: a.name):
                typer.echo(f"  {item.name:<20} {'yes' if item.needs_runs else 'no':<12} {item.summary}")
            return
        info = registry.get_analysis(name)
        runs = list(runs or [])
        if info.needs_runs and not runs:
            raise ValueError(f"analysis {name!r} needs at least one run folder")
        if runs and not info.needs_runs:
            raise ValueError(
                f"analysis {name!r} reads no run (it computes from the data itself); drop "
                f"{' '.join(map(str, runs))} and run `dpbench analyze {name}` alone"
            )
        for run_dir in runs:
            if not run_dir.exists():
                raise FileNotFoundError(f"run folder not found: {run_dir}")
        info.run(runs, parse_options(list(option or [])), lambda line: typer.echo(line))
