"""``dpbench plot RUN``: draw the figure presets of every run under a folder, or one view given by flags."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from dpbench.commands._common import check_writable, user_errors


def register(app: typer.Typer) -> None:
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
        resamples: Annotated[int | None, typer.Option(help="bootstrap resamples (--interval bootstrap)")] = None,
        seed: Annotated[
            int | None, typer.Option(help="bootstrap seed: the same run always gives the same bands")
        ] = None,
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
        out: Annotated[
            str | None,
            typer.Option(help="file stem of the figure (default figure_<metric>[_vs_<x>]); a path is from here"),
        ] = None,
        out_dir: Annotated[
            Path | None,
            typer.Option(help="folder for the figures (default: each run's folder), relative to where you are"),
        ] = None,
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
            resamples=resamples,
            seed=seed,
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
            out=None if out is None else out_stem(out),
        )
        check_plot_flags(flags)
        plot_paths(path, only=preset, out_dir=out_dir, **flags)


def out_stem(out: str) -> str:
    """``--out``: a bare stem is written in the output folder; a stem with a folder part is taken from the current
    folder (made absolute, so it is not read from the run folder)."""
    return str(Path(out).resolve()) if Path(out).parent != Path(".") else out


def plot_paths(path: Path, only: str | None = None, out_dir: Path | None = None, **overrides: Any) -> list[Path]:
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
        folder = None if out_dir is None else (out_dir if len(runs) == 1 else out_dir / run_dir.name)
        check_writable(folder or run_dir)
        for drawing in plot_presets(run_dir, overrides, only, out_dir=folder):
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
