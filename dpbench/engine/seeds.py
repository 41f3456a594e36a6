"""Seeds of the engine: every random stream is keyed by coordinates, never by worker or task order.

``stable_hash`` turns an entry's key (loader + options, mechanism + hyperparameters, ...) into a 32-bit integer that
is the same in every process and Python version; experiment kinds build their ``numpy.random.SeedSequence`` entropy
from these hashes and integer coordinates (trial, data draw) — values, never positions in the config: ε enters by
:func:`value_hash` of its value, so inserting an ε (or reordering entries) leaves every other trial's noise as it
was, and a stored trial is the same whichever config asks for it. Results do not depend on ``n_jobs``.
"""

from __future__ import annotations

import zlib


def stable_hash(text: str) -> int:
    """A 32-bit hash that is the same in every process and Python version (unlike ``hash``)."""
    return zlib.crc32(text.encode("utf-8"))


def value_hash(value: float) -> int:
    """A 32-bit hash of a number's value (``repr`` of the float: 0.5, 5e-1 and 0.50 agree; ``inf`` is ``'inf'``)."""
    return stable_hash(repr(float(value)))
