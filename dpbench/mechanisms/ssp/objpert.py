"""ObjPert — objective perturbation for least squares on the ball ‖θ‖ ≤ R (Kifer, Smith & Thakurta 2012, Gaussian
variant; spec 005 §6), and Wang 2018's ``ObjPert.m`` constants.

Privacy model: central (ε, δ)-DP, zero-out (add/remove) neighbours, ‖x_i‖ ≤ 1, |y_i| ≤ 1. The estimate is

    θ̂ = argmin_{‖θ‖ ≤ R} ½‖Y − Xθ‖² + (Λ/2)‖θ‖² + bᵀθ,   b ~ N(0, σ_b² I_d),

i.e. a quadratic ½θᵀAθ − gᵀθ with A = XᵀX + ΛI, g = XᵀY − b, minimised exactly on the ball
(:func:`ball_quadratic_minimiser`: the trust-region secular equation, scipy ``brentq``). The release is θ̂ itself,
private by the objective-perturbation argument (not a Gaussian mechanism on a statistic). It is declared as what
it is, an ``objective`` release (:func:`released`): centre c = XᵀY, the data-dependent A, R, σ_b, and as
sensitivity the Lipschitz constant L of the argument; ``dpbench audit objpert`` computes the exact ε of θ̂ from its
two-piece density (interior φ(c − Aθ)·det A; on the sphere the ν-integral of the KKT map's push-forward:
:mod:`dpbench.audit.objective_density`).

``constants: exact`` (default; docs/deviations.md): the KST decomposition of the privacy loss at output θ̂ into the
Gaussian density ratio of b and the Jacobian ratio of b ↦ θ̂. Each loss term ½(y − xᵀθ)² has Hessian xxᵀ (rank 1,
eigenvalue ≤ β = 1) and gradient (xᵀθ − y)x = c·x with |c| ≤ L = R + 1 on the ball, so (zero-out)
the Jacobian ratio is ≤ 1 + β/Λ = e^{ε_J} with Λ = 2β/ε (ε_J = log(1 + ε/2)), and the Gaussian part is
(2c·bᵀx − ‖cx‖²)/(2σ_b²) ≤ (2L|g|σ_b + L²)/(2σ_b²), g ~ N(0, 1); P[loss > ε] ≤ δ when
2Φ̄(s(ε − ε_J) − 1/(2s)) = δ with s = σ_b/L, i.e. s = (z + √(z² + 2ε_g))/(2ε_g), z = Φ̄⁻¹(δ/2), ε_g = ε − ε_J.

``constants: wang`` (his experiment, refused under ``privacy: strict``): R = 1, L = 2, σ_b = L√(4 log(2/δ) + 2ε)/ε²,
and ObjPert.m's CVX problem min ‖Rθ − R⁻ᵀ(XᵀY − b)/2‖ with H = XᵀX + (2/ε²)I — i.e. ½θᵀ(2H)θ − (XᵀY − b)ᵀθ, whose
unconstrained minimiser is half the ridge solution (kept: it is what his figures ran).

An optimiser that fails (non-finite data or no bracket) falls back to scipy SLSQP; if that fails too θ̂ = 0 with
``info.fallback = 1`` and ``info.solver = "failed"`` — a named outcome, never a silent 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import brentq, minimize
from scipy.stats import norm

from dpbench.contract import FALLBACK_INFO, Bounds, Choice, Hyper
from dpbench.linalg import GramStats
from dpbench.mechanisms._base import FitResult, check_inputs, released, resolve_stats
from dpbench.mechanisms.ssp.calibration import kst_ridge, wang_objpert_ridge, wang_objpert_sigma
from dpbench.registry import register_mechanism


def objpert_sigma(epsilon: float, delta: float, lipschitz: float, smoothness: float = 1.0) -> tuple[float, float]:
    """(σ_b, Λ) of ``constants: exact`` (module docstring): Λ = 2β/ε, ε_J = log(1 + β/Λ), ε_g = ε − ε_J,
    σ_b = L (z + √(z² + 2ε_g))/(2ε_g), z = Φ̄⁻¹(δ/2)."""
    ridge = kst_ridge(epsilon, smoothness)
    eps_g = epsilon - math.log1p(smoothness / ridge)
    z = float(norm.isf(delta / 2.0))
    return lipschitz * (z + math.sqrt(z * z + 2.0 * eps_g)) / (2.0 * eps_g), ridge


def objpert_delta(sigma: float, epsilon: float, lipschitz: float, smoothness: float = 1.0) -> float:
    """The δ the tail bound certifies for σ_b at ε (inverse of :func:`objpert_sigma`): 2Φ̄(s ε_g − 1/(2s))."""
    eps_g = epsilon - math.log1p(smoothness / kst_ridge(epsilon, smoothness))
    s = sigma / lipschitz
    return float(2.0 * norm.sf(s * eps_g - 1.0 / (2.0 * s)))


@dataclass(frozen=True)
class BallSolution:
    """θ on the ball and how it was found: ``solver`` interior | boundary | slsqp | failed."""

    theta: np.ndarray
    solver: str


def ball_quadratic_minimiser(
    eigvals: np.ndarray, eigvecs: np.ndarray, shift: float, g: np.ndarray, radius: float
) -> BallSolution:
    """argmin_{‖θ‖ ≤ R} ½θᵀAθ − gᵀθ for A = V diag(w + shift) Vᵀ ≻ 0: θ = A⁻¹g if ‖A⁻¹g‖ ≤ R, else
    θ(ν) = V diag(1/(w + shift + ν)) Vᵀg with ‖θ(ν)‖ = R, ν ∈ (0, ‖g‖/R] (KKT; φ(ν) = ‖θ(ν)‖ decreasing, brentq)."""
    h = eigvecs.T @ g
    curv = eigvals + shift

    def norm_at(nu: float) -> float:
        return float(np.linalg.norm(h / (curv + nu)))

    if not (np.all(np.isfinite(h)) and np.all(curv > 0)):
        raise FloatingPointError("non-finite linear term or non-positive curvature")
    if norm_at(0.0) <= radius:
        return BallSolution(eigvecs @ (h / curv), "interior")
    upper = float(np.linalg.norm(h)) / radius
    nu = brentq(lambda v: norm_at(v) - radius, 0.0, upper, xtol=1e-14 * max(1.0, upper), rtol=1e-12)
    theta = eigvecs @ (h / (curv + nu))
    return BallSolution(theta * (radius / max(radius, float(np.linalg.norm(theta)))), "boundary")


def slsqp_ball(a: np.ndarray, g: np.ndarray, radius: float) -> BallSolution:
    """The same problem by scipy SLSQP from θ = 0 (the fallback); θ = 0 with solver "failed" if it fails."""
    res = minimize(
        lambda t: 0.5 * t @ a @ t - g @ t, np.zeros(g.shape[0]), jac=lambda t: a @ t - g, method="SLSQP",
        constraints=[{"type": "ineq", "fun": lambda t: radius**2 - t @ t, "jac": lambda t: -2.0 * t}],
        options={"ftol": 1e-10, "maxiter": 1000},
    )  # fmt: skip
    if res.success and np.all(np.isfinite(res.x)):
        return BallSolution(np.asarray(res.x), "slsqp")
    return BallSolution(np.zeros(g.shape[0]), "failed")


def solve_on_ball(stats: GramStats, shift: float, g: np.ndarray, radius: float, curvature: float) -> BallSolution:
    """argmin_{‖θ‖ ≤ R} ½θᵀ(curvature·(XᵀX + shift·I))θ − gᵀθ; secular equation first, SLSQP if it fails."""
    w, v = stats.eigh_x
    try:
        return ball_quadratic_minimiser(curvature * w, v, curvature * shift, g, radius)
    except (FloatingPointError, ValueError, RuntimeError):
        return slsqp_ball(curvature * (stats.xtx + shift * np.eye(stats.d)), g, radius)


def declared_lipschitz(constants: str, radius: float) -> float:
    """The gradient bound L the calibration uses, declared as the sensitivity of the ``objective`` release (how far
    one record moves the noise b that maps to a given θ̂: ‖x‖·|y − κxᵀθ̂| for its loss ½κ(xᵀθ)² − yxᵀθ): R + 1 for
    ``exact`` (κ = 1); ObjPert.m's L = 2 for ``wang``, whose doubled quadratic (κ = 2) has gradients up to 2R + 1 = 3
    on the ball — the audit's sensitivity check sees the difference."""
    return 2.0 if constants == "wang" else radius + 1.0


