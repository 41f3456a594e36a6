"""The ±1/p covariate sampler of ``stein_synthetic`` (spec 003 §6.2): the bit sampler (default, issue 16) against
the historical one-integer-per-entry sampler — the same values, the same law (two-sample KS on an estimate over
500 data sets per sampler, with a control that rejects a biased coin)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as sps

from dpbench.papers.stein import generators
from dpbench.papers.stein.generators import BERNOULLI_SAMPLERS, random_signs

P_MIN = 1e-3
DATASETS = 500


@pytest.mark.parametrize("sampler", BERNOULLI_SAMPLERS)
@pytest.mark.parametrize("p", [1, 3, 7, 40])
def test_random_signs_are_exactly_plus_minus_one_over_p(sampler, p):
    x = random_signs(1001, p, np.random.default_rng(p), sampler)
    assert x.shape == (1001, p) and x.dtype == float
    assert set(np.unique(x)) == {-1.0 / p, 1.0 / p}


def test_bit_sampler_uses_every_bit_of_a_byte():
    """rows·p = 12 entries take 2 bytes; the signs are the bytes' bits, most significant first."""
    rng, copy = np.random.default_rng(5), np.random.default_rng(5)
    bits = np.unpackbits(np.frombuffer(copy.bytes(2), dtype=np.uint8))[:12].reshape(4, 3)
    np.testing.assert_array_equal(random_signs(4, 3, rng) > 0, bits == 1)


def test_unknown_sampler_is_rejected():
    with pytest.raises(ValueError, match="bernoulli_sampler"):
        random_signs(2, 2, np.random.default_rng(0), "coins")


def ols_summaries(sampler: str, seed: int) -> np.ndarray:
    """Per data set (n = 200, p = 3, logistic GLM): Σ_j θ̂_j and ‖θ̂‖ of the least-squares fit θ̂ = (XᵀX)⁻¹Xᵀy."""
    out = np.empty((DATASETS, 2))
    for k in range(DATASETS):
        ds = generators.load(
            np.random.default_rng([seed, k]), covariates="bernoulli", n=200, p=3, bernoulli_sampler=sampler
        )
        theta = np.linalg.solve(ds.X_train.T @ ds.X_train, ds.X_train.T @ ds.y_train)
        out[k] = theta.sum(), np.linalg.norm(theta)
    return out


def min_ks_pvalue(a: np.ndarray, b: np.ndarray) -> float:
    return min(sps.ks_2samp(a[:, j], b[:, j]).pvalue for j in range(a.shape[1]))


def test_bit_and_integer_samplers_agree_in_law():
    assert min_ks_pvalue(ols_summaries("bits", 1), ols_summaries("integers", 2)) > P_MIN


def test_control_a_biased_coin_is_rejected(monkeypatch):
    """The same test tells the integer sampler from a copy whose signs are +1 with probability 0.6."""

    def biased(rows, p, rng, sampler="bits"):
        return np.where(rng.uniform(size=(rows, p)) < 0.6, 1.0, -1.0) / p

    reference = ols_summaries("integers", 2)
    monkeypatch.setattr(generators, "random_signs", biased)
    assert min_ks_pvalue(ols_summaries("bits", 1), reference) < P_MIN
