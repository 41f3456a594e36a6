"""White-box audit (dpbench.audit.whitebox/driver/pairs/stats) on bare mechanisms with known exact ε."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import chi2

from dpbench.audit import audit_whitebox, gdp_estimate, profile_estimate
from dpbench.audit.pairs import PairSpec, find_worst_pair
from dpbench.audit.whitebox import (
    Slot,
    _l2ball_log_density,
    _wishart_law,
    observed_llr,
    pair_run,
    real_statistic,
    sample_statistic,
    sampled_epsilon,
)
from dpbench.linalg import symmetric_gaussian, wishart
from dpbench.mechanisms import record_releases, released
from dpbench.mechanisms.iwr.noise import l2ball_sample
from dpbench.privacy.agm import sigma_agm
from dpbench.privacy.gdp import gdp_epsilon, gdp_mu
from dpbench.registry import MechanismInfo

DELTA = 1e-5


def gaussian_fit(X, y, epsilon, delta, rng):
    """XᵀY + N(0, σ²I), σ = σ_AGM(ε, δ, 1): exactly (ε, δ)-DP under zero-out (‖x y‖ ≤ 1)."""
    s = sigma_agm(epsilon, delta, 1.0)
    c = X.T @ y
    return released("XᵀY", c + s * rng.standard_normal(X.shape[1]), c, scale=s, sensitivity=1.0)


def ssp_fit(X, y, epsilon, delta, rng):
    """Two releases XᵀX (symmetric noise) and XᵀY at (ε/2, δ/2) each: basic composition."""
    s = sigma_agm(epsilon / 2, delta / 2, 1.0)
    d = X.shape[1]
    xtx = released("XᵀX", X.T @ X + s * symmetric_gaussian(d, rng), X.T @ X, scale=s, sensitivity=1.0, symmetric=True)
    xty = released("XᵀY", X.T @ y + s * rng.standard_normal(d), X.T @ y, scale=s, sensitivity=1.0)
    return np.linalg.solve(xtx + np.eye(d), xty)


def half_noise_fit(X, y, epsilon, delta, rng):
    """A bug: declares σ but adds σ/2."""
    s = sigma_agm(epsilon, delta, 1.0)
    c = X.T @ y
    return released("XᵀY", c + 0.5 * s * rng.standard_normal(X.shape[1]), c, scale=s, sensitivity=1.0)


def laplace_fit(X, y, epsilon, delta, rng):
    b = 1.0 / epsilon  # ‖x y‖₁ ≤ 1 only along one axis: the audit canary's
    c = X.T @ y
    return released("XᵀY", c + rng.laplace(0.0, b, c.shape), c, scale=b, kind="laplace", sensitivity=1.0)


def local_fit(X, y, epsilon, delta, rng):
    """Each user releases x_i y_i + N(0, s²I), s = σ_AGM(ε, δ, 2) (replace-one: ‖xy − x′y′‖ ≤ 2)."""
    s = sigma_agm(epsilon, delta, 2.0)
    rows = X * y[:, None]
    mean = released(
        "x·y",
        rows.mean(axis=0) + s / math.sqrt(len(y)) * rng.standard_normal(X.shape[1]),
        rows,
        scale=s,
        sensitivity=2.0,
        users=True,
    )
    return mean


def info(fit, neighbour="zero_out", model="central"):
    return MechanismInfo("toy", fit, "toy", model, neighbour)


# ------------------------------------------------------------------------------------------------------------
# the release contract


def test_released_is_the_identity_outside_an_audit():
    value = np.array([1.5, -2.0])
    assert released("v", value, np.zeros(2), scale=1.0) is value
    assert released("s", 3.25, 0.0, scale=1.0) == 3.25


def test_recorder_records_shrinks_and_replays():
    X, y = np.eye(2), np.array([1.0, 0.0])
    with record_releases() as rec:
        gaussian_fit(X, y, 1.0, DELTA, np.random.default_rng(0))
    (r,) = rec.releases
    assert r.name == "XᵀY" and np.array_equal(r.centre, [1.0, 0.0]) and r.scale == sigma_agm(1.0, DELTA, 1.0)
    with record_releases(noise_factor=0.5) as half:
        gaussian_fit(X, y, 1.0, DELTA, np.random.default_rng(0))
    assert np.allclose(half.releases[0].value - r.centre, 0.5 * (r.value - r.centre))
    assert half.releases[0].scale == pytest.approx(0.5 * r.scale)
    with record_releases(replay=rec.releases) as rep:
        out = gaussian_fit(np.zeros((2, 2)), y, 1.0, DELTA, np.random.default_rng(99))
    assert np.array_equal(out, r.value) and np.array_equal(rep.releases[0].centre, [0.0, 0.0])


def test_replay_rejects_a_data_dependent_release_sequence():
    def fit(X, y, epsilon, delta, rng):
        if y[-1] > 0:
            released("extra", 0.0, 0.0, scale=1.0)
        return gaussian_fit(X, y, epsilon, delta, rng)

    spec = PairSpec(n=4)
    with pytest.raises(RuntimeError, match="must not depend on the data"):
        find_worst_pair(info(fit), spec, "central", 1.0, DELTA, {})


# ------------------------------------------------------------------------------------------------------------
# the statistic and the GDP conversion on a bare Gaussian mechanism


def test_llr_of_a_gaussian_release_is_gdp_with_the_closed_form_mu():
    """Real runs: L ~ N(±μ²/2, μ²) with μ = Δ/σ; μ̂ from them converts to ε = ε_AGM."""
    eps = 1.0
    pair, divergence = find_worst_pair(info(gaussian_fit), PairSpec(n=4), "central", eps, DELTA, {})
    mu = gdp_mu(eps, DELTA)
    assert divergence == pytest.approx(mu**2)
    seeds = np.random.SeedSequence(5).spawn(4000)
    s1 = np.array([real_statistic(pair_run(info(gaussian_fit), pair, "D", eps, DELTA, s, {})) for s in seeds[:2000]])
    s0 = np.array([real_statistic(pair_run(info(gaussian_fit), pair, "D'", eps, DELTA, s, {})) for s in seeds[2000:]])
    for s, sign in ((s1, 1), (s0, -1)):
        assert abs(s.mean() - sign * mu**2 / 2) < 4 * mu / math.sqrt(s.size)
        assert s.std() == pytest.approx(mu, rel=0.08)
    est = gdp_estimate(s1, s0, DELTA)
    assert est.gaussian and est.mu_lo < mu < est.mu_hi
    assert est.eps_lo < eps < est.eps_hi


@pytest.mark.parametrize("mu", [0.3, 1.0, 2.5])
def test_gdp_estimate_recovers_mu_and_its_epsilon(mu):
    rng = np.random.default_rng(int(mu * 100))
    s1 = rng.normal(mu**2 / 2, mu, 200_000)
    s0 = rng.normal(-(mu**2) / 2, mu, 200_000)
    est = gdp_estimate(s1, s0, DELTA)
    assert est.mu_lo < mu < est.mu_hi and est.mu_hi - est.mu_lo < 0.03 * mu + 0.01
    assert est.eps == pytest.approx(gdp_epsilon(mu, DELTA), rel=0.03)
    assert est.gaussian


def test_gdp_estimate_reports_non_gaussian_statistics():
    rng = np.random.default_rng(1)
    s1, s0 = rng.exponential(1.0, 50_000) + 0.5, rng.exponential(1.0, 50_000)
    assert not gdp_estimate(s1, s0, DELTA).gaussian
    prof = profile_estimate(s1, s0, DELTA)
    assert prof.eps_lo <= prof.eps <= prof.eps_hi


# ------------------------------------------------------------------------------------------------------------
# end-to-end audits: honest, controls, bugs


def test_honest_gaussian_mechanism_is_near_tight_and_passes():
    r = audit_whitebox(info(gaussian_fit), 2.0, DELTA, runs=400_000, pilot=100, spec=PairSpec(n=4))
    assert r.status == "pass" and r.history == "fixed" and r.eps_exact == pytest.approx(2.0, rel=1e-6)
    assert abs(r.estimate[0] - 2.0) < 0.05 * 2.0
    assert 1.0 <= r.eps_lower <= 2.0
    assert r.model_p > 1e-4 and all(c.ok for c in r.noise)


def test_composed_releases_show_the_accounting_slack_and_controls_are_caught():
    honest = audit_whitebox(info(ssp_fit), 2.0, DELTA, runs=200_000, pilot=50, spec=PairSpec(n=4))
    assert honest.status == "pass" and set(honest.releases) == {"XᵀX", "XᵀY"}
    assert honest.eps_exact == pytest.approx(honest.eps_declared) and honest.eps_exact < 1.6  # basic composition
    soft = audit_whitebox(info(ssp_fit), 2.0, DELTA, runs=200_000, pilot=50, spec=PairSpec(n=4), control="x1.3")
    assert soft.eps_exact == pytest.approx(2.6, rel=1e-6) and "gdp" in soft.flags and soft.status == "caught"
    hard = audit_whitebox(info(ssp_fit), 2.0, DELTA, runs=400_000, pilot=50, spec=PairSpec(n=4), control="x3")
    assert "cert" in hard.flags


def test_understated_sensitivity_fails():
    """The Gaussian mechanism declared for zero-out but registered replace-one: the flip doubles the shift."""
    r = audit_whitebox(info(gaussian_fit, "replace_one"), 1.0, DELTA, runs=200_000, pilot=50, spec=PairSpec(n=4))
    assert r.status == "FAIL" and {"cert", "gdp"} <= set(r.flags)


def test_noise_that_is_not_the_declared_law_fails():
    r = audit_whitebox(info(half_noise_fit), 1.0, DELTA, runs=10_000, pilot=200, spec=PairSpec(n=4))
    assert r.status == "FAIL" and "noise" in r.flags


def test_laplace_release_is_audited_by_its_exact_ratio():
    r = audit_whitebox(info(laplace_fit), 1.0, DELTA, runs=200_000, pilot=50, spec=PairSpec(n=4))
    assert r.status == "pass" and r.method == "profile"
    assert r.eps_exact == pytest.approx(1.0, abs=1e-3) and r.eps_lower > 0.9
    assert abs(r.estimate[0] - 1.0) < 0.05


def test_local_view_audits_one_user_report():
    r = audit_whitebox(info(local_fit, "replace_one", "local"), 2.0, DELTA, runs=200_000, pilot=30, spec=PairSpec(n=8))
    assert r.view == "local" and r.status == "pass"
    assert r.eps_exact == pytest.approx(2.0, rel=1e-3)  # the searched pair attains the declared 2: (e₁, 1) vs (e₁, −1)
    assert abs(r.estimate[0] - 2.0) < 0.1
    caught = audit_whitebox(
        info(local_fit, "replace_one", "local"), 2.0, DELTA, runs=200_000, pilot=30, spec=PairSpec(n=8), control="x1.3"
    )
    assert caught.status == "caught"


# ------------------------------------------------------------------------------------------------------------
# exact likelihood ratios of the non-Gaussian kinds


def test_wishart_llr_law_matches_direct_computation():
    rng = np.random.default_rng(3)
    cov_d, cov_dp, k = np.diag([2.0, 1.0]), np.diag([1.0, 1.0]), 7
    c, lam_d, lam_dp, _ = _wishart_law(cov_d, cov_dp, k)
    A = np.linalg.inv(cov_d) - np.linalg.inv(cov_dp)
    direct = [
        -0.5 * k * np.log(2.0) - 0.5 * np.sum(A * wishart(k, np.linalg.cholesky(cov_d).T, rng)) for _ in range(20_000)
    ]
    batched = sample_statistic([[Slot("wishart", wishart=(c, lam_d, lam_dp, k))]], "D", 20_000, rng)
    assert np.mean(direct) == pytest.approx(np.mean(batched), abs=0.03)
    assert np.std(direct) == pytest.approx(np.std(batched), rel=0.03)


def test_l2ball_llr_reaches_the_channel_epsilon():
    eps, rng = 1.0, np.random.default_rng(4)
    v = np.array([[1.0, 0.0]])
    z = l2ball_sample(np.repeat(v, 10_000, axis=0), eps, rng)
    llr = _l2ball_log_density(z, v, eps) - _l2ball_log_density(z, -v, eps)
    assert np.allclose(np.abs(llr), eps)
    assert np.mean(llr > 0) == pytest.approx(math.exp(eps) / (1 + math.exp(eps)), abs=0.015)
    slot = Slot("l2ball", ball=(v[0], -v[0], eps))
    s1 = sample_statistic([[slot]], "D", 100_000, rng)
    s0 = sample_statistic([[slot]], "D'", 100_000, rng)
    assert math.log(np.mean(s1 > 0) / np.mean(s0 > 0)) == pytest.approx(eps, abs=0.03)


def test_observed_llr_of_laplace_is_bounded_by_the_shift():
    pair, _ = find_worst_pair(info(laplace_fit), PairSpec(n=4), "central", 1.0, DELTA, {})
    for s in np.random.SeedSequence(1).spawn(50):
        (rp,) = pair_run(info(laplace_fit), pair, "D", 1.0, DELTA, s, {})
        assert abs(observed_llr(rp)) <= 1.0 + 1e-12


# ------------------------------------------------------------------------------------------------------------
# exact-in-law ε by Monte Carlo over the privacy loss (the sketches' yardstick)


@pytest.mark.parametrize("mu", [0.5, 1.5])
def test_sampled_epsilon_of_a_gaussian_release_matches_the_closed_form(mu):
    r = sampled_epsilon([[Slot("gaussian", mu2=mu * mu)]], DELTA, np.random.default_rng(5), size=2_000_000)
    exact = gdp_epsilon(mu, DELTA)
    assert r.eps_lo <= exact <= r.eps_hi
    assert r.eps_hi - r.eps_lo < 0.05 * exact


def _rank_one_wishart_delta(eps: float, s: float, k: int) -> float:
    """Closed form for Σ_D = Σ_D′ + vvᵀ with vᵀΣ_D′⁻¹v = s: L = c + (s/2)χ²_k on D, c + s/(2(1+s))χ²_k on D′,
    c = −(k/2)log(1+s); δ(ε) = max of P_D(L > ε) − e^ε P_D′(L > ε) and P_D′(L < −ε) − e^ε P_D(L < −ε)."""
    c = -0.5 * k * math.log1p(s)
    up = max(eps - c, 0.0)
    forward = chi2.sf(2 * up / s, k) - math.exp(eps) * chi2.sf(2 * up * (1 + s) / s, k)
    down = -eps - c
    backward = 0.0 if down <= 0 else chi2.cdf(2 * down * (1 + s) / s, k) - math.exp(eps) * chi2.cdf(2 * down / s, k)
    return max(forward, backward)


def test_sampled_epsilon_of_a_rank_one_wishart_matches_the_chi_square_closed_form():
    k, s = 12, 0.8
    cov_dp = np.diag([1.0, 2.0])
    cov_d = cov_dp + np.diag([s, 0.0])  # vᵀΣ_D′⁻¹v = s
    slot = Slot("wishart", wishart=_wishart_law(cov_d, cov_dp, k))
    r = sampled_epsilon([[slot]], DELTA, np.random.default_rng(6), size=4_000_000)
    exact = brentq(lambda e: _rank_one_wishart_delta(e, s, k) - DELTA, 1e-6, 50.0)
    assert r.eps_lo <= exact <= r.eps_hi
    assert r.eps_hi - r.eps_lo < 0.05 * exact


def test_wishart_control_shrinks_the_mixing_noise_exactly_in_law():
    """η → c·η: the transformed draw has the covariance M + c²η²I (mean of W/k over draws)."""
    M, eta2, k, c = np.array([[1.0, 0.3], [0.3, 0.5]]), 0.7, 9, 0.5
    cov = M + eta2 * np.eye(2)
    rng = np.random.default_rng(7)
    means = []
    with record_releases(noise_factor=c) as rec:
        for _ in range(4000):
            means.append(released("W", wishart(k, np.linalg.cholesky(cov).T, rng), cov, kind="wishart", scale=0.0,
                                  k=k, ridge=eta2) / k)  # fmt: skip
    assert np.allclose(np.mean(means, axis=0), M + c * c * eta2 * np.eye(2), atol=0.03)
    assert np.allclose(rec.releases[0].centre, M + c * c * eta2 * np.eye(2))
