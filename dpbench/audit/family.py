"""The pairs the integrity checks run on (issue 36 item 1): many canaries, and unrelated datasets.

One canary record cannot stand for every record: a data path that the worst-case canary (x = e₁, y = +Y) does not
move — rows selected by the sign of their label, a coordinate the canary leaves at 0, a clip that is one-sided — is
never seen through it. Next to the worst-case pair (:func:`dpbench.audit.pairs.find_worst_pair`) the family holds:

* the same records on the ``spread`` background and with the canary at the first, the middle and a random row;
* the canary with its label negated (and its replacement's), both signs in two random directions of R^d (not only
  the (e₁, e₂) plane), a canary with x = 0 and y = ±Y (it moves only the label statistics);
* for a mechanism that declares it clips (``Bounds.clips``): canaries 10× outside the bounds, labels +10Y and
  −10Y (a clip that holds on one side only moves the release by more than its sensitivity on the other) — on the
  axes it declares it clips (``Bounds.clipped``): a mechanism that clips x and *assumes* |y| ≤ Y (the Stein GLMs)
  gets rows 10× outside with labels ±Y, since a record outside an assumed bound is outside its privacy claim;
* **unrelated datasets** (:func:`unrelated_pairs`): D against a random dataset of the same shape (rows of random
  norms and directions, labels of one sign or both, rows over the bounds for a clipping mechanism). They are not
  neighbours: only what must hold for *any* two datasets is checked on them — θ̂ with every release held fixed
  is bit-identical (the closure of θ̂ on its releases), the declared scale, kind and sensitivity are the same, the
  release sequence is the same, and each dataset's own noise has the declared law.

Neighbours: zero-out (central) → the zero row; label-DP → the same x with the label negated; otherwise
(replace-one, local) → a record in another random direction with the opposite label.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from dpbench.audit.pairs import PairSpec, canary_row, inputs_for, make_pair, public_rows, rows_pair
from dpbench.audit.whitebox import Pair
from dpbench.registry import MechanismInfo

#: how far outside the bounds the canaries of a clipping mechanism lie (multiple of the bound)
OUTSIDE = 10.0
#: unrelated datasets per audit
UNRELATED = 4


def clipped_axes(info: MechanismInfo, hyper: Mapping[str, Any]) -> tuple[str, ...]:
    """The data the mechanism declares it clips to its bounds (``Bounds.clips``, ``Bounds.clipped``): a subset of
    ("x", "y"), empty when it clips nothing."""
    bounds = getattr(info, "bounds", None)
    return () if bounds is None else bounds.clipped_axes({**info.hyperparameters(), **dict(hyper)})


def outside_factors(axes: tuple[str, ...], factor: float) -> tuple[float, float]:
    """(row factor, label factor) of a record fed outside the bounds: ``factor`` on each clipped axis, else 1."""
    return (factor if "x" in axes else 1.0), (factor if "y" in axes else 1.0)


def directions(spec: PairSpec, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` random unit vectors of R^d (ℓ1 or ℓ2 as the pair's norm)."""
    z = rng.standard_normal((count, spec.d))
    return z / np.linalg.norm(z, ord=spec.x_norm, axis=1, keepdims=True)


def _neighbour(info: MechanismInfo, x: np.ndarray, y: float, u: np.ndarray) -> tuple[tuple[np.ndarray, float], bool]:
    """The record that replaces (x, y) in D′ and whether it is the zero row (module docstring)."""
    if info.neighbour == "zero_out" and info.privacy_model == "central":
        return (np.zeros_like(x), 0.0), True
    if info.privacy_model == "label":
        return (x, -y), False
    return (float(np.linalg.norm(x)) * u, -y), False


