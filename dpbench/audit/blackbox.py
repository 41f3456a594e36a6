"""Empirical privacy audit: a high-confidence lower bound ε̂_lower on a mechanism's ε (pure logic, no CLI).

Procedure (one mechanism, one claimed (ε, δ)):

1. **Neighbouring pair** (:func:`neighbouring_pair`) built from the mechanism's declared ``neighbour`` /
   ``privacy_model``: a tiny background dataset (n−1 rows, ‖x_i‖ ≤ 1, noiseless labels y_i = x_iᵀθ_bg with
   θ_bg = −a·e₁, |y_i| ≤ 1) plus one *canary* row (x_c, y_c) = (e₁, +1), whose residual 1 + a is as large as the
   bounds allow. ``zero_out``: D' has the canary row replaced by zeros (spec 004 §1.2). ``replace_one`` and the
   local/label models (per-user change): D' has the canary's label flipped, (e₁, −1), which moves every x·y
   statistic and every clipped gradient by 2 (the replace-one sensitivity).
2. **Runs**: the mechanism is run ``pilot`` times on each side to fix a one-dimensional statistic and a grid of
   thresholds, then ``trials`` fresh times on each side (independent random streams).
3. **Statistic**: s(θ̂) = ⟨w, θ̂⟩ with w the Fisher direction Σ̂⁻¹(μ̂₁ − μ̂₀) of the (winsorised) pilot outputs
   (for a canary that moves θ̂ along e₁ this is essentially the estimate's projection on the canary direction).
4. **Bound**: (ε, δ)-DP implies, for every event S and both orders of the pair (P = law on D, Q = law on D'),
   P(S) ≤ e^ε Q(S) + δ, i.e. ε ≥ log((P(S) − δ)/Q(S)). With S ∈ {s > t, s ≤ t} for K pilot thresholds t and both
   orders, the two probabilities are replaced by one-sided Clopper–Pearson bounds (lower for P(S), upper for Q(S)).
   A Bonferroni correction over the 4K one-sided bounds makes all of them hold simultaneously with probability
   ≥ ``confidence``, so ε̂_lower = max over the tests is a valid lower bound on the true ε of the mechanism *at
   this pair* with that confidence (thresholds and direction are fixed by the independent pilot runs).

An audit **fails** when ε̂_lower > claimed ε: the calibration (or its implementation) is wrong with confidence
≥ ``confidence``. ε̂_lower is the joint bound over several statistics of θ̂ (:mod:`dpbench.audit.witness`: the
Fisher direction above, the difference of the means, random directions, the distance to the differing records).
An audit that does not fail proves nothing in general: its verdict is ``inconclusive`` with its power,
``detectable``: the smallest true ε it flags at its N and claim even in the best case of a Gaussian-shift
statistic (:func:`dpbench.audit.stats.detectable_epsilon`; "detects ε ≥ 4.20 only" at claim 2 with N = 20,000).

**Negative controls** (:data:`BROKEN_VARIANTS`) run deliberately miscalibrated copies under the same claim:
``eps_x10`` (noise calibrated for 10ε, any mechanism), ``no_bound`` (the bound check is switched off and the
canary is 10× over the norm bounds, i.e. the sensitivity is ignored; any mechanism that uses ``check_inputs``)
and ``noise_div10`` (noise standard deviations divided by 10, via the ``AUDIT_NOISE_DIV10`` patches a mechanism's module
declares for its calibration functions).
"""

from __future__ import annotations

import contextlib
import math
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpbench.audit.stats import (
    THRESHOLD_LEVELS,
    BoundDetail,
    audit_ceiling,
    detectable_epsilon,
    epsilon_lower_bound,
)
from dpbench.audit.witness import fisher_direction, witness_bound
from dpbench.data._base import Population
from dpbench.linalg import gram_stats
from dpbench.mechanisms._base import as_fit_result
from dpbench.privacy.validate import check_delta, check_epsilon
from dpbench.registry import MechanismInfo

BROKEN_VARIANTS = ("none", "eps_x10", "no_bound", "noise_div10")


