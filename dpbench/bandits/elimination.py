"""Batched private action elimination (spec 001 Alg 3/4/11 ≡ spec 000 Alg 6/7/15) with confidence-based planning
and Awerbuch–Kleinberg C-spanners (spec 001 §3.8, §3.9; spec 000 §3.11).

Epoch j (N^(j) = 2^j rounds) plays π^(j)(x) = Unif(spanner(A^(j−1)(x))) where, with A^(−1)(x) = A,
``A^(τ)(x) = {a ∈ A^(τ−1)(x): f̂^(τ)(x,a) + b̂^(τ)(x,a) ≥ max_{a'∈A} [f̂^(τ)(x,a') − b̂^(τ)(x,a')]}`` (Eq. 8, consistent
indexing of spec 001 #10 / spec 000 #24). At the end of epoch j (except the last) the epoch's data go to one
regression-with-confidence oracle (:mod:`dpbench.bandits.oracles`). Epochs whose oracle batches would hold fewer
than max(d, 8) records are not regressed (b̂ ≡ ∞ there: nothing eliminated, spec 001 §3.9 [CHOICE]).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpbench.bandits.envs import BanditEnv
from dpbench.bandits.oracles import (
    LinearEstimate,
    bandit_failure_probability,
    iwr_dp_fit,
    iwr_glm_dp_fit,
    iwr_glm_ldp_fit,
    iwr_ldp_fit,
    link_mean,
    oracle_hyper,
    ssp_ols_fit,
)
from dpbench.bandits.simulator import EpochData, SharedChunk, doubling_epochs, register_algorithm
from dpbench.contract import Choice, Hyper

PLANNING = ("spanner", "uniform")


# ----------------------------------------------------------------------------------------------------------------
# planning and spanners (vectorised over the rounds of a chunk)


#: absolute slack of the keep certificate (:func:`sure_keep`): far above the rounding of f̂ ± b̂ (values ≤ 3)
KEEP_SLACK = 1e-9


def arm_max(f: np.ndarray) -> np.ndarray:
    """max_a f[:, a, :] for f (n, |A|, E), one pass per arm (faster than an axis-1 reduction)."""
    hi = f[:, 0].copy()
    for a in range(1, f.shape[1]):
        np.maximum(hi, f[:, a], out=hi)
    return hi


def sure_keep(f: np.ndarray, width_floor: np.ndarray) -> np.ndarray:
    """(n, |A|, E): arms whose Eq. 8 test provably keeps them, given f̂ (n, |A|, E) and a lower bound
    ``width_floor`` (n, E) of b̂ over the row's arms.

    f̂(a) + b̂(a) ≥ f̂(a) + floor and max_{a'}(f̂ − b̂) ≤ max f̂ − floor, so f̂(a) + floor ≥ max f̂ − floor + slack
    implies keep_τ(x, a) (the slack covers the rounding of both sides: the computed test keeps a too)."""
    return f + width_floor[:, None, :] >= (arm_max(f) - width_floor + KEEP_SLACK)[:, None, :]


def exact_keep(Phi: np.ndarray, f: np.ndarray, est: LinearEstimate) -> np.ndarray:
    """Eq. 8's test of one estimate on every arm: f̂ + b̂ ≥ max_{a'}(f̂ − b̂), b̂ = min(scale·‖Mᵀφ‖, cap);
    ``f`` = f̂ on the estimate's mean scale (n, |A|, :func:`mean_scale`)."""
    n, n_arms, d = Phi.shape
    P = (Phi.reshape(-1, d) @ est.M).reshape(n, n_arms, -1)
    b = np.minimum(np.sqrt(np.einsum("nak,nak->na", P, P)) * est.scale, est.cap)
    return f + b >= np.max(f - b, axis=1, keepdims=True)


