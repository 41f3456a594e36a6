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


#: the privacy parameters every mechanism supports at its boundary (config and ``fit``): outside, the calibrations
#: leave float range (1/δ overflows below ~1e-308; noise scales ~1/ε), so the answer is a named error, never garbage
EPSILON_RANGE = (1e-10, 1e10)
DELTA_MIN = 1e-300


def check_epsilon(epsilon: object, name: str = "epsilon") -> float:
    """The one range check of ε in a calibration: finite, > 0 and in the supported range :data:`EPSILON_RANGE`
    (the config's ε grid is checked once, against the same range, by :func:`dpbench.config.fields.parse_epsilons`)."""
    value = _as_float(epsilon, name)
    low, high = EPSILON_RANGE
    if not low <= value <= high:
        raise ValueError(f"{name} must be finite and > 0, in the supported range [{low:g}, {high:g}]; got {epsilon!r}")
    return value


def check_delta(delta: object, name: str = "delta") -> float:
    """δ must lie in the open interval (0, 1), and not below the supported :data:`DELTA_MIN` (1/δ would overflow)."""
    value = _as_float(delta, name)
    if not (0.0 < value < 1.0):
        raise ValueError(f"{name} must lie in (0, 1), got {delta!r}")
    if value < DELTA_MIN:
        raise ValueError(f"{name} = {value:g} is below the supported minimum {DELTA_MIN:g} (1/δ would overflow)")
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
