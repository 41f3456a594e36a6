"""``dpbench list [TOPIC [NAME]]``: what is registered (mechanisms, datasets, bandit algorithms, analyses), the
configs, config keys."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from dpbench import registry
from dpbench.commands._common import default_configs_folder, user_errors
from dpbench.contract import Hyper

LIST_TOPICS = ("mechanisms", "datasets", "algorithms", "analyses", "figures", "configs", "keys")


def register(app: typer.Typer) -> None:
    @app.command(name="list")
    @user_errors
    def list_components(
        what: Annotated[
            str | None, typer.Argument(help=f"one of {', '.join(LIST_TOPICS)} (default: mechanisms and datasets)")
        ] = None,
        name: Annotated[
            str | None,
            typer.Argument(
                help="a mechanism or bandit algorithm (its hyperparameters), a dataset (its options) or a folder of "
                "configs"
            ),
        ] = None,
    ) -> None:
        """Show the registered mechanisms and datasets, the analyses, the configs (title and trials) or config keys."""
        if what is not None and what not in LIST_TOPICS:
            raise ValueError(registry.unknown_name("topic", what, LIST_TOPICS))
        registry.discover()
        if what in (None, "mechanisms") and name is None:
            typer.echo("Mechanisms")
            typer.echo(f"  {'name':<22} {'privacy':<8} {'neighbour':<12} {'spec':<12} {'intervals':<20} summary")
            for info in sorted(registry.MECHANISMS.values(), key=lambda m: m.name):
                ci = ",".join(info.intervals) or "-"  # DPLinearRegression(intervals=True) and conf_int()
                typer.echo(
                    f"  {info.name:<22} {info.privacy_model:<8} {info.neighbour:<12} {info.spec:<12} {ci:<20} "
                    f"{info.summary}"
                )
        if what in (None, "datasets") and name is None:
            typer.echo("\nDatasets" if what is None else "Datasets")
            typer.echo(f"  {'name':<22} {'kind':<10} summary")
            for info in sorted(registry.DATASETS.values(), key=lambda d: d.name):
                typer.echo(f"  {info.name:<22} {info.kind:<10} {info.summary}")
        if what == "algorithms":
            _list_algorithms(name)
        if what == "mechanisms" and name is not None:
            _echo_parameters(registry.get_mechanism(name).specs(), f"{name}: hyperparameters (config: hyper:)")
        if what == "datasets" and name is not None:
            _echo_parameters(
                registry.loader_specs(registry.get_dataset(name)), f"{name}: loader options (config: options:)"
            )
        if what == "analyses" and name is not None:
            _echo_parameters(dict(registry.get_analysis(name).options or {}), f"{name}: options (-o key=value)")
        if what == "analyses" and name is None:
            for item in sorted(registry.ANALYSES.values(), key=lambda a: a.name):
                typer.echo(f"  {item.name:<24} {item.summary}")
        if what == "figures":
            _list_figure_kinds(name)
        if what == "keys":
            from dpbench.analysis.figures.kinds import DEFAULT_KIND, get_figure_kind
            from dpbench.config.presets import PRESET_KEYS
            from dpbench.engine.schema import TOP_LEVEL_KEYS

            typer.echo("config keys")
            for key, text in TOP_LEVEL_KEYS.items():
                typer.echo(f"  {key:<22} {text}")
            _echo_parameters({**PRESET_KEYS, **get_figure_kind(DEFAULT_KIND).options},
                             f"figure options (plot:, plots:, dpbench plot; kind {DEFAULT_KIND})")  # fmt: skip
        if what == "configs":
            _list_configs(Path(name) if name else default_configs_folder())


def _list_figure_kinds(name: str | None) -> None:
    """Every figure kind (what it reads, its summary), or one kind's options with their declarations."""
    from dpbench.analysis.figures.kinds import FIGURE_KINDS, get_figure_kind

    if name is not None:
        kind = get_figure_kind(name)
        _echo_parameters(dict(kind.options), f"{name} (reads {kind.reads}): options (config: plot: {{kind: {name}}})")
        return
    typer.echo(f"  {'name':<24} {'reads':<22} summary")
    for kind in sorted(FIGURE_KINDS.values(), key=lambda k: k.name):
        typer.echo(f"  {kind.name:<24} {kind.reads:<22} {kind.summary}")


def _list_algorithms(name: str | None) -> None:
    """The bandit algorithms (``kind: bandit`` configs' ``algorithms:``), or one algorithm's hyperparameters."""
    from dpbench.bandits.simulator import ALGORITHMS, get_algorithm

    if name is not None:
        _echo_parameters(get_algorithm(name).specs(), f"{name}: hyperparameters (config: hyper:)")
        return
    typer.echo("Bandit algorithms")
    typer.echo(f"  {'name':<24} {'privacy':<8} {'spec':<30} summary")
    for info in sorted(ALGORITHMS.values(), key=lambda a: a.name):
        typer.echo(f"  {info.name:<24} {info.privacy_model:<8} {info.spec:<30} {info.summary}")


def _echo_parameters(params: dict[str, Any], title: str) -> None:
    typer.echo(title)
    for key, value in params.items():  # a declaration in words: "one of 'gram', 'explicit' (default 'gram') — ..."
        typer.echo(f"  {key:<22} {value.describe() if isinstance(value, Hyper) else value}")
    if not params:
        typer.echo("  (none)")


def _list_configs(folder: Path) -> None:
    """Every ``*.yaml`` under ``folder``: its name (what ``dpbench run NAME`` takes), trial count (cells × trials)
    and title, or why it is invalid."""
    from dpbench.config import load_config

    if not folder.is_dir():
        raise FileNotFoundError(f"no folder of configs at {folder}")
    paths = sorted(folder.rglob("*.yaml"))
    if not paths:
        raise FileNotFoundError(f"no *.yaml config under {folder}")
    typer.echo(f"configs in {folder} (run one by name, e.g. dpbench run {config_name(paths[0], folder)}):")
    names = [config_name(path, folder) for path in paths]
    width = max(len(name) for name in names)
    for path, name in zip(paths, names, strict=True):
        try:
            cfg = load_config(path)
        except ValueError as err:
            typer.echo(f"{name:<{width}}  invalid: {err}")
            continue
        typer.echo(f"{name:<{width}}  {trial_count_text(cfg):<44} {cfg.title or cfg.name}")


def config_name(path: Path, folder: Path) -> str:
    """``ihm/ihm_fig02`` for ``<folder>/ihm/ihm_fig02.yaml``: the name ``dpbench run`` resolves."""
    return path.relative_to(folder).with_suffix("").as_posix()


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
