"""``objpert`` (KST 2012 Gaussian on the ball; spec 005 §6): the exact ball minimiser, Wang's constants, the named
fallback when the optimiser fails."""

from __future__ import annotations

import numpy as np
import pytest

from dpbench import registry
from dpbench.contract import HyperError
from dpbench.linalg import gram_stats
from dpbench.mechanisms.ssp import objpert

registry.discover()
DELTA = 1e-6


@pytest.mark.parametrize("seed", range(6))
def test_ball_minimiser_matches_slsqp_and_kkt(seed):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((30, 4))
    stats = gram_stats(A, rng.standard_normal(30))
    g = rng.standard_normal(4) * (0.5 if seed % 2 else 40.0)  # interior and boundary cases
    sol = objpert.solve_on_ball(stats, 0.3, g, 1.0, 1.0)
    ref = objpert.slsqp_ball(stats.xtx + 0.3 * np.eye(4), g, 1.0)
    assert sol.solver == (
        "interior" if np.linalg.norm(np.linalg.solve(stats.xtx + 0.3 * np.eye(4), g)) <= 1 else "boundary"
    )
    assert np.linalg.norm(sol.theta) <= 1 + 1e-12
    obj = lambda t: 0.5 * t @ (stats.xtx + 0.3 * np.eye(4)) @ t - g @ t  # noqa: E731
    assert obj(sol.theta) <= obj(ref.theta) + 1e-6 * abs(obj(ref.theta)) and np.allclose(
        sol.theta, ref.theta, atol=1e-4
    )
    if sol.solver == "boundary":  # KKT: the gradient points outward along θ
        grad = (stats.xtx + 0.3 * np.eye(4)) @ sol.theta - g
        cos = -grad @ sol.theta / (np.linalg.norm(grad) * np.linalg.norm(sol.theta))
        assert cos == pytest.approx(1.0, abs=1e-8)


def test_exact_objpert_is_the_ridge_solution_when_the_ball_is_not_binding():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((4000, 3))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.clip(X @ np.array([0.3, -0.2, 0.1]), -1, 1)
    fit = registry.get_mechanism("objpert").fit
    out = fit(X, y, 10.0, DELTA, np.random.default_rng(1))
    sigma, ridge = objpert.objpert_sigma(10.0, DELTA, 2.0)
    b = sigma * np.random.default_rng(1).standard_normal(3)
    expected = np.linalg.solve(X.T @ X + ridge * np.eye(3), X.T @ y - b)
    assert out.info["solver"] == "interior" and np.allclose(out.theta, expected)


def test_wang_constants_halve_the_unconstrained_solution():
    """ObjPert.m's CVX objective ‖Rθ − R⁻ᵀ(XᵀY − b)/2‖ is minimised at H⁻¹(XᵀY − b)/2 (kept as his figures ran)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((4000, 3))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.clip(X @ np.array([0.3, -0.2, 0.1]), -1, 1)
    out = registry.get_mechanism("objpert").fit(X, y, 10.0, DELTA, np.random.default_rng(1), constants="wang")
    b = objpert.wang_objpert_sigma(10.0, DELTA) * np.random.default_rng(1).standard_normal(3)
    expected = np.linalg.solve(X.T @ X + 0.02 * np.eye(3), X.T @ y - b) / 2
    assert np.allclose(out.theta, expected)


def test_optimiser_failure_is_a_named_recorded_outcome(monkeypatch):
    def broken(*args, **kwargs):
        raise FloatingPointError("forced")

    monkeypatch.setattr(objpert, "ball_quadratic_minimiser", broken)
    X = np.eye(3) * 0.5
    out = registry.get_mechanism("objpert").fit(X, np.zeros(3), 1.0, DELTA, np.random.default_rng(0))
    assert out.info["solver"] == "slsqp" and out.info["fallback"] == 0

    monkeypatch.setattr(objpert, "slsqp_ball", lambda a, g, r: objpert.BallSolution(np.zeros(3), "failed"))
    out = registry.get_mechanism("objpert").fit(X, np.zeros(3), 1.0, DELTA, np.random.default_rng(0))
    assert out.info["solver"] == "failed" and out.info["fallback"] == 1


def test_strict_refuses_wang_and_radius_must_be_positive():
    info = registry.get_mechanism("objpert")
    with pytest.raises(HyperError, match="constants"):
        info.with_profile({"constants": "wang"}, "strict")
    with pytest.raises(HyperError, match="radius"):
        info.fit(np.eye(2) * 0.5, np.zeros(2), 1.0, DELTA, np.random.default_rng(0), radius=0.0)
