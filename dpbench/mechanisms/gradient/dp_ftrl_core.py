"""DP-FTRL-Σ for one-pass private linear regression (spec 002 §3): covariance designs, rules and the two engines.

Algorithm 1 (spec 002 §3.1), 0-based stream t = 0..N−1, w_0 = 0:

    r_t = x_tᵀw_t − y_t,   g_t = r_t x_t · min{1, ψ_t/(|r_t|·‖x_t‖_{Σ⁻¹})}           (Σ⁻¹-norm clipping)
    g̃_{≤t} = Σ_{i≤t} g_i + ν(t+1)   (tree aggregation, node noise N(0, τ²(max_{s≤t}ψ_s)²Σ))
    w_{t+1} = −η g̃_{≤t}            (FTRL with regulariser ‖w‖²/(2η)),   output w̄_N = (1/N)Σ_{t=0}^{N−1} w_t.

Engines (same draws, same output up to round-off; tested against each other):

* :func:`run_reference` — the literal loop with :class:`~dpbench.mechanisms.gradient.tree_noise.TreeNoise`; needed
  for adaptive ψ_t (RESIDUALEST, §3.3).
* :func:`run_blocked` — fixed ψ (the benchmark default, §3.5). Since g_t = c_t x_t with a scalar c_t, the only
  sequential quantity is c_t; within a block of B steps it needs x_tᵀ(Σ_{i<t} g_i) = x_tᵀG_{t0} + Σ_{t0≤i<t} c_i x_tᵀx_i
  (one B×B Gram per block) and a_t = x_tᵀν(t) (tree noise, batched per block by
  :func:`~dpbench.mechanisms.gradient.tree_noise.inblock_prefix_noise`). The average is
  w̄_N = −(η/N)[Σ_i (N−1−i) g_i + Σ_s m_s z_s] with m_s from
  :func:`~dpbench.mechanisms.gradient.tree_noise.release_counts`.

Noise N(0, σ²Σ) never costs O(d²) per step for a structured Σ: identity/diagonal are elementwise, a dense Σ is
factored once (Cholesky, draws as one GEMM per block), and Σ = (λI + PᵀP)/M with d > M uses the exact low-rank draw
z = √(λ/M)u + Pᵀv/√M and Woodbury norms (§3.4).
"""

from __future__ import annotations

import math
import threading
import weakref
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.linalg import cho_factor, cho_solve, solve_triangular

from dpbench.mechanisms._base import recording, released
from dpbench.mechanisms.gradient.tree_noise import BlockedTreeNoise, TreeNoise, blocked_tree_noise
from dpbench.privacy.tree import kbar, v2

SIGMA_DESIGNS = ("identity", "public", "oracle")
#: square root F (FFᵀ = Σ) of a dense public Σ: eigenbasis (default; XV shared by every ε) or Cholesky
SIGMA_FACTORS = ("eigh", "cholesky")
PSI_MODES = ("fixed", "public_labeled", "private_split")
SPECTRA = ("poly", "exp", "unknown")
#: ‖w̄_N‖ above this (or non-finite) counts as divergence; the estimate is then reported as NaN (info.diverged)
DIVERGED_NORM = 1e8


# ----------------------------------------------------------------------------------------------------------------
# noise covariance designs (spec 002 §3.4)


