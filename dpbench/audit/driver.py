"""One white-box audit: pair → pilot real runs → batched statistic → certified bound, GDP estimate, exact ε.

Reported per (mechanism, claimed ε):

* ``eps_exact`` — the yardstick: exact ε of the audited releases at the worst-case pair (closed-form GDP for
  Gaussian releases, PLD for Laplace/ℓ2-ball ones; for Gaussian-mixing sketches, whose privacy loss has no closed
  form, Monte Carlo over the exact log-likelihood ratio of the batched process — δ(ε) = E_D[(1 − e^{ε − L})₊]
  and its mirror, 4·10⁶ draws per side, with a 95% interval in ``eps_exact_ci``). When the shifts depend on
  the history (``history: pooled``) it is the exact ε of the batched process, whose history is uniform over the
  pool and public: δ(ε) = mean over histories of δ_GDP(ε; μ_history). ``eps_declared``: the
  exact ε of the same releases at their *declared* sensitivities (the tightest the mechanism's analysis certifies);
  claim − eps_declared is the accounting slack of its composition, eps_declared − eps_exact the slack of sensitivity
  bounds no single pair attains.
* ``eps_lower`` — certified: the Clopper–Pearson bound (:func:`dpbench.audit.stats.epsilon_lower_bound`) over the
  thresholded log-likelihood ratio; thresholds come from an independent batch.
* ``estimate`` — Gaussian-DP: μ̂ from the two samples of the statistic, ε̂ = ε(μ̂, δ), 95% interval (valid when the
  statistic is Gaussian, which is checked; otherwise, for sketch releases, ``pld``: the same δ(ε) expectation over
  the audit's own draws of the exact log-likelihood ratio, and for other kinds the empirical privacy-profile
  estimate).

Verdicts: an audit **flags** the claim when eps_lower > ε (certified layer) or when the estimate's interval lies
above ε with ε̂ > 1.02ε (GDP layer), when the real runs show noise that is not the declared law (``noise``) or a
statistic that does not follow the declared laws (``model``: KS p < 10⁻⁴), when θ̂'s own black-box bound exceeds ε
(``theta``), or when an integrity check fails (:mod:`dpbench.audit.integrity`: ``replay``, ``recording``,
``scale``, ``sensitivity``, ``atom``, ``exact_ols``, ``users``); :attr:`WhiteboxResult.reasons` says what broke.
Negative controls (``x1.3``, ``x3``) multiply every noise scale by the factor c that makes the exact ε at the pair
equal 1.3ε (3ε) (:func:`dpbench.privacy.exact.noise_factor_for_epsilon`; with sketch releases
:func:`sketch_noise_factor`, which also multiplies the mixing noise η) while the claim stays ε.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.optimize import brentq

from dpbench.audit.integrity import (
    IntegrityResult,
    ThetaWitness,
    check_integrity,
    differing_records,
    integrity_pairs,
    integrity_runs,
    theta_witness,
)
from dpbench.audit.pairs import PairSpec, find_worst_pair, make_pair, public_rows
from dpbench.audit.stats import (
    DEEP_LEVELS,
    GdpEstimate,
    LossEpsilon,
    ProfileEstimate,
    audit_ceiling,
    epsilon_lower_bound,
    gdp_estimate,
    gdp_mixture_estimate,
    loss_epsilon,
    profile_estimate,
    thresholds_from,
)
from dpbench.audit.whitebox import (
    NO_CLOSED_FORM,
    NoiseCheck,
    check_noise,
    declared_epsilon,
    exact_releases,
    gaussian_pool,
    history_fixed,
    model_check,
    pair_epsilon,
    pair_run,
    pooled_epsilon,
    real_statistic,
    sample_statistic,
    sampled_epsilon,
    slots_of,
)
from dpbench.privacy.exact import noise_factor_for_epsilon
from dpbench.privacy.validate import check_delta, check_epsilon
from dpbench.registry import MechanismInfo

#: the estimate layer flags a claim only when its 95% interval lies above ε *and* ε̂ exceeds ε by this fraction:
#: an exactly calibrated mechanism (ε_exact = ε) would otherwise be flagged in 2.5% of audits
ESTIMATE_MARGIN = 0.02
#: histories kept for the batched sample when release laws depend on the history
POOLED_HISTORIES = 40
#: the model check (real-run statistic vs batched draws from the declared laws) flags below this KS p-value
MODEL_ALPHA = 1e-4
#: the declared releases may compose to the claim within this relative round-off (exact calibrations sit on it)
DECLARED_RTOL = 1e-3
#: negative controls of the white-box audit: the exact ε of the shrunk copy as a multiple of the claim
CONTROLS = {"none": 1.0, "x1.3": 1.3, "x3": 3.0}


@dataclass
class WhiteboxResult:
    """Outcome of one white-box audit (one mechanism, one claimed ε, one control)."""

    mechanism: str
    privacy_model: str
    neighbour: str
    view: str
    epsilon: float
    delta: float
    control: str
    noise_factor: float
    releases: tuple[str, ...]
    runs: int
    pilot: int
    history: str  # fixed | pooled
    eps_exact: float | None
    eps_declared: float | None
    eps_lower: float
    ceiling: float
    gdp: GdpEstimate | None
    profile: ProfileEstimate | None
    model_p: float
    noise: list[NoiseCheck]
    pair: str
    seconds: float
    status: str  # pass | FAIL | caught | missed | error
    message: str = ""
    eps_exact_ci: tuple[float, float] | None = None  # Monte-Carlo interval of eps_exact (sketch releases)
    loss: LossEpsilon | None = None  # estimate layer for a non-Gaussian log-likelihood ratio (sketches)
    integrity: IntegrityResult | None = None  # the checks of the declarations (replay, sensitivity, atoms, ...)
    witness: ThetaWitness | None = None  # black-box ε̂_lower of θ̂ from the same real runs
    eps_lower_real: float = float("nan")  # certified bound from the real runs' statistic alone (central view)
    setting: str = ""  # "" (the audit's pair) or the run's own setting ("run: n = 10,000, δ = 1e-08")
    records: tuple[Any, Any] | None = None  # the pair's (canary, replacement) records, reused at the run setting
    cpu_seconds: float = float("nan")  # CPU time of the audit in its process (wall ``seconds`` depends on the load)
    replay_cpu_seconds: float = 0.0  # of which the integrity checks' real paired runs
    s1: np.ndarray = field(default_factory=lambda: np.empty(0), repr=False)
    s0: np.ndarray = field(default_factory=lambda: np.empty(0), repr=False)

    @property
    def method(self) -> str:
        if self.gdp is not None and self.gdp.gaussian:
            return "gdp"
        return "pld" if self.loss is not None else "profile"

    @property
    def estimate(self) -> tuple[float, float, float]:
        """(ε̂, lower, upper) of the estimate layer (GDP when the statistic is Gaussian, else the profile)."""
        if self.method == "gdp":
            return self.gdp.eps, self.gdp.eps_lo, self.gdp.eps_hi
        if self.method == "pld":
            return self.loss.eps, self.loss.eps_lo, self.loss.eps_hi
        if self.profile is None:
            return float("nan"), float("nan"), float("nan")
        return self.profile.eps, self.profile.eps_lo, self.profile.eps_hi

    @property
    def eps_ref(self) -> float:
        """Yardstick: the exact ε at the pair where computable, else the claim."""
        return self.eps_exact if self.eps_exact is not None else self.epsilon

    @property
    def flags(self) -> tuple[str, ...]:
        """Which checks refute the claim: "cert" (ε̂_lower > ε), "gdp"/"pld"/"profile" (interval above ε), "noise"
        (real noise ≠ declared law), "model" (real-run statistic ≠ its declared law, KS p < 10⁻⁴), "real" (the
        certified bound from the real runs' statistic alone > ε), "theta" (θ̂'s
        black-box bound > ε), and the integrity checks (:data:`dpbench.audit.integrity.CHECKS`)."""
        out = []
        if self.eps_lower > self.epsilon:
            out.append("cert")
        eps_hat, lower, _ = self.estimate
        if lower > self.epsilon and eps_hat > (1.0 + ESTIMATE_MARGIN) * self.epsilon:
            out.append(self.method)
        if any(not c.ok for c in self.noise):
            out.append("noise")
        if self.model_p < MODEL_ALPHA:
            out.append("model")
        if self.eps_lower_real > self.epsilon:
            out.append("real")
        if self.witness is not None and self.witness.eps_lower > self.epsilon:
            out.append("theta")
        if self.over_declared:
            out.append("declared")
        if self.integrity is not None:
            out += self.integrity.flags
        return tuple(out)

    @property
    def reasons(self) -> list[str]:
        """What broke, in words (one line per failed check)."""
        out = []
        if self.eps_lower > self.epsilon:
            out.append(f"certified ε̂_lower {self.eps_lower:.3f} > claimed {self.epsilon:g}")
        eps_hat, lower, upper = self.estimate
        if lower > self.epsilon and eps_hat > (1.0 + ESTIMATE_MARGIN) * self.epsilon:
            out.append(f"{self.method} ε̂ {eps_hat:.3f} [{lower:.3f}, {upper:.3f}] > claimed {self.epsilon:g}")
        out += [
            f"release {c.name!r}: real noise {'variance' if c.law == 'normal' else 'mean |z|'} "
            f"{c.statistic:.3f}× the declared law ({c.count} draws)"
            for c in self.noise
            if not c.ok
        ]
        if self.model_p < MODEL_ALPHA:
            out.append(f"the real runs' statistic does not follow the declared laws (KS p = {self.model_p:.1e})")
        if self.eps_lower_real > self.epsilon:
            out.append(
                f"certified ε̂_lower from the real runs alone {self.eps_lower_real:.3f} > claimed {self.epsilon:g}"
            )
        if self.witness is not None and self.witness.eps_lower > self.epsilon:
            out.append(f"θ̂ black-box ε̂_lower {self.witness.eps_lower:.3f} > claimed {self.epsilon:g}")
        if self.over_declared:
            out.append(f"the declared releases compose to ε = {self.eps_declared:.3f} > claimed {self.epsilon:g} at "
                       f"δ = {self.delta:g}{' (' + self.setting + ')' if self.setting else ''}: exact composition "
                       "at their own declared scales and sensitivities — a calibration that does not reach this "
                       "(ε, δ)")  # fmt: skip
        if self.integrity is not None:
            out += [f.message for f in self.integrity.findings]
        return out

    @property
    def over_declared(self) -> bool:
        """The releases' own declarations (scales, sensitivities) compose to more than the claim at this δ."""
        return self.eps_declared is not None and self.eps_declared > self.epsilon * (1.0 + DECLARED_RTOL)

    @property
    def violated(self) -> bool:
        return bool(self.flags)

    @property
    def tightness(self) -> float:
        """ε̂ / ε_ref: how much of the yardstick the estimate recovers."""
        return self.estimate[0] / self.eps_ref if self.eps_ref > 0 else float("nan")


