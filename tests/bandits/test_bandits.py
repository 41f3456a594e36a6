"""Tests of the contextual-bandit simulator and the private bandit algorithms (specs 001 §3.8–3.12, 000 §3.11)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import yaml

from dpbench.bandits import elimination as elim
from dpbench.bandits.envs import ContextStream, fixedarms, get_env, powerlaw, raredir, sphere, twoscale
from dpbench.bandits.oracles import (
    dimfree_jdp_fit,
    dimfree_ldp_fit,
    iwr_dp_fit,
    iwr_ldp_fit,
    noise_std,
    release_pair,
    ssp_ols_fit,
)
from dpbench.bandits.simulator import (
    DataLedger,
    DataReuseError,
    EpochData,
    checkpoints,
    doubling_epochs,
    run_bandit,
)
from dpbench.bandits.squarecb import igw_probabilities
from dpbench.config import ConfigError, load_config
from dpbench.mechanisms.iwr.calibration import sigma_chen
from dpbench.mechanisms.iwr.linalg import msqrt


def _data(env, N, seed=0):
    rng = np.random.default_rng(seed)
    Phi = env.contexts(rng, N)
    a = rng.integers(env.n_arms, size=N)
    chosen = Phi[np.arange(N), a]
    y = env.reward(env.mean(chosen[:, None, :])[:, 0], rng.random(N))
    return EpochData(chosen, y, 0, DataLedger(N))


# ---------------------------------------------------------------------------------------------------------------
# environments


@pytest.mark.parametrize("make", [sphere, twoscale, raredir, powerlaw, fixedarms])
def test_environments_bounded_features_and_rewards(make):
    env = make(np.random.default_rng(1))
    Phi = env.contexts(np.random.default_rng(2), 500)
    assert Phi.shape == (500, env.n_arms, env.d)
    assert np.linalg.norm(Phi, axis=-1).max() <= 1 + 1e-12
    assert np.linalg.norm(env.theta) <= 1 + 1e-12
    means = env.mean(Phi)
    assert np.abs(means).max() <= 1
    r = env.reward(means[:, 0], np.random.default_rng(3).random(500))
    assert set(np.unique(r)) <= {-1.0, 1.0}


def test_reward_means_match_model():
    env = sphere(np.random.default_rng(0), d=3, n_arms=2)
    mean = np.full(200_000, 0.3)
    r = env.reward(mean, np.random.default_rng(1).random(mean.size))
    assert abs(r.mean() - 0.3) < 0.01  # Rademacher model: E r = <φ, θ*>
    logit = sphere(np.random.default_rng(0), d=3, n_arms=2, link="logistic")
    r = logit.reward(np.full(200_000, 0.7), np.random.default_rng(1).random(200_000))
    assert set(np.unique(r)) == {0.0, 1.0} and abs(r.mean() - 0.7) < 0.01


def test_twoscale_norms_and_fixedarms_gap():
    env = twoscale(np.random.default_rng(0), d=5, n_arms=4, rho=0.1, s=0.01)
    norms = np.linalg.norm(env.contexts(np.random.default_rng(1), 20_000)[:, 0], axis=1)
    assert set(np.round(np.unique(norms), 8)) == {0.01, 1.0}
    assert abs(np.isclose(norms, 1.0).mean() - 0.1) < 0.01
    fixed = fixedarms(np.random.default_rng(0), d=5, n_arms=5, gap=0.2)
    top = np.sort(fixed.mean(fixed.contexts(np.random.default_rng(0), 1))[0])
    assert top[-1] - top[-2] >= 0.2


def test_env_bad_options_raise():
    with pytest.raises(ValueError, match="n_arms"):
        sphere(np.random.default_rng(0), n_arms=1)
    with pytest.raises(ValueError, match="rho"):
        twoscale(np.random.default_rng(0), rho=0.0)
    with pytest.raises(KeyError, match="unknown environment"):
        get_env("nope")


def test_context_stream_independent_of_chunking():
    env = sphere(np.random.default_rng(0), d=4, n_arms=3)
    a = ContextStream(env, (1, 2))
    b = ContextStream(env, (1, 2))
    whole, coins = a.get(0, 3000)
    parts = [b.get(s, min(3000, s + 777)) for s in range(0, 3000, 777)]
    assert np.array_equal(whole, np.concatenate([p[0] for p in parts]))
    assert np.array_equal(coins, np.concatenate([p[1] for p in parts]))


# ---------------------------------------------------------------------------------------------------------------
# per-sample norm bounds (spec 000 §3.13, spec 001 §3.13 / T0)


def test_per_sample_norm_bounds():
    rng = np.random.default_rng(0)
    d = 6
    A = rng.standard_normal((d, d))
    X = msqrt(A @ A.T + 0.1 * np.eye(d)) * 5  # a generic PD information matrix
    Phi = rng.standard_normal((2000, d))
    Phi *= (rng.random(2000) ** 3 / np.linalg.norm(Phi, axis=1))[:, None]  # ‖φ‖ ≤ 1, many tiny
    root = msqrt(X)
    XPhi = Phi @ X
    nx = np.linalg.norm(XPhi, axis=1)
    for gamma in (0.1, 1.0, 10.0):  # Alg 4: ‖X^{1/2}φφᵀX^{1/2}‖_F/(1+γ‖Xφ‖) < B/γ; Alg 5: ‖w(φ)‖, ‖w(φ)φᵀ‖_F < 1/γ
        fro = np.linalg.norm(Phi @ root, axis=1) ** 2 / (1 + gamma * nx)
        assert fro.max() < 1 / gamma
        w = XPhi / (1 + gamma * nx)[:, None]
        assert np.linalg.norm(w, axis=1).max() < 1 / gamma
    # Alg 2/3 (LDP): ‖V_t‖_F ≤ ‖φ‖ ≤ 1, ‖ψ_t‖ ≤ 1, ‖Ψ_t‖_F = ‖φ‖ ≤ 1
    V = np.linalg.norm(Phi @ root, axis=1) ** 2 / nx
    assert np.all(V <= np.linalg.norm(Phi, axis=1) + 1e-12)
    unit = XPhi / nx[:, None]
    assert np.allclose(np.linalg.norm(unit, axis=1), 1)
    # Alg 6/8: ‖φ(clip_R(<θ,φ>) − y)‖ ≤ R + 1
    theta = rng.standard_normal(d) * 10
    R = 2.0
    g = Phi * (np.clip(Phi @ theta, -R, R) - rng.choice([-1.0, 1.0], 2000))[:, None]
    assert np.linalg.norm(g, axis=1).max() <= R + 1


# ---------------------------------------------------------------------------------------------------------------
# noise scales: formulas and empirical std


def test_noise_std_formulas():
    s1 = sigma_chen(1.0, 1e-5)
    assert s1 == pytest.approx(14.102037, abs=1e-6)
    assert noise_std(1.0, math.inf, 1e-5, "paper") == 0.0
    # paper calibration: std = σ_{α,β}·(half-sensitivity)
    assert noise_std(2.0, 1.0, 1e-5, "paper") == pytest.approx(s1)
    # two releases on one record (paper): doubled Δ, i.e. Priv_2 (std 2σ) and Priv_{2B} (std 2Bσ)
    assert release_pair((2.0, 2.0), 1.0, 1e-5, "paper") == pytest.approx([2 * s1, 2 * s1])
    env = sphere(np.random.default_rng(0), d=4, n_arms=3)
    data = _data(env, 4096)
    est = iwr_dp_fit(data, 0.5, 1e-5, np.random.default_rng(1), d_A=3, fail_prob=1e-4)
    s = sigma_chen(0.5, 1e-5)
    gamma, N1, Nk = est.info["gamma"], 4096 - 2048, 2048 // 4
    assert est.info["std_H"] == pytest.approx(s / (gamma * Nk))  # SymPriv_{B/(γN)}
    assert est.info["std_psi"] == pytest.approx(2 * s / (gamma * N1))  # Priv_{2/(γN₁)} (spec 000 #1)
    est = iwr_ldp_fit(_data(env, 4096), 0.5, 1e-5, np.random.default_rng(1), fail_prob=1e-4)
    assert est.info["std_V_user"] == pytest.approx(s)  # SymPriv_B, B = 1
    assert est.info["std_psi_user"] == pytest.approx(2 * s)  # Priv_2


def test_empirical_noise_std_of_released_iterates():
    """Alg 5 (JDP dim-free) releases θ_K + N(0, (σ(R+1)/N)² I) once; Alg 6 adds per-user noise of std σ(R+1)."""
    env = sphere(np.random.default_rng(0), d=3, n_arms=2)
    base = _data(env, 512, seed=5)
    draws, ldp = [], []
    for r in range(2000):
        data = EpochData(base.Phi, base.y, 0, DataLedger(512))
        theta, info = dimfree_jdp_fit(data, 1.0, 1e-5, np.random.default_rng(r), fail_prob=0.01, c_K=1e-9)
        draws.append(theta)
        data = EpochData(base.Phi, base.y, 0, DataLedger(512))
        theta_l, info_l = dimfree_ldp_fit(data, 1.0, 1e-5, np.random.default_rng(r), fail_prob=0.01, c_K=1e-9)
        ldp.append(theta_l)
    assert info["K"] == 1 and info_l["K"] == 1
    s = sigma_chen(1.0, 1e-5)
    assert np.std(draws, axis=0) == pytest.approx(np.full(3, s * 3 / 512), rel=0.05)
    assert np.std(ldp, axis=0) == pytest.approx(np.full(3, s * 3 / math.sqrt(512)), rel=0.05)


def test_ssp_ldp_noise_averages_users():
    env = sphere(np.random.default_rng(0), d=3, n_arms=2)
    est = ssp_ols_fit(_data(env, 1024), 1.0, 1e-5, np.random.default_rng(0), fail_prob=0.01, local=True)
    assert est.info["std_G"] == pytest.approx(2 * sigma_chen(1.0, 1e-5) / math.sqrt(1024))


# ---------------------------------------------------------------------------------------------------------------
# each datum used once


def test_take_twice_raises():
    ledger = DataLedger(10)
    data = EpochData(np.zeros((10, 2)), np.zeros(10), 0, ledger)
    data.take(0, 5)
    with pytest.raises(DataReuseError):
        data.take(4, 6)


@pytest.mark.parametrize(
    "algo", ["elim_iwr_jdp", "elim_iwr_ldp", "elim_ssp_jdp", "squarecb_jdp", "squarecb_ldp", "elim_iwr_glm_ldp"]
)
def test_each_datum_used_at_most_once(algo):
    env = sphere(np.random.default_rng(0), d=3, n_arms=4)
    result = run_bandit(env, algo, 3000, 0.5, 1e-5, np.random.default_rng(1))
    assert result.ledger.counts.max() == 1
    bounds = doubling_epochs(3000)
    last = bounds[-2]
    assert result.ledger.counts[last:].sum() == 0  # the last epoch is never regressed
    assert result.ledger.used > 1000


def test_doubling_epochs_and_checkpoints():
    assert doubling_epochs(10) == [0, 1, 3, 7, 10]
    grid = checkpoints(1024, per_octave=2)
    assert grid[0] == 16 and grid[-1] == 1024 and np.all(np.diff(grid) > 0)


# ---------------------------------------------------------------------------------------------------------------
# planning and spanners


@pytest.mark.parametrize("make", [sphere, raredir, twoscale])
def test_spanner_coefficients_bounded(make):
    env = make(np.random.default_rng(0), d=5, n_arms=10)
    rng = np.random.default_rng(1)
    Phi = env.contexts(rng, 400)
    mask = rng.random((400, 10)) < 0.6
    mask[:, 3] = True
    span = elim.spanner(Phi, mask, C=2.0)
    assert np.all(span <= mask) and np.all(span.sum(axis=1) >= 1)
    assert np.all(span.sum(axis=1) <= 5)
    assert elim.spanner_coefficients(Phi, mask, span).max() <= 2.0 + 1e-9
    # C = 1.2 needs Awerbuch–Kleinberg swaps more often; still bounded
    span = elim.spanner(Phi, mask, C=1.2)
    assert elim.spanner_coefficients(Phi, mask, span).max() <= 1.2 + 1e-9


def test_elimination_keeps_consistent_arms():
    Phi = np.array([[[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]]])
    est = elim.LinearEstimate(theta=np.array([0.9, 0.1]), M=np.eye(2), scale=0.1)
    mask, emptied = elim.eliminate(Phi, [None, est])
    # f = (0.9, 0.1, 0.5), b = (0.1, 0.1, 0.0707): lcb max 0.8 ⇒ only arm 0 survives
    assert mask.tolist() == [[True, False, False]] and emptied == 0
    wide = elim.LinearEstimate(theta=np.array([0.9, 0.1]), M=np.eye(2), scale=math.inf)
    assert elim.eliminate(Phi, [wide])[0].all()


def test_glm_elimination_is_on_the_mean_scale():
    """Spec 000 Thm H.5: f̂ = ν(<φ, θ̂>), widths b̂ on the mean scale. Linear predictions (0.9, 0.5), widths
    b̂ = 0.1‖φ‖ = (0.09, 0.05): on the linear scale arm 1 is eliminated (0.5 + 0.05 < 0.9 − 0.09), on the logistic
    mean scale it is kept (σ(0.5) + 0.05 = 0.6725 ≥ σ(0.9) − 0.09 = 0.6209)."""
    Phi = np.array([[[0.9, 0.0], [0.5, 0.0]]])
    theta, M = np.array([1.0, 0.0]), np.eye(2)
    logistic = elim.LinearEstimate(theta=theta, M=M, scale=0.1, link="logistic")
    linear = elim.LinearEstimate(theta=theta, M=M, scale=0.1)
    assert elim.eliminate(Phi, [linear])[0].tolist() == [[True, False]]
    assert elim.eliminate(Phi, [logistic])[0].tolist() == [[True, True]]
    f, b = logistic.predict(Phi)
    np.testing.assert_allclose(f, [[1 / (1 + math.exp(-0.9)), 1 / (1 + math.exp(-0.5))]])
    np.testing.assert_allclose(b, [[0.09, 0.05]])
    # where the mean scale separates the arms (σ(2) − σ(−2) = 0.76 > both widths) the two scales agree
    far = np.array([[[1.0, 0.0], [-1.0, 0.0]]])
    sharp = elim.LinearEstimate(theta=2.0 * theta, M=M, scale=0.01, link="logistic")
    assert elim.eliminate(far, [sharp])[0].tolist() == [[True, False]]
    # mixed links in one call: each estimate is tested on its own scale
    assert elim.eliminate(Phi, [logistic, logistic])[0].all()
    assert elim.eliminate(Phi, [logistic, linear])[0].tolist() == [[True, False]]


def test_uniform_choice_is_uniform_over_mask():
    mask = np.zeros((60_000, 5), dtype=bool)
    mask[:, [1, 3, 4]] = True
    picks = elim.uniform_choice(mask, np.random.default_rng(0))
    counts = np.bincount(picks, minlength=5) / picks.size
    assert counts[[0, 2]].sum() == 0 and np.allclose(counts[[1, 3, 4]], 1 / 3, atol=0.01)


def test_igw_probabilities():
    f = np.random.default_rng(0).standard_normal((100, 6))
    p = igw_probabilities(f, 5.0)
    assert np.all(p >= 0) and np.allclose(p.sum(axis=1), 1)
    assert np.all(p.argmax(axis=1) == f.argmax(axis=1))


# ---------------------------------------------------------------------------------------------------------------
# regret behaviour


def test_nonprivate_elimination_sublinear_on_sphere():
    env = sphere(np.random.default_rng(4), d=3, n_arms=5)
    T = 2**15
    result = run_bandit(env, "elim_iwr_jdp", T, math.inf, 1e-5, np.random.default_rng(5), c_b=0.05)
    cum = result.cumulative
    random_rate = np.mean(
        env.mean(env.contexts(np.random.default_rng(6), 5000)).max(axis=1)
        - env.mean(env.contexts(np.random.default_rng(6), 5000)).mean(axis=1)
    )
    assert cum[-1] < 0.25 * random_rate * T  # far below the uniform-play regret
    late = cum[-1] - cum[T // 2 - 1]
    early = cum[T // 2 - 1] - cum[T // 4 - 1]
    assert late < 1.5 * early  # per-round regret decreases: sub-linear growth
    slope = math.log(cum[-1] / cum[T // 16 - 1]) / math.log(16)
    assert slope < 0.85


def test_run_bandit_deterministic_and_validates():
    env = sphere(np.random.default_rng(0), d=3, n_arms=3)
    a = run_bandit(env, "elim_iwr_jdp", 600, 1.0, 1e-5, np.random.default_rng(2))
    b = run_bandit(env, "elim_iwr_jdp", 600, 1.0, 1e-5, np.random.default_rng(2))
    assert np.array_equal(a.regret, b.regret)
    with pytest.raises(ValueError, match="unknown hyperparameter 'nope'"):
        run_bandit(env, "elim_iwr_jdp", 100, 1.0, 1e-5, np.random.default_rng(0), nope=1)
    with pytest.raises(ValueError, match="epsilon ≤ 1"):
        run_bandit(env, "elim_iwr_jdp", 100, 2.0, 1e-5, np.random.default_rng(0))
    with pytest.raises(ValueError, match="epsilon"):
        run_bandit(env, "elim_iwr_jdp", 100, -1.0, 1e-5, np.random.default_rng(0))
    logit = sphere(np.random.default_rng(0), d=3, n_arms=3, link="logistic")
    with pytest.raises(ValueError, match="link"):
        run_bandit(logit, "linucb", 100, math.inf, 1e-5, np.random.default_rng(0))


def test_every_linear_bandit_algorithm_checks_link_calibration_and_fail_prob_alike():
    """elim_*, squarecb_* and the perfect-oracle control share one check (oracles.bandit_failure_probability)."""
    from dpbench.bandits.oracles import bandit_failure_probability, failure_probability

    env = sphere(np.random.default_rng(0), d=3, n_arms=3)
    logit = sphere(np.random.default_rng(0), d=3, n_arms=3, link="logistic")
    assert bandit_failure_probability(env, 400, 0.5, None, "paper", "X's oracles") == 1 / 400
    assert bandit_failure_probability(logit, 400, 0.5, 0.01, "paper") == 0.01  # GLM oracles: any link
    assert failure_probability(None, 50) == 1 / 50
    for name in ("elim_iwr_jdp", "elim_ssp_ldp", "squarecb_jdp", "squarecb_perfect_oracle"):
        with pytest.raises(ValueError, match="are linear: they need link='linear', the environment has link 'logis"):
            run_bandit(logit, name, 100, 0.5, 1e-5, np.random.default_rng(0))
        with pytest.raises(ValueError, match=r"fail_prob: must be a number > 0 and < 1 or None \(1/T\), got 1.5"):
            run_bandit(env, name, 100, 0.5, 1e-5, np.random.default_rng(0), fail_prob=1.5)
    for name in ("elim_iwr_glm_jdp", "squarecb_ldp"):
        with pytest.raises(ValueError, match="epsilon ≤ 1"):
            run_bandit(env, name, 100, 2.0, 1e-5, np.random.default_rng(0))


# ---------------------------------------------------------------------------------------------------------------
# config + runner (kind: bandit)


def _config(tmp_path, **over):
    raw = {
        "name": "bt",
        "kind": "bandit",
        "output_dir": str(tmp_path / "results"),
        "seed": 3,
        "trials": 2,
        "T": 300,
        "epsilons": [0.5, ".inf"],
        "delta": 1e-5,
        "environments": [{"env": "sphere", "label": "S", "options": {"d": 3, "n_arms": 4}}],
        "algorithms": [{"algorithm": "elim_iwr_jdp", "label": "IWR"}, "linucb"],
    }
    raw.update(over)
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def test_bandit_config_errors_name_the_field(tmp_path):
    with pytest.raises(ConfigError, match="'T'"):
        load_config(_config(tmp_path, T=0))
    with pytest.raises(ConfigError, match=r"environments\[0\].options.rho"):
        load_config(_config(tmp_path, environments=[{"env": "sphere", "options": {"rho": 1}}]))
    with pytest.raises(ConfigError, match=r"algorithms\[0\].hyper.zz"):
        load_config(_config(tmp_path, algorithms=[{"algorithm": "linucb", "hyper": {"zz": 1}}]))
    with pytest.raises(ConfigError, match="epsilons"):
        load_config(_config(tmp_path, epsilons=[0]))
    with pytest.raises(ConfigError, match="'bogus'"):
        load_config(_config(tmp_path, bogus=1))


def test_bandit_config_shares_the_regression_rules_for_common_fields(tmp_path):
    """ε and δ of a bandit run obey the supported ranges the regression schema enforces (one base for both);
    .inf stays the bandit kind's non-private marker."""
    from dpbench.bandits.config import BanditConfig
    from dpbench.config.base import BaseConfig
    from dpbench.engine.schema import Config

    assert issubclass(BanditConfig, BaseConfig) and issubclass(Config, BaseConfig)
    with pytest.raises(ConfigError, match=r"epsilons\[1\].*supported range"):
        load_config(_config(tmp_path, epsilons=[0.5, 1e11]))
    with pytest.raises(ConfigError, match=r"epsilons\[1\].*repeats"):
        load_config(_config(tmp_path, epsilons=[0.5, 0.5]))
    with pytest.raises(ConfigError, match="delta.*supported minimum"):
        load_config(_config(tmp_path, delta=1e-301))
    with pytest.raises(ConfigError, match="n_jobs"):
        load_config(_config(tmp_path, n_jobs=0))
    config = load_config(_config(tmp_path, delta="1 / T^2", epsilons={"logspace": [-1, 0, 2]}))
    assert config.delta == "1/T^2" and config.privacy_delta == 300.0**-2
    assert config.epsilons == pytest.approx((0.1, 1.0))


