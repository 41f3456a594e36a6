"""Independent cross-checks of dpbench.privacy against Google's ``dp-accounting`` library.

Wherever both compute the same quantity the values must agree; where our formula is deliberately conservative the
test asserts the direction (our ε ≥ the exact ε, i.e. we never claim more privacy than there is).

Which conversion each side uses:
* AGM (ours) — exact Balle–Wang condition, solved by Brent. dp-accounting: ``GaussianPrivacyLoss`` (exact
  hockey-stick divergence of two Gaussians) and PLD accounting (discretised; pessimistic = upper bound on ε,
  optimistic = lower bound on ε).
* RDP → (ε, δ): both use Canonne, Kamath & Steinke 2020, Prop. 12. dp-accounting minimises over a fixed grid of
  orders; we minimise continuously, so ours ≤ theirs, and both ≥ the exact (PLD) ε.
* zCDP → (ε, δ) (ours, DP-GD): Bun & Steinke's ρ + 2√(ρ log 1/δ), looser than the CKS conversion of the same RDP
  curve α ↦ αρ that dp-accounting applies to a ``ZCDpEvent``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

dp_accounting = pytest.importorskip("dp_accounting")
from dp_accounting.pld import common, privacy_loss_distribution, privacy_loss_mechanism  # noqa: E402

from dpbench.mechanisms.sketch.calibration import (  # noqa: E402
    k_ihm,
    k_linmix,
    linmix_eigen_noise_std,
    sigma_ihm,
    solve_gamma_ihm,
    solve_gamma_linmix,
)
from dpbench.privacy.agm import agm_delta, epsilon_agm, sigma_agm, sigma_agm_composed  # noqa: E402
from dpbench.privacy.rdp import conversion_term, gaussian_epsilon_rdp, gaussian_rdp  # noqa: E402
from dpbench.privacy.zcdp import epsilon_from_rho, rho_from_epsilon, rho_gaussian, sigma_dpgd  # noqa: E402

EPSILONS = [0.1, 0.5, 1.0, 2.0, 5.0, 10.0]
DELTAS = [1e-3, 1e-5, 1e-8]


def pld_epsilon(sigma: float, sensitivity: float, delta: float, steps: int = 1, pessimistic: bool = True) -> float:
    """ε(δ) of a T-fold Gaussian composition by dp-accounting's privacy-loss-distribution accountant."""
    pld = privacy_loss_distribution.from_gaussian_mechanism(
        sigma, sensitivity=sensitivity, pessimistic_estimate=pessimistic, value_discretization_interval=1e-4
    )
    if steps > 1:
        pld = pld.self_compose(steps)
    return float(pld.get_epsilon_for_delta(delta))


def rdp_accountant_epsilon(event, delta: float, steps: int = 1) -> float:
    accountant = dp_accounting.rdp.RdpAccountant()
    accountant.compose(event, steps)
    return float(accountant.get_epsilon(delta))


# ------------------------------------------------------------------------------------------------------------
# analytic Gaussian mechanism


@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("delta", DELTAS)
@pytest.mark.parametrize("sensitivity", [1.0, 2.5])
def test_sigma_agm_matches_dp_accounting_smallest_gaussian(epsilon, delta, sensitivity):
    """σ_AGM(ε, δ, Δ) = dp-accounting's smallest std of a Gaussian with that (ε, δ) guarantee."""
    theirs = privacy_loss_mechanism.GaussianPrivacyLoss.from_privacy_guarantee(
        common.DifferentialPrivacyParameters(epsilon, delta), sensitivity
    ).standard_deviation
    assert sigma_agm(epsilon, delta, sensitivity) == pytest.approx(theirs, rel=1e-6)


@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("ratio", [0.05, 0.3, 1.0, 3.0])
def test_agm_delta_matches_exact_gaussian_hockey_stick(epsilon, ratio):
    """δ_Gauss(ε; σ, Δ) equals dp-accounting's exact δ of the Gaussian privacy loss."""
    sigma = 1.0 / ratio
    theirs = privacy_loss_mechanism.GaussianPrivacyLoss(sigma, 1.0).get_delta_for_epsilon(epsilon)
    assert agm_delta(epsilon, sigma, 1.0) == pytest.approx(theirs, rel=1e-7, abs=1e-15)


