"""The one way a figure reaches the disk: PNG and PDF at one resolution (:data:`DPI`), each written atomically.

A figure is saved to a temporary ``.<name>.<pid>.tmp`` beside its target, flushed and renamed over it, so an
interrupted save never leaves a half-written file (the runner's stale-temp cleanup removes an orphaned one).
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dpbench.data._base import replace_atomically

#: resolution of every PNG dpbench writes
DPI = 150
#: the files of one figure
SUFFIXES = (".png", ".pdf")


@contextlib.contextmanager
def atomic_target(path: Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success it replaces ``path``, on error it is removed
    (:func:`dpbench.data._base.replace_atomically`); a full disk is said in words."""
    path = Path(path)
    try:
        with replace_atomically(path) as tmp:
            yield tmp
    except OSError as err:
        if err.errno in (errno.ENOSPC, errno.EDQUOT):
            raise OSError(err.errno, f"disk full while writing {path} ({os.strerror(err.errno)}); nothing "
                                     "half-written was left — free space and draw again") from None
        raise


def save_figure(fig: Any, path: str | Path) -> Path:
    """Write ``fig`` to ``path`` (its suffix gives the format) atomically at :data:`DPI`; returns the path."""
    path = Path(path)
    with atomic_target(path) as tmp:
        fig.savefig(tmp, format=path.suffix.lstrip("."), dpi=DPI)
    return path


def save_figures(fig: Any, stem: str | Path) -> list[Path]:
    """Write ``<stem>.png`` and ``<stem>.pdf`` (:func:`save_figure`); returns the paths."""
    return [save_figure(fig, Path(f"{stem}{suffix}")) for suffix in SUFFIXES]


def write_text(path: str | Path, text: str) -> Path:
    """Write a figure's companion table (e.g. its slopes CSV) atomically; returns the path."""
    path = Path(path)
    with atomic_target(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return path
