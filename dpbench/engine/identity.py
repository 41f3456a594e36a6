"""What a trial is: its slot (coordinates by value), its code version and the data it read — the store's key.

A kind's task lists its trials (:class:`Trial`). A trial's **slot** is the sha256 of its canonical identity by value:
for a regression trial the dataset entry (loader, options, label), the mechanism (name and resolved
hyperparameters), the ε *value*, the δ rule, the data draw, the trial index, the base seed, the metrics and
``common_random_numbers``. Its **code** is the dpbench version and the source digest of each module that computes it
(the mechanism's, the loader's). Its **data** is the content digest (sha256) of every file its load read, recorded
while it ran (:func:`dpbench.data._base.note_read`). The trial key is sha256(slot, code, data): a stored trial is
reused when a planned trial has its slot and its code, and every file it read still has the recorded digest.

Nothing here depends on a position in the config (the ε index, the order of entries): growing, shrinking or
reordering a config keeps every finished trial's key.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import inspect
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dpbench import __version__

#: hex digits of a module's source digest kept in a code version
SOURCE_DIGITS = 16


@dataclass(frozen=True, slots=True)
class Trial:
    """One planned trial as the engine sees it.

    ``slot``: sha256 of its identity by value; ``code``: (part, version) pairs, e.g. ``("mechanism adassp",
    "<source digest>")``; ``group``: (dataset, mechanism, ε) in words (plan tables, reasons); ``keys``: its planned row
    keys over ``Plan.key_columns`` (one per row it returns); ``fixed``: columns whose values are positions in the
    current config (the ε index, the curve label), set at assembly; ``handle``: the task's own reference to it
    (given back to ``task.subset``); ``aliases``: other names of its dataset and mechanism (the loader, the
    registered mechanism), which ``-d/-m`` also accept.
    """

    slot: str
    code: tuple[tuple[str, str], ...]
    group: tuple[str, str, str]
    keys: tuple[tuple, ...]
    fixed: tuple[tuple[str, Any], ...] = ()
    handle: Any = None
    aliases: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())


def canonical(value: Any) -> str:
    """Canonical JSON text of an identity (sorted keys; floats by ``repr``, so 0.1 and 1e-1 agree)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def slot_of(identity: dict[str, Any]) -> str:
    """The slot of a trial: sha256 of its canonical identity."""
    return sha256(canonical(identity))


def trial_key(slot: str, code: Iterable[Iterable[str]], data: dict[str, str | None]) -> str:
    """sha256(slot, code version, content digests of the files read): what a stored trial is."""
    return sha256(f"{slot}\n{_versions_digest(tuple(map(tuple, code)), tuple(sorted(data.items())))}")


@functools.lru_cache(maxsize=1024)
def _versions_digest(code: tuple[tuple[str, ...], ...], data: tuple[tuple[str, str | None], ...]) -> str:
    """Digest of a (code version, files read) pair: shared by every trial of a block, computed once."""
    return sha256(canonical([[list(part) for part in code], [list(item) for item in data]]))


@functools.lru_cache(maxsize=256)
def _module_digest(module_name: str) -> str:
    module = importlib.import_module(module_name)
    try:
        source = Path(inspect.getsourcefile(module) or "").read_bytes()
    except (OSError, TypeError):  # a module without source (built in, frozen): its name and version stand for it
        source = f"{module_name} {getattr(module, '__version__', '')}".encode()
    return hashlib.sha256(source).hexdigest()[:SOURCE_DIGITS]


def source_digest(obj: Any) -> str:
    """Digest of the source file of the module defining ``obj`` (a function or class)."""
    return _module_digest(getattr(obj, "__module__", None) or "builtins")


def code_version(*parts: tuple[str, Any]) -> tuple[tuple[str, str], ...]:
    """``(("dpbench", version), (part, source digest of obj), ...)`` for ``(part, obj)`` pairs such as
    ``("mechanism adassp", fit)`` (a part is "<what> <name>": messages say "code of mechanism 'adassp' changed")."""
    return (("dpbench", __version__),) + tuple((part, source_digest(obj)) for part, obj in sorted(parts))


def contiguous_runs(values: Iterable[int]) -> list[tuple[int, int]]:
    """Sorted integers as [start, stop) runs: {0, 1, 2, 5} → [(0, 3), (5, 6)]."""
    runs: list[tuple[int, int]] = []
    for value in sorted(set(values)):
        if runs and runs[-1][1] == value:
            runs[-1] = (runs[-1][0], value + 1)
        else:
            runs.append((value, value + 1))
    return runs


def cell_runs(handles: Iterable[tuple[int, int]]) -> list[tuple[tuple[int, ...], int, int]]:
    """(cell index, trial) pairs → blocks (cells, start, stop) holding exactly those pairs: each cell's trials cut in
    contiguous runs, and cells with the same run together (one task, one data load): a kind's ``task.subset``."""
    per_cell: dict[int, list[int]] = {}
    for cell, trial in handles:
        per_cell.setdefault(cell, []).append(trial)
    blocks: dict[tuple[int, int], list[int]] = {}
    for cell in sorted(per_cell):
        for start, stop in contiguous_runs(per_cell[cell]):
            blocks.setdefault((start, stop), []).append(cell)
    return [(tuple(cells), start, stop) for (start, stop), cells in sorted(blocks.items())]
