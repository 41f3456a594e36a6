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
        record: Annotated[
            str,
            typer.Option(
                help="with --papers: the previous speed record to compare with (ratios now / before are printed; the "
                "new record is written to --suite-output/record.json; '' compares with nothing)"
            ),
        ] = "benchmarks/record.json",
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
            jobs = [int(j) for j in suite_jobs.split(",")]
            _time_papers(papers.split(","), jobs, suite_trials, suite_output, record)
        elif suite:
            for jobs in (int(j) for j in suite_jobs.split(",")):
                seconds = suite_wall_time(SUITE_CONFIGS, n_jobs=jobs, trials=suite_trials)
                typer.echo(f"suite {' + '.join(SUITE_CONFIGS)} at n_jobs={jobs}: {seconds / 60:.1f} min")


def _time_papers(papers: list[str], jobs: list[int], trials: int | None, folder: str | None, record: str) -> None:
    """Per-figure and per-paper wall and CPU time and per-family per-trial cost of fresh runs (``bench --suite
    --papers``); the speed record of the last n_jobs, compared with ``record`` (:mod:`dpbench.engine.bench_record`)."""
    import os
    from pathlib import Path

    import pandas as pd

    from dpbench.engine.bench import family_costs, paper_configs, paper_totals, time_figures
    from dpbench.engine.bench_record import DEFAULT_RECORD, comparison_text, make_record, write_record

    try:
        configs = paper_configs(papers)
    except ValueError as err:
        raise typer.BadParameter(str(err), param_hint="--papers") from None
    previous = _previous_record(record)
    figures, trial_rows, loads = [], [], [os.getloadavg()]
    for n_jobs in jobs:
        typer.echo(f"suite: {len(configs)} configs at n_jobs={n_jobs}" + (f", trials={trials}" if trials else ""))
        fig, tri = time_figures(configs, n_jobs, trials, log=typer.echo)
        figures.append(fig)
        trial_rows.append(tri.assign(n_jobs=n_jobs))
        loads.append(os.getloadavg())
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
    now = make_record(figures[-1], trial_rows[-1], jobs[-1], tuple(max(v) for v in zip(*loads, strict=True)))
    if folder:
        write_record(Path(folder) / "record.json", now)
        typer.echo(f"wrote {folder}/record.json (to keep it as the reference: copy it over {record or DEFAULT_RECORD})")
    if previous is not None:
        typer.echo(comparison_text(previous, now))


def _previous_record(record: str):
    """The record to compare with (None: none asked for, or none committed yet)."""
    from pathlib import Path

    from dpbench.engine.bench_record import read_record

    if not record or not Path(record).is_file():
        if record:
            typer.echo(f"no previous speed record at {record}: nothing to compare with")
        return None
    try:
        return read_record(Path(record))
    except ValueError as err:
        raise typer.BadParameter(str(err), param_hint="--record") from None