def default_shape(info: MechanismInfo, n: int | None = None, d: int | None = None) -> tuple[int, int]:
    """(n, d) of the audit dataset: explicit values, else the contract's ``AuditSetup`` (or ``fit.audit_data``),
    else (100, 2)."""
    setup = getattr(info, "audit", None)
    declared = getattr(info.fit, "audit_data", None)
    shape = {"n": setup.n, "d": setup.d} if setup is not None else dict(declared or {})
    return int(n if n is not None else shape.get("n", 100)), int(d if d is not None else shape.get("d", 2))


def default_hyper(info: MechanismInfo) -> dict[str, Any]:
    """The audit's default hyperparameters: the contract's ``AuditSetup.hyper`` (or ``fit.audit_hyper``)."""
    setup = getattr(info, "audit", None)
    declared = setup.hyper if setup is not None else getattr(info.fit, "audit_hyper", None)
    hyper = dict(declared) if isinstance(declared, Mapping) else {}
    allowed = info.hyperparameters()
    return {k: v for k, v in hyper.items() if k in allowed}


def project(outputs: np.ndarray, w: np.ndarray) -> np.ndarray:
    """s = ⟨w, θ̂⟩ per run; non-finite outputs map to +inf (a fixed post-processing, so DP is preserved)."""
    with np.errstate(invalid="ignore", over="ignore"):
        s = np.asarray(outputs, dtype=float) @ w
    return np.where(np.isfinite(s), s, np.inf)


# ----------------------------------------------------------------------------------------------------------------
# neighbouring datasets


@dataclass
class NeighbourPair:
    """Datasets D (with the canary) and D' (its neighbour), plus the extra inputs mechanisms may need."""

    X: np.ndarray
    y: np.ndarray
    X_prime: np.ndarray
    y_prime: np.ndarray
    canary_index: int
    description: str
    public_X: np.ndarray
    population: Population


def neighbour_kind(info: MechanismInfo) -> str:
    """How D' differs from D: ``zero_out`` (canary row zeroed) or ``label_flip`` (per-record change)."""
    if info.neighbour == "zero_out" and info.privacy_model == "central":
        return "zero_out"
    return "label_flip"


def neighbouring_pair(
    info: MechanismInfo,
    n: int = 100,
    d: int = 2,
    *,
    background_norm: float = 0.2,
    background_slope: float = 1.0,
    canary_scale: float = 1.0,
    rng: np.random.Generator | None = None,
) -> NeighbourPair:
    """Build (D, D') for ``info``'s neighbouring notion (module docstring §1).

    Background rows: x_i = background_norm·u_i, u_i uniform on the sphere (a fixed draw from ``rng``),
    y_i = x_iᵀθ_bg with θ_bg = −background_slope·e₁. Canary (last row): canary_scale·(e₁, +1); ``canary_scale > 1``
    is only used by the ``no_bound`` negative control.
    """
    if n < 2 or d < 1:
        raise ValueError(f"audit dataset needs n ≥ 2 and d ≥ 1, got n={n}, d={d}")
    if not 0 < background_norm <= 1 or not 0 <= background_slope <= 1:
        raise ValueError("background_norm must lie in (0, 1] and background_slope in [0, 1]")
    rng = np.random.default_rng(0) if rng is None else rng
    theta_bg = np.zeros(d)
    theta_bg[0] = -background_slope

    def rows(m: int) -> np.ndarray:
        z = rng.standard_normal((m, d))
        return background_norm * z / np.linalg.norm(z, axis=1, keepdims=True)

    X = rows(n)
    X[-1] = 0.0
    X[-1, 0] = canary_scale
    y = X @ theta_bg
    y[-1] = canary_scale
    X_prime, y_prime = X.copy(), y.copy()
    kind = neighbour_kind(info)
    if kind == "zero_out":
        X_prime[-1] = 0.0
        y_prime[-1] = 0.0
        description = "zero-out: canary row (e₁, 1) of D is the zero row in D'"
    else:
        y_prime[-1] = -y[-1]
        description = "per-record change: canary (e₁, 1) in D, (e₁, −1) in D'"
    if canary_scale != 1.0:
        description += f" (canary ×{canary_scale:g}, over the bounds)"
    population = Population(
        cov=background_norm**2 * np.eye(d) / d, theta=theta_bg, noise_var=0.0, extra={"audit": True}
    )
    return NeighbourPair(X, y, X_prime, y_prime, n - 1, description, rows(n), population)


