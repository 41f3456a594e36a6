"""Confidence intervals a mechanism returns beside θ̂ (issue 37; spec 005 §4, §7a, §10).

An :class:`Interval` is post-processing of a mechanism's releases only: a centre and per-coordinate standard errors
(a Wald interval, normal or Student-t quantiles) or a matrix of bootstrap draws (a percentile interval). It carries
its **target**: ``"population"`` — the population coefficient θ (sampling and privacy noise both; statsmodels'
``conf_int`` convention) — or ``"data_fit"`` — the data set's own least-squares fit θ̂_OLS (privacy noise only, e.g.
DP-GD checkpoint intervals, spec 005 §4). ``conf_int(alpha)`` gives the (p, 2) array [lower, upper] per coefficient.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from scipy import stats as sps

#: what an interval's coverage is about
TARGETS = ("population", "data_fit")


def check_alpha(alpha: float) -> float:
    """α ∈ (0, 1) (the interval has level 1 − α); ValueError naming ``alpha`` otherwise."""
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.floating)) or not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be a number in (0, 1) (the interval's level is 1 − alpha), got {alpha!r}")
    return float(alpha)


@dataclass(frozen=True)
class Interval:
    """One interval method's output for every coefficient (``center``/``scale`` for Wald, ``draws`` for bootstrap)."""

    method: str
    target: str
    center: np.ndarray | None = None
    scale: np.ndarray | None = None
    df: float | None = None
    draws: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.target not in TARGETS:
            raise ValueError(f"interval target must be one of {TARGETS}, got {self.target!r}")
        if (self.draws is None) == (self.center is None or self.scale is None):
            raise ValueError("an Interval has either draws (percentile) or center and scale (Wald)")

    def conf_int(self, alpha: float = 0.05) -> np.ndarray:
        """(p, 2) array: percentile [q_{α/2}, q_{1−α/2}] of the draws, or center ∓ q·scale with q the
        normal (df None) or Student-t_{df} quantile 1 − α/2."""
        alpha = check_alpha(alpha)
        if self.draws is not None:
            lower, upper = np.quantile(self.draws, [alpha / 2.0, 1.0 - alpha / 2.0], axis=0)
            return np.column_stack([lower, upper])
        q = sps.norm.ppf(1.0 - alpha / 2.0) if self.df is None else sps.t.ppf(1.0 - alpha / 2.0, self.df)
        return np.column_stack([self.center - q * self.scale, self.center + q * self.scale])

    def scaled(self, factors: np.ndarray) -> Interval:
        """The interval of (factors ⊙ θ) for positive per-coordinate factors (the estimator's unit mapping)."""
        factors = np.asarray(factors, dtype=float)
        if np.any(factors <= 0):
            raise ValueError("interval scale factors must be positive")
        if self.draws is not None:
            return replace(self, draws=self.draws * factors)
        return replace(self, center=self.center * factors, scale=self.scale * factors)

    def select(self, index: Sequence[int] | np.ndarray) -> Interval:
        """The interval of the coordinates ``index`` (in that order)."""
        index = np.asarray(index, dtype=int)
        if self.draws is not None:
            return replace(self, draws=self.draws[:, index])
        return replace(self, center=self.center[index], scale=self.scale[index])


def wald(method: str, target: str, center: np.ndarray, variances: np.ndarray, df: float | None = None) -> Interval:
    """Wald interval center_j ± q·√v_j (negative round-off variances are set to 0)."""
    scale = np.sqrt(np.maximum(np.asarray(variances, dtype=float), 0.0))
    return Interval(method, target, center=np.asarray(center, dtype=float), scale=scale, df=df)


def psd_floor(matrix: np.ndarray, floor: float) -> np.ndarray:
    """The symmetric matrix with ``matrix``'s eigenvectors and eigenvalues max(λ_i, floor) (spec 005 §10: PSD(R2))."""
    values, vectors = np.linalg.eigh((matrix + matrix.T) / 2.0)
    return (vectors * np.maximum(values, floor)) @ vectors.T


def interval_rng(rng: np.random.Generator) -> np.random.Generator:
    """An independent stream for an interval's post-processing, derived from the trial's rng without drawing from it
    (``Generator.spawn``), so θ̂ and the releases are bit for bit those of a fit without intervals."""
    try:
        return rng.spawn(1)[0]
    except (AttributeError, TypeError, ValueError):  # a Generator without a SeedSequence
        return np.random.default_rng(rng.bit_generator.random_raw())


def symmetric_gaussian_batch(batch: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """``batch`` independent N_sym(0, I_d) matrices (upper triangle, diagonal included, iid N(0, 1); mirrored):
    the law of :func:`dpbench.linalg.symmetric_gaussian`, drawn at once, shape (batch, d, d).

    Only the d(d + 1)/2 free entries are drawn, (batch, d(d + 1)/2) normals, and gathered into both triangles by one
    index map: half the normals of drawing full d×d matrices and no triangular masks (the literal per-matrix path is
    ``bootstrap="literal"`` of ``adassp_pboot``; the law is tested against it)."""
    return rng.standard_normal((batch, d * (d + 1) // 2))[:, triangle_map(d)].reshape(batch, d, d)


@functools.lru_cache(maxsize=64)
def triangle_map(d: int) -> np.ndarray:
    """For entry (i, j) of a d×d matrix (row-major), the index of (min(i, j), max(i, j)) in ``np.triu_indices(d)``."""
    rows, cols = np.triu_indices(d)
    index = np.empty((d, d), dtype=np.intp)
    index[rows, cols] = index[cols, rows] = np.arange(rows.size)
    return index.ravel()


def batched_solve(matrices: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """x_b = A_b⁻¹ r_b for a stack (B, d, d) and (B, d); a singular A_b (probability 0) falls back to the
    pseudo-inverse for the whole stack."""
    try:
        return np.linalg.solve(matrices, rhs[..., None])[..., 0]
    except np.linalg.LinAlgError:
        return np.einsum("bij,bj->bi", np.linalg.pinv(matrices), rhs)
