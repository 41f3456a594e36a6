"""Privacy calibration of information-weighted regression (spec 000 §1.3, §3.13, §4.3). Pure functions.

Stable public names (imported by the bandit algorithms of spec 000/001 as well as the regression mechanisms):

* :func:`sigma_chen` — the paper's Gaussian scale σ_{α,β} = 4√(log(2.5/β))/α (Def. 2/3, α ∈ (0, 1]).
* :func:`gaussian_std` — std for an l2-sensitivity ``s`` under one of the three calibration families
  ``"paper"`` (2√(log(2.5/δ))·s/ε; certifies (ε, δ/2); ε ≤ 1 only), ``"classical"`` (Dwork–Roth
  √(2 log(1.25/δ))·s/ε; ε ≤ 1 only) and ``"agm"`` (analytic Gaussian mechanism, any ε > 0).
* :func:`priv_std` — std of the paper's ``Priv_Δ`` / ``SymPriv_Δ`` with *half*-sensitivity Δ: σ_{α,β}·Δ.
* the releases themselves (``priv``, ``sym_priv``, the l2-ball sampler) draw random numbers and live with the
  mechanisms in :mod:`dpbench.mechanisms.iwr.noise` (this module is pure: no data, no randomness).
* :func:`release_stds` — stds of m ≤ 2 releases on the same record: the paper splits the budget (each release
  at (ε/m, δ), i.e. Δ doubled when m = 2); the generic families release them jointly at (ε, δ) (§3.13).
* :func:`neighbour_factor` — 1 for replace-one neighbours, ½ for zero-out in the central model (§4.3).
* :func:`laplace_scale`, :func:`l2ball_radius` — scales of the pure-LDP channels (Alg 1, Alg 9).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from scipy.special import gammaln

from dpbench.privacy.agm import sigma_agm
from dpbench.privacy.validate import check_delta, check_epsilon, check_positive

CALIBRATIONS = ("paper", "classical", "agm")
#: neighbour notions; "replace_one" is accepted as a synonym of "replace" (registry spelling)
NEIGHBOUR_NOTIONS = ("replace", "zero_out")


def check_calibration(calibration: str, epsilon: float) -> str:
    """Validate a calibration family for budget ε; ``paper`` and ``classical`` are only valid for ε ≤ 1."""
    if calibration not in CALIBRATIONS:
        raise ValueError(f"calibration must be one of {CALIBRATIONS}, got {calibration!r}")
    if calibration in ("paper", "classical") and epsilon > 1.0:
        raise ValueError(
            f"calibration={calibration!r} requires epsilon ≤ 1 (spec 000 §1.3: the formula is only claimed "
            f"for α ∈ (0, 1]), got epsilon = {epsilon}; use calibration='agm' for ε > 1"
        )
    return calibration


def check_neighbour(neighbour: str) -> str:
    """Normalise the neighbour notion (``replace`` / ``replace_one`` / ``zero_out``)."""
    if neighbour == "replace_one":
        return "replace"
    if neighbour not in NEIGHBOUR_NOTIONS:
        raise ValueError(f"neighbour must be 'replace' (or 'replace_one') or 'zero_out', got {neighbour!r}")
    return neighbour


def neighbour_factor(neighbour: str, model: str = "central") -> float:
    """Multiplier of every central sensitivity: ½ for zero-out neighbours (a zeroed record contributes exactly 0
    to every statistic, spec 000 §3.13), 1 for replace-one; local randomisers are unaffected (factor 1)."""
    neighbour = check_neighbour(neighbour)
    if model not in ("central", "local"):
        raise ValueError(f"model must be 'central' or 'local', got {model!r}")
    return 0.5 if (neighbour == "zero_out" and model == "central") else 1.0


def sigma_chen(alpha: float, beta: float) -> float:
    """σ_{α,β} = 4√(log(2.5/β))/α (spec 000 §1.3, Def. 2/3); ``N(F(z), σ²Δ²I)`` with Δ ≥ half-sensitivity is
    (α, β/2)-DP. Raises for α ∉ (0, 1] or β ∉ (0, 1]."""
    alpha = check_epsilon(alpha, "alpha")
    if alpha > 1.0:
        raise ValueError(f"sigma_chen: alpha must lie in (0, 1] (spec 000 §1.3), got {alpha}")
    if not (0.0 < float(beta) <= 1.0):
        raise ValueError(f"sigma_chen: beta must lie in (0, 1], got {beta!r}")
    return 4.0 * math.sqrt(math.log(2.5 / float(beta))) / alpha


def gaussian_std(l2_sens: float, epsilon: float, delta: float, calibration: str = "paper") -> float:
    """Gaussian noise std for l2-sensitivity ``l2_sens`` at budget (ε, δ) (spec 000 §1.3 mapping table).

    ``paper``: 2√(log(2.5/δ))·s/ε = σ_{ε,δ}·(s/2), certifies (ε, δ/2), requires ε ≤ 1.
    ``classical``: √(2 log(1.25/δ))·s/ε (Dwork–Roth), requires ε ≤ 1.
    ``agm``: σ_AGM(ε, δ, s) (Balle–Wang; :func:`dpbench.privacy.agm.sigma_agm`), any ε > 0.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    l2_sens = check_positive(l2_sens, "l2_sens")
    check_calibration(calibration, epsilon)
    if calibration == "paper":
        return sigma_chen(epsilon, delta) * l2_sens / 2.0
    if calibration == "classical":
        return math.sqrt(2.0 * math.log(1.25 / delta)) * l2_sens / epsilon
    return sigma_agm(epsilon, delta, l2_sens)


