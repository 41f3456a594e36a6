"""DP-GD — noisy clipped gradient descent on the squared loss (Brown et al. 2024; 004 §3.9, code variant).

Privacy model: central (ε, δ)-DP, replace-one neighbours (gradient sensitivity Δ = 2C/n per step; conservative
for the zero-out notion of the other 004 methods, ambiguity #12). Two accountings of the T Gaussian releases:

* ``accounting="zcdp"`` (default, the paper's; Eq. 157): σ² = 2TC²/(n²ρ(ε, δ)) with the Bun–Steinke
  ρ(ε, δ) = (√(ε + log(1/δ)) − √(log(1/δ)))²;
* ``accounting="gdp"`` (``privacy: strict``; spec 005 §4): σ = √T·Δ/μ*(ε, δ) = √T·σ_AGM(ε, δ, Δ), μ* the exact
  GDP parameter of (ε, δ) — the T releases are jointly exactly μ*-GDP, i.e. exactly (ε, δ)-DP (Dong–Roth–Su
  Cor. 2.13, 3.3), ≈ 10–20% less noise than the zCDP conversion.

    for t < T:  Ḡ_t = −(1/n) Σ_i clip(x_i r_i),   r = Y − Xθ_t
                θ_{t+1} = θ_t + b (Z_t − Ḡ_t),      Z_t ~ N(0, σ² I_d)

``clip="residual"`` (default, the code): clip(x_i r_i) = x_i·clip_C(r_i), which bounds ‖x_i r_i‖ ≤ C given the
preprocessing's ‖x_i‖ ≤ 1. ``clip="per_example"`` (Algorithm 7): x_i r_i · min{1, C/‖x_i r_i‖}, no bound on x needed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpbench.contract import SATURATING_LABEL, AuditSetup, Bounds, Choice, Hyper
from dpbench.mechanisms._base import FitResult, check_inputs, released, scaled_output
from dpbench.privacy.agm import sigma_agm_composed
from dpbench.privacy.zcdp import sigma_dpgd
from dpbench.registry import register_mechanism


def clipped_mean_gradient(X: np.ndarray, y: np.ndarray, theta: np.ndarray, C: float, clip: str) -> np.ndarray:
    """Ḡ = −(1/n) Σ_i clip(x_i r_i) with r = Y − Xθ (004 §3.9)."""
    residual = y - X @ theta
    if clip == "residual":
        return -(X.T @ np.clip(residual, -C, C)) / X.shape[0]
    norms = np.abs(residual) * np.linalg.norm(X, axis=1)
    scale = np.minimum(1.0, C / np.maximum(norms, np.finfo(float).tiny))
    return -(X.T @ (residual * scale)) / X.shape[0]


def dpgd_sigma(epsilon: float, delta: float, n: int, T: int, C: float, accounting: str) -> float:
    """Per-step noise std of DP-GD under replace-one neighbours (Δ = 2C/n per step; module docstring, 005 §4).

    ``zcdp``: √(2TC²/(n²ρ(ε, δ))) (004 Eq. 157); ``gdp``: √T·(2C/n)/μ*(ε, δ), exactly (ε, δ)-DP.
    """
    if accounting == "zcdp":
        return sigma_dpgd(epsilon, delta, n, T, C)
    if accounting == "gdp":
        return sigma_agm_composed(epsilon, delta, T, 2.0 * C / n)
    raise ValueError(f"accounting must be 'zcdp' or 'gdp', got {accounting!r}")


#: black-box audit control ``noise_div10``: σ ÷ 10 (both accountings)
AUDIT_NOISE_DIV10 = {"sigma_dpgd": scaled_output(0.1), "sigma_agm_composed": scaled_output(0.1)}


@register_mechanism(
    "dpgd",
    summary="DP-GD: T steps of clipped noisy gradient descent, zCDP or exact-GDP calibrated (Brown et al. 2024)",
    privacy_model="central",
    neighbour="replace_one",
    spec="004 §3.9; 005 §4",
    style={"color": "black", "marker": "X", "linestyle": "-"},
    hyper={
        "T": Hyper(int, default=3, ge=1, doc="gradient steps"),
        "C": Hyper(float, default=1.0, gt=0, doc="clipping level (per-example gradient norm bound)"),
        "learning_rate": Hyper(float, default=0.25, gt=0, doc="step size b"),
        "clip": Choice(
            "residual", "per_example", default="residual", doc="clip the residual (needs ‖x_i‖ ≤ 1) or x_i r_i"
        ),
        "accounting": Choice(
            "zcdp", "gdp", default="zcdp", doc="σ from Bun–Steinke zCDP (the paper's) or the exact GDP μ*(ε, δ)"
        ),
        "clip_scaling": Choice(
            "constant", "sqrt_d", default="constant", doc="clip level C, or C·√d (Brown et al.'s γ = 5√p: C = 5)"
        ),
    },
    strict={"accounting": "gdp"},
    bounds=Bounds(x=lambda h: 1.0 if h["clip"] == "residual" else None),
    audit=AuditSetup(whitebox={"pair": {"y_bound": SATURATING_LABEL}}),  # the residual clip saturates every step
)
def fit(
    X: np.ndarray, y: np.ndarray, epsilon: float, delta: float, rng: np.random.Generator, **hyper: Any
) -> FitResult:
    """DP-GD estimate θ_T after T steps from θ_0 = 0.

    ``info["path"]`` is the whole released path θ_0, …, θ_T (array (T + 1, d); post-processing of the T noisy
    gradients, so free of privacy cost — Brown et al.'s checkpoint intervals are built on it). It is not a CSV column.
    """
    T, clip = int(hyper["T"]), hyper["clip"]
    x_bound = 1.0 if clip == "residual" else None
    X, y = check_inputs(X, y, epsilon, delta, x_bound=x_bound, y_bound=None)
    C = hyper["C"] * (np.sqrt(X.shape[1]) if hyper["clip_scaling"] == "sqrt_d" else 1.0)  # d is public
    sigma = dpgd_sigma(epsilon, delta, X.shape[0], T, C, hyper["accounting"])
    path = np.zeros((T + 1, X.shape[1]))
    for t in range(T):
        gradient = clipped_mean_gradient(X, y, path[t], C, clip)
        step = released(f"noisy gradient {t + 1}", sigma * rng.standard_normal(X.shape[1]) - gradient, -gradient,
                        scale=sigma, sensitivity=2.0 * C / X.shape[0])  # fmt: skip
        path[t + 1] = path[t] + hyper["learning_rate"] * step
    return FitResult(path[T].copy(), {"sigma": sigma, "path": path})
