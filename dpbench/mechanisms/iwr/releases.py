"""The private releases of the information-weighted family — one copy of each, called by the regression
mechanisms (:mod:`.central`, :mod:`.local`) and by the bandit oracles (:mod:`dpbench.bandits.oracles`), each
recorded with :func:`~dpbench.mechanisms._base.released` so the audit sees it (issue 36 item 6).

Central (spec 000 Alg 4, Alg 14, §3.12): the spectral iteration's H̃_(k), the noisy Hessian H̃ and the output
perturbation w̃ of DP-ERM, the sufficient statistics (G̃, g̃). Local (Alg 2, §3.12): the users' Ṽ_t of the spectral
iteration, the sufficient statistics (Σ̂, ĝ). The noise of a mean over users is
:func:`~dpbench.mechanisms._simulation.mean_noise` (aggregate or per user). Calibration (the stds) stays with the
caller; these functions draw from the caller's ``rng`` only.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dpbench.mechanisms._base import released
from dpbench.mechanisms._simulation import mean_noise, sym_gaussian
from dpbench.mechanisms.iwr.matrix import SpectralResult, dp_weight, ldp_weight, spectral_iteration


def spectral_dp_release(
    blocks: list[np.ndarray], *, gamma: float, lam: float, std: float, sensitivity: float, rng: np.random.Generator
) -> SpectralResult:
    """The private releases of Algorithm 4 — the one copy, also run by the bandits' JDP oracles: one epoch per
    block, H̃_(k) = H_(k) + Sym_d(std²) (SymPriv; ``std`` = 0: H itself, no draw), each recorded with its
    l2-sensitivity; constant λ; floor at λ/2 (:func:`~dpbench.mechanisms.iwr.matrix.spectral_iteration`)."""
    d = blocks[0].shape[1]

    def noise(k: int, H: np.ndarray) -> np.ndarray:
        if std <= 0:
            return H
        return released(f"H̃ epoch {k + 1}", H + sym_gaussian(d, std, rng), H, scale=std, symmetric=True,
                        sensitivity=sensitivity)  # fmt: skip

    return spectral_iteration(blocks, dp_weight(gamma), noise, [lam] * len(blocks))


def hessian_release(
    H: np.ndarray, std: float, rng: np.random.Generator, *, sensitivity: float
) -> tuple[np.ndarray, np.ndarray]:
    """Algorithm 14's noisy Hessian — the one copy, also run by the bandits' GLM oracle: H̃ = H + Z with
    Z ~ Sym_d(std²) (no draw, Z = 0, when std = 0), recorded; returns (H̃, Z) (the GLM regulariser uses Z)."""
    d = H.shape[0]
    Z = sym_gaussian(d, std, rng) if std > 0 else np.zeros((d, d))
    H_tilde = H + Z
    if std > 0:
        H_tilde = released("H̃", H_tilde, H, scale=std, symmetric=True, sensitivity=sensitivity)
    return H_tilde, Z


def output_release(w: np.ndarray, std: float, rng: np.random.Generator, *, sensitivity: float) -> np.ndarray:
    """Algorithm 14's output perturbation — the one copy, also run by the bandits' GLM oracle: w̃ = w + N(0, std² I)
    (drawn even at std = 0, so the rng stream does not depend on ε), recorded when std > 0."""
    w_tilde = w + std * rng.standard_normal(w.shape[0])
    return released("w̃", w_tilde, w, scale=std, sensitivity=sensitivity) if std > 0 else w_tilde


def central_ssp_release(
    X: np.ndarray,
    y: np.ndarray,
    s_G: float,
    s_g: float,
    rng: np.random.Generator,
    *,
    B: float,
    factor: float,
    moments: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The central sufficient-statistics release — the one copy, also run by the bandits' JDP SSP-OLS oracle
    (spec 000 §3.12): G̃ = XᵀX/n + Sym_d(s_G²), g̃ = Xᵀy/n + N(0, s_g² I), l2-sensitivities 2B²f/n, 2Bf/n (f = ½
    zero-out); G̃ draws nothing when s_G = 0 (a non-private oracle run); both recorded when private.
    ``moments``: (XᵀX/n, Xᵀy/n) when the caller has them (a memo)."""
    n, d = X.shape
    G0, g0 = (X.T @ X / n, X.T @ y / n) if moments is None else moments
    G = G0 + sym_gaussian(d, s_G, rng) if s_G > 0 else G0
    g = g0 + s_g * rng.standard_normal(d)
    if s_G > 0:
        G = released("G = XᵀX/n", G, G0, scale=s_G, symmetric=True, sensitivity=2.0 * B * B * factor / n)
        g = released("g = XᵀY/n", g, g0, scale=s_g, sensitivity=2.0 * B * factor / n)
    return G, g


def spectral_ldp_release(
    blocks: Sequence[np.ndarray], *, lam: float, std: float, B: float, rng: np.random.Generator, per_user: bool
) -> SpectralResult:
    """The private releases of Algorithm 2 — the one copy, also run by the bandit oracles (spec 000 §3.2).

    One epoch per block of N users: per user V_t = U^{1/2}φφᵀU^{1/2}/‖Uφ‖ (‖V_t‖_F ≤ ‖φ‖ ≤ B), Ṽ_t = SymPriv_B(V_t)
    with per-user std ``std`` (0: non-private, H itself); λ_(k) = (2k+1)λ/(2K+1); floor at λ_(k)/2. Epoch noise:
    mean of N users' Sym_d(std²) = Sym_d(std²/N) in law (aggregate) or drawn per user (``per_user``)."""
    K = len(blocks)
    N, d = blocks[0].shape

    def noise(k: int, H: np.ndarray, rows) -> np.ndarray:
        if std == 0:
            return H
        value = H + mean_noise(N, (d, d), std, rng, per_user=per_user, symmetric=True)
        return released(f"Ṽ epoch {k + 1}", value, rows, scale=std, symmetric=True, users=True, sensitivity=2.0 * B)

    schedule = [(2 * k + 1) * lam / (2 * K + 1) for k in range(K)]
    return spectral_iteration(list(blocks), ldp_weight, noise, schedule, user_rows=True)


def ldp_ssp_release(
    X: np.ndarray, y: np.ndarray, s_G: float, s_g: float, rng: np.random.Generator, *, B: float, per_user: bool
) -> tuple[np.ndarray, np.ndarray]:
    """The LDP sufficient-statistics release — the one copy, also run by the bandits' LDP SSP-OLS oracle (spec 000
    §3.12): each user reports φφᵀ + Sym_d(s_G²) and φy + N(0, s_g² I) (l2-sensitivities 2B², 2B), the server
    averages: (Σ̂, ĝ) = (XᵀX/n, Xᵀy/n) + :func:`~dpbench.mechanisms._simulation.mean_noise`. Σ̂ draws nothing when
    s_G = 0 (a non-private oracle run); both are recorded when private."""
    n, d = X.shape
    G = X.T @ X / n
    if s_G > 0:
        G = G + mean_noise(n, (d, d), s_G, rng, per_user=per_user, symmetric=True)
    g = X.T @ y / n + mean_noise(n, (d,), s_g, rng, per_user=per_user)
    if s_G > 0:
        G = released("Σ̂ (φφᵀ per user)", G, lambda: X[:, :, None] * X[:, None, :], scale=s_G, symmetric=True,
                     users=True, sensitivity=2.0 * B * B)  # fmt: skip
        g = released("ĝ (φy per user)", g, lambda: X * y[:, None], scale=s_g, users=True, sensitivity=2.0 * B)
    return G, g
