"""Tree aggregation for DP-FTRL (spec 002 §2.2–2.3, §3.2): noise calibration, accounting and the noisy prefix sums.

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
left-child-or-root block that completes at s (level v2(s)) is ever read, hence one draw per step (:class:`TreeNoise`)
gives exactly the law of the all-nodes protocol (:class:`ReferenceTreeAggregator`).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

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


# ----------------------------------------------------------------------------------------------------------------
# tree protocols


class TreeNoise:
    """The efficient exact tree (spec 002 §3.2): one N(0, σ_t²Σ) draw per step, O(d) state update.

    ``sampler()`` returns one draw of N(0, Σ) (a d-vector). ``step(g, sigma)`` adds g_t and returns the noisy
    prefix sum g̃_{≤t} = Σ_{i≤t} g_i + ν(t+1).
    """

    def __init__(self, n_steps: int, d: int, sampler: Callable[[], np.ndarray]):
        self.n_steps = check_count(n_steps, "n_steps")
        self.d = int(d)
        self.levels = (self.n_steps - 1).bit_length() + 1
        self.latest = np.zeros((self.levels, self.d))
        self.nu = np.zeros(self.d)
        self.total = np.zeros(self.d)
        self.sampler = sampler
        self.t = 0
        self.draws = 0

    @property
    def prefix_noise(self) -> np.ndarray:
        """ν(s) of the last release (s = number of steps taken)."""
        return self.nu.copy()

    def step(self, g: np.ndarray, sigma: float) -> np.ndarray:
        if self.t >= self.n_steps:
            raise ValueError(f"TreeNoise: all {self.n_steps} steps already taken")
        s = self.t + 1
        j = v2(s)
        z = sigma * np.asarray(self.sampler(), dtype=float)
        self.draws += 1
        # bits 0..j−1 of s−1 were set and are now cleared; bit j becomes set
        if j:
            self.nu -= self.latest[:j].sum(axis=0)
        self.nu += z
        self.latest[j] = z
        self.total += g
        self.t = s
        return self.total + self.nu


class ReferenceTreeAggregator:
    """Algorithm 3 with explicit nodes: every node gets one noise draw when it completes (right children too).

    Faithful but wasteful (≈ 2N draws); used only to check :class:`TreeNoise` in distribution.
    """

    def __init__(self, n_steps: int, d: int, sampler: Callable[[], np.ndarray]):
        self.n_steps = check_count(n_steps, "n_steps")
        self.d = int(d)
        self.height = (self.n_steps - 1).bit_length()
        self.sums: dict[tuple[int, int], np.ndarray] = {}
        self.noisy: dict[tuple[int, int], np.ndarray] = {}
        self.noise: dict[tuple[int, int], np.ndarray] = {}
        self.sampler = sampler
        self.t = 0
        self.draws = 0

    def step(self, g: np.ndarray, sigma: float) -> np.ndarray:
        if self.t >= self.n_steps:
            raise ValueError(f"ReferenceTreeAggregator: all {self.n_steps} steps already taken")
        t = self.t
        for j in range(self.height + 1):
            node = (j, t >> j)
            self.sums[node] = self.sums.get(node, np.zeros(self.d)) + g
            if (t + 1) % (1 << j) == 0:  # the node's last leaf arrived: it is complete, noise it once
                z = sigma * np.asarray(self.sampler(), dtype=float)
                self.draws += 1
                self.noise[node] = z
                self.noisy[node] = self.sums[node] + z
        self.t = t + 1
        return sum((self.noisy[b] for b in dyadic_blocks(self.t)), np.zeros(self.d))

    @property
    def prefix_noise(self) -> np.ndarray:
        return sum((self.noise[b] for b in dyadic_blocks(self.t)), np.zeros(self.d))


# ----------------------------------------------------------------------------------------------------------------
# batched helpers for the blocked DP-FTRL engine (same draws, same law as TreeNoise)


def inblock_prefix_noise(z_block: np.ndarray) -> np.ndarray:
    """ν_in(u) for u = 0..B−1 of a block of B = 2^b steps starting at a multiple of B.

    ``z_block[u]`` is the draw made at step s = t0 + u (row 0 unused: it belongs to the previous block's boundary).
    For 0 < u < B, ν(t0 + u) = ν(t0) + ν_in(u) with ν_in(u) = ν_in(u − lowbit(u)) + z_block[u], ν_in(0) = 0.
    Computed level by level (u with more trailing zeros first), O(B·d).
    """
    size = z_block.shape[0]
    if size & (size - 1):
        raise ValueError(f"block size must be a power of 2, got {size}")
    out = np.zeros_like(z_block)
    bits = size.bit_length() - 1
    for j in range(bits - 1, -1, -1):
        u = np.arange(1 << j, size, 1 << (j + 1))  # v2(u) = j
        out[u] = out[u - (1 << j)] + z_block[u]
    return out


def release_counts(n: int) -> np.ndarray:
    """m_s (s = 1..N): how many of ν(1), …, ν(N−1) contain the draw made at step s (for w̄_N, spec 002 §3.1).

    The block completing at s (level j = v2(s)) is read by ν(s'), s' ∈ [s, s + 2^j − 1]; clipped to s' ≤ N − 1.
    Returned with index s − 1.
    """
    n = check_count(n, "N")
    s = np.arange(1, n + 1)
    low = s & -s
    return np.clip(np.minimum(s + low - 1, n - 1) - s + 1, 0, None).astype(float)
