"""The ``posterior`` release kind (one posterior sample, OPS/AdaOPS; spec 005 §2a): its exact log-likelihood
ratio, its exact ε by Monte Carlo against closed forms, its noise factor, and the OPS family's white-box audit."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import multivariate_normal, norm

from dpbench.audit.whitebox import PosteriorLaw, Slot, sampled_epsilon
from dpbench.mechanisms import record_releases, released
from dpbench.privacy.gdp import gdp_epsilon

DELTA = 1e-5


def test_posterior_llr_is_the_log_density_ratio_of_the_two_gaussians():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 3, 3))
    p_d, p_dp = a @ a.T + np.eye(3), b @ b.T + 2 * np.eye(3)
    law = PosteriorLaw(np.array([0.3, -1.0, 0.2]), p_d, np.array([0.0, 0.5, 1.0]), p_dp)
    r = rng.standard_normal((5, 3))
    want = multivariate_normal(law.m_d, np.linalg.inv(p_d)).logpdf(r) - multivariate_normal(
        law.m_dp, np.linalg.inv(p_dp)
    ).logpdf(r)
    assert np.allclose(law.llr(r), want, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("mu", [0.5, 1.5])
def test_posterior_with_one_precision_is_a_gaussian_shift(mu):
    """P_D = P_D′: L ~ N(±μ²/2, μ²) with μ² = ‖m_D − m_D′‖²_P, so its ε is the GDP curve's; 2·KL = μ²."""
    p = np.array([[2.0, 0.5], [0.5, 1.0]])
    shift = np.array([1.0, 0.0]) * mu / math.sqrt(p[0, 0])
    law = PosteriorLaw(shift, p, np.zeros(2), p)
    assert law.divergence() == pytest.approx(mu * mu)
    r = sampled_epsilon([[Slot("posterior", posterior=law)]], DELTA, np.random.default_rng(3), size=1_000_000)
    exact = gdp_epsilon(mu, DELTA)
    assert r.eps_lo <= exact <= r.eps_hi and r.eps_hi - r.eps_lo < 0.08 * exact


def _two_gaussians_delta(eps: float, shift: float, s: float) -> float:
    """δ(ε) of N(shift, s²) against N(0, 1) by quadrature, both directions: ∫ (p − e^ε q)₊ on a fine grid."""
    r = np.linspace(-30.0, 30.0, 300_001)
    log_p, log_q = norm.logpdf(r, shift, s), norm.logpdf(r)
    forward = np.trapezoid(np.maximum(np.exp(log_p) - np.exp(eps + log_q), 0.0), r)
    backward = np.trapezoid(np.maximum(np.exp(log_q) - np.exp(eps + log_p), 0.0), r)
    return float(max(forward, backward))


def test_posterior_with_two_variances_matches_quadrature():
    """The OPS case: mean and variance both move (here N(1, 0.8²) vs N(0, 1) in one dimension)."""
    shift, s = 1.0, 0.8
    law = PosteriorLaw(np.array([shift]), np.array([[1 / s**2]]), np.zeros(1), np.eye(1))
    r = sampled_epsilon([[Slot("posterior", posterior=law)]], DELTA, np.random.default_rng(4), size=1_000_000)
    exact = brentq(lambda e: _two_gaussians_delta(e, shift, s) - DELTA, 0.5, 30.0, xtol=1e-6)
    assert r.eps_lo <= exact <= r.eps_hi and r.eps_hi - r.eps_lo < 0.08 * exact


def test_noise_factor_scales_a_posterior_release_and_its_declared_scale():
    H = np.array([[3.0, 1.0], [1.0, 2.0]])
    centre, value = np.array([0.5, -0.5]), np.array([1.0, 0.25])
    with record_releases(noise_factor=0.5) as rec:
        out = released("θ̂", value, centre, kind="posterior", scale=0.2, sensitivity=2.0, H=H)
    assert np.allclose(out, centre + 0.5 * (value - centre)) and rec.releases[0].scale == pytest.approx(0.1)
    assert released("θ̂", value, centre, kind="posterior", scale=0.2, H=H) is value  # identity outside an audit
