"""Ablations of the Stein NLDP estimators (spec 003) behind the claims table of docs/stein.md (issue 17).

Registered:

* ``stein_glm_l2`` — Algorithm 2 calibrated with a declared **ℓ2** bound r₂ of the covariates instead of the ℓ1
  radius: per-user sensitivities ‖x̄x̄ᵀ − x̄'x̄'ᵀ‖_F ≤ 2r₂², ‖x̄y − x̄'y'‖₂ ≤ 2r₂B_y (the Frobenius/ℓ2 norms the
  Gaussian mechanism needs are bounded by the ℓ2 norm; ‖x‖₂ ≤ ‖x‖₁ makes Alg 2's r² a looser bound). On ±1/p data
  ‖x‖₂ = p^{−1/2} while ‖x‖₁ = 1, so s_xx shrinks p-fold, s_xy √p-fold and the threshold n* = 16p s_xx²/λ_min(Σ)²
  p²-fold. Users clip x to the ℓ2 ball of radius r₂ (a per-record map; a no-op on data inside the declared domain).
  Same (ε, δ)-LDP per user as Alg 2 (two releases at (ε/2, δ/2), basic composition).
* ``stein_xty_oracle_cov`` — the "could an exact covariance rescue it?" control: only the ẑ_i = x_i y_i + N(0, s_xy²I)
  releases of Alg 1/2 (same s_xy, i.e. that release's (ε/2, δ/2) share of the budget), with the **exact population
  Σ** (from the generator; synthetic data only) in place of the private Σ_i Ẑ_i: ŵ_ols = Σ⁻¹(Σ_i ẑ_i)/n, then
  SolveScale on the public rows as in Alg 1/2. Its error is driven by the signal-to-noise ratio of Σ_i ẑ_i alone,
  ‖n E[xy]‖/(√(np)·s_xy) (:func:`dpbench.papers.stein.controls.xty_snr`).

Both reuse :func:`dpbench.mechanisms.stein.glm.stein_fit` / :mod:`dpbench.mechanisms.stein.core` unchanged.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpbench.contract import AuditSetup, Bounds, Hyper
from dpbench.linalg import GramStats, solve_or_lstsq
from dpbench.mechanisms._base import FitResult, check_inputs, released
from dpbench.mechanisms.stein.calibration import stein_noise_scales
from dpbench.mechanisms.stein.core import clean_sums, noise_sums, solve_scale
from dpbench.mechanisms.stein.families import get_family
from dpbench.mechanisms.stein.glm import (
    HYPER,
    check_family_kind,
    check_public,
    family_choice,
    stein_certify,
    stein_fit,
)
from dpbench.registry import register_mechanism


def check_r2(r2: float | None) -> float:
    if r2 is None or not (isinstance(r2, (int, float)) and math.isfinite(r2) and r2 > 0):
        raise ValueError(f"r2: declare the public ℓ2 bound of the covariates (> 0; p^(-1/2) for ±1/p data), got {r2!r}")
    return float(r2)


@register_mechanism(
    "stein_glm_l2",
    summary="Alg 2 with ℓ2 sensitivities (declared ‖x‖₂ ≤ r2) instead of the ℓ1 radius (issue 17 ablation)",
    privacy_model="local",
    neighbour="replace_one",
    needs=("public_X", "stats"),
    spec="003 §3.3 (ablation)",
    style={"linestyle": "-.", "color": "tab:olive"},
    hyper={
        "family": family_choice("glm"),
        "calibration": HYPER["calibration"],
        "c0": HYPER["c0"],
        "r2": Hyper(
            float, default=None, gt=0, none="required", doc="declared ℓ2 bound of the rows (p^-1/2 for ±1/p data)"
        ),
    },
    check=lambda h: check_r2(h["r2"]),
    certify=stein_certify,
    bounds=Bounds(
        clips=True, clipped=("x",), note="rows clipped to ‖x‖₂ ≤ r2 (declared); |y_i| ≤ 1 assumed for GLM families"
    ),
    audit=AuditSetup(hyper={"r2": 1.0}),
)
def fit_stein_glm_l2(
    X: np.ndarray,
    y: np.ndarray,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    *,
    public_X: np.ndarray | None = None,
    stats: GramStats | None = None,
    **hyper: Any,
) -> FitResult:
    """Alg 2's pipeline (local noise, mixed covariance, SolveScale) with s_xx, s_xy from the ℓ2 radius r2."""
    check_family_kind(get_family(hyper["family"]), "glm", "stein_glm_l2")
    r2 = check_r2(hyper["r2"])
    result = stein_fit(
        X,
        y,
        epsilon,
        delta,
        rng,
        public_X,
        family=hyper["family"],
        covariates="gaussian",
        r=r2,
        noise_aggregation="local",
        calibration=hyper["calibration"],
        c0=hyper["c0"],
        stats=stats,
    )
    result.info["sensitivity_norm"] = "l2"
    return result