@dataclass
class NoiseCovariance:
    """Σ ≻ 0 with a cheap sampler of N(0, Σ) rows and cheap Σ⁻¹-norms.

    kind: ``identity`` (Σ = sI), ``diag`` (Σ = diag(v)), ``dense`` (Σ = L Lᵀ, L lower Cholesky),
    ``eigen`` (Σ = V diag(v) Vᵀ, V orthogonal: factor F = V diag(√v), and rows in the basis, XV, serve every v),
    ``lowrank`` (Σ = s(λI + PᵀP)/M, exact O(d(M+1)) draws and Woodbury norms).
    """

    kind: str
    d: int
    scale: float = 1.0
    diag: np.ndarray | None = None
    chol: np.ndarray | None = None
    P: np.ndarray | None = None
    lam: float = 0.0
    inner: Any = field(default=None, repr=False)  # cho_factor of λI_M + PPᵀ
    basis: np.ndarray | None = field(default=None, repr=False)  # V of the eigen design
    cache_key: tuple | None = field(default=None, repr=False)  # set when the per-process cache owns it

    @classmethod
    def identity(cls, d: int) -> NoiseCovariance:
        return cls("identity", int(d))

    @classmethod
    def diagonal(cls, values: np.ndarray) -> NoiseCovariance:
        values = np.asarray(values, dtype=float)
        if values.ndim != 1 or np.any(values <= 0):
            raise ValueError("a diagonal noise covariance needs positive entries")
        return cls("diag", values.size, diag=values)

    @classmethod
    def dense(cls, matrix: np.ndarray) -> NoiseCovariance:
        matrix = np.asarray(matrix, dtype=float)
        return cls("dense", matrix.shape[0], chol=np.linalg.cholesky((matrix + matrix.T) / 2.0))

    @classmethod
    def from_public(
        cls, P: np.ndarray | PublicMoments, lam: float, lowrank: bool | None = None, gram: np.ndarray | None = None
    ) -> NoiseCovariance:
        """Σ = (λI + PᵀP)/M from M public rows P (uncentred, spec 002 Eq. 3.2); low-rank path when d > M.

        P may be :class:`PublicMoments` (PᵀP given; dense Σ only).
        ``gram`` = PᵀP if already computed (it does not depend on λ; see ``_cached_public_cov``). For the eigen
        factor of the same Σ see :meth:`from_public_eigh`."""
        moments = isinstance(P, PublicMoments)
        if moments:
            gram = P.gram if gram is None else gram
        else:
            P = np.asarray(P, dtype=float)
        M, d = P.shape
        if not lam > 0:
            raise ValueError(f"lam must be > 0, got {lam}")
        if lowrank is None:
            lowrank = d > M
        if lowrank and moments:
            raise ValueError(f"the low-rank Σ (d = {d} > M = {M}) needs the public rows, not only PᵀP")
        if not lowrank:
            sigma = P.T @ P if gram is None else gram.copy()
            sigma[np.diag_indices(d)] += lam
            return cls.dense(sigma / M)
        inner = P @ P.T
        inner[np.diag_indices(M)] += lam
        return cls("lowrank", d, P=P, lam=float(lam), inner=cho_factor(inner, lower=True))

    @classmethod
    def from_public_eigh(cls, eigh: tuple[np.ndarray, np.ndarray], M: int, lam: float) -> NoiseCovariance:
        """Σ = (λI + PᵀP)/M = V diag((μ + λ)/M) Vᵀ from the eigendecomposition (μ, V) of PᵀP (computed once for all λ).

        Same Σ as :meth:`from_public`, other square root: F = V diag(√((μ+λ)/M)) instead of the Cholesky factor, so
        z = F u has the same law N(0, Σ) (issue 16: x ↦ xᵀV is then shared by every λ, i.e. every ε)."""
        if not lam > 0:
            raise ValueError(f"lam must be > 0, got {lam}")
        mu, V = eigh
        return cls("eigen", V.shape[0], diag=(np.maximum(mu, 0.0) + lam) / M, basis=V)

    def scaled(self, c: float) -> NoiseCovariance:
        """cΣ with the factor √c·F (draws from the same u are exactly √c times; spec 002 T4)."""
        return NoiseCovariance(self.kind, self.d, self.scale * c, self.diag, self.chol, self.P, self.lam, self.inner,
                               self.basis)

    @property
    def n_public(self) -> int:
        return 0 if self.P is None else int(self.P.shape[0])

    @property
    def noise_dim(self) -> int:
        """k: a draw is z = F u with u ~ N(0, I_k) (k = d, or d + M for the low-rank design)."""
        return self.d + self.n_public if self.kind == "lowrank" else self.d

    def apply_factor(self, U: np.ndarray) -> np.ndarray:
        """Rows u ↦ F u with F Fᵀ = Σ (U has k columns; returns d columns)."""
        root = math.sqrt(self.scale)
        if self.kind == "identity":
            return root * U if self.scale != 1.0 else U
        if self.kind == "diag":
            return U * (root * np.sqrt(self.diag))
        if self.kind == "dense":
            return root * (U @ self.chol.T)
        if self.kind == "eigen":
            return (U * (root * np.sqrt(self.diag))) @ self.basis.T
        M = self.n_public
        return root * (math.sqrt(self.lam / M) * U[..., : self.d] + (U[..., self.d:] @ self.P) / math.sqrt(M))

    def transpose_apply(self, X: np.ndarray) -> np.ndarray:
        """Rows x ↦ Fᵀx, so that xᵀ(F u) = (Fᵀx)ᵀu (returns k columns)."""
        root = math.sqrt(self.scale)
        if self.kind == "identity":
            return root * X if self.scale != 1.0 else X
        if self.kind == "diag":
            return X * (root * np.sqrt(self.diag))
        if self.kind == "dense":
            return root * (X @ self.chol)
        if self.kind == "eigen":
            return self.rotated_factor(X @ self.basis)
        M = self.n_public
        return root * np.hstack([math.sqrt(self.lam / M) * X, (X @ self.P.T) / math.sqrt(M)])

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """n iid rows of N(0, Σ): F u with u ~ N(0, I_k). Chunking the rows does not change the rng stream."""
        return self.apply_factor(rng.standard_normal((n, self.noise_dim)))

    def inv_sq_norms(self, X: np.ndarray) -> np.ndarray:
        """‖x_i‖²_{Σ⁻¹} for every row of X."""
        X = np.asarray(X, dtype=float)
        if self.kind == "identity":
            out = np.einsum("ij,ij->i", X, X)
        elif self.kind == "diag":
            out = row_quadratic(X, self.diag)
        elif self.kind == "dense":
            solved = solve_triangular(self.chol, X.T, lower=True)
            out = np.einsum("ij,ij->j", solved, solved)
        elif self.kind == "eigen":
            return self.rotated_inv_sq_norms(X @ self.basis)
        else:
            M = self.n_public
            b = X @ self.P.T
            inner = np.einsum("ij,ij->i", b, cho_solve(self.inner, b.T).T)
            out = (M / self.lam) * (np.einsum("ij,ij->i", X, X) - inner)
        return out / self.scale

    def rotated_factor(self, XV: np.ndarray) -> np.ndarray:
        """Fᵀx = diag(√(s·v)) Vᵀx of the eigen design from the rows in its basis, XV (O(Nd))."""
        return XV * np.sqrt(self.scale * self.diag)

    def rotated_inv_sq_norms(self, XV: np.ndarray) -> np.ndarray:
        """‖x‖²_{Σ⁻¹} = Σ_j (Vᵀx)_j²/(s·v_j) of the eigen design from the rows in its basis, XV (O(Nd))."""
        return row_quadratic(XV, self.scale * self.diag)

    def matrix(self) -> np.ndarray:
        """Σ as a dense matrix (tests only)."""
        if self.kind == "identity":
            return self.scale * np.eye(self.d)
        if self.kind == "diag":
            return self.scale * np.diag(self.diag)
        if self.kind == "dense":
            return self.scale * self.chol @ self.chol.T
        if self.kind == "eigen":
            return self.scale * (self.basis * self.diag) @ self.basis.T
        return self.scale * (self.lam * np.eye(self.d) + self.P.T @ self.P) / self.n_public