def test_bandit_run_and_resume(tmp_path):
    from dpbench.engine import run

    cfg = load_config(_config(tmp_path))
    run_dir = run(cfg, n_jobs=1, progress=False, log=lambda m: None)
    table = pd.read_csv(run_dir / "trials.csv")
    assert {"T", "regret", "epsilon", "label", "dataset"} <= set(table.columns)
    # linucb runs once at ε = ∞, the private algorithm at both ε
    assert sorted(table.loc[table.mechanism == "linucb", "epsilon"].unique()) == [math.inf]
    assert len(table[table.mechanism == "elim_iwr_jdp"].groupby(["epsilon", "trial"])) == 4
    # cumulative regret is non-decreasing in T within a run
    for _, g in table.groupby(["label", "epsilon", "trial"]):
        assert np.all(np.diff(g.sort_values("T")["regret"].to_numpy()) >= -1e-12)
    # resume: delete one shard, rerun, same table (deterministic seeds)
    shards = sorted((run_dir / "shards").glob("*.csv"))
    shards[0].unlink()
    run(cfg, n_jobs=1, progress=False, log=lambda m: None)
    again = pd.read_csv(run_dir / "trials.csv")
    cols = ["label", "epsilon", "trial", "T", "regret"]
    pd.testing.assert_frame_equal(table[cols], again[cols])
    from dpbench.bandits.analyses import privacy_gaps

    gaps = privacy_gaps(table, [300])
    assert set(gaps["epsilon"]) == {0.5} and gaps["trials"].eq(2).all()
    # the paired gap is the mean over trials of Reg(300, 0.5) − Reg(300, ∞) of the same trial
    at = table[(table["T"] == 300) & (table["label"] == "IWR")].pivot(index="trial", columns="epsilon", values="regret")
    assert gaps["gap"].iloc[0] == pytest.approx((at[0.5] - at[math.inf]).mean())