def eliminate(Phi: np.ndarray, estimates: list[LinearEstimate | None]) -> tuple[np.ndarray, int]:
    """Survivor mask A^(j−1)(x_t) (n, |A|) by Eq. 8 over the estimates τ = 0..j−1 (``None`` = no regression).

    The max in Eq. 8 ranges over all of A (spec 001 #10), so estimate τ's test
    keep_τ(x, a) = [f̂^(τ)(x,a) + b̂^(τ)(x,a) ≥ max_{a'} (f̂^(τ)(x,a') − b̂^(τ)(x,a'))] does not depend on the earlier
    survivors, and A^(j−1)(x) = ∩_τ keep_τ(x, ·) whenever that is non-empty. f̂ is on the mean scale of each
    estimate's link (:func:`mean_scale`: clipped <φ, θ̂> for linear, ν(<φ, θ̂>) for a GLM, spec 000 Thm H.5), the
    scale its widths b̂ bound. If noise ever empties a row, that row
    keeps its previous survivors (post-processing; counted in the second return value): only rows whose
    intersection is empty are replayed estimate by estimate (:func:`_intersect_in_order`, every test exact).
    Estimates whose widths are ≥ 2 everywhere cannot eliminate anything (means differ by ≤ 2) and are skipped.

    The intersection needs exact widths b̂ = min(scale·‖Mᵀφ‖, cap) (d² work per arm and estimate) only where a test
    could remove an arm that is still alive: the means f̂ of all tests come from one stacked product; with the
    cheap bound b̂ ≥ min(scale·σ_min(M)·min_a‖φ_a‖, cap) of a row, :func:`sure_keep` certifies arms that a test
    keeps. Tests are applied from the latest (narrowest) estimate back; a test is evaluated exactly on the rows
    where some alive arm is not certified, and skipped elsewhere (it keeps every alive arm there; dead arms stay
    dead), so the intersection is the same.
    """
    n, n_arms, d = Phi.shape
    norms = np.sqrt(np.einsum("nad,nad->na", Phi, Phi))
    min_norm = float(np.min(norms)) if Phi.size else 0.0
    active = [e for e in estimates if e is not None and e.min_width(min_norm) < e.cap]
    alive = np.ones((n, n_arms), dtype=bool)
    if not active:
        return alive, 0
    flat = Phi.reshape(-1, d)
    f_all = mean_scale(flat @ np.stack([e.theta for e in active], axis=1), [e.link for e in active])
    f_all = f_all.reshape(n, n_arms, -1)
    caps = np.array([e.cap for e in active])
    floor = np.minimum(norms.min(axis=1)[:, None] * np.array([e.safe_slope for e in active]), caps)
    open_arms = ~sure_keep(f_all, floor)  # (n, |A|, estimates)
    for k in reversed(range(len(active))):
        rows = np.nonzero((alive & open_arms[:, :, k]).any(axis=1))[0]
        if rows.size:
            alive[rows] &= exact_keep(Phi[rows], f_all[rows, :, k], active[k])
    empty = ~alive.any(axis=1)
    if not empty.any():
        return alive, 0
    keep = np.stack([exact_keep(Phi[empty], f_all[empty, :, k], e) for k, e in enumerate(active)], axis=2)
    alive[empty], emptied = _intersect_in_order(keep)
    return alive, emptied


def mean_scale(lin: np.ndarray, links: list[str]) -> np.ndarray:
    """f̂ of every estimate from its linear predictions ``lin`` (rows, estimates): column k is
    ν_k(lin[:, k]) by :func:`~dpbench.bandits.oracles.link_mean` (all-linear: one clip of the whole array)."""
    if all(link == "linear" for link in links):
        return np.clip(lin, -1.0, 1.0)
    out = np.empty_like(lin)
    for k, link in enumerate(links):
        out[:, k] = link_mean(lin[:, k], link)
    return out


