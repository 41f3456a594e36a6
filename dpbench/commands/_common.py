"""What every command shares: user errors as one line with exit status 2, and the progress log on stderr."""

from __future__ import annotations

import functools
from typing import Any

import typer


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


def log(message: str) -> None:
    """A progress or status line, on stderr (stdout keeps what a command prints as its result)."""
    typer.echo(message, err=True)