def test_bandit_figures_and_report_come_from_the_generic_plot_and_analyses(tmp_path):
    """The regret grid (rows = environments, panels = algorithms, one curve per ε, LinUCB as a grey baseline in
    every panel), its slope fit, and `dpbench report` running the bandit_gap analysis the config names."""
    from typer.testing import CliRunner

    from dpbench.analysis.figures.curves import render
    from dpbench.cli import app
    from dpbench.engine import run

    grid = {
        "metric": "regret",
        "x": "T",
        "logy": True,
        "hue": "epsilon",
        "row": "dataset_id",
        "panel": "label",
        "baseline": {"privacy_model": "none"},
        "fit": True,
        "fit_min": 64,
    }
    cfg = load_config(_config(tmp_path, name="rep", plots={"regret_grid": grid}, analyses=["bandit_gap"]))
    run_dir = run(cfg, n_jobs=1, progress=False, log=lambda m: None)
    drawing = render(run_dir, **grid)
    (ax,) = drawing.figure.axes[:1]
    assert len(drawing.figure.axes) == 1  # one environment × one private algorithm
    labels = [line.get_label() for line in ax.get_lines() if not line.get_label().startswith("_")]
    assert labels[:3] == ["ε=0.5", "ε=∞", "linucb"]  # linucb: the label of an entry given by name
    assert ax.get_lines()[2].get_linestyle() == "--"  # the non-private baseline
    assert set(drawing.slopes["curve"]) == {"ε=0.5", "ε=∞"}  # baselines are not fitted
    assert drawing.slopes["slope"].between(0, 1.2).all()
    result = CliRunner().invoke(app, ["report", str(run_dir), "--no-html"])
    assert result.exit_code == 0, result.output
    markdown = (run_dir / "report.md").read_text()
    assert "## Figure regret_grid: regret" in markdown and "## Analysis: bandit_gap" in markdown
    assert (run_dir / "figure_regret_grid.png").exists() and (run_dir / "figure_privacy_gap.png").exists()
    assert "figure_privacy_gap.png" in markdown
    # the gap figure is the bandit_privacy_gap kind; it can carry its own caption (the run's describes the regret)
    from dpbench.analysis.figures.kinds import draw
    from dpbench.analysis.runs import load_run

    drawing = draw("bandit_privacy_gap", load_run(run_dir), caption="gap only", at=[300])
    caption = drawing.figure.texts[-1].get_text().replace("\n", " ")
    assert caption.endswith("mean ± 1.96·sd/√R. gap only") and set(drawing.points["T"]) == {300}
    assert drawing.figure.axes[0].get_xlabel() == "1/ε" and set(drawing.slopes["T"]) == {300}
    with pytest.raises(ValueError, match=r"at\[0\]"):
        draw("bandit_privacy_gap", load_run(run_dir), at=[0])
    from dpbench.bandits import analyses

    with pytest.raises(ValueError, match="option at"):
        analyses.bandit_gap([run_dir], {"at": "300,x"}, echo=lambda _m: None)


