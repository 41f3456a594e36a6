"""Privacy calibrations against spec 004 §3.11's test vectors, plus round trips (ε(γ/σ) ≤ target, tight)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpbench.mechanisms.sketch import calibration as mixing
from dpbench.privacy import agm, rdp, zcdp

# the table's ε column is np.logspace(−1, 1, 6) printed to 4 decimals (plus ε = 1)
EPSILONS = sorted([*np.logspace(-1, 1, 6).tolist(), 1.0])
# 004 §3.11, n = 1000, d = 10, T = 3, δ = 1/n², ϱ = δ/10: (γ_IHM, σ_IHM, γ_LinMix, s₁, σ_DPGD)
TABLE_N1000_PRINTED = {
    0.1: (2298.35, 130.984, 855.260, 108.686, 0.18242),
    0.2512: (941.973, 55.029, 353.914, 45.806, 0.072820),
    0.6310: (385.816, 23.077, 146.742, 19.246, 0.029185),
    1.0: (246.975, 14.9505, 94.7110, 12.4712, 0.018533),
    1.5849: (158.193, 9.6970, 61.321, 8.0854, 0.011810),
    3.9811: (65.179, 4.1125, 26.181, 3.4154, 0.0048826),
    10.0: (27.2247, 1.78416, 11.7757, 1.46607, 0.0021058),
}
TABLE_N1000 = {eps: TABLE_N1000_PRINTED[round(eps, 4)] for eps in EPSILONS}
# other sizes: (n, d, ε) -> (γ_IHM, σ_IHM, γ_LinMix, s₁)
TABLE_OTHER = {
    (13500, 26, 0.1): (3314.33, 167.414, 1291.29, 141.053),
    (13500, 26, 10.0): (37.3952, 2.08186, 16.206, 1.73316),
    (92, 7, 0.1): (1485.34, 89.8425, 536.184, 71.783),
    (92, 7, 10.0): (19.3146, 1.46849, 8.62094, 1.18041),
}


def check_printed(ours: float, printed: float) -> None:
    """Agreement to half a unit in the last decimal the spec prints (trailing zeros are lost in floats)."""
    text = repr(printed)
    decimals = len(text.split(".")[1]) if "." in text and "e" not in text else 0
    assert ours == pytest.approx(printed, abs=0.5 * 10.0**-decimals * (1 + 1e-9))


def calibrations(n: int, d: int, epsilon: float) -> tuple[float, float, float, float]:
    delta = 1.0 / n**2
    rho = delta / 10.0
    k = mixing.k_ihm(d, 3, rho)
    k_lin = mixing.k_linmix(d, rho)
    return (
        mixing.solve_gamma_ihm(epsilon / 2.0, k, delta, 3),
        mixing.sigma_ihm(epsilon / 2.0, delta, 3, 1.0),
        mixing.solve_gamma_linmix(epsilon, k_lin, delta),
        agm.sigma_agm(epsilon / 3.0, delta / 3.0, 1.0),
    )


def test_sketch_sizes_and_shifts() -> None:
    delta = 1e-6
    assert mixing.k_ihm(10, 3, delta / 10) == 111
    assert mixing.k_linmix(10, delta / 10) == 42
    assert mixing.tau_ihm(delta, delta / 10) == pytest.approx(5.9168, abs=5e-5)
    assert mixing.tau_linmix(delta, delta / 10) == pytest.approx(5.7985, abs=5e-5)
    for n, d, k, k_lin in [(13500, 26, 156, 65), (92, 7, 82, 30)]:
        assert mixing.k_ihm(d, 3, 0.1 / n**2) == k
        assert mixing.k_linmix(d, 0.1 / n**2) == k_lin
    assert mixing.k_ihm(385, 3, 0.1 / 48150**2) == 2310


@pytest.mark.parametrize("epsilon", EPSILONS)
def test_table_n1000(epsilon: float) -> None:
    gamma_ihm, sigma_ihm, gamma_lin, s1, sigma_gd = TABLE_N1000[epsilon]
    ours = calibrations(1000, 10, epsilon)
    for value, printed in zip(ours, (gamma_ihm, sigma_ihm, gamma_lin, s1), strict=True):
        check_printed(value, printed)
    check_printed(zcdp.sigma_dpgd(epsilon, 1e-6, 1000, 3, 1.0), sigma_gd)


@pytest.mark.parametrize("key", sorted(TABLE_OTHER))
def test_table_other_sizes(key: tuple[int, int, float]) -> None:
    for value, printed in zip(calibrations(*key), TABLE_OTHER[key], strict=True):
        check_printed(value, printed)


@pytest.mark.parametrize("epsilon", [0.05, 0.5, 2.0, 20.0])
@pytest.mark.parametrize("delta", [1e-12, 1e-6, 1e-3])
def test_agm_round_trip_is_tight(epsilon: float, delta: float) -> None:
    sigma = agm.sigma_agm(epsilon, delta, 1.0)
    assert agm.agm_delta(epsilon, sigma) <= delta * (1 + 1e-9)
    assert agm.agm_delta(epsilon, sigma * (1 - 1e-7)) > delta
    assert agm.epsilon_agm(sigma, delta) == pytest.approx(epsilon, rel=1e-9)
    # scale equivariance and the classical mechanism being looser (for ε ≤ 1)
    assert agm.sigma_agm(epsilon, delta, 3.0) == pytest.approx(3.0 * sigma, rel=1e-12)
    if epsilon <= 1:
        assert agm.sigma_classical(epsilon, delta) > sigma


def test_agm_composition_matches_rdp_direction() -> None:
    """√T·σ_AGM is exact for T-fold composition; the RDP bound on it must be looser (≥ target ε)."""
    sigma = agm.sigma_agm_composed(1.0, 1e-6, steps=3)
    assert rdp.gaussian_epsilon_rdp(sigma, 1e-6, steps=3) >= 1.0
    assert agm.epsilon_agm(sigma / math.sqrt(3), 1e-6) == pytest.approx(1.0, rel=1e-9)


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 10.0])
@pytest.mark.parametrize("n,d", [(92, 7), (1000, 10), (13500, 26)])
def test_gamma_round_trips_are_tight(epsilon: float, n: int, d: int) -> None:
    delta = 1.0 / n**2
    rho = delta / 10.0
    k = mixing.k_ihm(d, 3, rho)
    gamma = mixing.solve_gamma_ihm(epsilon / 2.0, k, delta, 3)
    assert mixing.epsilon_ihm_sketch(gamma, k, delta, 3) <= epsilon / 2.0
    assert mixing.epsilon_ihm_sketch(gamma * (1 - 1e-8), k, delta, 3) > epsilon / 2.0
    k_lin = mixing.k_linmix(d, rho)
    for strict in (False, True):
        gamma_lin = mixing.solve_gamma_linmix(epsilon, k_lin, delta, strict=strict)
        assert mixing.epsilon_linmix(gamma_lin, k_lin, delta, strict=strict) <= epsilon
        assert mixing.epsilon_linmix(gamma_lin * (1 - 1e-8), k_lin, delta, strict=strict) > epsilon
    # strict accounting charges the eigenvalue release C² = 2 times more → needs more noise
    assert mixing.solve_gamma_linmix(epsilon, k_lin, delta, strict=True) > mixing.solve_gamma_linmix(
        epsilon, k_lin, delta
    )


def test_alpha_minimisation_matches_brute_force() -> None:
    gamma, k, delta = 300.0, 111, 2.5e-7
    alphas = 1 + np.geomspace(1e-6, gamma - 1 - 1e-6, 200_000)
    brute = np.min(3 * rdp.mixing_rdp(alphas, k, gamma) + rdp.conversion_term(alphas, delta))
    ours = mixing.mixing_sketch_epsilon(gamma, k, 3, delta)
    assert ours <= brute + 1e-12
    assert ours == pytest.approx(brute, rel=1e-7)


def test_mixing_rdp_is_linear_in_k_and_tends_to_gaussian() -> None:
    alpha = np.array([1.5, 4.0, 20.0])
    assert np.allclose(rdp.mixing_rdp(alpha, 30, 500.0), 3 * rdp.mixing_rdp(alpha, 10, 500.0))
    # for γ → ∞, φ(α; k, γ) ≈ kα/(4γ²)·… is positive, increasing in α and decreasing in γ
    values = rdp.mixing_rdp(alpha, 10, 500.0)
    assert np.all(np.diff(values) > 0) and np.all(values > 0)
    assert np.all(rdp.mixing_rdp(alpha, 10, 1000.0) < values)


def test_theorem1_closed_forms_spend_exactly_epsilon() -> None:
    k, T, delta = 111, 3, 1e-6
    for epsilon in (0.1, 1.0, 10.0):
        gamma = mixing.theorem1_gamma(epsilon, k, T, delta)
        sigma = mixing.theorem1_sigma(epsilon, T, delta)
        assert mixing.theorem1_epsilon_bound(gamma, sigma, k, T, delta) == pytest.approx(epsilon, rel=1e-12)
        # the closed forms are upper bounds: more noise than the exact numerical calibration
        assert gamma > mixing.solve_gamma_ihm(epsilon / 2, k, delta, T)
        assert sigma > mixing.sigma_ihm(epsilon / 2, delta, T)


def test_zcdp_round_trip() -> None:
    for epsilon in (0.1, 1.0, 10.0):
        for delta in (1e-10, 1e-5):
            rho = zcdp.rho_from_epsilon(epsilon, delta)
            assert zcdp.epsilon_from_rho(rho, delta) == pytest.approx(epsilon, rel=1e-12)
    sigma = zcdp.sigma_dpgd(1.0, 1e-6, 1000, 3, 1.0)
    target = zcdp.rho_from_epsilon(1.0, 1e-6)
    assert 3 * zcdp.rho_gaussian(sigma, 2.0 / 1000) == pytest.approx(target, rel=1e-12)


@pytest.mark.parametrize(
    "call, field",
    [
        (lambda: agm.sigma_agm(0.0, 1e-6), "epsilon"),
        (lambda: agm.sigma_agm(-1.0, 1e-6), "epsilon"),
        (lambda: agm.sigma_agm(1.0, 1.0), "delta"),
        (lambda: agm.sigma_agm(1.0, float("nan")), "delta"),
        (lambda: agm.sigma_agm(1.0, 1e-6, 0.0), "sensitivity"),
        (lambda: mixing.solve_gamma_ihm(1.0, 0, 1e-6, 3), "k"),
        (lambda: mixing.solve_gamma_ihm(1.0, 10, 1e-6, 0), "T"),
        (lambda: zcdp.sigma_dpgd(1.0, 1e-6, 0, 3), "n"),
    ],
)
def test_bad_arguments_name_the_field(call, field: str) -> None:
    with pytest.raises(ValueError, match=field):
        call()


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf"), 5e-11, 2e10, "one"])
def test_the_one_range_check_of_epsilon_in_the_calibrations_names_it(bad):
    """check_epsilon is the calibrations' one ε check: finite, > 0, in the supported range (ends included)."""
    from dpbench.privacy.validate import EPSILON_RANGE, check_epsilon

    assert [check_epsilon(e) for e in EPSILON_RANGE] == list(EPSILON_RANGE)
    with pytest.raises(ValueError, match=r"^epsilon/2 must be"):
        check_epsilon(bad, "epsilon/2")
