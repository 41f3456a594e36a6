"""Information matrices of spec 000 §2 (U_λ for LDP, W_{γ,λ} for central DP) and the spectral iteration.

Population objects (exact, from atoms + probabilities or closed forms):

* ``F_ldp(U, atoms, probs, lam) = E[Uφφᵀ U/‖Uφ‖] + λU`` (Eq. 2/11; the φ = 0 term is 0)
* ``F_dp(W, atoms, probs, gamma, lam) = E[Wφφᵀ W/(1 + γ‖Wφ‖)] + λW`` (Eq. 6/18)
* :func:`solve_info_matrix` — the exact spectral iteration X_{k+1} = (X_k F_k^{-1} X_k)^{1/2} from X_0 = I (§2.3)
* closed forms: :func:`W_gamma0` (γ = 0), :func:`U_basis`, :func:`W_basis` (basis distributions),
  :func:`u_isotropic`, :func:`w_isotropic` (φ = r·u with u uniform on the sphere).

Private iteration (Algs 2 and 4, and spec 001's Algs 1/9 by configuration): :func:`spectral_iteration` takes the
epoch blocks, a weight function (:func:`dp_weight` = 1/(1+γ‖Xφ‖) or :func:`ldp_weight` = 1/‖Xφ‖), a noise function
(applied to each epoch mean H_(k)) and a λ schedule; it floors H̃ + λ_k I at λ_k/2 (§3.0, counted in ``n_floor``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import brentq

from dpbench.mechanisms.iwr.linalg import floor_psd, max_abs_log_eig, msqrt, row_norms, sym_update

WeightFn = Callable[[np.ndarray, np.ndarray], np.ndarray]


# ---------------------------------------------------------------------------------------------------------------
# weights (rows of Phi, current matrix X)


def ldp_weight(Phi: np.ndarray, X: np.ndarray) -> np.ndarray:
    """1/‖Xφ‖ per row (0 for φ = 0): the LDP weight of Eq. 2 / Alg 2."""
    norms = row_norms(Phi @ X)
    return np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)


def dp_weight(gamma: float) -> WeightFn:
    """w(φ) = 1/(1 + γ‖Xφ‖): the central-DP weight of Eq. 6 / Alg 4."""
    if gamma < 0:
        raise ValueError(f"gamma must be ≥ 0, got {gamma}")

    def weight(Phi: np.ndarray, X: np.ndarray) -> np.ndarray:
        return 1.0 / (1.0 + gamma * row_norms(Phi @ X))

    return weight


def weighted_moment(Phi: np.ndarray, X: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Σ_i w_i Xφ_iφ_iᵀX (X symmetric): the data term of F, unnormalised."""
    P = Phi @ X
    return (P * weights[:, None]).T @ P


# ---------------------------------------------------------------------------------------------------------------
# population operators


