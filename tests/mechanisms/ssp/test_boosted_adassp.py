"""Boosted AdaSSP (spec 005 §1): calibration vectors, dp-accounting, the releases, the estimator's properties."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpbench import registry
from dpbench.contract import HyperError
from dpbench.data.synthetic import load as sphere
from dpbench.mechanisms._base import record_releases
from dpbench.mechanisms.ssp import boosted_adassp as boosted
from dpbench.privacy.gdp import gdp_mu

dp_accounting = pytest.importorskip("dp_accounting")
from dp_accounting.pld import privacy_loss_distribution  # noqa: E402

#: spec 005 §1 test vectors: (ε, δ) → (μ*, σ at T = 100)
VECTORS = [
    (1.0, 1e-6, 0.236704, 42.6672),
    (0.1, 1e-6, 0.027545, 366.659),
    (10.0, 1e-6, 1.848132, 5.4647),
    (1.0, 1e-5, 0.268051, 37.6775),
    (math.log(3.0), 1e-5, 0.292000, 34.5874),
]


@pytest.fixture(scope="module")
def data():
    ds = sphere(np.random.default_rng(0), n=600, d=4, theta_norm=0.6, noise=0.3)
    return ds.X_train, ds.y_train


@pytest.mark.parametrize(("epsilon", "delta", "mu", "sigma"), VECTORS)
def test_sigma_matches_spec_vectors(epsilon, delta, mu, sigma):
    """μ* (6 decimals) and σ = √(T+2)/μ* to every digit the spec prints (half a unit of the last place)."""
    assert gdp_mu(epsilon, delta) == pytest.approx(mu, abs=5e-7)
    places = len(repr(sigma).split(".")[1])
    assert boosted.boosted_sigma(epsilon, delta, 100) == pytest.approx(sigma, abs=0.5 * 10.0**-places)


@pytest.mark.parametrize(("epsilon", "T"), [(1.0, 100), (0.3, 5), (4.0, 1)])
def test_t_plus_2_gaussians_are_exactly_epsilon_by_pld(epsilon, T):
    """dp-accounting PLD of T + 2 Gaussians with noise multiplier σ gives ε at δ (exact: pessimistic ≈ ε)."""
    delta = 1e-6
    sigma = boosted.boosted_sigma(epsilon, delta, T)

    def pld_eps(pessimistic: bool) -> float:
        pld = privacy_loss_distribution.from_gaussian_mechanism(
            sigma, sensitivity=1.0, pessimistic_estimate=pessimistic, value_discretization_interval=1e-4
        ).self_compose(T + 2)
        return float(pld.get_epsilon_for_delta(delta))

    assert pld_eps(True) == pytest.approx(epsilon, abs=3e-3 * max(1.0, epsilon))
    assert pld_eps(False) <= epsilon + 1e-9


def test_releases_declared_with_their_sensitivities(data):
    X, y = data
    with record_releases() as rec:
        out = boosted.fit(X, y, 1.0, 1e-6, np.random.default_rng(3), T=4, x_bound=2.0, y_bound=0.5)
    names = [r.name for r in rec.releases]
    assert names == ["XᵀX", "λ_min(XᵀX)", *(f"residual gradient {t}" for t in range(1, 5))]
    sigma = boosted.boosted_sigma(1.0, 1e-6, 4)
    assert [r.sensitivity for r in rec.releases] == [4.0, 4.0, *[1.0] * 4]
    assert [r.scale for r in rec.releases] == pytest.approx([4.0 * sigma] * 2 + [sigma] * 4)
    assert all(r.scale / r.sensitivity == pytest.approx(sigma) for r in rec.releases)
    assert out.info["path"].shape == (5, X.shape[1]) and np.array_equal(out.info["path"][-1], out.theta)


def test_converges_to_ols_when_the_noise_vanishes(data):
    """At ε = 1e4 (σ ≈ 0.03) and no residual clipping, T boosting rounds with H ≈ XᵀX reach OLS (to 1%; at ε = 1
    the same fit is ≥ 10× farther)."""
    X, y = data
    ols = np.linalg.lstsq(X, y, rcond=None)[0]
    theta = boosted.fit(X, y, 1e4, 1e-6, np.random.default_rng(0), T=20, y_bound=10.0).theta
    assert np.linalg.norm(theta - ols) < 1e-2 * np.linalg.norm(ols)
    noisy = boosted.fit(X, y, 1.0, 1e-6, np.random.default_rng(0), T=20, y_bound=10.0).theta
    assert np.linalg.norm(noisy - ols) > 10 * np.linalg.norm(theta - ols)


def test_step_rules_differ_and_are_named(data):
    X, y = data
    thetas = {
        rule: boosted.fit(X, y, 1.0, 1e-6, np.random.default_rng(5), T=10, step=rule).theta
        for rule in ("constant", "inverse", "inverse_sqrt")
    }
    assert not np.allclose(thetas["constant"], thetas["inverse"])
    assert boosted.step_size("inverse_sqrt", 4) == 0.5 and boosted.step_size("inverse", 4) == 0.25
    with pytest.raises(HyperError, match="step"):
        boosted.fit(X, y, 1.0, 1e-6, np.random.default_rng(0), step="linear")
    with pytest.raises(HyperError, match="T"):
        boosted.fit(X, y, 1.0, 1e-6, np.random.default_rng(0), T=0)


def test_rows_over_the_bound_are_clipped_not_refused(data):
    """Rows scaled ×3 over C_x = 1: the fit equals the fit on the rows clipped by hand (same rng)."""
    X, y = data
    big = 3.0 * X
    norms = np.linalg.norm(big, axis=1, keepdims=True)
    by_hand = big * np.minimum(1.0, 1.0 / norms)
    a = boosted.fit(big, y, 1.0, 1e-6, np.random.default_rng(9), T=3)
    b = boosted.fit(by_hand, y, 1.0, 1e-6, np.random.default_rng(9), T=3)
    assert a.info["rows_clipped"] == 1
    np.testing.assert_allclose(a.theta, b.theta, rtol=1e-10, atol=1e-12)


def test_registered_for_bench_and_strict():
    registry.discover()
    info = registry.get_mechanism("boosted_adassp")
    assert info.neighbour == "zero_out" and "stats" in info.needs
    assert info.with_profile({}, "strict") == {}  # its only accounting is the exact one


@pytest.mark.parametrize("y_bound", [1.0, 0.05])
def test_first_round_from_the_gram_equals_the_rows(data, y_bound):
    """Round 1 reads XᵀY off the Gram when no |y_i| > C_y (else the rows): the same θ as the literal row gradient."""
    X, y = data
    Xf, yf = X.copy(), y.copy()
    Xf.flags.writeable = yf.flags.writeable = False
    maxima = boosted.data_maxima(Xf, yf)
    assert maxima == (pytest.approx(np.linalg.norm(X, axis=1).max()), pytest.approx(np.abs(y).max()))
    stats = boosted.gram_stats(Xf, yf)
    shortcut = boosted.first_gradient(stats, y_bound, maxima[1])
    np.testing.assert_allclose(shortcut, X.T @ np.clip(y, -y_bound, y_bound), rtol=1e-12, atol=1e-12)
    assert (maxima[1] <= y_bound) == (y_bound == 1.0)  # both branches are exercised


@pytest.mark.parametrize("d", [1, 4, 16])
def test_spectral_ridge_covers_the_noise_and_the_paper_rule_does_not(d):
    """b = 2√d + 2√log 20 bounds λ_max(Sym(Z)) with probability ≥ 0.95 (here: no draw of 2,000 exceeds it); the
    paper's 1.96√d is exceeded by λ_max in ≥ 1% of draws at every d (2% at d = 1, 9% at d = 10)."""
    rng = np.random.default_rng(d)
    top = np.array([np.linalg.eigvalsh(boosted.symmetric_gaussian(d, rng))[-1] for _ in range(2000)])
    assert np.mean(top > boosted.ridge_multiplier("spectral", d)) <= 0.05
    assert np.mean(top > boosted.ridge_multiplier("paper", d)) >= 0.01
    assert boosted.ridge_multiplier("paper", d) == pytest.approx(1.96 * math.sqrt(d))
    assert boosted.ridge_multiplier("spectral", d) == pytest.approx(2 * math.sqrt(d) + 2 * math.sqrt(math.log(20)))


