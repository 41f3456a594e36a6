"""Worst-case neighbouring pairs for the white-box audit.

A pair is a tiny background dataset plus one canary record. The background (rows ±b·e_d with label 0, b = 0.2) puts
all its energy on the last axis, so along e₁ the Gram matrix is 0: a canary on e₁ moves λ_min(XᵀX) by its full
‖x‖², and every sufficient statistic by its full sensitivity. ``zero_out``: D′ has the zero row instead of the
canary; ``replace_one`` (and every local/label model: one user's record changes): D′ has another record.

The canary sits on the norm bound, x = B·e₁ (or the ℓ1 ball's vertex), with the largest label the mechanism allows
(mechanisms that clip residuals declare a huge |y| so the clip saturates: the residual is at its maximum). For
``replace_one`` the replacement (x′, y′) is searched (:func:`find_worst_pair`): candidates at angles 0, π/3, π/2,
2π/3, π from e₁ in the (e₁, e₂) plane, radius B, 0 or 0⁻, label ±Y or 0 (this grid holds the attained worst cases of
SSP — angle ≈ π/2.6 with opposite label — and of the Stein releases — angle π/3), then a Nelder–Mead refinement;
the criterion is the releases' 2·KL divergence, which for Gaussian releases is μ² of the pair.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from scipy.optimize import minimize

from dpbench.audit.whitebox import Pair, pair_run, slots_of
from dpbench.data._base import Population
from dpbench.linalg import gram_stats
from dpbench.registry import MechanismInfo


@dataclass(frozen=True)
class PairSpec:
    """Shape and bounds of the audit's pair (per mechanism: :data:`dpbench.audit.driver.AUDIT_PAIRS`)."""

    n: int = 32
    d: int = 2
    x_bound: float = 1.0
    x_norm: int = 2  # 2: ℓ2 ball; 1: ℓ1 ball
    y_bound: float = 1.0
    background_norm: float = 0.2
    background: str = "axis"  # axis | xy_null (LinMix: [X, Y]ᵀ[X, Y] null exactly along (e₁, 1)) | spread
    canary_first: bool = False  # the canary is the first row (mechanisms whose last record never reaches a release)
    #: the canary's row when set (0 … n − 1; overrides ``canary_first``): the integrity checks move it around
    canary_index: int | None = None
    search: bool = True

    def with_(self, **changes: Any) -> PairSpec:
        return replace(self, **changes)


Record = tuple[float, float, float]  # (angle from e₁, radius as a fraction of the bound, label as a fraction of Y)


def record_x(spec: PairSpec, angle: float, radius: float) -> np.ndarray:
    """x at ``angle`` from e₁ in the (e₁, e₂) plane with ‖x‖ = radius·B (ℓ2) or on the ℓ1 sphere; d = 1: ±radius·B."""
    x = np.zeros(spec.d)
    rho = float(np.clip(radius, 0.0, 1.0)) * spec.x_bound
    if spec.d == 1:
        x[0] = rho if math.cos(angle) >= 0 else -rho
        return x
    c, s = math.cos(angle), math.sin(angle)
    scale = 1.0 / (abs(c) + abs(s)) if spec.x_norm == 1 else 1.0
    x[0], x[1] = rho * c * scale, rho * s * scale
    return x


BACKGROUNDS = ("axis", "xy_null", "spread")


