"""Brown et al. 2024 iso-error experiment (spec 005 §4-addendum): data, metric, DP-GD's noise, the crossing analysis."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dpbench import registry
from dpbench.mechanisms.gradient import dpgd
from dpbench.papers.brown2024 import analyses
from dpbench.papers.brown2024.generators import load
from dpbench.papers.brown2024.metrics import brown_l2_error
from dpbench.privacy.zcdp import epsilon_from_rho


def test_dpgd_at_matched_budget_is_the_scripts_noise():
    """The script's per-step variance 2Tγ²/(ρn²) (ρ = 0.015, T = 20, γ = 5√p): dpgd's zcdp σ at
    ε = ρ + 2√(ρ log 1/δ) = 0.925456 with C = 5 and clip_scaling sqrt_d."""
    rho, T, p, n = 0.015, 20, 10, 1500
    epsilon = epsilon_from_rho(rho, 1e-6)
    assert epsilon == pytest.approx(0.925456, abs=5e-7)
    gamma = 5.0 * math.sqrt(p)
    sigma = dpgd.dpgd_sigma(epsilon, 1e-6, n, T, gamma, "zcdp")
    assert sigma**2 == pytest.approx(2 * T * gamma**2 / (rho * n**2), rel=1e-9)
    ds = load(np.random.default_rng(0), p=p, n_per_p=n // p)
    out = dpgd.fit(ds.X_train, ds.y_train, epsilon, 1e-6, np.random.default_rng(1), T=T, C=5.0,
                   clip_scaling="sqrt_d", clip="per_example", learning_rate=0.2)  # fmt: skip
    assert out.info["sigma"] == pytest.approx(sigma)  # σ ∝ γ: the clip level is C·√p


def test_generator_and_metric_are_in_raw_units():
    """max_norm scaling (the paper's non-private preprocessing) meets the unit bounds, and the metric maps a fit on
    the scaled data back: OLS on scaled data has the same raw error as OLS on raw data (equivariance)."""
    raw = load(np.random.default_rng(5), p=4, n_per_p=50)
    scaled = load(np.random.default_rng(5), p=4, n_per_p=50, preprocess="max_norm")
    assert raw.X_train.shape == (200, 4) and np.linalg.norm(raw.population.theta) == pytest.approx(1.0)
    assert np.linalg.norm(scaled.X_train, axis=1).max() == pytest.approx(1.0)
    assert np.abs(scaled.y_train).max() == pytest.approx(1.0)
    assert brown_l2_error(scaled.population.theta, scaled, None, None) == 0.0
    ols_raw = np.linalg.lstsq(raw.X_train, raw.y_train, rcond=None)[0]
    ols_scaled = np.linalg.lstsq(scaled.X_train, scaled.y_train, rcond=None)[0]
    expected = np.linalg.norm(ols_raw - raw.population.theta)
    assert brown_l2_error(ols_scaled, scaled, None, None) == pytest.approx(expected, rel=1e-9)
    assert brown_l2_error(ols_raw, raw, None, None) == pytest.approx(expected, rel=1e-12)
    with pytest.raises(ValueError, match="preprocess"):
        load(np.random.default_rng(0), preprocess="zscore")


def test_crossing_interpolates_log_log_and_refuses_unbracketed():
    ns = np.array([100.0, 200.0, 400.0])
    assert analyses.crossing(ns, 60.0 / ns, 0.5) == pytest.approx(120.0)  # error ∝ 1/n: exact in log–log
    assert analyses.crossing(ns, 150.0 / ns, 0.5) == pytest.approx(300.0)
    assert math.isnan(analyses.crossing(ns, 500.0 / ns, 0.5))  # never below the target on the grid
    assert math.isnan(analyses.crossing(ns, 5.0 / ns, 0.5))  # already below at the first n


def test_table_recovers_a_known_exponent():
    """Synthetic trials with mean error 0.5·(n / (c·p^1.5))^(−1) and tiny noise: n* = c·p^1.5, fitted b ≈ 1.5 with a
    narrow interval that contains it; a linear curve gives b ≈ 1."""
    rng = np.random.default_rng(0)
    rows = []
    for label, b, c in (("super", 1.5, 40.0), ("linear", 1.0, 180.0)):
        for p in (5, 10, 20, 40):
            for factor in (0.5, 0.8, 1.25, 2.0):
                n = int(round(c * p**b * factor))
                for _ in range(20):
                    rows.append({"label": label, "data.p": p, "data.n": n,
                                 "err": 0.5 * (c * p**b / n) * (1 + 0.01 * rng.standard_normal())})  # fmt: skip
    table, fits = analyses.iso_error_table(pd.DataFrame(rows), "err", 0.5, 200, 0)
    fits = fits.set_index("label")
    assert fits.loc["super", "b"] == pytest.approx(1.5, abs=0.02)
    assert fits.loc["super", "b_lo"] - 0.005 <= 1.5 <= fits.loc["super", "b_hi"] + 0.005  # n rounded to integers
    assert fits.loc["super", "b_hi"] - fits.loc["super", "b_lo"] < 0.05
    assert fits.loc["linear", "b"] == pytest.approx(1.0, abs=0.02)
    assert (table["n_lo"] <= table["n_star"]).all() and (table["n_star"] <= table["n_hi"]).all()


def test_registered():
    registry.discover()
    assert "brown2024_iso_error" in registry.ANALYSES
    assert registry.get_dataset("brown_isotropic").shape(p=7, n_per_p=3) == (21, 7)
