"""The grid every experiment kind runs, in the engine's terms (knows no kind): a plug-in **entry** of the config (a
mechanism, a bandit algorithm), a **cell** (an entry at one ε), the **context** of config values that enter every
trial's identity, a cell's identity by value, and the trials of a task of cells (:class:`CellTask`).

A kind adds only what is its own: what a cell runs on (a dataset draw, an environment), the identity of that place,
its row keys and how a trial is computed. The regression kind (:mod:`dpbench.engine.regression`) and the bandit kind
(:mod:`dpbench.bandits.kind`) are both built from these pieces; their identities are the same dictionaries as before
the pieces were shared (every stored trial keeps its key).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from dpbench.config.fields import entry_key
from dpbench.engine.identity import Trial, canonical, cell_runs, sha256


@dataclass(frozen=True)
class Entry:
    """One concrete plug-in instance of a grid: its registry ``name`` (a mechanism, a bandit algorithm), the curve
    ``label`` and the hyperparameters as the config resolved them, sorted by name."""

    name: str
    label: str
    hyper: tuple[tuple[str, Any], ...] = ()

    @property
    def key(self) -> str:
        """Unique, stable identifier (trial seeds and shard names derive from it, so it never changes)."""
        return entry_key(self.name, self.hyper)

    def as_dict(self, role: str, hyper: bool = True) -> dict[str, Any]:
        """``{role: name, label, hyper}`` as the resolved config writes it (``hyper=False``: without it)."""
        out = {role: self.name, "label": self.label}
        return {**out, "hyper": dict(self.hyper)} if hyper else out


def grid_entries(
    name: str, label: str, combos: Iterable[Mapping[str, Any]], resolve: Callable[[Mapping[str, Any]], Mapping]
) -> list[Entry]:
    """One :class:`Entry` per grid combination: the label ``label (k=v, ...)`` of the swept values, the
    hyperparameters ``resolve(combo)`` (the kind's checked values of the entry merged with the combination)."""
    entries = []
    for combo in combos:
        suffix = ", ".join(f"{k}={v}" for k, v in combo.items())
        entries.append(Entry(name, f"{label} ({suffix})" if suffix else label, tuple(sorted(resolve(combo).items()))))
    return entries


@dataclass(frozen=True)
class Cell:
    """One (entry, ε) cell of the grid; ``eps_index`` is ε's position in the current config (set at assembly)."""

    entry: Entry
    eps_index: int
    epsilon: float


@dataclass(frozen=True)
class TrialContext:
    """The config values that enter every trial's identity besides its place and cell (the seed, δ, ...), as sorted
    (name, value) pairs of JSON-able, hashable values."""

    values: tuple[tuple[str, Any], ...]

    @classmethod
    def of(cls, **values: Any) -> TrialContext:
        return cls(tuple(sorted(values.items())))


def cell_slot(
    kind: str,
    place: Mapping[str, Any],
    role: str,
    name: str,
    hyper: Mapping[str, Any],
    epsilon: float,
    context: TrialContext,
) -> str:
    """Digest of a cell's identity by value: ``{"kind", **place, role: {"name", "hyper"}, "epsilon", **context}``
    (``place``: where the cell runs, e.g. ``{"dataset": {...}, "draw": r}``; ``hyper``: every resolved value, the
    defaults included). A trial's slot is the digest of this and its index (:meth:`CellTask.trials`)."""
    identity = {
        "kind": kind,
        **place,
        role: {"name": name, "hyper": dict(hyper)},
        "epsilon": float(epsilon),
        **dict(context.values),
    }
    return sha256(canonical(identity))


class CellTask:
    """What every kind's task shares: ``cells`` run for trials [``trial_start``, ``trial_stop``) under ``context``.

    A kind's task (a frozen dataclass with these fields) says where it runs (:meth:`place_name`), a cell's identity
    and code version (:meth:`identity`), a trial's row keys (:meth:`row_keys`) and the other names ``-d/-m`` accept
    (:meth:`aliases`); the trials, their keys and the subset a resumed run still needs are the same for every kind.
    """

    cells: tuple[Cell, ...]
    trial_start: int
    trial_stop: int
    context: TrialContext | None

    def place_name(self) -> str:
        raise NotImplementedError

    def identity(self, cell: Cell) -> tuple[str, tuple[tuple[str, str], ...]]:
        raise NotImplementedError

    def row_keys(self, cell: Cell, trial: int) -> tuple[tuple, ...]:
        raise NotImplementedError

    def aliases(self, cell: Cell) -> tuple[tuple[str, ...], tuple[str, ...]]:
        return ((), ())

    def trials(self) -> list[Trial]:
        """Every trial of the task (cell-major), identified by value: slot = sha256(cell identity # trial)."""
        if self.context is None:
            raise ValueError(f"a {type(self).__name__} needs its TrialContext to name its trials")
        name = self.place_name()
        trials = []
        for c, cell in enumerate(self.cells):
            digest, code = self.identity(cell)
            fixed = (("epsilon_index", cell.eps_index), ("label", cell.entry.label))
            aliases = self.aliases(cell)
            trials += [
                Trial(
                    sha256(f"{digest}#{t}"),
                    code,
                    (name, cell.entry.label, cell.epsilon),
                    self.row_keys(cell, t),
                    fixed,
                    (c, t),
                    aliases,
                )
                for t in range(self.trial_start, self.trial_stop)
            ]
        return trials

    def planned_keys(self) -> list[tuple]:
        return [key for trial in self.trials() for key in trial.keys]

    def subset(self, handles: list[tuple[int, int]]) -> list[Any]:
        """Tasks running exactly the trials ``handles`` ((cell index, trial) pairs of :meth:`trials`)."""
        return [
            replace(self, cells=tuple(self.cells[c] for c in cells), trial_start=start, trial_stop=stop)  # type: ignore[type-var]
            for cells, start, stop in cell_runs(handles)
        ]


def info_columns(info: Mapping[str, Any]) -> dict[str, Any]:
    """Scalar diagnostics of a fit or a run as ``info.<key>`` columns (arrays and other non-scalars are dropped)."""
    return {f"info.{k}": v for k, v in info.items() if isinstance(v, (int, float, np.number, str, bool))}
