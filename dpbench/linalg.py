"""Linear-algebra helpers shared by the mechanisms: per-dataset Gram statistics and exact sketch sampling.

The Gram/Wishart shortcut (004 §3.10): if S ~ N(0, I_{k×n}) and ξ ~ N(0, I_{k×d}) then the rows of S X + η ξ are
iid N(0, XᵀX + η² I), so S X + η ξ has the law of Z F with Z ~ N(0, I_{k×d}) and any F with FᵀF = XᵀX + η² I,
and its Gram (S X + η ξ)ᵀ(S X + η ξ) ~ Wishart_d(k, XᵀX + η² I) = Fᵀ W F with W ~ Wishart_d(k, I).
Sampling W by the Bartlett decomposition costs O(d²) draws and O(d³) flops, independent of n and k, and never
materialises a k×n (or k×d) matrix.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property, wraps
from typing import Any, TypeVar

import numpy as np
import scipy.linalg
from threadpoolctl import ThreadpoolController

T = TypeVar("T")


def sym_eigh(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eigen-decomposition of a symmetric matrix (symmetrised first to kill round-off asymmetry)."""
    return np.linalg.eigh((matrix + matrix.T) / 2.0)


def sym_eigvalsh(matrix: np.ndarray) -> np.ndarray:
    """Eigenvalues (ascending) of a symmetric matrix, symmetrised as in :func:`sym_eigh`; no eigenvectors (LAPACK
    computes the tridiagonal's eigenvalues only: ≈ 3× cheaper than :func:`sym_eigh` at d = 1024)."""
    return np.linalg.eigvalsh((matrix + matrix.T) / 2.0)


def psd_factor(eigvals: np.ndarray, eigvecs: np.ndarray, shift: float = 0.0) -> np.ndarray:
    """F = V diag(√max(λ + shift, 0)) Vᵀ: the symmetric PSD square root, FᵀF = F² = V diag(λ + shift) Vᵀ.

    The symmetric root is the *unique* PSD square root of the matrix, so a Wishart draw Fᵀ W F built on it does not
    depend on which eigenvectors LAPACK returned: their signs, and the basis it picks inside a repeated eigenvalue
    (a rank-deficient Gram, e.g. Solar's, is 0 on a whole subspace). The factor diag(√λ) Vᵀ has the same law but
    maps the same W to another draw when the basis differs, which another BLAS kernel's eigh can make happen
    (docs/reliability.md: results across CPUs).
    """
    root = np.sqrt(np.clip(eigvals + shift, 0.0, None))
    return (eigvecs * root) @ eigvecs.T


