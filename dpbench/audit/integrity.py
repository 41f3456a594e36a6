"""Integrity of a mechanism's declarations (issue 30): what the white-box audit would otherwise take on trust.

The white-box statistic (:mod:`dpbench.audit.whitebox`) tests the releases a mechanism declares with
:func:`~dpbench.mechanisms.released`, under the laws it declares. Here real paired runs of the mechanism
(:func:`~dpbench.audit.whitebox.paired_run`: a recorded run on one dataset of a pair, then a run on the other
dataset with the same random stream and every release held at the recorded value) check the declarations
themselves, on a family of pairs (:func:`integrity_pairs`) and many seeds. Each check names what broke:

* ``replay`` (completeness): θ̂ of the replayed run must equal θ̂ of the recorded run bit for bit. The replayed
  run sees the other dataset but exactly the same releases and random stream, so a difference means θ̂ read the data
  outside its releases ("θ̂ changed when the releases were held fixed: an undeclared data path"). Over N runs a data
  path taken with probability p is missed with probability (1 − p)^N: :attr:`IntegrityResult.branch_probability`.
* ``recording`` (invariance): ``fit(D, seed)`` outside any audit must return the recorded run's θ̂ — a mechanism
  that behaves differently while audited fails.
* ``scale``: a release's declared scale, kind and sensitivity must be the same on D and D′ at the same history (a
  scale computed from the data is not a calibration).
* ``sensitivity``: the observed shift ‖m_D − m_D′‖ of each release (ℓ2 over its noised entries; ℓ1 for Laplace;
  per user for local reports) must not exceed its declared sensitivity, on every pair of the family.
* ``centre``: the declared centre is the noiseless value — the mean standardised noise of each release over the
  real runs, per dataset, is 0 (a centre that is a public constant hides the release's real shift).
* ``atom``: a release exactly at its centre (its noise 0), or noise whose norm falls below its 10⁻⁶ quantile more
  often than chance allows (a branch that skips or shrinks the noise with small probability); θ̂ exactly the
  non-private least-squares estimate (``exact_ols``).
* ``users``: for local reports released one by one (``aggregate="none"``), each user's noise variance against the
  declared one ("user 3 of 32: noise variance 0.25× the declared").

The pair family: the audit's worst-case pair, the same canary and replacement on the ``spread`` background (rows of
distinct norms up to the bound and labels up to ±Y, so one record moves the maximum and the median row norm, a
data-dependent clipping threshold), and the canary at the first, the middle and a random row. The checks assume
the mechanism treats what ``released`` returns as the released value (it may not compare it with the value it
passed: that comparison is the only thing that tells a replay from an ordinary run).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.special import gammainc
from scipy.stats import binom, chi2

from dpbench.audit.family import neighbour_pairs, unrelated_pairs
from dpbench.audit.noise_law import Finding, check_noise_law
from dpbench.audit.objective_density import gradient_shift
from dpbench.audit.pairs import PairSpec
from dpbench.audit.whitebox import (
    Pair,
    PairedRun,
    ReleasePair,
    _entries,
    fresh_rng,
    noise_residuals,
    output_vector,
    paired_run,
    posterior_shift,
    upper_indices,
)
from dpbench.audit.witness import witness_bound
from dpbench.registry import MechanismInfo

#: the lower-tail level of a run's noise norm below which it counts as "noise too small"
SMALL_NOISE_LEVEL = 1e-6
#: false-alarm probability of the small-noise count (binomial tail at SMALL_NOISE_LEVEL)
SMALL_NOISE_FALSE_ALARM = 1e-6
#: relative tolerance of a declared sensitivity or scale comparison (round-off of the centres)
RTOL = 1e-9
#: the per-user noise check: flagged when a user's variance is off by more than this many standard errors + 2%
USER_SIGMAS = 6.0
#: the centre check flags a release whose mean standardised noise is off 0 with χ² p-value below this
CENTRE_ALPHA = 1e-6
CENTRE_MIN_RUNS = 10  # runs of one release, side and pair before its mean noise is tested
CHECKS = ("replay", "recording", "scale", "sensitivity", "centre", "atom", "exact_ols", "users", "entry",
          "correlation", "sequence")  # fmt: skip


@dataclass
class IntegrityResult:
    """The integrity checks of one mechanism at one claim: runs, pairs, findings, measured sensitivities."""

    runs: int
    pairs: list[str]
    findings: list[Finding]
    #: per release: (largest observed shift over all runs and pairs, declared sensitivity or None)
    sensitivity: dict[str, tuple[float, float | None]] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def flags(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(f.check for f in self.findings))

    @property
    def branch_probability(self) -> float:
        """A data path taken with at least this probability per run shows in the replay with probability ≥ 95%."""
        return -math.log(0.05) / self.runs if self.runs else 1.0

    def summary(self) -> str:
        if not self.findings:
            return f"integrity ok ({self.runs} replays, branch ≥ {self.branch_probability:.1e} seen w.p. 95%)"
        return "; ".join(f.message for f in self.findings)


# ----------------------------------------------------------------------------------------------------------------
# the pairs and the runs


def integrity_pairs(info: MechanismInfo, spec: PairSpec, worst: Pair, seed: int,
                    hyper: Mapping[str, Any] | None = None) -> list[Pair]:  # fmt: skip
    """The worst-case pair, then the family's other neighbouring pairs, then the unrelated datasets
    (:mod:`dpbench.audit.family`)."""
    hyper = hyper or {}
    return [worst, *neighbour_pairs(info, spec, worst, seed, hyper), *unrelated_pairs(info, spec, worst, seed, hyper)]


@dataclass
class IntegrityRun:
    """A paired run on pair ``pair`` with the unrecorded θ̂ of the same fit (recording invariance)."""

    pair: int
    run: PairedRun
    output_unrecorded: np.ndarray  # the whole output (θ̂ and its intervals) of the same fit, not recorded


def integrity_runs(
    info: MechanismInfo,
    pairs: list[Pair],
    epsilon: float,
    delta: float,
    hyper: Mapping[str, Any],
    runs: int,
    seed: int,
    max_seconds: float | None = None,
    minimum: int = 0,
    refused: dict[int, str] | None = None,
) -> list[IntegrityRun]:
    """``runs`` real paired runs, each with an unrecorded fit of the observed side: one run in three on the worst
    pair (``pairs[0]``), one on the unrelated datasets, one on the other neighbouring pairs (each group in turn),
    sides alternating (D, D′) per pair; stops early after ``max_seconds`` once ``minimum`` runs are done.

    A pair other than the worst one on which the mechanism raises is dropped (its reason kept in ``refused``),
    except that a release sequence that changes on an unrelated dataset is kept as a finding (``sequence``)."""
    seeds = np.random.SeedSequence([seed, 0x1A7E]).spawn(runs)
    start = time.process_time()
    out: list[IntegrityRun] = []
    refused = {} if refused is None else refused
    groups = [[0], [i for i, p in enumerate(pairs) if i and p.unrelated], [i for i, p in enumerate(pairs)
                                                                           if i and not p.unrelated]]  # fmt: skip
    turns = [0] * len(pairs)
    for i, s in enumerate(seeds):
        group = [j for j in groups[i % 3] if j not in refused] or [0]
        index = group[(i // 3) % len(group)]
        side = "D" if turns[index] % 2 == 0 else "D'"
        turns[index] += 1
        X, y, inputs = pairs[index].side(side)
        try:
            run = paired_run(info, pairs[index], side, epsilon, delta, s, hyper)
            plain = output_vector(info.fit(X, y, epsilon, delta, fresh_rng(s), **inputs, **hyper))
        except Exception as err:  # noqa: BLE001 - a pair the mechanism refuses is dropped, with its reason
            if index == 0 or (not pairs[index].unrelated and "sequence" in str(err)):
                raise
            refused[index] = f"{type(err).__name__}: {err}"
            continue
        out.append(IntegrityRun(index, run, plain))
        if max_seconds is not None and len(out) >= minimum and time.process_time() - start > max_seconds:
            break
    return out


# ----------------------------------------------------------------------------------------------------------------
# the checks


#: the recording check tolerates round-off: a mechanism may continue from the released value where the plain run
#: continues from its own (DP-FTRL's tree rebuilds its prefix sums from the released nodes; 1e-16 apart)
RECORDING_RTOL = 1e-9


def _same(a: np.ndarray, b: np.ndarray, rtol: float = 0.0) -> bool:
    """Equal bit for bit (``rtol`` = 0), or within ``rtol`` of the largest |entry| (NaN where NaN)."""
    if a.shape != b.shape:
        return False
    if np.array_equal(a, b, equal_nan=True):
        return True
    if rtol == 0.0 or not np.array_equal(np.isnan(a), np.isnan(b)):
        return False
    with np.errstate(invalid="ignore"):
        gap = np.nan_to_num(np.abs(a - b), nan=0.0)
        size = float(np.nanmax(np.abs(a), initial=0.0)) if a.size else 0.0
    return bool(np.all(gap <= rtol * max(size, 1e-300)))


def _largest_difference(a: np.ndarray, b: np.ndarray, theta: bool = True) -> str:
    if a.shape != b.shape:
        return f"shape {a.shape} vs {b.shape}"
    with np.errstate(invalid="ignore"):
        return f"max |Δ{'θ̂' if theta else ' interval'}| = {float(np.nanmax(np.abs(a - b))):.3g}"


def check_replay(runs: list[IntegrityRun], pairs: list[Pair]) -> list[Finding]:
    """The whole output (θ̂ and every interval) of every replayed run equals its recorded run's; unrecorded equals
    recorded. The message names θ̂ when θ̂ itself moved, else the intervals."""
    out = []
    for check, other, rtol, what in (
        ("replay", lambda r: r.run.output_replayed, 0.0, "changed when the releases were held fixed: an undeclared "
         "data path"),
        ("recording", lambda r: r.output_unrecorded, RECORDING_RTOL, "differs with and without recording: the "
         "mechanism behaves differently while audited"),
    ):  # fmt: skip
        bad = [r for r in runs if not _same(r.run.output, other(r), rtol)]
        if bad:
            first = bad[0]
            size = first.run.theta.size
            moved = not _same(first.run.output[:size], other(first)[:size], rtol)
            subject = "θ̂" if moved else "an interval (θ̂ unchanged)"
            out.append(Finding(check, f"{subject} {what} ({len(bad)} of {len(runs)} runs; first at pair "
                                      f"{first.pair + 1} [{pairs[first.pair].description}], "
                                      f"{_largest_difference(first.run.output, other(first), moved)})",
                               len(bad), len(runs)))  # fmt: skip
    return out


def observed_shift(rp: ReleasePair) -> float | None:
    """‖m_D − m_D′‖ over the noised entries: ℓ2 (Gaussian, ℓ2-ball) or ℓ1 (Laplace); for local reports the largest
    over users (the sensitivity is per report). None for sketches (their law is not a shift)."""
    r = rp.release
    if r.kind == "wishart":
        return None
    if r.kind == "posterior":
        return posterior_shift(rp)
    if r.kind == "objective":  # the two noises b that map to the observed θ̂: the loss gradient KST bound by L
        o = rp.other or r
        a_d, a_dp = (r.params["A"], o.params["A"]) if rp.side == "D" else (o.params["A"], r.params["A"])
        return gradient_shift(a_d, rp.centre_d, a_dp, rp.centre_dp, np.ravel(np.asarray(r.value, dtype=float)))
    diff = np.asarray(rp.centre_d, dtype=float) - np.asarray(rp.centre_dp, dtype=float)
    order = 1 if r.kind == "laplace" else 2
    if r.users:
        flat = _per_user(diff, r.symmetric)
        return float(np.max(np.linalg.norm(flat, ord=order, axis=1))) if flat.size else 0.0
    return float(np.linalg.norm(_entries(diff, r.symmetric), ord=order))


def _per_user(rows: np.ndarray, symmetric: bool) -> np.ndarray:
    """One row of noised entries per user (the upper triangle of each user's symmetric matrix)."""
    rows = np.asarray(rows, dtype=float)
    if symmetric and rows.ndim > 2:
        i, j = upper_indices(rows.shape[-1])
        return rows[:, i, j]
    return rows.reshape(rows.shape[0], -1)


def check_declarations(runs: list[IntegrityRun], pairs: list[Pair]) -> tuple[list[Finding], dict]:
    """Scale/kind/sensitivity the same on both datasets; observed shift ≤ declared sensitivity."""
    mismatch: dict[str, tuple[str, int]] = {}  # release → (first message, count)
    shifts: dict[str, tuple[float, float | None, int]] = {}  # release → (largest shift, declared, pair)
    over: dict[str, int] = {}  # release → runs whose shift exceeds the declared sensitivity
    for item in runs:
        for rp in item.run.releases:
            r, name = rp.release, rp.release.name
            diffs = _declaration_differences(rp)
            if diffs:
                first = mismatch.get(
                    name,
                    (
                        f"release {name!r}: declared {', '.join(diffs)} at the same history "
                        f"(pair {item.pair + 1}): a data-dependent calibration",
                        0,
                    ),
                )[0]
                mismatch[name] = (first, mismatch.get(name, ("", 0))[1] + 1)
            shift = None if pairs[item.pair].unrelated else observed_shift(rp)
            if shift is None:
                continue
            if shift > shifts.get(name, (-1.0, None, -1))[0]:
                shifts[name] = (shift, r.sensitivity, item.pair)
            if r.sensitivity is not None and shift > r.sensitivity * (1 + RTOL) + 1e-12:
                over[name] = over.get(name, 0) + 1
    n = len(runs)
    out = [Finding("scale", f"{message} in {count} of {n} runs", count, n) for message, count in mismatch.values()]
    for name, count in over.items():
        shift, declared, pair = shifts[name]
        out.append(Finding("sensitivity", f"release {name!r}: sensitivity observed {shift:.4g} > declared "
                                          f"{declared:.4g} (in {count} of {n} runs; largest at pair {pair + 1}: "
                                          f"{pairs[pair].description})", count, n))  # fmt: skip
    return out, {name: (v[0], v[1]) for name, v in shifts.items()}


def _declaration_differences(rp: ReleasePair) -> list[str]:
    """What the mechanism declared differently for this release on the two datasets at the same history."""
    r, o = rp.release, rp.other
    if o is None:
        return []
    diffs = []
    if not math.isclose(r.scale, o.scale, rel_tol=RTOL, abs_tol=0.0):
        diffs.append(f"scale {_side_values(rp, r.scale, o.scale)}")
    if (r.sensitivity is None) != (o.sensitivity is None) or (
        r.sensitivity is not None and not math.isclose(r.sensitivity, o.sensitivity, rel_tol=RTOL)
    ):
        diffs.append(f"sensitivity {_side_values(rp, r.sensitivity, o.sensitivity)}")
    if (r.kind, r.symmetric, r.users) != (o.kind, o.symmetric, o.users):
        diffs.append(f"kind {_side_values(rp, r.kind, o.kind)}")
    return diffs


def _side_values(rp: ReleasePair, mine: Any, theirs: Any) -> str:
    d, dp = (mine, theirs) if rp.side == "D" else (theirs, mine)
    fmt = (lambda v: f"{v:.4g}") if isinstance(mine, float) and isinstance(theirs, float) else repr
    return f"{fmt(d)} on D vs {fmt(dp)} on D′"


def small_noise_threshold(runs: int) -> int:
    """Smallest count k with P(Binomial(runs, 10⁻⁶) ≥ k) ≤ 10⁻⁶: more runs than that below the 10⁻⁶ quantile of
    the noise norm is a branch with too little noise, not chance."""
    k = 1
    while binom.sf(k - 1, runs, SMALL_NOISE_LEVEL) > SMALL_NOISE_FALSE_ALARM:
        k += 1
    return k


def _lower_tail(law: str, z: np.ndarray) -> float:
    """P(noise norm ≤ observed) under the declared law: χ²_m of Σz² (normal), Gamma(m, 1) of Σ|z| (Laplace)."""
    if law == "normal":
        return float(gammainc(z.size / 2.0, float(z @ z) / 2.0))
    return float(gammainc(float(z.size), float(np.abs(z).sum())))


def check_atoms(runs: list[IntegrityRun], pairs: list[Pair]) -> list[Finding]:
    """Releases at their centre (noise exactly 0), noise norms below their 10⁻⁶ quantile more often than chance,
    θ̂ exactly the non-private least squares of the observed dataset."""
    atoms: dict[str, int] = {}
    small: dict[str, int] = {}
    ols_hits = 0
    ols = {}
    for index, pair in enumerate(pairs):
        for side in ("D", "D'"):
            X, y, _ = pair.side(side)
            ols[index, side] = np.linalg.lstsq(X, y, rcond=None)[0]
    for item in runs:
        for rp in item.run.releases:
            law, z = noise_residuals(rp)
            if law == "none" or not z.size:
                continue
            if not np.any(z):
                atoms[rp.release.name] = atoms.get(rp.release.name, 0) + 1
            elif _lower_tail(law, z) < SMALL_NOISE_LEVEL:
                small[rp.release.name] = small.get(rp.release.name, 0) + 1
        theta, reference = item.run.theta, ols[item.pair, item.run.side]
        if theta.shape == reference.shape and np.allclose(theta, reference, rtol=1e-9, atol=1e-12):
            ols_hits += 1
    n = len(runs)
    out = [Finding("atom", f"release {name!r} equals its centre (noise exactly 0) in {k} of {n} runs: a branch "
                           "that skips the noise", k, n) for name, k in atoms.items()]  # fmt: skip
    limit = small_noise_threshold(n)
    out += [Finding("atom", f"release {name!r}: noise below its 10⁻⁶ quantile in {k} of {n} runs (chance: ≤ "
                            f"{limit - 1}): a branch with too little noise", k, n)
            for name, k in small.items() if k >= limit]  # fmt: skip
    if ols_hits:
        out.append(Finding("exact_ols", f"θ̂ equals the non-private least-squares estimate in {ols_hits} of {n} runs",
                           ols_hits, n))  # fmt: skip
    return out


def check_centres(runs: list[IntegrityRun]) -> list[Finding]:
    """The declared centre is the noiseless value: per release, side and pair, the mean standardised noise of the
    real runs is 0. The pairs' statistics T_p = count_p·Σ_j mean_pj²/var ~ χ²_m add up, per release and side, to
    T ~ χ²_{Σ m} (flagged at p < 10⁻⁶). Kept per pair, not pooled: a wrong centre shifts each pair by its own
    data, and shifts of opposite signs on different pairs cancel in a pooled mean. A centre that is not what the
    data give (a public constant, the clipped statistic while the noise sits on the raw one) hides the release's
    real shift."""
    sums: dict[tuple[str, str, int], tuple[str, np.ndarray, int]] = {}
    for item in runs:
        for rp in item.run.releases:
            law, z = noise_residuals(rp)
            if law == "none" or not z.size:
                continue
            key = (rp.release.name, rp.side, item.pair)
            prior = sums.get(key)
            if prior is None:
                sums[key] = (law, z.astype(float).copy(), 1)
            elif prior[1].shape == z.shape:
                sums[key] = (law, prior[1] + z, prior[2] + 1)
    combined: dict[tuple[str, str], tuple[float, int, int, float]] = {}
    for (name, side, _pair), (law, total, count) in sums.items():
        if count < CENTRE_MIN_RUNS:
            continue
        mean = total / count
        statistic = count * float(mean @ mean) / (1.0 if law == "normal" else 2.0)
        t, dof, runs_seen, worst = combined.get((name, side), (0.0, 0, 0, 0.0))
        combined[name, side] = (t + statistic, dof + mean.size, runs_seen + count, max(worst, np.max(np.abs(mean))))
    out = []
    for (name, side), (statistic, dof, count, worst) in combined.items():
        p = float(chi2.sf(statistic, dof))
        if p < CENTRE_ALPHA:
            where = "D" if side == "D" else "D′"
            out.append(Finding("centre", f"release {name!r}: its noise is not centred on the declared centre on "
                                         f"{where} (mean standardised noise up to {worst:.3g} on a pair, "
                                         f"{count} runs, p = {p:.1e}): the centre is not the noiseless value",
                               count, count))  # fmt: skip
    return out


def check_users(runs: list[IntegrityRun]) -> list[Finding]:
    """Per-user noise of local reports released one by one (``aggregate="none"``): each user's standardised noise
    variance (normal) or mean |z| (Laplace) over the runs against 1."""
    sums: dict[str, tuple[str, np.ndarray, int]] = {}
    for item in runs:
        for rp in item.run.releases:
            r = rp.release
            if not r.users or r.params.get("aggregate", "mean") != "none" or r.kind not in ("gaussian", "laplace"):
                continue
            own = rp.centre_d if rp.side == "D" else rp.centre_dp
            z = (np.asarray(r.value, dtype=float) - np.asarray(own, dtype=float)) / r.scale
            z = _per_user(z, r.symmetric)
            law = "normal" if r.kind == "gaussian" else "laplace"
            stat = (z * z if law == "normal" else np.abs(z)).sum(axis=1)
            prior = sums.get(r.name)
            if prior is None or prior[1].shape != stat.shape:
                sums[r.name] = (law, stat, z.shape[1]) if prior is None else prior
                continue
            sums[r.name] = (law, prior[1] + stat, prior[2] + z.shape[1])
    out = []
    for name, (law, total, count) in sums.items():
        mean = total / count
        se = math.sqrt((2.0 if law == "normal" else 1.0) / count)
        bad = np.nonzero(np.abs(mean - 1.0) > USER_SIGMAS * se + 0.02)[0]
        if bad.size:
            worst = int(bad[np.argmax(np.abs(mean[bad] - 1.0))])
            what = "noise variance" if law == "normal" else "mean |noise|"
            out.append(Finding("users", f"release {name!r}: user {worst + 1} of {mean.size}: {what} "
                                        f"{mean[worst]:.3g}× the declared ({bad.size} users off)",
                               int(bad.size), int(mean.size)))  # fmt: skip
    return out


def check_refused(pairs: list[Pair], refused: Mapping[int, str]) -> list[Finding]:
    """A release sequence that changed on an unrelated dataset (the sequence may depend on public values and the
    releases only)."""
    return [
        Finding("sequence", f"{reason} (on {pairs[i].description}): the sequence of releases depends on the data")
        for i, reason in refused.items()
        if pairs[i].unrelated and "sequence" in reason
    ]


def check_integrity(
    info: MechanismInfo,
    pairs: list[Pair],
    runs: list[IntegrityRun],
    seconds: float = 0.0,
    refused: Mapping[int, str] | None = None,
) -> IntegrityResult:
    """All checks on ``runs`` (module docstring)."""
    refused = refused or {}
    findings = check_replay(runs, pairs)
    declared, shifts = check_declarations(runs, pairs)
    findings += declared + check_centres(runs) + check_atoms(runs, pairs) + check_users(runs)
    findings += check_noise_law([(r.pair, r.run) for r in runs], pairs) + check_refused(pairs, refused)
    described = [p.description + (f" — refused: {refused[i][:120]}" if i in refused else "")
                 for i, p in enumerate(pairs)]  # fmt: skip
    return IntegrityResult(len(runs), described, findings, shifts, seconds)


# ----------------------------------------------------------------------------------------------------------------
# θ̂ as a second witness


@dataclass(frozen=True)
class ThetaWitness:
    """Black-box bound on θ̂ from the real runs on D and D′: ε̂_lower with its thresholds' pilot share left out."""

    eps_lower: float
    runs: int  # per side, after the pilot


def theta_witness(theta_d: np.ndarray, theta_dp: np.ndarray, delta: float, confidence: float = 0.95,
                  pilot_share: float = 0.2, records: list[np.ndarray] | None = None) -> ThetaWitness:  # fmt: skip
    """Clopper–Pearson ε̂_lower of θ̂ over the witness's statistics (:func:`dpbench.audit.witness.witness_bound`:
    Fisher and mean-difference directions, random directions, the distance to the differing ``records``), directions
    and thresholds from a pilot share of the runs, the bound from the rest."""
    m = min(len(theta_d), len(theta_dp))
    k = max(10, int(pilot_share * m))
    if m - k < 50:
        return ThetaWitness(0.0, 0)
    a, b = np.asarray(theta_d[:m], dtype=float).reshape(m, -1), np.asarray(theta_dp[:m], dtype=float).reshape(m, -1)
    found = witness_bound(a[:k], b[:k], a[k:], b[k:], delta, confidence, records or [])
    return ThetaWitness(found.eps_lower, m - k)


def differing_records(pair: Pair) -> list[np.ndarray]:
    """x and x·y of the rows that differ between the pair's datasets (non-zero ones): where a leaking θ̂ lands."""
    rows = np.nonzero(np.any(pair.X != pair.X_prime, axis=1) | (pair.y != pair.y_prime))[0]
    out = []
    for X, y in ((pair.X, pair.y), (pair.X_prime, pair.y_prime)):
        out += [v for i in rows for v in (X[i], X[i] * y[i]) if np.any(v)]
    return out
