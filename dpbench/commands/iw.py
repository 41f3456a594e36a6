"""``dpbench iw-e1``: spec 000 §7.3 E1 (population information matrices; no data, no noise)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    @app.command("iw-e1")
    def iw_e1(
        out: Annotated[Path, typer.Option(help="output folder")] = Path("results/iw_e1"),
    ) -> None:
        """E1 of spec 000 §7.3: PoP_IW vs PoP_SSP and the W interpolation vs T (table, comparison, figure)."""
        from dpbench.iw_e1 import run_e1

        for kind, path in run_e1(out).items():
            typer.echo(f"wrote {kind}: {path}")