@register_mechanism(
    "stein_xty_oracle_cov",
    summary="control: Alg 1/2's Xᵀy release only, exact population Σ instead of the private XᵀX (synthetic data)",
    privacy_model="local",
    neighbour="replace_one",
    needs=("public_X", "population", "stats"),
    spec="003 §3.2–3.3 (issue 17 control)",
    style={"linestyle": "--", "color": "tab:cyan"},
    hyper={
        "family": family_choice("glm"),
        "r": Hyper(float, default=1.0, gt=0, doc="known ℓ1 radius of the rows"),
        "calibration": HYPER["calibration"],
        "c0": HYPER["c0"],
    },
    bounds=Bounds(x="r", x_norm="l1", note="|y_i| ≤ 1 assumed for GLM families; Σ from the generator"),
    audit=AuditSetup(skip="needs the generator's population (synthetic data only)"),
    certify=stein_certify,
)
def fit_stein_xty_oracle_cov(
    X: np.ndarray,
    y: np.ndarray,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    *,
    public_X: np.ndarray | None = None,
    population=None,
    stats: GramStats | None = None,
    **hyper: Any,
) -> FitResult:
    """ŵ = c·Σ⁻¹(Σ_i (x_i y_i + E_{2,i}))/n with s_xy = σ(ε/2, δ/2, 2rB_y) (Alg 2's, ℓ1 radius r, same
    ``calibration`` as Alg 2) and the exact Σ."""
    if population is None:
        raise ValueError("stein_xty_oracle_cov needs the generator's population (synthetic data only)")
    fam, r = get_family(hyper["family"]), hyper["r"]
    X, y = check_inputs(X, y, epsilon, delta, x_bound=None, y_bound=None)
    n, p = X.shape
    public_X = check_public(public_X, p)
    s_xy = stein_noise_scales(epsilon, delta, r, fam.y_bound(r), hyper["calibration"]).s_xy  # Alg 2's Xᵀy release
    _, xty, _ = clean_sums(X, y, r=r, clip_l2=False, y_clip=None, stats=stats)
    _, E2 = noise_sums(p, n, 0.0, s_xy, rng, "local")
    b_y = fam.y_bound(r)
    z_sum = released(
        "Σ ẑ_i (x y per user)",
        xty + E2,
        lambda: X * y[:, None],
        scale=s_xy,
        users=True,
        aggregate="sum",
        sensitivity=2.0 * r * b_y,
    )
    w_ols = solve_or_lstsq(np.asarray(population.cov, dtype=float), z_sum / n)
    sol = solve_scale(public_X @ w_ols, fam, hyper["c0"])
    snr = float(np.linalg.norm(xty) / (math.sqrt(n * p) * s_xy))
    return FitResult(sol.c * w_ols, {"c_hat": sol.c, "root_status": sol.status, "s_xy": s_xy, "xty_snr": snr})
