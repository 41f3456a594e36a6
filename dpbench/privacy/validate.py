"""Argument checks shared by every calibration function and mechanism (clear errors at the boundary)."""

from __future__ import annotations

import math


def _as_float(value: object, name: str) -> float:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if math.isnan(number):
        raise ValueError(f"{name} must be a number, got NaN")
    return number


def check_epsilon(epsilon: object, name: str = "epsilon") -> float:
    """ε must be finite and > 0."""
    value = _as_float(epsilon, name)
    if not (0.0 < value < math.inf):
        raise ValueError(f"{name} must be finite and > 0, got {epsilon!r}")
    return value


#: the privacy parameters every mechanism supports at its boundary (config and ``fit``): outside, the calibrations
#: leave float range (1/δ overflows below ~1e-308; noise scales ~1/ε), so the answer is a named error, never garbage
EPSILON_RANGE = (1e-10, 1e10)
DELTA_MIN = 1e-300


def check_supported(epsilon: float, delta: float | None = None) -> None:
    """ε ∈ [1e-10, 1e10] and δ ≥ 1e-300 (after :func:`check_epsilon` / :func:`check_delta`)."""
    low, high = EPSILON_RANGE
    if not low <= epsilon <= high:
        raise ValueError(f"epsilon = {epsilon:g} is outside the supported range [{low:g}, {high:g}]")
    if delta is not None and delta < DELTA_MIN:
        raise ValueError(f"delta = {delta:g} is below the supported minimum {DELTA_MIN:g} (1/δ would overflow)")


def check_delta(delta: object, name: str = "delta") -> float:
    """δ must lie in the open interval (0, 1)."""
    value = _as_float(delta, name)
    if not (0.0 < value < 1.0):
        raise ValueError(f"{name} must lie in (0, 1), got {delta!r}")
    return value


def check_positive(value: object, name: str) -> float:
    """A sensitivity, noise scale or bound: finite and > 0."""
    number = _as_float(value, name)
    if not (0.0 < number < math.inf):
        raise ValueError(f"{name} must be finite and > 0, got {value!r}")
    return number


def check_count(value: object, name: str) -> int:
    """A positive integer (sketch size, number of steps)."""
    if isinstance(value, bool) or int(value) != value or int(value) < 1:  # type: ignore[call-overload]
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)  # type: ignore[call-overload]
