"""Command-line interface: ``dpbench run | plot | list`` (other commands come from ``dpbench/commands/``).

Errors a user can cause (bad config, missing data, bad arguments) are printed as one line on stderr with exit
status 2, never as a traceback.
"""

from __future__ import annotations

import functools
import importlib
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from dpbench import registry
from dpbench.contract import Hyper

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="Reproducible benchmarks of differentially private linear regression.",
)


def _print_version(value: bool) -> None:
    if value:
        from dpbench import __version__

        typer.echo(f"dpbench {__version__}")
        raise typer.Exit()


@app.callback()
def main_options(
    version: Annotated[
        bool, typer.Option("--version", "-V", callback=_print_version, is_eager=True, help="print the version and exit")
    ] = False,
) -> None:
    """Reproducible benchmarks of differentially private linear regression (`dpbench COMMAND -h` for each)."""


def user_errors(func):
    """Turn expected user errors into a one-line message and exit code 2."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from dpbench.engine.store import RunError

        try:
            return func(*args, **kwargs)
        except (ValueError, KeyError, FileNotFoundError, RunError) as err:
            message = err.args[0] if isinstance(err, KeyError) and err.args else err
            typer.echo(f"error: {message}", err=True)
            raise typer.Exit(code=2) from None

    return wrapper


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
        bool, typer.Option("--dry-run", help="print the plan (trials finished / to run, estimated time); write nothing")
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
            log=_log,
            selection=selection,
            dry_run=dry_run,
            show=typer.echo,
        )
    except (RunInterrupted, KeyboardInterrupt) as err:  # a RunInterrupted's line was logged when Ctrl-C arrived
        if isinstance(err, KeyboardInterrupt):  # before or after the trials ran (planning, assembly)
            _log("interrupted: every finished trial is kept in the run's store; run the same command to resume")
        import gc

        gc.freeze()  # exit now: the interpreter's final collection of every imported module takes ~1 s
        raise typer.Exit(code=130) from None
    if dry_run:
        return
    typer.echo(f"wrote {run_dir / 'trials.csv'}")
    if plot:
        _plot_paths(run_dir)


def _log(message: str) -> None:
    typer.echo(message, err=True)


def _plot_paths(path: Path, only: str | None = None, **overrides: Any) -> list[Path]:
    """Draw the figures of every run under ``path`` (see :func:`dpbench.analysis.figures.presets.presets`); print
    slope tables."""
    from dpbench.analysis.figures.presets import plot_presets
    from dpbench.analysis.figures.slopes import slope_table_text
    from dpbench.analysis.runs import find_runs

    runs = find_runs(path)
    if not runs:
        raise FileNotFoundError(f"no run (a folder with trials.csv) found under {path}")
    written: list[Path] = []
    for run_dir in runs:
        for drawing in plot_presets(run_dir, overrides, only):
            written.extend(drawing.files)
            for file in drawing.files:
                typer.echo(f"wrote {file}")
            if len(drawing.slopes):
                typer.echo(
                    f"log–log slopes of the {drawing.options['stat']} {drawing.options['metric']} vs "
                    f"{drawing.options['x']} ({drawing.options['out']}):"
                )
                typer.echo(slope_table_text(drawing.slopes))
    return written


def _pairs(values: list[str] | None, option: str) -> dict[str, list[str]] | None:
    """``["label=IHM", "label=AdaSSP"]`` → ``{"label": ["IHM", "AdaSSP"]}``."""
    if not values:
        return None
    out: dict[str, list[str]] = {}
    for value in values:
        column, sep, wanted = value.partition("=")
        if not sep or not column:
            raise ValueError(f"--{option} {value!r} must be COLUMN=VALUE")
        out.setdefault(column.strip(), []).append(wanted.strip())
    return out


@app.command()
@user_errors
def plot(
    path: Annotated[Path, typer.Argument(help="a run folder, or a folder holding runs (e.g. results/)")],
    preset: Annotated[
        str | None, typer.Option("--preset", "-p", help="draw only this named figure of the config's plots:")
    ] = None,
    metric: Annotated[str | None, typer.Option(help="train_mse, excess (train MSE − OLS), test_mse, ...")] = None,
    x: Annotated[str | None, typer.Option(help="column on the x axis (epsilon, data.n, hp.T, T, ...)")] = None,
    hue: Annotated[str | None, typer.Option(help="column keying the curves' colours (default: label)")] = None,
    panel: Annotated[str | None, typer.Option(help="column keying the panels (default: dataset)")] = None,
    row: Annotated[str | None, typer.Option(help="column keying the rows of a panel grid")] = None,
    style: Annotated[str | None, typer.Option(help="column keying line styles/markers")] = None,
    stat: Annotated[str | None, typer.Option(help="mean | median")] = None,
    interval: Annotated[str | None, typer.Option(help="normal | bootstrap | none (95% band)")] = None,
    logx: Annotated[bool | None, typer.Option("--logx/--linearx", help="log-scale x axis")] = None,
    logy: Annotated[bool | None, typer.Option("--logy/--lineary", help="log-scale y axis")] = None,
    refs: Annotated[bool | None, typer.Option("--refs/--no-refs", help="draw OLS and θ=0 reference lines")] = None,
    where: Annotated[list[str] | None, typer.Option(help="keep rows COLUMN=VALUE (repeatable)")] = None,
    pool: Annotated[list[str] | None, typer.Option(help="pool this column instead of splitting curves")] = None,
    baseline: Annotated[
        list[str] | None, typer.Option(help="rows COLUMN=VALUE drawn as grey reference curves (repeatable)")
    ] = None,
    fit: Annotated[
        bool | None, typer.Option("--fit/--no-fit", help="log–log slope of every curve with a 95% CI (table)")
    ] = None,
    fit_min: Annotated[float | None, typer.Option(help="fit on x ≥ this value")] = None,
    fit_max: Annotated[float | None, typer.Option(help="fit on x ≤ this value")] = None,
    fit_draw: Annotated[bool | None, typer.Option("--fit-draw", help="also draw the fitted lines")] = None,
    out: Annotated[str | None, typer.Option(help="file stem of the figure (default figure_<metric>[_vs_<x>])")] = None,
) -> None:
    """Draw every figure preset of the config (plot: / plots:) for each run under PATH (PNG + PDF).

    With options, draw one figure: the config's plot: block with the options on top (or the --preset figure)."""
    flags = dict(
        metric=metric,
        x=x,
        hue=hue,
        panel=panel,
        row=row,
        style=style,
        stat=stat,
        interval=interval,
        logx=logx,
        logy=logy,
        refs=refs,
        where=_pairs(where, "where"),
        pool=pool or None,
        baseline=_pairs(baseline, "baseline"),
        fit=True if fit_draw else fit,
        fit_min=fit_min,
        fit_max=fit_max,
        fit_draw=fit_draw,
        out=out,
    )
    check_plot_flags(flags)
    _plot_paths(path, only=preset, **flags)