def wishart_identity(k: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """Draw W ~ Wishart_d(k, I_d), i.e. the law of ZᵀZ with Z ~ N(0, I_{k×d}).

    Bartlett decomposition (valid for k ≥ d): W = L Lᵀ with L lower triangular, L_ii = √χ²_{k−i} (i = 0..d−1),
    L_ij ~ N(0, 1) for i > j. For k < d the explicit product ZᵀZ is used (it is cheap then: k < d).
    """
    if k < d:
        z = rng.standard_normal((k, d))
        return z.T @ z
    lower = np.tril(rng.standard_normal((d, d)), k=-1)
    lower[np.diag_indices(d)] = np.sqrt(rng.chisquare(k - np.arange(d)))
    return lower @ lower.T


def wishart(k: int, factor: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Draw Fᵀ W F with W ~ Wishart(k, I): a Wishart_d(k, FᵀF) matrix (law of the Gram of a k-row sketch)."""
    w = wishart_identity(k, factor.shape[0], rng)
    return factor.T @ w @ factor


def gaussian_sketch(k: int, factor: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Draw Z F with Z ~ N(0, I_{k×r}): a k-row matrix whose rows are iid N(0, FᵀF)."""
    return rng.standard_normal((k, factor.shape[0])) @ factor


def explicit_sketch(k: int, A: np.ndarray, noise_std: float, rng: np.random.Generator) -> np.ndarray:
    """Reference path: S A + noise_std·ξ with S ~ N(0, I_{k×n}) materialised (O(k n d); tests and small n only)."""
    S = rng.standard_normal((k, A.shape[0]))
    return S @ A + noise_std * rng.standard_normal((k, A.shape[1]))


def symmetric_gaussian(d: int, rng: np.random.Generator) -> np.ndarray:
    """N_sym(0, I_d): symmetric matrix whose upper triangle (diagonal included) is iid N(0, 1) (004 §3.7)."""
    upper = np.triu(rng.standard_normal((d, d)))
    return upper + upper.T - np.diag(np.diag(upper))


def solve_or_lstsq(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Solve A x = b; fall back to least squares if A is singular (004 §3.7 implementer note)."""
    try:
        return np.linalg.solve(A, b)
    except np.linalg.LinAlgError:
        return np.linalg.lstsq(A, b, rcond=None)[0]


@functools.lru_cache(maxsize=1)
def _blas_controller() -> ThreadpoolController:
    """The process's BLAS libraries, scanned once (numpy's and scipy's, both imported above)."""
    return ThreadpoolController()


def one_blas_thread_limit() -> Any:
    """``threadpool_limits(limits=1)`` from one controller per process: the scan of the loaded libraries
    (/proc/self/maps) that ``threadpool_limits`` repeats on every call costs ≈ 15 ms on a loaded machine, several
    times per data draw (issue 37: measured 100 ms of 140 ms per draw of a small dataset at load 17 on 2 cores)."""
    return _blas_controller().limit(limits=1)


def one_blas_thread(method: Callable[..., T]) -> Callable[..., T]:
    """Run ``method`` with one BLAS thread: a statistic computed lazily, in whatever thread-pool context first asks
    for it, has the same bits as one computed eagerly in a single-threaded worker (a multi-threaded BLAS splits
    reductions such as ``yᵀy`` differently by thread count)."""

    @wraps(method)
    def single_threaded(*args, **kwargs) -> T:
        with one_blas_thread_limit():
            return method(*args, **kwargs)

    return single_threaded


#: θ_OLS from the Gram (Cholesky) only above this n·d and reciprocal condition number (see GramStats.theta_ols)
GRAM_OLS_MIN_SIZE = 2_000_000
GRAM_OLS_MIN_RCOND = 1e-9


@dataclass(frozen=True)
class GramStats:
    """Per-dataset sufficient statistics, each computed once, on first use (O(n d²) for the Gram, O(d³) for an
    eigendecomposition), with one BLAS thread, and shared by every trial of the dataset.

    Lazy, so a run whose mechanisms and metrics never read the Gram (one-pass DP-FTRL at d = 1024, the local-DP
    simulations) does not pay for it on every data draw. ``X`` and ``y`` are kept (read-only) for mechanisms that
    need O(n d) passes (IHM's gradient, DP-GD).
    """

    X: np.ndarray = field(repr=False)
    y: np.ndarray = field(repr=False)

    @cached_property
    @one_blas_thread
    def xtx(self) -> np.ndarray:
        return self.X.T @ self.X

    @cached_property
    @one_blas_thread
    def xty(self) -> np.ndarray:
        return self.X.T @ self.y

    @cached_property
    @one_blas_thread
    def yty(self) -> float:
        return float(self.y @ self.y)

    @cached_property
    @one_blas_thread
    def gram_xy(self) -> np.ndarray:
        """M_XY = [X, Y]ᵀ[X, Y], the (d+1)×(d+1) Gram of the concatenation."""
        top = np.column_stack([self.xtx, self.xty])
        bottom = np.append(self.xty, self.yty)
        return np.vstack([top, bottom])

    @cached_property
    @one_blas_thread
    def eigh_x(self) -> tuple[np.ndarray, np.ndarray]:
        return sym_eigh(self.xtx)

    @cached_property
    @one_blas_thread
    def eigh_xy(self) -> tuple[np.ndarray, np.ndarray]:
        return sym_eigh(self.gram_xy)

    @cached_property
    @one_blas_thread
    def eigvals_x(self) -> np.ndarray:
        """Eigenvalues of XᵀX for reports (datasets.json): those of :attr:`eigh_x` when something has computed it,
        else :func:`sym_eigvalsh` (equal up to rounding, without the eigenvectors no report reads). Mechanisms read
        :attr:`lam_min_x` (always :attr:`eigh_x`), so their bits never depend on what a report asked first."""
        return self.__dict__["eigh_x"][0] if "eigh_x" in self.__dict__ else sym_eigvalsh(self.xtx)

    @cached_property
    @one_blas_thread
    def eigvals_xy(self) -> np.ndarray:
        """Eigenvalues of M_XY for reports, as :attr:`eigvals_x` (:attr:`eigh_xy`'s when computed)."""
        return self.__dict__["eigh_xy"][0] if "eigh_xy" in self.__dict__ else sym_eigvalsh(self.gram_xy)

    @property
    def lam_min_x(self) -> float:
        """λ_min(XᵀX) (tiny negative round-off clamped at 0)."""
        return max(float(self.eigh_x[0][0]), 0.0)

    @property
    def lam_max_x(self) -> float:
        return float(self.eigh_x[0][-1])

    @property
    def lam_min_xy(self) -> float:
        return max(float(self.eigh_xy[0][0]), 0.0)

    @cached_property
    @one_blas_thread
    def theta_ols(self) -> np.ndarray:
        """Minimum-norm least-squares solution θ* (004 §1.1).

        Large, well-conditioned data (n·d ≥ ``GRAM_OLS_MIN_SIZE``, λ_min(XᵀX) ≥ ``GRAM_OLS_MIN_RCOND``·λ_max): the
        unique solution of XᵀX θ = Xᵀy by Cholesky of the cached Gram — O(d³) instead of the SVD's O(n d²), equal to
        it up to cond(XᵀX)·machine-ε (≤ 1e-7 relative at the threshold; ~1e-13 measured). Otherwise (small or
        near-singular X) the SVD-based ``lstsq``, so small runs keep their exact historical bits. The test reads
        :attr:`eigvals_x` (no eigenvectors unless computed anyway; it could only decide otherwise than with
        :attr:`eigh_x`'s eigenvalues for a ratio within rounding, ~1e-7 relative, of the threshold).
        """
        spectrum = self.eigvals_x if self.n * self.d >= GRAM_OLS_MIN_SIZE else None
        if spectrum is not None and max(float(spectrum[0]), 0.0) >= GRAM_OLS_MIN_RCOND * float(spectrum[-1]) > 0:
            try:
                return scipy.linalg.cho_solve(scipy.linalg.cho_factor(self.xtx), self.xty)
            except np.linalg.LinAlgError:
                pass
        return np.linalg.lstsq(self.X, self.y, rcond=None)[0]

    @property
    def n(self) -> int:
        return int(self.X.shape[0])

    @property
    def d(self) -> int:
        return int(self.X.shape[1])

    def loss(self, theta: np.ndarray) -> float:
        """L(θ) = ‖Y − Xθ‖² from the Gram: yᵀy − 2θᵀXᵀy + θᵀXᵀXθ (clamped at 0)."""
        value = self.yty - 2.0 * float(theta @ self.xty) + float(theta @ self.xtx @ theta)
        return max(value, 0.0)

    @cached_property
    @one_blas_thread
    def ols_loss(self) -> float:
        residual = self.y - self.X @ self.theta_ols
        return float(residual @ residual)


#: (r, B) ↦ an upper bound on the per-row probability that clipping ‖x‖₂ at r or |y| at B changes the row
ChangeProbability = Callable[[float | None, float | None], float]


@dataclass(frozen=True)
class SumStats(GramStats):
    """Sufficient statistics of a data set that has no rows (``X = y = None``): the (d+1)×(d+1) Gram
    M = [X, y]ᵀ[X, y] of n rows that were never materialised (e.g. a data-free Wishart draw, n up to 10¹²).

    Every statistic of :class:`GramStats` is read off M (xtx, xty, yty, spectra, θ_OLS = the minimum-norm solution of
    XᵀX θ = Xᵀy, its loss yᵀy − θᵀXᵀy), so datasets.json and the Gram-based metrics work unchanged; nothing reads
    rows. ``change_probability(r, B)``, when the loader knows the row law, is an upper bound P on the probability that
    a row has ‖x‖₂ > r or |y| > B: a mechanism that clips at (r, B) and fits from these unclipped sums is within
    total variation n·P of its literal (clipped) law (the two agree on the event that no row is clipped).
    """

    X: None = field(default=None, repr=False)
    y: None = field(default=None, repr=False)
    rows: int = 0
    gram: np.ndarray = field(default=None, repr=False)
    change_probability: ChangeProbability | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        gram = np.array(self.gram, dtype=float)
        if gram.ndim != 2 or gram.shape[0] != gram.shape[1] or gram.shape[0] < 2 or self.rows < 1:
            raise ValueError(
                f"SumStats needs rows ≥ 1 and a square (d+1)×(d+1) Gram, d ≥ 1; got rows = {self.rows}, "
                f"gram shape {gram.shape}"
            )
        gram.setflags(write=False)
        object.__setattr__(self, "gram", gram)

    @property
    def xtx(self) -> np.ndarray:
        return self.gram[:-1, :-1]

    @property
    def xty(self) -> np.ndarray:
        return self.gram[:-1, -1]

    @property
    def yty(self) -> float:
        return float(self.gram[-1, -1])

    @property
    def gram_xy(self) -> np.ndarray:
        return self.gram

    @cached_property
    @one_blas_thread
    def theta_ols(self) -> np.ndarray:
        """Minimum-norm solution of XᵀX θ = Xᵀy (the minimum-norm least-squares θ, since range XᵀX = range Xᵀ)."""
        return np.linalg.lstsq(self.xtx, self.xty, rcond=None)[0]

    @property
    def n(self) -> int:
        return int(self.rows)

    @property
    def d(self) -> int:
        return int(self.gram.shape[0] - 1)

    @cached_property
    def ols_loss(self) -> float:
        """‖y − Xθ_OLS‖² = yᵀy − θ_OLSᵀXᵀy (normal equations), clamped at 0."""
        return max(self.yty - float(self.theta_ols @ self.xty), 0.0)


def has_rows(stats: GramStats) -> bool:
    """False for :class:`SumStats` (a data set known only through its sums)."""
    return stats.X is not None


def gram_stats(X: np.ndarray, y: np.ndarray, *, copy: bool = True) -> GramStats:
    """Build the per-dataset :class:`GramStats` (arrays made read-only so trials cannot mutate them).

    ``copy=False`` (the runner, on arrays a loader has just returned and nobody else writes): freeze an array that
    owns its memory in place instead of copying it — a 7·10⁵ × 40 design is 224 MB, and its copy cost as much as a
    Gaussian data draw's Gram. A view (a writeable base behind it), a non-float or a non-C-ordered array is still
    copied, so the result always owns read-only memory (what the mechanisms' per-draw memos require:
    ``mechanisms._base._frozen``).
    """
    return GramStats(_read_only(X, order="C", copy=copy), _read_only(y, order=None, copy=copy))


def immutable(array: np.ndarray) -> bool:
    """Read-only with no writeable memory behind it: owning its memory, or a view of a read-only array (numpy
    refuses to make such a view writeable again)."""
    base = array.base
    return not array.flags.writeable and (base is None or (isinstance(base, np.ndarray) and not base.flags.writeable))


def _read_only(array: np.ndarray, order: str | None, copy: bool) -> np.ndarray:
    """A read-only float array with no writeable memory behind it: ``array`` itself, frozen, if ``copy`` is False
    and it already owns float memory (or is a view of read-only memory, e.g. a ``nested`` cut) in the right
    order; otherwise a frozen copy."""
    reuse = (
        not copy
        and isinstance(array, np.ndarray)
        and array.dtype == np.float64
        and (array.base is None or immutable(array))
        and (order is None or array.flags.c_contiguous)
    )
    out = array if reuse else np.array(array, dtype=float, order=order or "K", copy=True)
    out.setflags(write=False)
    return out
