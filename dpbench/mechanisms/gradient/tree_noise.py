"""The noisy prefix sums of tree aggregation for DP-FTRL (spec 002 §3.2): the protocols that draw the node noise.

The calibration (τ, k̄, ε) and the tree's bit arithmetic are pure and live in :mod:`dpbench.privacy.tree`.
Block (j, q) covers 0-based leaves [q2^j, (q+1)2^j − 1] and completes at step s = (q+1)2^j; the release after step s
sums the blocks of the set bits of s, so only the block completing at s (level v2(s)) is ever read: one draw per step
(:class:`TreeNoise`) has exactly the law of the all-nodes protocol (:class:`ReferenceTreeAggregator`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from dpbench.privacy.tree import dyadic_blocks, v2
from dpbench.privacy.validate import check_count


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