@dataclass(frozen=True)
class PublicMoments:
    """Unlabeled public data [P; E]: PᵀP of its first ``m`` rows (``gram``) and the rows E (``rows``) themselves.

    Σ = (λI + PᵀP)/M reads the public rows only through PᵀP (spec 002 §3.4, Eq. 3.2), while C needs held-out rows one
    by one (§3.5): a generator may draw PᵀP directly (``spectral_gaussian`` with ``public_sampler: wishart``: PᵀP ~
    Wishart_d(M, H) for M rows N(0, H)) and only the M_C rows for C. ``m`` ≥ d (the low-rank Σ path needs P itself).
    """

    gram: np.ndarray
    m: int
    rows: np.ndarray

    @property
    def shape(self) -> tuple[int, int]:
        return self.m + self.rows.shape[0], self.gram.shape[0]

    def __len__(self) -> int:
        return self.shape[0]

    def head(self, k: int) -> PublicMoments:
        """The first m + k public rows: PᵀP + E_kᵀE_k of [P; E_k] (E_k the first k explicit rows)."""
        extra = self.rows[:k]
        gram = self.gram + extra.T @ extra if k else self.gram
        return PublicMoments(gram, self.m + k, self.rows[:0])

    def mean_sq_norm(self) -> float:
        """mean ‖x̃‖² over all M + M_C public rows = (tr PᵀP + Σ ‖e‖²)/(M + M_C) (tr PᵀP = Σ_{i≤M} ‖p_i‖²)."""
        return (float(np.trace(self.gram)) + float(np.einsum("ij,ij->", self.rows, self.rows))) / len(self)


def split_public(public_X: np.ndarray | PublicMoments, m_c: int) -> tuple[np.ndarray | PublicMoments, np.ndarray]:
    """(rows building Σ, the last m_c rows held out for C) of the public data (spec 002 §3.5, default 80/20 split).

    Rows: P[: M − m_c], P[M − m_c:]. :class:`PublicMoments` [P; E]: the same split when m_c ≤ #E (the Gram of the
    Σ part is PᵀP + E_kᵀE_k, k = #E − m_c); held-out rows inside P are not available and raise ValueError."""
    total = len(public_X)
    if not 0 <= m_c < total:
        raise ValueError(f"public_C_rows/public_C_fraction leave no rows to build Σ (M = {total})")
    if not isinstance(public_X, PublicMoments):
        return public_X[: total - m_c], public_X[total - m_c:]
    explicit = public_X.rows.shape[0]
    if m_c > explicit:
        raise ValueError(f"public data given by PᵀP hold out at most its {explicit} explicit rows for C; "
                         f"public_C_rows = {m_c} (set public_C_rows ≤ {explicit}, or draw public rows)")
    return public_X.head(explicit - m_c), public_X.rows[explicit - m_c:]


def public_gram(P: np.ndarray | PublicMoments) -> np.ndarray:
    """PᵀP of the rows that build Σ (O(Md²) for rows; given for :class:`PublicMoments`)."""
    return P.gram if isinstance(P, PublicMoments) else P.T @ P


def row_quadratic(A: np.ndarray, weights: np.ndarray | None = None, chunk: int = 256) -> np.ndarray:
    """Σ_j A_ij·(A_ij/w_j) per row (w = 1 if None), ``chunk`` rows at a time: no (N, d) temporary (a small one the
    allocator reuses instead of fresh pages per call), and each row's terms and their summation are those of
    ``einsum("ij,ij->i", A, A/w)`` (bit-identical, tests/test_ftrl_speed.py)."""
    out = np.empty(A.shape[0])
    for start in range(0, A.shape[0], chunk):
        rows = A[start:start + chunk]
        np.einsum("ij,ij->i", rows, rows if weights is None else rows / weights, out=out[start:start + chunk])
    return out


# ----------------------------------------------------------------------------------------------------------------
# rules (spec 002 §3.5, §4.2)


def effective_dim(lams: np.ndarray, n: int, eta: float) -> float:
    """D(η, N) = k* + Nη Σ_{i>k*} λ_i with k* = #{i : λ_i ≥ 1/(Nη)} (spec 002 §4.2)."""
    lams = np.sort(np.asarray(lams, dtype=float))[::-1]
    k = int(np.sum(lams >= 1.0 / (n * eta)))
    return float(k + n * eta * lams[k:].sum())


def eta_rule(
    n: int,
    tau: float,
    *,
    designed: bool,
    spectrum: str = "unknown",
    r: float | None = None,
    eta_max: float = math.inf,
    c1: float = 1.0,
    c2: float = 8.0,
) -> float:
    """Data-independent step size (spec 002 §3.5): the Cor. 4.4/4.6 rate-balancing η with constants c1, c2."""
    if spectrum not in SPECTRA:
        raise ValueError(f"spectrum must be one of {SPECTRA}, got {spectrum!r}")
    if spectrum == "poly" and (r is None or r <= 1):
        raise ValueError(f"spectrum='poly' needs r > 1, got r={r!r}")
    candidates = [eta_max]
    if spectrum == "poly":
        candidates.append(c1 * n ** (-1.0 / (1.0 + r)))
    else:
        candidates.append(c1)
    if tau > 0:
        if spectrum == "poly" and not designed:
            candidates.append(c2 * tau ** (-2 * r / (1 + 2 * r)) * n ** (-(1 + r) / (1 + 2 * r)))
        elif spectrum == "poly":
            candidates.append(c2 * tau ** (-2 * r / (r + 3)) * n ** (-3 / (r + 3)))
            candidates.append(c2 * tau ** (-2 * r / (1 + 3 * r)) * n ** (-(1 + r) / (1 + 3 * r)))
        else:
            candidates.append(c2 * (n * tau**2) ** (-1 / 3 if designed else -1 / 2))
    return float(min(candidates))


