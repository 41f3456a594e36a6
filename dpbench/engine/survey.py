"""Seeing and slicing a plan: ``-d/-m/-e`` selections and the ``--dry-run`` table with its time estimate.

A selection keeps the planned trials whose dataset, mechanism and ε match (each option repeatable; a name matches
an entry's label or its loader / mechanism name, case-insensitively, exactly or as the prefix of a swept entry,
``adassp`` ↔ ``adassp (rho=0.05)``; an ε matches its value as printed, to 6 significant digits).
The dry-run table lists, per dataset × mechanism × ε, the trials the config plans, how many the store holds
and how many would run, with an estimate of the time: the mean measured wall time per trial of the store's trials
of the same dataset and mechanism (else of the dataset, else of the run), divided over the workers.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dpbench.config import ConfigError
from dpbench.engine.identity import Trial
from dpbench.engine.store import StoreIndex


@dataclass(frozen=True)
class Selection:
    """``-d/--dataset``, ``-m/--mechanism``, ``-e/--epsilon`` of ``dpbench run`` (empty: everything)."""

    datasets: tuple[str, ...] = ()
    mechanisms: tuple[str, ...] = ()
    epsilons: tuple[float, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.datasets or self.mechanisms or self.epsilons)

    def as_dict(self) -> dict[str, list[Any]]:
        return {
            name: list(values)
            for name, values in (("dataset", self.datasets), ("mechanism", self.mechanisms), ("epsilon", self.epsilons))
            if values
        }


#: an ε typed as printed (``{:g}``, 6 significant digits) is within this relative distance of the value
EPSILON_REL_TOL = 1e-5


def name_matches(name: str, wanted: str) -> bool:
    """``wanted`` names ``name`` (case-insensitively) exactly, or is the entry name of a swept instance
    (``pol [n=1000]``, ``adassp (rho=0.1)``)."""
    name, wanted = name.casefold(), str(wanted).casefold()
    return name == wanted or name.startswith((f"{wanted} (", f"{wanted} ["))


def epsilon_matches(value: float, wanted: float) -> bool:
    """ε as printed: 0.251189 matches 0.25118864315095796 (relative tolerance :data:`EPSILON_REL_TOL`)."""
    return value == wanted or math.isclose(value, wanted, rel_tol=EPSILON_REL_TOL)


def trial_names(trial: Trial, axis: int) -> tuple[Any, ...]:
    """The names a trial answers to on ``axis`` (0 dataset, 1 mechanism, 2 ε): its label, then its aliases."""
    aliases = trial.aliases[axis] if axis < 2 else ()
    return (trial.group[axis], *aliases)


def select(items: list[tuple[Any, Trial]], selection: Selection | None) -> list[tuple[Any, Trial]]:
    """The planned trials the selection keeps; a value matching nothing is an error listing what the config has."""
    if not selection:
        return items
    axes: list[tuple[str, int, tuple[Any, ...], Callable[[Any, Any], bool]]] = [
        ("-d/--dataset", 0, selection.datasets, name_matches),
        ("-m/--mechanism", 1, selection.mechanisms, name_matches),
        ("-e/--epsilon", 2, selection.epsilons, epsilon_matches),
    ]
    for option, axis, wanted, matches in axes:
        present = list(dict.fromkeys(trial_names(trial, axis) for _, trial in items))
        for value in wanted:
            if not any(matches(p, value) for names in present for p in names):
                shown = ", ".join(_names_text(names) for names in present)
                raise ConfigError(f"{option} {value!r} matches nothing in the config; it has: {shown}")
    return [
        (task, trial)
        for task, trial in items
        if all(
            not wanted or any(matches(p, w) for p in trial_names(trial, axis) for w in wanted)
            for _, axis, wanted, matches in axes
        )
    ]


def _names_text(names: tuple[Any, ...]) -> str:
    """``AdaSSP [Wang '18] (adassp)``, ``0.251189``: a label, with its other names when they differ."""
    if isinstance(names[0], float):
        return f"{names[0]:g}"
    others = [str(n) for n in dict.fromkeys(names[1:]) if str(n) != str(names[0])]
    return f"{names[0]} ({', '.join(others)})" if others else str(names[0])


def workers(n_jobs: int) -> int:
    return max(1, os.cpu_count() or 1) if n_jobs == -1 else max(1, n_jobs)


def seconds_text(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s"
    if seconds < 3600:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def per_trial_costs(items: list[tuple[Any, Trial]], index: StoreIndex) -> Callable[[Trial], float | None]:
    """Measured wall seconds per trial for a planned trial's (dataset, mechanism), from every stored version of
    the plan's trials; falling back to the dataset's mean, then the run's mean (None: nothing measured)."""
    samples: dict[tuple[str, ...], list[float]] = {}
    for _, trial in items:
        for record in index.by_slot.get(trial.slot, ()):
            dataset, mechanism, _ = trial.group
            for key in ((dataset, mechanism), (dataset,), ()):
                samples.setdefault(key, []).append(record.seconds)

    def cost(trial: Trial) -> float | None:
        dataset, mechanism, _ = trial.group
        for key in ((dataset, mechanism), (dataset,), ()):
            if samples.get(key):
                return sum(samples[key]) / len(samples[key])
        return None

    return cost


def plan_lines(
    items: list[tuple[Any, Trial]], done: Callable[[Trial], bool], index: StoreIndex, n_jobs: int
) -> list[str]:
    """The dry-run table: per (dataset, mechanism, ε) the planned, finished and to-run trials, and the estimate."""
    cost = per_trial_costs(items, index)
    groups: dict[tuple[Any, ...], list[int]] = {}
    unknown = 0
    total_seconds = 0.0
    for _, trial in items:
        counts = groups.setdefault(trial.group, [0, 0])
        counts[0] += 1
        if done(trial):
            counts[1] += 1
            continue
        seconds = cost(trial)
        if seconds is None:
            unknown += 1
        else:
            total_seconds += seconds
    width_d = max([len("dataset")] + [len(str(g[0])) for g in groups])
    width_m = max([len("mechanism")] + [len(str(g[1])) for g in groups])
    lines = [
        f"{'dataset':<{width_d}}  {'mechanism':<{width_m}}  {'ε':>10}  {'trials':>7}  {'finished':>8}  {'to run':>7}"
    ]
    for (dataset, mechanism, epsilon), (planned, finished) in groups.items():
        lines.append(
            f"{dataset:<{width_d}}  {mechanism:<{width_m}}  {epsilon:>10g}  {planned:>7}  {finished:>8}  "
            f"{planned - finished:>7}"
        )
    planned = len(items)
    finished = sum(1 for _, trial in items if done(trial))
    lines.append(f"total: {planned} trials, {finished} finished, {planned - finished} to run")
    to_run = planned - finished
    if to_run == 0:
        lines.append("estimated time: nothing to run")
    elif unknown == to_run:
        lines.append(
            "estimated time: unknown — the store has no measured trial of this config yet (run a few "
            "trials, e.g. --trials 2, or see `dpbench bench` for per-mechanism costs)"
        )
    else:
        note = f"; {unknown} trials without a measured cost not counted" if unknown else ""
        lines.append(
            f"estimated time: {seconds_text(total_seconds / workers(n_jobs))} on {workers(n_jobs)} "
            f"worker(s), from the store's measured per-trial costs{note}"
        )
    return lines
