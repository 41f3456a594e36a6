"""Statistics of the audit (pure functions of samples): the certified Clopper–Pearson lower bound on ε, the
Gaussian-DP estimate μ̂ → ε̂ with its 95% interval, and an empirical privacy-profile estimate for non-Gaussian
statistics.

Notation: ``s1`` are samples of a scalar test statistic from runs on D (the dataset with the canary), ``s0`` from runs
on its neighbour D′. A larger statistic should point to D (the log-likelihood ratio log p_D/p_D′ does).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import beta, norm

from dpbench.privacy.gdp import gdp_epsilon, mixture_epsilon

#: quantile levels of the pooled pilot statistic used as thresholds (tails first: that is where ε lives)
THRESHOLD_LEVELS = (
    0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.35, 0.5,
    0.65, 0.8, 0.9, 0.95, 0.98, 0.99, 0.995, 0.998, 0.999, 0.9995,
)  # fmt: skip
#: levels for large samples (≥ 10⁵ runs per side): deeper tails, where a near-tight bound lives
DEEP_LEVELS = tuple(sorted({*THRESHOLD_LEVELS, 1e-5, 2e-5, 5e-5, 1e-4, 2e-4, 1 - 1e-4, 1 - 2e-4, 1 - 1e-5, 1 - 2e-5,
                            1 - 5e-5}))  # fmt: skip


def clopper_pearson(successes: int, trials: int, alpha: float) -> tuple[float, float]:
    """One-sided exact binomial bounds (lo, hi): P(p ≥ lo) ≥ 1 − α and P(p ≤ hi) ≥ 1 − α separately.

    lo = Beta⁻¹(α; k, n − k + 1) (0 if k = 0), hi = Beta⁻¹(1 − α; k + 1, n − k) (1 if k = n).
    """
    if trials < 1 or not 0 <= successes <= trials:
        raise ValueError(f"need 0 ≤ successes ≤ trials and trials ≥ 1, got {successes}/{trials}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
    lo = 0.0 if successes == 0 else float(beta.ppf(alpha, successes, trials - successes + 1))
    hi = 1.0 if successes == trials else float(beta.ppf(1.0 - alpha, successes + 1, trials - successes))
    return lo, hi


def _epsilon_from(p_lower: float, q_upper: float, delta: float) -> float:
    """log((p − δ)/q), the ε that P(S) = p, Q(S) = q forces; −inf when p ≤ δ."""
    if p_lower <= delta:
        return -math.inf
    if q_upper <= 0.0:
        return math.inf
    return math.log((p_lower - delta) / q_upper)


@dataclass(frozen=True)
class BoundDetail:
    """The test achieving ε̂_lower: event {s > t} or {s ≤ t}, which side plays P, counts and CP bounds."""

    threshold: float
    event: str  # "s > t" | "s <= t"
    p_side: str  # "D" | "D'"  (the dataset whose probability is bounded from below)
    p_count: int
    q_count: int
    p_lower: float
    q_upper: float
    point: float  # log((p̂ − δ)/q̂) from the raw frequencies (no confidence correction)


def epsilon_lower_bound(
    s1: np.ndarray, s0: np.ndarray, thresholds: np.ndarray, delta: float, confidence: float = 0.95
) -> tuple[float, BoundDetail | None]:
    """ε̂_lower from statistics s1 (runs on D) and s0 (runs on D') over fixed ``thresholds`` (module docstring §4).

    Bonferroni over 4K one-sided Clopper–Pearson bounds (2 events × 2 samples × lower/upper per threshold),
    each at level α = (1 − confidence)/(4K). Returns (max(0, best bound), the test achieving it or None).
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
    s1 = np.asarray(s1, dtype=float)
    s0 = np.asarray(s0, dtype=float)
    thresholds = np.unique(np.asarray(thresholds, dtype=float))
    alpha = (1.0 - confidence) / (4 * thresholds.size)
    best, detail = 0.0, None
    samples = {"D": s1, "D'": s0}
    for t in thresholds:
        for event in ("s > t", "s <= t"):
            counts = {side: int(np.count_nonzero(s > t if event == "s > t" else s <= t)) for side, s in samples.items()}
            bounds = {side: clopper_pearson(counts[side], samples[side].size, alpha) for side in samples}
            for p_side, q_side in (("D", "D'"), ("D'", "D")):
                value = _epsilon_from(bounds[p_side][0], bounds[q_side][1], delta)
                if value > best:
                    p_hat = counts[p_side] / samples[p_side].size
                    q_hat = counts[q_side] / samples[q_side].size
                    point = math.log((p_hat - delta) / q_hat) if p_hat > delta and q_hat > 0 else math.inf
                    best = value
                    detail = BoundDetail(
                        float(t), event, p_side, counts[p_side], counts[q_side], bounds[p_side][0],
                        bounds[q_side][1], point,
                    )  # fmt: skip
    return best, detail


def audit_ceiling(trials: int, delta: float, confidence: float = 0.95, n_thresholds: int = len(THRESHOLD_LEVELS)):
    """Largest ε̂_lower any audit with these settings can report (outputs perfectly separated): log((lo − δ)/hi)."""
    alpha = (1.0 - confidence) / (4 * n_thresholds)
    lo = clopper_pearson(trials, trials, alpha)[0]
    hi = clopper_pearson(0, trials, alpha)[1]
    return _epsilon_from(lo, hi, delta)


def thresholds_from(pilot: np.ndarray, levels: tuple[float, ...] = THRESHOLD_LEVELS) -> np.ndarray:
    """Thresholds = quantiles of the finite pilot statistic at ``levels`` (fixed before the main runs)."""
    pilot = np.asarray(pilot, dtype=float)
    pilot = pilot[np.isfinite(pilot)]
    if pilot.size == 0:
        return np.zeros(1)
    return np.unique(np.quantile(pilot, levels))


def detectable_epsilon(trials: int, claim: float, delta: float, confidence: float = 0.95) -> float:
    """Power of a threshold audit with ``trials`` runs per side at a claimed ε: the smallest true ε it flags (its
    ε̂_lower > ``claim``) in the best case for it — a statistic that is a Gaussian shift, N(μ, 1) on D and N(0, 1) on
    D′ (a μ-GDP pair seen along its likelihood-ratio direction) — with the samples at their expected quantiles.
    Returns ε(μ*, δ) at the shift μ* where ε̂_lower reaches the claim (inf when even μ = 12 does not): a statistic
    that is not such a shift (θ̂ of most mechanisms) needs a larger true ε than this to be flagged."""
    q = norm.ppf((np.arange(int(trials)) + 0.5) / int(trials))

    def excess(mu: float) -> float:
        s1 = q + mu
        return epsilon_lower_bound(s1, q, thresholds_from(np.concatenate([s1, q])), delta, confidence)[0] - claim

    lo, hi = 0.0, 12.0
    if excess(hi) <= 0:
        return math.inf
    for _ in range(30):  # bisection: ε̂_lower is a monotone step function of μ
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if excess(mid) <= 0 else (lo, mid)
    return float(gdp_epsilon(hi, delta))


# ----------------------------------------------------------------------------------------------------------------
# Gaussian-DP estimate


@dataclass(frozen=True)
class GdpEstimate:
    """μ̂ (and ε̂ at the claimed δ) from a statistic that is N(m₁, s²) on D and N(m₀, s²) on D′.

    ``gaussian`` says whether the samples support that model (skewness, excess kurtosis and the variance ratio of
    the two sides all small); when False the interval is not to be trusted and the profile estimate is reported.
    """

    mu: float
    mu_lo: float
    mu_hi: float
    eps: float
    eps_lo: float
    eps_hi: float
    skew: float
    kurtosis: float
    var_ratio: float
    gaussian: bool


def _moments(s: np.ndarray) -> tuple[float, float, float, float]:
    m = float(np.mean(s))
    c = s - m
    v = float(np.mean(c * c))
    if v <= 0:
        return m, 0.0, 0.0, 0.0
    skew = float(np.mean(c**3)) / v**1.5
    kurt = float(np.mean(c**4)) / v**2 - 3.0
    return m, v * s.size / max(s.size - 1, 1), skew, kurt


def gdp_estimate(
    s1: np.ndarray, s0: np.ndarray, delta: float, confidence: float = 0.95, tolerance: tuple[float, float] = (0.1, 0.2)
) -> GdpEstimate:
    """μ̂ = (m̄₁ − m̄₀)/s_pooled and ε̂ = ε(μ̂, δ) on the GDP curve, with a delta-method interval.

    Var μ̂ ≈ 1/n₁ + 1/n₀ + μ²(1/(n₁−1) + 1/(n₀−1))/8 (mean difference plus pooled-sd error). For the
    log-likelihood ratio of a μ-GDP Gaussian mechanism m₁ = −m₀ = μ²/2, s = μ, so μ̂ → μ. ``gaussian`` is True when
    |skewness| ≤ tolerance[0], |excess kurtosis| ≤ tolerance[1] on both sides and the variances agree within 10%.
    """
    s1 = np.asarray(s1, dtype=float)
    s0 = np.asarray(s0, dtype=float)
    if s1.size < 3 or s0.size < 3 or not (np.isfinite(s1).all() and np.isfinite(s0).all()):
        nan = float("nan")
        return GdpEstimate(nan, nan, nan, nan, nan, nan, nan, nan, nan, False)
    m1, v1, sk1, ku1 = _moments(s1)
    m0, v0, sk0, ku0 = _moments(s0)
    pooled = math.sqrt((v1 + v0) / 2.0)
    if pooled == 0:
        mu = math.inf if m1 != m0 else 0.0
        return GdpEstimate(mu, mu, mu, gdp_or_inf(mu, delta), gdp_or_inf(mu, delta), gdp_or_inf(mu, delta),
                           0.0, 0.0, 1.0, False)  # fmt: skip
    mu = (m1 - m0) / pooled
    n1, n0 = s1.size, s0.size
    se = math.sqrt(1 / n1 + 1 / n0 + mu * mu * (1 / (n1 - 1) + 1 / (n0 - 1)) / 8.0)
    z = float(norm.ppf(0.5 + confidence / 2.0))
    lo, hi = mu - z * se, mu + z * se
    skew = max(abs(sk1), abs(sk0))
    kurt = max(abs(ku1), abs(ku0))
    ratio = max(v1, v0) / min(v1, v0) if min(v1, v0) > 0 else math.inf
    gaussian = skew <= tolerance[0] and kurt <= tolerance[1] and ratio <= 1.1
    return GdpEstimate(
        mu, lo, hi, gdp_or_inf(mu, delta), gdp_or_inf(lo, delta), gdp_or_inf(hi, delta), skew, kurt, ratio, gaussian
    )


def gdp_or_inf(mu: float, delta: float) -> float:
    """ε(μ, δ) on the GDP curve, 0 for μ ≤ 0, inf for μ = inf."""
    if not math.isfinite(mu):
        return math.inf if mu > 0 else 0.0
    return 0.0 if mu <= 0 else gdp_epsilon(mu, delta)


def gdp_mixture_estimate(
    s1: np.ndarray,
    i1: np.ndarray,
    s0: np.ndarray,
    i0: np.ndarray,
    histories: int,
    delta: float,
    confidence: float = 0.95,
) -> GdpEstimate:
    """GDP estimate when the statistic is Gaussian *given* a public history index i (pooled histories).

    Per history h: μ̂_h = (mean of s1 at h − mean of s0 at h)/pooled sd at h, with the standard error of
    :func:`gdp_estimate`, de-biased as √max(μ̂_h² − se_h², 0); ε̂ = ε of the uniform mixture of μ̂_h-GDP
    mechanisms (:func:`dpbench.privacy.gdp.mixture_epsilon`), its interval the same with every μ̂_h at its lower
    (upper) confidence limit. ``mu`` is the root-mean-square μ̂_h. Gaussianity is checked on the per-history
    standardised samples."""
    z = float(norm.ppf(0.5 + confidence / 2.0))
    mus, ses, std1, std0 = [], [], [], []
    for h in range(histories):
        a, b = s1[i1 == h], s0[i0 == h]
        if a.size < 3 or b.size < 3:
            continue
        m1, v1 = a.mean(), a.var(ddof=1)
        m0, v0 = b.mean(), b.var(ddof=1)
        sd = math.sqrt((v1 + v0) / 2.0)
        if sd == 0:
            continue
        mu = (m1 - m0) / sd
        mus.append(mu)
        ses.append(math.sqrt(1 / a.size + 1 / b.size + mu * mu * (1 / (a.size - 1) + 1 / (b.size - 1)) / 8.0))
        std1.append((a - m1) / sd)
        std0.append((b - m0) / sd)
    if not mus:
        return gdp_estimate(s1, s0, delta, confidence)
    ses_a = np.asarray(ses)
    mus_a = np.sqrt(np.clip(np.asarray(mus) ** 2 - ses_a**2, 0, None))  # E μ̂² = μ² + se²: de-biased
    _, _, sk1, ku1 = _moments(np.concatenate(std1))
    _, _, sk0, ku0 = _moments(np.concatenate(std0))
    skew, kurt = max(abs(sk1), abs(sk0)), max(abs(ku1), abs(ku0))
    eps = mixture_epsilon(np.clip(mus_a, 0, None), delta)
    lo = mixture_epsilon(np.clip(mus_a - z * ses_a, 0, None), delta)
    hi = mixture_epsilon(np.clip(mus_a + z * ses_a, 0, None), delta)
    rms = float(np.sqrt(np.mean(mus_a**2)))
    return GdpEstimate(rms, rms - z * float(np.sqrt(np.mean(ses_a**2))), rms + z * float(np.sqrt(np.mean(ses_a**2))),
                       eps, lo, hi, skew, kurt, 1.0, skew <= 0.1 and kurt <= 0.2)  # fmt: skip


# ----------------------------------------------------------------------------------------------------------------
# empirical privacy profile (any statistic)


@dataclass(frozen=True)
class ProfileEstimate:
    """ε̂ = log((p̂ − δ)/q̂) for the event chosen on the first half of the samples, evaluated on the second half."""

    eps: float
    eps_lo: float
    eps_hi: float
    threshold: float
    event: str


def profile_estimate(
    s1: np.ndarray, s0: np.ndarray, delta: float, confidence: float = 0.95, levels: tuple[float, ...] = DEEP_LEVELS
) -> ProfileEstimate:
    """Point estimate of ε at δ from the best threshold event, with a delta-method interval.

    The event ({s > t} bounded under D, or {s ≤ t} under D′) is selected on the first half of each sample
    (maximising the plug-in estimate minus two standard errors among events seen ≥ 30 times on both sides, so that
    a rare event that looks good by luck is not chosen), then p̂, q̂ come from the second half:
    Var log p̂ ≈ (1 − p)/(n p).
    """
    s1 = np.asarray(s1, dtype=float)
    s0 = np.asarray(s0, dtype=float)
    h1, h0 = s1.size // 2, s0.size // 2
    a1, b1, a0, b0 = s1[:h1], s1[h1:], s0[:h0], s0[h0:]
    thresholds = thresholds_from(np.concatenate([a1, a0]), levels)
    best = (-math.inf, 0.0, "s > t")
    for t in thresholds:
        for event, p_sample, q_sample in (("s > t", a1, a0), ("s <= t", a0, a1)):
            p_count = np.count_nonzero(p_sample > t) if event == "s > t" else np.count_nonzero(p_sample <= t)
            q_count = np.count_nonzero(q_sample > t) if event == "s > t" else np.count_nonzero(q_sample <= t)
            if p_count < 30 or q_count < 30:
                continue
            p, q = p_count / p_sample.size, q_count / q_sample.size
            if p <= delta:
                continue
            se = math.sqrt((1 - p) / p_count * (p / (p - delta)) ** 2 + (1 - q) / q_count)
            if math.log((p - delta) / q) - 2 * se > best[0]:
                best = (math.log((p - delta) / q) - 2 * se, float(t), event)
    if not math.isfinite(best[0]):
        return ProfileEstimate(0.0, 0.0, 0.0, 0.0, "none")
    _, t, event = best
    p_sample, q_sample = (b1, b0) if event == "s > t" else (b0, b1)
    hit = (lambda s: s > t) if event == "s > t" else (lambda s: s <= t)
    p = max(np.count_nonzero(hit(p_sample)), 1) / p_sample.size
    q = max(np.count_nonzero(hit(q_sample)), 1) / q_sample.size
    z = float(norm.ppf(0.5 + confidence / 2.0))
    if p <= delta:
        return ProfileEstimate(0.0, 0.0, 0.0, t, event)
    eps = math.log((p - delta) / q)
    se = math.sqrt((1 - p) / (p_sample.size * p) * (p / (p - delta)) ** 2 + (1 - q) / (q_sample.size * q))
    return ProfileEstimate(max(0.0, eps), max(0.0, eps - z * se), max(0.0, eps + z * se), t, event)


# ----------------------------------------------------------------------------------------------------------------
# ε from draws of the privacy loss (exact in law, Monte Carlo precision)


def _delta_from_losses(loss: np.ndarray, n: int, epsilon: float) -> tuple[float, float]:
    """(δ̂(ε), its standard error) with δ̂(ε) = (1/n) Σ (1 − e^{ε − L})₊ over ``loss`` (the draws with L > 0 of n,
    sorted ascending: only the draws above ε are read)."""
    terms = -np.expm1(epsilon - loss[np.searchsorted(loss, epsilon, side="right") :])
    mean = float(np.sum(terms)) / n
    second = float(np.sum(terms * terms)) / n
    return mean, math.sqrt(max(second - mean * mean, 0.0) / n)


def _epsilon_where(loss: np.ndarray, n: int, delta: float, shift: float) -> float:
    """Smallest ε ≥ 0 with δ̂(ε) + shift·se(ε) ≤ δ (bisection; δ̂ + shift·se decreases in ε). ``loss`` sorted
    ascending, so each step sums only the draws above its ε (60 steps over the whole tail cost seconds at 4·10⁶
    draws; most steps now read a few hundred)."""

    def excess(eps: float) -> float:
        mean, se = _delta_from_losses(loss, n, eps)
        return mean + shift * se - delta

    if loss.size == 0 or excess(0.0) <= 0:
        return 0.0
    lo, hi = 0.0, float(loss[-1])
    for _ in range(60):
        mid = (lo + hi) / 2.0
        lo, hi = (lo, mid) if excess(mid) <= 0 else (mid, hi)
    return hi


@dataclass(frozen=True)
class LossEpsilon:
    """ε at δ from draws of the privacy loss, with a Monte-Carlo interval (``direction``: which side binds)."""

    eps: float
    eps_lo: float
    eps_hi: float
    direction: str


def loss_epsilon(l_d: np.ndarray, l_dp: np.ndarray, delta: float, confidence: float = 0.95) -> LossEpsilon:
    """ε(δ) of a pair from iid draws of its privacy loss L = log p_D/p_D′: ``l_d`` under D, ``l_dp`` under D′.

    δ(ε) = max{E_D[(1 − e^{ε − L})₊], E_D′[(1 − e^{ε + L})₊]} (the hockey-stick divergence in both directions,
    written as an expectation under the first distribution); ε = the smallest ε ≥ 0 with δ(ε) ≤ δ. The sample mean
    replaces each expectation; the interval solves δ̂(ε) ∓ z·se(ε) = δ (z the two-sided normal quantile), so it
    holds the exact ε of the law the draws come from with the stated confidence (up to the bisection's 2⁻⁶⁰)."""
    z = float(norm.ppf(0.5 + confidence / 2.0))
    out = []
    for name, loss in (("D", np.asarray(l_d, dtype=float)), ("D'", -np.asarray(l_dp, dtype=float))):
        if loss.size == 0 or not np.isfinite(loss).all():
            raise ValueError("loss_epsilon needs finite draws of the privacy loss on both sides")
        tail = np.sort(loss[loss > 0])
        out.append((_epsilon_where(tail, loss.size, delta, 0.0), _epsilon_where(tail, loss.size, delta, -z),
                    _epsilon_where(tail, loss.size, delta, z), name))  # fmt: skip
    eps, lo, hi, name = max(out)
    return LossEpsilon(eps, max(o[1] for o in out), max(o[2] for o in out), name)