def check_plot_flags(flags: dict[str, Any]) -> None:
    """Validate ``dpbench plot``'s flags as the config's ``plot:`` options are validated, but name the flag
    (``--stat``), not a config field, in the error."""
    from dpbench.config import ConfigError
    from dpbench.config.presets import parse_plot_options

    for key, value in flags.items():
        if value is None:
            continue
        try:
            parse_plot_options({key: value}, where="plot")
        except ConfigError as err:
            flag = "--logx/--linearx" if key == "logx" else "--" + key.replace("_", "-")
            raise ValueError(f"{flag}: {err.reason}") from None


LIST_TOPICS = ("mechanisms", "datasets", "analyses", "configs", "keys")


@app.command(name="list")
@user_errors
def list_components(
    what: Annotated[
        str | None, typer.Argument(help=f"one of {', '.join(LIST_TOPICS)} (default: mechanisms and datasets)")
    ] = None,
    name: Annotated[
        str | None,
        typer.Argument(help="a mechanism (its hyperparameters), a dataset (its options) or a folder of configs"),
    ] = None,
) -> None:
    """Show the registered mechanisms and datasets, the analyses, the configs (title and trials) or config keys."""
    if what is not None and what not in LIST_TOPICS:
        raise ValueError(registry.unknown_name("topic", what, LIST_TOPICS))
    registry.discover()
    if what in (None, "mechanisms") and name is None:
        typer.echo("Mechanisms")
        typer.echo(f"  {'name':<22} {'privacy':<8} {'neighbour':<12} {'spec':<12} summary")
        for info in sorted(registry.MECHANISMS.values(), key=lambda m: m.name):
            typer.echo(f"  {info.name:<22} {info.privacy_model:<8} {info.neighbour:<12} {info.spec:<12} {info.summary}")
    if what in (None, "datasets") and name is None:
        typer.echo("\nDatasets" if what is None else "Datasets")
        typer.echo(f"  {'name':<22} {'kind':<10} summary")
        for info in sorted(registry.DATASETS.values(), key=lambda d: d.name):
            typer.echo(f"  {info.name:<22} {info.kind:<10} {info.summary}")
    if what == "mechanisms" and name is not None:
        _echo_parameters(registry.get_mechanism(name).specs(), f"{name}: hyperparameters (config: hyper:)")
    if what == "datasets" and name is not None:
        _echo_parameters(registry.get_dataset(name).options(), f"{name}: loader options (config: options:)")
    if what == "analyses":
        for item in sorted(registry.ANALYSES.values(), key=lambda a: a.name):
            typer.echo(f"  {item.name:<24} {item.summary}")
    if what == "keys":
        from dpbench.config.presets import PLOT_KEYS
        from dpbench.engine.schema import TOP_LEVEL_KEYS

        sections = (("config keys", TOP_LEVEL_KEYS), ("figure options (plot:, plots:, dpbench plot)", PLOT_KEYS))
        for title, keys in sections:
            typer.echo(title)
            for key, text in keys.items():
                typer.echo(f"  {key:<22} {text}")
    if what == "configs":
        _list_configs(Path(name) if name else default_configs_folder())


