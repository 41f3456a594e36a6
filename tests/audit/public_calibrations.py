"""Three public calibrations that are not private at the ε they claim (spec 005 §11, §1(b), §4), written here as
dpbench plug-ins (our code, from the formulas the spec quotes; no line of the public code is copied) so that
``dpbench audit`` can be run on them. Each declares its releases honestly — at the noise it really adds — so the
white-box audit sees what the calibration gives; the claim is the public code's.

* :func:`boosted_adassp_public` — Boosted AdaSSP as in its 2024 public code: noise std Δ·μ with μ the GDP
  parameter of (ε, δ), where Δ·√(T + 2)/μ is needed (spec 005 §1(b)).
* :func:`brown_dpgd_prototype` — the prototype DP-GD of Brown et al.: s² = T·log(1/δ)·γ²/(ε²n²) on the mean
  clipped gradient, i.e. μ = ε/√log(1/δ) GDP (zero-out), not ε (spec 005 §4: exact ε 1.148 at claim 1, δ = 10⁻⁶).
* :func:`wang_ssp` — Wang's plain SSP: σ = √log(4/δ)/ε on XᵀY and on a full d×d noise on XᵀX + I, each release at
  the full ε (spec 005 §2a, §11: exact ε 1.587 at claim 1, δ = 10⁻⁶).

Usage: ``PYTHONPATH=tests/audit dpbench audit public_calibrations:wang_ssp -e 1 --delta 1e-6`` (docs/privacy.md
quotes the output).
"""

from __future__ import annotations

import math

import numpy as np

from dpbench.mechanisms import released
from dpbench.privacy.gdp import gdp_mu

ROUNDS = 100  # Boosted AdaSSP's default T
DPGD_STEPS, DPGD_STEP, DPGD_CLIP = 50, 0.2, 1.0  # T, η, γ (γ = 1 for rows and labels in the unit ball)


def boosted_adassp_public(X, y, epsilon, delta, rng):
    """Boosted AdaSSP (spec 005 §1 steps 3–7, C_x = C_y = 1, η = 1) with the 2024 public code's noise std Δ·μ."""
    n, d = X.shape
    s = gdp_mu(epsilon, delta)  # the bug: the GDP parameter used as the noise std (Δ = 1)
    xtx = X.T @ X
    i, j = np.triu_indices(d)
    z = np.zeros((d, d))
    z[i, j] = rng.standard_normal(i.size)
    z[j, i] = z[i, j]
    xtx_r = released("XᵀX", xtx + s * z, xtx, scale=s, sensitivity=1.0, symmetric=True)
    lam = float(np.linalg.eigvalsh(xtx)[0])
    lam_r = released("λ_min(XᵀX)", lam + s * rng.standard_normal(), lam, scale=s, sensitivity=1.0)
    lam_lb = max(0.0, lam_r - 1.96 * s)
    H = xtx_r + max(0.0, math.sqrt(d) * s * 1.96 - lam_lb) * np.eye(d)
    theta = np.zeros(d)
    for t in range(ROUNDS):
        grad = X.T @ np.clip(y - X @ theta, -1.0, 1.0)
        g_r = released(f"gradient {t + 1}", grad + s * rng.standard_normal(d), grad, scale=s, sensitivity=1.0)
        theta = theta + np.linalg.lstsq(H, g_r, rcond=None)[0]
    return theta


boosted_adassp_public.privacy_model = "central"
boosted_adassp_public.neighbour = "zero_out"


def brown_dpgd_prototype(X, y, epsilon, delta, rng):
    """Full-batch DP-GD with per-example clipping to γ and the prototype's s² = T·log(1/δ)·γ²/(ε²n²)."""
    n, d = X.shape
    s = math.sqrt(DPGD_STEPS * math.log(1.0 / delta)) * DPGD_CLIP / (epsilon * n)
    theta = np.zeros(d)
    for t in range(DPGD_STEPS):
        g = (y - X @ theta)[:, None] * X
        norms = np.linalg.norm(g, axis=1)
        g = g * np.minimum(1.0, DPGD_CLIP / np.maximum(norms, 1e-300))[:, None]
        mean = g.mean(axis=0)
        noisy = released(f"mean clipped gradient {t + 1}", mean + s * rng.standard_normal(d), mean, scale=s,
                         sensitivity=DPGD_CLIP / n)  # fmt: skip
        theta = theta + DPGD_STEP * noisy
    return theta


brown_dpgd_prototype.privacy_model = "central"
brown_dpgd_prototype.neighbour = "zero_out"


def wang_ssp(X, y, epsilon, delta, rng):
    """Plain SSP: XᵀX + I and XᵀY each with noise σ = √log(4/δ)/ε (Δ = 1), each release at the full ε."""
    d = X.shape[1]
    s = math.sqrt(math.log(4.0 / delta)) / epsilon
    xtx, xty = X.T @ X + np.eye(d), X.T @ y
    xtx_r = released("XᵀX + I", xtx + s * rng.standard_normal((d, d)), xtx, scale=s, sensitivity=1.0)
    xty_r = released("XᵀY", xty + s * rng.standard_normal(d), xty, scale=s, sensitivity=1.0)
    return np.linalg.lstsq(xtx_r, xty_r, rcond=None)[0]


wang_ssp.privacy_model = "central"
wang_ssp.neighbour = "zero_out"
