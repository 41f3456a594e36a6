"""White-box audit of a mechanism's releases (issue 15): the Neyman–Pearson statistic on the privatised quantities
themselves, not on the post-processed estimate.

A mechanism declares each privatised quantity with :func:`dpbench.mechanisms.released` (value, noiseless centre,
noise kind and scale). One **paired run** (:func:`pair_run`) runs ``fit`` on one dataset of the pair under
:func:`~dpbench.mechanisms.record_releases`, then on the other dataset with the same random stream in *replay* mode:
every release is forced to the first run's value, so the mechanism follows the same history and the recorded centres
are those of the other dataset at that history. Per release this gives the observed value r and the centres m_D,
m_D′ at the same history, hence its exact log-likelihood ratio (the Neyman–Pearson statistic):

* Gaussian, per-entry std s:  L = ⟨r − (m_D + m_D′)/2, m_D − m_D′⟩/s²   (upper triangle for symmetric noise)
* Laplace, scale b:            L = Σ_j (|r_j − m_D′,j| − |r_j − m_D,j|)/b
* Wishart(k, Σ) sketch Gram W:  L = −(k/2) log det(Σ_D Σ_D′⁻¹) − ½ tr((Σ_D⁻¹ − Σ_D′⁻¹) W)
* ℓ2-ball sampler (ε):         L = log p(z | v_D) − log p(z | v_D′) with the channel's exact density

and the statistic of a run is the sum over all its releases (the joint test). Views: ``central`` tests the whole
tuple of releases; ``local`` tests one user's reports only (releases declared with ``users=True``: the rows that
differ between the two datasets are the canary user's), which is where local DP lives.

**Pilot and batch.** ``pilot`` paired runs per side are real runs of ``fit``; they (i) check that the noise each
release actually carries has the declared law (standardised residuals), (ii) give the real-run statistic, and
(iii) form a pool of *histories* (per release: the shift m_D − m_D′, the scale, the covariances). The main sample
of ``runs`` per side is then batched: a history is drawn uniformly from the pool — the same pool for both datasets —
and each release's likelihood ratio is drawn exactly from its law given that history (N(±μ²/2, μ²) for Gaussian
releases, Laplace/χ²/channel draws otherwise). When no release depends on the history (every mechanism whose shifts
and scales are constant across the pool, reported as ``history: fixed``) this is exactly the law of independent runs
of the mechanism; otherwise (``history: pooled``) it is the adaptive composition of the releases at the pooled
histories, which the mechanism's accounting also covers. A two-sample Kolmogorov–Smirnov test compares the real-run
statistic with the batched one (``model_p``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.linalg import eigh
from scipy.stats import ks_2samp

from dpbench.audit.objective_density import ObjectiveLaw, objective_law, objective_unit_noise
from dpbench.audit.stats import LossEpsilon, loss_epsilon
from dpbench.mechanisms._base import Release, as_fit_result, record_releases
from dpbench.mechanisms.iwr.noise import l2ball_sample
from dpbench.privacy.exact import GaussianRelease, LaplaceRelease, PureRelease, exact_epsilon
from dpbench.privacy.gdp import mixture_epsilon
from dpbench.registry import MechanismInfo

VIEWS = ("central", "local")
#: release kinds whose privacy loss has no closed-form ε: exact ε and control factors by Monte Carlo
NO_CLOSED_FORM = ("wishart", "posterior", "objective")


# ----------------------------------------------------------------------------------------------------------------
# the datasets of a pair


@dataclass
class Pair:
    """Neighbouring datasets D (with the canary record) and D′, and the extra inputs each needs."""

    X: np.ndarray
    y: np.ndarray
    X_prime: np.ndarray
    y_prime: np.ndarray
    inputs: dict[str, Any]
    inputs_prime: dict[str, Any]
    description: str
    #: the records (angle, radius, label) that built the pair: the canary in D and its replacement in D′ (None:
    #: the zero row), so that other pairs (other backgrounds, canary positions) can reuse them
    canary: tuple[float, float, float] | None = None
    other: tuple[float, float, float] | None = None
    #: D′ is not a neighbour but an unrelated dataset of the same shape (the closure check: θ̂ and the declared
    #: calibration may depend on the data only through the releases, whatever the other dataset)
    unrelated: bool = False

    def side(self, name: str) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
        return (self.X, self.y, self.inputs) if name == "D" else (self.X_prime, self.y_prime, self.inputs_prime)


# ----------------------------------------------------------------------------------------------------------------
# paired runs


@dataclass
class ReleasePair:
    """One release of one run, seen from both datasets at the same history."""

    release: Release  # as recorded on the observed side (value = observed)
    centre_d: np.ndarray  # centre on D at this history
    centre_dp: np.ndarray  # centre on D′ at this history
    side: str  # the side that generated ``value`` ("D" or "D'")
    #: what the mechanism declared for this release on the other dataset at the same history (replay run)
    other: Release | None = None
    #: :func:`noise_residuals`, computed once (several integrity checks read them)
    residuals: tuple[str, np.ndarray] | None = field(default=None, repr=False, compare=False)


@dataclass
class PairedRun:
    """One real paired run: the releases seen from both datasets, and both estimates.

    ``theta`` is θ̂ of the recorded run on ``side``; ``theta_replayed`` θ̂ of the run on the other dataset with the
    same random stream and every release held at the recorded value — equal to ``theta`` (bit for bit) exactly
    when θ̂ depends on the data only through the releases (:mod:`dpbench.audit.integrity`)."""

    releases: list[ReleasePair]
    theta: np.ndarray
    theta_replayed: np.ndarray
    side: str
    #: the whole output (θ̂ and every interval, :func:`output_vector`) of the recorded and of the replayed run
    output: np.ndarray = field(default_factory=lambda: np.empty(0))
    output_replayed: np.ndarray = field(default_factory=lambda: np.empty(0))


def _theta(output: Any) -> np.ndarray:
    return np.asarray(as_fit_result(output).theta, dtype=float)


def fresh_rng(seed: Any) -> np.random.Generator:
    """A generator in the same state for every fit of a paired run: ``default_rng`` of a *copy* of a SeedSequence
    (``Generator.spawn`` — e.g. an interval's bootstrap stream — advances the sequence it was built from, so two
    fits sharing one SeedSequence object would draw different children)."""
    if isinstance(seed, np.random.SeedSequence):
        seed = np.random.SeedSequence(seed.entropy, spawn_key=seed.spawn_key, pool_size=seed.pool_size,
                                      n_children_spawned=seed.n_children_spawned)  # fmt: skip
    return np.random.default_rng(seed)


def output_vector(output: Any) -> np.ndarray:
    """A fit's whole output flattened: θ̂, then each interval it returns (by method name: centre, scale, draws, df).
    What the replay and recording checks compare — an interval is part of what leaves the curator (issue 37)."""
    result = as_fit_result(output)
    parts = [np.ravel(np.asarray(result.theta, dtype=float))]
    for name in sorted(result.intervals):
        interval = result.intervals[name]
        for key in ("center", "scale", "draws", "df"):
            value = getattr(interval, key, None)
            if value is not None:
                parts.append(np.ravel(np.asarray(value, dtype=float)))
    return np.concatenate(parts)


def paired_run(
    info: MechanismInfo,
    pair: Pair,
    side: str,
    epsilon: float,
    delta: float,
    seed: Any,
    hyper: Mapping[str, Any],
    noise_factor: float = 1.0,
) -> PairedRun:
    """Run ``fit`` on ``side`` (recording) and on the other dataset with the same stream (replaying the values).

    The replay run is an ordinary recorded run to the mechanism: :func:`~dpbench.mechanisms.released` returns an
    array of the same shape and type (a fresh copy of the recorded value), the same random stream is consumed."""
    other = "D'" if side == "D" else "D"
    X, y, inputs = pair.side(side)
    with record_releases(noise_factor) as observed:
        fitted = info.fit(X, y, epsilon, delta, fresh_rng(seed), **inputs, **hyper)
    if not observed.releases:
        raise ValueError(f"{info.name!r} declares no releases (wrap its privatised quantities in `released`)")
    Xo, yo, inputs_o = pair.side(other)
    replay = [_copy(r) for r in observed.releases]
    with record_releases(noise_factor, replay=replay) as replayed:
        refitted = info.fit(Xo, yo, epsilon, delta, fresh_rng(seed), **inputs_o, **hyper)
    if len(replayed.releases) != len(observed.releases):
        raise RuntimeError(
            f"{info.name!r} made {len(observed.releases)} releases on {side} but {len(replayed.releases)} on {other} "
            "(the sequence of releases must not depend on the data)"
        )
    out = []
    for mine, theirs in zip(observed.releases, replayed.releases, strict=True):
        c_d, c_dp = (mine.centre, theirs.centre) if side == "D" else (theirs.centre, mine.centre)
        out.append(ReleasePair(mine, np.asarray(c_d, dtype=float), np.asarray(c_dp, dtype=float), side, theirs))
    return PairedRun(out, _theta(fitted), _theta(refitted), side, output_vector(fitted), output_vector(refitted))


def pair_run(*args: Any, **kwargs: Any) -> list[ReleasePair]:
    """The releases of :func:`paired_run` (same arguments)."""
    return paired_run(*args, **kwargs).releases


def _copy(r: Release) -> Release:
    return Release(r.name, np.array(r.value, copy=True), r.centre, r.kind, r.scale, r.sensitivity, r.symmetric,
                   r.users, dict(r.params))  # fmt: skip


@functools.cache
def upper_indices(size: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.triu_indices(size)`` (incl. the diagonal), computed once per size: the audit's checks take the upper
    triangle of every symmetric release of every run, and building the indices cost more than the checks."""
    i, j = np.triu_indices(size)
    i.setflags(write=False)
    j.setflags(write=False)
    return i, j