def theory_eta(n: int, trH: float) -> float:
    """Thm 4.2's bound with σ_z = 1: 1/(32 tr(H) log2 N) (very conservative)."""
    return 1.0 / (32.0 * trH * max(math.log2(n), 1.0))


# ----------------------------------------------------------------------------------------------------------------
# RESIDUALEST (spec 002 §3.3)


def residual_est_public(Xe: np.ndarray, ye: np.ndarray, w: np.ndarray) -> float:
    """Option 1: l = √(2·mean_i (ỹ_i − ⟨w, x̃_i⟩)²) on public labelled estimating data."""
    res = ye - Xe @ w
    return math.sqrt(2.0 * float(res @ res) / len(ye))


def private_split_groups(m: int, n: int, epsilon: float, delta: float, beta1: float = 8.0) -> tuple[int, int]:
    """(ñ, m̃) of Option 2: ñ = ⌈β₁ log(N/δ)/ε̃⌉ groups of m̃ = ⌊m/ñ⌋ rows, ε̃ = ε/√(8N log(2/δ)) (§2.4, §3.3).

    Raises ValueError (``residual_est_infeasible``) when m̃ < 1, which happens at every realistic N (§3.3 warning).
    """
    eps_t = epsilon / math.sqrt(8.0 * n * math.log(2.0 / delta))
    groups = math.ceil(beta1 * math.log(n / delta) / eps_t)
    size = m // groups
    if size < 1:
        raise ValueError(
            f"residual_est_infeasible: psi_mode='private_split' needs m ≥ ñ = {groups} estimating rows "
            f"(ε̃ = {eps_t:.3g}), got m = {m}; use psi_mode='fixed' (spec 002 §3.3)"
        )
    return groups, size


def stability_histogram_l(
    r2: np.ndarray, groups: int, size: int, eps_t: float, delta_t: float, rng: np.random.Generator
) -> float | None:
    """Option 2 (Karwa–Vadhan form, spec 002 §3.3): noisy dyadic histogram of group means; l = √(2·upper end).

    Returns None when every noisy bin falls under the threshold (caller falls back to l_{t−1}).
    """
    means = r2[: groups * size].reshape(groups, size).mean(axis=1)
    keys = np.where(means > 0, np.floor(np.log2(np.where(means > 0, means, 1.0))), -np.inf)
    bins, counts = np.unique(keys, return_counts=True)
    noisy = counts / groups + rng.laplace(0.0, 2.0 / (eps_t * groups), size=bins.size)
    noisy[noisy < 2.0 * math.log(2.0 / delta_t) / (eps_t * groups) + 1.0 / groups] = 0.0
    if not np.any(noisy > 0):
        return None
    k = bins[int(np.argmax(noisy))]
    upper = 0.0 if not np.isfinite(k) else 2.0 ** (k + 1)
    return math.sqrt(2.0 * upper)


# ----------------------------------------------------------------------------------------------------------------
# engines


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
    return [X[t0:t0 + block] @ X[t0:t0 + block].T for t0 in range(0, X.shape[0], block)]


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
        Xb = X[t0:t0 + b]
        if sigma > 0:
            XFb = cov.transpose_apply(Xb) if XF is None else XF[t0:t0 + b]  # elementwise Σ: per block, no (N, d) copy
            a = sigma * (XFb @ noise.starts[index] + np.einsum("ij,ij->i", XFb, noise.inblock[t0:t0 + b]))
        else:
            a = np.zeros(b)
        cb, clips = block_coefficients(Xb @ G + a, grams[index], y[t0:t0 + b], q[t0:t0 + b], eta, psi)
        clipped += clips
        coef[t0:t0 + b] = cb
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


# ----------------------------------------------------------------------------------------------------------------
# the mechanism body (spec 002 §3.7)

_CACHE: dict[tuple, Any] = {}
#: the frozen data array the stores hold work for (a weak reference; :func:`_forget_other_data`) and a spare XV
_CURRENT: dict[str, Any] = {}
_SPARE_XV: list[np.ndarray] = []
#: per-thread buffer of the permuted training rows (:func:`stream_rows`)
_GATHER = threading.local()
_CACHE_SIZE = 6
#: PᵀP (and its eigendecomposition) of the current public rows: the public Σ's O(Md²) work that λ does not change
_PUBLIC: dict[tuple, dict[str, Any]] = {}
#: per-stream arrays shared by the mechanisms of one data draw and trial rng (block Grams, tree noise), bounded in bytes
_STREAMS: dict[tuple, Any] = {}
_STREAM_BYTES = 2 * 2**30