# ----------------------------------------------------------------------------------------------------------------
# negative controls


def noise_patches(info: MechanismInfo) -> list[tuple[str, Callable[[Callable[..., Any]], Callable[..., Any]]]]:
    """The ``noise_div10`` patches a mechanism's module declares: ``AUDIT_NOISE_DIV10`` maps the module attribute
    holding its calibration to a wrapper dividing every noise std by 10 (e.g. :func:`scaled_output`)."""
    module = sys.modules.get(getattr(info.fit, "__module__", ""), None)
    declared = getattr(module, "AUDIT_NOISE_DIV10", None)
    return list(declared.items()) if isinstance(declared, Mapping) else []


#: the input checks a mechanism's module may call with its ``x_bound`` / ``y_bound`` (``checked_stats``: the
#: check and the Gram statistics in one call, used by the SSP and sketch families); ``no_bound`` patches each present
BOUND_CHECKS = ("check_inputs", "checked_stats")


def _no_bound_check(func: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        kwargs["x_bound"] = None
        kwargs["y_bound"] = None
        return func(*args, **kwargs)

    return wrapper


def broken_available(info: MechanismInfo, broken: str) -> bool:
    """Whether negative control ``broken`` can be built for ``info`` (see module docstring)."""
    module = sys.modules.get(getattr(info.fit, "__module__", ""), None)
    if broken in ("none", "eps_x10"):
        return True
    if broken == "no_bound":
        return module is not None and any(hasattr(module, attr) for attr in BOUND_CHECKS)
    if broken == "noise_div10":
        return module is not None and bool(noise_patches(info))
    raise ValueError(f"broken must be one of {BROKEN_VARIANTS}, got {broken!r}")


@contextlib.contextmanager
def broken_copy(info: MechanismInfo, broken: str) -> Iterator[None]:
    """Temporarily miscalibrate ``info``'s module (``no_bound``, ``noise_div10``); restores it on exit."""
    if not broken_available(info, broken):
        raise ValueError(f"negative control {broken!r} is not available for mechanism {info.name!r}")
    module = sys.modules.get(info.fit.__module__)
    patches = []
    if broken == "no_bound":
        patches = [(attr, _no_bound_check) for attr in BOUND_CHECKS if hasattr(module, attr)]
    elif broken == "noise_div10":
        patches = noise_patches(info)
    saved = {attr: getattr(module, attr) for attr, _ in patches}
    try:
        for attr, make in patches:
            setattr(module, attr, make(saved[attr]))
        yield
    finally:
        for attr, original in saved.items():
            setattr(module, attr, original)


# ----------------------------------------------------------------------------------------------------------------
# running an audit


@dataclass
class AuditResult:
    """Outcome of one audit (one mechanism, one claimed ε)."""

    mechanism: str
    privacy_model: str
    neighbour: str
    epsilon: float
    delta: float
    trials: int
    broken: str
    eps_lower: float
    ceiling: float
    detail: BoundDetail | None
    pair: str
    seconds: float
    status: str  # inconclusive | FAIL | caught | missed | reference | error
    message: str = ""
    s1: np.ndarray = field(default_factory=lambda: np.empty(0), repr=False)
    s0: np.ndarray = field(default_factory=lambda: np.empty(0), repr=False)
    #: power: the smallest true ε this audit flags at its N and claim, in the best case of a Gaussian-shift
    #: statistic (:func:`dpbench.audit.stats.detectable_epsilon`); a pass says nothing about ε below it
    detectable: float = float("nan")
    #: the θ̂ statistic that gave ε̂_lower (:mod:`dpbench.audit.witness`)
    statistic: str = ""

    @property
    def violated(self) -> bool:
        """ε̂_lower > claimed ε (the audit rejects the claim)."""
        return self.eps_lower > self.epsilon


def mechanism_inputs(info: MechanismInfo, X: np.ndarray, y: np.ndarray, pair: NeighbourPair) -> dict[str, Any]:
    available = {"stats": None, "public_X": pair.public_X, "population": pair.population}
    out = {}
    for name in info.needs:
        out[name] = gram_stats(X, y) if name == "stats" else available[name]
    return out


def run_mechanism(
    info: MechanismInfo,
    X: np.ndarray,
    y: np.ndarray,
    epsilon: float,
    delta: float,
    runs: int,
    rng: np.random.Generator,
    inputs: Mapping[str, Any],
    hyper: Mapping[str, Any],
) -> np.ndarray:
    """``runs`` outputs θ̂ of the mechanism on (X, y), stacked as a (runs, p) array."""
    outputs = [
        np.ravel(as_fit_result(info.fit(X, y, epsilon, delta, rng, **inputs, **hyper)).theta) for _ in range(runs)
    ]
    return np.asarray(outputs, dtype=float)


def audit(
    info: MechanismInfo,
    epsilon: float,
    delta: float = 1e-5,
    *,
    trials: int = 20_000,
    pilot: int | None = None,
    n: int | None = None,
    d: int | None = None,
    seed: int = 0,
    confidence: float = 0.95,
    broken: str = "none",
    hyper: Mapping[str, Any] | None = None,
    background_norm: float = 0.2,
    max_seconds: float | None = None,
) -> AuditResult:
    """Audit ``info`` at claimed (ε, δ) (module docstring); ``broken`` selects a negative control.

    ``hyper`` defaults to :func:`default_hyper`. ``max_seconds`` caps the audit's time: from the speed of 10 timed
    runs, the pilot (≥ 100 per side) gets about a quarter and the main runs (N lowered, never below the pilot size)
    the rest; the N used is reported.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    if int(trials) != trials or trials < 10:
        raise ValueError(f"trials must be an integer ≥ 10, got {trials!r}")
    if broken not in BROKEN_VARIANTS:
        raise ValueError(f"broken must be one of {BROKEN_VARIANTS}, got {broken!r}")
    pilot = int(pilot) if pilot is not None else max(200, min(2000, trials // 5))
    hyper = default_hyper(info) if hyper is None else dict(hyper)
    n, d = default_shape(info, n, d)
    unknown = sorted(set(hyper) - set(info.hyperparameters()))
    if unknown:
        raise ValueError(f"hyper: unknown hyperparameter {unknown[0]!r} of {info.name!r}")
    start = time.perf_counter()
    seeds = np.random.SeedSequence([seed, 0xA0D17]).spawn(6)
    pair = neighbouring_pair(
        info, n, d, background_norm=background_norm, canary_scale=10.0 if broken == "no_bound" else 1.0,
        rng=np.random.default_rng(seeds[0]),
    )  # fmt: skip
    run_eps = 10.0 * epsilon if broken == "eps_x10" else epsilon
    base = dict(
        mechanism=info.name, privacy_model=info.privacy_model, neighbour=info.neighbour, epsilon=epsilon,
        delta=delta, trials=int(trials), broken=broken, pair=pair.description,
    )  # fmt: skip
    try:
        with broken_copy(info, broken) if broken in ("no_bound", "noise_div10") else contextlib.nullcontext():
            sides = {
                "D": (pair.X, pair.y, mechanism_inputs(info, pair.X, pair.y, pair)),
                "D'": (pair.X_prime, pair.y_prime, mechanism_inputs(info, pair.X_prime, pair.y_prime, pair)),
            }

            def sample(side: str, runs: int, stream: np.random.SeedSequence) -> np.ndarray:
                X, y, inputs = sides[side]
                return run_mechanism(info, X, y, run_eps, delta, runs, np.random.default_rng(stream), inputs, hyper)

            if max_seconds is not None:  # time 10 runs, then give the pilot ≤ 1/4 and the main runs ≤ 3/4
                tick = time.perf_counter()
                sample("D", 10, seeds[5])
                per_run = (time.perf_counter() - tick) / 10
                pilot = max(100, min(pilot, int(0.25 * max_seconds / (2 * per_run))))
                if 2 * trials * per_run > 0.75 * max_seconds:
                    trials = max(pilot, int(0.75 * max_seconds / (2 * per_run)))
                    base["trials"] = trials
            p1, p0 = sample("D", pilot, seeds[1]), sample("D'", pilot, seeds[2])
            w = fisher_direction(p1, p0)
            pooled = np.concatenate([project(p1, w), project(p0, w)])
            thresholds = np.quantile(pooled[np.isfinite(pooled)], THRESHOLD_LEVELS)
            m1, m0 = sample("D", trials, seeds[3]), sample("D'", trials, seeds[4])
    except Exception as err:  # noqa: BLE001 - any mechanism failure becomes a visible 'error' row
        return AuditResult(
            **base, ceiling=audit_ceiling(trials, delta, confidence), eps_lower=float("nan"), detail=None,
            seconds=time.perf_counter() - start, status="error",
            message=f"{type(err).__name__}: {err}",
        )  # fmt: skip
    s1, s0 = project(m1, w), project(m0, w)
    records = [v for v in (pair.X[pair.canary_index], pair.X[pair.canary_index] * pair.y[pair.canary_index],
                           pair.X_prime[pair.canary_index],
                           pair.X_prime[pair.canary_index] * pair.y_prime[pair.canary_index]) if np.any(v)]  # fmt: skip
    eps_lower, detail = epsilon_lower_bound(s1, s0, thresholds, delta, confidence)  # the Fisher statistic alone
    witness = witness_bound(p1, p0, m1, m0, delta, confidence, records, seed) if info.private else None
    if witness is not None:  # a private mechanism: the joint bound over every statistic of θ̂ (the reference
        eps_lower = witness.eps_lower  # keeps the Fisher bound, which reaches the ceiling)
    ceiling = audit_ceiling(trials, delta, confidence, n_thresholds=np.unique(thresholds).size)
    violated = eps_lower > epsilon
    detectable = detectable_epsilon(trials, epsilon, delta, confidence) if info.private else float("nan")
    message = ""
    if not info.private:
        status = "reference"
    elif broken == "none":
        status = "FAIL" if violated else "inconclusive"
        message = (
            f"θ̂ bound {eps_lower:.3f} > claimed {epsilon:g} ({witness.statistic})"
            if violated
            else f"detects ε ≥ {detectable:.2f} only (N = {trials:,} runs per side; a weaker break passes)"
        )
    else:
        status = "caught" if violated else "missed"
    return AuditResult(
        **base, ceiling=ceiling, eps_lower=eps_lower, detail=detail, seconds=time.perf_counter() - start,
        status=status, s1=s1, s0=s0, detectable=detectable, message=message,
        statistic=witness.statistic if witness is not None else "Fisher direction",
    )  # fmt: skip


# ----------------------------------------------------------------------------------------------------------------
# reporting


def _short(message: str, width: int = 90) -> str:
    message = message.replace("|", "/").replace("\n", " ")
    return message if len(message) <= width else message[: width - 1] + "…"


def format_table(results: list[AuditResult], markdown: bool = False) -> str:
    """A small table: mechanism, model/neighbour, control, claimed ε, ε̂_lower, ceiling, status."""
    header = ["mechanism", "privacy", "neighbour", "control", "ε claimed", "δ", "ε̂_lower", "ceiling", "N",
              "detects ε ≥", "status"]  # fmt: skip
    rows = []
    for r in results:
        lower = "—" if math.isnan(r.eps_lower) else f"{r.eps_lower:.3f}"
        rows.append([
            r.mechanism, r.privacy_model, r.neighbour, r.broken, f"{r.epsilon:g}", f"{r.delta:g}", lower,
            f"{r.ceiling:.2f}", str(r.trials), "—" if math.isnan(r.detectable) else f"{r.detectable:.2f}",
            r.status + (f" ({_short(r.message)})" if r.message else ""),
        ])  # fmt: skip
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        return "\n".join(lines)
    widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in rows]
    return "\n".join(lines)


def plot_histograms(result: AuditResult, path: Any) -> Any:
    """Save the ``audit_histogram`` figure of ``result`` (:mod:`dpbench.analysis.figures.audit`: the statistic on
    D and D', the threshold achieving ε̂_lower) at ``path``, atomically, at the one DPI; returns the path."""
    from dpbench.analysis.figures.kinds import draw
    from dpbench.analysis.figures.save import save_figure

    return save_figure(draw("audit_histogram", result).figure, path)
