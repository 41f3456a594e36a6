"""Data-free sufficient statistics of a Gaussian linear model, for the Stein estimators at n ≫ n* (issue 17).

Model (the ``linear`` GLM family, spec 003 §1.2, with Gaussian label noise): x ~ N(0, Σ), Σ = s²I_p, and
y = ⟨x, w*⟩ + σ ξ, ξ ~ N(0, 1) independent. Then (x, y) ~ N(0, C) in R^{p+1} with

    C = [[Σ, Σw*], [w*ᵀΣ, w*ᵀΣw* + σ²]],

so the Gram of n iid rows, M = [X, y]ᵀ[X, y] = Σ_i (x_i, y_i)(x_i, y_i)ᵀ, is exactly Wishart_{p+1}(n, C) — an identity
in law, sampled in O(p³) by the Bartlett decomposition (:func:`dpbench.linalg.wishart`: M = Fᵀ W F, FᵀF = C,
W ~ Wishart(n, I)) whatever n (10¹² rows are never materialised). M holds every sum the aggregate paths of Alg 1–4,
the central DIAGNOSTIC and the non-private Stein estimator read from the private rows: XᵀX and Xᵀy (yᵀy for
datasets.json). (The decomposition along w* of issue 16 gives the same law; for a jointly Gaussian (x, y) the
(p+1)-dimensional Wishart is the whole of it.)

Clipping (Alg 1 clips ‖x‖₂ at r; NLR / ``clip_y`` clip |y| at B): the literal sums are of the clipped rows, which
equal the unclipped rows unless some row is clipped, so the total-variation distance between the data-free and the
literal law of everything computed from them is ≤ n·P(‖x‖₂ > r or |y| > B) ≤ n·(P(s²χ²_p > r²) + P(|N(0, v)| > B)),
v = w*ᵀΣw* + σ² (:meth:`LinearGaussian.change_probability`; the mechanism records it and refuses to fit above a
threshold). Only this model is offered: for logistic / sigmoid links the 1-D sums of (⟨x, w*⟩, y) have no closed law.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import chi2, norm

from dpbench.contract import Hyper
from dpbench.data._base import Dataset, Population
from dpbench.linalg import SumStats, psd_factor, sym_eigh, wishart
from dpbench.registry import register_dataset


@dataclass(frozen=True)
class LinearGaussian:
    """x ~ N(0, s²I_p), y = ⟨x, w⟩ + noise_sd·ξ (one instance: w fixed)."""

    s: float
    w: np.ndarray
    noise_sd: float

    @property
    def p(self) -> int:
        return int(self.w.size)

    @property
    def sigma(self) -> np.ndarray:
        return self.s**2 * np.eye(self.p)

    @property
    def label_var(self) -> float:
        """v = Var(y) = w*ᵀΣw* + σ²."""
        return float(self.s**2 * (self.w @ self.w) + self.noise_sd**2)

    def joint_cov(self) -> np.ndarray:
        """C = Cov((x, y)) = [[Σ, Σw], [wᵀΣ, wᵀΣw + σ²]] ((p+1)×(p+1))."""
        C = np.zeros((self.p + 1, self.p + 1))
        C[:-1, :-1] = self.sigma
        C[:-1, -1] = C[-1, :-1] = self.s**2 * self.w
        C[-1, -1] = self.label_var
        return C

    def rows(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """The literal path: n iid rows (X, y)."""
        X = self.s * rng.standard_normal((n, self.p))
        return X, X @ self.w + self.noise_sd * rng.standard_normal(n)

    def gram(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """M = [X, y]ᵀ[X, y] of n rows, drawn as Wishart_{p+1}(n, C) = FᵀWF with FᵀF = C (O(p³), exact in law)."""
        return wishart(int(n), psd_factor(*sym_eigh(self.joint_cov())), rng)

    def change_probability(self, r: float | None, y_bound: float | None) -> float:
        """Upper bound on P(‖x‖₂ > r or |y| > B) for one row: P(χ²_p > r²/s²) + 2Φ̄(B/√v) (a union bound; a term is
        0 when its bound is None)."""
        px = 0.0 if r is None else float(chi2.sf(r * r / self.s**2, self.p))
        py = 0.0 if y_bound is None else float(2.0 * norm.sf(y_bound / np.sqrt(self.label_var)))
        return px + py

    def sums(self, n: int, rng: np.random.Generator) -> SumStats:
        """The data-free sufficient statistics of n rows (:meth:`gram`), with :meth:`change_probability`."""
        return SumStats(rows=int(n), gram=self.gram(n, rng), change_probability=self.change_probability)


@register_dataset(
    "stein_linear_sums",
    summary="Gaussian x ~ N(0, s²I), linear GLM y = ⟨x, w*⟩ + N(0, σ²): data-free Wishart sums (rows: false) or rows",
    kind="synthetic",
    spec="003 §6.2 (issue 17 control)",
    shape=lambda n, p, **_: (n, p),
    rows_free=lambda rows=False, **_: not rows,
    options={
        "n": Hyper(int, default=1_000_000, ge=2, doc="private rows (any n without rows)"),
        "p": Hyper(int, default=5, ge=1, doc="dimension"),
        "s": Hyper(float, default=0.08, gt=0, doc="x ~ N(0, s²I)"),
        "noise_sd": Hyper(float, default=0.06, ge=0, doc="label noise σ"),
        "m": Hyper(int, default=40_000, ge=1, doc="public rows"),
        "rows": Hyper(bool, default=False, doc="materialise the n rows (the literal path) instead of their sums"),
        "data_draw": Hyper(int, default=0, ge=0, doc="set by the engine's data_draws, never in a config"),
    },
)
def load(rng: np.random.Generator, **options: Any) -> Dataset:
    """w* uniform on the unit sphere, then m public rows x_j ~ N(0, s²I), then the private sample: its Gram
    (``rows: false``, any n, :meth:`LinearGaussian.sums`) or its n rows (``rows: true``, the literal path; same law).
    Defaults: sd(y) = √(s² + σ²) = 0.1, so |y| ≤ B_y = 1 (the paper's GLM bound) fails with probability
    2Φ̄(10) = 1.5·10⁻²³ per row. m is fixed (not ⌊n/p²⌋ = 4·10¹⁰ at n = 10¹²). ``data_draw`` is set by the engine.
    """
    n, p, s, noise_sd, m, rows = (options[k] for k in ("n", "p", "s", "noise_sd", "m", "rows"))
    g = rng.standard_normal(p)
    model = LinearGaussian(float(s), g / np.linalg.norm(g), float(noise_sd))
    X_pub = s * rng.standard_normal((m, p))
    sigma = model.sigma
    extra = {
        "sigma_op_norm": s**2,
        "lam_min_sigma": s**2,
        "s": s,
        "m": m,
        "kappa": 1.0,
        "c_true": 1.0,
        "w_ols": model.w,
        "label_var": model.label_var,
    }
    population = Population(cov=sigma, theta=model.w, noise_var=noise_sd**2, extra=extra)
    meta = {
        "title": f"linear, Gaussian s = {s:g}, σ = {noise_sd:g}, p = {p}",
        "recipe": "issue 17 control",
        "m": m,
        "s": s,
        "noise_sd": noise_sd,
        "rows": bool(rows),
    }
    X, y = model.rows(n, rng) if rows else (None, None)
    return Dataset(
        "stein_linear_sums",
        X,
        y,
        np.zeros((0, p)),
        np.zeros(0),
        X_public=X_pub,
        population=population,
        x_bound=float("inf"),
        y_bound=float("inf"),
        meta=meta,
        sums=None if rows else model.sums(n, rng),
    )