def background(spec: PairSpec) -> tuple[np.ndarray, np.ndarray]:
    """``axis``: n − 1 rows ±b·e_d (alternating signs) with label 0 (XᵀX is 0 along e₁).

    ``xy_null`` (d ≥ 2): rows alternate between (0.6·e_d, 0) and (0.5·e₁, −0.5), so [X, Y]ᵀ[X, Y] is null exactly
    along (e₁, 1) and ≥ 2 elsewhere (n ≥ 24): the canary (e₁, 1) raises its λ_min by the full C² = 2.

    ``spread``: rows of distinct norms from 0.05·B up to B (some exactly on the bound), random directions, labels
    spread over [−Y, Y] (some at ±Y): one record then moves every order statistic of the data — the largest and
    the median row norm, |y|'s, a data-dependent clipping threshold — which the ``axis`` background never moves."""
    rows = spec.n - 1
    if spec.background not in BACKGROUNDS:
        raise ValueError(f"background must be one of {BACKGROUNDS}, got {spec.background!r}")
    X = np.zeros((rows, spec.d))
    y = np.zeros(rows)
    if spec.background == "spread":
        rng = np.random.default_rng([spec.n, spec.d, 0x5D])
        z = rng.standard_normal((rows, spec.d))
        z /= np.linalg.norm(z, ord=spec.x_norm, axis=1, keepdims=True)
        radii = np.linspace(0.05, 1.0, rows)
        radii[-max(1, rows // 8) :] = 1.0  # rows on the bound
        X = spec.x_bound * radii[rng.permutation(rows), None] * z
        y = spec.y_bound * rng.permutation(np.linspace(-1.0, 1.0, rows))
        return X, y
    if spec.background == "xy_null":
        if spec.d < 2 or spec.n < 24:
            raise ValueError("background 'xy_null' needs d ≥ 2 and n ≥ 24")
        even = np.arange(rows) % 2 == 0
        X[even, -1] = 0.6
        X[~even, 0] = 0.5
        y[~even] = -0.5
        return X, y
    X[:, -1] = spec.background_norm * np.where(np.arange(rows) % 2 == 0, 1.0, -1.0)
    return X, y


def public_rows(spec: PairSpec, rng: np.random.Generator) -> np.ndarray:
    """Unlabeled public rows from the background's distribution: b·(uniform on the sphere), n of them."""
    z = rng.standard_normal((spec.n, spec.d))
    return spec.background_norm * z / np.linalg.norm(z, axis=1, keepdims=True)


def inputs_for(info: MechanismInfo, X: np.ndarray, y: np.ndarray, public_X: np.ndarray, spec: PairSpec) -> dict:
    """The extra inputs ``info.needs``: Gram statistics of this dataset, public rows, a population description."""
    population = Population(cov=spec.background_norm**2 * np.eye(spec.d) / spec.d, theta=np.zeros(spec.d),
                            noise_var=0.0, extra={"audit": True})  # fmt: skip
    available = {"public_X": public_X, "population": population}
    return {name: gram_stats(X, y) if name == "stats" else available[name] for name in info.needs}


def make_pair(info: MechanismInfo, spec: PairSpec, canary: Record, other: Record | None, public_X: np.ndarray) -> Pair:
    """D = background + canary (last row); D′ = background + ``other`` (None: the zero row)."""
    x_c = record_x(spec, canary[0], canary[1])
    y_c = float(np.clip(canary[2], -1, 1)) * spec.y_bound
    if other is None:
        x_o, y_o = np.zeros(spec.d), 0.0
    else:
        x_o = record_x(spec, other[0], other[1])
        y_o = float(np.clip(other[2], -1, 1)) * spec.y_bound
    pair = rows_pair(info, spec, (x_c, y_c), (x_o, y_o), public_X, zero_row=other is None)
    pair.canary, pair.other = canary, other
    return pair


def rows_pair(info: MechanismInfo, spec: PairSpec, canary: tuple[np.ndarray, float], other: tuple[np.ndarray, float],
              public_X: np.ndarray, zero_row: bool = False) -> Pair:  # fmt: skip
    """D = background + the canary row (x, y) at :func:`canary_row`; D′ = background + ``other`` (x′, y′). Rows may
    lie outside the bounds (canaries for mechanisms that clip)."""
    Xb, yb = background(spec)
    (x_c, y_c), (x_o, y_o) = canary, other
    x_c, x_o = np.asarray(x_c, dtype=float), np.asarray(x_o, dtype=float)
    what = "the zero row" if zero_row else f"x′ = {_fmt(x_o)}, y′ = {y_o:.3g}"
    at = canary_row(spec)
    X, y = np.insert(Xb, at, x_c, axis=0), np.insert(yb, at, y_c)
    Xp, yp = np.insert(Xb, at, x_o, axis=0), np.insert(yb, at, y_o)
    for array in (X, y, Xp, yp):
        array.setflags(write=False)
    where = (
        ""
        if spec.background == "axis" and spec.canary_index is None
        else (f" ({spec.background} background, canary row {at + 1} of {spec.n})")
    )
    description = f"n = {spec.n}, d = {spec.d}; canary x = {_fmt(x_c)}, y = {y_c:.3g} in D; {what} in D′{where}"
    return Pair(X, y, Xp, yp, inputs_for(info, X, y, public_X, spec), inputs_for(info, Xp, yp, public_X, spec),
                description)  # fmt: skip


def canary_row(spec: PairSpec) -> int:
    """The canary's row: ``canary_index`` if set, else the first (``canary_first``) or the last row."""
    if spec.canary_index is not None:
        if not 0 <= spec.canary_index < spec.n:
            raise ValueError(f"canary_index must be in [0, {spec.n}), got {spec.canary_index}")
        return spec.canary_index
    return 0 if spec.canary_first else spec.n - 1


def _fmt(x: np.ndarray) -> str:
    return "(" + ", ".join(f"{v:.3g}" for v in x) + ")"


def candidate_records(spec: PairSpec, labels_only: bool = False) -> list[Record]:
    """Replacement records to try; ``labels_only`` (label-DP: the covariates are shared) keeps x′ = x."""
    if labels_only:
        return [(0.0, 1.0, label) for label in (1.0, -1.0, 0.0)]
    angles = (0.0, math.pi) if spec.d == 1 else (0.0, math.pi / 3, math.pi / 2, 2 * math.pi / 3, math.pi)
    out: list[Record] = []
    for angle in angles:
        for radius in (1.0, 0.0, 1e-9):
            for label in (1.0, -1.0, 0.0):
                if radius == 1e-9 and angle != math.pi:
                    continue
                out.append((angle, radius, label))
    return out


def pair_divergence(
    info: MechanismInfo,
    pair: Pair,
    view: str,
    epsilon: float,
    delta: float,
    hyper: Mapping[str, Any],
    seed: int,
    histories: int = 2,
) -> float:
    """2·KL divergence of the releases between the two datasets (μ² for Gaussian releases), the smallest over
    ``histories`` independent runs: a pair whose shift is large at every history beats one that is large by luck."""
    values = []
    for h in range(histories):
        run = pair_run(info, pair, "D", epsilon, delta, np.random.SeedSequence([seed, 7, h]), hyper)
        values.append(float(sum(s.divergence() for s in slots_of(run, view))))
    return min(values)


def find_worst_pair(
    info: MechanismInfo,
    spec: PairSpec,
    view: str,
    epsilon: float,
    delta: float,
    hyper: Mapping[str, Any],
    seed: int = 0,
    refine: int = 60,
) -> tuple[Pair, float]:
    """The pair of largest divergence: zero-out → the canary vs the zero row; otherwise grid + Nelder–Mead over the
    replacement record (module docstring). Returns (pair, its divergence)."""
    public_X = public_rows(spec, np.random.default_rng([seed, 11]))
    canary: Record = (0.0, 1.0, 1.0)
    if info.neighbour == "zero_out" and info.privacy_model == "central":
        pair = make_pair(info, spec, canary, None, public_X)
        return pair, pair_divergence(info, pair, view, epsilon, delta, hyper, seed)
    if not spec.search:
        pair = make_pair(info, spec, canary, (0.0, 1.0, -1.0), public_X)
        return pair, pair_divergence(info, pair, view, epsilon, delta, hyper, seed)

    def score(other: Record) -> float:
        try:
            return pair_divergence(info, make_pair(info, spec, canary, other, public_X), view, epsilon, delta,
                                   hyper, seed)  # fmt: skip
        except ValueError:
            return -math.inf  # a record the mechanism refuses (e.g. outside its domain)

    labels_only = info.privacy_model == "label"
    scored = [(score(c), c) for c in candidate_records(spec, labels_only)]
    best_value, best = max(scored, key=lambda t: t[0])
    if refine and best[1] > 0 and spec.d > 1 and not labels_only:
        with np.errstate(invalid="ignore"):  # refused records score −inf
            result = minimize(
                lambda p: -score((p[0], min(1.0, abs(p[1])), float(np.clip(p[2], -1, 1)))), np.asarray(best),
                method="Nelder-Mead",
                options={"maxfev": refine, "xatol": 1e-3, "fatol": 1e-9 * max(best_value, 1e-12)},
            )  # fmt: skip
        if -result.fun > best_value:
            best_value = -result.fun
            best = (float(result.x[0]), min(1.0, abs(float(result.x[1]))), float(np.clip(result.x[2], -1, 1)))
    return make_pair(info, spec, canary, best, public_X), best_value