def _intersect_in_order(keep: np.ndarray) -> tuple[np.ndarray, int]:
    """Eq. 8's sequential intersection of the tests keep[:, :, τ], τ = 0, 1, …, where a test that would empty a row
    is ignored for that row; returns the survivors and the number of ignored (row, τ) tests."""
    mask = np.ones(keep.shape[:2], dtype=bool)
    emptied = 0
    for k in range(keep.shape[2]):
        new = mask & keep[:, :, k]
        empty = ~new.any(axis=1)
        if empty.any():
            emptied += int(empty.sum())
            new[empty] = mask[empty]
        mask = new
    return mask, emptied


def spanner(Phi: np.ndarray, mask: np.ndarray, C: float = 2.0, tol: float = 1e-10, max_swaps: int = 100) -> np.ndarray:
    """A C-approximate barycentric spanner of {φ(x_t, a): mask[t, a]} for every row t (spec 001 Def. 7, §3.8).

    Greedy volume maximisation (pivoted Gram–Schmidt: r = rank steps, each adds the survivor with the largest
    residual, i.e. the largest |det| of the basis) followed by Awerbuch–Kleinberg swaps: while some survivor has a
    coefficient |c_i| > C in the current basis, it replaces basis vector i (|det| grows by a factor > C, so this
    terminates). Returns the spanner mask (n, |A|) ⊆ mask; every survivor is a combination of the spanner with
    coefficients in [−C, C]. Coefficients come from the Gram–Schmidt frame (a triangular solve, vectorised).

    A row with a single survivor a is its own spanner ({a} if φ(x_t, a) passes the rank tolerance, coefficient 1):
    only rows with ≥ 2 survivors go through the greedy + swap computation (rows are independent, so the result is
    the same as running every row through it). Rows with 2 ≤ m ≤ d survivors skip the coefficients when the greedy
    picks them all (:func:`_independent_spanner`); rows with m > d run on their packed survivors
    (:func:`pack_survivors`, m instead of |A| arms).
    """
    norms = np.sqrt(np.einsum("nad,nad->na", Phi, Phi))
    chosen = mask & (norms > tol * np.maximum(norms, 1e-300))
    counts = mask.sum(axis=1)
    d = Phi.shape[2]
    few = (counts > 1) & (counts <= d) if C >= 1.0 + 1e-3 else np.zeros(counts.shape, dtype=bool)
    many = (counts > 1) & ~few
    if few.any():
        chosen[few] = _independent_spanner(Phi[few], mask[few], counts[few], C, tol, max_swaps)
    if many.any():
        packed, packed_mask, arms = pack_survivors(Phi[many], mask[many], int(counts[many].max()))
        chosen[many] = unpack(_greedy_spanner(packed, packed_mask, C, tol, max_swaps), arms, Phi.shape[1])
    return chosen