def _atoms(atoms: np.ndarray, probs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    atoms = np.atleast_2d(np.asarray(atoms, dtype=float))
    probs = np.asarray(probs, dtype=float)
    if probs.shape != (atoms.shape[0],) or np.any(probs < 0) or probs.sum() > 1 + 1e-12:
        raise ValueError("probs must be non-negative, one per atom, summing to ≤ 1 (the rest is mass at φ = 0)")
    return atoms, probs


def F_ldp(U: np.ndarray, atoms: np.ndarray, probs: np.ndarray, lam: float) -> np.ndarray:
    """F^LDP_λ(U) = E_p[Uφφᵀ U/‖Uφ‖] + λU for a discrete p (spec 000 §2.1)."""
    atoms, probs = _atoms(atoms, probs)
    return weighted_moment(atoms, U, probs * ldp_weight(atoms, U)) + lam * U


def F_dp(W: np.ndarray, atoms: np.ndarray, probs: np.ndarray, gamma: float, lam: float) -> np.ndarray:
    """F^DP_{γ,λ}(W) = E_p[Wφφᵀ W/(1 + γ‖Wφ‖)] + λW for a discrete p (spec 000 §2.2)."""
    atoms, probs = _atoms(atoms, probs)
    return weighted_moment(atoms, W, probs * dp_weight(gamma)(atoms, W)) + lam * W


@dataclass
class InfoMatrixSolution:
    """Fixed point X of F(X) = I with the convergence history max|log eig F_k| (k = 0, 1, ...)."""

    X: np.ndarray
    history: list[float] = field(default_factory=list)
    F_history: list[np.ndarray] = field(default_factory=list)

    @property
    def iterations(self) -> int:
        return len(self.history) - 1


def solve_info_matrix(
    kind: str,
    atoms: np.ndarray,
    probs: np.ndarray,
    lam: float,
    gamma: float = 0.0,
    *,
    tol: float = 1e-12,
    max_iter: int = 200,
    keep_F: bool = False,
) -> InfoMatrixSolution:
    """Exact (population) spectral iteration of spec 000 §2.3 from X_0 = I until max|log eig F_k| ≤ tol.

    ``kind`` = ``"ldp"`` (U_λ) or ``"dp"`` (W_{γ,λ}). p is given by atoms (rows) and their probabilities (any
    missing mass sits at φ = 0); a Monte-Carlo sample is the special case probs = 1/m.
    """
    if kind not in ("ldp", "dp"):
        raise ValueError(f"kind must be 'ldp' or 'dp', got {kind!r}")
    if lam <= 0:
        raise ValueError(f"lam must be > 0, got {lam}")
    atoms, probs = _atoms(atoms, probs)
    X = np.eye(atoms.shape[1])
    history: list[float] = []
    Fs: list[np.ndarray] = []
    for _ in range(max_iter + 1):
        F = F_ldp(X, atoms, probs, lam) if kind == "ldp" else F_dp(X, atoms, probs, gamma, lam)
        history.append(max_abs_log_eig(F))
        if keep_F:
            Fs.append(F)
        if history[-1] <= tol:
            break
        X = sym_update(X, F)
    return InfoMatrixSolution(X, history, Fs)


# ---------------------------------------------------------------------------------------------------------------
# closed forms (spec 000 §2.1, §2.2, §7.1)


def W_gamma0(Sigma: np.ndarray, lam: float) -> np.ndarray:
    """W_{0,λ} = 2(λI + (λ²I + 4Σ)^{1/2})^{-1} (spec 000 §2.2, [DERIVED]; solves WΣW + λW = I)."""
    d = Sigma.shape[0]
    return 2.0 * np.linalg.inv(lam * np.eye(d) + msqrt(lam**2 * np.eye(d) + 4.0 * Sigma))


def U_basis(p: np.ndarray, B: float, lam: float) -> np.ndarray:
    """U_λ = diag(1/(p_j B + λ)) for p(B e_j) = p_j, p(0) = 1 − Σp_j (spec 000 §2.1)."""
    return np.diag(1.0 / (np.asarray(p, dtype=float) * B + lam))


def _scalar_root(equation: Callable[[float], float], upper: float) -> float:
    """Root in (0, upper] of an increasing equation with equation(0) < 0 ≤ equation(upper)."""
    return float(brentq(equation, 0.0, upper, xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=500))


def W_basis(p: np.ndarray, B: float, gamma: float, lam: float) -> np.ndarray:
    """W diagonal, w_j the root in (0, 1/λ] of p_j B² w²/(1 + γBw) + λw = 1 (spec 000 §2.2)."""
    diag = [
        _scalar_root(lambda w, pj=pj: pj * B**2 * w**2 / (1.0 + gamma * B * w) + lam * w - 1.0, 1.0 / lam)
        for pj in np.asarray(p, dtype=float)
    ]
    return np.diag(diag)


def u_isotropic(mean_r: float, d: int, lam: float) -> float:
    """U_λ = u·I with u = 1/(E[r]/d + λ) for φ = r·u, u uniform on S^{d−1} (spec 000 §2.1)."""
    return 1.0 / (mean_r / d + lam)


def w_isotropic(r_atoms: Sequence[float], r_probs: Sequence[float], d: int, gamma: float, lam: float) -> float:
    """W_{γ,λ} = w·I with (w²/d)·E[r²/(1 + γwr)] + λw = 1 for φ = r·u (spec 000 §2.2)."""
    r = np.asarray(r_atoms, dtype=float)
    q = np.asarray(r_probs, dtype=float)

    def equation(w: float) -> float:
        return w**2 / d * float(np.sum(q * r**2 / (1.0 + gamma * w * r))) + lam * w - 1.0

    return _scalar_root(equation, 1.0 / lam)


# ---------------------------------------------------------------------------------------------------------------
# private spectral iteration (Alg 2 / Alg 4)


def epoch_statistic(Phi: np.ndarray, X: np.ndarray, weight_fn: WeightFn, root: np.ndarray | None = None) -> np.ndarray:
    """H = (1/N)Σ_t w(φ_t) X^{1/2}φ_tφ_tᵀX^{1/2} over the rows of one epoch (Eq. 21 / Alg 2 line 4)."""
    root = msqrt(X) if root is None else root
    P = Phi @ root
    return (P * weight_fn(Phi, X)[:, None]).T @ P / Phi.shape[0]


def _user_terms(Phi: np.ndarray, X: np.ndarray, weight_fn: WeightFn, root: np.ndarray):
    """A zero-argument function giving the per-user terms w(φ_t) X^{1/2}φ_tφ_tᵀX^{1/2} (N, d, d) of one epoch."""

    def rows() -> np.ndarray:
        P = Phi @ root
        return weight_fn(Phi, X)[:, None, None] * P[:, :, None] * P[:, None, :]

    return rows


@dataclass
class SpectralResult:
    """Output of :func:`spectral_iteration`: the final matrix, floors fired and the per-epoch F_(k)."""

    X: np.ndarray
    n_floor: int
    epochs: int
    F_history: list[np.ndarray] = field(default_factory=list)


def spectral_iteration(
    blocks: Sequence[np.ndarray],
    weight_fn: WeightFn,
    noise_fn: Callable[[int, np.ndarray], np.ndarray],
    lam_schedule: Sequence[float],
    *,
    floor: bool = True,
    user_rows: bool = False,
) -> SpectralResult:
    """Private spectral iteration (spec 000 Alg 2 / Alg 4; §3.2, §3.4), one disjoint epoch per step.

    For k = 0..K−1 with X_(0) = I:  H_(k) = (1/N)Σ_{t∈block k} w(φ_t) X^{1/2}φ_tφ_tᵀX^{1/2};  H̃ = noise_fn(k, H);
    F_(k) = X^{1/2}(H̃ + λ_(k) I)X^{1/2} after flooring the eigenvalues of H̃ + λ_(k) I at λ_(k)/2 (post-processing);
    X_(k+1) = (X F^{-1} X)^{1/2}. Each record is used in exactly one epoch (its own block).
    ``user_rows``: noise_fn is called as noise_fn(k, H, rows) with rows() the per-user terms whose mean is H (local
    randomisers declare them as their users' reports).
    """
    if len(blocks) != len(lam_schedule) or not blocks:
        raise ValueError("need one λ per epoch block (K ≥ 1)")
    d = blocks[0].shape[1]
    X = np.eye(d)
    n_floor = 0
    Fs = []
    for k, (Phi, lam_k) in enumerate(zip(blocks, lam_schedule, strict=True)):
        root = msqrt(X)
        H = epoch_statistic(Phi, X, weight_fn, root)
        if user_rows:
            S = noise_fn(k, H, _user_terms(Phi, X, weight_fn, root)) + lam_k * np.eye(d)
        else:
            S = noise_fn(k, H) + lam_k * np.eye(d)
        if floor:
            S, fired = floor_psd(S, lam_k / 2.0)
            n_floor += int(fired)
        F = root @ S @ root
        Fs.append(F)
        X = sym_update(X, F)
    return SpectralResult(X, n_floor, len(blocks), Fs)


def population_info_matrix(kind: str, extra: dict, d: int, lam: float, gamma: float = 0.0) -> np.ndarray:
    """U_λ (``kind="ldp"``) or W_{γ,λ} (``kind="dp"``) of a generator's p from ``Population.extra``.

    Uses the closed forms: ``radial`` = (r_atoms, r_probs) for φ = r·u with u uniform on the sphere (isotropic
    ⇒ X = x·I), ``basis_probs`` for basis distributions (diagonal X), else ``atoms``/``probs`` through the exact
    iteration :func:`solve_info_matrix`.
    """
    B = float(extra.get("B", 1.0))
    if "radial" in extra:
        r, q = (np.asarray(a, dtype=float) for a in extra["radial"])
        if kind == "ldp":
            return u_isotropic(float(q @ r), d, lam) * np.eye(d)
        return w_isotropic(r, q, d, gamma, lam) * np.eye(d)
    if "basis_probs" in extra:
        p = np.asarray(extra["basis_probs"], dtype=float)
        return U_basis(p, B, lam) if kind == "ldp" else W_basis(p, B, gamma, lam)
    if "atoms" in extra:
        return solve_info_matrix(kind, extra["atoms"], extra["probs"], lam, gamma).X
    raise ValueError(
        "the dataset's population carries no description of p (radial / basis_probs / atoms); "
        "oracle mechanisms need a generator that declares it"
    )
