"""Atomic, explained file writes: the one way dpbench replaces a file (run store, tables, figures, reports).

A file is written to a hidden temporary ``.<name>.<pid>.tmp`` beside its target, fsynced and renamed over it, so a
reader or a crash sees the old or the complete new file, never half of one (the runner's stale-temp cleanup removes
an orphan a killed process left). A failure the caller gives advice for (a full disk, a folder that may not be
written) is raised as one sentence saying what happened and what to do. A leaf: imports nothing from dpbench.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

#: the kinds of failed write a caller can give advice for, by errno: the disk (or quota) is full; the file may not
#: be written (permission, read-only file system)
WRITE_FAILURES = {
    errno.ENOSPC: "full",
    errno.EDQUOT: "full",
    errno.EACCES: "denied",
    errno.EPERM: "denied",
    errno.EROFS: "denied",
}

#: how a caller turns (errno, words) into the exception it raises
ErrorFactory = Callable[[int, str], BaseException]


@contextlib.contextmanager
def replace_atomically(path: Path) -> Iterator[Path]:
    """Yield a hidden temporary path ``.<name>.<pid>.tmp`` beside ``path``; when the block succeeds the file is
    fsynced and renamed over ``path``, when it fails the temporary file is removed and the error re-raised."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        yield tmp
        with open(tmp, "rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def write_failure(err: OSError, path: Path, advice: Mapping[str, str]) -> str | None:
    """One line for a write of ``path`` that failed with ``err``, ending in the caller's ``advice`` for its kind
    (:data:`WRITE_FAILURES`: ``"full"``, ``"denied"``); None for an error of a kind ``advice`` does not cover."""
    kind = WRITE_FAILURES.get(err.errno or 0)
    if kind not in advice:
        return None
    reason = os.strerror(err.errno or 0)
    if kind == "full":
        return f"disk full while writing {path} ({reason}); nothing half-written was left — {advice[kind]}"
    return f"cannot write {path}: {reason}; {advice[kind]}"


@contextlib.contextmanager
def replace_explained(path: Path, advice: Mapping[str, str], error: ErrorFactory = OSError) -> Iterator[Path]:
    """:func:`replace_atomically`, with a failure that ``advice`` covers raised as ``error(errno, words)``
    (:func:`write_failure`); any other error is re-raised as it is."""
    path = Path(path)
    try:
        with replace_atomically(path) as tmp:
            yield tmp
    except OSError as err:
        words = write_failure(err, path, advice)
        if words is None:
            raise
        raise error(err.errno or 0, words) from err


def write_atomic(
    path: str | Path, data: str | bytes, advice: Mapping[str, str] | None = None, error: ErrorFactory = OSError
) -> Path:
    """Write ``data`` (text as UTF-8) to ``path`` atomically (:func:`replace_explained` with ``advice``, none by
    default); returns the path."""
    path = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    with replace_explained(path, advice or {}, error) as tmp, open(tmp, "wb") as handle:
        handle.write(payload)
    return path
