"""The contextual-bandit simulator ``run_bandit(env, algo, T, epsilon, delta, rng, **hyper)``; algorithm registry.

An algorithm is a *batched policy* (spec 001 §3.9: epochs with a fixed policy inside):

* ``epochs(T)`` — boundaries ``0 = t_0 < t_1 < … < t_J = T`` (0-based rounds; doubling for the paper's algorithms);
* ``act(Phi, rng)`` — actions for a chunk of rounds of the current epoch, vectorised: ``Phi`` is (n, |A|, d);
* ``update(data, rng)`` — called once at the end of every epoch but the last with that epoch's data
  (:class:`EpochData`: chosen features φ(x_t, a_t) and rewards r_t).

Rounds inside an epoch are simulated in chunks (contexts → actions → expected-reward regret → rewards), so a run
costs O(T·|A|·d) numpy work plus one regression per epoch.

**Each datum used once.** Oracles read an epoch's data only through :meth:`EpochData.take`, which marks the rounds
in a per-run :class:`DataLedger` and raises :class:`DataReuseError` if a round is taken twice. A private algorithm's
whole run is then (ε, δ)-JDP/LDP without composition loss (spec 001 §1.4 Lemma C.1, spec 000 Lemma F.1); the final
ledger is returned so tests can check it.
"""

from __future__ import annotations

import functools
import inspect
import math
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import numpy as np

from dpbench import registry
from dpbench.bandits.envs import BanditEnv, ContextStream
from dpbench.contract import Hyper, HyperError

PRIVACY_MODELS = ("joint", "local", "none")
#: target number of floats in one simulated chunk of contexts (n·|A|·d), and the least rounds per chunk (large d:
#: fewer Python steps). Chunking never changes results: every rng draw of a chunk is a run of the same stream.
CHUNK_FLOATS = 1 << 17
MIN_CHUNK_ROUNDS = 64


class DataReuseError(AssertionError):
    """A round's datum was handed to a second release stage (violates the each-datum-once design)."""


class DataLedger:
    """Counts, per round, how many release stages consumed its datum (must stay ≤ 1)."""

    def __init__(self, T: int):
        self.counts = np.zeros(T, dtype=np.int8)

    def mark(self, start: int, stop: int) -> None:
        if start < 0 or stop > self.counts.size or start > stop:
            raise ValueError(f"ledger: bad range [{start}, {stop}) for T = {self.counts.size}")
        if self.counts[start:stop].any():
            raise DataReuseError(f"rounds in [{start}, {stop}) were already used by an earlier release stage")
        self.counts[start:stop] += 1

    @property
    def used(self) -> int:
        return int(self.counts.sum())


