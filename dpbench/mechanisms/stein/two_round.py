"""The "2-round" interactive LDP baselines of Wang et al. (JMLR 2023, App. E, Alg 5 and analogues; spec 003 §3.6).

No public data. Round 1 (each release (ε/4, δ/2)-LDP): users release Ẑ_i = x̄_i x̄_iᵀ + Sym_p(s_xx²),
ẑ_i = x̄_i y_i + N(0, s_xy² I) with s_xx = √(128 Λ) r²/ε, s_xy = √(128 Λ) r B_y/ε; server sends
ŵ_ols = (Σ Ẑ_i)⁻¹ Σ ẑ_i to everyone. Round 2 ((ε/2, δ/2)-LDP): user i sends ỹ_i = Proj_[lo, hi](⟨x_i, ŵ_ols⟩) +
N(0, s_y²), s_y = √(8 Λ) (hi − lo)/ε. Server: ĉ = SolveScale(ỹ) averaged over the n users; output ĉ·ŵ_ols.
Total per user (ε, 1.5δ) by basic composition (A12). Gaussian covariates use r = √(10 p ‖Σ‖₂ log n) with the
TRUE ‖Σ‖₂ (oracle, as the paper "supposes we already know" it; A14), passed from the generator's population.

Simulation (issue 16): round 1's server uses only Σ_i Ẑ_i, Σ_i ẑ_i, so by default the n users' noises are drawn as
one Sym_p(n s_xx²) and one N(0, n s_xy² I) (spec 003 §2.4, exact in law); ``simulation="per_user"`` randomises every
user. Round 2 has no such shortcut — ĉ solves (c/n) Σ_i h(c ỹ_i) = 1, a non-linear function of the individual
reports — so every user's ỹ_i is drawn (one vectorised N(0, s_y² I_n) draw).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from dpbench.contract import Hyper
from dpbench.data import Population
from dpbench.linalg import GramStats, solve_or_lstsq
from dpbench.mechanisms._base import FitResult, check_inputs, released
from dpbench.mechanisms._simulation import PER_USER_VARIANT, is_per_user
from dpbench.mechanisms.stein.calibration import clip_radius, two_round_noise_scales
from dpbench.mechanisms.stein.core import (
    UserChannel,
    clean_sums,
    declare_sums,
    noise_sums,
    row_norms,
    simulate_user_sums,
    solve_scale,
)
from dpbench.mechanisms.stein.families import Family, get_family
from dpbench.mechanisms.stein.glm import (
    HYPER,
    check_family_kind,
    family_choice,
    register_algorithms,
)


def projection_interval(family: Family, r: float, noise_c: float = 0.05) -> tuple[float, float]:
    """The "range of y" onto which round-2 predictions are projected (spec 003 §3.6, A13)."""
    name = family.name
    if name in ("logistic", "boosting"):
        return 0.0, 1.0
    if name == "exponential":
        return float(np.exp(-r)), float(np.exp(r))
    if name == "linear":
        return -1.0, 1.0
    if name in ("sigmoid", "sigmoid_literal"):
        return -noise_c, 1.0 + noise_c
    if name == "cubic":
        return -(r**3 / 3.0 + noise_c), r**3 / 3.0 + noise_c
    if name == "logistic_link":
        return -noise_c, float(np.logaddexp(0.0, r)) + noise_c
    raise ValueError(f"family: no projection interval for {name!r}")


def two_round_fit(
    X: np.ndarray,
    y: np.ndarray,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    *,
    family: str,
    covariates: str,
    r: float | None,
    sigma_op_norm: float | None,
    r_const: float = 10.0,
    noise_c: float = 0.05,
    calibration: str = "analytic",
    stats: GramStats | None = None,
    simulation: str = "aggregate",
) -> FitResult:
    per_user = is_per_user(simulation)
    fam = get_family(family)
    X, y = check_inputs(X, y, epsilon, delta, x_bound=None, y_bound=None)
    n, p = X.shape
    if covariates == "gaussian":
        if r is None:
            if sigma_op_norm is None:
                raise ValueError("sigma_op_norm: the Gaussian 2-round baseline needs ‖Σ‖₂ (population oracle)")
            r = clip_radius(p, sigma_op_norm, n, r_const)
        clip_l2 = True
    elif covariates == "l1":
        r = 1.0 if r is None else float(r)
        if row_norms(X, 1).max() > r * (1 + 1e-9):  # cached for the runner's read-only data
            raise ValueError(f"X: rows with ‖x_i‖₁ > r = {r}; scale the rows into the ℓ1 ball first")
        clip_l2 = False
    else:
        raise ValueError(f"covariates must be 'gaussian' or 'l1', got {covariates!r}")
    b_y = fam.y_bound(r, noise_c)
    y_clip = b_y if fam.kind == "nlr" else None
    lo, hi = projection_interval(fam, r, noise_c)
    scales = two_round_noise_scales(epsilon, delta, r, b_y, hi - lo, calibration)
    # round 1
    channel = UserChannel(r, scales.s_xx, scales.s_xy, clip_l2, y_clip)
    if per_user:
        Z_sum, z_sum = simulate_user_sums(X, y, rng, channel)
    else:
        xtx, xty, _ = clean_sums(X, y, r=r, clip_l2=clip_l2, y_clip=y_clip, stats=stats)
        E1, E2 = noise_sums(p, n, scales.s_xx, scales.s_xy, rng, "local")
        Z_sum, z_sum = xtx + E1, xty + E2
    Z_sum, z_sum = declare_sums(Z_sum, z_sum, None, None, X, y, channel, y_bound=b_y, aggregation="local",
                                prefix="round 1: ")  # fmt: skip
    w_ols = solve_or_lstsq(Z_sum, z_sum)
    # round 2: each user projects her own prediction (unclipped x_i) and adds her own noise
    y_tilde = np.clip(X @ w_ols, lo, hi) + scales.s_y * rng.standard_normal(n)
    y_tilde = released("round 2: ỹ_i", y_tilde, lambda: np.clip(X @ w_ols, lo, hi), scale=scales.s_y, users=True,
                       aggregate="none", sensitivity=hi - lo)  # fmt: skip
    sol = solve_scale(y_tilde, fam)
    info = {
        "c_hat": sol.c,
        "root_status": sol.status,
        "newton_iters": sol.iters,
        "r": r,
        "y_bound": b_y,
        "s_xx": scales.s_xx,
        "s_xy": scales.s_xy,
        "s_y": scales.s_y,
        "delta_spent": scales.delta_spent,
        "ols_norm": float(np.linalg.norm(w_ols)),
    }
    return FitResult(sol.c * w_ols, info)


def _make(kind: str, covariates: str):
    def fit(
        X: np.ndarray,
        y: np.ndarray,
        epsilon: float,
        delta: float,
        rng: np.random.Generator,
        *,
        population: Population | None = None,
        stats: GramStats | None = None,
        **hyper: Any,
    ) -> FitResult:
        check_family_kind(get_family(hyper["family"]), kind, f"stein_twostage_{kind}_{covariates}")
        sigma_op = None
        if population is not None:
            sigma_op = population.extra.get("sigma_op_norm", float(np.linalg.eigvalsh(population.cov)[-1]))
        return two_round_fit(
            X, y, epsilon, delta, rng, covariates=covariates, sigma_op_norm=sigma_op, stats=stats, **hyper
        )

    return fit


#: the 2-round baseline's r: the Gaussian rule needs the oracle ‖Σ‖₂ (no public rows), ℓ1 covariates the known radius
TWO_ROUND_RADIUS = Hyper(
    float,
    default=None,
    gt=0,
    none="√(r_const·p·‖Σ‖₂·log n) (gaussian, oracle ‖Σ‖₂) or 1 (l1)",
    doc="clipping / ℓ1 radius",
)


def _two_round_fields(alg: int, kind: str, covariates: str) -> dict[str, Any]:
    """What the 2-round counterpart of Algorithm ``alg`` declares besides :func:`stein_contract`."""
    return {
        "doc": f"2-round LDP counterpart of Algorithm {alg} (App. E; no public data; (ε, 1.5δ) per user).",
        "summary": f"2-round interactive LDP counterpart of Alg {alg} (Wang et al. 2023 App. E), no public data",
        "needs": ("population", "stats") if covariates == "gaussian" else ("stats",),
        "spec": "003 §3.6",
        "style": {"linestyle": "-."},
        "hyper": {
            "family": family_choice(kind),
            "r": TWO_ROUND_RADIUS,
            "r_const": replace(HYPER["r_const"], default=10.0),
            **{k: HYPER[k] for k in ("noise_c", "calibration", "simulation")},
        },
        "variants": PER_USER_VARIANT,
    }


globals().update(register_algorithms("stein_twostage", _make, _two_round_fields))
