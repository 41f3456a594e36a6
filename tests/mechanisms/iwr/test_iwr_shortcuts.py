"""Exact-in-law shortcuts of the information-weighted mechanisms (spec 000, issue 16) against their literal paths.

E5's 1-D pure-LDP mechanisms (spec 000 §3.1, §3.12) release the mean of n Laplace reports; ``simulation="aggregate"``
draws the summed Laplace noise as a difference of two Gamma(n, b) variables. Two-sample KS on θ̂ and on its distance
to the noiseless ratio (aggregate vs per_user, 500 fits each, p > 10⁻³ with fixed seeds), and a control: the same
tests reject the aggregate path at ε/1.5 (every Laplace scale × 1.5).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as sps

from dpbench import registry
from dpbench.mechanisms.iwr.local_1d import laplace_mean, laplace_sum

P_MIN = 1e-3
NOISE_ERROR = 1.5
TRIALS = 500


def one_d_estimates(name: str, simulation: str, seed: int, epsilon: float = 8.0, n: int = 400) -> np.ndarray:
    """θ̂ of TRIALS fits on one G-TwoScale-1D(0.3, 0.5) draw (θ* ≈ 0.44: the estimate is rarely clipped at ±1)."""
    ds = registry.get_dataset("iwr_twoscale_1d").load(np.random.default_rng(7), n=n, rho=0.3, s=0.5)
    fit = registry.get_mechanism(name).fit
    return np.array(
        [
            fit(ds.X_train, ds.y_train, epsilon, None, np.random.default_rng([seed, t]), simulation=simulation).theta[0]
            for t in range(TRIALS)
        ]
    )


def ks_pvalues(a: np.ndarray, b: np.ndarray) -> dict[str, float]:
    """KS p-values of θ̂ and of |θ̂ − m| (m: the pooled median, a proxy of the noiseless ratio)."""
    centre = float(np.median(np.concatenate([a, b])))
    return {
        "theta": float(sps.ks_2samp(a, b).pvalue),
        "deviation": float(sps.ks_2samp(np.abs(a - centre), np.abs(b - centre)).pvalue),
    }


@pytest.mark.parametrize("name", ["ldp_simple_1d", "ldp_laplace_ssp_1d"])
def test_1d_laplace_aggregate_and_per_user_estimates_agree_in_law(name):
    per = one_d_estimates(name, "per_user", seed=2)
    agg = one_d_estimates(name, "aggregate", seed=1)
    assert np.mean(np.abs(agg) < 1.0) > 0.9  # informative: not saturated by the clip
    same = ks_pvalues(agg, per)
    assert min(same.values()) > P_MIN, f"{name}: aggregate and per_user differ {same}"
    control = ks_pvalues(one_d_estimates(name, "aggregate", seed=1, epsilon=8.0 / NOISE_ERROR), per)
    assert min(control.values()) < P_MIN, f"{name}: control (scale × {NOISE_ERROR}) not detected {control}"


def test_laplace_sum_has_the_laplace_sum_moments():
    """Σ of n Laplace(0, b): mean 0, variance 2nb², excess kurtosis 3/n — both paths."""
    rng = np.random.default_rng(3)
    n, b, reps = 4, 1.5, 40_000
    for per_user in (False, True):
        sums = np.array([laplace_sum(n, b, rng, per_user) for _ in range(reps)])
        assert abs(sums.mean()) < 4 * np.sqrt(2 * n * b * b / reps)
        assert sums.var() == pytest.approx(2 * n * b * b, rel=0.03)
        assert sps.kurtosis(sums) == pytest.approx(3.0 / n, abs=0.12)


def test_laplace_mean_adds_the_mean_of_the_values():
    values = np.array([0.2, -0.4, 1.0, 0.6])
    noise = laplace_sum(4, 0.5, np.random.default_rng(9), per_user=False)
    assert laplace_mean(values, 0.5, np.random.default_rng(9), per_user=False) == pytest.approx(0.35 + noise / 4)