def _echo_parameters(params: dict[str, Any], title: str) -> None:
    typer.echo(title)
    for key, value in params.items():  # a declaration in words: "one of 'gram', 'explicit' (default 'gram') — ..."
        typer.echo(f"  {key:<22} {value.describe() if isinstance(value, Hyper) else value}")
    if not params:
        typer.echo("  (none)")


def default_configs_folder() -> Path:
    """``configs/`` of the current folder, else the one beside the package (a clone or an editable install)."""
    here = Path("configs")
    return here if here.is_dir() else Path(__file__).resolve().parent.parent / "configs"


def _list_configs(folder: Path) -> None:
    """Every ``*.yaml`` under ``folder``: its path, title and trial count (cells × trials), or why it is invalid."""
    from dpbench.config import load_config

    if not folder.is_dir():
        raise FileNotFoundError(f"no folder of configs at {folder}")
    paths = sorted(folder.rglob("*.yaml"))
    if not paths:
        raise FileNotFoundError(f"no *.yaml config under {folder}")
    width = max(len(str(p)) for p in paths)
    for path in paths:
        try:
            cfg = load_config(path)
        except ValueError as err:
            typer.echo(f"{str(path):<{width}}  invalid: {err}")
            continue
        typer.echo(f"{str(path):<{width}}  {trial_count_text(cfg):<44} {cfg.title or cfg.name}")


def trial_count_text(cfg: Any) -> str:
    """``4 data × 3 methods × 6 ε × 500 = 36,000 trials`` (``≤`` when large datasets run fewer trials)."""
    data = getattr(cfg, "datasets", None) or getattr(cfg, "environments", [])
    methods = getattr(cfg, "mechanisms", None) or getattr(cfg, "algorithms", [])
    draws = getattr(cfg, "data_draws", None) or 1
    total = len(data) * len(methods) * len(cfg.epsilons) * cfg.trials * draws
    fewer = "≤ " if getattr(cfg, "large_trials", None) else ""
    per = f"{cfg.trials} × {draws} draws" if draws > 1 else f"{cfg.trials}"
    plural = "s" if len(methods) != 1 else ""
    return f"{len(data)} data × {len(methods)} method{plural} × {len(cfg.epsilons)} ε × {per} = {fewer}{total:,} trials"


def command_modules() -> list[str]:
    """Every module of :mod:`dpbench.commands`, and every ``commands`` module of a discovered plug-in package."""
    import pkgutil

    from dpbench import commands

    names = [
        f"dpbench.commands.{m.name}" for m in pkgutil.iter_modules(commands.__path__) if not m.name.startswith("_")
    ]
    for package_name in registry.DISCOVERED_PACKAGES:
        package = importlib.import_module(package_name)
        names += [
            m.name
            for m in pkgutil.walk_packages(package.__path__, prefix=f"{package_name}.")
            if m.name.rpartition(".")[2] == "commands"
        ]
    return names


def register_commands() -> None:
    """Attach the commands of every command module (each defines ``register(app)``); cli.py never lists them."""
    for name in command_modules():
        importlib.import_module(name).register(app)


register_commands()


def main() -> None:  # pragma: no cover - console entry point alternative
    app(sys.argv[1:])


if __name__ == "__main__":  # pragma: no cover
    main()
