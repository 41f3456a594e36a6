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


def _list_datasets(seed: int) -> None:
    from dpbench import registry
    from dpbench.data import DataUnavailableError
    from dpbench.engine.regression import prepare_dataset
    from dpbench.engine.schema import DatasetEntry

    registry.discover()
    for info in sorted(registry.DATASETS.values(), key=lambda d: d.name):
        if info.kind != "real":
            typer.echo(f"{info.name:<16} {info.kind:<10} {info.summary}")
            continue
        try:
            dataset, _ = prepare_dataset(DatasetEntry(loader=info.name, label=""), seed)
            status = f"n={dataset.n:<7} d={dataset.d:<4}"
        except DataUnavailableError:
            status = "data not available offline"
        except Exception as err:  # noqa: BLE001 - e.g. the openml loader needs options
            status = f"needs options ({type(err).__name__})"
        typer.echo(f"{info.name:<16} {status:<22} {info.summary}")