def _entries(a: np.ndarray, symmetric: bool) -> np.ndarray:
    """The independently noised entries: the upper triangle (incl. diagonal) of a symmetric release, else all."""
    a = np.asarray(a, dtype=float)
    if symmetric:
        i, j = upper_indices(a.shape[-1])
        return a[i, j]
    return a.ravel()


def _aggregate_scale(r: Release) -> float:
    """Std of the aggregate noise of a users release: s/√N (mean) or s√N (sum); s otherwise."""
    if not r.users:
        return r.scale
    users = np.asarray(r.centre).shape[0]
    how = r.params.get("aggregate", "mean")
    return r.scale if how == "none" else r.scale / math.sqrt(users) if how == "mean" else r.scale * math.sqrt(users)


def _aggregate(rows: np.ndarray, r: Release) -> np.ndarray:
    if not r.users:
        return rows
    how = r.params.get("aggregate", "mean")
    return rows if how == "none" else rows.sum(axis=0) if how == "sum" else rows.mean(axis=0)


# ----------------------------------------------------------------------------------------------------------------
# per-history laws of the likelihood ratio


@dataclass(frozen=True)
class PosteriorLaw:
    """A ``posterior`` release seen from both datasets at one history: N(m_D, P_D⁻¹) against N(m_D′, P_D′⁻¹),
    precisions P = H/scale² (the OPS sample: both the mean and the covariance move with the data).

    Log-likelihood ratio of a value r: L(r) = ½ log det(P_D P_D′⁻¹) − ½‖r − m_D‖²_{P_D} + ½‖r − m_D′‖²_{P_D′}, a
    quadratic form in the Gaussian noise (a generalised χ²): no closed-form ε, so the audit takes its exact ε by
    Monte Carlo over exact draws of L, as for the sketches."""

    m_d: np.ndarray
    p_d: np.ndarray
    m_dp: np.ndarray
    p_dp: np.ndarray

    def llr(self, r: np.ndarray) -> np.ndarray:
        """L(r) for the rows of r."""
        _, logdet_d = np.linalg.slogdet(self.p_d)
        _, logdet_dp = np.linalg.slogdet(self.p_dp)
        a, b = r - self.m_d, r - self.m_dp
        quad_d = np.einsum("...i,ij,...j->...", a, self.p_d, a)
        quad_dp = np.einsum("...i,ij,...j->...", b, self.p_dp, b)
        return 0.5 * (logdet_d - logdet_dp) - 0.5 * quad_d + 0.5 * quad_dp

    def draws(self, side: str, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` exact draws of L with r from the law of ``side``: r = m + C⁻ᵀw, P = C Cᵀ, w ~ N(0, I)."""
        m, p = (self.m_d, self.p_d) if side == "D" else (self.m_dp, self.p_dp)
        chol = np.linalg.cholesky(p)
        w = rng.standard_normal((size, m.size))
        return self.llr(m + np.linalg.solve(chol.T, w.T).T)

    def divergence(self) -> float:
        """2·KL(D‖D′) = tr(P_D′P_D⁻¹) − d + ‖m_D − m_D′‖²_{P_D′} + log det(P_D P_D′⁻¹) (μ² when P_D = P_D′)."""
        shift = self.m_d - self.m_dp
        trace = float(np.trace(np.linalg.solve(self.p_d, self.p_dp)))
        logdet = np.linalg.slogdet(self.p_d)[1] - np.linalg.slogdet(self.p_dp)[1]
        return max(0.0, trace - shift.size + float(shift @ self.p_dp @ shift) + float(logdet))


def posterior_law(rp: ReleasePair) -> PosteriorLaw:
    """The two laws of a ``posterior`` release at this history (each side's own declared H and scale)."""
    mine = rp.release
    theirs = rp.other if rp.other is not None else rp.release
    rel_d, rel_dp = (mine, theirs) if rp.side == "D" else (theirs, mine)
    p_d = np.asarray(rel_d.params["H"], dtype=float) / rel_d.scale**2
    p_dp = np.asarray(rel_dp.params["H"], dtype=float) / rel_dp.scale**2
    return PosteriorLaw(np.ravel(rp.centre_d), p_d, np.ravel(rp.centre_dp), p_dp)


def objective_pair_law(rp: ReleasePair) -> ObjectiveLaw:
    """The two laws of an ``objective`` release at this history (each side's own declared A and scale σ_b)."""
    rel_d, rel_dp = (rp.release, rp.other or rp.release) if rp.side == "D" else (rp.other or rp.release, rp.release)
    return objective_law(rel_d.params["A"], rp.centre_d, rel_dp.params["A"], rp.centre_dp, rel_d.scale, rel_dp.scale,
                         float(rp.release.params["radius"]))  # fmt: skip


def posterior_shift(rp: ReleasePair) -> float:
    """The observed shift of a ``posterior`` release in the OPS theorem's metric: max(‖H_D(m_D − m_D′)‖,
    ‖H_D′(m_D − m_D′)‖) — for zero-out neighbours, ‖x‖·|y − xᵀθ| of the differing record at the solution of the
    dataset without it and with it (the gradient its Lipschitz constant L bounds)."""
    law = posterior_law(rp)
    shift = law.m_d - law.m_dp
    h_d = law.p_d * (rp.release.scale if rp.side == "D" else rp.other.scale) ** 2
    h_dp = law.p_dp * (rp.other.scale if rp.side == "D" else rp.release.scale) ** 2
    return float(max(np.linalg.norm(h_d @ shift), np.linalg.norm(h_dp @ shift)))


@dataclass
class Slot:
    """The law of one release's log-likelihood ratio at one history (kind-specific parameters)."""

    kind: str  # gaussian | laplace | wishart | l2ball | none
    mu2: float = 0.0  # gaussian: Σ (Δ/s)²
    a: np.ndarray = field(default_factory=lambda: np.zeros(0))  # laplace: Δ/b per entry
    wishart: tuple[float, np.ndarray, np.ndarray, int] | None = None  # (c, λ_D, λ_D′, k)
    ball: tuple[np.ndarray, np.ndarray, float] | None = None  # (v_D, v_D′, ε)
    posterior: PosteriorLaw | None = None  # posterior: the two Gaussians N(m, P⁻¹) of D and D′
    density: ObjectiveLaw | None = None  # objective: the two-piece laws of θ̂ on the ball under D and D′

    def divergence(self) -> float:
        """2·KL(D‖D′) of this release: μ² for a Gaussian (used to rank candidate pairs)."""
        if self.kind == "gaussian":
            return self.mu2
        if self.kind == "laplace":
            a = np.abs(self.a)
            return float(2 * np.sum(a + np.exp(-a) - 1.0))
        if self.kind == "wishart":
            c, lam_d, _, k = self.wishart
            g = 1.0 - lam_d
            return float(k * np.sum(g - 1.0 - np.log(g)))
        if self.kind == "l2ball":
            v_d, v_dp, eps = self.ball
            return float(eps * np.linalg.norm(v_d - v_dp))
        if self.kind == "posterior":
            return self.posterior.divergence()
        if self.kind == "objective":
            return self.density.divergence()
        return 0.0


def central_slot(rp: ReleasePair) -> Slot:
    """Law of the release's likelihood ratio for the whole release (central view)."""
    r = rp.release
    if r.kind == "gaussian":
        shift = _entries(_aggregate(rp.centre_d, r) - _aggregate(rp.centre_dp, r), r.symmetric)
        return Slot("gaussian", mu2=float(np.sum(shift**2)) / _aggregate_scale(r) ** 2)
    if r.kind == "laplace":
        if r.users:
            raise ValueError(f"release {r.name!r}: an aggregate of Laplace reports has no central audit (view=local)")
        return Slot("laplace", a=np.ravel(rp.centre_d - rp.centre_dp) / r.scale)
    if r.kind == "wishart":
        return Slot("wishart", wishart=_wishart_law(rp.centre_d, rp.centre_dp, int(r.params["k"])))
    if r.kind == "l2ball":
        raise ValueError(f"release {r.name!r}: an aggregate of ℓ2-ball reports has no central audit; use view=local")
    if r.kind == "posterior":
        return Slot("posterior", posterior=posterior_law(rp))
    if r.kind == "objective":
        return Slot("objective", density=objective_pair_law(rp))
    raise ValueError(f"unknown release kind {r.kind!r}")


def local_slot(rp: ReleasePair) -> Slot:
    """Law of the canary user's own report in a users release (local view); other releases give no slot."""
    r = rp.release
    if not r.users:
        return Slot("none")
    rows_d = np.asarray(rp.centre_d, dtype=float)
    rows_dp = np.asarray(rp.centre_dp, dtype=float)
    diff = (rows_d - rows_dp).reshape(rows_d.shape[0], -1)
    changed = np.nonzero(np.any(diff != 0, axis=1))[0]
    if changed.size == 0:
        return Slot("none")
    if changed.size > 1:
        raise RuntimeError(
            f"release {r.name!r}: {changed.size} users' reports differ between neighbouring datasets; a local "
            "randomiser may only read its own user's record"
        )
    i = int(changed[0])
    if r.kind == "gaussian":
        shift = _entries(rows_d[i] - rows_dp[i], r.symmetric)
        return Slot("gaussian", mu2=float(np.sum(shift**2)) / r.scale**2)
    if r.kind == "laplace":
        return Slot("laplace", a=np.ravel(rows_d[i] - rows_dp[i]) / r.scale)
    if r.kind == "l2ball":
        return Slot("l2ball", ball=(rows_d[i].ravel(), rows_dp[i].ravel(), r.scale))
    raise ValueError(f"release {r.name!r}: kind {r.kind!r} has no per-user audit")


def _wishart_law(cov_d: np.ndarray, cov_dp: np.ndarray, k: int) -> tuple[float, np.ndarray, np.ndarray, int]:
    """c = −(k/2)Σ log g, λ_D = 1 − g, λ_D′ = 1/g − 1 with g the eigenvalues of Σ_D′⁻¹Σ_D.

    With W = Σ_{j≤k} g_j g_jᵀ, g_j ~ N(0, Σ_side): L = c − ½ tr(AW), A = Σ_D⁻¹ − Σ_D′⁻¹, and tr(AW) = Σ_i λ_i χ²_k,i
    with λ the eigenvalues of L_sideᵀ A L_side (L_side L_sideᵀ = Σ_side)."""
    g = eigh((cov_d + cov_d.T) / 2, (cov_dp + cov_dp.T) / 2, eigvals_only=True)
    g = np.clip(g, 1e-300, None)
    return float(-0.5 * k * np.sum(np.log(g))), 1.0 - g, 1.0 / g - 1.0, k


def observed_llr(rp: ReleasePair) -> float:
    """The log-likelihood ratio log p_D(r)/p_D′(r) of the observed value (central view)."""
    r = rp.release
    if r.kind == "gaussian":
        value = np.asarray(r.value, dtype=float)
        c_d, c_dp = _aggregate(rp.centre_d, r), _aggregate(rp.centre_dp, r)
        mid = _entries(value - (c_d + c_dp) / 2.0, r.symmetric)
        return float(mid @ _entries(c_d - c_dp, r.symmetric)) / _aggregate_scale(r) ** 2
    if r.kind == "laplace":
        shift = (np.ravel(rp.centre_d) - np.ravel(rp.centre_dp)) / r.scale
        return float(np.sum(laplace_llr((np.ravel(r.value) - np.ravel(rp.centre_dp)) / r.scale, shift)))
    if r.kind == "wishart":
        k = int(r.params["k"])
        W = np.asarray(r.value, dtype=float) / float(r.params.get("unit", 1.0))
        sign_d, logdet_d = np.linalg.slogdet(rp.centre_d)
        sign_dp, logdet_dp = np.linalg.slogdet(rp.centre_dp)
        A = np.linalg.inv(rp.centre_d) - np.linalg.inv(rp.centre_dp)
        return float(-0.5 * k * (logdet_d - logdet_dp) - 0.5 * np.sum(A * W))
    if r.kind == "posterior":
        return float(posterior_law(rp).llr(np.ravel(np.asarray(r.value, dtype=float))))
    if r.kind == "objective":
        return float(objective_pair_law(rp).llr(np.ravel(np.asarray(r.value, dtype=float))))
    raise ValueError(f"release {r.name!r}: no central likelihood ratio for kind {r.kind!r}")


# ----------------------------------------------------------------------------------------------------------------
# noise-law check on the real runs


def noise_residuals(rp: ReleasePair) -> tuple[str, np.ndarray]:
    """Standardised noise of the observed release on its own side: N(0, 1) entries (gaussian) or Lap(1) (laplace,
    non-aggregated). Returns (law, residuals); law "none" when nothing is checkable. Computed once per release pair
    (the release and its centres are fixed once recorded)."""
    if rp.residuals is None:
        rp.residuals = _noise_residuals(rp)
    return rp.residuals


def _noise_residuals(rp: ReleasePair) -> tuple[str, np.ndarray]:
    r = rp.release
    own = rp.centre_d if rp.side == "D" else rp.centre_dp
    if r.kind == "gaussian":
        resid = _entries(np.asarray(r.value, dtype=float) - _aggregate(own, r), r.symmetric)
        return "normal", resid / _aggregate_scale(r)
    if r.kind == "posterior":
        return "normal", whitened_posterior(r, own)
    if r.kind == "objective":
        return "normal", objective_noise(r, own)
    how = r.params.get("aggregate", "mean") if r.users else "none"
    resid = np.ravel(np.asarray(r.value, dtype=float) - _aggregate(own, r)) if r.kind == "laplace" else None
    if r.kind == "laplace" and how == "none":  # one report per user (or a central release): Lap(b) entries
        return "laplace", resid / r.scale
    if r.kind == "laplace":  # mean (sum) of N users' Lap(b): variance 2b²/N (2b²N), Gaussian to within O(1/N)
        users = np.asarray(r.centre).shape[0]
        return "normal", resid / (r.scale * math.sqrt(2 * users if how == "sum" else 2 / users))
    return "none", np.zeros(0)


def objective_noise(r: Release, centre: np.ndarray) -> np.ndarray:
    """The noise b/σ of an ``objective`` release that maps to its value, ν drawn from its conditional law on the
    sphere (:func:`~dpbench.audit.objective_density.objective_unit_noise`): N(0, I) under the declared law."""
    return objective_unit_noise(r.params["A"], centre, r.scale, float(r.params["radius"]), r.value)


def whitened_posterior(r: Release, centre: np.ndarray) -> np.ndarray:
    """The noise of a ``posterior`` release in units of its declared law: Cᵀ(value − centre)/scale ~ N(0, I) for
    H = C Cᵀ."""
    chol = np.linalg.cholesky(np.asarray(r.params["H"], dtype=float))
    return chol.T @ np.ravel(np.asarray(r.value, dtype=float) - np.asarray(centre, dtype=float)) / r.scale


@dataclass(frozen=True)
class NoiseCheck:
    """Variance (normal) or mean |z| (Laplace) of the pooled standardised noise vs 1, per release name."""

    name: str
    law: str
    count: int
    statistic: float
    ok: bool


def check_noise(runs: list[list[ReleasePair]]) -> list[NoiseCheck]:
    """Pool each release's standardised residuals over the real runs; flag a variance (or E|z|) off by more than
    6 standard errors + 2% (an implementation whose actual noise is not the declared one)."""
    pooled: dict[str, tuple[str, list[np.ndarray]]] = {}
    for run in runs:
        for rp in run:
            law, resid = noise_residuals(rp)
            if law != "none" and resid.size:
                pooled.setdefault(rp.release.name, (law, []))[1].append(resid)
    out = []
    for name, (law, parts) in pooled.items():
        z = np.concatenate(parts)
        m = z.size
        if law == "normal":
            stat = float(np.mean(z * z))
            ok = abs(stat - 1.0) <= 6 * math.sqrt(2.0 / m) + 0.02
        else:
            stat = float(np.mean(np.abs(z)))
            ok = abs(stat - 1.0) <= 6 * math.sqrt(1.0 / m) + 0.02
        out.append(NoiseCheck(name, law, m, stat, ok))
    return out


# ----------------------------------------------------------------------------------------------------------------
# batched sampling of the statistic


def slots_of(run: list[ReleasePair], view: str) -> list[Slot]:
    if view not in VIEWS:
        raise ValueError(f"view must be one of {VIEWS}, got {view!r}")
    return [central_slot(rp) if view == "central" else local_slot(rp) for rp in run]


def history_fixed(pool: list[list[Slot]], rtol: float = 1e-7) -> bool:
    """True when the releases' laws are the same at every pooled history (constant shifts and scales)."""
    signature = [[(s.kind, s.divergence()) for s in slots if s.kind != "none"] for slots in pool]
    first = signature[0]
    for other in signature[1:]:
        if len(other) != len(first):
            return False
        for (ka, a), (kb, b) in zip(first, other, strict=True):
            if ka != kb or not math.isclose(a, b, rel_tol=rtol, abs_tol=1e-12):
                return False
    return True


def _l2ball_log_density(z: np.ndarray, v: np.ndarray, eps: float) -> np.ndarray:
    """log p(z | v) up to a constant: the ℓ2-ball sampler's mixture over ṽ = ±v/‖v‖ (spec 000 §3.6)."""
    norm_v = np.linalg.norm(v, axis=-1)
    u = v / np.where(norm_v > 0, norm_v, 1.0)[..., None]
    positive = np.einsum("...j,...j->...", z, u) > 0
    hi, lo = math.exp(eps) / (math.exp(eps) + 1.0), 1.0 / (math.exp(eps) + 1.0)
    plus = 0.5 + norm_v / 2.0
    return np.log(np.where(positive, plus * hi + (1 - plus) * lo, plus * lo + (1 - plus) * hi))


def sample_statistic(
    pool: list[list[Slot]], side: str, size: int, rng: np.random.Generator, return_index: bool = False
) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """``size`` draws of the summed log-likelihood ratio on ``side``, histories drawn uniformly from ``pool``.

    Histories may differ in their number of releases (a release skipped after a failed check): per history the
    Gaussian releases collapse to one N(±μ²/2, μ²) with μ² = Σ μ_k², and the other kinds are padded with
    zero-shift releases, whose likelihood ratio is 0."""
    sign = 1.0 if side == "D" else -1.0
    idx = rng.integers(len(pool), size=size)
    total = np.zeros(size)
    mu2 = np.array([sum(s.mu2 for s in slots if s.kind == "gaussian") for slots in pool])[idx]
    total += sign * mu2 / 2.0 + np.sqrt(mu2) * rng.standard_normal(size)
    a = _padded([np.concatenate([np.ravel(s.a) for s in slots if s.kind == "laplace"] or [np.zeros(0)])
                 for slots in pool])  # fmt: skip
    if a.shape[1]:
        a = a[idx]
        r = rng.laplace(0.0, 1.0, a.shape) + (a if side == "D" else 0.0)  # in units of b, centred on D′
        total += laplace_llr(r, a).sum(axis=1)
    wisharts = [[s.wishart for s in slots if s.kind == "wishart"] for slots in pool]
    for j in range(max(len(w) for w in wisharts)):
        laws = [w[j] if j < len(w) else None for w in wisharts]
        dim = max(law[1].size for law in laws if law is not None)
        c = np.array([law[0] if law else 0.0 for law in laws])[idx]
        lam = np.array([law[1 if side == "D" else 2] if law else np.zeros(dim) for law in laws])[idx]
        dof = np.array([law[3] if law else 1 for law in laws])[idx]
        total += c - 0.5 * np.sum(lam * rng.chisquare(dof[:, None], lam.shape), axis=1)
    posts = [[s.posterior or s.density for s in slots if s.kind in ("posterior", "objective")] for slots in pool]
    if any(posts):
        order = np.argsort(idx, kind="stable")
        starts = np.searchsorted(idx[order], np.arange(len(pool) + 1))
        for h, laws in enumerate(posts):
            at = order[starts[h] : starts[h + 1]]
            for law in laws if at.size else ():
                total[at] += law.draws(side, at.size, rng)
    balls = [[s.ball for s in slots if s.kind == "l2ball"] for slots in pool]
    for j in range(max(len(b) for b in balls)):
        laws = [b[j] if j < len(b) else None for b in balls]
        dim, eps = next((law[0].size, law[2]) for law in laws if law is not None)
        v_d = np.array([law[0] if law else np.zeros(dim) for law in laws])[idx]
        v_dp = np.array([law[1] if law else np.zeros(dim) for law in laws])[idx]
        z = _l2ball_draws(v_d if side == "D" else v_dp, eps, rng)
        total += _l2ball_log_density(z, v_d, eps) - _l2ball_log_density(z, v_dp, eps)
    return (total, idx) if return_index else total


def laplace_llr(r: np.ndarray, a: np.ndarray) -> np.ndarray:
    """|r| − |r − a| (units of b, r centred on D′, a = shift) as 2·clip(r, min(0, a), max(0, a)) − a: its atoms ±a
    come out bit-exact on both sides (the round-off of |r| − |r − a| depends on r and would split them)."""
    return 2.0 * np.clip(r, np.minimum(0.0, a), np.maximum(0.0, a)) - a


def _padded(rows: list[np.ndarray]) -> np.ndarray:
    width = max(r.size for r in rows)
    out = np.zeros((len(rows), width))
    for i, r in enumerate(rows):
        out[i, : r.size] = r
    return out


def _l2ball_draws(V: np.ndarray, eps: float, rng: np.random.Generator, chunk: int = 200_000) -> np.ndarray:
    return np.vstack([l2ball_sample(V[i : i + chunk], eps, rng) for i in range(0, V.shape[0], chunk)])


# ----------------------------------------------------------------------------------------------------------------
# exact ε of the releases at the pair and of the declared sensitivities


def exact_releases(slots: list[Slot]) -> list[Any] | None:
    """The releases at one pair and history as exact-accounting objects (unit noise, attained shifts): all Gaussian
    releases as one GaussianRelease(√Σμ², 1), each Laplace entry with a shift, each ℓ2-ball report that moves; None
    when a release is a Gaussian-mixing sketch (no closed form). The one conversion slots → releases of the audit
    (the exact ε of :func:`pair_epsilon`, the noise factor of the driver's controls)."""
    parts: list[Any] = []
    mu2 = sum(s.mu2 for s in slots if s.kind == "gaussian")
    if mu2 > 0:
        parts.append(GaussianRelease(math.sqrt(mu2), 1.0))
    for s in slots:
        if s.kind == "laplace":
            parts += [LaplaceRelease(abs(float(a)), 1.0) for a in s.a if a != 0]
        elif s.kind == "l2ball":
            v_d, v_dp, eps = s.ball
            if np.linalg.norm(v_d - v_dp) > 0:
                parts.append(PureRelease(eps))
        elif s.kind in NO_CLOSED_FORM:
            return None
    return parts


def pair_epsilon(slots: list[Slot], delta: float) -> float | None:
    """Exact ε of the releases at this pair and history (None when a release is not Gaussian/Laplace/ℓ2-ball)."""
    parts = exact_releases(slots)
    if parts is None:
        return None
    return exact_epsilon(parts, delta) if parts else 0.0


def pooled_epsilon(pool: list[list[Slot]], delta: float) -> float | None:
    """Exact ε of the batched process when every release is Gaussian: the history is uniform over the pool and
    public (:func:`dpbench.privacy.gdp.mixture_epsilon` of the per-history μ); None when other kinds are present."""
    if any(s.kind not in ("gaussian", "none") for slots in pool for s in slots):
        return None
    return mixture_epsilon(np.sqrt([sum(s.mu2 for s in slots if s.kind == "gaussian") for slots in pool]), delta)


def gaussian_pool(pool: list[list[Slot]]) -> bool:
    return all(s.kind in ("gaussian", "none") for slots in pool for s in slots)


def declared_epsilon(run: list[ReleasePair], view: str, delta: float) -> float | None:
    """Exact ε of the releases the canary touches, at their *declared* sensitivities (None if one of them declares
    none or is a sketch). Releases that do not read the canary's record compose in parallel and are left out."""
    parts: list[Any] = []
    for rp, slot in zip(run, slots_of(run, view), strict=True):
        r = rp.release
        if slot.kind == "none" or slot.divergence() == 0:
            continue
        if r.kind in NO_CLOSED_FORM or r.sensitivity is None:
            return None
        if r.kind == "gaussian":
            if view == "local" or not r.users:
                parts.append(GaussianRelease(r.sensitivity, r.scale))
            else:  # aggregate of N users' reports: sensitivity of one report over the aggregate's std
                users = np.asarray(r.centre).shape[0]
                factor = 1.0 / users if r.params.get("aggregate", "mean") == "mean" else 1.0
                parts.append(GaussianRelease(r.sensitivity * factor, _aggregate_scale(r)))
        elif r.kind == "laplace":
            parts.append(LaplaceRelease(r.sensitivity, r.scale))
        elif r.kind == "l2ball":
            parts.append(PureRelease(r.scale))
    return exact_epsilon(parts, delta) if parts else None


def real_statistic(run: list[ReleasePair]) -> float:
    """Σ of the observed log-likelihood ratios of one real run (central view)."""
    return float(sum(observed_llr(rp) for rp in run))


def model_check(real: np.ndarray, batched: np.ndarray) -> float:
    """p-value of the two-sample Kolmogorov–Smirnov test real-run statistic vs batched statistic."""
    if real.size < 10 or not np.isfinite(real).all():
        return float("nan")
    return float(ks_2samp(real, batched[: max(20 * real.size, 10_000)]).pvalue)


def sampled_epsilon(
    pool: list[list[Slot]],
    delta: float,
    rng: np.random.Generator,
    size: int = 4_000_000,
    chunk: int = 1_000_000,
    confidence: float = 0.95,
) -> LossEpsilon:
    """Exact-in-law ε of the batched process (any release kinds, sketches included) by Monte Carlo: ``size`` draws
    per side of the summed log-likelihood ratio (:func:`sample_statistic`, history uniform over ``pool``), then
    :func:`dpbench.audit.stats.loss_epsilon` (δ(ε) = E_D[(1 − e^{ε − L})₊] and its mirror, with an interval)."""
    draws = {}
    for side in ("D", "D'"):
        parts = [sample_statistic(pool, side, min(chunk, size - start), rng) for start in range(0, size, chunk)]
        draws[side] = np.concatenate(parts)
    return loss_epsilon(draws["D"], draws["D'"], delta, confidence)