@dataclass
class EpochData:
    """One epoch's data: chosen features ``Phi`` (N, d) and rewards ``y`` (N,), rounds start..start+N−1.

    With a ``codec`` (e.g. :class:`dpbench.bandits.envs.SignCodec`) ``Phi`` holds the rows' lossless codes and
    :meth:`take` decodes the rows it hands out (the same float64 features, a fraction of the memory)."""

    Phi: np.ndarray
    y: np.ndarray
    start: int
    ledger: DataLedger
    codec: Any = None

    @property
    def n(self) -> int:
        return int(self.y.size)

    @property
    def d(self) -> int:
        return int(self.Phi.shape[1]) if self.codec is None else self.codec.d

    def take(self, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
        """Rows lo..hi−1 of the epoch for one release stage (marks them used; a second take raises)."""
        if not 0 <= lo <= hi <= self.n:
            raise ValueError(f"take: bad range [{lo}, {hi}) for an epoch of {self.n} rounds")
        self.ledger.mark(self.start + lo, self.start + hi)
        rows = self.Phi[lo:hi] if self.codec is None else self.codec.decode(self.Phi[lo:hi])
        return rows, self.y[lo:hi]


class Policy(Protocol):
    info: dict[str, Any]

    def epochs(self, T: int) -> list[int]: ...

    def act(self, Phi: np.ndarray, rng: np.random.Generator) -> np.ndarray: ...

    def update(self, data: EpochData, rng: np.random.Generator) -> None: ...


def doubling_epochs(T: int) -> list[int]:
    """Boundaries of the schedule T^(j) = 2^j (spec 001 §3.9 / #11, spec 000 #25): epoch j has N^(j) = 2^j rounds
    (rounds 2^j − 1 … 2^{j+1} − 2 in 0-based indexing); the last epoch is truncated at T."""
    bounds = [0]
    size = 1
    while bounds[-1] < T:
        bounds.append(min(T, bounds[-1] + size))
        size *= 2
    return bounds


# ----------------------------------------------------------------------------------------------------------------
# algorithm registry


@dataclass(frozen=True)
class AlgorithmInfo:
    """A registered bandit algorithm: ``make(env, T, epsilon, delta, rng, **hyper) -> Policy``.

    ``hyper``: the declared hyperparameters (:class:`~dpbench.contract.Hyper`, as for mechanisms); an algorithm
    registered without a table has them inferred from its keyword defaults."""

    name: str
    make: Callable[..., Policy]
    summary: str
    privacy_model: str  # joint | local | none
    spec: str = ""
    style: Mapping[str, Any] = field(default_factory=dict)
    hyper: Mapping[str, Hyper] = field(default_factory=dict)

    def specs(self) -> dict[str, Hyper]:
        """Every hyperparameter's declaration (the table, or lenient ones inferred from the keyword defaults)."""
        if self.hyper:
            return dict(self.hyper)
        params = inspect.signature(self.make).parameters.values()
        return {p.name: Hyper.infer(p.default) for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY}

    def hyperparameters(self) -> dict[str, Any]:
        return {name: spec.default for name, spec in self.specs().items()}

    def check_hyper(self, hyper: Mapping[str, Any]) -> dict[str, Any]:
        """The declared values with defaults filled; :class:`~dpbench.contract.HyperError` naming the one refused."""
        specs = self.specs()
        checked = {}
        for name, spec in specs.items():
            if name not in hyper:
                checked[name] = spec.default
                continue
            try:
                checked[name] = spec.check(hyper[name])
            except ValueError as err:
                raise HyperError(name, str(err)) from None
        unknown = sorted(set(hyper) - set(specs))
        if unknown:
            raise HyperError(unknown[0], f"not a hyperparameter of {self.name!r}")
        return checked


ALGORITHMS: dict[str, AlgorithmInfo] = {}


def register_algorithm(
    name: str,
    *,
    summary: str,
    privacy_model: str,
    spec: str = "",
    style: Mapping[str, Any] | None = None,
    hyper: Mapping[str, Hyper] | None = None,
) -> Callable[[Callable[..., Policy]], Callable[..., Policy]]:
    """Register ``make(env, T, epsilon, delta, rng, **hyper) -> Policy``. With a ``hyper`` table (one
    :class:`~dpbench.contract.Hyper` per hyperparameter, as for mechanisms) ``make`` receives every declared value,
    checked and with its default filled; configs are checked against the table before the first round."""
    if privacy_model not in PRIVACY_MODELS:
        raise ValueError(f"privacy_model must be one of {PRIVACY_MODELS}, got {privacy_model!r}")

    def decorator(make: Callable[..., Policy]) -> Callable[..., Policy]:
        known = ALGORITHMS.get(name)
        if known is not None and getattr(known.make, "__wrapped__", known.make) is not make:
            raise ValueError(f"bandit algorithm {name!r} is registered twice")
        info = AlgorithmInfo(name, make, summary, privacy_model, spec, dict(style or {}), dict(hyper or {}))
        if hyper:
            info.check_hyper({})  # every default passes its own declaration
            info = replace(info, make=_checking(make, info))
        ALGORITHMS[name] = info
        return info.make

    return decorator


def _checking(make: Callable[..., Policy], info: AlgorithmInfo) -> Callable[..., Policy]:
    """``make`` called with the hyperparameters checked against ``info``'s table and its defaults filled."""

    @functools.wraps(make)
    def checked(env: Any, T: int, epsilon: float, delta: float, rng: Any, **hyper: Any) -> Policy:
        return make(env, T, epsilon, delta, rng, **AlgorithmInfo.check_hyper(info, hyper))

    return checked


def get_algorithm(name: str) -> AlgorithmInfo:
    """A registered algorithm; discovery imports every project module, so a new algorithm file (anywhere under
    :data:`dpbench.registry.DISCOVERED_PACKAGES`, e.g. ``dpbench/bandits/``) registers itself — no list to edit."""
    registry.discover()
    if name not in ALGORITHMS:
        raise KeyError(
            f"unknown bandit algorithm {name!r}; registered: {', '.join(sorted(ALGORITHMS))}{registry.import_note()}"
        )
    return ALGORITHMS[name]


# ----------------------------------------------------------------------------------------------------------------
# the simulator


@dataclass
class BanditResult:
    """Per-round records of one run (0-based round t): instant pseudo-regret max_a f*(x_t,a) − f*(x_t,a_t),
    action a_t and reward r_t; the algorithm's diagnostics; the data ledger; wall seconds."""

    regret: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray
    info: dict[str, Any]
    ledger: DataLedger
    seconds: float

    @property
    def cumulative(self) -> np.ndarray:
        return np.cumsum(self.regret)

    def records(self) -> dict[str, np.ndarray]:
        """Per-round records (t = 1..T, a_t, r_t, instant regret) as columns."""
        return {
            "t": np.arange(1, self.regret.size + 1),
            "action": self.actions,
            "reward": self.rewards,
            "instant_regret": self.regret,
        }


def check_budget(epsilon: float, delta: float) -> tuple[float, float]:
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not epsilon > 0:
        raise ValueError(f"epsilon must be > 0 (math.inf = non-private), got {epsilon!r}")
    if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not 0 < delta < 1:
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}")
    return float(epsilon), float(delta)