def priv_std(half_sens: float, alpha: float, beta: float) -> float:
    """Std of the paper's ``Priv_Δ`` / ``SymPriv_Δ`` (Δ = half-sensitivity bound): σ_{α,β}·Δ (§1.3)."""
    return sigma_chen(alpha, beta) * check_positive(half_sens, "half_sens")


def release_stds(sensitivities: Sequence[float], epsilon: float, delta: float, calibration: str) -> list[float]:
    """Stds of m ∈ {1, 2} Gaussian releases on the same records, (ε, δ)-DP together (§3.13).

    ``paper``: the paper's budget split — each release at (ε/m, δ) by :func:`gaussian_std` (so each certifies
    (ε/m, δ/2); for m = 2 this is exactly the doubled-Δ convention ``Priv_{2Δ}``). Generic families: one joint
    release of the concatenation, l2-sensitivity √(Σ s_i²), at (ε, δ) (tighter than splitting).
    """
    sens = [check_positive(s, "sensitivity") for s in sensitivities]
    if not 1 <= len(sens) <= 2:
        raise ValueError(f"release_stds handles 1 or 2 releases, got {len(sens)}")
    check_calibration(calibration, epsilon)
    if calibration == "paper":
        return [gaussian_std(s, epsilon / len(sens), delta, "paper") for s in sens]
    joint = gaussian_std(math.sqrt(sum(s * s for s in sens)), epsilon, delta, calibration)
    return [joint] * len(sens)


def laplace_scale(sensitivity: float, epsilon: float) -> float:
    """Laplace scale b = s/ε for a scalar with sensitivity s at pure ε-DP (§1.3)."""
    return check_positive(sensitivity, "sensitivity") / check_epsilon(epsilon)


def l2ball_radius(epsilon: float, d: int) -> float:
    """Radius M = ((e^ε+1)/(e^ε−1))·√π·Γ((d+1)/2)/Γ(d/2) of the Duchi–Jordan–Wainwright l2-ball sampler (§3.6)."""
    epsilon = check_epsilon(epsilon)
    if d < 1:
        raise ValueError(f"d must be ≥ 1, got {d}")
    ratio = math.exp(gammaln((d + 1) / 2.0) - gammaln(d / 2.0))
    return (math.exp(epsilon) + 1.0) / math.expm1(epsilon) * math.sqrt(math.pi) * ratio