def pack_survivors(Phi: np.ndarray, mask: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each row's survivors first, in arm order, in ``width`` ≥ max survivors slots: (Phi (n, width, d), mask,
    arm of each slot). :func:`_greedy_spanner` gives the same picks on this layout: masked-out slots have zero
    residuals, are never picked (a pick needs a residual above the rank tolerance) and never trigger a swap, and
    argmax ties resolve to the first survivor in arm order on both layouts."""
    arms = np.argsort(~mask, axis=1, kind="stable")[:, :width]
    rows = np.arange(mask.shape[0])[:, None]
    return Phi[rows, arms], mask[rows, arms], arms


def unpack(picked: np.ndarray, arms: np.ndarray, n_arms: int) -> np.ndarray:
    """Scatter a packed (n, width) pick mask back to (n, |A|) (inverse of :func:`pack_survivors`)."""
    out = np.zeros((picked.shape[0], n_arms), dtype=bool)
    out[np.arange(picked.shape[0])[:, None], arms] = picked
    return out


def _independent_spanner(
    Phi: np.ndarray, mask: np.ndarray, counts: np.ndarray, C: float, tol: float, max_swaps: int
) -> np.ndarray:
    """:func:`_greedy_spanner` of rows with 2 ≤ m ≤ d survivors, without its coefficient and swap stages where the
    greedy picks all m survivors (rank m, the generic case): the spanner is then every survivor — each survivor is
    a basis vector, coefficients e_i up to rounding of order ε_mach/tol = 10⁻⁶ ≤ C (C ≥ 1 + 10⁻³), no swap.
    Rows where the greedy stops earlier (nearly dependent survivors) take the full computation."""
    packed, packed_mask, arms = pack_survivors(Phi, mask, int(counts.max()))
    _, _, rank, _ = _greedy_basis(packed, packed_mask, tol)
    out = mask.copy()
    short = rank < counts
    if short.any():
        out[short] = unpack(
            _greedy_spanner(packed[short], packed_mask[short], C, tol, max_swaps), arms[short], Phi.shape[1]
        )
    return out


def _greedy_basis(
    Phi: np.ndarray, mask: np.ndarray, tol: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Greedy pivoted Gram–Schmidt over the survivors of every row: (picked mask, basis arms (n, d), rank (n,),
    orthonormal frame Q (n, d, d)); step i adds the survivor with the largest residual if it exceeds tol·scale.

    Residuals are kept coordinate-major, R[k] = (n, |A|) for k < d, so every operation runs over long contiguous
    (n, |A|) planes; each residual entry gets the same operations in the same order as the row-major einsum form
    (R − <R, q>·q elementwise; the sums over k in numpy einsum's order, :func:`_planes_dot`). Where this platform's
    einsum sums in another order (:func:`planes_match_einsum`), the row-major form runs instead. It stops after
    min(d, |A|) steps and skips the residual update of the last one (issue 40): nothing reads those residuals, and
    a step past |A| picks in any row finds every slot closed, so the outputs are those of the full loop."""
    n, n_arms, d = Phi.shape
    if not planes_match_einsum(d):
        return _greedy_basis_literal(Phi, mask, tol)
    rows_all = np.arange(n)
    R = np.where(mask[None], np.moveaxis(Phi, 2, 0), 0.0)  # (d, n, |A|), a new contiguous array
    scale = np.sqrt(np.max(_planes_dot(R, R), axis=1))  # per-row scale for the rank tolerance
    floor = tol * np.maximum(scale, 1e-300)
    closed = ~mask
    chosen = np.zeros((n, n_arms), dtype=bool)
    basis = np.zeros((n, d), dtype=np.int64)
    rank = np.zeros(n, dtype=np.int64)
    Q = np.zeros((n, d, d))
    steps = min(d, n_arms)  # a row has at most n_arms picks: after them every slot is closed (res2 ≡ 0)
    for i in range(steps):
        res2 = _planes_dot(R, R)
        res2[closed] = 0.0
        j = np.argmax(res2, axis=1)
        top = np.sqrt(res2[rows_all, j])
        ok = top > floor
        if not ok.any():
            break
        q = np.where(ok, R[:, rows_all, j] / np.where(ok, top, 1.0), 0.0)  # (d, n)
        if i + 1 < steps:  # the residuals are read again only by a later step
            dots = _planes_dot(R, q[:, :, None])
            for k in range(d):
                R[k] -= dots * q[k][:, None]
        Q[:, :, i] = q.T
        picked = (rows_all[ok], j[ok])
        chosen[picked] = True
        closed[picked] = True
        basis[ok, i] = j[ok]
        rank[ok] = i + 1
    return chosen, basis, rank, Q