#: histories and Monte-Carlo draws per side of the shrink-factor search for sketch releases (common random numbers)
SKETCH_SEARCH = (20, 1_000_000)


def sketch_noise_factor(
    info: MechanismInfo,
    pair: Any,
    view: str,
    epsilon: float,
    delta: float,
    hyper: Mapping[str, Any],
    target: float,
    seed: np.random.SeedSequence,
) -> float:
    """The noise factor c whose copy (every Gaussian scale and every mixing noise η × c) has exact ε = ``target``
    at the pair, when a release is a Gaussian-mixing sketch: ε(c) by :func:`sampled_epsilon` over a few histories
    with common random numbers (so ε(c) is smooth in c), root-found in log c."""
    histories, draws = SKETCH_SEARCH
    run_seeds = seed.spawn(histories)
    mc_seed = seed.spawn(1)[0]

    def excess(log_c: float) -> float:
        c = math.exp(log_c)
        pool = [slots_of(pair_run(info, pair, "D", epsilon, delta, s, hyper, c), view) for s in run_seeds]
        return sampled_epsilon(pool, delta, np.random.default_rng(mc_seed), size=draws).eps - target

    lo = 0.0
    while excess(lo) > 0:  # the honest copy already exceeds the target: grow the noise
        lo += 1.0
    hi = lo - 1.0
    while excess(hi) < 0:
        hi -= 1.0
        if hi < -12:
            raise RuntimeError(f"no noise factor ≥ e^-12 reaches ε = {target:g}")
    return math.exp(brentq(excess, hi, lo, xtol=2e-3))


