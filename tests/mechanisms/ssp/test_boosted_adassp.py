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
