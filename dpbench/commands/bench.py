"""``dpbench bench``: per-trial cost of each mechanism (fast vs explicit sketch path) and suite wall times."""

from __future__ import annotations

from typing import Annotated

import typer

from dpbench.bench import DEFAULT_DATASETS


def register(app: typer.Typer) -> None:
    @app.command()
    def bench(
        datasets: Annotated[str, typer.Option(help="comma-separated dataset loaders")] = ",".join(DEFAULT_DATASETS),
        mechanisms: Annotated[
            str, typer.Option(help="comma-separated mechanisms (default: the private ones of the suite's configs)")
        ] = "",
        trials: Annotated[int, typer.Option(help="timed trials per mechanism on the fast path")] = 20,
        explicit_trials: Annotated[int, typer.Option(help="timed trials on the explicit-sketch path")] = 3,
        suite: Annotated[bool, typer.Option(help="also time the Figures 1–5 suite (five configs)")] = False,
        suite_jobs: Annotated[str, typer.Option(help="n_jobs values for the suite timing")] = "1,2",
        suite_trials: Annotated[int | None, typer.Option(help="override trials in the suite timing")] = None,
        output: Annotated[str | None, typer.Option(help="write the per-mechanism table to this CSV")] = None,
    ) -> None:
        """Time every mechanism per trial on small → large datasets, with the fast and the explicit sketch."""
        from dpbench.bench import SUITE_CONFIGS, bench_mechanisms, suite_wall_time

        table = bench_mechanisms(
            datasets.split(","), mechanisms.split(",") if mechanisms else None, trials=trials,
            explicit_trials=explicit_trials, log=typer.echo,
        )
        if output:
            table.to_csv(output, index=False)
            typer.echo(f"wrote {output}")
        if suite:
            for jobs in (int(j) for j in suite_jobs.split(",")):
                seconds = suite_wall_time(SUITE_CONFIGS, n_jobs=jobs, trials=suite_trials)
                typer.echo(f"suite {' + '.join(SUITE_CONFIGS)} at n_jobs={jobs}: {seconds / 60:.1f} min")
