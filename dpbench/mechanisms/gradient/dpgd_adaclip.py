"""Adaptive-clip DP-GD — residual clipping at a private quantile (after Liu, Jain, Kong, Oh, Suggala, NeurIPS 2023
"Label robust and differentially private linear regression", DP-ROBGD; spec 005 §5, RECALLED — see
docs/deviations.md for what was confirmed from the paper's text and what dpbench decided).

Privacy model: central, μ*(ε, δ)-GDP (exactly (ε, δ)-DP), replace-one neighbours (n public), rows ‖x_i‖ ≤ 1
(declared). Full-batch gradient descent from θ_0 = 0; for t = 1..T:

1. h_t = counts of |r_i|, r = y − Xθ_{t−1}, over the fixed geometric bins [0, b_0), [b_0, 2b_0), …, [b_0 2^{K−1},
   b_0 2^K), [b_0 2^K, ∞) (``bins`` = K + 2 counts); release h̃_t = h_t + σ_h·N(0, I)   (ℓ2 sensitivity √2)
2. τ_t = the upper edge of the first bin where the noisy cumulative count reaches q·n (``quantile`` q), or the top
   edge b_0 2^K if none does — post-processing of h̃_t
3. g_t = (1/n) Σ_i x_i·clip(r_i, −τ_t, τ_t); release g̃_t = g_t + (2τ_t/n)·σ_g·N(0, I_d)  (sensitivity 2τ_t/n)
4. θ_t = θ_{t−1} + η·g̃_t

Budget: the 2T releases are Gaussian with μ_h = √2/σ_h and μ_g = 1/σ_g; T(μ_h² + μ_g²) = μ*² with a share
``quantile_share`` = Tμ_h²/μ*² of it on the histograms (adaptive GDP composition, Dong–Roth–Su Cor. 3.3).
Corrupted labels have large residuals once θ_t is near θ*, so the clip at the q-quantile caps their pull.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpbench.contract import SATURATING_LABEL, AuditSetup, Bounds, Hyper
from dpbench.mechanisms._base import FitResult, check_inputs, released, scaled_output
from dpbench.privacy.gdp import gdp_mu
from dpbench.registry import register_mechanism


def adaclip_multipliers(epsilon: float, delta: float, T: int, quantile_share: float) -> tuple[float, float]:
    """(σ_h, σ_g): histogram noise std (counts) and gradient noise multiplier (per unit of sensitivity) with
    T·(2/σ_h² + 1/σ_g²) = μ*(ε, δ)² and a share ``quantile_share`` of μ*² on the histograms (module docstring)."""
    if not 0 < quantile_share < 1:
        raise ValueError(f"quantile_share must lie in (0, 1), got {quantile_share!r}")
    mu = gdp_mu(epsilon, delta)
    mu_hist = mu * math.sqrt(quantile_share / T)
    mu_grad = mu * math.sqrt((1.0 - quantile_share) / T)
    return math.sqrt(2.0) / mu_hist, 1.0 / mu_grad


def bin_edges(base: float, bins: int) -> np.ndarray:
    """The K + 1 = ``bins`` − 1 finite edges b_0·2^k, k = 0..K, of the residual histogram (data-independent)."""
    return base * 2.0 ** np.arange(bins - 1)


def residual_histogram(residual: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Counts of |r_i| in [0, e_0), [e_0, e_1), …, [e_K, ∞): len(edges) + 1 bins, one count per row."""
    return np.bincount(np.searchsorted(edges, np.abs(residual), side="right"), minlength=edges.size + 1).astype(float)


def quantile_threshold(noisy_counts: np.ndarray, edges: np.ndarray, target: float) -> float:
    """τ: the upper edge of the first bin whose noisy cumulative count reaches ``target`` (= q·n); the top edge if
    none does, or if it is the open last bin (post-processing of the released histogram)."""
    reached = np.nonzero(np.cumsum(noisy_counts) >= target)[0]
    index = int(reached[0]) if reached.size else edges.size
    return float(edges[min(index, edges.size - 1)])


#: black-box audit control ``noise_div10``: μ* × 10 ⇒ both noise stds ÷ 10
AUDIT_NOISE_DIV10 = {"gdp_mu": scaled_output(10.0)}


@register_mechanism(
    "dpgd_adaclip",
    summary="DP-GD with the residual clip at a private quantile (after Liu et al. 2023 DP-ROBGD), exact GDP",
    privacy_model="central",
    neighbour="replace_one",
    spec="005 §5",
    style={"color": "tab:gray", "marker": "P", "linestyle": "-."},
    hyper={
        "T": Hyper(int, default=25, ge=1, doc="gradient steps (2T releases)"),
        "learning_rate": Hyper(float, default=1.0, gt=0, lt=2, doc="step size η (‖x‖ ≤ 1 ⇒ λ_max(XᵀX/n) ≤ 1)"),
        "quantile": Hyper(float, default=0.9, gt=0, lt=1, doc="q: clip the residuals at their private q-quantile"),
        "quantile_share": Hyper(float, default=0.2, gt=0, lt=1, doc="share of μ*² spent on the T histograms"),
        "bins": Hyper(int, default=13, ge=3, doc="histogram bins (geometric, ratio 2, from base)"),
        "base": Hyper(float, default=2.0**-10, gt=0, doc="first bin edge b_0 of the residual histogram"),
    },
    bounds=Bounds(x=1.0),
    audit=AuditSetup(whitebox={"pair": {"y_bound": SATURATING_LABEL}}),
)
def fit(
    X: np.ndarray, y: np.ndarray, epsilon: float, delta: float, rng: np.random.Generator, **hyper: Any
) -> FitResult:
    """Adaptive-clip DP-GD estimate θ_T; ``info["path"]`` holds θ_0 … θ_T and ``info["thresholds"]`` τ_1 … τ_T."""
    X, y = check_inputs(X, y, epsilon, delta, x_bound=1.0, y_bound=None)
    n, d = X.shape
    T = int(hyper["T"])
    sigma_h, sigma_g = adaclip_multipliers(epsilon, delta, T, hyper["quantile_share"])
    edges = bin_edges(hyper["base"], hyper["bins"])
    path, taus = np.zeros((T + 1, d)), np.zeros(T)
    for t in range(T):
        residual = y - X @ path[t]
        counts = residual_histogram(residual, edges)
        noisy = released(f"residual histogram {t + 1}", counts + sigma_h * rng.standard_normal(counts.size), counts,
                         scale=sigma_h, sensitivity=math.sqrt(2.0))  # fmt: skip
        taus[t] = quantile_threshold(noisy, edges, hyper["quantile"] * n)
        gradient = X.T @ np.clip(residual, -taus[t], taus[t]) / n
        scale = 2.0 * taus[t] / n * sigma_g
        step = released(f"noisy gradient {t + 1}", gradient + scale * rng.standard_normal(d), gradient,
                        scale=scale, sensitivity=2.0 * taus[t] / n)  # fmt: skip
        path[t + 1] = path[t] + hyper["learning_rate"] * step
    info = {"sigma_hist": sigma_h, "sigma_grad": sigma_g, "tau_last": taus[-1], "path": path, "thresholds": taus}
    return FitResult(path[T].copy(), info)
