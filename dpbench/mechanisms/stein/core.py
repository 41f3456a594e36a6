"""Building blocks of the Stein-lemma NLDP estimators (spec 003 §2–§3): the per-user randomizer, the exact
aggregation shortcut, the server's private OLS, and the SolveScale root finder.

Data flow of the literal (local) algorithm (spec 003 §3.2):

* user i (the only code that reads (x_i, y_i)): :func:`user_releases` clips x_i (Gaussian case) and releases
  Ẑ_i = x̄_i x̄_iᵀ + E_{1,i}, ẑ_i = x̄_i y_i + E_{2,i}, E_{1,i} ~ Sym_p(s_xx²), E_{2,i} ~ N(0, s_xy² I);
* server: only Σ_i Ẑ_i, Σ_i ẑ_i and the public rows: :func:`server_estimate`.

The default path (``simulation="aggregate"``) samples Σ_i E_{1,i} ~ Sym_p(n s_xx²) and Σ_i E_{2,i} ~ N(0, n s_xy² I)
directly (spec 003 §2.4: a sum of n independent Sym_p(s²) matrices is symmetric with iid N(0, n s²) upper-triangle
entries; likewise for the vectors — an identity in distribution), so n = 7·10⁵ costs O(np) for the clean sums
(O(p²) when the runner's XᵀX is given) plus O(p²) noise. ``simulation="per_user"`` (alias ``simulate_users=True``)
runs the randomizer on every user, vectorised over chunks of users: O(np²) draws (tests/mechanisms/test_shortcuts.py
checks the two estimators agree in law).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import brentq

from dpbench.linalg import GramStats, solve_or_lstsq, symmetric_gaussian
from dpbench.mechanisms._base import released
from dpbench.mechanisms._simulation import sym_from_upper, user_chunks
from dpbench.mechanisms.stein.families import Family

AGGREGATIONS = ("local", "central")
COV_ESTIMATORS = ("mixed", "private")
ROOT_STATUSES = ("newton", "bracket", "no_root")


# ----------------------------------------------------------------------------------------------------------------
# users


def clip_rows_l2(X: np.ndarray, r: float) -> np.ndarray:
    """x̄_i = x_i · min{1, r/‖x_i‖₂} (Alg 1 line 5)."""
    norms = np.linalg.norm(X, axis=-1, keepdims=True)
    return X * np.minimum(1.0, r / np.maximum(norms, np.finfo(float).tiny))


@dataclass(frozen=True)
class UserChannel:
    """The LDP randomizer every user applies to her record (spec 003 §3.2–§3.5): x clipped to the ℓ2 ball of radius
    r (``clip_l2``; Gaussian covariates), y to [−y_clip, y_clip] (``y_clip``; NLR families), then Sym_p(s_xx²) added
    to x̄x̄ᵀ and N(0, s_xy² I) to x̄ȳ."""

    r: float
    s_xx: float
    s_xy: float
    clip_l2: bool
    y_clip: float | None = None

    def clip(self, X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(x̄_i, ȳ_i) of every row (float arrays; the rows unchanged where nothing is clipped)."""
        xb = clip_rows_l2(X, self.r) if self.clip_l2 else np.asarray(X, dtype=float)
        yb = np.clip(y, -self.y_clip, self.y_clip) if self.y_clip is not None else np.asarray(y, dtype=float)
        return xb, yb


