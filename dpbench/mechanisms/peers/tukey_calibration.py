"""Calibration of TukeyEM (Amin, Joseph, Ribero, Vassilvitskii, "Easy Differentially Private Linear Regression",
ICLR 2023, Algorithm 1; the propose-test-release step of Brown et al. 2021, Lemma 3.7): pure functions of the
depth-region volumes, no data and no randomness.

Notation. m non-private models β_1..β_m ∈ ℝ^d; the *approximate Tukey depth* of a point y is
``depth(y) = min_j min(#{i: β_ij ≤ y_j}, #{i: β_ij ≥ y_j})`` (depth along the d coordinate axes only). The region
of depth ≥ i is the box Y_i = ∏_j [s_j(i), s_j(m − i + 1)] (s_j(r) = r-th smallest j-th coordinate), of volume
V_i = ∏_j (s_j(m − i + 1) − s_j(i)), i = 1..⌊m/2⌋ (V_i = 0 beyond).

Replacing one row of the data changes one model, so depth(y) changes by at most 1 and the regions are nested:
Y_{i+1}(D) ⊆ Y_i(D') ⊆ Y_{i−1}(D).

PTR (ε_ptr = ε/2). With t = ⌊⌊m/2⌋/2⌋, condition C(k) holds when some g ≥ 1 has

    log V_{t−k−1} − log V_{t+k+g+1} − ε_ptr·g/2 ≤ log(δ / (8 e^{ε_ptr})),

and then every database within k changes of D is safe for the restricted exponential mechanism. The distance
lower bound k̂ = 1 + max{k : C(0), …, C(k) hold} (0 when C(0) fails) has sensitivity 1 (the nesting above turns
C(k) on D into C(k − 1) on a neighbour); the test passes when k̂ + Lap(1/ε_ptr) > log(1/(2δ))/ε_ptr.

Exponential mechanism (ε_em = ε/2): y ∈ Y_t with density ∝ exp(ε_em · depth(y)), i.e. depth level i ∈ [t, ⌊m/2⌋]
with probability ∝ (V_i − V_{i+1})·e^{ε_em i}, then y uniform on {depth = i}.
"""

from __future__ import annotations

import math

import numpy as np

from dpbench.privacy.validate import check_delta, check_epsilon


def split_budget(epsilon: float) -> tuple[float, float]:
    """(ε_ptr, ε_em) = (ε/2, ε/2): TukeyEM's Algorithm 1 spends half on the PTR test, half on the sampler."""
    epsilon = check_epsilon(epsilon)
    return epsilon / 2.0, epsilon / 2.0


def restriction_depth(m: int) -> int:
    """t = ⌊⌊m/2⌋/2⌋: the sampler is restricted to depth ≥ t (Algorithm 1, t = m/4)."""
    if m < 1:
        raise ValueError(f"number of models must be ≥ 1, got {m}")
    return (m // 2) // 2


def log_depth_volumes(sorted_coords: np.ndarray) -> np.ndarray:
    """log V_i for i = 1..⌊m/2⌋ from the (d, m) array of each coordinate's sorted model values (−inf for V_i = 0)."""
    m = sorted_coords.shape[1]
    half = m // 2
    widths = sorted_coords[:, ::-1][:, :half] - sorted_coords[:, :half]  # s(m − i + 1) − s(i), i = 1..⌊m/2⌋
    with np.errstate(divide="ignore"):
        return np.sum(np.log(np.maximum(widths, 0.0)), axis=0)


def safety_margin_holds(log_volumes: np.ndarray, t: int, k: int, epsilon_ptr: float, delta: float) -> bool:
    """C(k): ∃ g ≥ 1 with log V_{t−k−1} − log V_{t+k+g+1} − ε_ptr·g/2 ≤ log(δ/(8e^{ε_ptr})) (module docstring).

    ``log_volumes[i − 1]`` is log V_i. False when the indices leave 1..⌊m/2⌋ (nothing can be certified).
    """
    top = len(log_volumes)
    low = t - k - 1
    if low < 1 or t + k + 2 > top:
        return False
    g = np.arange(1, top - t - k)  # t + k + g + 1 ≤ ⌊m/2⌋
    deeper = log_volumes[t + k + g]  # log V_{t+k+g+1}
    with np.errstate(invalid="ignore"):
        gaps = log_volumes[low - 1] - deeper - epsilon_ptr * g / 2.0
    threshold = math.log(delta) - math.log(8.0) - epsilon_ptr
    return bool(np.any(gaps <= threshold))


def distance_lower_bound(log_volumes: np.ndarray, t: int, epsilon_ptr: float, delta: float) -> int:
    """k̂ = 1 + max{k : C(0), …, C(k)} (0 if C(0) fails): a sensitivity-1 lower bound on the distance to unsafety."""
    check_epsilon(epsilon_ptr, "epsilon_ptr")
    check_delta(delta)
    k = 0
    while safety_margin_holds(log_volumes, t, k, epsilon_ptr, delta):
        k += 1
    return k


def ptr_threshold(epsilon_ptr: float, delta: float) -> float:
    """The test passes when k̂ + Lap(1/ε_ptr) > log(1/(2δ))/ε_ptr."""
    return math.log(1.0 / (2.0 * check_delta(delta))) / check_epsilon(epsilon_ptr, "epsilon_ptr")


def ptr_pass_probability(k_hat: int, epsilon_ptr: float, delta: float) -> float:
    """P(k̂ + Lap(1/ε_ptr) > threshold): exact, for tests and diagnostics."""
    gap = ptr_threshold(epsilon_ptr, delta) - k_hat
    if gap <= 0:
        return 1.0 - 0.5 * math.exp(epsilon_ptr * gap)
    return 0.5 * math.exp(-epsilon_ptr * gap)


def depth_level_log_weights(log_volumes: np.ndarray, t: int, epsilon_em: float) -> np.ndarray:
    """log((V_i − V_{i+1})·e^{ε_em i}) for i = t..⌊m/2⌋ (V_{⌊m/2⌋+1} = 0); −inf for empty levels."""
    levels = np.arange(t, len(log_volumes) + 1)
    upper = log_volumes[levels - 1]
    lower = np.append(log_volumes[levels[:-1]], -np.inf)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        ratio = np.where(np.isfinite(upper), np.exp(lower - upper), 1.0)
        exact = np.where(np.isfinite(upper) & (ratio < 1.0), upper + np.log1p(-np.minimum(ratio, 1.0)), -np.inf)
    return exact + epsilon_em * levels
