"""``dpbench bench``: per-trial cost of each mechanism (fast vs explicit sketch path) and suite wall times."""

from __future__ import annotations

from typing import Annotated

import typer

from dpbench.engine.bench import DEFAULT_DATASETS


def register(app: typer.Typer) -> None:
    @app.command()
    def bench(
        datasets: Annotated[str, typer.Option(help="comma-separated dataset loaders")] = ",".join(DEFAULT_DATASETS),
        mechanisms: Annotated[
            str,
            typer.Option(
                help="comma-separated mechanisms (default: the private ones of the suite's and the field's configs)"
            ),
        ] = "",
        trials: Annotated[int, typer.Option(help="timed trials per mechanism on the fast path")] = 20,
        explicit_trials: Annotated[int, typer.Option(help="timed trials on the explicit-sketch path")] = 3,
        suite: Annotated[bool, typer.Option(help="also time the Figures 1–5 suite (five configs)")] = False,
        suite_jobs: Annotated[str, typer.Option(help="n_jobs values for the suite timing")] = "1,2",
        suite_trials: Annotated[int | None, typer.Option(help="override trials in the suite timing")] = None,
        output: Annotated[str | None, typer.Option(help="write the per-mechanism table to this CSV")] = None,
        papers: Annotated[
            str | None,
            typer.Option(
                help="with --suite: time every config of these papers (ihm, stein, ftrl, info_weighted, bandits, all, "
                "or config paths), per figure and per paper, and the per-trial cost of each mechanism family"
            ),
        ] = None,
        suite_output: Annotated[
            str | None, typer.Option(help="folder for the --papers tables (figures.csv, papers.csv, families.csv)")
        ] = None,
        mechanism_table: Annotated[bool, typer.Option(help="time the per-mechanism table")] = True,
    ) -> None:
        """Time every mechanism per trial on small → large datasets, with the fast and the explicit sketch."""
        from dpbench.engine.bench import SUITE_CONFIGS, bench_mechanisms, suite_wall_time

        if mechanism_table:
            table = bench_mechanisms(
                datasets.split(","),
                mechanisms.split(",") if mechanisms else None,
                trials=trials,
                explicit_trials=explicit_trials,
                log=typer.echo,
            )
            if output:
                table.to_csv(output, index=False)
                typer.echo(f"wrote {output}")
        if suite and papers:
            _time_papers(papers.split(","), [int(j) for j in suite_jobs.split(",")], suite_trials, suite_output)
        elif suite:
            for jobs in (int(j) for j in suite_jobs.split(",")):
                seconds = suite_wall_time(SUITE_CONFIGS, n_jobs=jobs, trials=suite_trials)
                typer.echo(f"suite {' + '.join(SUITE_CONFIGS)} at n_jobs={jobs}: {seconds / 60:.1f} min")


def _time_papers(papers: list[str], jobs: list[int], trials: int | None, folder: str | None) -> None:
    """Per-figure and per-paper wall time and per-family per-trial cost of fresh runs (``bench --suite --papers``)."""
    from pathlib import Path

    import pandas as pd

    from dpbench.engine.bench import family_costs, paper_configs, paper_totals, time_figures

    try:
        configs = paper_configs(papers)
    except ValueError as err:
        raise typer.BadParameter(str(err), param_hint="--papers") from None
    figures, trial_rows = [], []
    for n_jobs in jobs:
        typer.echo(f"suite: {len(configs)} configs at n_jobs={n_jobs}" + (f", trials={trials}" if trials else ""))
        fig, tri = time_figures(configs, n_jobs, trials, log=typer.echo)
        figures.append(fig)
        trial_rows.append(tri.assign(n_jobs=n_jobs))
    figures_t, trials_t = pd.concat(figures, ignore_index=True), pd.concat(trial_rows, ignore_index=True)
    totals = pd.concat([paper_totals(f).assign(n_jobs=j) for f, j in zip(figures, jobs, strict=True)])
    families = family_costs(trials_t)
    with pd.option_context("display.width", 160, "display.max_rows", 500):
        typer.echo(totals.to_string(index=False, float_format=lambda v: f"{v:.1f}"))
        typer.echo(families.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    if folder:
        out = Path(folder)
        out.mkdir(parents=True, exist_ok=True)
        figures_t.to_csv(out / "figures.csv", index=False)
        totals.to_csv(out / "papers.csv", index=False)
        families.to_csv(out / "families.csv", index=False)
        typer.echo(f"wrote {out}/figures.csv, papers.csv, families.csv")
