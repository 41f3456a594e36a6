"""``dpbench leaderboard RUN…``: rank the mechanisms of runs across all their datasets
(:mod:`dpbench.analysis.leaderboard`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    from dpbench.commands._common import check_writable, user_errors

    @app.command()
    @user_errors
    def leaderboard(
        runs: Annotated[list[Path], typer.Argument(help="run folders (or folders holding runs) to rank together")],
        out: Annotated[
            Path | None,
            typer.Option(
                "--out", "--out-dir", help="output folder (default: <first run>/leaderboard), relative to here"
            ),
        ] = None,
        epsilon: Annotated[
            float | None, typer.Option("--epsilon", "-e", help="print only this ε (the nearest in the runs)")
        ] = None,
        bootstrap: Annotated[int, typer.Option(help="bootstrap replicates for the intervals")] = 1000,
        seed: Annotated[int, typer.Option(help="bootstrap seed")] = 0,
    ) -> None:
        """Normalised excess risk (train MSE − OLS)/(‖Y‖²/n − OLS) per ε: median with CI, mean rank with a bootstrap
        CI, win/tie/loss matrix and performance profiles (PNG + PDF), written to OUT."""
        from dpbench.analysis.leaderboard import build_leaderboard, summary_markdown, write_leaderboard
        from dpbench.analysis.report import write_leaderboard_page

        if bootstrap < 10:
            raise ValueError(f"--bootstrap must be ≥ 10, got {bootstrap}")
        folder = out or Path(runs[0]) / "leaderboard"
        check_writable(folder)
        board = build_leaderboard(runs, replicates=bootstrap, seed=seed)
        shown = board.epsilons
        if epsilon is not None:
            shown = [min(board.epsilons, key=lambda e: abs(e - epsilon))]
        for eps in shown:
            typer.echo(summary_markdown(board, eps) + "\n")
        for note in board.notes:
            typer.echo(f"note: {note}")
        for path in [*write_leaderboard(board, folder), write_leaderboard_page(board, folder)]:
            typer.echo(f"wrote {path}")
