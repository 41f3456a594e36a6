"""Adaptive-clip DP-GD (spec 005 §5): the budget split, the releases, the quantile rule, robustness to corruption."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpbench.contract import HyperError
from dpbench.data.synthetic import load as sphere
from dpbench.mechanisms._base import record_releases
from dpbench.mechanisms.gradient import dpgd_adaclip as ada
from dpbench.privacy.gdp import compose_mu, gdp_mu

dp_accounting = pytest.importorskip("dp_accounting")
from dp_accounting.pld import privacy_loss_distribution  # noqa: E402


def test_multipliers_compose_to_mu_star():
    """T(2/σ_h² + 1/σ_g²) = μ*² and the histogram share is quantile_share (ε = 1, δ = 1e-6: μ* = 0.236704)."""
    sigma_h, sigma_g = ada.adaclip_multipliers(1.0, 1e-6, 25, 0.2)
    mu = gdp_mu(1.0, 1e-6)
    assert mu == pytest.approx(0.236704, abs=5e-7)
    assert math.sqrt(25 * (2 / sigma_h**2 + 1 / sigma_g**2)) == pytest.approx(mu, rel=1e-12)
    assert 25 * 2 / sigma_h**2 / mu**2 == pytest.approx(0.2, rel=1e-12)
    assert sigma_g == pytest.approx(math.sqrt(25 / 0.8) / 0.236704, rel=3e-6)
    with pytest.raises(ValueError, match="quantile_share"):
        ada.adaclip_multipliers(1.0, 1e-6, 5, 1.0)


def test_recorded_releases_are_exactly_epsilon_by_pld():
    """The 2T recorded releases (sensitivity/scale = their μ) compose to μ*; dp-accounting's PLD of the same
    Gaussians gives ε = 1 at δ = 1e-6 (pessimistic within 3e-3, optimistic ≤ 1)."""
    ds = sphere(np.random.default_rng(2), n=500, d=3, theta_norm=0.6, noise=0.3)
    with record_releases() as rec:
        out = ada.fit(ds.X_train, ds.y_train, 1.0, 1e-6, np.random.default_rng(0), T=4)
    names = [r.name for r in rec.releases]
    assert names == [f"{kind} {t}" for t in range(1, 5) for kind in ("residual histogram", "noisy gradient")]
    mus = [r.sensitivity / r.scale for r in rec.releases]
    assert compose_mu(mus) == pytest.approx(gdp_mu(1.0, 1e-6), rel=1e-10)
    taus = out.info["thresholds"]
    assert [r.sensitivity for r in rec.releases[1::2]] == pytest.approx(list(2 * taus / 500))

    def pld_eps(pessimistic: bool) -> float:
        plds = [
            privacy_loss_distribution.from_gaussian_mechanism(
                1.0 / m, sensitivity=1.0, pessimistic_estimate=pessimistic, value_discretization_interval=1e-4
            )
            for m in mus
        ]
        total = plds[0]
        for pld in plds[1:]:
            total = total.compose(pld)
        return float(total.get_epsilon_for_delta(1e-6))

    assert pld_eps(True) == pytest.approx(1.0, abs=3e-3)
    assert pld_eps(False) <= 1.0 + 1e-9


def test_quantile_threshold_rule():
    edges = ada.bin_edges(0.25, 5)  # 0.25, 0.5, 1, 2
    np.testing.assert_array_equal(edges, [0.25, 0.5, 1.0, 2.0])
    counts = ada.residual_histogram(np.array([0.1, -0.3, 0.6, 0.7, -1.5, 3.0]), edges)
    np.testing.assert_array_equal(counts, [1, 1, 2, 1, 1])
    assert ada.quantile_threshold(counts, edges, 4.0) == 1.0  # cumulative 1, 2, 4: the bin [0.5, 1)
    assert ada.quantile_threshold(counts, edges, 100.0) == 2.0  # never reached: the top edge
    assert ada.quantile_threshold(counts, edges, 6.0) == 2.0  # reached only in the open bin: the top edge


def test_bad_hyperparameters_are_named():
    ds = sphere(np.random.default_rng(0), n=50, d=2)
    for bad, name in [
        ({"quantile": 1.0}, "quantile"),
        ({"learning_rate": 2.5}, "learning_rate"),
        ({"bins": 2}, "bins"),
    ]:
        with pytest.raises(HyperError, match=name):
            ada.fit(ds.X_train, ds.y_train, 1.0, 1e-6, np.random.default_rng(0), **bad)


@pytest.mark.slow
def test_adaptive_clip_resists_label_corruption_better_than_a_loose_fixed_clip():
    """α = 0.1 corrupted labels, n = 20000, d = 5, ε = 1: the mean ‖θ̂ − θ*‖ over 20 fits is smaller with the
    quantile clip than with the same GD whose clip is fixed at the loose top edge (quantile → 1 − tiny)."""
    ds = sphere(np.random.default_rng(0), n=20_000, d=5, theta_norm=0.6, noise=0.3, corrupt=0.1)
    theta = ds.population.theta

    def error(**hyper) -> float:
        fits = [ada.fit(ds.X_train, ds.y_train, 1.0, 1e-6, np.random.default_rng(s), **hyper).theta for s in range(20)]
        return float(np.mean([np.linalg.norm(f - theta) for f in fits]))

    assert error(quantile=0.8) < 0.7 * error(quantile=0.999)


def test_sphere_corruption_option():
    clean = sphere(np.random.default_rng(4), n=200, d=3)
    dirty = sphere(np.random.default_rng(4), n=200, d=3, corrupt=0.1)
    changed = np.nonzero(clean.y_train != dirty.y_train)[0]
    assert changed.size == 20 and np.array_equal(clean.X_train, dirty.X_train)
    assert np.array_equal(clean.y_test, dirty.y_test) and np.array_equal(clean.population.theta, dirty.population.theta)
    signs = np.sign(dirty.X_train[changed] @ dirty.population.theta)
    np.testing.assert_allclose(dirty.y_train[changed], -signs * 1.0)
    with pytest.raises(ValueError, match="corrupt"):
        sphere(np.random.default_rng(4), n=20, d=3, corrupt=0.6)
