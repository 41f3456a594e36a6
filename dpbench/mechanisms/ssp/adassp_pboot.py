"""AdaSSP with a Gaussian parametric bootstrap interval (spec 005 §10, after Ferrando, Wang, Sheldon 2022, §7a).

Privacy model: central (ε, δ)-DP, zero-out neighbours, ‖x_i‖ ≤ x_bound, |y_i| ≤ y_bound (declared, data-independent;
n public). Four Gaussian releases share one exact GDP budget μ*(ε, δ) equally (s_i = Δ_i·√4/μ* = 2Δ_i/μ*,
:func:`dpbench.privacy.exact.exact_gaussian_sigmas`), so θ̂ *and* its intervals together are exactly (ε, δ)-DP:

* R1 = λ_min(XᵀX) + s₁z            (Δ = x_bound²)
* R2 = XᵀX + s₁·Sym(Z)              (Δ_F = x_bound²)
* R3 = XᵀY + s₂ζ                    (Δ = x_bound·y_bound)
* R4 = YᵀY + s₃ξ                    (Δ = y_bound²) — the one extra release the interval needs.

Point estimate (AdaSSP, the figures' shift): λ̃ = max{0, R1 − s₁²}, λ̂ = max{0, √(d log(2d²/ϱ))·s₁ − λ̃},
θ̃ = (R2 + λ̂I)⁻¹R3; residual variance σ̃² = max{σ²_floor, (R4 − 2θ̃ᵀR3 + θ̃ᵀR2θ̃)/(n − d)}.

Intervals (post-processing of R1..R4 only, drawn from a stream spawned from the trial's rng):

* ``pboot`` (target: population θ) — Q̂ = PSD(R2)/n; for b = 1..B: V* = s₁·Sym(Z*), w* = s₂ζ*,
  Z* ~ N(0, σ̃²Q̂), θ*_b = (Q̂ + (V* + λ̂I)/n)⁻¹(Q̂θ̃ + Z*/√n + w*/n); CI_j = percentile(θ*_{·j}; α/2, 1 − α/2).
  The sampling term is the CLT's ("hybrid" bootstrap), the privacy noise is simulated with its exact law.
* ``pboot_ssp`` (target: population θ) — the same bootstrap of the *unregularised* SSP estimate, Ferrando et al.'s
  OLS estimator with Gaussian noise (spec 005 §7a): θ̂_u = H⁻¹R3, H = PSD(R2) with eigenvalues ≥ x_bound² (one
  row's worth: data-independent), Q̂ = H/n, σ̃²_u the residual variance at θ̂_u,
  θ*_b = (Q̂ + V*/n)⁻¹(Q̂θ̂_u + Z*/√n + w*/n). Why a second bootstrap: ``pboot`` simulates AdaSSP's ridge λ̂ in the
  bootstrap world, so its percentile interval is centred on the ridge-shrunk value — it covers θ only where
  λ̂ ≪ λ_min(XᵀX); θ̂_u has no ridge bias, at the price of width where the noise on R2 is not small against
  λ_min(XᵀX) (docs/intervals.md).
* ``wald_private`` (the naive control, spec 005 §10 (d)) — θ̃_j ± z·√(σ̃²[H⁻¹]_jj), H = PSD(R2 + λ̂I): private
  plug-ins used as if they were exact, the privacy noise ignored (expected to under-cover at small ε).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpbench.contract import AuditSetup, Bounds, Hyper, Variant
from dpbench.linalg import GramStats, solve_or_lstsq, symmetric_gaussian
from dpbench.mechanisms._base import CENTRAL_GRAM, FitResult, checked_stats, released
from dpbench.mechanisms._intervals import (
    Interval,
    batched_solve,
    interval_rng,
    psd_floor,
    symmetric_gaussian_batch,
    wald,
)
from dpbench.mechanisms.ssp.adassp import adassp_releases
from dpbench.privacy.exact import exact_gaussian_sigmas
from dpbench.registry import register_mechanism

#: interval methods of this mechanism (the first is the estimator's default: pboot_ssp, the one that reached nominal
#: coverage in every cell of the synthetic grid and on real data, docs/intervals.md; its interval is centred on the
#: unregularised θ̂_u, not on coef_)
INTERVAL_METHODS = ("pboot_ssp", "pboot", "wald_private")
#: how the bootstrap replicates are drawn: all B at once, or one by one (the literal path, for the law tests)
BOOTSTRAP_PATHS = ("batched", "literal")


def pboot_scales(epsilon: float, delta: float, x_bound: float, y_bound: float) -> tuple[float, float, float]:
    """(s₁, s₂, s₃) = 2/μ*(ε, δ) · (x_bound², x_bound·y_bound, y_bound²): four releases, one exact (ε, δ) budget."""
    s1, _, s2, s3 = exact_gaussian_sigmas([x_bound**2, x_bound**2, x_bound * y_bound, y_bound**2], epsilon, delta)
    return s1, s2, s3


def residual_variance(yty: float, xty: np.ndarray, xtx: np.ndarray, theta: np.ndarray, n: int, floor: float) -> float:
    """σ̃² = max{floor, (YᵀY − 2θᵀXᵀY + θᵀXᵀXθ)/(n − d)} from (private) sufficient statistics (spec 005 §10)."""
    rss = yty - 2.0 * theta @ xty + theta @ xtx @ theta
    return max(floor, float(rss) / (n - theta.shape[0]))


def bootstrap_draws(
    theta: np.ndarray,
    xtx: np.ndarray,
    ridge: float,
    sigma2: float,
    n: int,
    s1: float,
    s2: float,
    B: int,
    rng: np.random.Generator,
    *,
    floor: float = 0.0,
    literal: bool = False,
) -> np.ndarray:
    """(B, d) parametric-bootstrap draws θ*_b = (Q̂ + (V* + λ̂I)/n)⁻¹(Q̂θ̃ + Z*/√n + w*/n), Q̂ = PSD(R2)/n with
    eigenvalues ≥ ``floor``/n (spec 005 §10). All B at once (one batched solve), or replicate by replicate with
    ``literal`` (:func:`dpbench.linalg.symmetric_gaussian` per draw): the same law, other random streams."""
    d = theta.shape[0]
    values, vectors = np.linalg.eigh((xtx + xtx.T) / 2.0)
    values = np.maximum(values, floor) / n  # Q̂ = PSD(R2)/n
    q_hat = (vectors * values) @ vectors.T
    root = vectors * np.sqrt(sigma2 * values)  # Z* = root · N(0, I) ~ N(0, σ̃²Q̂)
    centre = q_hat @ theta
    if literal:
        return np.stack([literal_draw(q_hat, centre, root, ridge, n, s1, s2, rng) for _ in range(B)])
    z_star = rng.standard_normal((B, d)) @ root.T
    w_star = s2 * rng.standard_normal((B, d))
    matrices = symmetric_gaussian_batch(B, d, rng)  # V*/s₁, then in place Q̂ + (V* + λ̂I)/n
    matrices *= s1 / n
    matrices += q_hat + (ridge / n) * np.eye(d)
    rhs = centre[None] + z_star / np.sqrt(n) + w_star / n
    return batched_solve(matrices, rhs)


def literal_draw(
    q_hat: np.ndarray, centre: np.ndarray, root: np.ndarray, ridge: float, n: int, s1: float, s2: float,
    rng: np.random.Generator,
) -> np.ndarray:  # fmt: skip
    """One replicate θ*_b of :func:`bootstrap_draws`, as the formula reads."""
    d = centre.shape[0]
    z_star = root @ rng.standard_normal(d)
    w_star = s2 * rng.standard_normal(d)
    v_star = s1 * symmetric_gaussian(d, rng)
    return solve_or_lstsq(q_hat + (v_star + ridge * np.eye(d)) / n, centre + z_star / np.sqrt(n) + w_star / n)


def naive_wald(theta: np.ndarray, xtx: np.ndarray, ridge: float, sigma2: float, x_bound: float) -> Interval:
    """θ̃_j ± z·√(σ̃²[H⁻¹]_jj), H = PSD(R2 + λ̂I) with eigenvalues ≥ x_bound² (one row's worth: data-independent)."""
    h = psd_floor(xtx + ridge * np.eye(theta.shape[0]), x_bound**2)
    return wald("wald_private", "population", theta, sigma2 * np.diag(np.linalg.inv(h)))


@register_mechanism(
    "adassp_pboot",
    summary="AdaSSP + Gaussian parametric bootstrap CI: 4 releases (+ YᵀY) at one exact (ε, δ) (005 §10)",
    **CENTRAL_GRAM,
    spec="005 §10",
    style={"color": "tab:cyan", "marker": "*", "linestyle": "-"},
    hyper={
        "B": Hyper(int, default=1000, ge=20, doc="bootstrap draws (the interval's post-processing)"),
        "bootstrap": Hyper(
            str,
            default="batched",
            choices=BOOTSTRAP_PATHS,
            doc="draw the B replicates at once or one by one (the literal path: same law)",
        ),
        "rho": Hyper(float, default=None, gt=0, lt=1, none="δ/10", doc="failure probability ϱ of the ridge rule"),
        "sigma2_floor": Hyper(float, default=1e-4, gt=0, doc="floor of the private residual variance σ̃²"),
        "x_bound": Hyper(float, default=1.0, gt=0, doc="declared bound ‖x_i‖ ≤ x_bound"),
        "y_bound": Hyper(float, default=1.0, gt=0, doc="declared bound |y_i| ≤ y_bound"),
    },
    bounds=Bounds(x="x_bound", y="y_bound", n_ge_d=True),
    audit=AuditSetup(hyper={"B": 50}),
    variants={"literal": Variant({"bootstrap": "literal"}, literal=True, doc="bootstrap replicates one by one")},
    intervals=INTERVAL_METHODS,
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
    """AdaSSP θ̃ from R1..R3 and its ``pboot`` / ``wald_private`` intervals from R1..R4 (module docstring)."""
    x_bound, y_bound = hyper["x_bound"], hyper["y_bound"]
    X, y, stats = checked_stats(X, y, epsilon, delta, stats, x_bound=x_bound, y_bound=y_bound)
    n, d = stats.n, stats.d
    if n <= d + 1:
        raise ValueError(f"adassp_pboot needs n > d + 1 rows for the residual variance, got n = {n}, d = {d}")
    rho = delta / 10.0 if hyper["rho"] is None else hyper["rho"]
    s1, s2, s3 = pboot_scales(epsilon, delta, x_bound, y_bound)

    r = adassp_releases(stats, s1, s2, s1**2, rho, x_bound, y_bound, rng)  # the figures' code's shift s₁²
    ridge, xtx, xty, theta = r.ridge, r.xtx, r.xty, r.theta
    yty = released("YᵀY", stats.yty + s3 * rng.standard_normal(), stats.yty, scale=s3, sensitivity=y_bound**2)

    sigma2 = residual_variance(yty, xty, xtx, theta, n, hyper["sigma2_floor"] * y_bound**2)
    boot_rng, literal = interval_rng(rng), hyper["bootstrap"] == "literal"
    draws = bootstrap_draws(theta, xtx, ridge, sigma2, n, s1, s2, hyper["B"], boot_rng, literal=literal)
    theta_u = solve_or_lstsq(psd_floor(xtx, x_bound**2), xty)  # the unregularised SSP estimate (pboot_ssp)
    sigma2_u = residual_variance(yty, xty, xtx, theta_u, n, hyper["sigma2_floor"] * y_bound**2)
    draws_u = bootstrap_draws(theta_u, xtx, 0.0, sigma2_u, n, s1, s2, hyper["B"], boot_rng, floor=x_bound**2,
                              literal=literal)  # fmt: skip
    intervals = {
        "pboot": Interval("pboot", "population", draws=draws),
        "pboot_ssp": Interval("pboot_ssp", "population", draws=draws_u),
        "wald_private": naive_wald(theta, xtx, ridge, sigma2, x_bound),
    }
    info = {"s1": s1, "s2": s2, "s3": s3, "ridge": ridge, "sigma2_private": sigma2}
    return FitResult(theta, info, intervals)
