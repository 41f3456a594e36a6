"""DP-GD checkpoint intervals (spec 005 §4): one exact budget for the path and the sampling-term releases, the
checkpoint moments, the declared T rule, the intervals' targets."""

from __future__ import annotations

import numpy as np
import pytest

from dpbench.contract import HyperError
from dpbench.data.synthetic import load as sphere
from dpbench.mechanisms._base import record_releases
from dpbench.mechanisms.gradient import dpgd_checkpoints as ckpt
from dpbench.privacy.gdp import compose_mu, gdp_epsilon, gdp_mu


def _data(n: int = 400, d: int = 3):
    data = sphere(np.random.default_rng(0), n=n, d=d, theta_norm=0.5, noise=0.5, n_test=0)
    return data.X_train, data.y_train


@pytest.mark.parametrize("share", [0.1, 0.2, 0.5])
def test_budget_split_composes_to_exactly_the_budget(share):
    eps_gd, mu_extra = ckpt.budget_split(1.0, 1e-6, share)
    assert compose_mu([gdp_mu(eps_gd, 1e-6), mu_extra, mu_extra]) == pytest.approx(gdp_mu(1.0, 1e-6), rel=1e-6)


def test_the_releases_of_one_fit_spend_exactly_epsilon():
    X, y = _data()
    with record_releases() as recorder:
        result = ckpt.fit(X, y, 1.0, 1e-6, np.random.default_rng(1), T=12, burn_in=2, stride=2, checkpoints=5)
    names = [r.name for r in recorder.releases]
    assert len(names) == 14 and names[-2:] == ["XᵀX", "Σ clip(r_i)²"]
    mu = compose_mu(r.sensitivity / r.scale for r in recorder.releases)
    assert gdp_epsilon(mu, 1e-6) == pytest.approx(1.0, rel=1e-5)
    assert result.intervals["checkpoint"].target == "data_fit"
    assert result.intervals["checkpoint_pop"].target == "population"


def test_checkpoint_moments_and_the_population_interval_is_wider():
    path = np.arange(20, dtype=float)[:, None] * np.array([1.0, 2.0])
    index = ckpt.checkpoint_indices(19, 4, 5, 3)
    assert index.tolist() == [4, 9, 14]
    mean, var = ckpt.checkpoint_moments(path, index)
    assert mean.tolist() == [9.0, 18.0] and var == pytest.approx([25.0 / 3, 100.0 / 3])
    X, y = _data()
    result = ckpt.fit(X, y, 1.0, 1e-6, np.random.default_rng(2))
    narrow, wide = result.intervals["checkpoint"].conf_int(), result.intervals["checkpoint_pop"].conf_int()
    assert np.all(wide[:, 1] - wide[:, 0] > narrow[:, 1] - narrow[:, 0])
    assert np.array_equal(result.theta, result.intervals["checkpoint"].center)


def test_without_the_population_term_there_are_no_extra_releases():
    X, y = _data()
    with record_releases() as recorder:
        result = ckpt.fit(X, y, 1.0, 1e-6, np.random.default_rng(1), sampling_term=False, T=50, burn_in=5, stride=5)
    assert len(recorder.releases) == 50 and set(result.intervals) == {"checkpoint"}


def test_T_must_reach_the_last_checkpoint():
    X, y = _data()
    with pytest.raises((HyperError, ValueError), match="T"):
        ckpt.fit(X, y, 1.0, 1e-6, np.random.default_rng(1), T=20)
