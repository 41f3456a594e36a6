"""SSP — plain sufficient-statistics perturbation (Wang 2018 ``suffstats_perturb.m``; spec 005 §2a, §11).

Registered as ``ssp_plain``: ``"ssp"`` is already a style key and a bandit oracle's name in dpbench.

Privacy model: central (ε, δ)-DP, zero-out (add/remove) neighbours, ‖x_i‖ ≤ 1, |y_i| ≤ 1. Two Gaussian releases,
θ̂ = (XᵀX~ + ridge·I)⁻¹ XᵀY~ (post-processing; the ridge is data-independent, Wang's + I by default):

* ``constants: exact`` (default): XᵀX~ = XᵀX + s N_sym(0, I_d) (upper triangle iid, sensitivity ‖x‖² ≤ 1) and
  XᵀY~ = XᵀY + s N(0, I_d) (sensitivity 1), one s for both from the exact GDP composition:
  s = √2/μ*(ε, δ) (:func:`dpbench.privacy.exact.exact_gaussian_sigmas`) — the tuple is exactly (ε, δ)-DP.
* ``constants: wang`` (his code, as his paper ran it): σ = √log(4/δ)/ε on each release, a *non-symmetric* full d×d
  noise on XᵀX + I (Frobenius sensitivity 1). Each release is (ε, δ/2)-DP by the classical bound, so the pair spends
  more than the claim: exactly 0.134 / 1.587 / 23.2 at claimed 0.1 / 1 / 10, δ = 1e-6 (005 §11), recorded per fit
  as ``info.epsilon_spent``; refused under ``privacy: strict``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpbench.contract import Bounds, Choice, Hyper
from dpbench.linalg import GramStats, solve_or_lstsq, symmetric_gaussian
from dpbench.mechanisms._base import CENTRAL_GRAM, FitResult, checked_stats, released
from dpbench.mechanisms.ssp.calibration import wang_ssp_epsilon, wang_ssp_sigma
from dpbench.privacy.exact import exact_gaussian_sigmas
from dpbench.registry import register_mechanism


def ssp_sigma(epsilon: float, delta: float, constants: str) -> float:
    """The noise std of both releases: exact (ε, δ) together, or Wang's √log(4/δ)/ε each."""
    if constants == "exact":
        return exact_gaussian_sigmas([1.0, 1.0], epsilon, delta)[0]
    if constants == "wang":
        return wang_ssp_sigma(epsilon, delta)
    raise ValueError(f"constants must be 'exact' or 'wang', got {constants!r}")


def _certify(hyper: dict[str, Any]) -> tuple[str, str] | None:
    if hyper["constants"] == "wang":
        return "constants", (
            "Wang's SSP constants spend more than the claimed ε (exactly 1.587 at claimed 1, δ = 1e-6: 005 §11); "
            "constants: exact is the accounting its theorem proves"
        )
    return None


@register_mechanism(
    "ssp_plain",
    summary="SSP: noisy XᵀX and XᵀY, budget split exactly (Wang 2018's plain SSP; 005 §2a)",
    **CENTRAL_GRAM,
    spec="005 §2a",
    style={"color": "tab:orange", "marker": "v", "linestyle": "--"},
    hyper={
        "constants": Choice(
            "exact", "wang", default="exact", doc="one σ exactly at (ε, δ) for both releases, or Wang's code's σ"
        ),
        "ridge": Hyper(float, default=1.0, ge=0, doc="data-independent ridge added to XᵀX~ (Wang's code: 1)"),
    },
    bounds=Bounds(x=1.0, y=1.0),
    strict={"constants": "exact"},
    certify=_certify,
)
def fit(
    X: np.ndarray,
    y: np.ndarray,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    *,
    stats: GramStats | None = None,
    **hyper: Any,
) -> FitResult:
    """SSP estimate θ̂ = (XᵀX~ + ridge·I)⁻¹XᵀY~ (module docstring)."""
    X, y, stats = checked_stats(X, y, epsilon, delta, stats)
    d, constants = stats.d, hyper["constants"]
    sigma = ssp_sigma(epsilon, delta, constants)
    if constants == "wang":  # full d×d noise on XᵀX + I, as suffstats_perturb.m
        xtx = released("XᵀX", stats.xtx + sigma * rng.standard_normal((d, d)), stats.xtx, scale=sigma, sensitivity=1.0)
        spent = wang_ssp_epsilon(epsilon, delta)
    else:
        xtx = released("XᵀX", stats.xtx + sigma * symmetric_gaussian(d, rng), stats.xtx, scale=sigma,
                       sensitivity=1.0, symmetric=True)  # fmt: skip
        spent = epsilon
    xty = released("XᵀY", stats.xty + sigma * rng.standard_normal(d), stats.xty, scale=sigma, sensitivity=1.0)
    theta = solve_or_lstsq(xtx + hyper["ridge"] * np.eye(d), xty)
    return FitResult(theta, {"sigma": sigma, "epsilon_spent": spent})
