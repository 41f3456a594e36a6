"""Numeric edges (issue 19): every registered mechanism, any ε in [1e-8, 1e8], δ down to 1e-300, tiny and degenerate
shapes — a finite estimate or a named ``ValueError``, never a traceback from deep inside numpy or math.

Shapes: n ∈ {1, d − 1, d, d + 1, 25}, d ∈ {1, 2, 3}; data variants: plain, a constant column, all-zero y, all-zero
X. Rows satisfy every mechanism's declared bounds (‖x_i‖₁ ≤ 1, so ‖x_i‖₂ ≤ 1; y ∈ [0, 1]), so a ValueError can only
come from a real limit (n < d, the accounting's floor, ...) and must say so.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpbench import registry
from dpbench.data._base import Population
from dpbench.linalg import gram_stats

registry.discover()
MECHANISMS = sorted(name for name in registry.MECHANISMS if ":" not in name)
EDGES = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
#: an error message must name something; these are what numpy/math say when they were not meant to be reached
ANONYMOUS = ("math domain error", "math range error", "division by zero", "Singular matrix", "array must not contain")


def edge_data(n: int, d: int, variant: str, seed: int):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, (n, d))
    X /= np.maximum(np.abs(X).sum(axis=1, keepdims=True), 1.0)
    y = rng.uniform(0.0, 1.0, n)
    if variant == "constant_column":
        X[:, 0] = 0.5 / d
    elif variant == "zero_y":
        y[:] = 0.0
    elif variant == "zero_X":
        X[:] = 0.0
    public = rng.uniform(-1.0, 1.0, (max(4, 2 * d), d)) / (2 * d)
    population = Population(
        cov=np.eye(d) / (3 * d * d),
        theta=np.full(d, 1 / math.sqrt(d)),
        noise_var=0.1,
        extra={"radial": (np.array([0.5]), np.array([1.0])), "l1_iso": 0.25, "mean_norm": 0.5, "B": 1.0},
    )
    return X, y, {"stats": gram_stats(X, y), "public_X": public, "population": population}


def outcome(name: str, X, y, inputs, epsilon: float, delta: float) -> str:
    """'finite' or 'named: <message>'; anything else fails the calling test."""
    info = registry.MECHANISMS[name]
    needed = {k: inputs[k] for k in info.needs}
    try:
        result = info.fit(X, y, epsilon, delta, np.random.default_rng(0), **needed)
    except ValueError as err:
        message = str(err)
        assert message and not any(text in message for text in ANONYMOUS), f"{name}: unnamed error {message!r}"
        return f"named: {message}"
    theta = np.asarray(getattr(result, "theta", result), dtype=float)
    assert theta.ndim == 1 and np.isfinite(theta).all(), f"{name} at ε={epsilon:g}, δ={delta:g}: θ̂ = {theta}"
    return "finite"


shapes = st.integers(1, 3).flatmap(
    lambda d: st.tuples(st.sampled_from(sorted({1, max(d - 1, 1), d, d + 1, 25})), st.just(d))
)


@pytest.mark.parametrize("name", MECHANISMS)
@EDGES
@given(
    log_eps=st.floats(-8.0, 8.0),
    log_delta=st.floats(-300.0, math.log10(0.5)),
    shape=shapes,
    variant=st.sampled_from(["plain", "constant_column", "zero_y", "zero_X"]),
)
def test_every_mechanism_gives_a_finite_estimate_or_a_named_error(name, log_eps, log_delta, shape, variant):
    n, d = shape
    X, y, inputs = edge_data(n, d, variant, seed=n * 10 + d)
    outcome(name, X, y, inputs, 10.0**log_eps, 10.0**log_delta)


@pytest.mark.parametrize("name", MECHANISMS)
@pytest.mark.parametrize("epsilon", [1e-8, 1e8])
def test_every_mechanism_at_the_ends_of_the_epsilon_range(name, epsilon):
    X, y, inputs = edge_data(25, 3, "plain", seed=1)
    outcome(name, X, y, inputs, epsilon, 1e-5)


@pytest.mark.parametrize("name", [n for n in MECHANISMS if registry.MECHANISMS[n].private])
@pytest.mark.parametrize("epsilon", [5e-324, 1e-300, 1e-11, 1e11, 1e300])
def test_epsilon_outside_the_supported_range_is_named(name, epsilon):
    X, y, inputs = edge_data(25, 3, "plain", seed=2)
    assert outcome(name, X, y, inputs, epsilon, 1e-5).startswith("named")  # the range, or a narrower calibration limit


@pytest.mark.parametrize("name", [n for n in MECHANISMS if registry.MECHANISMS[n].private])
def test_subnormal_delta_is_named(name):
    X, y, inputs = edge_data(25, 3, "plain", seed=3)
    assert outcome(name, X, y, inputs, 0.5, 5e-324).startswith("named")


@pytest.mark.parametrize("mechanism", ["ihm", "linmix"])
def test_gaussian_mixing_below_the_accounting_floor_is_named_not_an_overflow(mechanism):
    """The issue's `epsilons: [1.0e-6]` → OverflowError: now the floor of the calibration is named (or it works)."""
    X, y, inputs = edge_data(200, 3, "plain", seed=4)
    for epsilon in (1e-8, 1e-7, 1e-6):
        result = outcome(mechanism, X, y, inputs, epsilon, 1e-8)
        assert result == "finite" or "below the smallest value this calibration reaches" in result
    assert outcome(mechanism, X, y, inputs, 1e-8, 1e-8).startswith("named")


def test_estimator_api_names_the_floor_too():
    from dpbench.estimators import DPLinearRegression

    X, y, _ = edge_data(200, 3, "plain", seed=5)
    with pytest.raises(ValueError, match="below the smallest value"):
        DPLinearRegression("ihm", epsilon=1e-8, delta=1e-8, random_state=0).fit(X, y)