def neighbour_pairs(
    info: MechanismInfo, spec: PairSpec, worst: Pair, seed: int, hyper: Mapping[str, Any]
) -> list[Pair]:
    """The family's neighbouring pairs other than the worst one (module docstring); pairs whose construction the
    pair's shape refuses are left out."""
    public_X = public_rows(spec, np.random.default_rng([seed, 11]))
    canary = worst.canary if worst.canary is not None else (0.0, 1.0, 1.0)
    out: list[Pair] = []
    at = canary_row(spec)
    drawn = int(np.random.default_rng([seed, 0xCA]).integers(1, max(2, spec.n - 1)))
    variants = [spec.with_(background="spread")]
    variants += [spec.with_(canary_index=row) for row in dict.fromkeys((0, spec.n // 2, drawn)) if row != at]
    flipped_other = None if worst.other is None else (worst.other[0], worst.other[1], -worst.other[2])
    records = [(v, canary, worst.other) for v in variants] + [(spec, (canary[0], canary[1], -canary[2]),
                                                                 flipped_other)]  # fmt: skip
    for variant, record, other in records:
        try:
            out.append(make_pair(info, variant, record, other, public_X))
        except ValueError:
            continue
    rng = np.random.default_rng([seed, 0xD1])
    u = directions(spec, 4, rng)
    rows: list[tuple[np.ndarray, float]] = [(spec.x_bound * u[0], spec.y_bound), (spec.x_bound * u[1], -spec.y_bound),
                                            (np.zeros(spec.d), spec.y_bound)]  # fmt: skip
    axes = clipped_axes(info, hyper)
    if axes:
        fx, fy = outside_factors(axes, OUTSIDE)
        rows += [(fx * spec.x_bound * u[2], fy * spec.y_bound), (fx * spec.x_bound * u[3], -fy * spec.y_bound)]
    for k, (x, y) in enumerate(rows):
        other, zero = _neighbour(info, x, y, u[(k + 1) % len(u)])
        if info.privacy_model != "label" and not zero and not np.any(x):
            other = (np.zeros(spec.d), -y)
        out.append(rows_pair(info, spec, (x, y), other, public_X, zero_row=zero))
    return out


def random_dataset(
    spec: PairSpec, kind: int, rng: np.random.Generator, outside: tuple[str, ...] = ()
) -> tuple[np.ndarray, np.ndarray]:
    """Unrelated dataset number ``kind`` (n × d): 0 — uniform in the ball, labels over [−Y, Y]; 1 — small rows
    (norms ≤ 0.3B), labels ≤ 0; 2 — rows on the bound, labels ≥ 0; 3 — half the rows zero, labels ±Y (every row
    3× over its bound when ``outside`` holds "x", every label when it holds "y": the clipped axes)."""
    n, d = spec.n, spec.d
    u = directions(spec, n, rng)
    radius = [rng.uniform(0, 1, n) ** (1 / d), 0.3 * rng.uniform(0, 1, n), np.ones(n),
              np.where(np.arange(n) % 2 == 0, 1.0, 0.0)][kind % 4]  # fmt: skip
    labels = [rng.uniform(-1, 1, n), -rng.uniform(0, 1, n), rng.uniform(0, 1, n),
              rng.choice([-1.0, 1.0], n)][kind % 4]  # fmt: skip
    fx, fy = outside_factors(outside if kind % 4 == 3 else (), 3.0)
    return fx * spec.x_bound * radius[:, None] * u, fy * spec.y_bound * labels


def unrelated_pairs(info: MechanismInfo, spec: PairSpec, worst: Pair, seed: int, hyper: Mapping[str, Any],
                    count: int = UNRELATED) -> list[Pair]:  # fmt: skip
    """D of the worst pair against ``count`` random datasets of the same shape (label-DP: the same covariates)."""
    public_X = public_rows(spec, np.random.default_rng([seed, 11]))
    rng = np.random.default_rng([seed, 0xC105])
    outside = clipped_axes(info, hyper)
    out = []
    for k in range(count):
        Xr, yr = random_dataset(spec, k, rng, outside)
        if info.privacy_model == "label":
            Xr = np.array(worst.X, copy=True)
        for array in (Xr, yr):
            array.setflags(write=False)
        what = f"unrelated dataset {k + 1} (random rows, n = {spec.n}, d = {spec.d}) in place of D′"
        out.append(Pair(worst.X, worst.y, Xr, yr, worst.inputs, inputs_for(info, Xr, yr, public_X, spec),
                        what, unrelated=True))  # fmt: skip
    return out
