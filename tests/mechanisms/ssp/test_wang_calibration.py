"""Calibrations of the Wang 2018 companions and of objective perturbation against spec 005's test vectors (§2a, §6,
§11), by round trip, and against dp-accounting where it computes the same quantity."""

from __future__ import annotations

import math

import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as pld

from dpbench.mechanisms.ssp import calibration as cal
from dpbench.mechanisms.ssp.objpert import objpert_delta, objpert_sigma

DELTA = 1e-6


@pytest.mark.parametrize(("claimed", "spent"), [(0.1, 0.134), (1.0, 1.587), (10.0, 23.2)])
def test_wang_ssp_spends_the_spec_epsilon(claimed, spent):
    assert cal.wang_ssp_epsilon(claimed, DELTA) == pytest.approx(
        spent, abs=0.5 * 10 ** -(len(str(spent).split(".")[1]))
    )


@pytest.mark.parametrize(("claimed", "spent"), [(0.1, 0.051), (1.0, 0.596), (10.0, 7.57)])
def test_wang_adassp_spends_the_spec_epsilon(claimed, spent):
    assert cal.wang_adassp_epsilon(claimed, DELTA) == pytest.approx(
        spent, abs=0.5 * 10 ** -(len(str(spent).split(".")[1]))
    )


@pytest.mark.parametrize(("releases", "sigma_of", "spent_of"), [
    (2, cal.wang_ssp_sigma, cal.wang_ssp_epsilon), (3, cal.wang_adassp_sigma, cal.wang_adassp_epsilon),
])  # fmt: skip
def test_wang_exact_epsilon_matches_dp_accounting(releases, sigma_of, spent_of):
    sigma = sigma_of(1.0, DELTA)
    one = pld.from_gaussian_mechanism(sigma, value_discretization_interval=1e-4)
    total = one
    for _ in range(releases - 1):
        total = total.compose(one)
    assert spent_of(1.0, DELTA) == pytest.approx(total.get_epsilon_for_delta(DELTA), rel=2e-3)


def test_wang_objpert_std_is_the_spec_vector():
    assert cal.wang_objpert_sigma(1.0, 1e-5) == pytest.approx(14.2582, abs=5e-5)
    assert cal.wang_objpert_ridge(1.0) == pytest.approx(2.0)  # XᵀX + I + (Λ/ε − 1)I with Λ = 2/ε: +1·I on top of I


def test_amp_constants_are_the_spec_vector():
    amp = cal.amp_constants(1.0, 1e-5, 10**4, lipschitz=2.0, smoothness=1.0, rank=2)
    assert amp.epsilon_p == pytest.approx(0.8910, rel=1e-6)
    assert amp.ridge == pytest.approx(20.2020, rel=1e-5)
    assert amp.sigma_obj == pytest.approx(2.60409e-3, rel=1e-5)
    assert amp.sigma_out == pytest.approx(3.30546e-3, rel=1e-5)


@pytest.mark.parametrize("epsilon", [0.01, 0.1, 1.0, 10.0])
@pytest.mark.parametrize("delta", [1e-6, 1e-5])
def test_objpert_sigma_round_trip(epsilon, delta):
    sigma, ridge = objpert_sigma(epsilon, delta, 2.0)
    assert ridge == pytest.approx(2.0 / epsilon)
    assert objpert_delta(sigma, epsilon, 2.0) == pytest.approx(delta, rel=1e-9)
    assert objpert_delta(0.99 * sigma, epsilon, 2.0) > delta  # tight: less noise certifies less


def test_objpert_gaussian_part_is_at_least_the_analytic_gaussian_at_its_share():
    """The tail bound is stronger than (ε_g, δ)-DP of a Gaussian of sensitivity L, so σ_b ≥ σ_AGM(ε_g, δ, L)."""
    from dpbench.privacy.agm import sigma_agm

    for epsilon in (0.05, 1.0, 10.0):
        sigma, _ = objpert_sigma(epsilon, DELTA, 2.0)
        assert sigma >= sigma_agm(epsilon - math.log1p(epsilon / 2.0), DELTA, 2.0)


def test_positive_root_solves_the_quadratic():
    a, b, c = 0.3, 2.0, -0.7
    u = cal.positive_root(a, b, c)
    assert u > 0 and a * u * u + b * u + c == pytest.approx(0.0, abs=1e-14)
    with pytest.raises(ValueError, match="c < 0"):
        cal.positive_root(1.0, 1.0, 0.5)


def test_adaops_epsilon_bar_is_the_root_of_step_3():
    ell = math.log(6.0 / DELTA)
    for epsilon in (0.01, 1.0, 10.0):
        e = cal.adaops_epsilon_bar(epsilon, DELTA)
        assert ell / 2 * e * e + e - epsilon / 4 == pytest.approx(0.0, abs=1e-15)


@pytest.mark.parametrize("epsilon", [0.01, 0.1, 1.0, 10.0])
@pytest.mark.parametrize("lam_min", [0.0, 50.0, 5000.0])
def test_adaops_ridge_is_the_constrained_minimiser(epsilon, lam_min):
    ell = math.log(6.0 / DELTA)
    c1 = cal.ops_c1(cal.adaops_epsilon_bar(epsilon, DELTA), DELTA / 3, 100)
    c2 = ell / (epsilon / 4)
    target = max(0.0, 2 * (1 + ell) / epsilon - lam_min)
    ridge = cal.adaops_ridge(target, lam_min, c1, c2)
    grid = target + np.geomspace(1e-6, 1e7, 4000) - 1e-6
    best = min(cal.adaops_objective(t, lam_min, c1, c2) for t in grid)
    assert ridge.value >= target
    assert cal.adaops_objective(ridge.value, lam_min, c1, c2) <= best * (1 + 1e-9)


def test_ops_balanced_root_and_ridge_floor():
    ops = cal.ops_balanced(1.0, DELTA, 10_000, 10)
    log2d = math.log(2 / DELTA)
    assert ops.ridge >= (1 + log2d) / 1.0
    a, b = ops.lipschitz**2 / (ops.ridge + 1), ops.lipschitz * math.sqrt(log2d / ops.ridge)
    c = (1 + log2d) / (2 * ops.ridge) - 1.0
    u = ops.sqrt_gamma
    assert a * u * u + b * u + c == pytest.approx(0.0, abs=1e-12)