def run_bandit(
    env: BanditEnv,
    algo: str | AlgorithmInfo,
    T: int,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    *,
    stream: ContextStream | None = None,
    **hyper: Any,
) -> BanditResult:
    """Simulate ``T`` rounds of ``algo`` on ``env`` at privacy (ε, δ) (ε = ``math.inf``: σ = 0, same code path).

    ``rng`` drives the algorithm (action sampling, privacy noise); contexts/rewards come from ``stream`` (default:
    a stream keyed by a draw from ``rng``). Returns per-round records (:class:`BanditResult`).
    """
    if stream is None:
        stream = ContextStream(env, (int(rng.integers(2**32)), 1))
    run = BanditRun(env, algo, T, epsilon, delta, rng, stream, hyper)
    for _ in run.steps():
        pass
    return run.result()


def run_lockstep(
    env: BanditEnv,
    cells: list[tuple[str | AlgorithmInfo, float, np.random.Generator, dict]],
    T: int,
    delta: float,
    stream: ContextStream,
) -> list[BanditResult]:
    """Runs of several (algorithm, ε, rng, hyper) cells on one trial's stream, advanced chunk by chunk in lockstep.

    Every run is exactly :func:`run_bandit` with its own rng (the same results bit for bit); the runs only share
    the stream's blocks of contexts and their derived data, each drawn once instead of once per run. The run
    furthest behind always moves next, so all runs stay within a chunk of each other. ``seconds`` of a run is the
    wall time of its own steps (shared blocks are charged to the run that draws them).
    """
    stream.consumers = len(cells)
    runs = [BanditRun(env, algo, T, eps, delta, rng, stream, hyper) for algo, eps, rng, hyper in cells]
    steps = [run.steps() for run in runs]
    position = [0] * len(runs)
    pending = set(range(len(runs)))
    while pending:
        k = min(pending, key=position.__getitem__)
        position[k] = next(steps[k], T + 1)
        if position[k] > T:
            pending.discard(k)
    return [run.result() for run in runs]


