"""The one way a figure reaches the disk: PNG and PDF at one resolution (:data:`DPI`), each written atomically.

A figure is saved to a temporary ``.<name>.<pid>.tmp`` beside its target, flushed and renamed over it, so an
interrupted save never leaves a half-written file (the runner's stale-temp cleanup removes an orphaned one).
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from dpbench.io.atomic import replace_explained, write_atomic

#: resolution of every PNG dpbench writes
DPI = 150
#: the files of one figure
SUFFIXES = (".png", ".pdf")


#: what to do when a figure cannot be written (:func:`dpbench.io.atomic.write_failure`)
ADVICE = {"full": "free space and draw again"}


def atomic_target(path: Path) -> contextlib.AbstractContextManager[Path]:
    """A temporary path beside ``path``; on success it replaces ``path``, on error it is removed
    (:func:`dpbench.io.atomic.replace_explained`); a full disk is said in words."""
    return replace_explained(path, ADVICE, OSError)


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
    return write_atomic(path, text, ADVICE)
