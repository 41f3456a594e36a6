"""Seeds of the engine: every random stream is keyed by coordinates, never by worker or task order.

``stable_hash`` turns an entry's key (loader + options, mechanism + hyperparameters, ...) into a 32-bit integer that
is the same in every process and Python version; experiment kinds build their ``numpy.random.SeedSequence`` entropy
from these hashes and integer coordinates (ε index, trial, data draw), so results do not depend on ``n_jobs``.
"""

from __future__ import annotations

import zlib


def stable_hash(text: str) -> int:
    """A 32-bit hash that is the same in every process and Python version (unlike ``hash``)."""
    return zlib.crc32(text.encode("utf-8"))
