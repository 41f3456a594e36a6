"""What every command shares: user errors as one line with exit status 2 (a folder it cannot write included), the
progress log on stderr, the configs shipped with dpbench and a config named by its name."""

from __future__ import annotations

import errno
import functools
from pathlib import Path
from typing import Any

import typer

#: errors of a write that a user can fix by choosing another folder
UNWRITABLE = {errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOTDIR, errno.EEXIST, errno.ENOSPC, errno.EDQUOT}
#: the option that writes elsewhere, per command (the default for every other writing command: --out-dir)
OUT_OPTION = {"run": "--output-dir"}


def user_errors(func):
    """Turn expected user errors into a one-line message and exit code 2; a folder that cannot be written says
    which folder and the option that writes elsewhere (never the temporary file's name or a traceback)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from dpbench.engine.store import RunError

        try:
            return func(*args, **kwargs)
        except (ValueError, KeyError, FileNotFoundError, RunError) as err:
            message = err.args[0] if isinstance(err, KeyError) and err.args else err
            if isinstance(err, OSError) and err.strerror and err.filename:  # the system's, not one of ours
                message = f"{err.filename}: {err.strerror}"
            typer.echo(f"error: {message}", err=True)
            raise typer.Exit(code=2) from None
        except OSError as err:
            if err.errno not in UNWRITABLE:
                raise
            option = OUT_OPTION.get(func.__name__, "--out-dir")
            typer.echo(f"error: {unwritable_text(err)}; write elsewhere with {option} DIR", err=True)
            raise typer.Exit(code=2) from None

    return wrapper


def unwritable_text(err: OSError) -> str:
    """``cannot write in results/x (Permission denied)``: the folder of the failed write (the target's, for a
    temporary ``.<name>.<pid>.tmp`` beside it) and the system's reason."""
    import os

    reason = os.strerror(err.errno or 0)
    if not err.filename:
        return f"cannot write ({reason})"
    path = Path(str(err.filename))
    if err.errno == errno.ENOTDIR:
        return f"cannot write in {path}: a part of that path is a file, not a folder"
    folder = path if path.is_dir() else path.parent
    return f"cannot write in {folder} ({reason})"


def check_writable(folder: Path) -> None:
    """Make ``folder`` and write (then remove) a probe file in it the way every output is written (atomically), so
    a folder that cannot be written fails before any work or output, in :func:`user_errors`' one line."""
    import os

    from dpbench.io import atomic

    folder.mkdir(parents=True, exist_ok=True)
    probe = folder / f".dpbench_write_check.{os.getpid()}"
    with atomic.replace_atomically(probe) as tmp:
        tmp.write_text("", encoding="utf-8")
    probe.unlink(missing_ok=True)


def log(message: str) -> None:
    """A progress or status line, on stderr (stdout keeps what a command prints as its result)."""
    typer.echo(message, err=True)


def shipped_configs_folder() -> Path:
    """The configs shipped with dpbench: ``dpbench/_configs/`` of an installed wheel (setup.py copies them), else
    ``configs/`` of the clone (an editable install or a checkout on PYTHONPATH)."""
    package = Path(__file__).resolve().parents[1]
    shipped = package / "_configs"
    return shipped if shipped.is_dir() else package.parent / "configs"


def default_configs_folder() -> Path:
    """``configs/`` of the current folder, else the configs shipped with dpbench."""
    here = Path("configs")
    return here if here.is_dir() else shipped_configs_folder()


def resolve_config(name: str) -> Path:
    """A config argument as a path: an existing file or folder as given; else a shipped config by its name
    (``ihm_vs_adassp``, ``ihm/ihm_fig02``, with or without ``.yaml``); else the path as given (its loader says it is
    missing)."""
    given = Path(name).expanduser()
    if given.exists():
        return given
    stem = name[:-5] if name.endswith(".yaml") else name
    for folder in dict.fromkeys((default_configs_folder(), shipped_configs_folder())):
        direct = folder / f"{stem}.yaml"
        if direct.is_file():
            return direct
        by_name = sorted(folder.rglob(f"{Path(stem).name}.yaml")) if "/" not in stem else []
        if len(by_name) == 1:
            return by_name[0]
    return given
