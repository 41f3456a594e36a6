"""``dpbench datasets``: list the dataset loaders with n, d and availability; ``--table2`` compares to the paper."""

from __future__ import annotations

from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    @app.command()
    def datasets(
        table2: Annotated[bool, typer.Option(help="recompute the IHM paper's Table 2 and compare (004 §5.4)")] = False,
        seed: Annotated[int, typer.Option(help="config seed whose splits the figures use")] = 50,
        resamples: Annotated[int, typer.Option(help="random splits per R-type dataset for split variation")] = 10,
        output: Annotated[str | None, typer.Option(help="also write the comparison as CSV")] = None,
    ) -> None:
        """Show every real dataset loader (n, d, availability), or the Table 2 comparison."""
        if table2:
            from dpbench.table2 import compare_table2, format_comparison

            table, missing = compare_table2(seed=seed, resamples=resamples, log=lambda m: typer.echo(m, err=True))
            typer.echo(format_comparison(table))
            for key, reason in missing.items():
                typer.echo(f"{key}: not available offline ({reason})")
            if output:
                table.to_csv(output, index=False)
                typer.echo(f"wrote {output}")
            return
        _list_datasets(seed)


def _list_datasets(seed: int) -> None:
    from dpbench import registry
    from dpbench.config import DatasetEntry
    from dpbench.data import DataUnavailableError
    from dpbench.runner import prepare_dataset

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
