"""Interval coverage (issue 37): Clopper–Pearson, the ci metric's columns, the coverage table and figure."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from dpbench.analysis.figures.coverage import coverage_figure
from dpbench.analysis.metrics import TrialCoordinates, metric_columns
from dpbench.analysis.stats import clopper_pearson
from dpbench.data.synthetic import load as sphere
from dpbench.linalg import gram_stats
from dpbench.mechanisms._intervals import Interval
from dpbench.papers.intervals import metrics as ci_metrics
from dpbench.papers.intervals.analyses import coverage_table


def test_clopper_pearson_matches_the_beta_quantiles_and_the_edges():
    lo, hi = clopper_pearson(950, 1000)
    assert (float(lo), float(hi)) == pytest.approx((sps.beta.ppf(0.025, 950, 51), sps.beta.ppf(0.975, 951, 50)))
    assert float(hi) - float(lo) == pytest.approx(0.028, abs=0.002)  # ±1.4 pp at R = 1000 (spec 005 §10)
    lo, hi = clopper_pearson(np.array([0, 20]), np.array([20, 20]))
    assert lo[0] == 0.0 and hi[1] == 1.0 and hi[0] == pytest.approx(1 - 0.025 ** (1 / 20))


def test_overlap_is_one_for_identical_and_negative_for_disjoint_intervals():
    control = np.array([[0.0, 1.0], [0.0, 1.0], [0.0, 1.0]])
    private = np.array([[0.0, 1.0], [2.0, 3.0], [0.5, 2.5]])
    overlap = ci_metrics.overlap(private, control)
    assert overlap[0] == 1.0 and overlap[1] < 0 and overlap[2] == pytest.approx(0.5 * (0.5 + 0.25))


def test_metric_columns_expand_a_mapping():
    assert metric_columns("mse", 1.5) == {"mse": 1.5}
    assert metric_columns("ci", {"a.0": 1.0}) == {"ci.a.0": 1.0}


def test_ci_metric_writes_coverage_width_overlap_per_method_and_coefficient():
    data = sphere(np.random.default_rng(0), n=500, d=2, theta_norm=0.5, noise=0.5, n_test=0)
    stats = gram_stats(data.X_train, data.y_train)
    theta = data.population.theta
    covering = Interval("m", "population", center=theta, scale=np.full(2, 1e-9))  # a point at θ*: covers θ* only
    trial = TrialCoordinates(1.0, 1e-6, intervals={"m": covering})
    columns = ci_metrics.ci(theta, data, stats, trial)
    assert columns["m.cover_pop.0"] == 1.0 and columns["m.cover_pop.1"] == 1.0
    assert columns["m.cover_ols.0"] == 0.0  # θ̂_OLS ≠ θ* on a sample
    assert columns["wald.cover_ols.1"] == 1.0 and "wald.overlap.0" not in columns
    assert columns["m.width.0"] == pytest.approx(2 * 1.959964 * 1e-9)
    wald = ci_metrics.ols_wald(stats).conf_int(0.05)
    assert columns["wald.width.0"] == pytest.approx(wald[0, 1] - wald[0, 0])


def _trials() -> pd.DataFrame:
    rows = []
    for trial in range(40):
        rows.append({"dataset": "toy", "n": 100, "d": 1, "label": "mech", "epsilon": 1.0,
                     "ci.wald.cover_pop.0": 1.0, "ci.wald.cover_ols.0": 1.0, "ci.wald.width.0": 1.0,
                     "ci.m.cover_pop.0": float(trial < 20), "ci.m.cover_ols.0": 1.0, "ci.m.width.0": 2.0 + trial,
                     "ci.m.overlap.0": 0.5, "ci.m.agree.0": float(trial % 2)})  # fmt: skip
    return pd.DataFrame(rows)


def test_coverage_table_counts_bands_and_the_nominal_rule():
    table = coverage_table(_trials()).set_index("method")
    assert table.loc["m", "cover_pop"] == 0.5 and table.loc["m", "nominal_pop"] == "no"
    assert table.loc["m", "nominal_ols"] == "yes" and table.loc["wald", "curve"] == "non-private Wald"
    assert (table.loc["m", "cover_pop_lo"], table.loc["m", "cover_pop_hi"]) == pytest.approx(
        tuple(float(v) for v in clopper_pearson(20, 40))
    )
    assert table.loc["m", "width_ratio"] == pytest.approx(np.median(2.0 + np.arange(40)))
    assert table.loc["m", "agree"] == 0.5


def test_coverage_figure_draws_each_curve_with_its_band_and_the_nominal_line():
    table = pd.DataFrame({"panel": ["a"] * 4, "curve": ["x", "x", "y", "y"], "epsilon": [0.1, 1.0, 0.1, 1.0],
                          "value": [0.5, 0.9, 0.95, 0.96], "lo": [0.4, 0.85, 0.9, 0.92],
                          "hi": [0.6, 0.95, 0.98, 0.99]})  # fmt: skip
    fig = coverage_figure(table)
    ax = fig.axes[0]
    assert len(ax.containers) == 2  # one error-bar container per curve
    assert any(np.allclose(line.get_ydata(), 0.95) for line in ax.get_lines())
    assert ax.get_xscale() == "log" and ax.get_ylabel() == "coverage"


def test_real_data_coverage_config_has_an_identified_data_fit():
    """θ̂_OLS is a coverage target only where XᵀX is well conditioned: with the R recipe's raw features cond(XᵀX)
    reached 10¹¹–10¹⁶ and every private interval missed θ̂_OLS (coverage 0.00, docs/intervals.md); the config
    z-scores the features (cond ≤ 135)."""
    from dpbench import registry
    from dpbench.config import load_config

    config = load_config("configs/intervals/coverage_real.yaml")
    assert len(config.datasets) >= 5
    for entry in config.datasets:
        data = registry.get_dataset(entry.loader).load(np.random.default_rng(0), **dict(entry.options))
        assert np.linalg.cond(data.X_train.T @ data.X_train) < 1e3, entry.loader


def test_ci_metric_sees_the_data_the_mechanism_fits():
    """The sanity check of the real-data puzzle: the θ̂_OLS the metric scores is that of the very rows the mechanism
    received, so the non-private Wald covers it on every trial and, at ε = 10⁴ on a well-conditioned design (λ̂ = 0),
    the private intervals cover it too."""
    from dpbench.mechanisms.ssp import adassp_pboot

    data = sphere(np.random.default_rng(3), n=2000, d=3, theta_norm=0.5, noise=0.5, n_test=0)
    stats = gram_stats(data.X_train, data.y_train)
    assert stats.theta_ols == pytest.approx(np.linalg.lstsq(data.X_train, data.y_train, rcond=None)[0])
    result = adassp_pboot.fit(stats.X, stats.y, 1e4, 1e-6, np.random.default_rng(0), stats=stats, B=200)
    assert result.info["ridge"] == 0.0
    columns = ci_metrics.ci(result.theta, data, stats, TrialCoordinates(1e4, 1e-6, intervals=result.intervals))
    for method in ("wald", "pboot", "pboot_ssp"):
        assert all(columns[f"{method}.cover_ols.{j}"] == 1.0 for j in range(3)), method
