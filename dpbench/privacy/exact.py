"""The exact (ε, δ) of a tuple of Gaussian / Laplace / pure-ε releases made from the same data. Pure functions.

Used as the audit's yardstick ε_ref, for the accounting slack of basic composition, for the noise shrink factor of
the audit's negative controls, and for ``accounting: exact`` calibrations.

* Gaussian releases only: release i with ℓ2-sensitivity Δ_i and noise std σ_i is μ_i = Δ_i/σ_i-GDP; the tuple is
  exactly √(Σ μ_i²)-GDP (Dong, Roth & Su 2022, Cor. 3.3) when one neighbouring pair attains every Δ_i at once, and
  ε(δ) is read off the GDP curve in closed form (:mod:`dpbench.privacy.gdp`). No approximation.
* With Laplace (ℓ1-sensitivity Δ, scale b) or pure ε-DP channels: the privacy-loss distributions of the releases
  are composed by dp-accounting's PLD accountant (pessimistic discretisation, interval 1e-4 nats, so the value is
  an upper bound within ~1e-4·k of the exact one). dp-accounting is imported only here and only then
  (``pip install dp-accounting``, part of the ``audit``/``test`` extras).

"Exact" is relative to the sensitivities given: with the sensitivities a worst-case neighbouring pair attains, it is
the true ε of the released tuple; with declared upper bounds it is the tightest ε those bounds certify.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from scipy.optimize import brentq

from dpbench.privacy.gdp import compose_mu, gdp_epsilon, gdp_mu
from dpbench.privacy.validate import check_delta, check_epsilon, check_positive

#: PLD discretisation of the dp-accounting path (nats)
PLD_INTERVAL = 1e-4


@dataclass(frozen=True)
class GaussianRelease:
    """f(D) + N(0, σ²I) with ‖f(D) − f(D′)‖₂ ≤ Δ: μ = Δ/σ."""

    sensitivity: float
    sigma: float

    @property
    def mu(self) -> float:
        return self.sensitivity / self.sigma

    def scaled(self, factor: float) -> GaussianRelease:
        return GaussianRelease(self.sensitivity, self.sigma * factor)


@dataclass(frozen=True)
class LaplaceRelease:
    """f(D) + Lap(b) per coordinate with ‖f(D) − f(D′)‖₁ ≤ Δ (worst case: the shift on one coordinate)."""

    sensitivity: float
    scale: float

    def scaled(self, factor: float) -> LaplaceRelease:
        return LaplaceRelease(self.sensitivity, self.scale * factor)


@dataclass(frozen=True)
class PureRelease:
    """An ε-DP channel (e.g. the ℓ2-ball sampler): its worst case is randomized response with parameter ε."""

    epsilon: float

    def scaled(self, factor: float) -> PureRelease:
        return self


Release = GaussianRelease | LaplaceRelease | PureRelease


def _check(releases: Sequence[Release]) -> list[Release]:
    releases = list(releases)
    if not releases:
        raise ValueError("need at least one release")
    for r in releases:
        if isinstance(r, GaussianRelease | LaplaceRelease):
            check_positive(r.sensitivity, "sensitivity")
            check_positive(r.sigma if isinstance(r, GaussianRelease) else r.scale, "noise scale")
        elif isinstance(r, PureRelease):
            check_epsilon(r.epsilon)
        else:
            raise TypeError(f"unknown release type {type(r).__name__}")
    return releases


def gaussian_only(releases: Sequence[Release]) -> bool:
    return all(isinstance(r, GaussianRelease) for r in releases)


def _pld(releases: Sequence[Release]):
    """Composed pessimistic PLD of ``releases`` (dp-accounting)."""
    try:
        from dp_accounting.pld import privacy_loss_distribution as pld_lib
    except ImportError as err:  # pragma: no cover - exercised only without the extra
        raise ImportError(
            "the exact ε of Laplace / pure-ε releases needs dp-accounting (pip install dp-accounting)"
        ) from err
    gaussians = [r for r in releases if isinstance(r, GaussianRelease)]
    parts = []
    if gaussians:  # compose the Gaussians in closed form first: one PLD of μ = √Σμ_i²
        parts.append(pld_lib.from_gaussian_mechanism(
            1.0 / compose_mu(g.mu for g in gaussians), value_discretization_interval=PLD_INTERVAL
        ))  # fmt: skip
    for r in releases:
        if isinstance(r, LaplaceRelease):
            parts.append(pld_lib.from_laplace_mechanism(
                r.scale, sensitivity=r.sensitivity, value_discretization_interval=PLD_INTERVAL
            ))  # fmt: skip
        elif isinstance(r, PureRelease):
            parts.append(pld_lib.from_privacy_parameters(
                _pure_parameters(r.epsilon), value_discretization_interval=PLD_INTERVAL
            ))  # fmt: skip
    total = parts[0]
    for part in parts[1:]:
        total = total.compose(part)
    return total


def _pure_parameters(epsilon: float):
    from dp_accounting.pld import common

    return common.DifferentialPrivacyParameters(epsilon, 0.0)


def exact_epsilon(releases: Sequence[Release], delta: float) -> float:
    """Smallest ε such that the tuple of releases is (ε, δ)-DP (module docstring)."""
    delta = check_delta(delta)
    releases = _check(releases)
    if gaussian_only(releases):
        return gdp_epsilon(compose_mu(r.mu for r in releases), delta)
    return max(0.0, float(_pld(releases).get_epsilon_for_delta(delta)))


def exact_delta(releases: Sequence[Release], epsilon: float) -> float:
    """Smallest δ such that the tuple of releases is (ε, δ)-DP."""
    from dpbench.privacy.gdp import gdp_delta

    releases = _check(releases)
    if gaussian_only(releases):
        return gdp_delta(epsilon, compose_mu(r.mu for r in releases))
    return float(_pld(releases).get_delta_for_epsilon(epsilon))


def scale_releases(releases: Sequence[Release], factor: float) -> list[Release]:
    """Every noise scale (σ, b) multiplied by ``factor``; pure-ε channels unchanged."""
    return [r.scaled(factor) for r in releases]


def noise_factor_for_epsilon(releases: Sequence[Release], target_epsilon: float, delta: float) -> float:
    """The factor c by which every noise scale must be multiplied for the exact ε to equal ``target_epsilon``.

    c < 1 shrinks the noise (the audit's negative controls: target = 1.3ε or 3ε); c > 1 adds noise. Gaussian-only:
    c = μ/μ*(target, δ) in closed form; otherwise Brent on log c (exact ε is decreasing in c).
    """
    target_epsilon = check_epsilon(target_epsilon, "target_epsilon")
    delta = check_delta(delta)
    releases = _check(releases)
    if all(isinstance(r, PureRelease) for r in releases):
        raise ValueError("pure-ε channels have no noise scale to change")
    if gaussian_only(releases):
        return compose_mu(r.mu for r in releases) / gdp_mu(target_epsilon, delta)

    def gap(log_c: float) -> float:
        return exact_epsilon(scale_releases(releases, math.exp(log_c)), delta) - target_epsilon

    lo, hi = -1.0, 1.0
    while gap(lo) < 0:
        lo -= 1.0
    while gap(hi) > 0:
        hi += 1.0
    return math.exp(brentq(gap, lo, hi, xtol=1e-6))


def exact_gaussian_sigmas(sensitivities: Sequence[float], epsilon: float, delta: float) -> list[float]:
    """``accounting: exact`` for K Gaussian releases on the same data: σ_i = Δ_i·√K/μ*(ε, δ).

    Every release gets the same μ_i = μ*/√K, so the tuple is exactly μ*(ε, δ)-GDP, i.e. exactly (ε, δ)-DP — instead
    of basic composition's K releases at (ε/K, δ/K), which spends less than ε (the slack :func:`exact_epsilon` shows).
    """
    sens = [check_positive(s, "sensitivity") for s in sensitivities]
    if not sens:
        raise ValueError("need at least one sensitivity")
    scale = math.sqrt(len(sens)) / gdp_mu(epsilon, delta)
    return [s * scale for s in sens]
