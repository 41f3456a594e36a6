"""Contextual-bandit environments of spec 001 §7.1 and spec 000 §7.1 (G-Sphere, G-TwoScale, G-RareDir, G-PowerLaw,
G-FixedArms), with linear (Rademacher) or logistic (Bernoulli) rewards.

An environment *instance* (θ*, fixed arms) is drawn once per trial from the instance rng; contexts and reward
coins are drawn by a :class:`ContextStream` in fixed-size blocks keyed by the block index, so every algorithm of a
trial sees exactly the same contexts and the same reward coins (common random numbers), however it chunks rounds.

* features ``φ(x_t, a)`` are rows of ``Phi[t, a, :]`` with ‖φ‖ ≤ 1 (spec 001 §1.1);
* mean reward ``f*(x, a) = ν(<φ, θ*>)`` with ν = id (linear) or the sigmoid (logistic, spec 001 §1.1 / #19);
* linear: ``r ∈ {−1, +1}`` with P(r = 1) = (1 + <φ, θ*>)/2 (Rademacher model); logistic: ``r ~ Bernoulli(ν)``;
  the reward of round t is ``1{u_t < p}`` mapped to the reward set, with the stream's uniform coin ``u_t``.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpbench import registry
from dpbench.contract import Hyper
from dpbench.data._base import Dataset, Population

LINKS = ("linear", "logistic")
#: floats per context block (contexts of a block come from SeedSequence([*stream_key, block]))
BLOCK_FLOATS = 1 << 21


def block_rounds(n_arms: int, d: int) -> int:
    """Rounds per context block: a power of two with ≈ BLOCK_FLOATS floats, between 64 and 2^14 (depends on the
    environment's shape only, so every algorithm of a trial sees the same blocks)."""
    rounds = max(64, min(1 << 14, BLOCK_FLOATS // (n_arms * d)))
    return 1 << (rounds.bit_length() - 1)


def sigmoid(t: np.ndarray) -> np.ndarray:
    """1/(1 + e^{−t}), elementwise, in one output buffer: the same four operations in the same order as
    ``1.0 / (1.0 + np.exp(-t))`` (bit-identical) without its three temporaries (issue 40: 1.4–2.5× faster on the
    10⁵–10⁶-value blocks of the GLM bandit, where it was ≈ 27% of a T = 2²¹ run's CPU)."""
    t = np.asarray(t)
    if t.ndim == 0 or t.dtype != np.float64:  # a scalar or another dtype: the expression itself (its result type)
        return 1.0 / (1.0 + np.exp(-t))
    out = np.negative(t)
    np.exp(out, out=out)
    out += 1.0
    return np.divide(1.0, out, out=out)


def link_constants(link: str) -> tuple[float, float]:
    """(μ_ν, L_ν) of the link on [−1, 1] (spec 001 §1.1): linear (1, 1); logistic (e/(1+e)², 1/4)."""
    if link == "linear":
        return 1.0, 1.0
    if link == "logistic":
        return math.e / (1.0 + math.e) ** 2, 0.25
    raise ValueError(f"link must be one of {LINKS}, got {link!r}")


def unit_sphere(rng: np.random.Generator, shape: tuple[int, ...], d: int) -> np.ndarray:
    """Uniform draws on S^{d−1} (normalised Gaussians), shape ``(*shape, d)``."""
    g = rng.standard_normal((*shape, d))
    return g / np.linalg.norm(g, axis=-1, keepdims=True)


def rademacher_scaled(rng: np.random.Generator, shape: tuple[int, ...], root: np.ndarray) -> np.ndarray:
    """s ⊙ root with signs s_i = −1 iff u_i < 1/2, u_i = ``rng.random()``, bit for bit, without the uniforms.

    ``Generator.random`` turns one raw 64-bit word w of the bit generator into u = ⌊w/2^11⌋·2^{−53}, so
    u < 1/2 ⇔ w < 2^63: the sign is the word's top bit, and the stream advances by the same words (PCG64, the
    streams' bit generator; any other bit generator takes the literal path).

    With root > 0 the result is assembled bitwise in the words' own buffer: bits(±root_i) = bits(root_i) | sign,
    sign = (NOT w) AND 2^63 (exact: only the sign bit differs between root_i and −root_i).
    """
    if not isinstance(rng.bit_generator, np.random.PCG64) or not np.all(root > 0):
        return np.where(rng.random((*shape, root.size)) < 0.5, -1.0, 1.0) * root
    raw = rng.bit_generator.random_raw((*shape, root.size))
    return signed_root(raw, root)


def signed_root(words: np.ndarray, root: np.ndarray) -> np.ndarray:
    """+root where a word's top bit is set, else −root, for root > 0 (float64), in place in ``words`` (uint64)."""
    sign = np.uint64(1 << 63)
    np.bitwise_and(words, sign, out=words)
    np.bitwise_xor(words, sign, out=words)
    np.bitwise_or(words, np.ascontiguousarray(root, dtype=np.float64).view(np.uint64), out=words)
    return words.view(np.float64)


@dataclass(frozen=True)
class SignCodec:
    """Lossless storage of features φ = s ⊙ root (s ∈ {±1}^d, root > 0) as packed sign bits: d/8 bytes a row
    instead of 8d (the chosen features of an epoch of G-PowerLaw; decoding gives the same float64 bits)."""

    root: np.ndarray

    @property
    def d(self) -> int:
        return int(self.root.size)

    def empty(self, n: int) -> np.ndarray:
        return np.empty((n, (self.d + 7) // 8), dtype=np.uint8)

    def encode(self, rows: np.ndarray) -> np.ndarray:
        return np.packbits(rows > 0, axis=1)

    def decode(self, codes: np.ndarray, rows: int = 4096) -> np.ndarray:
        """float64 rows of the codes (unpacked ``rows`` at a time into the output's buffer: no N·d uint8 copy)."""
        words = np.empty((codes.shape[0], self.d), dtype=np.uint64)
        for r0 in range(0, codes.shape[0], rows):
            words[r0 : r0 + rows] = np.unpackbits(codes[r0 : r0 + rows], axis=1, count=self.d)
        np.left_shift(words, np.uint64(63), out=words)
        return signed_root(words, self.root)


@dataclass
class BanditEnv:
    """One environment instance.

    ``sampler(rng, n) -> Phi`` draws n i.i.d. contexts as an (n, |A|, d) feature array; ``theta`` is θ*.
    ``meta`` holds exact population facts used in captions/tests (e.g. the exact U_λ scale of G-TwoScale).
    """

    name: str
    d: int
    n_arms: int
    theta: np.ndarray
    sampler: Callable[[np.random.Generator, int], np.ndarray]
    link: str = "linear"
    meta: dict[str, Any] = field(default_factory=dict)
    codec: SignCodec | None = None  # lossless compact storage of chosen features (None: float64 rows)

    def __post_init__(self) -> None:
        if self.link not in LINKS:
            raise ValueError(f"link must be one of {LINKS}, got {self.link!r}")

    def contexts(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return self.sampler(rng, n)

    def mean(self, Phi: np.ndarray) -> np.ndarray:
        """f*(x, a) = ν(<φ(x, a), θ*>) for every row/arm (spec 001 §1.1)."""
        lin = Phi @ self.theta
        return lin if self.link == "linear" else sigmoid(lin)

    def reward(self, mean: np.ndarray, coins: np.ndarray) -> np.ndarray:
        """Rewards from the mean of the chosen arm and the round's uniform coin (spec 001 §7.1)."""
        if self.link == "linear":
            return np.where(coins < (1.0 + mean) / 2.0, 1.0, -1.0)
        return np.where(coins < mean, 1.0, 0.0)

    @property
    def d_A(self) -> int:
        """d_A ≤ min(d, |A|) (spec 001 §1.1); the bound is used (the exact value is context dependent)."""
        return min(self.d, self.n_arms)


class ContextStream:
    """Contexts and reward coins of one trial, drawn block-wise from ``SeedSequence([*key, block])``.

    Several runs of one trial may share a stream (:func:`dpbench.bandits.simulator.run_lockstep`; ``consumers`` says
    how many): a block is then drawn once, and so is any function of a block's contexts that the runs ask for
    (:meth:`derived`, e.g. the all-arms spanners of the elimination policies).
    """

    #: blocks kept in memory (runs in lockstep stay within a chunk or two of each other)
    CACHED_BLOCKS = 5

    def __init__(self, env: BanditEnv, key: tuple[int, ...], consumers: int = 1):
        self.env = env
        self.key = tuple(int(k) for k in key)
        self.block = block_rounds(env.n_arms, env.d)
        self.consumers = consumers
        self._cache: dict[int, dict[str, np.ndarray]] = {}
        self._view_block: int | None = None

    def _block(self, b: int) -> dict[str, np.ndarray]:
        if b not in self._cache:
            if len(self._cache) >= self.CACHED_BLOCKS:
                self._cache.pop(min(self._cache))
            rng = np.random.default_rng(np.random.SeedSequence([*self.key, b]))
            Phi = self.env.contexts(rng, self.block)
            coins = rng.random(self.block)
            self._cache[b] = {"Phi": Phi, "coins": coins}
        return self._cache[b]

    def _parts(
        self, start: int, stop: int, name: str, fn: Callable[[np.ndarray], np.ndarray] | None = None
    ) -> list[np.ndarray]:
        if not 0 <= start <= stop:
            raise ValueError(f"bad round range [{start}, {stop})")
        parts = []
        t = start
        while t < stop:
            b, off = divmod(t, self.block)
            take = min(stop - t, self.block - off)
            cached = self._block(b)
            if name not in cached:
                cached[name] = fn(cached["Phi"])
            parts.append(cached[name][off : off + take])
            t += take
        return parts

    def get(self, start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
        """(Phi[start:stop], coins[start:stop]) for rounds start..stop−1 (0-based)."""
        parts_phi, parts_coin = self._parts(start, stop, "Phi"), self._parts(start, stop, "coins")
        if not parts_phi:
            return np.zeros((0, self.env.n_arms, self.env.d)), np.zeros(0)
        if len(parts_phi) == 1:
            return parts_phi[0], parts_coin[0]
        return np.concatenate(parts_phi), np.concatenate(parts_coin)

    @property
    def view_block(self) -> int:
        """Rounds per block if the blocks' contexts are C-contiguous (a chunk inside a block is then a view with the
        layout of a copy, so chunks may be cut at block boundaries without changing a bit of any product), else 0
        (e.g. G-FixedArms' broadcast arms: keep the historical chunks)."""
        if self._view_block is None:
            self._view_block = self.block if self._block(0)["Phi"].flags.c_contiguous else 0
        return self._view_block

    def derived(self, name: str, fn: Callable[[np.ndarray], np.ndarray], start: int, stop: int) -> np.ndarray:
        """fn(Phi)[start:stop], fn applied once per block to the block's contexts (fn must act row by row)."""
        parts = self._parts(start, stop, f"derived:{name}", fn)
        return parts[0] if len(parts) == 1 else np.concatenate(parts)


# ----------------------------------------------------------------------------------------------------------------
# registry of environment factories: make(rng, *, options...) -> BanditEnv (rng draws the instance: θ*, fixed arms)


@dataclass(frozen=True)
class EnvInfo:
    name: str
    make: Callable[..., BanditEnv]
    summary: str
    spec: str = ""

    def options(self) -> dict[str, Any]:
        params = inspect.signature(self.make).parameters.values()
        return {p.name: p.default for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY}


ENVIRONMENTS: dict[str, EnvInfo] = {}


def register_env(name: str, *, summary: str, spec: str = "") -> Callable[[Callable[..., BanditEnv]], Callable]:
    def decorator(make: Callable[..., BanditEnv]) -> Callable[..., BanditEnv]:
        ENVIRONMENTS[name] = EnvInfo(name, make, summary, spec)
        return make

    return decorator


def get_env(name: str) -> EnvInfo:
    """A registered environment (discovery imports every project module: no list of environment files)."""
    registry.discover()
    if name not in ENVIRONMENTS:
        raise KeyError(f"unknown environment {name!r}; registered: {', '.join(sorted(ENVIRONMENTS))}")
    return ENVIRONMENTS[name]


def _check_sizes(d: int, n_arms: int, d_min: int = 1) -> None:
    if isinstance(d, bool) or not isinstance(d, int) or d < d_min:
        raise ValueError(f"d must be an integer ≥ {d_min}, got {d!r}")
    if isinstance(n_arms, bool) or not isinstance(n_arms, int) or n_arms < 2:
        raise ValueError(f"n_arms must be an integer ≥ 2, got {n_arms!r}")


@register_env("sphere", summary="G-Sphere: φ(x,a) = u_a ~ Unif(S^{d−1}) i.i.d. per round and arm", spec="001 §7.1")
def sphere(rng: np.random.Generator, *, d: int = 5, n_arms: int = 10, link: str = "linear") -> BanditEnv:
    _check_sizes(d, n_arms)
    theta = unit_sphere(rng, (), d)

    def sampler(r: np.random.Generator, n: int) -> np.ndarray:
        return unit_sphere(r, (n, n_arms), d)

    return BanditEnv("sphere", d, n_arms, theta, sampler, link, {"title": f"G-Sphere(d={d}, |A|={n_arms})"})


@register_env(
    "twoscale", summary="G-TwoScale: φ = c_t u_a, c_t = 1 w.p. ρ else s (heavy-tailed norms)", spec="001 §7.1"
)
def twoscale(
    rng: np.random.Generator,
    *,
    d: int = 5,
    n_arms: int = 10,
    rho: float = 1e-3,
    s: float = 1e-2,
    link: str = "linear",
) -> BanditEnv:
    _check_sizes(d, n_arms)
    if not (0 < rho <= 1 and 0 < s <= 1):
        raise ValueError(f"rho and s must lie in (0, 1], got rho={rho!r}, s={s!r}")
    theta = unit_sphere(rng, (), d)

    def sampler(r: np.random.Generator, n: int) -> np.ndarray:
        scale = np.where(r.random(n) < rho, 1.0, s)
        return scale[:, None, None] * unit_sphere(r, (n, n_arms), d)

    mean_norm = rho + (1 - rho) * s
    return BanditEnv(
        "twoscale",
        d,
        n_arms,
        theta,
        sampler,
        link,
        {"title": f"G-TwoScale(d={d}, |A|={n_arms}, ρ={rho:g}, s={s:g})", "mean_norm": mean_norm},
    )


@register_env("raredir", summary="G-RareDir: last coordinate excited only w.p. ρ (no explorability)", spec="001 §7.1")
def raredir(
    rng: np.random.Generator, *, d: int = 5, n_arms: int = 10, rho: float = 1e-2, link: str = "linear"
) -> BanditEnv:
    _check_sizes(d, n_arms, d_min=2)
    if not 0 < rho <= 1:
        raise ValueError(f"rho must lie in (0, 1], got {rho!r}")
    w = unit_sphere(rng, (), d - 1)
    theta = np.concatenate([0.6 * w, [0.8]])

    def sampler(r: np.random.Generator, n: int) -> np.ndarray:
        rare = r.random(n) < rho
        full = unit_sphere(r, (n, n_arms), d)
        flat = np.concatenate([unit_sphere(r, (n, n_arms), d - 1), np.zeros((n, n_arms, 1))], axis=-1)
        return np.where(rare[:, None, None], full, flat)

    return BanditEnv(
        "raredir", d, n_arms, theta, sampler, link, {"title": f"G-RareDir(d={d}, |A|={n_arms}, ρ={rho:g})"}
    )


@register_env("powerlaw", summary="G-PowerLaw: φ_i = z_i√λ_i, λ_i ∝ i^{-2} (dimension-free instance)", spec="001 §7.1")
def powerlaw(rng: np.random.Generator, *, d: int = 100, n_arms: int = 10, link: str = "linear") -> BanditEnv:
    _check_sizes(d, n_arms)
    lam = np.arange(1, d + 1, dtype=float) ** -2.0
    lam /= lam.sum()
    root = np.sqrt(lam)
    theta = rng.choice([-1.0, 1.0], size=d) * root

    def sampler(r: np.random.Generator, n: int) -> np.ndarray:
        return rademacher_scaled(r, (n, n_arms), root)

    return BanditEnv(
        "powerlaw",
        d,
        n_arms,
        theta,
        sampler,
        link,
        {"title": f"G-PowerLaw(d={d}, |A|={n_arms})", "spectrum": lam},
        codec=SignCodec(root),
    )


@register_env(
    "fixedarms", summary="G-FixedArms: fixed unit arms, θ* with best-vs-second gap ≥ Δ_min (Thm 6.3)", spec="000 §7.1"
)
def fixedarms(
    rng: np.random.Generator,
    *,
    d: int = 5,
    n_arms: int = 5,
    gap: float = 0.1,
    link: str = "linear",
    max_tries: int = 100_000,
) -> BanditEnv:
    """Context-free arms v_a ~ Unif(S^{d−1}) drawn once; θ* ~ Unif(S^{d−1}) by rejection until the gap between the
    best and second-best mean reward is ≥ Δ_min (spec 000 §7.1). Arms are redrawn every 1000 rejections."""
    _check_sizes(d, n_arms)
    if not 0 < gap < 2:
        raise ValueError(f"gap must lie in (0, 2), got {gap!r}")
    for attempt in range(max_tries):
        if attempt % 1000 == 0:
            arms = unit_sphere(rng, (n_arms,), d)
        theta = unit_sphere(rng, (), d)
        lin = arms @ theta
        means = lin if link == "linear" else sigmoid(lin)
        top2 = np.sort(means)[-2:]
        if top2[1] - top2[0] >= gap:
            break
    else:
        raise ValueError(f"fixedarms: no θ* with gap ≥ {gap} found in {max_tries} draws")
    gap_value = float(top2[1] - top2[0])

    def sampler(r: np.random.Generator, n: int) -> np.ndarray:
        return np.broadcast_to(arms, (n, n_arms, d))

    return BanditEnv(
        "fixedarms",
        d,
        n_arms,
        theta,
        sampler,
        link,
        {"title": f"G-FixedArms(d={d}, |A|={n_arms}, Δ_min={gap:g})", "gap": gap_value},
    )


# ---------------------------------------------------------------------------------------------------------------
# the G-PowerLaw environment as i.i.d. regression data (the regression half of spec 001 §7.3 F8)


@registry.register_dataset(
    "bandit_powerlaw",
    summary="G-PowerLaw(d) regression data: φ_i = z_i√λ_i, λ_i ∝ i^(−2) (001 §7.1)",
    kind="synthetic",
    spec="001 §7.1",
    shape=lambda n, d, **_: (n, d),
    options={
        "n": Hyper(int, default=16384, ge=1, doc="rows"),
        "d": Hyper(int, default=100, ge=1, doc="dimension"),
    },
)
def load_powerlaw(rng: np.random.Generator, **options: Any) -> Dataset:
    """n i.i.d. rows of the G-PowerLaw environment with one arm; Rademacher labels; exact Σ = diag(λ), θ*."""
    n, d = options["n"], options["d"]
    env = powerlaw(rng, d=d, n_arms=2)  # θ* and λ exactly as the bandit instance; contexts drawn for one arm below
    lam = np.asarray(env.meta["spectrum"])
    X = np.where(rng.random((n, d)) < 0.5, -1.0, 1.0) * np.sqrt(lam)
    y = env.reward(X @ env.theta, rng.random(n))
    population = Population(cov=np.diag(lam), theta=env.theta, noise_var=float(1.0 - lam @ lam), extra={"B": 1.0})
    return Dataset(
        "bandit_powerlaw",
        X,
        y,
        np.zeros((0, d)),
        np.zeros(0),
        population=population,
        meta={"title": f"G-PowerLaw(d={d})", "recipe": "synthetic (spec 001 §7.1)"},
    )