def audit_whitebox(
    info: MechanismInfo,
    epsilon: float,
    delta: float = 1e-5,
    *,
    runs: int = 1_000_000,
    pilot: int = 200,
    seed: int = 0,
    confidence: float = 0.95,
    control: str = "none",
    hyper: Mapping[str, Any] | None = None,
    spec: PairSpec | None = None,
    view: str | None = None,
    keep_samples: int = 0,
    replays: int = 0,
    replay_seconds: float | None = None,
    records: tuple[Any, Any] | None = None,
    setting: str = "",
) -> WhiteboxResult:
    """White-box audit of ``info`` at claimed (ε, δ) (module docstring). ``runs`` per side (batched), ``pilot`` real
    paired runs per side; ``view`` defaults to ``local`` for local-DP mechanisms, ``central`` otherwise.

    ``replays`` > 0 (control ``none`` only): the integrity checks (:mod:`dpbench.audit.integrity`) on that many real
    paired runs over the pair family (at least 4·``pilot``; ``replay_seconds`` stops early once that minimum is
    done); the runs on the worst pair then serve as the pilot. ``records`` = (canary, replacement) builds the pair
    from these records instead of searching it (the run setting reuses the records of the audit's pair);
    ``setting`` labels the result."""
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    if control not in CONTROLS:
        raise ValueError(f"control must be one of {tuple(CONTROLS)}, got {control!r}")
    if int(runs) != runs or runs < 1000 or int(pilot) != pilot or pilot < 10:
        raise ValueError(f"need runs ≥ 1000 and pilot ≥ 10 (integers), got runs={runs!r}, pilot={pilot!r}")
    view = view or ("local" if info.privacy_model == "local" else "central")
    spec = spec or PairSpec()
    hyper = dict(hyper or {})
    start, start_cpu = time.perf_counter(), time.process_time()
    seeds = np.random.SeedSequence([seed, 0x3B17E]).spawn(5)
    base = dict(
        mechanism=info.name, privacy_model=info.privacy_model, neighbour=info.neighbour, view=view, epsilon=epsilon,
        delta=delta, control=control, runs=int(runs), pilot=int(pilot), setting=setting,
    )  # fmt: skip
    integrity: IntegrityResult | None = None
    witness: ThetaWitness | None = None
    replay_cpu = 0.0
    try:
        if records is None:
            pair, _ = find_worst_pair(info, spec, view, epsilon, delta, hyper, seed)
        else:
            pair = make_pair(info, spec, records[0], records[1], public_rows(spec, np.random.default_rng([seed, 11])))
        factor = 1.0
        if control != "none":
            probe = slots_of(pair_run(info, pair, "D", epsilon, delta, seeds[3], hyper), view)
            if any(s.kind in NO_CLOSED_FORM for s in probe):
                factor = sketch_noise_factor(info, pair, view, epsilon, delta, hyper, CONTROLS[control] * epsilon,
                                             seeds[3])  # fmt: skip
            else:
                factor = noise_factor_for_epsilon(exact_releases(probe), CONTROLS[control] * epsilon, delta)
        if control == "none" and replays:
            started, started_cpu = time.perf_counter(), time.process_time()
            pairs = integrity_pairs(info, spec, pair, seed, hyper)
            refused: dict[int, str] = {}
            runs_all = integrity_runs(info, pairs, epsilon, delta, hyper, max(int(replays), 6 * pilot), seed,
                                      max_seconds=replay_seconds, minimum=6 * pilot, refused=refused)  # fmt: skip
            integrity = check_integrity(info, pairs, runs_all, time.perf_counter() - started, refused)
            replay_cpu = time.process_time() - started_cpu
            at_worst = [r.run for r in runs_all if r.pair == 0]
            real = [r.releases for r in at_worst if r.side == "D"] + [r.releases for r in at_worst if r.side != "D"]
            n_d = sum(r.side == "D" for r in at_worst)
            everything = [r.run.releases for r in runs_all]
            witness = theta_witness(
                np.array([r.theta for r in at_worst if r.side == "D"]),
                np.array([r.theta for r in at_worst if r.side != "D"]),
                delta,
                confidence,
                records=differing_records(pair),
            )
        else:
            run_seeds = seeds[0].spawn(2 * pilot)
            real = [
                pair_run(info, pair, "D" if i < pilot else "D'", epsilon, delta, s, hyper, factor)
                for i, s in enumerate(run_seeds)
            ]
            n_d, everything = pilot, real
    except Exception as err:  # noqa: BLE001 - a mechanism that cannot be audited becomes a visible error row
        return WhiteboxResult(
            **base, noise_factor=float("nan"), releases=(), history="—", eps_exact=None, eps_declared=None,
            eps_lower=float("nan"), ceiling=float("nan"), gdp=None, profile=None, model_p=float("nan"), noise=[],
            pair="", seconds=time.perf_counter() - start, status="error", message=f"{type(err).__name__}: {err}",
        )  # fmt: skip
    pool = [slots_of(run, view) for run in real]
    fixed = history_fixed(pool)
    audited = tuple(dict.fromkeys(
        rp.release.name for run, slots in zip(real, pool, strict=True) for rp, slot in zip(run, slots, strict=True)
        if slot.kind != "none" and slot.divergence() > 0
    ))  # fmt: skip
    model_p = float("nan")
    real_d = real_dp = np.empty(0)
    if view == "central":  # the real runs' statistic against draws from the declared laws at their own histories
        check_rng = np.random.default_rng(seeds[4])
        real_d = np.array([real_statistic(r) for r in real[:n_d]])
        real_dp = np.array([real_statistic(r) for r in real[n_d:]])
        model_p = min(
            model_check(real_d, sample_statistic(pool, "D", max(20 * real_d.size, 10_000), check_rng)),
            model_check(real_dp, sample_statistic(pool, "D'", max(20 * real_dp.size, 10_000), check_rng)),
        )
    if not fixed:  # few histories, many runs each: the per-history μ̂ of the GDP layer stays precise
        keep = np.random.default_rng(seeds[3]).choice(len(pool), size=min(len(pool), POOLED_HISTORIES), replace=False)
        pool = [pool[i] for i in sorted(keep)]
    rng = np.random.default_rng(seeds[1])
    threshold_sample = np.concatenate([
        sample_statistic(pool, "D", 100_000, rng), sample_statistic(pool, "D'", 100_000, rng)
    ])  # fmt: skip
    thresholds = thresholds_from(threshold_sample, DEEP_LEVELS)
    eps_lower_real = float("nan")
    if real_d.size >= 50 and real_dp.size >= 50 and np.isfinite(real_d).all() and np.isfinite(real_dp).all():
        # the certified bound from the real runs alone (thresholds from the independent batch): no model assumed
        eps_lower_real = epsilon_lower_bound(real_d, real_dp, thresholds_from(threshold_sample), delta,
                                             confidence)[0]  # fmt: skip
    rng = np.random.default_rng(seeds[2])
    s1, i1 = sample_statistic(pool, "D", int(runs), rng, return_index=True)
    s0, i0 = sample_statistic(pool, "D'", int(runs), rng, return_index=True)
    eps_lower, _ = epsilon_lower_bound(s1, s0, thresholds, delta, confidence)
    gdp = gdp_estimate(s1, s0, delta, confidence)
    if not fixed and not gdp.gaussian and gaussian_pool(pool):  # Gaussian given the public history: μ per history
        gdp = gdp_mixture_estimate(s1, i1, s0, i0, len(pool), delta, confidence)
    sketch = any(s.kind in NO_CLOSED_FORM for slots in pool for s in slots)
    loss = loss_epsilon(s1, s0, delta, confidence) if sketch and not gdp.gaussian else None
    profile = None if gdp.gaussian or loss is not None else profile_estimate(s1, s0, delta, confidence)
    worst = max(pool, key=lambda slots: sum(s.divergence() for s in slots))
    eps_exact = pair_epsilon(worst, delta) if fixed else pooled_epsilon(pool, delta)
    if eps_exact is None and not fixed:
        eps_exact = pair_epsilon(worst, delta)
    eps_exact_ci = None
    if eps_exact is None and sketch:  # no closed form: Monte Carlo over the exact privacy loss of the pool
        sampled = sampled_epsilon(pool, delta, np.random.default_rng(seeds[3].spawn(1)[0]), confidence=confidence)
        eps_exact, eps_exact_ci = sampled.eps, (sampled.eps_lo, sampled.eps_hi)
    eps_declared = declared_epsilon(real[0], view, delta)
    result = WhiteboxResult(
        **base, noise_factor=factor, releases=audited, history="fixed" if fixed else "pooled", eps_exact=eps_exact,
        eps_declared=eps_declared, eps_lower=eps_lower,
        ceiling=audit_ceiling(int(runs), delta, confidence, n_thresholds=thresholds.size), gdp=gdp,
        profile=profile, loss=loss, eps_exact_ci=eps_exact_ci, model_p=model_p, noise=check_noise(everything),
        integrity=integrity, witness=witness, eps_lower_real=eps_lower_real,
        cpu_seconds=time.process_time() - start_cpu, replay_cpu_seconds=replay_cpu,
        pair=pair.description, records=(pair.canary, pair.other),
        seconds=time.perf_counter() - start, status="",
        s1=s1[:keep_samples].copy(), s0=s0[:keep_samples].copy(),
    )  # fmt: skip
    if control == "none":
        result.status = "FAIL" if result.violated else "pass"
        result.message = "; ".join(result.reasons)
    else:
        result.status = "caught" if result.violated else "missed"
    return result


