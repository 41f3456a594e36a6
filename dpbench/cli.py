"""Command-line interface: the face. ``app``, ``--version``, and the commands of ``dpbench/commands/`` (one module
each, every module defines ``register(app)``) and of discovered plug-in packages.

Errors a user can cause (bad config, missing data, bad arguments) are printed as one line on stderr with exit
status 2, never as a traceback (:func:`dpbench.commands._common.user_errors`).
"""

from __future__ import annotations

import importlib
import sys
from typing import Annotated

import typer

from dpbench import registry
from dpbench.commands._common import user_errors

__all__ = ["app", "main", "user_errors"]  # user_errors: plug-in commands import it from here

app = typer.Typer(
    add_completion=True,  # --install-completion / --show-completion (bash, zsh, fish, PowerShell)
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="Reproducible benchmarks of differentially private linear regression.",
)

FIRST = ("run", "plot", "report", "leaderboard", "analyze", "listing")  # the order of `dpbench -h`; the rest follow


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


def command_modules() -> list[str]:
    """Every module of :mod:`dpbench.commands` (``FIRST`` first), and every ``commands`` module of a discovered
    plug-in package."""
    import pkgutil

    from dpbench import commands

    own = [m.name for m in pkgutil.iter_modules(commands.__path__) if not m.name.startswith("_")]
    own.sort(key=lambda name: (FIRST.index(name) if name in FIRST else len(FIRST), name))
    names = [f"dpbench.commands.{name}" for name in own]
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
