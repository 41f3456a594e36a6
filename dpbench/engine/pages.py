"""Transparent-huge-page advice while a task runs (pure performance: no value depends on it).

numpy asks the kernel to back every large array by transparent huge pages (``madvise(MADV_HUGEPAGE)`` on each
allocation of ≥ 4 MiB). Where THP ``defrag`` is ``madvise`` (this machine's setting, and a common default) the
first touch of such an array then compacts memory synchronously to find free 2 MiB pages, which on a fragmented
host costs more system time than the 4 KiB faults it saves: one E1 data draw at N = 2¹⁶, d = 1024 (≈ 2 GB of fresh
arrays: data, XV, two ε of tree draws) spent 1.9–4.5 s in the kernel with the advice and 0.9–1.1 s without it, for
the same user time (docs/ftrl.md, Speed). Tasks therefore run without the advice, unless the user chose numpy's
behaviour explicitly with the environment variable ``NUMPY_MADVISE_HUGEPAGE`` (0 or 1).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

#: numpy's own switch for the advice (process-wide; ``None`` if this numpy has none)
_SET_ADVICE = getattr((getattr(np, "_core", None) or np.core).multiarray, "_set_madvise_hugepage", None)


def advice_wanted(environ: dict[str, str] | os._Environ = os.environ) -> bool | None:
    """The huge-page advice tasks should run with: the user's ``NUMPY_MADVISE_HUGEPAGE`` when set (None: leave
    numpy as it is), else False."""
    return None if "NUMPY_MADVISE_HUGEPAGE" in environ else False


@contextmanager
def huge_page_advice(enabled: bool | None) -> Iterator[None]:
    """Run the body with numpy's huge-page advice ``enabled`` (None or no switch: unchanged), then restore it."""
    if enabled is None or _SET_ADVICE is None:
        yield
        return
    previous = _SET_ADVICE(enabled)
    try:
        yield
    finally:
        _SET_ADVICE(previous)
