"""θ̂ as a witness with power (issue 36 item 4): several statistics of the estimate, one joint bound.

One direction of θ̂ sees a shift along it; a leak along another direction, or a rare branch that puts θ̂ on a
record, is invisible to it. The witness tests, with one Clopper–Pearson bound per statistic (Bonferroni over
statistics and thresholds, so the joint confidence holds):

* ⟨w, θ̂⟩ for w the Fisher direction of the pilot outputs, the difference of their means, and
  :data:`RANDOM_DIRECTIONS` random unit directions (fixed by the seed);
* the distance of θ̂ to the records that differ between the datasets (the canary's x and x·y on D, the
  replacement's on D′), with a threshold at 10⁻⁹: the event "θ̂ is that record" — a branch of probability p ≫ δ
  that outputs the record is an event of probability p on one dataset and 0 on the other, which 1/p runs per side
  see (ε̂_lower ≈ log(p·N/3) with N runs per side).

Thresholds are pilot quantiles, including the tails (10⁻³ and 1 − 10⁻³), fixed before the main runs are looked at.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dpbench.audit.stats import THRESHOLD_LEVELS, epsilon_lower_bound, thresholds_from

#: random unit directions tested next to the Fisher and mean-difference ones
RANDOM_DIRECTIONS = 4
#: pilot quantiles used as thresholds (the black-box audit's plus the tails)
WITNESS_LEVELS = tuple(sorted({*THRESHOLD_LEVELS, 0.001, 0.999}))
#: "θ̂ is the record": distance below this
AT_RECORD = 1e-9


@dataclass(frozen=True)
class Witness:
    """The witness's bound: ε̂_lower (max over statistics, joint confidence) and the statistic that gave it."""

    eps_lower: float
    statistic: str
    runs: int  # per side, main runs


def fisher_direction(out1: np.ndarray, out0: np.ndarray) -> np.ndarray:
    """Unit vector w ∝ (Σ̂ + λI)⁻¹(μ̂₁ − μ̂₀) from pilot outputs winsorised at their pooled 1%/99% quantiles."""
    pooled = np.vstack([out1, out0])
    pooled = np.where(np.isfinite(pooled), pooled, np.nan)
    lo, hi = np.nanquantile(pooled, 0.01, axis=0), np.nanquantile(pooled, 0.99, axis=0)

    def clean(a: np.ndarray) -> np.ndarray:
        a = np.where(np.isfinite(a), a, np.nan)
        a = np.clip(a, lo, hi)
        return np.where(np.isnan(a), (lo + hi) / 2.0, a)

    a1, a0 = clean(out1), clean(out0)
    diff = a1.mean(axis=0) - a0.mean(axis=0)
    cov = (np.cov(a1, rowvar=False) + np.cov(a0, rowvar=False)) / 2.0
    cov = np.atleast_2d(cov)
    ridge = 1e-9 * max(float(np.trace(cov)) / cov.shape[0], 1e-300)
    try:
        w = np.linalg.solve(cov + ridge * np.eye(cov.shape[0]), diff)
    except np.linalg.LinAlgError:
        w = diff
    norm = float(np.linalg.norm(w))
    if not np.isfinite(norm) or norm == 0.0:
        w = np.zeros(out1.shape[1])
        w[0] = 1.0
        return w
    return w / norm


def _unit(v: np.ndarray) -> np.ndarray | None:
    norm = float(np.linalg.norm(v))
    return v / norm if np.isfinite(norm) and norm > 0 else None


def statistics(pilot1: np.ndarray, pilot0: np.ndarray, records: Sequence[np.ndarray] = (),
               seed: int = 0) -> list[tuple[str, np.ndarray | None, np.ndarray]]:  # fmt: skip
    """The statistics as (name, direction or None, records for a distance): directions first, then the distance
    to ``records`` (those of θ̂'s dimension)."""
    p = pilot1.shape[1]
    out: list[tuple[str, np.ndarray | None, np.ndarray]] = [("Fisher direction", fisher_direction(pilot1, pilot0),
                                                             np.zeros(0))]  # fmt: skip
    clean = np.nan_to_num(np.vstack([pilot1, pilot0]), nan=0.0, posinf=0.0, neginf=0.0)
    diff = _unit(clean[: len(pilot1)].mean(axis=0) - clean[len(pilot1) :].mean(axis=0))
    if diff is not None:
        out.append(("difference of the means", diff, np.zeros(0)))
    rng = np.random.default_rng([seed, 0x3D])
    for k in range(RANDOM_DIRECTIONS):
        out.append((f"random direction {k + 1}", _unit(rng.standard_normal(p)), np.zeros(0)))
    points = [np.ravel(r) for r in records if np.size(r) == p and np.all(np.isfinite(r))]
    if points:
        out.append(("distance to the differing records", None, np.array(points)))
    return out


def evaluate(outputs: np.ndarray, direction: np.ndarray | None, points: np.ndarray) -> np.ndarray:
    """One statistic per run (non-finite outputs → +inf, a fixed post-processing)."""
    outputs = np.asarray(outputs, dtype=float)
    with np.errstate(invalid="ignore", over="ignore"):
        if direction is not None:
            s = outputs @ direction
        else:
            s = -np.min(np.linalg.norm(outputs[:, None, :] - points[None, :, :], axis=2), axis=1)
    return np.where(np.isfinite(s), s, np.inf)


def witness_bound(pilot1: np.ndarray, pilot0: np.ndarray, main1: np.ndarray, main0: np.ndarray, delta: float,
                  confidence: float = 0.95, records: Sequence[np.ndarray] = (), seed: int = 0) -> Witness:  # fmt: skip
    """ε̂_lower of θ̂ over every statistic (module docstring); thresholds and directions from the pilot runs only."""
    stats = statistics(pilot1, pilot0, records, seed)
    level = 1.0 - (1.0 - confidence) / len(stats)
    best, name = 0.0, ""
    for label, direction, points in stats:
        pooled = np.concatenate([evaluate(pilot1, direction, points), evaluate(pilot0, direction, points)])
        finite = pooled[np.isfinite(pooled)]
        if not finite.size:
            continue
        thresholds = thresholds_from(finite, WITNESS_LEVELS)
        if direction is None:  # "θ̂ is the record", and a few levels (few thresholds: little Bonferroni dilution)
            thresholds = np.append(thresholds_from(finite, (0.5, 0.999)), -AT_RECORD)
        eps, _ = epsilon_lower_bound(evaluate(main1, direction, points), evaluate(main0, direction, points),
                                     thresholds, delta, level)  # fmt: skip
        if eps > best:
            best, name = float(eps), label
    return Witness(best, name, int(min(len(main1), len(main0))))
