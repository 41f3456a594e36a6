"""Noise calibrations of the Stein-lemma NLDP GLM estimators (Wang, Hu, Zhang, Gaboardi, Xu, JMLR 2023; spec 003 §2).

Every user makes two Gaussian releases (x̄ x̄ᵀ and x̄ y), each (ε/2, δ/2)-LDP; basic composition gives (ε, δ)-LDP
per user (spec 003 §2.1, C12). Sensitivities are replace-one over the user's domain (spec 003 §2.2):

* ‖x̄x̄ᵀ − x̄'x̄'ᵀ‖_F ≤ 2r²      (upper triangle incl. diagonal has norm ≤ the Frobenius norm)
* ‖x̄y − x̄'y'‖₂   ≤ 2r·B_y      (|y| ≤ B_y)

``calibration="analytic"`` (the default since issue 15): σ = σ_AGM(ε′, δ′, Δ), the exact analytic Gaussian
mechanism (Balle & Wang 2018), valid for every ε′ > 0.

``calibration="classical"`` (the paper's, kept for the paper-literal curves): σ = √(2 log(1.25/δ′))·Δ/ε′ (Lemma 4),
so with Λ(δ) = log(2.5/δ) (spec 003 §2.3) s_xx = √(32 Λ) r²/ε, s_xy = √(32 Λ) r B_y/ε. **That formula is a theorem
only for ε′ < 1** (Dwork & Roth Thm A.1); the paper uses it at ε′ = ε/2 up to 10, where it is *not* (ε, δ)-DP: at
ε = 20 (ε′ = 10, δ′ = δ/2) and the paper's δ = n^−1.1 (n = 10⁵ … 7·10⁵), σ is 1.5–2.2% below the smallest valid σ
and the true per-user ε is ≈ 20.4–20.6 (2.7% and 20.7 at δ = 10⁻⁵)
(:func:`classical_overrun`, docs/deviations.md).

2-round baselines (App. E, spec 003 §2.3): round 1 at (ε/4, δ/2) per release, round 2 at (ε/2, δ/2) with the width
Δ_y of the projection interval (classical: s_xx = √(128 Λ) r²/ε, s_xy = √(128 Λ) r B_y/ε, s_y = √(8 Λ) Δ_y/ε);
total (ε, 1.5δ).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dpbench.privacy.agm import epsilon_agm, sigma_agm, sigma_classical
from dpbench.privacy.validate import check_delta, check_epsilon, check_positive

CALIBRATIONS = ("analytic", "classical")


def log_term(delta: float) -> float:
    """Λ(δ) = log(2.5/δ) = log(1.25/(δ/2)) (spec 003 §2.3)."""
    return math.log(2.5 / check_delta(delta))


def gm_sigma(epsilon: float, delta: float, sensitivity: float, calibration: str = "analytic") -> float:
    """Gaussian-mechanism std for one release: analytic σ_AGM(ε, δ, Δ) (default, exact for every ε) or the paper's
    classical √(2 log(1.25/δ))Δ/ε (a theorem only for ε < 1; module docstring)."""
    if calibration == "classical":
        return sigma_classical(epsilon, delta, sensitivity)
    if calibration == "analytic":
        return sigma_agm(epsilon, delta, sensitivity)
    raise ValueError(f"calibration must be one of {CALIBRATIONS}, got {calibration!r}")


@dataclass(frozen=True)
class SteinScales:
    """Per-user noise stds of one mechanism run and the privacy it spends (per user, basic composition)."""

    s_xx: float  # per upper-triangle entry of E_1
    s_xy: float  # per coordinate of E_2
    s_y: float  # round-2 std (2-round baselines only, else 0)
    epsilon_spent: float
    delta_spent: float


def stein_noise_scales(
    epsilon: float, delta: float, r: float, y_bound: float, calibration: str = "analytic"
) -> SteinScales:
    """Algorithms 1–4: s_xx = σ(ε/2, δ/2, 2r²), s_xy = σ(ε/2, δ/2, 2r·B_y) (spec 003 §2.2–§2.3)."""
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    r, y_bound = check_positive(r, "r"), check_positive(y_bound, "y_bound")
    s_xx = gm_sigma(epsilon / 2, delta / 2, 2 * r**2, calibration)
    s_xy = gm_sigma(epsilon / 2, delta / 2, 2 * r * y_bound, calibration)
    return SteinScales(s_xx, s_xy, 0.0, epsilon, delta)


def two_round_noise_scales(
    epsilon: float, delta: float, r: float, y_bound: float, y_width: float, calibration: str = "analytic"
) -> SteinScales:
    """2-round baselines: σ(ε/4, δ/2, 2r²), σ(ε/4, δ/2, 2rB_y), σ(ε/2, δ/2, Δ_y); spends (ε, 1.5δ) (§2.3, A12)."""
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    r, y_bound = check_positive(r, "r"), check_positive(y_bound, "y_bound")
    y_width = check_positive(y_width, "y_width")
    s_xx = gm_sigma(epsilon / 4, delta / 2, 2 * r**2, calibration)
    s_xy = gm_sigma(epsilon / 4, delta / 2, 2 * r * y_bound, calibration)
    s_y = gm_sigma(epsilon / 2, delta / 2, y_width, calibration)
    return SteinScales(s_xx, s_xy, s_y, epsilon, 1.5 * delta)


def classical_overrun(epsilon_release: float, delta_release: float) -> float:
    """True ε of one release calibrated by the classical formula at (ε′, δ′): ε_AGM(σ_classical, δ′, 1) (> ε′ for
    large ε′, where the classical formula is outside its theorem)."""
    return epsilon_agm(sigma_classical(epsilon_release, delta_release, 1.0), delta_release, 1.0)


def clip_radius(p: int, sigma_op_norm: float, n: int, const: float = 20.0) -> float:
    """r = √(const · p · ‖Σ_m‖₂ · log n) (Alg 1/3: const 20; Alg 5: 10 with the true ‖Σ‖₂; spec 003 §3.2, A30)."""
    if p < 1 or n < 2:
        raise ValueError(f"clip_radius needs p ≥ 1 and n ≥ 2, got p={p}, n={n}")
    check_positive(sigma_op_norm, "sigma_op_norm")
    return math.sqrt(const * p * sigma_op_norm * math.log(n))


def n_star(p: int, s_xx: float, lam_min_sigma: float) -> float:
    """Regime threshold n* = 16 p s_xx² / λ_min(Σ)² of Lemma 34 (spec 003 C7): below it the summed noise
    ‖Σ_i E_{1,i}‖₂ ≈ 2√(p n) s_xx exceeds λ_min(nΣ)/2 and the private XᵀX is noise-dominated."""
    check_positive(lam_min_sigma, "lam_min_sigma")
    return 16.0 * p * s_xx**2 / lam_min_sigma**2