def test_ridge_rule_subtracts_the_private_lambda_min_lower_bound():
    """λ̃_lb = max(0, λ̃ − 1.96C_x²σ); ridge = max(0, b·C_x²σ − λ̃_lb) for both rules (values by hand)."""
    lam_lb, ridge = boosted.ridge_rule(100.0, 10.0, 2.0, 4, "paper")
    assert lam_lb == pytest.approx(100.0 - 1.96 * 40.0) and ridge == pytest.approx(1.96 * 2 * 40.0 - lam_lb)
    lam_lb, ridge = boosted.ridge_rule(-5.0, 10.0, 1.0, 9, "spectral")
    assert lam_lb == 0.0 and ridge == pytest.approx((6.0 + 2 * math.sqrt(math.log(20))) * 10.0)
    assert boosted.ridge_rule(1e6, 1.0, 1.0, 4, "spectral") == (pytest.approx(1e6 - 1.96), 0.0)
    with pytest.raises(ValueError, match="ridge"):
        boosted.ridge_multiplier("wigner", 3)


def test_spectral_ridge_keeps_boosting_stable_where_the_paper_rule_blows_up():
    """A near-singular design (λ_min(XᵀX) ≈ 0, ‖x‖ ≤ 1) at ε = 1, T = 100: with the paper's ridge some of 60 trials
    end worse than θ = 0 by far (the noisy H is indefinite); with the spectral ridge none is worse than θ = 0."""
    rng = np.random.default_rng(11)
    X = rng.standard_normal((400, 10)) * np.r_[np.ones(9), 1e-3] / 4.0
    X /= max(1.0, np.linalg.norm(X, axis=1).max())
    y = np.clip(X @ np.ones(10) + 0.1 * rng.standard_normal(400), -1, 1)
    ols = np.linalg.lstsq(X, y, rcond=None)[0]
    mse_ols, mse_zero = np.mean((y - X @ ols) ** 2), np.mean(y**2)

    def excess(rule: str) -> np.ndarray:
        thetas = [boosted.fit(X, y, 1.0, 1e-6, np.random.default_rng(s), ridge=rule).theta for s in range(60)]
        return np.array([(np.mean((y - X @ t) ** 2) - mse_ols) / (mse_zero - mse_ols) for t in thetas])

    paper, spectral = excess("paper"), excess("spectral")
    assert paper.max() > 10.0
    assert spectral.max() < 1.0