def user_releases(
    X: np.ndarray, y: np.ndarray, rng: np.random.Generator, channel: UserChannel
) -> tuple[np.ndarray, np.ndarray]:
    """The LDP randomizer (spec 003 §3.2–§3.5) applied to each row of a batch of users: (Ẑ_i, ẑ_i) for every i.

    Row i's release uses only (x_i, y_i) and its own noise: Ẑ_i = x̄_i x̄_iᵀ + E_{1,i}, E_{1,i} ~ Sym_p(s_xx²),
    sent as its upper triangle vech(Ẑ_i) (row-major, diagonal included; p(p+1)/2 iid noise entries — a symmetric
    matrix is its upper triangle), and ẑ_i = x̄_i ȳ_i + E_{2,i}, E_{2,i} ~ N(0, s_xy² I). Draw order: every E_1 of
    the batch, then every E_2. Returns arrays of shape (c, p(p+1)/2) and (c, p); :func:`sym_from_upper` unpacks.
    """
    c, p = X.shape
    xb, yb = channel.clip(X, y)
    rows, cols = np.triu_indices(p)
    Z_upper = np.take(xb, rows, axis=1) * np.take(xb, cols, axis=1) + channel.s_xx * rng.standard_normal((c, rows.size))
    z = xb * yb[:, None] + channel.s_xy * rng.standard_normal((c, p))
    return Z_upper, z


def user_release(
    x: np.ndarray, y: float, rng: np.random.Generator, channel: UserChannel
) -> tuple[np.ndarray, np.ndarray]:
    """The LDP randomizer of one user (spec 003 §3.2–§3.5): (Ẑ_i as a p×p matrix, ẑ_i); see :func:`user_releases`."""
    x = np.asarray(x, dtype=float)
    Z_upper, z = user_releases(x[None, :], np.array([float(y)]), rng, channel)
    return sym_from_upper(Z_upper[0], x.size), z[0]