def _fingerprint(A: np.ndarray) -> tuple:
    """Cheap identity of an array for the per-process cache (buffer address, shape, strides, strided checksum)."""
    flat = A.reshape(-1)
    address = A.__array_interface__["data"][0]
    return (address, A.shape, A.strides, float(flat[:: max(1, flat.size // 997)].sum()))


def _rng_key(rng: np.random.Generator) -> str:
    """The generator's exact state: two generators in the same state draw the same numbers."""
    return repr(rng.bit_generator.state)


def _remember(key: tuple, value: Any) -> Any:
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[key] = value
    return value


def _make_room(nbytes: int) -> list[Any]:
    """Drop the oldest stream entries until ``nbytes`` more fit in _STREAM_BYTES; return the dropped values."""
    dropped = []
    while _STREAMS and sum(size for _, size in _STREAMS.values()) + nbytes > _STREAM_BYTES:
        dropped.append(_STREAMS.pop(next(iter(_STREAMS)))[0])
    return dropped


def _remember_stream(key: tuple, value: Any, nbytes: int) -> Any:
    """Keep ``value`` while the stream store holds at most _STREAM_BYTES (oldest entries dropped first)."""
    _make_room(nbytes)
    if nbytes <= _STREAM_BYTES:
        _STREAMS[key] = (value, nbytes)
    return value


def _frozen(A: np.ndarray) -> bool:
    """Read-only and owning its memory (the runner's data arrays): its contents cannot change while we hold it."""
    return not A.flags.writeable and A.base is None


def _cached_grams(X_original: np.ndarray, order: str | None, X: np.ndarray, block: int) -> list[np.ndarray]:
    """Block Grams (:func:`block_grams`) of the stream X = X_original in the order drawn from a generator in state
    ``order`` (None: unshuffled). Every mechanism given the same data and the same trial rng (common random numbers)
    streams the same order, whatever its Σ, ψ or η. Cached only for frozen arrays, matched by identity (the entry
    holds a weak reference; the array's finalizer empties the stores, so its address cannot be reused by other data
    while an entry names it: :func:`_forget_other_data`)."""
    if not _frozen(X_original):
        return block_grams(X, block)
    key = ("grams", id(X_original), order, X.shape[0], block)
    if key in _STREAMS and _STREAMS[key][0][0]() is X_original:
        return _STREAMS[key][0][1]
    grams = block_grams(X, block)
    _remember_stream(key, (weakref.ref(X_original), grams), sum(g.nbytes for g in grams))
    return grams


def _cached_tree_noise(rng: np.random.Generator, n: int, k: int, block: int) -> BlockedTreeNoise:
    """The trial's standard-normal tree draws (:func:`blocked_tree_noise`), keyed by the rng's exact state: a
    mechanism handed a generator in the same state as an earlier one reads the draws it would make (the rng itself
    is not advanced; nothing reads it after the run)."""
    key = ("noise", _rng_key(rng), n, k, block)
    if key in _STREAMS:
        return _STREAMS[key][0]
    nbytes = ((n + 1) + (n + block - 1) // block) * k * 8
    # a dropped noise of the same shape lends its memory (no fresh pages to fault in when nothing is shared, e.g. many
    # trials per (mechanism, ε) task); nothing else holds it between fits
    spare = [old.buffer for old in _make_room(nbytes) if isinstance(old, BlockedTreeNoise)]
    buffer = next((b for b in spare if b.shape == (n + 1, k)), None)
    noise = blocked_tree_noise(rng, n, k, block, buffer=buffer)
    return _remember_stream(key, noise, noise.nbytes)


def _public_key(P: np.ndarray | PublicMoments) -> tuple:
    """Cache identity of the public rows building Σ (of their PᵀP and M when given as :class:`PublicMoments`)."""
    return ("moments", _fingerprint(P.gram), P.m) if isinstance(P, PublicMoments) else _fingerprint(P)


def _public_design(P: np.ndarray | PublicMoments) -> dict[str, Any]:
    """PᵀP (O(Md²) from rows) and, once asked for, its eigendecomposition: shared by every λ, i.e. every ε and N·η."""
    key = _public_key(P)
    if key not in _PUBLIC:
        _PUBLIC.clear()  # one public set at a time (a data draw's)
        design = _PUBLIC[key] = {"gram": public_gram(P)}
        return design
    return _PUBLIC[key]


def _cached_public_cov(P: np.ndarray | PublicMoments, lam: float, factor: str = "eigh") -> NoiseCovariance:
    """Σ = (λI + PᵀP)/M is deterministic given the public rows and λ: build it once per process (trials reuse).

    Dense (d ≤ M) with ``factor="eigh"``: the eigen design (:meth:`NoiseCovariance.from_public_eigh`); with
    ``"cholesky"``: the Cholesky factor (:meth:`NoiseCovariance.from_public`). Same Σ, same law of the noise."""
    if factor not in SIGMA_FACTORS:
        raise ValueError(f"sigma_factor must be one of {SIGMA_FACTORS}, got {factor!r}")
    M, d = P.shape
    key = ("cov", _public_key(P), float(lam), factor if d <= M else "lowrank")
    cached = _CACHE.get(key)
    if cached is not None:
        return cached
    if d > M:
        cov = NoiseCovariance.from_public(P, lam)
    elif factor == "eigh":
        design = _public_design(P)
        if "eigh" not in design:
            design["eigh"] = np.linalg.eigh(design["gram"])
        cov = NoiseCovariance.from_public_eigh(design["eigh"], M, lam)
    else:
        cov = NoiseCovariance.from_public(P, lam, gram=_public_design(P)["gram"])
    cov.cache_key = key
    return _remember(key, cov)


def _public_inv_sq_norms(cov: NoiseCovariance, P_C: np.ndarray) -> np.ndarray:
    """‖p‖²_{Σ⁻¹} of the public rows that set C. Eigen design: Σ_j (Vᵀp)_j²/(s·v_j) from P_C V (O(M_C d²)), computed
    once per public set and kept with its eigendecomposition — every λ (every ε) shares V — instead of once per fit
    (the same product: bit-identical)."""
    design = _PUBLIC.get(cov.cache_key[1]) if cov.kind == "eigen" and cov.cache_key is not None else None
    if design is None or design.get("eigh", (None, None))[1] is not cov.basis:
        return cov.inv_sq_norms(P_C)
    key = ("rotated_c", _fingerprint(P_C))
    if key not in design:
        design[key] = np.asarray(P_C, dtype=float) @ cov.basis
    return cov.rotated_inv_sq_norms(design[key])


def _rotated_rows(cov: NoiseCovariance, X: np.ndarray) -> np.ndarray:
    """XV (O(Nd²)) of the eigen design: the same for every λ of the same public rows, so computed once per data draw
    (cached for the runner's frozen arrays, matched by identity)."""
    if not _frozen(X):
        return X @ cov.basis
    key = ("xv", id(X), id(cov.basis))
    if key in _STREAMS and _STREAMS[key][0][0]() is X and _STREAMS[key][0][1] is cov.basis:
        return _STREAMS[key][0][2]
    shape = (X.shape[0], cov.basis.shape[1])
    spare = [old[2] for old in _make_room(8 * shape[0] * shape[1]) if isinstance(old, tuple) and len(old) == 3]
    spare += _SPARE_XV
    _SPARE_XV.clear()
    buffer = next((b for b in spare if b.shape == shape), None)
    XV = np.matmul(X, cov.basis, out=buffer)  # a dropped XV lends its memory: no fresh pages (same product)
    _remember_stream(key, (weakref.ref(X), cov.basis, XV), XV.nbytes)
    return XV


def drop_stores() -> None:
    """Empty every per-process store (called when the data array they serve is freed, e.g. by the runner's release
    of a finished draw): between tasks a worker then holds none of it, so loky's between-call memory check (a worker
    grown by > 300 MB is restarted, with a fresh interpreter) does not fire."""
    _STREAMS.clear()
    _CACHE.clear()
    _PUBLIC.clear()
    _SPARE_XV.clear()
    _CURRENT.clear()
    _GATHER.__dict__.clear()


def _forget_other_data(X: np.ndarray) -> None:
    """A fit on another frozen data array (the runner's next data draw): drop the stores' entries tied to earlier
    arrays — block Grams, XV, Σ⁻¹-norms, X F — which no later fit can read, and the arrays they hold with them (the
    per-process peak then holds one draw's data). The last XV's memory is kept for the next XV (same shape, no fresh
    pages); tree draws, keyed by the rng state, stay and are recycled as before."""
    if not _frozen(X):
        return
    current = _CURRENT.get("X")
    if current is not None and current() is X:
        return
    _CURRENT["X"] = weakref.ref(X)
    weakref.finalize(X, drop_stores)
    for key in [key for key in _STREAMS if key[0] in ("grams", "xv")]:
        value = _STREAMS.pop(key)[0]
        if key[0] == "xv":
            _SPARE_XV[:] = [value[2]]
    for key in [key for key in _CACHE if key[0] in ("q", "xf")]:
        del _CACHE[key]


def _cached_xf(cov: NoiseCovariance, X: np.ndarray) -> np.ndarray:
    """X F (the rows in the noise coordinates, O(Nd²) for a dense Σ); cached per (Σ, X)."""
    if cov.kind == "eigen":
        return cov.rotated_factor(_rotated_rows(cov, X))
    if cov.cache_key is None:
        return cov.transpose_apply(X)
    key = ("xf", cov.cache_key, _fingerprint(X))
    return _CACHE[key] if key in _CACHE else _remember(key, cov.transpose_apply(X))


def in_stream_order(values: np.ndarray, perm: np.ndarray | None) -> np.ndarray:
    """values[perm]; ``perm`` None (an unshuffled stream) is the drawn order: ``values`` itself (read only)."""
    return values if perm is None else values[perm]


def _stream_xf(cov: NoiseCovariance, X: np.ndarray, perm: np.ndarray | None) -> GatheredRows:
    """X F in stream order (rows perm; None: the drawn order), read block by block: the eigen design gathers XV's
    rows and scales them by √(s·v) (:meth:`NoiseCovariance.rotated_factor`), other dense designs gather the cached
    X F."""
    if cov.kind != "eigen":
        return GatheredRows(_cached_xf(cov, X), perm)
    return GatheredRows(_rotated_rows(cov, X), perm, np.sqrt(cov.scale * cov.diag))


def _cached_norms(cov: NoiseCovariance, X: np.ndarray) -> np.ndarray:
    """‖x_i‖_{Σ⁻¹} of the (unpermuted) training rows; cached for dense/low-rank Σ (O(Nd²) each)."""
    if cov.kind == "eigen":
        if not _frozen(X):
            return np.sqrt(cov.rotated_inv_sq_norms(_rotated_rows(cov, X)))
        key = ("q", cov.cache_key, id(X))  # trials of one (Σ, data) reuse it; identity match by weak reference
        cached = _CACHE.get(key)
        if cached is None or cached[0]() is not X:
            cached = _remember(key, (weakref.ref(X), np.sqrt(cov.rotated_inv_sq_norms(_rotated_rows(cov, X)))))
        return cached[1]
    if cov.kind in ("identity", "diag") or cov.cache_key is None:
        return np.sqrt(cov.inv_sq_norms(X))
    key = ("q", cov.cache_key, _fingerprint(X))
    return _CACHE[key] if key in _CACHE else _remember(key, np.sqrt(cov.inv_sq_norms(X)))


def in_sample_tr(cov: NoiseCovariance, P: np.ndarray | PublicMoments) -> float:
    """mean ‖p‖²_{Σ⁻¹} over the rows building Σ; for :class:`PublicMoments`, tr(Σ⁻¹PᵀP)/M (= the same mean)."""
    if isinstance(P, PublicMoments):
        return float(np.trace(np.linalg.solve(cov.matrix(), P.gram))) / P.m
    return float(np.mean(cov.inv_sq_norms(P)))


def stream_rows(X: np.ndarray, perm: np.ndarray) -> np.ndarray:
    """X[perm] written into this thread's reusable buffer of X's shape (the values of X[perm]; no fresh (N, d) array
    per fit, whose first-touch page faults cost as much as the gather on this machine). Valid until the thread's next
    call: a fit reads its stream only while it runs (nothing keeps it)."""
    buffer = getattr(_GATHER, "buffer", None)
    if buffer is None or buffer.shape != X.shape or buffer.dtype != X.dtype:
        _GATHER.buffer = buffer = None  # drop the old one before allocating
        buffer = _GATHER.buffer = np.empty_like(X, order="C")
    return np.take(X, perm, axis=0, out=buffer, mode="clip")  # perm is in range; "raise" would buffer a full copy


def _design_value(name: str, given: Any, population, key: str) -> Any:
    if given is not None:
        return given
    if population is not None and key in population.extra:
        return population.extra[key]
    return None


def fit_dp_ftrl(
    X: np.ndarray,
    y: np.ndarray,
    epsilon: float | None,
    delta: float | None,
    rng: np.random.Generator,
    *,
    sigma_design: str,
    tau: float,
    calibration_info: dict[str, Any],
    public_X: np.ndarray | None = None,
    population=None,
    eta: float | str = "rule",
    eta_c1: float = 1.0,
    eta_c2: float = 8.0,
    spectrum: str | None = None,
    r: float | None = None,
    trH: float | None = None,
    eta_max: float | None = None,
    clip_C: float | str = "auto",
    c_C: float = 2.0,
    C_X: float | None = None,
    C_Y: float | None = None,
    psi_mode: str = "fixed",
    l0: float | None = None,
    psi_cap: float | str | None = None,
    estimating_X: np.ndarray | None = None,
    estimating_y: np.ndarray | None = None,
    lam_mult: float = 1.0,
    public_C_fraction: float = 0.2,
    public_C_rows: int | None = None,
    shuffle: bool = True,
    block: int = 128,
    engine: str = "auto",
    sigma_factor: str = "eigh",
    nonprivate: bool = False,
) -> tuple[np.ndarray, dict[str, Any]]:
    """Steps 1–7 of spec 002 §3.7 for a given τ (τ = 0 and ``nonprivate`` ⇒ ψ = ∞: averaged SGD)."""
    n, d = X.shape
    if sigma_design not in SIGMA_DESIGNS:
        raise ValueError(f"sigma_design must be one of {SIGMA_DESIGNS}, got {sigma_design!r}")
    if psi_mode not in PSI_MODES:
        raise ValueError(f"psi_mode must be one of {PSI_MODES}, got {psi_mode!r}")
    if engine not in ("auto", "blocked", "reference"):
        raise ValueError(f"engine must be 'auto', 'blocked' or 'reference', got {engine!r}")
    _forget_other_data(X)
    # 1. stream order (data-independent permutation from the trial rng; None: the drawn order)
    order = _rng_key(rng) if shuffle else None
    perm = rng.permutation(n) if shuffle else None
    X_original = X
    X, y = (stream_rows(X, perm), y[perm]) if shuffle else (X, y)
    # design constants: hyperparameters, else the generator's (known design, synthetic only)
    spectrum = _design_value("spectrum", spectrum, population, "spectrum") or "unknown"
    r = _design_value("r", r, population, "r")
    trH = _design_value("trH", trH, population, "trH")
    l0 = _design_value("l0", l0, population, "l0")
    h_diag = population.extra.get("h_diag") if population is not None else None
    P_sigma = P_C = None
    if sigma_design == "public":
        if public_X is None:
            raise ValueError("sigma_design='public' needs public_X (unlabeled public rows); none given")
        if not isinstance(public_X, PublicMoments):
            public_X = np.asarray(public_X, dtype=float)
        if len(public_X.shape) != 2 or public_X.shape[1] != d:
            raise ValueError(f"public_X must have shape (M, {d}), got {public_X.shape}")
        m_c = int(public_C_rows) if public_C_rows is not None else int(round(public_C_fraction * len(public_X)))
        P_sigma, P_C = split_public(public_X, m_c)
        if trH is None and isinstance(public_X, PublicMoments):
            trH = public_X.mean_sq_norm()
        elif trH is None:
            trH = float(np.mean(np.einsum("ij,ij->i", public_X, public_X)))
    if sigma_design == "oracle" and population is None:
        raise ValueError("sigma_design='oracle' needs the generator's population (synthetic data only)")
    if trH is None and sigma_design == "oracle":
        trH = float(np.trace(population.cov)) if h_diag is None else float(np.sum(h_diag))
    # 3. step size
    if eta_max is None:
        if trH is not None:
            eta_max = 1.0 / (2.0 * trH)
        elif C_X is not None:
            eta_max = 1.0 / (2.0 * C_X**2)
        else:
            eta_max = math.inf
    if isinstance(eta, str):
        if eta == "rule":
            eta_value = eta_rule(n, tau, designed=sigma_design != "identity", spectrum=spectrum, r=r,
                                 eta_max=eta_max, c1=eta_c1, c2=eta_c2)
        elif eta == "theory":
            if trH is None:
                raise ValueError("eta='theory' needs trH (or a design that provides it)")
            eta_value = theory_eta(n, trH)
        else:
            raise ValueError(f"eta must be a number, 'rule' or 'theory', got {eta!r}")
    else:
        eta_value = float(eta)
    if not eta_value > 0 or not math.isfinite(eta_value):
        raise ValueError(f"eta must be finite and > 0, got {eta_value}")
    # 4. Σ and the Σ⁻¹-norms
    lam = math.nan
    if sigma_design == "identity" or not math.isfinite(lam_mult):
        cov = NoiseCovariance.identity(d)
    elif sigma_design == "oracle":
        lam = lam_mult / (n * eta_value)
        if h_diag is not None:
            cov = NoiseCovariance.diagonal(np.asarray(h_diag) + lam)
        else:
            cov = NoiseCovariance.dense(population.cov + lam * np.eye(d))
    else:
        lam = lam_mult * len(P_sigma) / (n * eta_value)
        cov = _cached_public_cov(P_sigma, lam, sigma_factor)
    # 5. clipping constant C
    tr_sh = math.nan
    if nonprivate:
        C = math.inf
    elif not isinstance(clip_C, str):
        C = float(clip_C)
    elif clip_C != "auto":
        raise ValueError(f"clip_C must be a number or 'auto', got {clip_C!r}")
    elif sigma_design == "identity" and C_X is not None:
        C = float(C_X)
    else:
        if cov.kind == "identity" and trH is not None and sigma_design != "public":
            tr_sh = float(trH)
        elif sigma_design == "oracle" and h_diag is not None:
            tr_sh = float(np.sum(np.asarray(h_diag) / cov.diag))
        elif sigma_design == "oracle":
            tr_sh = float(np.trace(np.linalg.solve(cov.matrix(), population.cov)))
        elif sigma_design == "public" and P_C is not None and len(P_C):
            tr_sh = float(np.mean(_public_inv_sq_norms(cov, P_C)))
        elif sigma_design == "public":
            tr_sh = in_sample_tr(cov, P_sigma)  # in-sample: biased low (§3.5 pilot finding)
        else:
            raise ValueError("clip_C='auto' needs C_X, trH or a design that provides tr(Σ⁻¹H)")
        C = c_C * math.sqrt(tr_sh)
    # 6. clipping level
    if nonprivate:
        psi = math.inf
    else:
        if l0 is None:
            if C_Y is None:
                raise ValueError("psi_mode needs l0 (or C_Y, giving l0 = √2·C_Y); neither given")
            l0 = math.sqrt(2.0) * C_Y
        psi = C * float(l0)
    q = in_stream_order(_cached_norms(cov, X_original), perm) if math.isfinite(psi) else np.zeros(n)
    XF = _stream_xf(cov, X_original, perm) if tau > 0 and cov.kind in ("dense", "eigen", "lowrank") else None
    # 7. run
    failures = 0
    if psi_mode == "fixed" and engine != "reference":
        noise = _cached_tree_noise(rng, n, cov.noise_dim, block) if tau > 0 else None
        result = run_blocked(X, y, q, psi, tau * psi if tau > 0 else 0.0, eta_value, cov, rng, block=block, XF=XF,
                             grams=_cached_grams(X_original, order, X, block), noise=noise)
    else:
        psi_fn = None
        if psi_mode == "public_labeled":
            if estimating_X is None or estimating_y is None:
                raise ValueError("psi_mode='public_labeled' needs labelled public estimating data")
            if psi_cap is None:
                cap = math.inf
            elif psi_cap == "C_l0":  # the recommended cap ψ ≤ C·l0 (= the fixed-ψ level, spec 002 §3.5)
                cap = psi
            else:
                cap = float(psi_cap)

            def psi_fn(w):
                return min(C * residual_est_public(estimating_X, estimating_y, w), cap)

        elif psi_mode == "private_split":
            if estimating_X is None or estimating_y is None:
                raise ValueError("psi_mode='private_split' needs a private labelled estimating split")
            groups, size = private_split_groups(len(estimating_y), n, epsilon, delta)
            eps_t = epsilon / math.sqrt(8.0 * n * math.log(2.0 / delta))
            delta_t = delta / (2.0 * n)

            def psi_fn(w):
                res = estimating_y - estimating_X @ w
                value = stability_histogram_l(res * res, groups, size, eps_t, delta_t, rng)
                return None if value is None else C * value

        result = run_reference(X, y, q, tau, eta_value, cov, rng, psi_fn=psi_fn, psi=psi)
        failures = result.failures
        psi = result.psi_max
    theta = result.theta
    diverged = not np.all(np.isfinite(theta)) or float(np.linalg.norm(theta)) > DIVERGED_NORM
    if diverged:  # e.g. un-capped RESIDUALEST Option 1 (spec 002 §3.5 pilot): report NaN, not 1e270
        theta = np.full(d, np.nan)
    info = {
        "diverged": diverged,
        "tau": tau,
        "sigma_node": tau * psi if tau > 0 and math.isfinite(psi) else 0.0,
        "psi": psi,
        "C": C,
        "l0": math.nan if l0 is None else float(l0),
        "kbar": kbar(n),
        "eta": eta_value,
        "lam": lam,
        "clip_frac": result.clip_frac,
        "trSH_est": tr_sh,
        "M": 0 if P_sigma is None else len(P_sigma),
        "M_C": 0 if P_C is None else len(P_C),
        "sigma_design": sigma_design,
        "cov_kind": cov.kind,
        "residual_est_failures": failures,
        "w_last_norm": float(np.linalg.norm(result.w_last)),
        **calibration_info,
    }
    return theta, info
