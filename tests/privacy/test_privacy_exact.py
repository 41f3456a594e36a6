"""Exact ε of release tuples (dpbench.privacy.exact) and Gaussian DP (dpbench.privacy.gdp), against closed forms and
dp-accounting's privacy-loss-distribution accountant."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from dpbench.privacy.agm import epsilon_agm, sigma_agm
from dpbench.privacy.exact import (
    GaussianRelease,
    LaplaceRelease,
    PureRelease,
    exact_delta,
    exact_epsilon,
    exact_gaussian_sigmas,
    noise_factor_for_epsilon,
    scale_releases,
)
from dpbench.privacy.gdp import compose_mu, gdp_delta, gdp_epsilon, gdp_mu, gdp_type2_error

dp_accounting = pytest.importorskip("dp_accounting")
from dp_accounting.pld import privacy_loss_distribution as pld_lib  # noqa: E402


@pytest.mark.parametrize("mu", [0.1, 0.5, 1.0, 3.0])
@pytest.mark.parametrize("eps", [0.0, 0.5, 2.0])
def test_gdp_delta_is_the_closed_form(mu, eps):
    expected = norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2)
    assert gdp_delta(eps, mu) == pytest.approx(expected, rel=1e-10, abs=1e-300)


@pytest.mark.parametrize("eps", [0.1, 0.5, 2.0, 10.0])
@pytest.mark.parametrize("delta", [1e-3, 1e-5, 1e-8])
def test_gdp_mu_and_epsilon_round_trip(eps, delta):
    mu = gdp_mu(eps, delta)
    assert gdp_epsilon(mu, delta) == pytest.approx(eps, rel=1e-9)
    assert gdp_delta(eps, mu) == pytest.approx(delta, rel=1e-7)
    assert mu == pytest.approx(1.0 / sigma_agm(eps, delta, 1.0))


def test_gdp_epsilon_matches_dp_accounting_exact_gaussian():
    for mu in (0.2, 0.7, 2.5):
        loss = dp_accounting.pld.privacy_loss_mechanism.GaussianPrivacyLoss(1.0 / mu, sensitivity=1.0)
        assert gdp_delta(1.3, mu) == pytest.approx(loss.get_delta_for_epsilon(1.3), rel=1e-7)


def test_compose_mu_and_tradeoff_curve():
    assert compose_mu([3.0, 4.0]) == pytest.approx(5.0)
    assert compose_mu([]) == 0.0
    assert gdp_type2_error(0.05, 0.0) == pytest.approx(0.95)
    assert gdp_type2_error(0.05, 2.0) < gdp_type2_error(0.05, 1.0)
    with pytest.raises(ValueError):
        compose_mu([1.0, -1.0])


def test_adassp_three_releases_exact_epsilon_matches_pld():
    """AdaSSP at ε = 2: three AGM releases at (ε/3, δ/3) compose to ≈ 1.13 (the slack of basic composition)."""
    eps, delta = 2.0, 1e-5
    s = sigma_agm(eps / 3, delta / 3, 1.0)
    releases = [GaussianRelease(1.0, s)] * 3
    ours = exact_epsilon(releases, delta)
    pld = pld_lib.from_gaussian_mechanism(s, value_discretization_interval=1e-4).self_compose(3)
    assert ours == pytest.approx(pld.get_epsilon_for_delta(delta), abs=2e-3)
    assert ours == pytest.approx(epsilon_agm(s / math.sqrt(3), delta, 1.0), rel=1e-9)
    assert 1.1 < ours < 1.2


def test_laplace_and_mixed_tuples_match_dp_accounting():
    releases = [LaplaceRelease(1.0, 2.0), GaussianRelease(1.0, 1.0)]
    direct = pld_lib.from_laplace_mechanism(2.0, value_discretization_interval=1e-4).compose(
        pld_lib.from_gaussian_mechanism(1.0, value_discretization_interval=1e-4)
    )
    assert exact_epsilon(releases, 1e-5) == pytest.approx(direct.get_epsilon_for_delta(1e-5), abs=1e-3)
    two_laplace = [LaplaceRelease(2.0, 4.0), LaplaceRelease(1.0, 2.0)]  # 1-D LDP: each ε/2 = 0.5
    assert exact_epsilon(two_laplace, 1e-5) == pytest.approx(1.0, abs=1e-3)
    assert exact_epsilon(two_laplace, 1e-5) <= 1.0 + 1e-3
    assert exact_delta(two_laplace, 1.0) <= 1e-4
    assert exact_epsilon([PureRelease(1.5)], 1e-5) == pytest.approx(1.5, abs=1e-3)


@pytest.mark.parametrize("target", [1.3, 3.0])
def test_noise_factor_round_trip(target):
    eps, delta = 2.0, 1e-5
    gauss = [GaussianRelease(1.0, sigma_agm(eps / 3, delta / 3, 1.0))] * 3
    mixed = [LaplaceRelease(1.0, 1.0), GaussianRelease(1.0, 2.0)]
    for releases in (gauss, mixed):
        c = noise_factor_for_epsilon(releases, target * eps, delta)
        assert exact_epsilon(scale_releases(releases, c), delta) == pytest.approx(target * eps, rel=1e-3)
    assert noise_factor_for_epsilon(gauss, 2.6, delta) < 1.0  # the 1.3× control shrinks the noise


def test_exact_gaussian_sigmas_spend_exactly_epsilon():
    sens = [1.0, 1.0, 0.5]
    sigmas = exact_gaussian_sigmas(sens, 2.0, 1e-5)
    releases = [GaussianRelease(s, sig) for s, sig in zip(sens, sigmas, strict=True)]
    assert exact_epsilon(releases, 1e-5) == pytest.approx(2.0, rel=1e-9)
    basic = [GaussianRelease(s, sigma_agm(2.0 / 3, 1e-5 / 3, s)) for s in sens]
    assert exact_epsilon(basic, 1e-5) < 2.0  # basic composition spends less than ε …
    assert all(a < b for a, b in zip(sigmas, (r.sigma for r in basic), strict=True))  # … so exact needs less noise


@pytest.mark.parametrize("bad", [[], [GaussianRelease(0.0, 1.0)], [LaplaceRelease(1.0, -1.0)], [PureRelease(0.0)]])
def test_bad_releases_are_rejected(bad):
    with pytest.raises(ValueError):
        exact_epsilon(bad, 1e-5)
    with pytest.raises(ValueError):
        exact_epsilon([GaussianRelease(1.0, 1.0)], 1.5)


def test_pure_channels_have_no_noise_factor():
    with pytest.raises(ValueError):
        noise_factor_for_epsilon([PureRelease(1.0)], 2.0, 1e-5)
    assert np.isfinite(noise_factor_for_epsilon([PureRelease(1.0), GaussianRelease(1.0, 1.0)], 4.0, 1e-5))


@pytest.mark.parametrize("n", [100_000, 700_000])
def test_stein_default_calibration_is_exact_at_epsilon_20(n):
    """Issue 15 item 6: at ε = 20 each release (ε′ = 10, δ′ = δ/2) satisfies δ(ε′; σ) ≤ δ′ exactly with the default
    (analytic) calibration; the classical formula is outside its theorem there and gives δ(ε′; σ) > δ′."""
    from dpbench.mechanisms.stein.calibration import classical_overrun, stein_noise_scales
    from dpbench.privacy.agm import agm_delta

    r, b_y, delta = 1.7, 1.0, n**-1.1  # the paper's δ
    default = stein_noise_scales(20.0, delta, r, b_y)
    classical = stein_noise_scales(20.0, delta, r, b_y, calibration="classical")
    for s, sens in ((default.s_xx, 2 * r * r), (default.s_xy, 2 * r * b_y)):
        assert agm_delta(10.0, s, sens) <= delta / 2 * (1 + 1e-9)
        assert agm_delta(10.0, s, sens) == pytest.approx(delta / 2, rel=1e-6)  # and no more noise than needed
    assert agm_delta(10.0, classical.s_xx, 2 * r * r) > delta / 2
    assert 0.977 < classical.s_xx / default.s_xx < 0.986  # σ 1.5–2.2% too small
    assert 20.3 < 2 * classical_overrun(10.0, delta / 2) < 20.6  # true per-user ε ≈ 20.4–20.6