def simulate_user_sums(
    X: np.ndarray, y: np.ndarray, rng: np.random.Generator, channel: UserChannel
) -> tuple[np.ndarray, np.ndarray]:
    """Σ_i Ẑ_i and Σ_i ẑ_i with every user randomised by :func:`user_releases` (chunks of users; O(n p²))."""
    n, p = X.shape
    Z_sum, z_sum = np.zeros(p * (p + 1) // 2), np.zeros(p)
    for users in user_chunks(n, p * (p + 3) // 2):
        Z_upper, z = user_releases(X[users], y[users], rng, channel)
        Z_sum += Z_upper.sum(axis=0)
        z_sum += z.sum(axis=0)
    return sym_from_upper(Z_sum, p), z_sum


_DERIVED: dict[tuple[int, str], tuple[weakref.ref, Any]] = {}
_DERIVED_MAX = 16


def derived(X: np.ndarray, what: str, compute: Callable[[np.ndarray], Any]) -> Any:
    """``compute(X)``, memoised while X itself is alive, when X is read-only (the runner's data, shared by every
    (mechanism, ε) cell of a data draw); writeable arrays are always recomputed.

    The entry holds a weak reference to X and is used only if it still points to X: keying by id() or the data
    address alone returned a freed draw's values for the next draw of the same shape (issue 16)."""
    if X.flags.writeable:
        return compute(X)
    key = (id(X), what)
    entry = _DERIVED.get(key)
    if entry is not None and entry[0]() is X:
        return entry[1]
    value = compute(X)
    if len(_DERIVED) >= _DERIVED_MAX:
        for stale in [k for k, (ref, _) in _DERIVED.items() if ref() is None] or list(_DERIVED):
            del _DERIVED[stale]
    _DERIVED[key] = (weakref.ref(X), value)
    return value


def row_norms(X: np.ndarray, order: int = 2) -> np.ndarray:
    """‖x_i‖₂ (order 2) or ‖x_i‖₁ (order 1) of every row; memoised for read-only arrays (:func:`derived`), so
    repeated fits on one data draw cost O(p²) instead of O(np)."""
    if order == 2:
        return derived(X, "row_norms_2", lambda A: np.sqrt(np.einsum("ij,ij->i", A, A)))
    return derived(X, "row_norms_1", lambda A: np.abs(A).sum(axis=1))


def clean_sums(
    X: np.ndarray, y: np.ndarray, *, r: float, clip_l2: bool, y_clip: float | None, stats: GramStats | None = None
) -> tuple[np.ndarray, np.ndarray, int]:
    """Noise-free parts of the summed releases: X̄ᵀX̄ and X̄ᵀȳ (and the number of clipped rows).

    Uses the runner's XᵀX / Xᵀy when given and corrects only the rows that clipping changes (exact).
    """
    changed = np.nonzero(row_norms(X) > r)[0] if clip_l2 else np.zeros(0, dtype=int)
    yb = np.clip(y, -y_clip, y_clip) if y_clip is not None else y
    y_changed = np.nonzero(yb != y)[0] if y_clip is not None else np.zeros(0, dtype=int)
    if stats is not None and stats.X is X and stats.y is y:  # the runner's own arrays, not other data
        xtx, xty = stats.xtx.copy(), stats.xty.copy()
    else:
        xtx, xty = X.T @ X, X.T @ y
    rows = np.union1d(changed, y_changed)
    if rows.size:
        Xr = X[rows]
        Xc = clip_rows_l2(Xr, r) if clip_l2 else Xr
        xtx += Xc.T @ Xc - Xr.T @ Xr
        xty += Xc.T @ yb[rows] - Xr.T @ y[rows]
    return xtx, xty, int(changed.size)


def declare_sums(
    Z_sum: np.ndarray,
    z_sum: np.ndarray,
    xtx: np.ndarray | None,
    xty: np.ndarray | None,
    X: np.ndarray,
    y: np.ndarray,
    channel: UserChannel,
    *,
    y_bound: float,
    aggregation: str,
    prefix: str = "",
) -> tuple[np.ndarray, np.ndarray]:
    """Declare the releases behind Σ Ẑ_i, Σ ẑ_i (:func:`dpbench.mechanisms.released`; identity outside audits).

    ``local``: each user's report x̄x̄ᵀ + E₁ (sensitivity 2r², spec 003 §2.2) and x̄y + E₂ (2r·B_y), summed;
    ``central`` (diagnostic): one release of each sum, centred on the clean sums ``xtx``, ``xty`` (only needed
    then), with the same sensitivities (replace-one)."""
    users, r, s_xx, s_xy = aggregation == "local", channel.r, channel.s_xx, channel.s_xy

    def xx_rows() -> np.ndarray:
        xb, _ = channel.clip(X, y)
        return xb[:, :, None] * xb[:, None, :]

    def xy_rows() -> np.ndarray:
        xb, yb = channel.clip(X, y)
        return xb * yb[:, None]

    Z_sum = released(f"{prefix}Σ Ẑ_i (x̄x̄ᵀ per user)", Z_sum, xx_rows if users else xtx, scale=s_xx, symmetric=True,
                     users=users, aggregate="sum", sensitivity=2.0 * r * r)  # fmt: skip
    z_sum = released(f"{prefix}Σ ẑ_i (x̄y per user)", z_sum, xy_rows if users else xty, scale=s_xy, users=users,
                     aggregate="sum", sensitivity=2.0 * r * y_bound)  # fmt: skip
    return Z_sum, z_sum


def noise_sums(
    p: int, n: int, s_xx: float, s_xy: float, rng: np.random.Generator, aggregation: str = "local"
) -> tuple[np.ndarray, np.ndarray]:
    """Σ_{i≤n} E_{1,i} ~ Sym_p(n s_xx²), Σ_i E_{2,i} ~ N(0, n s_xy² I) (§2.4).

    ``central``: ONE draw of each (diagnostic §3.8, central DP only)."""
    if aggregation not in AGGREGATIONS:
        raise ValueError(f"noise_aggregation must be one of {AGGREGATIONS}, got {aggregation!r}")
    scale = np.sqrt(n) if aggregation == "local" else 1.0
    E1 = scale * s_xx * symmetric_gaussian(p, rng)
    E2 = scale * s_xy * rng.standard_normal(p)
    return E1, E2


# ----------------------------------------------------------------------------------------------------------------
# server


def private_ols(
    Z_sum: np.ndarray, z_sum: np.ndarray, n: int, public_X: np.ndarray | None, cov_estimator: str = "mixed"
) -> tuple[np.ndarray, np.ndarray]:
    """ŵ_ols = A⁻¹b; mixed: A = (Σ Ẑ_i + Σ_j x_j x_jᵀ)/(n+m), b = Σ ẑ_i/n; private: A = Σ Ẑ_i/n (§3.2, A15, A25)."""
    if cov_estimator == "mixed":
        m = 0 if public_X is None else public_X.shape[0]
        pub = public_X.T @ public_X if m else 0.0
        A = (Z_sum + pub) / (n + m)
    elif cov_estimator == "private":
        A = Z_sum / n
    else:
        raise ValueError(f"cov_estimator must be one of {COV_ESTIMATORS}, got {cov_estimator!r}")
    return solve_or_lstsq(A, z_sum / n), A


@dataclass(frozen=True)
class ScaleSolution:
    c: float
    status: str  # newton | bracket | no_root
    iters: int


def scale_equation(c: float, u: np.ndarray, family: Family) -> float:
    """g(c) = (c/m) Σ_j h(c u_j) − 1 (spec 003 §3.1)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return float(c * np.mean(family.h(c * u)) - 1.0)


def solve_scale(
    u: np.ndarray,
    family: Family,
    c0: float | None = None,
    *,
    tol: float = 1e-12,
    max_iter: int = 100,
    fallback: bool = True,
) -> ScaleSolution:
    """Root of (c/m) Σ_j h(c u_j) = 1: Newton from c0 (= 1/h(0), or 1), bracket + Brent fallback (§3.1, A4, A26).

    Newton: g'(c) = (1/m) Σ_j [h(c u_j) + c u_j h'(c u_j)]. Fallback when a step is non-finite, g' = 0, the
    iteration budget runs out or the root's sign differs from sign(c0): scan |c| ∈ [1e−3, 1e6]·|c0| on 200
    geometric points in the direction sign(c0), Brent on the first sign change; none → (c0, "no_root").
    """
    u = np.asarray(u, dtype=float)
    if u.ndim != 1 or u.size == 0:
        raise ValueError(f"u must be a non-empty 1-D array, got shape {u.shape}")
    c0 = family.c0() if c0 is None else float(c0)
    if c0 == 0 or not np.isfinite(c0):
        raise ValueError(f"c0 must be finite and non-zero, got {c0}")
    c, iters, ok = c0, 0, False
    with np.errstate(over="ignore", invalid="ignore"):
        while iters < max_iter:
            iters += 1
            cu = c * u
            hc = family.h(cu)
            g = c * np.mean(hc) - 1.0
            if not np.isfinite(g):
                break
            if abs(g) <= tol:
                ok = True
                break
            gp = np.mean(hc + cu * family.h_prime(cu))
            if not np.isfinite(gp) or gp == 0.0:
                break
            c_new = c - g / gp
            if not np.isfinite(c_new):
                break
            if abs(c_new - c) <= tol * max(1.0, abs(c)):
                c, ok = c_new, True
                break
            c = c_new
    if ok and np.sign(c) == np.sign(c0):
        return ScaleSolution(float(c), "newton", iters)
    if not fallback:
        return ScaleSolution(float(c0), "no_root", iters)
    grid = np.sign(c0) * abs(c0) * np.geomspace(1e-3, 1e6, 200)
    k = first_sign_change(grid, lambda cg: scale_equation(cg, u, family))
    if k is None:
        return ScaleSolution(float(c0), "no_root", iters)
    lo, hi = sorted((grid[k], grid[k + 1]))
    root = brentq(scale_equation, lo, hi, args=(u, family), xtol=1e-12)
    return ScaleSolution(float(root), "bracket", iters)


def first_sign_change(grid: np.ndarray, g: Callable[[float], float]) -> int | None:
    """The first k with g(grid[k]), g(grid[k+1]) finite and of different signs (None: no such k).

    Evaluates g left to right and stops there (each evaluation is O(m)), so a root near the start of the bracket
    scan of :func:`solve_scale` costs a few evaluations instead of all 200; the k found is the same."""
    previous = g(float(grid[0]))
    for k in range(len(grid) - 1):
        value = g(float(grid[k + 1]))
        if np.isfinite(previous) and np.isfinite(value) and np.sign(previous) != np.sign(value):
            return k
        previous = value
    return None