def _planes_dot(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Σ_k A[k]·B[k] over the leading axis (A (d, n, m); B broadcastable) in two interleaved partial sums,
    (A₀B₀ + A₂B₂ + …) + (A₁B₁ + A₃B₃ + …): the order of numpy's einsum over a short contiguous axis (two-lane
    SIMD), so the result equals einsum("nad,nad->na") bit for bit where :func:`planes_match_einsum` says so."""
    even = A[0] * B[0]
    for k in range(2, A.shape[0], 2):
        even += A[k] * B[k]
    if A.shape[0] == 1:
        return even
    odd = A[1] * B[1]
    for k in range(3, A.shape[0], 2):
        odd += A[k] * B[k]
    return even + odd


@functools.cache
def planes_match_einsum(d: int) -> bool:
    """Whether :func:`_planes_dot` reproduces einsum's sums over a length-d axis bit for bit on this platform (both
    patterns of :func:`_greedy_basis`, checked once per d on random data)."""
    rng = np.random.default_rng(d)
    A = rng.standard_normal((256, 4, d))
    q = rng.standard_normal((256, d))
    R = np.ascontiguousarray(np.moveaxis(A, 2, 0))
    return np.array_equal(_planes_dot(R, R), np.einsum("nad,nad->na", A, A)) and np.array_equal(
        _planes_dot(R, q.T[:, :, None]), np.einsum("nad,nd->na", A, q)
    )


def _greedy_basis_literal(
    Phi: np.ndarray, mask: np.ndarray, tol: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Greedy pivoted Gram–Schmidt over the survivors of every row: (picked mask, basis arms (n, d), rank (n,),
    orthonormal frame Q (n, d, d)); step i adds the survivor with the largest residual if it exceeds tol·scale.
    Row-major einsum form (the reference of :func:`_greedy_basis`)."""
    n, n_arms, d = Phi.shape
    rows_all = np.arange(n)
    norms2 = np.einsum("nad,nad->na", Phi, Phi)
    scale = np.sqrt(np.max(np.where(mask, norms2, 0.0), axis=1))  # per-row scale for the rank tolerance
    R = np.where(mask[:, :, None], Phi, 0.0)
    chosen = np.zeros((n, n_arms), dtype=bool)
    basis = np.zeros((n, d), dtype=np.int64)
    rank = np.zeros(n, dtype=np.int64)
    Q = np.zeros((n, d, d))
    for i in range(d):
        res2 = np.einsum("nad,nad->na", R, R)
        res2[chosen | ~mask] = 0.0
        j = np.argmax(res2, axis=1)
        top = np.sqrt(res2[rows_all, j])
        ok = top > tol * np.maximum(scale, 1e-300)
        if not ok.any():
            break
        q = np.where(ok[:, None], R[rows_all, j] / np.where(ok, top, 1.0)[:, None], 0.0)
        R -= np.einsum("nad,nd->na", R, q)[:, :, None] * q[:, None, :]
        Q[:, :, i] = q
        chosen[ok, j[ok]] = True
        basis[ok, i] = j[ok]
        rank[ok] = i + 1
    return chosen, basis, rank, Q


def _greedy_spanner(Phi: np.ndarray, mask: np.ndarray, C: float, tol: float, max_swaps: int) -> np.ndarray:
    """:func:`spanner` on every row: greedy pivoted Gram–Schmidt, then Awerbuch–Kleinberg swaps."""
    n, n_arms, d = Phi.shape
    rows_all = np.arange(n)
    chosen, basis, rank, Q = _greedy_basis(Phi, mask, tol)
    # coordinates in the Gram–Schmidt frame; the basis matrix is lower triangular (row i = basis vector i)
    coords = np.einsum("nad,ndk->nak", Phi, Q)
    Bc = coords[rows_all[:, None], basis]  # (n, d, d)
    unused = np.arange(d)[None, :] >= rank[:, None]
    Bc[unused] = 0.0
    diag = np.einsum("nii->ni", Bc)
    diag[unused] = 1.0
    coef = np.zeros_like(coords)
    for k in range(d - 1, -1, -1):
        acc = coords[:, :, k] - np.einsum("nai,ni->na", coef[:, :, k + 1 :], Bc[:, k + 1 :, k])
        coef[:, :, k] = acc / Bc[:, k, k][:, None]
    big = np.where(mask, np.abs(coef).max(axis=2), 0.0).max(axis=1)
    for t in np.nonzero(big > C)[0]:  # rare: Python loop over the rows that need Awerbuch–Kleinberg swaps
        r = int(rank[t])
        for _ in range(max_swaps):
            c = np.abs(Phi[t] @ np.linalg.pinv(Phi[t, basis[t, :r]]))
            c[~mask[t]] = 0.0
            a, i = np.unravel_index(np.argmax(c), c.shape)
            if c[a, i] <= C * (1 + 1e-9):
                break
            chosen[t, basis[t, i]] = False
            basis[t, i] = a
            chosen[t, a] = True
    return chosen