@pytest.mark.slow
def test_bandit_run_identical_for_any_n_jobs(tmp_path):
    from dpbench.engine import run

    cols = ["label", "epsilon", "trial", "T", "regret"]
    one = run(load_config(_config(tmp_path, name="j1")), n_jobs=1, progress=False, log=lambda m: None)
    two = run(load_config(_config(tmp_path, name="j2")), n_jobs=2, progress=False, log=lambda m: None)
    pd.testing.assert_frame_equal(pd.read_csv(one / "trials.csv")[cols], pd.read_csv(two / "trials.csv")[cols])


def test_glm_dp_erm_oracle_noise_and_accuracy():
    env = sphere(np.random.default_rng(0), d=4, n_arms=3, link="logistic")
    from dpbench.bandits.oracles import iwr_glm_dp_fit

    data = _data(env, 2**14)
    est = iwr_glm_dp_fit(data, 0.5, 1e-5, np.random.default_rng(1), link="logistic", fail_prob=1e-4)
    assert data.ledger.counts.max() == 1 and data.ledger.used == 2**14 - (2**13 % 4)
    gamma, N1 = est.info["gamma"], 2**13
    mu = math.e / (1 + math.e) ** 2
    delta_n = 32 * (1 / mu + 1) / (gamma * N1)
    assert est.info["std_w"] == pytest.approx(sigma_chen(0.5, 1e-5) * delta_n)  # Priv_{Δ_N} (spec 000 #5)
    nonpriv = iwr_glm_dp_fit(
        _data(env, 2**14), math.inf, 1e-5, np.random.default_rng(1), link="logistic", fail_prob=1e-4
    )
    assert np.linalg.norm(nonpriv.theta - env.theta) < 0.3
    f, _ = nonpriv.predict(env.contexts(np.random.default_rng(9), 500))
    assert np.all((f > 0) & (f < 1))  # f̂ = sigmoid(<φ, θ̂>)


