"""DP-GD with exact GDP accounting (spec 005 §4): calibration vectors, dp-accounting, strict profile, the path."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpbench import registry
from dpbench.data.synthetic import load as sphere
from dpbench.mechanisms.gradient import dpgd
from dpbench.privacy.agm import sigma_agm_composed
from dpbench.privacy.gdp import gdp_epsilon, gdp_mu

dp_accounting = pytest.importorskip("dp_accounting")
from dp_accounting.pld import privacy_loss_distribution  # noqa: E402

#: spec 005 §4 test vector: n = 2500, p = 5, T = 50, γ = 5√5, ε = 1, δ = 1e-6
N, T, GAMMA, EPS, DELTA = 2500, 50, 5.0 * math.sqrt(5.0), 1.0, 1e-6


def test_gdp_sigma_matches_spec_vector():
    """Zero-out (Δ = γ/n): s = √T·γ/(n·μ*) = 0.13360 with μ*(1, 1e-6) = 0.236704; dpgd (replace-one, Δ = 2γ/n) 2×."""
    assert gdp_mu(EPS, DELTA) == pytest.approx(0.236704, abs=5e-7)
    assert sigma_agm_composed(EPS, DELTA, T, GAMMA / N) == pytest.approx(0.13360, abs=5e-6)
    ours = dpgd.dpgd_sigma(EPS, DELTA, N, T, GAMMA, "gdp")
    assert ours == pytest.approx(2.0 * math.sqrt(T) * GAMMA / (N * 0.236704), rel=2e-6)


def test_brown_prototype_constant_is_over_its_claim():
    """Spec 005 §4/§11: the prototype's s² = T log(1/δ) γ²/(ε² n²) is μ = ε/√log(1/δ)-GDP under zero-out (2μ under
    replace-one): exact ε 1.148 / 2.444 at the claimed (1, 1e-6)."""
    s = math.sqrt(T * math.log(1 / DELTA)) * GAMMA / (EPS * N)
    assert s == pytest.approx(0.11754, abs=5e-6)
    mu = math.sqrt(T) * (GAMMA / N) / s
    assert gdp_epsilon(mu, DELTA) == pytest.approx(1.148, abs=5e-4)
    assert gdp_epsilon(2 * mu, DELTA) == pytest.approx(2.444, abs=5e-4)


@pytest.mark.parametrize(("epsilon", "n", "steps"), [(0.3, 1000, 3), (1.0, N, T), (4.0, 500, 20)])
def test_gdp_sigma_is_exactly_epsilon_by_dp_accounting(epsilon, n, steps):
    """PLD of T Gaussians (Δ = 2C/n, σ): pessimistic ε ≥ claim − 2e-3 and optimistic ε ≤ claim + 1e-9 — exact, not
    merely ≤; the zCDP σ is larger (spends less)."""
    C = 1.0
    sigma = dpgd.dpgd_sigma(epsilon, 1e-6, n, steps, C, "gdp")

    def pld_eps(pessimistic: bool) -> float:
        pld = privacy_loss_distribution.from_gaussian_mechanism(
            sigma, sensitivity=2.0 * C / n, pessimistic_estimate=pessimistic, value_discretization_interval=1e-4
        ).self_compose(steps)
        return float(pld.get_epsilon_for_delta(1e-6))

    assert pld_eps(True) == pytest.approx(epsilon, abs=2e-3 * max(1.0, epsilon))
    assert pld_eps(False) <= epsilon + 1e-9
    zcdp = dpgd.dpgd_sigma(epsilon, 1e-6, n, steps, C, "zcdp")
    assert 1.05 * sigma < zcdp < 1.6 * sigma


def test_strict_profile_uses_gdp_and_paper_keeps_zcdp():
    registry.discover()
    info = registry.get_mechanism("dpgd")
    assert info.hyperparameters()["accounting"] == "zcdp"
    assert info.with_profile({}, "strict")["accounting"] == "gdp"
    assert info.with_profile({}, "paper") == {}
    assert info.with_profile({"accounting": "zcdp"}, "strict")["accounting"] == "zcdp"  # the user's value wins


def test_bad_accounting_is_named():
    ds = sphere(np.random.default_rng(0), n=50, d=2)
    with pytest.raises(ValueError, match="accounting"):
        dpgd.fit(ds.X_train, ds.y_train, 1.0, 1e-5, np.random.default_rng(0), accounting="rdp")


def test_path_is_the_released_iterates():
    """info['path'] = θ_0 = 0, …, θ_T with θ_T the estimate; same rng ⇒ same noise, only σ differs by accounting."""
    ds = sphere(np.random.default_rng(1), n=300, d=3, theta_norm=0.5, noise=0.3)
    out = dpgd.fit(ds.X_train, ds.y_train, 1.0, 1e-5, np.random.default_rng(7), T=6)
    path = out.info["path"]
    assert path.shape == (7, 3) and np.all(path[0] == 0) and np.array_equal(path[-1], out.theta)
    gdp = dpgd.fit(ds.X_train, ds.y_train, 1.0, 1e-5, np.random.default_rng(7), T=6, accounting="gdp")
    assert gdp.info["sigma"] < out.info["sigma"]
    assert not np.array_equal(gdp.theta, out.theta)
