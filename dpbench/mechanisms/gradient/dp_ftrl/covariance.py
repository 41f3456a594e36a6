"""DP-FTRL-Σ noise covariance designs (spec 002 §3.4): Σ ≻ 0 with cheap N(0, Σ) draws and Σ⁻¹-norms (identity,
diagonal, dense, eigenbasis, exact low-rank + Woodbury), and the public rows that build it."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.linalg import cho_factor, cho_solve, solve_triangular

#: square root F (FFᵀ = Σ) of a dense public Σ: eigenbasis (default; XV shared by every ε) or Cholesky
SIGMA_FACTORS = ("eigh", "cholesky")


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
        return NoiseCovariance(
            self.kind, self.d, self.scale * c, self.diag, self.chol, self.P, self.lam, self.inner, self.basis
        )

    @property
    def n_public(self) -> int:
        return 0 if self.P is None else int(self.P.shape[0])

    @property
    def noise_dim(self) -> int:
        """k: a draw is z = F u with u ~ N(0, I_k) (k = d, or d + M for the low-rank design)."""
        return self.d + self.n_public if self.kind == "lowrank" else self.d

    def _square_factor(self, A: np.ndarray, transposed: bool) -> np.ndarray | None:
        """Rows a ↦ F a (``transposed`` False) or Fᵀa (True) for the designs whose F is the d×d factor √scale·L —
        L = I, diag(√Σ_ii) (symmetric: F = Fᵀ) or the Cholesky factor; None for the eigen and low-rank designs."""
        root = math.sqrt(self.scale)
        if self.kind == "identity":
            return root * A if self.scale != 1.0 else A
        if self.kind == "diag":
            return A * (root * np.sqrt(self.diag))
        if self.kind == "dense":
            return root * (A @ (self.chol if transposed else self.chol.T))
        return None

    def apply_factor(self, U: np.ndarray) -> np.ndarray:
        """Rows u ↦ F u with F Fᵀ = Σ (U has k columns; returns d columns)."""
        square = self._square_factor(U, transposed=False)
        if square is not None:
            return square
        root = math.sqrt(self.scale)
        if self.kind == "eigen":
            return (U * (root * np.sqrt(self.diag))) @ self.basis.T
        M = self.n_public
        return root * (math.sqrt(self.lam / M) * U[..., : self.d] + (U[..., self.d :] @ self.P) / math.sqrt(M))

    def transpose_apply(self, X: np.ndarray) -> np.ndarray:
        """Rows x ↦ Fᵀx, so that xᵀ(F u) = (Fᵀx)ᵀu (returns k columns)."""
        square = self._square_factor(X, transposed=True)
        if square is not None:
            return square
        if self.kind == "eigen":
            return self.rotated_factor(X @ self.basis)
        M = self.n_public
        return math.sqrt(self.scale) * np.hstack([math.sqrt(self.lam / M) * X, (X @ self.P.T) / math.sqrt(M)])

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
        return public_X[: total - m_c], public_X[total - m_c :]
    explicit = public_X.rows.shape[0]
    if m_c > explicit:
        raise ValueError(
            f"public data given by PᵀP hold out at most its {explicit} explicit rows for C; "
            f"public_C_rows = {m_c} (set public_C_rows ≤ {explicit}, or draw public rows)"
        )
    return public_X.head(explicit - m_c), public_X.rows[explicit - m_c :]


def public_gram(P: np.ndarray | PublicMoments) -> np.ndarray:
    """PᵀP of the rows that build Σ (O(Md²) for rows; given for :class:`PublicMoments`)."""
    return P.gram if isinstance(P, PublicMoments) else P.T @ P


def row_quadratic(A: np.ndarray, weights: np.ndarray | None = None, chunk: int = 256) -> np.ndarray:
    """Σ_j A_ij·(A_ij/w_j) per row (w = 1 if None), ``chunk`` rows at a time: no (N, d) temporary (a small one the
    allocator reuses instead of fresh pages per call), and each row's terms and their summation are those of
    ``einsum("ij,ij->i", A, A/w)`` (bit-identical, tests/mechanisms/gradient/test_dp_ftrl_speed.py)."""
    out = np.empty(A.shape[0])
    for start in range(0, A.shape[0], chunk):
        rows = A[start : start + chunk]
        np.einsum("ij,ij->i", rows, rows if weights is None else rows / weights, out=out[start : start + chunk])
    return out
