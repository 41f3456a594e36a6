"""``dpbench run CONFIG``: run the trials a config's run folder lacks, then write its trials.csv."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from dpbench.commands._common import log, resolve_config, user_errors


def register(app: typer.Typer) -> None:
    @app.command()
    @user_errors
    def run(
        config: Annotated[
            str,
            typer.Argument(
                help="experiment YAML, or the name of a shipped config (`dpbench list configs`: ihm_vs_adassp, …)"
            ),
        ],
        trials: Annotated[int | None, typer.Option(help="override the config's number of trials")] = None,
        n_jobs: Annotated[
            int | None,
            typer.Option(
                "--n-jobs", "-j", help="parallel workers (-1 = all cores; default: the config's n_jobs, else 1)"
            ),
        ] = None,
        output_dir: Annotated[str | None, typer.Option(help="parent folder of the run (default: config's)")] = None,
        fresh: Annotated[
            bool, typer.Option(help="empty the run's trial store first (every trial is computed again)")
        ] = False,
        dry_run: Annotated[
            bool,
            typer.Option("--dry-run", help="print the plan (trials finished / to run, estimated time); write nothing"),
        ] = False,
        dataset: Annotated[
            list[str] | None,
            typer.Option("--dataset", "-d", help="run only this dataset (label or loader name; repeatable)"),
        ] = None,
        mechanism: Annotated[
            list[str] | None,
            typer.Option("--mechanism", "-m", help="run only this mechanism (label or registered name; repeatable)"),
        ] = None,
        epsilon: Annotated[
            list[float] | None,
            typer.Option("--epsilon", "-e", help="run only this ε (value as printed, 6 digits; repeatable)"),
        ] = None,
        progress: Annotated[bool, typer.Option(help="show a progress bar")] = True,
        plot: Annotated[bool, typer.Option(help="draw the figure when the run ends")] = False,
        backend: Annotated[str | None, typer.Option(help="loky (default) or dask")] = None,
        scheduler: Annotated[
            str | None, typer.Option(help="dask scheduler: 'local', tcp://host:port or a scheduler file")
        ] = None,
    ) -> None:
        """Run the trials of CONFIG that its run folder's store lacks, then write <output_dir>/<name>/trials.csv.

        Every finished trial is kept under what it is (data, mechanism and its code, ε, δ, draw, trial, seed): a grown,
        shrunk or edited config reuses the trials that are still valid and runs only the rest; -d/-m/-e run a part."""
        from dpbench.commands.plot import plot_paths
        from dpbench.config import load_config
        from dpbench.engine import run as run_experiment
        from dpbench.engine.core import RunInterrupted
        from dpbench.engine.survey import Selection

        if n_jobs is not None:
            check_n_jobs(n_jobs)
        cfg = load_config(
            resolve_config(config), trials=trials, output_dir=output_dir, backend=backend, scheduler=scheduler
        )
        if trials is not None and getattr(cfg, "large_trials", None) is not None:
            cfg.large_trials = min(cfg.large_trials, trials)
        selection = Selection(tuple(dataset or ()), tuple(mechanism or ()), tuple(epsilon or ()))
        for line in start_lines(cfg, n_jobs):
            log(line)
        try:
            run_dir = run_experiment(
                cfg,
                n_jobs=n_jobs,
                fresh=fresh,
                progress=progress and not dry_run,
                log=log,
                selection=selection,
                dry_run=dry_run,
                show=typer.echo,
            )
        except (RunInterrupted, KeyboardInterrupt) as err:  # a RunInterrupted's line was logged when Ctrl-C arrived
            if isinstance(err, KeyboardInterrupt):  # before or after the trials ran (planning, assembly)
                log("interrupted: every finished trial is kept in the run's store; run the same command to resume")
            import gc

            gc.freeze()  # exit now: the interpreter's final collection of every imported module takes ~1 s
            raise typer.Exit(code=130) from None
        if dry_run:
            return
        typer.echo(f"wrote {run_dir / 'trials.csv'}")
        for note in finished_notes(run_dir):
            log(f"note: {note}")
        if plot:
            plot_paths(run_dir)


def check_n_jobs(n_jobs: int) -> None:
    """``-j`` as the config's ``n_jobs`` is checked: a positive integer or -1 (all cores)."""
    if n_jobs == 0 or n_jobs < -1:
        raise ValueError(f"--n-jobs must be a positive integer or -1 (all cores), got {n_jobs}")


def start_lines(cfg: Any, n_jobs: int | None) -> list[str]:
    """What a run is about to do, said before it starts: its workers and its privacy profile."""
    from dpbench.engine.survey import workers

    jobs = cfg.n_jobs if n_jobs is None else n_jobs
    source = "from -j" if n_jobs is not None else "n_jobs from the config (default 1: serial)"
    more = "" if jobs != 1 else "; -j -1 uses every core"
    lines = [f"workers: {workers(jobs)} — {source}{more}; results do not depend on it"]
    privacy = getattr(cfg, "privacy", None)
    if privacy is not None:
        meaning = {
            "paper": "each mechanism at its defaults, the papers' choices; privacy: strict runs every mechanism at "
            "the accounting its theorem proves",
            "strict": "every mechanism at the accounting its theorem proves",
        }.get(privacy, "")
        lines.append(f"privacy profile: {privacy}" + (f" ({meaning})" if meaning else ""))
    return lines


def finished_notes(run_dir: Path) -> list[str]:
    """The run's notes (:mod:`dpbench.analysis.notes`): clipping, benchmark bounds and outliers, noise-dominated
    configurations, and the units of the metrics."""
    from dpbench.analysis.notes import run_notes
    from dpbench.analysis.runs import load_run

    try:
        run = load_run(run_dir)
    except (OSError, ValueError):  # pragma: no cover - a run of another kind without the files
        return []
    return run_notes(run.trials, run.datasets, units=True)