class BanditRun:
    """One run of ``algo`` on ``env`` (a policy, its records and data ledger), simulated by :meth:`steps`."""

    def __init__(
        self,
        env: BanditEnv,
        algo: str | AlgorithmInfo,
        T: int,
        epsilon: float,
        delta: float,
        rng: np.random.Generator,
        stream: ContextStream,
        hyper: Mapping[str, Any],
    ):
        if isinstance(T, bool) or not isinstance(T, (int, np.integer)) or T < 1:
            raise ValueError(f"T must be a positive integer, got {T!r}")
        self.T = T = int(T)
        epsilon, delta = check_budget(epsilon, delta)
        info = get_algorithm(algo) if isinstance(algo, str) else algo
        unknown = sorted(set(hyper) - set(info.hyperparameters()))
        if unknown:
            raise ValueError(
                f"unknown hyperparameter {unknown[0]!r} of bandit algorithm {info.name!r}; "
                f"allowed: {', '.join(sorted(info.hyperparameters()))}"
            )
        self.env, self.rng, self.stream = env, rng, stream
        started = time.perf_counter()
        self.policy = info.make(env, T, epsilon, delta, rng, **hyper)
        self.seconds = time.perf_counter() - started
        self.bounds = self.policy.epochs(T)
        bounds = self.bounds
        if bounds[0] != 0 or bounds[-1] != T or any(b <= a for a, b in zip(bounds, bounds[1:], strict=False)):
            raise ValueError(f"{info.name}: epochs must increase strictly from 0 to T, got {bounds[:5]}…")
        self.ledger = DataLedger(T)
        self.regret = np.empty(T)
        self.actions = np.empty(T, dtype=np.int32)
        self.rewards = np.empty(T)

    def steps(self) -> Iterator[int]:
        """Simulate chunk by chunk (contexts → actions → expected-reward regret → rewards; the oracle at the end of
        every epoch but the last), yielding after each chunk the first round not yet simulated."""
        env, policy, rng, T = self.env, self.policy, self.rng, self.T
        chunk = max(MIN_CHUNK_ROUNDS, CHUNK_FLOATS // (env.n_arms * env.d))
        shared = getattr(policy, "uses_shared_contexts", False)
        codec = env.codec
        for start, stop in zip(self.bounds, self.bounds[1:], strict=False):
            last = stop == T  # the last epoch's regression would never be used (spec 001 #11): no features kept
            if codec is None:
                chosen = np.empty((0 if last else stop - start, env.d))
            else:
                chosen = codec.empty(0 if last else stop - start)
            for c0, c1 in chunks(start, stop, chunk, self.stream.view_block):
                started = time.perf_counter()
                Phi, coins = self.stream.get(c0, c1)
                if shared:
                    a = policy.act(Phi, rng, shared=SharedChunk(self.stream, c0, c1))
                else:
                    a = policy.act(Phi, rng)
                a = np.asarray(a, dtype=np.int64)
                rows = np.arange(c1 - c0)
                means = self.stream.derived("mean", env.mean, c0, c1)
                picked = means[rows, a]
                self.regret[c0:c1] = means.max(axis=1) - picked
                self.actions[c0:c1] = a
                self.rewards[c0:c1] = env.reward(picked, coins)
                if not last:
                    features = Phi[rows, a]
                    chosen[c0 - start : c1 - start] = features if codec is None else codec.encode(features)
                if c1 == stop and not last:
                    data = EpochData(chosen, self.rewards[start:stop].copy(), start, self.ledger, codec)
                    policy.update(data, rng)
                self.seconds += time.perf_counter() - started
                yield c1

    def result(self) -> BanditResult:
        return BanditResult(self.regret, self.actions, self.rewards, dict(self.policy.info), self.ledger, self.seconds)


@dataclass(frozen=True)
class SharedChunk:
    """Rounds c0..c1−1 of a (possibly shared) :class:`ContextStream`, for policies that reuse per-block data."""

    stream: ContextStream
    c0: int
    c1: int

    @property
    def consumers(self) -> int:
        return self.stream.consumers

    def derived(self, name: str, fn: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        return self.stream.derived(name, fn, self.c0, self.c1)


def chunks(start: int, stop: int, size: int, block: int) -> Iterator[tuple[int, int]]:
    """Consecutive ranges [c0, c1) covering [start, stop), at most ``size`` rounds each, never straddling a multiple
    of ``block`` (a chunk is then a view of one block of contexts, not a copy; ``block = 0``: no such cut)."""
    c0 = start
    while c0 < stop:
        c1 = min(stop, c0 + size, (c0 // block + 1) * block if block else stop)
        yield c0, c1
        c0 = c1


def checkpoints(T: int, per_octave: int = 4, first: int = 16) -> np.ndarray:
    """Rounds at which cumulative regret is recorded: ⌊2^{k/per_octave}⌉ from ``first`` up to T, plus T."""
    if T <= first:
        return np.arange(1, T + 1)
    k_max = int(math.floor(per_octave * math.log2(T)))
    k_min = int(math.ceil(per_octave * math.log2(first)))
    grid = {int(round(2 ** (k / per_octave))) for k in range(k_min, k_max + 1)}
    grid = sorted(t for t in grid if first <= t <= T)
    if grid[-1] != T:
        grid.append(T)
    return np.asarray(grid, dtype=np.int64)
