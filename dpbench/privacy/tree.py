"""Tree aggregation for DP-FTRL (spec 002 §2.2–2.3, §3.2): noise calibration, accounting and the tree's arithmetic.

Pure functions (no data, no randomness): the protocols that draw the node noise live with the mechanism, in
:mod:`dpbench.mechanisms.gradient.tree_noise`.

Calibration (spec 002 §2.3). With k̄ = ⌈log2 N⌉ + 1 (every leaf lies in at most k̄ released nodes) and node noise
N(0, τ²ψ²Σ) on node sums whose Σ⁻¹-norm sensitivity is Δ_rel·ψ (Δ_rel = 2 replace-one, 1 zero-out):

* ``paper``: τ = √(4k̄(log(1/δ)+ε))/ε (Thm 4.1 verbatim, ignores Δ_rel; not certified under replace-one, §2.2);
* ``rdp``:   τ = √(k̄Δ_rel²/(2ρ(ε,δ))), ρ(ε,δ) = (√(log(1/δ)+ε) − √log(1/δ))² (the proof's route, corrected);
* ``agm``:   τ = √k̄·Δ_rel/μ*(ε,δ) with μ*(ε,δ) the Gaussian-DP μ that is exactly (ε,δ)-DP (tight, recommended).

After whitening by Σ^{−1/2} each node is an isotropic Gaussian mechanism with sensitivity/std ratio Δ_rel/τ; the
k̄ nodes on a leaf's path compose to μ = √k̄·Δ_rel/τ (GDP) or ρ = k̄Δ_rel²/(2τ²) (zCDP).

Tree (spec 002 §3.2). Block (j, q) covers 0-based leaves [q2^j, (q+1)2^j − 1] and completes at step s = (q+1)2^j
(1-based). The release after step s is the sum over the set bits j of s of block (j, ⌊s/2^j⌋ − 1); its noise is
ν(s) = Σ_{set bits j} z_{j,⌊s/2^j⌋−1}, so Cov ν(s) = popcount(s)·σ²Σ for constant σ. Only the single
left-child-or-root block that completes at s (level v2(s)) is ever read, hence one draw per step (``TreeNoise``)
gives exactly the law of the all-nodes protocol (both in :mod:`dpbench.mechanisms.gradient.tree_noise`).
"""

from __future__ import annotations

import math

from dpbench.privacy.agm import epsilon_agm, sigma_agm
from dpbench.privacy.validate import check_count, check_delta, check_epsilon, check_positive
from dpbench.privacy.zcdp import rho_from_epsilon

TREE_NEIGHBOURS = ("replace_one", "zero_out")
TREE_METHODS = ("paper", "rdp", "agm")


# ----------------------------------------------------------------------------------------------------------------
# bit helpers


def v2(s: int) -> int:
    """2-adic valuation of s ≥ 1 (number of trailing zero bits)."""
    s = int(s)
    if s < 1:
        raise ValueError(f"v2 needs s ≥ 1, got {s}")
    return (s & -s).bit_length() - 1


def popcount(s: int) -> int:
    """Number of 1-bits of s ≥ 0 (= number of nodes read by the release after step s)."""
    return bin(int(s)).count("1")


def dyadic_blocks(s: int) -> list[tuple[int, int]]:
    """Blocks (level j, index q) whose disjoint union is leaves 0..s−1, most significant bit first (§3.2)."""
    s = int(s)
    if s < 0:
        raise ValueError(f"dyadic_blocks needs s ≥ 0, got {s}")
    blocks = []
    start = 0
    for j in range(s.bit_length() - 1, -1, -1):
        if s >> j & 1:
            blocks.append((j, start >> j))
            start += 1 << j
    return blocks


def kbar(n: int) -> int:
    """k̄ = ⌈log2 N⌉ + 1: the most released nodes any one leaf belongs to (k̄ = 1 for N = 1; spec 002 §2.2)."""
    n = check_count(n, "N")
    return (n - 1).bit_length() + 1


# ----------------------------------------------------------------------------------------------------------------
# calibration


def delta_rel(neighbour: str) -> float:
    """Node sensitivity in units of ψ: 2 for replace-one, 1 for zero-out (spec 002 §2.2)."""
    if neighbour == "replace_one":
        return 2.0
    if neighbour == "zero_out":
        return 1.0
    raise ValueError(f"neighbour must be one of {TREE_NEIGHBOURS}, got {neighbour!r}")


def _check_method(method: str) -> None:
    if method not in TREE_METHODS:
        raise ValueError(f"calibration must be one of {TREE_METHODS}, got {method!r}")


def mu_gdp(epsilon: float, delta: float) -> float:
    """μ*(ε, δ): the GDP parameter that is exactly (ε, δ)-DP, = 1/σ_AGM(ε, δ, 1) (spec 002 §2.1)."""
    return 1.0 / sigma_agm(epsilon, delta, 1.0)


def certified(neighbour: str, method: str) -> bool:
    """False only for the paper's Thm 4.1 constant under replace-one neighbours (spec 002 §2.2, ambiguity #1)."""
    delta_rel(neighbour)
    _check_method(method)
    return not (method == "paper" and neighbour == "replace_one")


def tau_tree(epsilon: float, delta: float, n: int, neighbour: str = "replace_one", method: str = "agm") -> float:
    """Noise multiplier τ of the tree protocol: node noise std = τ·ψ (spec 002 §2.3)."""
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    k = kbar(n)
    rel = delta_rel(neighbour)
    _check_method(method)
    if method == "paper":
        return math.sqrt(4.0 * k * (math.log(1.0 / delta) + epsilon)) / epsilon
    if method == "rdp":
        return math.sqrt(k * rel**2 / (2.0 * rho_from_epsilon(epsilon, delta)))
    return math.sqrt(k) * rel / mu_gdp(epsilon, delta)


def epsilon_tree(tau: float, delta: float, n: int, neighbour: str = "replace_one", method: str = "agm") -> float:
    """ε certified (or, for ``paper``, claimed by Thm 4.1) for multiplier τ: the inverse of :func:`tau_tree`."""
    tau = check_positive(tau, "tau")
    delta = check_delta(delta)
    k = kbar(n)
    rel = delta_rel(neighbour)
    _check_method(method)
    log_inv = math.log(1.0 / delta)
    if method == "paper":  # τ²ε² − 4k̄ε − 4k̄ log(1/δ) = 0, positive root
        return (4.0 * k + math.sqrt(16.0 * k * k + 16.0 * k * log_inv * tau**2)) / (2.0 * tau**2)
    if method == "rdp":
        rho = k * rel**2 / (2.0 * tau**2)
        return rho + 2.0 * math.sqrt(rho * log_inv)
    return epsilon_agm(tau / (math.sqrt(k) * rel), delta, 1.0)
