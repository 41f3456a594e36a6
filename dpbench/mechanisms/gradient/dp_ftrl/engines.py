"""DP-FTRL-Σ engines (spec 002 §3.1): :func:`run_blocked` (fixed ψ, exact, one B×B Gram per block of B steps) and
:func:`run_reference` (the literal loop with the tree; adaptive ψ_t), same draws, same output up to round-off."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.linalg import solve_triangular

from dpbench.mechanisms._base import recording, released
from dpbench.mechanisms.gradient.dp_ftrl.covariance import NoiseCovariance
from dpbench.mechanisms.gradient.tree_noise import BlockedTreeNoise, TreeNoise, blocked_tree_noise
from dpbench.privacy.tree import v2


@dataclass(frozen=True)
class GatheredRows:
    """The rows ``source[perm]`` with their columns times ``scale`` (if given), gathered a block at a time.

    ``rows[t0:t1]`` = source[perm[t0:t1]]·scale: the same values as slicing the (N, k) array source[perm]·scale,
    without making it (no (N, k) copy per fit). ``perm`` None is the drawn order (an unshuffled stream): a block is
    then source[t0:t1]·scale, written in one pass instead of a gather and an in-place product (same products), or
    without ``scale`` a view of source (read only)."""

    source: np.ndarray
    perm: np.ndarray | None
    scale: np.ndarray | None = None

    def __getitem__(self, rows: slice) -> np.ndarray:
        if self.perm is None:
            return self.source[rows] * self.scale if self.scale is not None else self.source[rows]
        out = self.source[self.perm[rows]]
        if self.scale is not None:
            out *= self.scale
        return out


@dataclass
class EngineResult:
    theta: np.ndarray  # w̄_N
    w_last: np.ndarray  # w_N (diagnostic)
    clip_frac: float
    psi_max: float = math.nan
    failures: int = 0
    iterates: np.ndarray | None = None  # (N+1, d) when requested (reference engine, tests)


def clip_coefficient(r: float, q: float, psi: float) -> float:
    """c with g = c·x = CLIP(r x, ψ, Σ): r·min{1, ψ/(|r| q)}, where q = ‖x‖_{Σ⁻¹} (CLIP(0) = 0)."""
    norm = abs(r) * q
    return r if norm <= psi else r * psi / norm


def block_grams(X: np.ndarray, block: int) -> list[np.ndarray]:
    """X_b X_bᵀ of every block of ``block`` consecutive rows (the in-block inner products x_tᵀx_i)."""
    return [X[t0 : t0 + block] @ X[t0 : t0 + block].T for t0 in range(0, X.shape[0], block)]


def block_coefficients(
    base: np.ndarray, gram: np.ndarray, y: np.ndarray, q: np.ndarray, eta: float, psi: float
) -> tuple[np.ndarray, int]:
    """The block's scalar recursion: c_u = CLIP coefficient of r_u = −η(base_u + Σ_{v<u} gram_{uv} c_v) − y_u.

    ``base_u`` = x_uᵀ(G_{t0} + σFν_u(t0+u)) holds everything fixed before the block; returns (c, #clipped).
    Scalars are Python floats (the same IEEE doubles as numpy scalars, several times cheaper per operation); the
    inner products go through ``np.dot`` (the same BLAS ddot as ``@`` on two vectors, with less dispatch per call).
    """
    b = base.shape[0]
    cb = np.zeros(b)
    clipped = 0
    base_l, y_l, q_l = base.tolist(), y.tolist(), q.tolist()
    dot = np.dot
    for u, row in enumerate(gram):
        r = -eta * (base_l[u] + float(dot(row[:u], cb[:u]))) - y_l[u]
        norm = abs(r) * q_l[u]
        if norm > psi:
            cb[u] = r * psi / norm
            clipped += 1
        else:
            cb[u] = r
    return cb, clipped


def run_blocked(
    X: np.ndarray,
    y: np.ndarray,
    q: np.ndarray,
    psi: float,
    sigma: float,
    eta: float,
    cov: NoiseCovariance,
    rng: np.random.Generator,
    block: int = 128,
    XF: np.ndarray | GatheredRows | None = None,
    grams: list[np.ndarray] | None = None,
    noise: BlockedTreeNoise | None = None,
) -> EngineResult:
    """Algorithm 1 with fixed ψ and node std σ = τψ, blocked as described in the module docstring.

    The noise is kept in the standard-normal coordinates u of z = F u: the iterates only need x_tᵀν(t) =
    (Fᵀx_t)ᵀν_u(t) and the weighted sum Σ m_s z_s = F Σ m_s u_s, so a dense Σ costs O(Nd) per trial once
    ``XF`` = X F (``cov.transpose_apply(X)``, cacheable across trials, or a :class:`GatheredRows` of it) is known
    (identity/diagonal Σ: computed per block). ``grams`` (:func:`block_grams`) and ``noise``
    (:func:`~dpbench.mechanisms.gradient.tree_noise.blocked_tree_noise` of this rng) may be passed
    precomputed: they depend only on the stream and the rng, not on Σ, σ, ψ or η.
    """
    n, d = X.shape
    if block < 1 or block & (block - 1):
        raise ValueError(f"block must be a power of 2, got {block}")
    if sigma > 0:
        if XF is None and cov.kind not in ("identity", "diag"):
            XF = cov.transpose_apply(X)
        if noise is None:
            noise = blocked_tree_noise(rng, n, cov.noise_dim, block)
    if grams is None:
        grams = block_grams(X, block)
    G = np.zeros(d)  # Σ_{i<t0} g_i
    coef = np.empty(n)
    clipped = 0
    for index, t0 in enumerate(range(0, n, block)):
        b = min(block, n - t0)
        Xb = X[t0 : t0 + b]
        if sigma > 0:
            XFb = cov.transpose_apply(Xb) if XF is None else XF[t0 : t0 + b]  # elementwise Σ: per block, no (N, d) copy
            a = sigma * (XFb @ noise.starts[index] + np.einsum("ij,ij->i", XFb, noise.inblock[t0 : t0 + b]))
        else:
            a = np.zeros(b)
        cb, clips = block_coefficients(Xb @ G + a, grams[index], y[t0 : t0 + b], q[t0 : t0 + b], eta, psi)
        clipped += clips
        coef[t0 : t0 + b] = cb
        G = G + Xb.T @ cb
    steps_left = (n - 1 - np.arange(n)).astype(float)
    noise_avg = sigma * cov.apply_factor(noise.total) if sigma > 0 else 0.0
    theta = -(eta / n) * (X.T @ (steps_left * coef) + noise_avg)
    w_last = -eta * (G + (sigma * cov.apply_factor(noise.end) if sigma > 0 else 0.0))
    return EngineResult(theta, w_last, clipped / n, psi)


def run_reference(
    X: np.ndarray,
    y: np.ndarray,
    q: np.ndarray,
    tau: float,
    eta: float,
    cov: NoiseCovariance,
    rng: np.random.Generator,
    *,
    psi_fn=None,
    psi: float | None = None,
    keep_iterates: bool = False,
) -> EngineResult:
    """The literal Algorithm 1 loop (one tree step per example). ψ_t = psi_fn(w_t) if given, else the fixed ψ.

    Node std σ_t = τ·max_{s≤t} ψ_s (running max, spec 002 §3.1).
    """
    n, d = X.shape
    tree = TreeNoise(n, d, lambda: cov.sample(rng, 1)[0])
    w = np.zeros(d)
    wsum = np.zeros(d)
    iterates = np.zeros((n + 1, d)) if keep_iterates else None
    nodes = TreeNodes(n, d, cov) if recording() else None  # the audit's view of the nodes
    with np.errstate(over="ignore", invalid="ignore"):  # a divergent adaptive ψ_t overflows; reported, not raised
        return _reference_loop(X, y, q, tau, eta, tree, w, wsum, psi_fn, psi, iterates, nodes)


class TreeNodes:
    """Declares the tree's releases: the node completing at step s, block sum + N(0, σ²Σ), which is the difference of
    the noisy prefix sums p_s − p_{s − lowbit(s)} (spec 002 §3.2; every prefix is a sum of nodes).

    For a designed Σ ≠ I the node is declared *whitened*, L⁻¹(block + z) with L Lᵀ = Σ (a public, invertible map, so
    the whitened node carries exactly the same information): its noise is N(0, σ²I), and the audit's Gaussian
    likelihood ratio of the whitened node is the likelihood ratio with the known covariance σ²Σ."""

    def __init__(self, n: int, d: int, cov: NoiseCovariance | None = None):
        self.totals = np.zeros((n + 1, d))
        self.prefixes = np.zeros((n + 1, d))
        isotropic = cov is None or (cov.kind == "identity" and cov.scale == 1.0)
        self.chol = None if isotropic else np.linalg.cholesky(cov.matrix())

    def _whiten(self, v: np.ndarray) -> np.ndarray:
        return v if self.chol is None else solve_triangular(self.chol, v, lower=True)

    def declare(self, s: int, g: np.ndarray, noisy: np.ndarray, sigma: float, z: np.ndarray) -> np.ndarray:
        """Record step s's node (leaf g, node noise z); return the noisy prefix (unchanged outside an audit)."""
        self.totals[s] = self.totals[s - 1] + g
        start = s - (s & -s)
        block = self.totals[s] - self.totals[start]
        node = self._whiten(block + z)
        name = "tree node" if self.chol is None else "tree node (whitened by Σ)"
        out = released(name, node, lambda: self._whiten(block), scale=sigma)
        if out is not node:  # an audit replaced the value: continue from the released node
            noisy = self.prefixes[start] + (out if self.chol is None else self.chol @ out)
        self.prefixes[s] = noisy
        return noisy


def _reference_loop(X, y, q, tau, eta, tree, w, wsum, psi_fn, psi, iterates, nodes=None) -> EngineResult:
    """Body of :func:`run_reference` (stops early once an iterate is no longer finite)."""
    n = X.shape[0]
    psi_max = 0.0
    clipped = 0
    failures = 0
    keep_iterates = iterates is not None
    for t in range(n):
        if not np.all(np.isfinite(w)):  # diverged: the average is not finite either
            wsum[:] = np.nan
            break
        wsum += w
        if psi_fn is not None:
            value = psi_fn(w)
            if value is None:
                failures += 1
                value = psi_max
            psi_t = float(value)
        else:
            psi_t = float(psi)
        psi_max = max(psi_max, psi_t)
        r = float(X[t] @ w - y[t])
        c = clip_coefficient(r, q[t], psi_t)
        clipped += c != r
        noisy = tree.step(c * X[t], tau * psi_max if tau > 0 else 0.0)
        if nodes is not None and tau > 0:
            noisy = nodes.declare(t + 1, c * X[t], noisy, tau * psi_max, tree.latest[v2(t + 1)])
        w = -eta * noisy
        if keep_iterates:
            iterates[t + 1] = w
    return EngineResult(wsum / n, w, clipped / n, psi_max, failures, iterates)