@pytest.mark.parametrize("epsilon", [0.25, 1.0, 4.0])
@pytest.mark.parametrize("steps", [1, 3, 10])
def test_composed_sigma_sandwiched_by_pld(epsilon, steps):
    """T releases at σ = √T·σ_AGM(ε, δ, Δ) compose to exactly (ε, δ): optimistic PLD ≤ ε ≤ pessimistic PLD."""
    delta, sensitivity = 1e-5, 1.0
    sigma = sigma_agm_composed(epsilon, delta, steps, sensitivity)
    upper = pld_epsilon(sigma, sensitivity, delta, steps, pessimistic=True)
    lower = pld_epsilon(sigma, sensitivity, delta, steps, pessimistic=False)
    assert lower <= epsilon + 1e-9 <= upper + 2e-9
    assert upper - lower < 2e-3 * max(1.0, steps / 3)


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 10.0])
def test_ihm_gradient_noise_composes_to_half_budget(epsilon):
    """IHM's σ = √T σ_AGM(ε/2, δ/4, C) (004 §3.3 #4): PLD of the T gradient releases gives ε/2 at δ/4."""
    delta, T, C = 1e-6, 3, 1.0
    sigma = sigma_ihm(epsilon / 2.0, delta, T, C)
    upper = pld_epsilon(sigma, C, delta / 4.0, T, pessimistic=True)
    lower = pld_epsilon(sigma, C, delta / 4.0, T, pessimistic=False)
    assert lower <= epsilon / 2.0 + 1e-9 <= upper + 2e-9


@pytest.mark.parametrize("epsilon", [0.1, 0.65, 2.0, 10.0])
@pytest.mark.parametrize("n", [100, 10_000])
def test_adassp_basic_composition_is_conservative(epsilon, n):
    """AdaSSP: three AGM releases at (ε/3, δ/3) each; their exact composition (PLD) has ε ≤ the claimed ε."""
    delta = 1.0 / n**2
    s = sigma_agm(epsilon / 3.0, delta / 3.0, 1.0)  # λ_min and XᵀX (Δ = 1), XᵀY (Δ = x_bound·y_bound = 1)
    pld = privacy_loss_distribution.from_gaussian_mechanism(s, sensitivity=1.0, value_discretization_interval=1e-4)
    exact_upper = float(pld.self_compose(3).get_epsilon_for_delta(delta))
    # three identical Gaussians = one with sensitivity √3 (closed form, exact)
    exact = epsilon_agm(s, delta, math.sqrt(3.0))
    assert exact <= exact_upper + 1e-3
    assert exact_upper <= epsilon
    assert exact < epsilon  # strictly conservative: the slack is what basic composition wastes


# ------------------------------------------------------------------------------------------------------------
# RDP of the Gaussian mechanism and the RDP → (ε, δ) conversion


@pytest.mark.parametrize("noise_multiplier", [0.7, 2.0, 10.0])
@pytest.mark.parametrize("steps", [1, 5])
def test_gaussian_rdp_curve_matches_rdp_accountant(noise_multiplier, steps):
    accountant = dp_accounting.rdp.RdpAccountant()
    accountant.compose(dp_accounting.GaussianDpEvent(noise_multiplier), steps)
    orders = np.asarray(accountant._orders, dtype=float)
    theirs = np.asarray(accountant._rdp, dtype=float)
    ours = steps * gaussian_rdp(orders, noise_multiplier, 1.0)
    np.testing.assert_allclose(ours, theirs, rtol=1e-10)


@pytest.mark.parametrize("alpha", [1.5, 2.0, 8.0, 64.0, 1000.0])
@pytest.mark.parametrize("delta", DELTAS)
def test_conversion_term_is_canonne_kamath_steinke_as_in_dp_accounting(alpha, delta):
    """Same conversion (CKS 2020 Prop. 12) at any single order: ε_α + conv(α, δ) = dp-accounting's value."""
    rdp = 0.3
    theirs, _ = dp_accounting.rdp.rdp_privacy_accountant.compute_epsilon([alpha], [rdp], delta)
    assert rdp + conversion_term(alpha, delta) == pytest.approx(theirs, rel=1e-12)


@pytest.mark.parametrize("sigma", [0.8, 2.0, 5.0, 20.0])
@pytest.mark.parametrize("delta", DELTAS)
@pytest.mark.parametrize("steps", [1, 3])
def test_rdp_epsilon_between_exact_and_grid_accountant(sigma, delta, steps):
    """exact (AGM of the √T-composed Gaussian) ≤ ours (continuous α) ≤ dp-accounting (grid of α)."""
    ours = gaussian_epsilon_rdp(sigma, delta, steps)
    grid = rdp_accountant_epsilon(dp_accounting.GaussianDpEvent(sigma), delta, steps)
    exact = epsilon_agm(sigma, delta, math.sqrt(steps))
    assert exact <= ours + 1e-12
    assert ours <= grid + 1e-9
    assert grid - ours < 0.05 * grid + 1e-6  # the grid costs little: same conversion, same curve


# ------------------------------------------------------------------------------------------------------------
# zCDP (DP-GD)


