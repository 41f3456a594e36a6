"""Small linear-algebra helpers of information-weighted regression (spec 000 §3.0; spec 001 §3 helpers).

All functions are pure (no randomness). Matrices passed as "symmetric" are symmetrised before ``eigh`` so
round-off asymmetry never leaks into the results.
"""

from __future__ import annotations

import numpy as np

from dpbench.linalg import sym_eigh


def msqrt(S: np.ndarray) -> np.ndarray:
    """Principal square root of a symmetric PSD matrix (negative round-off eigenvalues clipped at 0)."""
    vals, vecs = sym_eigh(S)
    return (vecs * np.sqrt(np.clip(vals, 0.0, None))) @ vecs.T


def inv_msqrt(S: np.ndarray) -> np.ndarray:
    """S^{-1/2} of a symmetric positive definite matrix (raises if S is not PD)."""
    vals, vecs = sym_eigh(S)
    if vals.min() <= 0:
        raise np.linalg.LinAlgError(f"inv_msqrt: matrix is not positive definite (λ_min = {vals.min():.3g})")
    return (vecs / np.sqrt(vals)) @ vecs.T


def sym_update(X: np.ndarray, F: np.ndarray) -> np.ndarray:
    """Spectral update X⁺ = sym(F^{-1/2} X) = (X F^{-1} X)^{1/2} (spec 000 §2.3 / Eq. 14, 20)."""
    inner = X @ np.linalg.solve(F, X)
    return msqrt((inner + inner.T) / 2.0)


def floor_psd(S: np.ndarray, floor: float) -> tuple[np.ndarray, bool]:
    """Floor the eigenvalues of symmetric S at ``floor`` (post-processing, spec 000 §3.0 / #10).

    Returns (floored matrix, whether any eigenvalue was raised).
    """
    vals, vecs = sym_eigh(S)
    if vals.min() >= floor:
        return (S + S.T) / 2.0, False
    vals = np.maximum(vals, floor)
    return (vecs * vals) @ vecs.T, True


def max_abs_log_eig(F: np.ndarray) -> float:
    """max |log λ_i(F)| of a symmetric PD matrix: the convergence measure of the spectral iteration (§2.3)."""
    vals = np.linalg.eigvalsh((F + F.T) / 2.0)
    if vals.min() <= 0:
        return float("inf")
    return float(np.max(np.abs(np.log(vals))))


#: widest rows whose squares numpy's reduction adds strictly left to right (its pairwise sum blocks by 8 terms)
SEQUENTIAL_SUM_MAX = 7


def row_norms(M: np.ndarray) -> np.ndarray:
    """‖m‖₂ of every row m (last axis), bit for bit ``np.linalg.norm(M, axis=-1)``, ≈ 3× faster for d ≤ 7.

    For d ≤ SEQUENTIAL_SUM_MAX numpy sums a row's squares left to right, ((m₀² + m₁²) + m₂²) + …, which the loop over
    columns reproduces without the (n, d) temporary and the per-row reduction; wider rows use ``np.linalg.norm``
    (issue 16; ``tests/mechanisms/iwr/test_iwr_speed.py`` checks the equality).
    """
    M = np.asarray(M, dtype=float)
    d = M.shape[-1]
    if d == 0 or d > SEQUENTIAL_SUM_MAX:
        return np.linalg.norm(M, axis=-1)
    total = M[..., 0] * M[..., 0]
    for j in range(1, d):
        total += M[..., j] * M[..., j]
    return np.sqrt(total)


def unit_rows(M: np.ndarray) -> np.ndarray:
    """Rows divided by their norms; zero rows stay zero (+0.0). A plain division by the norms (1 for zero rows, whose
    entries are then reset to +0.0) — the same numbers as a masked ``np.divide(..., where=norms > 0)``, faster."""
    M = np.asarray(M, dtype=float)
    norms = row_norms(M)
    zero = norms == 0
    out = M / np.where(zero, 1.0, norms)[..., None]
    if zero.any():
        out[zero] = 0.0
    return out


def _secular_root(g, target: float) -> float:
    """Smallest μ > 0 with g(μ) = target for a decreasing g with g(0⁺) > target (doubling + bisection)."""
    lo, hi = 0.0, 1.0
    while g(hi) > target:
        lo, hi = hi, 2.0 * hi
        if hi > 1e300:
            break
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if g(mid) > target:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-13 * hi:
            break
    return hi


def ball_lsq(A: np.ndarray, b: np.ndarray, r: float = 1.0) -> np.ndarray:
    """argmin_{‖θ‖ ≤ r} ‖Aθ − b‖ (spec 000 §3.0, exact secular-equation method).

    M = AᵀA, c = Aᵀb. If M is invertible and ‖M^{-1}c‖ ≤ r return it; otherwise, in the eigenbasis M = Q diag(m) Qᵀ,
    c' = Qᵀc, find μ > max(0, −min m) with Σ c'_i²/(m_i + μ)² = r² and return Q(c'/(m + μ)); if M is singular and
    the secular function stays below r² as μ ↓ 0, return the minimum-norm solution pinv(M)c.
    """
    A = np.atleast_2d(np.asarray(A, dtype=float))
    b = np.asarray(b, dtype=float)
    M = A.T @ A
    c = A.T @ b
    m, Q = sym_eigh(M)
    cp = Q.T @ c
    scale = max(float(np.max(np.abs(m))), 1e-300)
    if m.min() > 1e-12 * scale:
        theta = Q @ (cp / m)
        if np.linalg.norm(theta) <= r:
            return theta
    else:
        pinv_theta = np.linalg.pinv(M) @ c
        if np.linalg.norm(pinv_theta) <= r:
            return pinv_theta
    m = np.clip(m, 0.0, None)  # M is PSD; clip round-off

    def g(mu: float) -> float:
        return float(np.sum(cp**2 / (m + mu) ** 2))

    mu = _secular_root(g, r * r)
    return Q @ (cp / (m + mu))


def proj_ellipsoid(X: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Euclidean projection of v onto {w: ‖Xw‖ ≤ 1} for symmetric PD X (spec 001 §3 helper ``Proj_{W_X}``).

    If ‖Xv‖ ≤ 1 return v; else w = (I + μX²)^{-1}v with μ > 0 solving Σ x_i² v'_i²/(1 + μx_i²)² = 1 in the
    eigenbasis X = Q diag(x) Qᵀ, v' = Qᵀv.
    """
    v = np.asarray(v, dtype=float)
    if np.linalg.norm(X @ v) <= 1.0:
        return v
    x, Q = sym_eigh(X)
    vp = Q.T @ v
    x2 = x**2

    def g(mu: float) -> float:
        return float(np.sum(x2 * vp**2 / (1.0 + mu * x2) ** 2))

    mu = _secular_root(g, 1.0)
    return Q @ (vp / (1.0 + mu * x2))
