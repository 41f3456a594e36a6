"""``dpbench datasets``: list the dataset loaders with n, d and availability."""

from __future__ import annotations

from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    @app.command()
    def datasets(
        seed: Annotated[int, typer.Option(help="config seed whose splits the figures use")] = 50,
    ) -> None:
        """Show every real dataset loader (n, d, availability)."""
        _list_datasets(seed)


def dataset_status(name: str, seed: int) -> str:
    """``n=… d=…`` for a loadable real dataset; otherwise what is missing, in words (never an exception's name)."""
    from dpbench.data import DataUnavailableError
    from dpbench.engine.regression import prepare_dataset
    from dpbench.engine.schema import DatasetEntry

    try:
        prepared = prepare_dataset(DatasetEntry(loader=name, label=""), seed)
    except DataUnavailableError as err:
        return "needs an optional package" if "pip install" in str(err) else "data not available offline"
    except (ValueError, TypeError):  # a loader of the user's own data (csv, openml) without its options
        return "your data: needs options"
    dataset = prepared[0]
    return f"n={dataset.n:<7} d={dataset.d:<4}"


def _list_datasets(seed: int) -> None:
    from dpbench import registry

    registry.discover()
    for info in sorted(registry.DATASETS.values(), key=lambda d: d.name):
        status = dataset_status(info.name, seed) if info.kind == "real" else info.kind
        typer.echo(f"{info.name:<18} {status:<26} {info.summary}")
    typer.echo(
        "\nYour own data: loader csv (docs/byo_tutorial.md) or openml; `dpbench list datasets csv` shows their options."
    )