@pytest.mark.parametrize("rho", [1e-4, 0.01, 0.1, 1.0, 5.0])
@pytest.mark.parametrize("delta", DELTAS)
def test_zcdp_conversion_is_conservative(rho, delta):
    """Bun–Steinke ρ + 2√(ρ log 1/δ) ≥ CKS conversion of α ↦ αρ (dp-accounting ZCDpEvent) ≥ exact Gaussian ε."""
    ours = epsilon_from_rho(rho, delta)
    theirs = rdp_accountant_epsilon(dp_accounting.ZCDpEvent(rho), delta)
    sigma = 1.0 / math.sqrt(2.0 * rho)  # Gaussian with Δ = 1 has ρ = 1/(2σ²)
    exact = epsilon_agm(sigma, delta, 1.0)
    assert rho_gaussian(sigma) == pytest.approx(rho)
    assert ours >= theirs - 1e-9
    assert theirs >= exact - 1e-9
    assert rho_from_epsilon(ours, delta) == pytest.approx(rho, rel=1e-10)


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 10.0])
@pytest.mark.parametrize(("n", "T"), [(100, 3), (10_000, 20)])
def test_dpgd_sigma_is_private_under_both_neighbour_notions(epsilon, n, T):
    """DP-GD σ (004 §3.9): the exact ε of T releases with replace-one sensitivity 2C/n is ≤ ε (and, with the
    zero-out sensitivity C/n, much smaller — the calibration is conservative for spec 004's notion, #12)."""
    delta, C = 1.0 / n**2, 1.0
    sigma = sigma_dpgd(epsilon, delta, n, T, C)
    replace_one = pld_epsilon(sigma, 2.0 * C / n, delta, T, pessimistic=True)
    zero_out = epsilon_agm(sigma, delta, math.sqrt(T) * C / n)
    assert replace_one <= epsilon + 1e-9
    assert epsilon_agm(sigma, delta, math.sqrt(T) * 2.0 * C / n) <= epsilon
    assert zero_out < 0.6 * epsilon


# ------------------------------------------------------------------------------------------------------------
# classical Gaussian mechanism inside the mixing calibrations (private λ_min releases)

SETTINGS = [(eps, n, d) for eps in (0.1, 0.65, 2.5, 10.0) for n, d in ((100, 2), (1000, 5), (100_000, 10))]


@pytest.mark.parametrize(("epsilon", "n", "d"), SETTINGS)
def test_ihm_eigenvalue_release_is_conservative(epsilon, n, d):
    """IHM's λ_min(XᵀX) release: std γ/√k, Δ = 1, charged √(2 log(5/δ))·√k/γ at δ/4 (classical GM); the exact
    AGM ε of that release is smaller, including when the charged ε exceeds 1 (where the classical proof ends)."""
    delta, T = 1.0 / n**2, 3
    k = k_ihm(d, T, delta / 10.0)
    gamma = solve_gamma_ihm(epsilon / 2.0, k, delta, T)
    charged = math.sqrt(2.0 * math.log(5.0 / delta)) * math.sqrt(k) / gamma
    assert epsilon_agm(gamma / math.sqrt(k), delta / 4.0, 1.0) <= charged


def linmix_eigen_charge(epsilon: float, n: int, d: int, strict: bool) -> tuple[float, float]:
    """(charged, exact) ε of LinMix's λ_min(M_XY) release (Δ = C² = 2, std from the calibration, δ/3)."""
    delta = 1.0 / n**2
    k = k_linmix(d, delta / 10.0)
    gamma = solve_gamma_linmix(epsilon, k, delta, 2.0, strict)
    charged = (2.0 if strict else 1.0) * math.sqrt(2.0 * math.log(3.75 / delta)) * math.sqrt(k) / gamma
    exact = epsilon_agm(linmix_eigen_noise_std(gamma, k, 2.0, strict), delta / 3.0, 2.0)
    return charged, exact


@pytest.mark.parametrize(("epsilon", "n", "d"), SETTINGS)
def test_linmix_strict_eigenvalue_release_is_conservative(epsilon, n, d):
    charged, exact = linmix_eigen_charge(epsilon, n, d, strict=True)
    assert exact <= charged


@pytest.mark.xfail(
    strict=True,
    reason="004 ambiguity #7: LinMix's code variant (default, as in the authors' figures) adds eigenvalue noise "
    "√2γ/√k for sensitivity C² = 2 but charges √(2 log(3.75/δ))√k/γ, under-counting by √2 (docs/privacy.md)",
)
def test_linmix_code_eigenvalue_release_is_conservative():
    for epsilon, n, d in SETTINGS:
        charged, exact = linmix_eigen_charge(epsilon, n, d, strict=False)
        assert exact <= charged, (epsilon, n, d, charged, exact)


def test_linmix_code_variant_overrun_is_bounded():
    """Quantify the code variant's under-count: the total ε it really spends (eigen part at its exact AGM value)
    exceeds the claim by < 10% of ε at the benchmark's settings; the strict variant never exceeds it."""
    worst = 0.0
    for epsilon, n, d in SETTINGS:
        charged, exact = linmix_eigen_charge(epsilon, n, d, strict=False)
        worst = max(worst, (exact - charged) / epsilon)
    assert 0.0 < worst < 0.1
