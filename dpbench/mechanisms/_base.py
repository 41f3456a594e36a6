"""The mechanism contract shared by every ``fit``: result type and the boundary input checks.

``fit(X, y, epsilon, delta, rng, **inputs, **hyper) -> FitResult`` (or a bare coefficient vector, which the runner
wraps). Input checks live here, at the boundary (scikit-learn style); mechanism bodies assume valid arrays.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpbench.linalg import GramStats, gram_stats
from dpbench.privacy.validate import EPSILON_RANGE, check_delta, check_epsilon, check_supported

#: slack for floating-point round-off when checking ‖x_i‖ ≤ bound
BOUND_TOL = 1e-9


@dataclass
class FitResult:
    """A mechanism's estimate θ̂ and optional diagnostics (γ, σ, k, clipping rate, ...)."""

    theta: np.ndarray
    info: dict[str, Any] = field(default_factory=dict)


def as_fit_result(output: Any) -> FitResult:
    """Normalise a mechanism's return value (FitResult, ndarray or (theta, info)) to a FitResult."""
    if isinstance(output, FitResult):
        return output
    if isinstance(output, tuple) and len(output) == 2 and isinstance(output[1], dict):
        return FitResult(np.asarray(output[0], dtype=float), dict(output[1]))
    return FitResult(np.asarray(output, dtype=float))


def check_inputs(
    X: np.ndarray,
    y: np.ndarray,
    epsilon: float | None,
    delta: float | None,
    *,
    x_bound: float | None = 1.0,
    y_bound: float | None = 1.0,
    require_overdetermined: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Validate a mechanism's inputs; return float arrays.

    Raises ValueError naming the problem: wrong shapes, NaN/inf, ε ≤ 0, δ ∉ (0, 1), rows with ‖x_i‖ > x_bound or
    |y_i| > y_bound (the data-independent bounds the calibration relies on; pass None to skip a check, e.g. when
    the mechanism clips), or n < d when the mechanism needs n ≥ d.
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    if epsilon is not None:
        check_supported(check_epsilon(epsilon))
    if delta is not None:
        check_supported(EPSILON_RANGE[0], check_delta(delta))
    data_key = (x_bound, y_bound, require_overdetermined)
    if _already_checked(X, y, data_key):  # the runner's read-only arrays, checked in an earlier trial
        return X, y
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D array (n, d), got shape {X.shape}")
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise ValueError(f"y must be a 1-D array with {X.shape[0]} entries (rows of X), got shape {y.shape}")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"X must have at least one row and one column, got shape {X.shape}")
    if not np.isfinite(X).all():
        raise ValueError(
            f"X contains NaN or inf in rows {np.nonzero(~np.isfinite(X).all(axis=1))[0][:5].tolist()}"
        )
    if not np.isfinite(y).all():
        raise ValueError(f"y contains NaN or inf at rows {np.nonzero(~np.isfinite(y))[0][:5].tolist()}")
    if x_bound is not None:
        norms = np.sqrt(np.einsum("ij,ij->i", X, X))
        over = np.nonzero(norms > x_bound * (1 + BOUND_TOL))[0]
        if over.size:
            raise ValueError(
                f"{over.size} rows have ‖x_i‖ > x_bound = {x_bound} (max {norms.max():.4g}, first rows "
                f"{over[:5].tolist()}); normalise or clip the data first"
            )
    if y_bound is not None:
        over = np.nonzero(np.abs(y) > y_bound * (1 + BOUND_TOL))[0]
        if over.size:
            raise ValueError(
                f"{over.size} labels have |y_i| > y_bound = {y_bound} (max {np.abs(y).max():.4g}); "
                "normalise or clip the labels first"
            )
    if require_overdetermined and X.shape[0] < X.shape[1]:
        raise ValueError(f"this mechanism needs n ≥ d, got n = {X.shape[0]} < d = {X.shape[1]}")
    _remember_checked(X, y, data_key)
    return X, y


#: read-only (X, y) pairs that passed the data checks, keyed by id and kept only while the arrays live
_CHECKED: weakref.WeakValueDictionary[int, np.ndarray] = weakref.WeakValueDictionary()
_CHECKED_KEYS: dict[int, set[tuple]] = {}


def _frozen(array: np.ndarray) -> bool:
    """Read-only and owning its memory (no writeable base behind it), like the runner's GramStats arrays."""
    return not array.flags.writeable and array.base is None


def _already_checked(X: np.ndarray, y: np.ndarray, key: tuple) -> bool:
    """True if these exact read-only arrays already passed the checks for ``key`` (no per-trial O(nd) re-check)."""
    return (
        _frozen(X)
        and _frozen(y)
        and _CHECKED.get(id(X)) is X
        and _CHECKED.get(id(y)) is y
        and (id(y), key) in _CHECKED_KEYS.get(id(X), set())
    )


def _remember_checked(X: np.ndarray, y: np.ndarray, key: tuple) -> None:
    if not (_frozen(X) and _frozen(y)):
        return  # arrays that may change between calls are always re-checked
    if _CHECKED.get(id(X)) is not X:
        _CHECKED_KEYS.pop(id(X), None)
    _CHECKED[id(X)] = X
    _CHECKED[id(y)] = y
    _CHECKED_KEYS.setdefault(id(X), set()).add((id(y), key))


def resolve_stats(X: np.ndarray, y: np.ndarray, stats: GramStats | None) -> GramStats:
    """The precomputed Gram statistics if they are those of (X, y), else fresh ones.

    The runner passes ``stats.X`` and ``stats.y`` themselves (an identity check, free); any other caller's
    statistics are reused only if their arrays equal (X, y) exactly — O(nd), against O(nd²) to recompute — so the
    statistics of other data of the same shape are never used silently.
    """
    if stats is not None and _same(stats.X, X) and _same(stats.y, y):
        return stats
    return gram_stats(X, y)


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a is b or (a.shape == b.shape and np.array_equal(a, b))
