"""``ops`` and ``adaops`` (Wang 2018; spec 005 §2a): the posterior sample's law, the calibration each fit used."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpbench import registry
from dpbench.linalg import gram_stats
from dpbench.mechanisms.ssp import calibration as cal
from dpbench.mechanisms.ssp.ops import posterior_sample, ridge_solution

registry.discover()
DELTA = 1e-6


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((3000, 5))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.clip(X @ np.array([0.8, -0.5, 0.3, 0.0, 0.2]) + 0.05 * rng.standard_normal(3000), -1, 1)
    return X, y


def test_posterior_sample_has_covariance_inverse_gamma_h():
    """θ̂ − θ_λ ~ N(0, (γH)⁻¹) with H = XᵀX + (1 + λ)I: empirical covariance of 20,000 draws (Wang's code draws
    (Rᵀ)⁻¹z, covariance (RRᵀ)⁻¹ — a different matrix here, which this test would catch)."""
    rng = np.random.default_rng(2)
    A = rng.standard_normal((20, 3))
    stats = gram_stats(A, rng.standard_normal(20))
    upper, theta = ridge_solution(stats, 0.5)
    draws = np.array([posterior_sample(upper, theta, 2.0, rng) - theta for _ in range(20_000)])
    target = np.linalg.inv(4.0 * (stats.xtx + 1.5 * np.eye(3)))
    assert np.allclose(np.cov(draws.T), target, atol=4 * np.abs(target).max() / math.sqrt(20_000) * 3)
    wrong = np.linalg.inv(upper @ upper.T) / 4.0
    assert not np.allclose(wrong, target, atol=4 * np.abs(target).max() / math.sqrt(20_000) * 3)
    assert np.allclose(theta, np.linalg.solve(stats.xtx + 1.5 * np.eye(3), stats.xty))


def test_ops_uses_the_balanced_calibration(data):
    X, y = data
    out = registry.get_mechanism("ops").fit(X, y, 1.0, DELTA, np.random.default_rng(0))
    expected = cal.ops_balanced(1.0, DELTA, 3000, 5)
    assert out.info["ridge"] == expected.ridge and out.info["sqrt_gamma"] == expected.sqrt_gamma


@pytest.mark.parametrize("name", ["ops", "adaops"])
def test_error_shrinks_with_epsilon_and_is_deterministic_in_the_rng(name, data):
    X, y = data
    fit = registry.get_mechanism(name).fit
    ols = np.linalg.lstsq(X, y, rcond=None)[0]
    errs = []
    for eps in (0.1, 10.0):
        thetas = [fit(X, y, eps, DELTA, np.random.default_rng(s)).theta for s in range(20)]
        errs.append(np.mean([np.sum((t - ols) ** 2) for t in thetas]))
    assert errs[1] < errs[0] / 10
    a = fit(X, y, 1.0, DELTA, np.random.default_rng(7)).theta
    assert np.array_equal(a, fit(X, y, 1.0, DELTA, np.random.default_rng(7)).theta)


def test_adaops_records_its_steps(data):
    X, y = data
    out = registry.get_mechanism("adaops").fit(X, y, 1.0, DELTA, np.random.default_rng(0))
    ell = math.log(6 / DELTA)
    lam, lam_min = out.info["ridge"], out.info["lam_min_private"]
    assert lam >= max(0.0, 2 * (1 + ell) - lam_min) and out.info["ridge_outcome"] in ("interior", "boundary")
    h = lam + lam_min
    assert out.info["lipschitz"] <= 1 + math.sqrt(2 * math.sqrt(3000) / h) + 1e-12
    assert out.info["sqrt_gamma"] == pytest.approx(cal.adaops_sqrt_gamma(1.0, DELTA, out.info["lipschitz"], h))


@pytest.mark.parametrize("name", ["ops", "adaops", "objpert", "ssp_plain"])
def test_rows_over_the_bound_are_refused(name):
    X = np.array([[2.0, 0.0], [0.0, 1.0]])
    with pytest.raises(ValueError, match="x_bound"):
        registry.get_mechanism(name).fit(X, np.zeros(2), 1.0, DELTA, np.random.default_rng(0))
