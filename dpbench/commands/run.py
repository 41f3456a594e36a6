"""``dpbench run CONFIG``: run the trials a config's run folder lacks, then write its trials.csv."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from dpbench.commands._common import log, user_errors


def register(app: typer.Typer) -> None:
    @app.command()
    @user_errors
    def run(
        config: Annotated[Path, typer.Argument(help="experiment YAML (see configs/)")],
        trials: Annotated[int | None, typer.Option(help="override the config's number of trials")] = None,
        n_jobs: Annotated[int | None, typer.Option("--n-jobs", "-j", help="parallel workers (-1 = all cores)")] = None,
        output_dir: Annotated[str | None, typer.Option(help="parent folder of the run (default: config's)")] = None,
        fresh: Annotated[
            bool, typer.Option(help="empty the run's trial store first (every trial is computed again)")
        ] = False,
        dry_run: Annotated[
            bool,
            typer.Option("--dry-run", help="print the plan (trials finished / to run, estimated time); write nothing"),
        ] = False,
        dataset: Annotated[
            list[str] | None, typer.Option("--dataset", "-d", help="run only this dataset (label; repeatable)")
        ] = None,
        mechanism: Annotated[
            list[str] | None, typer.Option("--mechanism", "-m", help="run only this mechanism (label; repeatable)")
        ] = None,
        epsilon: Annotated[
            list[float] | None, typer.Option("--epsilon", "-e", help="run only this ε (value; repeatable)")
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

        cfg = load_config(config, trials=trials, output_dir=output_dir, backend=backend, scheduler=scheduler)
        if trials is not None and getattr(cfg, "large_trials", None) is not None:
            cfg.large_trials = min(cfg.large_trials, trials)
        selection = Selection(tuple(dataset or ()), tuple(mechanism or ()), tuple(epsilon or ()))
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
        if plot:
            plot_paths(run_dir)