def test_glm_ldp_sgd_oracle_noise_width_and_accuracy():
    """Spec 000 Alg 12 (Remark H.6): Alg 2 on the first half, per-user LDP-SGD (Alg 11, Priv_2: l2-sensitivity 4) on
    the second; f̂ = σ(<φ, θ̂>); width scale c_b·8L_ν(λ + σ̄√d/(μ_ν√N₁)) (Thm G.4)."""
    from dpbench.bandits.oracles import iwr_glm_ldp_fit

    env = sphere(np.random.default_rng(0), d=4, n_arms=3, link="logistic")
    data = _data(env, 2**14)
    est = iwr_glm_ldp_fit(data, 0.5, 1e-5, np.random.default_rng(1), link="logistic", fail_prob=1e-4, c_b=0.5)
    assert data.ledger.counts.max() == 1 and data.ledger.used == 2**14
    assert est.link == "logistic" and est.info["std_g_user"] == pytest.approx(2 * sigma_chen(0.5, 1e-5))
    mu, lam, N1 = math.e / (1 + math.e) ** 2, est.info["lam"], 2**13
    sigma = sigma_chen(0.5, 1e-5)
    assert est.scale == pytest.approx(0.5 * 8 * 0.25 * (lam + sigma * 2.0 / (mu * math.sqrt(N1))))
    nonpriv = iwr_glm_ldp_fit(
        _data(env, 2**14), math.inf, 1e-5, np.random.default_rng(1), link="logistic", fail_prob=1e-4
    )
    assert np.linalg.norm(nonpriv.theta - env.theta) < 0.3
    assert nonpriv.scale == pytest.approx(8 * 0.25 * (nonpriv.info["lam"] + 2.0 / (mu * math.sqrt(N1))))
    f, b = nonpriv.predict(env.contexts(np.random.default_rng(9), 500))
    assert np.all((f > 0) & (f < 1)) and np.all(b <= 2.0)
    # the linear link is the same oracle with μ_ν = L_ν = 1 and f̂ clipped
    linear = sphere(np.random.default_rng(0), d=4, n_arms=3)
    est = iwr_glm_ldp_fit(_data(linear, 2**12), math.inf, 1e-5, np.random.default_rng(1), link="linear", fail_prob=1e-4)
    assert est.link == "linear" and np.linalg.norm(est.theta - linear.theta) < 0.5


