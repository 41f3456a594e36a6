"""The noisy prefix sums of tree aggregation for DP-FTRL (spec 002 §3.2): the protocols that draw the node noise.

The calibration (τ, k̄, ε) and the tree's bit arithmetic are pure and live in :mod:`dpbench.privacy.tree`.
Block (j, q) covers 0-based leaves [q2^j, (q+1)2^j − 1] and completes at step s = (q+1)2^j; the release after step s
sums the blocks of the set bits of s, so only the block completing at s (level v2(s)) is ever read: one draw per step
(:class:`TreeNoise`) has exactly the law of the all-nodes protocol (:class:`ReferenceTreeAggregator`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

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


def inblock_prefix_noise(z_block: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """ν_in(u) for u = 0..B−1 of a block of B = 2^b steps starting at a multiple of B.

    ``z_block[u]`` is the draw made at step s = t0 + u (row 0 unused: it belongs to the previous block's boundary).
    For 0 < u < B, ν(t0 + u) = ν(t0) + ν_in(u) with ν_in(u) = ν_in(u − lowbit(u)) + z_block[u], ν_in(0) = 0.
    Computed level by level (u with more trailing zeros first) on strided views — rows u = (2m+1)2^j read rows
    2m·2^j — so O(B·d) with one vectorised add per level. ``out`` (shape of ``z_block``) is overwritten if given.
    """
    size = z_block.shape[0]
    if size & (size - 1):
        raise ValueError(f"block size must be a power of 2, got {size}")
    if out is None:
        out = np.zeros_like(z_block)
    else:
        out[0] = 0.0
    bits = size.bit_length() - 1
    for j in range(bits - 1, -1, -1):
        step = 1 << j
        pairs = (size >> (j + 1), 2 * step) + z_block.shape[1:]
        levels, draws = out.reshape(pairs), z_block.reshape(pairs)
        np.add(levels[:, 0], draws[:, step], out=levels[:, step])
    return out


@dataclass(frozen=True)
class BlockedTreeNoise:
    """The standard-normal tree draws u of a stream of n steps, arranged for blocks of B steps (u-coordinates).

    ``starts[i]`` = ν_u(t0) at block i's first step t0 = iB; ``inblock[t]`` = ν_u(t) − ν_u(t0) (the in-block part,
    :func:`inblock_prefix_noise`); ``total`` = Σ_s m_s u_s (:func:`release_counts`, for w̄_N); ``end`` = ν_u(n).
    """

    starts: np.ndarray
    inblock: np.ndarray
    total: np.ndarray
    end: np.ndarray

    @property
    def nbytes(self) -> int:
        return self.starts.nbytes + self.buffer.nbytes

    @property
    def buffer(self) -> np.ndarray:
        """The (n + 1, k) array ``inblock`` is a view of (reusable by a later :func:`blocked_tree_noise`)."""
        return self.inblock.base if self.inblock.base is not None else self.inblock


def blocked_tree_noise(
    rng: np.random.Generator, n: int, k: int, block: int, buffer: np.ndarray | None = None
) -> BlockedTreeNoise:
    """Draw the N(0, I_k) node noise of an n-step tree, block by block: one (b, k) draw per block of b steps.

    Row u of a block's draw is the node completing at step t0 + u + 1; the node completing at the block's end
    (level ≥ log2 B) is read only by later blocks: ν_u(t0 + B) = ν_u(t0 + B − lowbit(t0 + B)) + u_{t0+B}.
    The rng is consumed exactly as one (n, k) standard-normal draw in row order. The draws of steps t0+1..t0+b are
    written straight into rows t0+1..t0+b of the output and turned into ν_in in place (:func:`inblock_prefix_noise`
    with ``out`` = its input: row u only reads rows of higher level, finished before it). ``buffer``: an (n + 1, k)
    array to overwrite instead of allocating one.
    """
    if block < 1 or block & (block - 1):
        raise ValueError(f"block must be a power of 2, got {block}")
    starts = np.empty(((n + block - 1) // block, k))
    inblock = np.empty((n + 1, k)) if buffer is None else buffer  # row n: the last draw, read before overwritten
    weights = release_counts(n)
    total = np.zeros(k)
    nu_start = np.zeros(k)
    nu_at = {0: nu_start}
    nu_end = nu_start
    for index, t0 in enumerate(range(0, n, block)):
        b = min(block, n - t0)
        draws = inblock[t0 + 1 : t0 + b + 1]
        rng.standard_normal(out=draws)  # u of steps s = t0+1 .. t0+b
        total += weights[t0 : t0 + b] @ draws
        starts[index] = nu_start
        s = t0 + b
        if b == block:
            nu_end = nu_at[s - (s & -s)] + draws[b - 1]
            nu_at[s] = nu_end
            nu_start = nu_end
            rows = inblock[t0 : t0 + block]
            inblock_prefix_noise(rows, out=rows)
        else:
            padded = np.zeros((block, k))
            padded[1 : b + 1] = draws
            nu_in = inblock_prefix_noise(padded)
            inblock[t0 : t0 + b] = nu_in[:b]
            nu_end = nu_start + nu_in[b]
    return BlockedTreeNoise(starts, inblock[:n], total, nu_end)


def release_counts(n: int) -> np.ndarray:
    """m_s (s = 1..N): how many of ν(1), …, ν(N−1) contain the draw made at step s (for w̄_N, spec 002 §3.1).

    The block completing at s (level j = v2(s)) is read by ν(s'), s' ∈ [s, s + 2^j − 1]; clipped to s' ≤ N − 1.
    Returned with index s − 1.
    """
    n = check_count(n, "N")
    s = np.arange(1, n + 1)
    low = s & -s
    return np.clip(np.minimum(s + low - 1, n - 1) - s + 1, 0, None).astype(float)