def spanner_coefficients(Phi: np.ndarray, mask: np.ndarray, span: np.ndarray) -> np.ndarray:
    """Max |coefficient| per row of the survivors expressed in the spanner (for tests / diagnostics)."""
    out = np.zeros(Phi.shape[0])
    for t in range(Phi.shape[0]):
        idx = np.nonzero(span[t])[0]
        if idx.size == 0:
            continue
        coef = Phi[t, mask[t]] @ np.linalg.pinv(Phi[t, idx])
        out[t] = np.abs(coef).max()
    return out


def uniform_choice(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One index per row drawn uniformly from the True entries of ``mask`` (every row has at least one)."""
    counts = mask.sum(axis=1)
    k = np.floor(rng.random(mask.shape[0]) * counts).astype(np.int64)
    return np.argmax(np.cumsum(mask, axis=1) > k[:, None], axis=1)


# ----------------------------------------------------------------------------------------------------------------
# the meta-algorithm


class EliminationPolicy:
    """Alg 3/15 with a pluggable regression-with-confidence ``oracle(data, rng) -> LinearEstimate``."""

    def __init__(self, env: BanditEnv, oracle, *, min_records: int, batches: int, planning: str, C: float):
        if planning not in PLANNING:
            raise ValueError(f"planning must be one of {PLANNING}, got {planning!r}")
        self.env = env
        self.oracle = oracle
        self.min_records = min_records
        self.batches = batches
        self.planning = planning
        self.C = C
        self.estimates: list[LinearEstimate | None] = []
        self.info: dict[str, Any] = {"epochs_fitted": 0, "n_floor": 0, "emptied_rows": 0}

    def epochs(self, T: int) -> list[int]:
        return doubling_epochs(T)

    @property
    def uses_shared_contexts(self) -> bool:
        return self.planning == "spanner"

    def act(self, Phi: np.ndarray, rng: np.random.Generator, shared: SharedChunk | None = None) -> np.ndarray:
        mask, emptied = eliminate(Phi, self.estimates)
        self.info["emptied_rows"] += emptied
        if self.planning == "spanner":
            mask = self._spanner(Phi, mask, shared)
        return uniform_choice(mask, rng)

    def _spanner(self, Phi: np.ndarray, mask: np.ndarray, shared: SharedChunk | None) -> np.ndarray:
        """spanner(Φ, mask); rows where nothing is eliminated take the all-arms spanner of their context, computed
        once per block of the shared stream for every run of the trial (rows are independent: same result)."""
        full = mask.all(axis=1)
        if shared is None or full.mean() * shared.consumers < 1.0:
            return spanner(Phi, mask, self.C)
        span = shared.derived(
            f"spanner(all arms, C={self.C!r})",
            lambda block: spanner(block, np.ones(block.shape[:2], dtype=bool), self.C),
        )
        span = span.copy()
        if not full.all():
            span[~full] = spanner(Phi[~full], mask[~full], self.C)
        return span

    def update(self, data: EpochData, rng: np.random.Generator) -> None:
        if data.n // self.batches < self.min_records:
            self.estimates.append(None)  # b̂ ≡ ∞; the data are simply not used
            return
        est = self.oracle(data, rng)
        self.estimates.append(est)
        self.info["epochs_fitted"] += 1
        self.info["n_floor"] += int(est.info.get("n_floor", 0))
        self.info["width_scale_last"] = float(est.scale)
        for key in ("lam", "gamma", "rho"):
            if key in est.info:
                self.info[f"{key}_last"] = float(est.info[key])


#: the planning hyperparameters of every elimination algorithm (its oracle's come from :data:`ORACLE_HYPER`)
PLANNING_HYPER = {
    "planning": Choice(*PLANNING, default="spanner", doc="play uniformly on a C-spanner of the survivors, or on all"),
    "C": Hyper(float, default=2.0, ge=1, doc="the spanner's approximation constant C (coefficients in [−C, C])"),
}


@dataclass(frozen=True)
class Oracle:
    """The regression oracle of one elimination algorithm: ``fit(data, ε, δ, rng, fail_prob=…, **kwargs)`` of
    :mod:`dpbench.bandits.oracles`, the hyperparameters it takes (``names``), the values it takes from the
    environment (``from_env``: keyword → attribute), and its batches per epoch: 1 (``k_floor`` None) or 2·K_eff,
    K_eff = K, or with ``preset: theory`` max(k_floor, ⌈log log T⌉) (spec 000 §6)."""

    fit: Callable[..., LinearEstimate]
    names: tuple[str, ...]
    from_env: tuple[tuple[str, str], ...] = ()
    k_floor: int | None = None
    linear: bool = True  # a linear oracle: the environment's link must be linear

    def batches(self, hyper: Mapping[str, Any], T: int) -> int:
        if self.k_floor is None:
            return 1
        if hyper.get("preset", "calibrated") == "calibrated":
            return 2 * hyper["K"]
        return 2 * max(self.k_floor, math.ceil(math.log(max(math.log(T), 1.0))))


def elimination(
    oracle: Oracle, env: BanditEnv, T: int, epsilon: float, delta: float, hyper: Mapping[str, Any]
) -> EliminationPolicy:
    """The policy of Alg 3/15 with ``oracle`` at (ε, δ): δ_f and the calibration checked before the first round
    (:func:`~dpbench.bandits.oracles.bandit_failure_probability`), epochs with fewer than max(d, 8) records per
    batch not regressed."""
    linear = "the elimination oracles" if oracle.linear else None
    fail = bandit_failure_probability(env, T, epsilon, hyper["fail_prob"], hyper["calibration"], linear)
    kwargs = {name: hyper[name] for name in oracle.names} | {key: getattr(env, attr) for key, attr in oracle.from_env}

    def fit(data: EpochData, r: np.random.Generator) -> LinearEstimate:
        return oracle.fit(data, epsilon, delta, r, fail_prob=fail, **kwargs)

    batches = oracle.batches(hyper, T)
    return EliminationPolicy(
        env, fit, min_records=max(env.d, 8), batches=batches, planning=hyper["planning"], C=hyper["C"]
    )


#: the oracle of each registered elimination algorithm (:func:`register_elimination`)
ORACLES: dict[str, Oracle] = {}


def register_elimination(name: str, oracle: Oracle, doc: str, **meta: Any) -> None:
    """Register the elimination algorithm ``name`` with ``oracle`` (kept in :data:`ORACLES`); its table: the
    oracle's hyperparameters, δ_f and the planning's (:data:`PLANNING_HYPER`)."""
    ORACLES[name] = oracle

    def make(env: BanditEnv, T: int, epsilon: float, delta: float, rng: np.random.Generator, **hyper: Any):
        return elimination(ORACLES[name], env, T, epsilon, delta, hyper)

    make.__name__ = make.__qualname__ = name
    make.__doc__ = doc
    table = oracle_hyper(*oracle.names, "calibration", "fail_prob") | PLANNING_HYPER
    register_algorithm(name, hyper=table, **meta)(make)


register_elimination(
    "elim_iwr_jdp",
    Oracle(iwr_dp_fit, ("preset", "K", "c_lam", "c_gamma", "c_b", "calibration"), (("d_A", "d_A"),), k_floor=4),
    "JDP linear bandit (spec 000 Thm 6.2): per epoch Alg 5 (+ Alg 4); b̂ = min{c_b(8λ + 16√(d_A log(2/δ)/N))‖Wφ‖, 2}.",
    summary="action elimination + information-weighted regression (JDP)",
    privacy_model="joint",
    spec="000 Alg 6 (15 + 5 + 7)",
    style={"color": "tab:blue", "marker": "o"},
)
register_elimination(
    "elim_iwr_ldp",
    Oracle(iwr_ldp_fit, ("preset", "K", "c_lam", "c_b", "calibration", "simulation"), k_floor=12),
    "LDP linear bandit (spec 000 Thm 6.4): per epoch Alg 3 (+ Alg 2), b̂ = min{c_b·8λ‖Uφ‖, 2}. ``simulation``: "
    "users' noise by its exact aggregate law (default) or drawn per user (``per_user``).",
    summary="action elimination + information-weighted regression (LDP)",
    privacy_model="local",
    spec="000 Thm 6.4 (15 + 3 + 7)",
    style={"color": "tab:green", "marker": "s"},
)
register_elimination(
    "elim_ssp_jdp",
    Oracle(functools.partial(ssp_ols_fit, local=False), ("c_b", "calibration")),
    "Action elimination with the central SSP-OLS oracle (JDP baseline, spec 001 §7.2).",
    summary="action elimination + SSP-OLS (JDP baseline, not from the paper)",
    privacy_model="joint",
    spec="001 §7.2",
    style={"color": "tab:red", "marker": "^"},
)
register_elimination(
    "elim_ssp_ldp",
    Oracle(functools.partial(ssp_ols_fit, local=True), ("c_b", "calibration", "simulation")),
    "Action elimination with the LDP SSP-OLS oracle (baseline, spec 001 §7.2).",
    summary="action elimination + LDP SSP-OLS (baseline, not from the paper)",
    privacy_model="local",
    spec="001 §7.2",
    style={"color": "tab:orange", "marker": "v"},
)
register_elimination(
    "elim_iwr_glm_jdp",
    Oracle(
        iwr_glm_dp_fit, ("K", "c_lam", "c_gamma", "c_b", "calibration"), (("link", "link"),), k_floor=0, linear=False
    ),
    "JDP GLM bandit (spec 000 Thm H.5): per epoch Alg 13 (Alg 4 + Alg 14); f̂ = ν(<φ, θ̂>), b̂ = min{c_b·8L_νλ‖Wφ‖, "
    "2}. Works for linear and logistic links.",
    summary="action elimination + information-weighted DP-ERM GLM (JDP)",
    privacy_model="joint",
    spec="000 Thm H.5 (15 + 13 + 14)",
    style={"color": "tab:cyan", "marker": "h"},
)
register_elimination(
    "elim_iwr_glm_ldp",
    Oracle(
        iwr_glm_ldp_fit,
        ("K", "c_lam", "c_b", "calibration", "simulation"),
        (("link", "link"),),
        k_floor=0,
        linear=False,
    ),
    "LDP GLM bandit (spec 000 Remark H.6, #30): per epoch Alg 12 (Alg 2 + Alg 11, per-user SGD); f̂ = ν(<φ, θ̂>), "
    "b̂ = min{c_b·8L_ν(λ + σ̄√d/(μ_ν√N₁))‖Uφ‖, 2} (Thm G.4; iwr_glm_ldp_fit). ``simulation`` applies to Alg 2's "
    "noise; Alg 11's is always drawn per user. Linear and logistic links.",
    summary="action elimination + information-weighted LDP-SGD GLM (LDP)",
    privacy_model="local",
    spec="000 Remark H.6 (15 + 12 + 7)",
    style={"color": "tab:olive", "marker": "p"},
)