def test_theory_preset_width_is_ten_lambda():
    """Theory preset (spec 000 §6.1, Lemma H.3): λ = 8√(d_A log(2/δ)/N) and the width scale 8λ + 16√(·) = 10λ."""
    env = sphere(np.random.default_rng(0), d=4, n_arms=6)
    est = iwr_dp_fit(_data(env, 4096), 1.0, 1e-5, np.random.default_rng(0), d_A=4, fail_prob=1e-3, preset="theory")
    lam = 8 * math.sqrt(4 * math.log(2 / 1e-3) / 4096)
    assert est.info["lam"] == pytest.approx(lam)
    assert est.scale == pytest.approx(10 * lam)
    with pytest.raises(ValueError, match="preset"):
        iwr_dp_fit(_data(env, 256), 1.0, 1e-5, np.random.default_rng(0), d_A=4, fail_prob=1e-3, preset="nope")


def test_choose_c_b_smallest_valid_multiplier():
    from dpbench.bandits.calibrate import choose_c_b, coverage_pilot

    table = pd.DataFrame(
        {
            "c_b": [1.0, 0.5, 0.25] * 2,
            "N": [64] * 3 + [128] * 3,
            "epsilon": [1.0] * 6,
            "coverage": [1.0, 0.97, 0.99, 1.0, 0.96, 0.5],
        }
    )
    assert choose_c_b(table) == 0.5  # 0.25 fails at N = 128
    pilot = coverage_pilot("ssp_jdp", "sphere", {"d": 3, "n_arms": 4}, [256], [math.inf], seeds=2, n_eval=200)
    cover = pilot.groupby("c_b")["coverage"].mean()
    assert cover.is_monotonic_increasing and cover.loc[1.0] >= cover.loc[0.01]