def _certify(hyper: dict[str, Any]) -> tuple[str, str] | None:
    if hyper["constants"] == "wang":
        return "constants", (
            "ObjPert.m's σ_b = L√(4 log(2/δ) + 2ε)/ε² is not derived for zero-out neighbours (its ε² for ε is a "
            "typo: too little noise at ε > 1); constants: exact is the calibration derived from the KST argument"
        )
    return None


@register_mechanism(
    "objpert",
    summary="ObjPert: objective perturbation, Gaussian, on the ball ‖θ‖ ≤ R (Kifer–Smith–Thakurta 2012; 005 §6)",
    privacy_model="central",
    neighbour="zero_out",
    needs=("stats",),
    spec="005 §6",
    style={"color": "goldenrod", "marker": "^", "linestyle": "-"},
    hyper={
        "constants": Choice(
            "exact", "wang", default="exact", doc="calibration derived from the KST argument, or ObjPert.m's"
        ),
        "radius": Hyper(float, default=1.0, gt=0, doc="R of the constraint ‖θ‖ ≤ R (L = R + 1); 'wang' needs 1"),
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
    """ObjPert estimate (module docstring)."""
    X, y = check_inputs(X, y, epsilon, delta)
    stats = resolve_stats(X, y, stats)
    radius = hyper["radius"]
    if hyper["constants"] == "wang":
        radius, sigma, shift, curvature = 1.0, wang_objpert_sigma(epsilon, delta), wang_objpert_ridge(epsilon), 2.0
    else:
        sigma, shift = objpert_sigma(epsilon, delta, radius + 1.0)
        curvature = 1.0
    b = sigma * rng.standard_normal(stats.d)
    solution = solve_on_ball(stats, shift, stats.xty - b, radius, curvature)

    def value_at(factor: float) -> np.ndarray:  # θ̂ at noise factor·b (the audit's shrunk-noise controls)
        return solve_on_ball(stats, shift, stats.xty - factor * b, radius, curvature).theta

    theta = released("θ̂ (objective perturbation)", solution.theta, stats.xty, kind="objective", scale=sigma,
                     sensitivity=declared_lipschitz(hyper["constants"], radius), radius=radius,
                     A=curvature * (stats.xtx + shift * np.eye(stats.d)), value_at=value_at)  # fmt: skip
    info = {
        "sigma_b": sigma,
        "ridge": shift,
        "solver": solution.solver,
        FALLBACK_INFO: int(solution.solver == "failed"),
    }
    return FitResult(theta, info)