# ----------------------------------------------------------------------------------------------------------------
# reporting

WHITEBOX_HEADER = (
    "mechanism", "neighbour", "view", "releases audited", "control", "setting", "ε claimed", "exact ε", "declared ε",
    "ε̂_lower (certified)", "ε̂ [95%]", "method", "tightness", "history", "integrity (replays)", "θ̂ ε̂_lower",
    "status",
)  # fmt: skip


def _num(value: float | None, digits: int = 3) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float) and math.isnan(value):
        return "—"
    return f"{value:.{digits}f}"


def _exact(r: WhiteboxResult) -> str:
    """exact ε; with its Monte-Carlo 95% interval as "ε [lo, hi] mc" for sketch releases."""
    if r.eps_exact_ci is None:
        return _num(r.eps_exact)
    return f"{r.eps_exact:.3f} [{r.eps_exact_ci[0]:.3f}, {r.eps_exact_ci[1]:.3f}] mc"


def whitebox_row(r: WhiteboxResult) -> list[str]:
    """One table row (:data:`WHITEBOX_HEADER`)."""
    if r.status in ("error", "n/a"):
        return [r.mechanism, r.neighbour, r.view, "—", r.control, _setting(r), f"{r.epsilon:g}", "—", "—", "—", "—",
                "—", "—", "—", "—", "—", f"{r.status} ({r.message[:80]})"]  # fmt: skip
    eps_hat, lo, hi = r.estimate
    releases = ", ".join(r.releases) if len(r.releases) <= 3 else f"{', '.join(r.releases[:2])}, … ({len(r.releases)})"
    status = r.status + (f" [{'+'.join(r.flags)}]" if r.flags else "")
    return [
        r.mechanism, r.neighbour, r.view, releases, r.control, _setting(r), f"{r.epsilon:g}", _exact(r),
        _num(r.eps_declared), _num(r.eps_lower), f"{eps_hat:.3f} [{lo:.3f}, {hi:.3f}]", r.method,
        _num(r.tightness, 2), r.history, _integrity(r), "—" if r.witness is None else _num(r.witness.eps_lower),
        status,
    ]  # fmt: skip


def _setting(r: WhiteboxResult) -> str:
    """Where the audit ran: the audit's pair or the run's own setting, with its δ."""
    return f"{r.setting or 'pair'}, δ = {r.delta:.3g}"


def _integrity(r: WhiteboxResult) -> str:
    """``ok (N)`` or the failed checks with N, the replays; ``—`` when the checks did not run (controls, later ε)."""
    if r.integrity is None:
        return "—"
    flags = r.integrity.flags
    return f"{'+'.join(flags) if flags else 'ok'} ({r.integrity.runs:,})"


def format_whitebox_table(results: list[WhiteboxResult], markdown: bool = False) -> str:
    """The audit table: per mechanism, ε and control, the yardsticks and both layers."""
    rows = [whitebox_row(r) for r in results]
    header = list(WHITEBOX_HEADER)
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(c.replace("|", "/") for c in row) + " |" for row in rows]
        return "\n".join(lines)
    widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in rows]
    return "\n".join(lines)
