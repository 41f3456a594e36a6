"""DP-FTRL-Σ rules: the step size η and effective dimension (spec 002 §3.5, §4.2) and RESIDUALEST, the residual
bound ψ from labelled estimating rows (spec 002 §3.3)."""

from __future__ import annotations

import math

import numpy as np

#: design spectra the η rule knows (spec 002 §3.5)
SPECTRA = ("poly", "exp", "unknown")


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
