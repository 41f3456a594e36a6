"""Controls and ablations of issue 17: IWR-DP ablations and the G-Pareto generator (spec 000), the perfect-oracle
SquareCB and the dimension-free regression oracles (spec 001), the DP-FTRL analyses (spec 002),
the Stein ℓ2-sensitivity ablation, the exact-covariance control and the SNR/A8 tables (spec 003), and the bootstrap
helpers of :mod:`dpbench.analysis.stats`. Fast (a few seconds)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import integrate

from dpbench import registry
from dpbench.analysis.stats import loglog_slope, loglog_slope_ci, median_ci, paired_ratio_ci

registry.discover()


def fit(name: str, *args, **kwargs):
    return registry.get_mechanism(name).fit(*args, **kwargs)


def load(name: str, seed: int = 0, **options):
    return registry.get_dataset(name).load(np.random.default_rng(seed), **options)


# ---------------------------------------------------------------------------------------------------------------
# dpbench.analysis.stats


def test_paired_ratio_is_the_ratio_of_statistics_and_its_ci_covers_it():
    rng = np.random.default_rng(0)
    a = rng.lognormal(0.0, 0.3, 200)
    b = 2.0 * a * rng.lognormal(0.0, 0.05, 200)
    ratio, lo, hi = paired_ratio_ci(a, b, np.random.default_rng(1))
    assert ratio == pytest.approx(np.median(a) / np.median(b))
    assert lo <= ratio <= hi and hi - lo < 0.1 and lo > 0.45 and hi < 0.55
    with pytest.raises(ValueError, match="same shape"):
        paired_ratio_ci(a, b[:-1], np.random.default_rng(1))


def test_median_ci_and_nan_handling():
    med, lo, hi = median_ci([1.0, 2.0, np.nan, 3.0, 4.0, 5.0], np.random.default_rng(0))
    assert med == 3.0 and 1.0 <= lo <= med <= hi <= 5.0
    assert math.isnan(median_ci([7.0], np.random.default_rng(0))[1])


def test_loglog_slope_ci_recovers_a_power_law():
    rng = np.random.default_rng(0)
    groups = {float(x): x**-0.5 * rng.lognormal(0.0, 0.1, 30) for x in (1e3, 2e3, 4e3, 8e3, 16e3)}
    slope, lo, hi = loglog_slope_ci(groups, np.random.default_rng(1), resamples=300)
    assert lo < -0.5 < hi and hi - lo < 0.2 and abs(slope + 0.5) < 0.05
    assert loglog_slope([1, 10], [1, 0.1]) == pytest.approx(-1.0)
    assert math.isnan(loglog_slope([1], [1]))


# ---------------------------------------------------------------------------------------------------------------
# spec 000: IWR-DP ablations and the G-Pareto generator


@pytest.fixture(scope="module")
def pareto():
    return load("iwr_pareto", n=40_000, d=5, a=2.0, s=0.02, theta_norm=0.5)


def test_ablation_with_every_ingredient_on_is_iwr_dp_exactly(pareto):
    X, y = pareto.X_train, pareto.y_train
    kw = dict(calibration="agm", neighbour="zero_out")
    ref = fit("iwr_dp", X, y, 0.3, 1e-5, np.random.default_rng(7), **kw)
    abl = fit("iwr_dp_ablation", X, y, 0.3, 1e-5, np.random.default_rng(7), **kw)
    np.testing.assert_array_equal(ref.theta, abl.theta)
    np.testing.assert_array_equal(ref.info["W"], abl.info["W"])


def test_ablation_identity_weights_ball_and_invalid_combination(pareto):
    X, y = pareto.X_train, pareto.y_train
    ident = fit("iwr_dp_ablation", X, y, 0.3, 1e-5, np.random.default_rng(7), weights="identity")
    np.testing.assert_array_equal(ident.info["W"], np.eye(5))
    assert "std_H" not in ident.info  # nothing released from D₀
    full = fit("iwr_dp_ablation", X, y, 0.3, 1e-5, np.random.default_rng(7), weights="identity", stage2_rows="all")
    assert full.info["std_psi"] == pytest.approx(ident.info["std_psi"] * (X.shape[0] - X.shape[0] // 2) / X.shape[0])
    ball = fit("iwr_dp_ablation", X, y, 0.05, 1e-5, np.random.default_rng(7), weights="identity", radius=0.2)
    assert np.linalg.norm(ball.theta) <= 0.2 + 1e-9
    with pytest.raises(ValueError, match="needs weights='identity'"):
        fit("iwr_dp_ablation", X, y, 0.3, 1e-5, np.random.default_rng(7), stage2_rows="all")
    with pytest.raises(ValueError, match="weights: must be one of"):
        fit("iwr_dp_ablation", X, y, 0.3, 1e-5, np.random.default_rng(7), weights="diag")
    with pytest.raises(ValueError, match="radius"):
        fit("iwr_dp_ablation", X, y, 0.3, 1e-5, np.random.default_rng(7), radius=-1.0)


def test_ssp_ball_radius_default_keeps_numbers_and_bounds_the_estimate(pareto):
    X, y = pareto.X_train, pareto.y_train
    default = fit("ssp_ball", X, y, 0.05, 1e-5, np.random.default_rng(3))
    explicit = fit("ssp_ball", X, y, 0.05, 1e-5, np.random.default_rng(3), radius=1.0)
    np.testing.assert_array_equal(default.theta, explicit.theta)
    small = fit("ssp_ball", X, y, 0.05, 1e-5, np.random.default_rng(3), radius=0.1)
    assert np.linalg.norm(small.theta) <= 0.1 + 1e-9
    with pytest.raises(ValueError, match="radius"):
        fit("ssp_ball", X, y, 0.05, 1e-5, np.random.default_rng(3), radius=0.0)


def test_pareto_moments_radial_rule_and_samples():
    from dpbench.papers.iwr.generators import pareto_moment, pareto_radial

    a, s = 2.0, 0.02
    for k in (1.0, 2.0, 3.0):
        integral = integrate.quad(lambda t, k=k: t**k * a * s**a * t ** (-a - 1), s, 1.0)[0] + s**a
        assert pareto_moment(a, s, k) == pytest.approx(integral, rel=1e-9)
    r, q = pareto_radial(a, s)
    assert q.sum() == pytest.approx(1.0) and r.max() == 1.0 and q[-1] == pytest.approx(s**a)
    assert q @ r == pytest.approx(pareto_moment(a, s, 1.0), rel=2e-3)
    assert q @ r**2 == pytest.approx(pareto_moment(a, s, 2.0), rel=2e-3)
    ds = load("iwr_pareto", seed=1, n=400_000, d=3, a=a, s=s)
    norms = np.linalg.norm(ds.X_train, axis=1)
    assert norms.max() <= 1.0 + 1e-12 and norms.min() >= s - 1e-12
    assert norms.mean() == pytest.approx(pareto_moment(a, s, 1.0), rel=0.02)
    assert (norms == 1.0).mean() == pytest.approx(s**a, abs=5 * math.sqrt(s**a / norms.size))
    np.testing.assert_allclose(ds.population.cov, pareto_moment(a, s, 2.0) / 3 * np.eye(3))
    with pytest.raises(ValueError, match="iwr_pareto"):
        pareto_radial(2.0, 1.5)


def test_theta_norm_rescales_theta_and_keeps_the_data_stream():
    base = load("iwr_twoscale", seed=4, n=2000, d=5)
    inner = load("iwr_twoscale", seed=4, n=2000, d=5, theta_norm=0.5)
    np.testing.assert_array_equal(base.X_train, inner.X_train)
    np.testing.assert_allclose(inner.population.theta, 0.5 * base.population.theta)
    assert np.linalg.norm(load("iwr_gauss", n=100, d=4, theta_norm=0.3).population.theta) == pytest.approx(0.3)
    with pytest.raises(ValueError, match="theta_norm"):
        load("iwr_gauss", n=100, d=4, theta_norm=1.5)


# ---------------------------------------------------------------------------------------------------------------
# spec 001: perfect-oracle SquareCB, dimension-free oracles as regression mechanisms, ratio tables


def test_perfect_oracle_regret_is_bounded_by_the_schedule():
    """With θ̂ = θ*, the greedy arm is optimal and the IGW regret per round is Σ_{a≠a*} gap/(|A| + γ gap) ≤
    (|A| − 1)/γ^(j): the cumulative regret of each epoch is at most N^(j)(|A| − 1)/γ^(j)."""
    from dpbench.bandits.envs import get_env
    from dpbench.bandits.oracles import sigma_scale
    from dpbench.bandits.simulator import doubling_epochs, run_bandit
    from dpbench.bandits.squarecb import rate_jdp

    env = get_env("powerlaw").make(np.random.default_rng(0), d=20, n_arms=6)
    T, eps, delta = 2**11, 1.0, 1e-5
    res = run_bandit(
        env,
        "squarecb_perfect_oracle",
        T,
        math.inf,
        delta,
        np.random.default_rng(1),
        schedule="jdp",
        schedule_epsilon=eps,
    )
    bounds = doubling_epochs(T)
    J = len(bounds) - 1
    fail_epoch = (1.0 / T) / (2 * J * J)
    sigma = sigma_scale(eps, delta, "paper")
    for j in range(2, J):  # epochs after the first fitted one (N ≥ 8)
        n_prev = bounds[j] - bounds[j - 1]
        if n_prev < 8:
            continue
        gamma = math.sqrt(env.n_arms) / rate_jdp(n_prev, sigma, fail_epoch)
        epoch_regret = res.regret[bounds[j] : bounds[j + 1]].sum()
        assert epoch_regret <= (bounds[j + 1] - bounds[j]) * (env.n_arms - 1) / gamma + 1e-9
    assert res.ledger.used == 0  # the control never reads a reward
    with pytest.raises(ValueError, match="schedule"):
        run_bandit(env, "squarecb_perfect_oracle", 64, math.inf, delta, np.random.default_rng(1), schedule="x")


def test_dimfree_regression_mechanisms_and_powerlaw_data():
    ds = load("bandit_powerlaw", n=4096, d=50)
    X, y, pop = ds.X_train, ds.y_train, ds.population
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0)
    assert set(np.unique(y)) <= {-1.0, 1.0} and np.trace(pop.cov) == pytest.approx(1.0)
    jdp = fit("dimfree_jdp_gd", X, y, 0.2, 1e-5, np.random.default_rng(2))
    proper = fit("dimfree_jdp_gd_proper", X, y, 0.2, 1e-5, np.random.default_rng(2))
    assert jdp.info["std"] > 0 and np.linalg.norm(proper.theta) <= 1.0 + 1e-12
    assert jdp.info["norm_released"] == pytest.approx(np.linalg.norm(jdp.theta))
    np_fit = fit("dimfree_ldp_sgd", X, y, 0.2, 1e-5, np.random.default_rng(2), nonprivate=True)
    assert np_fit.info["std_user"] == 0.0
    err = np_fit.theta - pop.theta
    assert err @ pop.cov @ err < pop.theta @ pop.cov @ pop.theta  # better than θ̂ = 0 without noise


def _bandit_trials():
    rows = []
    for trial in range(6):
        for label, eps, model, reg in (
            ("elim", 1.0, "joint", 30.0 + trial),
            ("elim", math.inf, "joint", 10.0),
            ("linucb", math.inf, "none", 5.0),
        ):
            rows.append(
                {
                    "dataset_id": "env",
                    "label": label,
                    "epsilon": eps,
                    "privacy_model": model,
                    "trial": trial,
                    "T": 1024,
                    "regret": reg,
                }
            )
    return pd.DataFrame(rows)


def test_bandit_ratio_table_pairs_trials():
    from dpbench.bandits.control_reports import ratio_table

    table = ratio_table(_bandit_trials(), [1024])
    priv = table[table["numerator"] == "elim @ ε=1"].iloc[0]
    assert priv["ratio"] == pytest.approx(32.5 / 10.0) and priv["lo"] <= priv["ratio"] <= priv["hi"]
    ref = table[table["denominator"] == "linucb @ ε=inf"].iloc[0]
    assert ref["ratio"] == pytest.approx(2.0) and ref["trials"] == 6


# ---------------------------------------------------------------------------------------------------------------
# spec 002: analyses


def test_eta_table_picks_the_grid_minimum_and_pairs_ratios():
    from dpbench.papers.ftrl.controls import eta_table

    rows = []
    for label, base in (("DP-FTRL-I", 1.0), ("DP-FTRL-Σ (oracle H)", 0.5)):
        for eta, factor in (("rule", 3.0), ("0.01", 2.0), ("0.1", 1.0), ("1.0", 4.0)):
            for rep in range(3):
                rows.append(
                    {
                        "dataset": "λ",
                        "epsilon": 1.0,
                        "label": label,
                        "hp.eta": eta,
                        "info.eta": 0.05,
                        "data_draw": rep,
                        "trial": 0,
                        "excess_pop_paper": base * factor * (1 + 0.01 * rep),
                    }
                )
    table = eta_table(pd.DataFrame(rows))
    best = table[(table["label"] == "DP-FTRL-I") & (table["eta"] == "grid-best")].iloc[0]
    assert best["eta_value"] == pytest.approx(0.1) and best["mean"] == pytest.approx(1.01)
    ratio = table[(table["label"].str.contains("/")) & (table["eta"] == "grid-best")].iloc[0]
    assert ratio["mean"] == pytest.approx(0.5)


# ---------------------------------------------------------------------------------------------------------------
# spec 003: ℓ2-sensitivity ablation, exact-covariance control, SNR and A8 tables


@pytest.fixture(scope="module")
def pm1():
    return load("stein_synthetic", n=20_000, covariates="bernoulli", family="logistic", p=5)


def test_l2_ablation_scales_the_noise_by_p_and_sqrt_p(pm1):
    kw = dict(public_X=pm1.X_public, family="logistic")
    l1 = fit("stein_glm_l1", pm1.X_train, pm1.y_train, 8.0, 1e-6, np.random.default_rng(0), **kw)
    l2 = fit("stein_glm_l2", pm1.X_train, pm1.y_train, 8.0, 1e-6, np.random.default_rng(0), r2=0.4472135955, **kw)
    assert l2.info["s_xx"] == pytest.approx(l1.info["s_xx"] / 5, rel=1e-9)
    assert l2.info["s_xy"] == pytest.approx(l1.info["s_xy"] / math.sqrt(5), rel=1e-9)
    assert l2.info["n_clipped"] == 0 and l2.info["sensitivity_norm"] == "l2"
    with pytest.raises(ValueError, match="r2"):
        fit("stein_glm_l2", pm1.X_train, pm1.y_train, 8.0, 1e-6, np.random.default_rng(0), **kw)


def test_exact_covariance_control_is_accurate_when_the_noise_is_negligible(pm1):
    res = fit(
        "stein_xty_oracle_cov",
        pm1.X_train,
        pm1.y_train,
        1e6,
        1e-6,
        np.random.default_rng(0),
        public_X=pm1.X_public,
        population=pm1.population,
    )
    w = pm1.population.theta
    assert np.sum((res.theta - w) ** 2) / np.sum(w**2) < 0.05 and res.info["xty_snr"] > 10
    with pytest.raises(ValueError, match="population"):
        fit(
            "stein_xty_oracle_cov", pm1.X_train, pm1.y_train, 4.0, 1e-6, np.random.default_rng(0), public_X=pm1.X_public
        )


def test_snr_and_a8_tables():
    from dpbench.papers.stein.controls import a8_table, gauss_signal, xty_snr

    z = np.random.default_rng(0).standard_normal(400_000)
    s = 0.7
    mc = np.mean(s * z * (1.0 / (1.0 + np.exp(-s * z))))  # ‖E[x σ(⟨x,w⟩)]‖ for ‖w‖ = 1, x ~ N(0, s²I)
    assert gauss_signal(s) == pytest.approx(mc, rel=0.02)
    s_xy, snr = xty_snr(700_000, 5, 20.0, 0.01, 1.0)
    assert snr == pytest.approx(math.sqrt(700_000) * 0.01 / (math.sqrt(5) * s_xy))
    # at ε/2 = 10 the classical formula (outside its theorem for ε' ≥ 1) under-noises: the analytic SNR is lower
    assert xty_snr(700_000, 5, 20.0, 0.01, 1.0, "analytic")[1] < snr
    a8 = a8_table().set_index("p")
    assert a8.iloc[0, 1] == pytest.approx(2 * math.exp(1 / math.sqrt(5)) / math.sqrt(5))
    assert (a8.iloc[:, 1] < a8.iloc[:, 2]).all() and (a8.iloc[:, 0] > 1).all()


def test_control_analyses_are_registered():
    for name in (
        "iwr-ablation",
        "bandit-ratios",
        "bandit-dimfree-control",
        "bandit-f8",
        "bandit-coverage",
        "ftrl-eta-grid",
        "ftrl-slopes",
        "stein-snr",
        "stein-ctrl",
    ):
        assert registry.get_analysis(name).name == name
