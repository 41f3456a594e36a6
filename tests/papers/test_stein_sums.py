"""Rows-free data (issue 17): the data-free Wishart sums of the linear-Gaussian model against its literal rows.

* :class:`~dpbench.linalg.SumStats` gives the same statistics as :func:`~dpbench.linalg.gram_stats` of the rows.
* Two-sample KS (p > 10⁻³, 600 samples per path, n = 2,000, p = 5, one fixed instance w*, public rows): the
  statistic (XᵀX)₀₀, (Xᵀy)₀ and the final estimate (θ̂₀, ‖θ̂ − w*‖²) of Alg 1 (labels clipped at B_y = 1), Alg 3, the
  central DIAGNOSTIC and the non-private Stein estimator, fitted from rows (generate rows, normal aggregate path)
  and from the data-free sums, have the same law; a control with the sums path's covariate scale s × 1.5 is
  rejected (p < 10⁻³).
* The engine runs rows-free data end to end (trials, datasets.json from the Gram) and refuses a rows-only mechanism
  on it, naming both; the registry refuses ``rows_free`` without ``stats``.
"""

from __future__ import annotations

import functools
from functools import cache

import numpy as np
import pytest
import scipy.stats as sps

from dpbench import registry
from dpbench.config import ConfigError
from dpbench.engine.regression import fit_inputs
from dpbench.linalg import SumStats, gram_stats, has_rows
from dpbench.papers.stein.sums import LinearGaussian

P_MIN = 1e-3
N, P, M, SAMPLES = 2_000, 5, 200, 600
EPS = 1e4  # n* ∝ 1/ε²: at ε = 10⁴, n* ≈ 150 < n, so the estimate depends on the data (the control has power)
MECHANISMS = {
    "stein_glm_gauss": {"family": "linear", "clip_y": True},
    "stein_nlr_gauss": {"family": "sigmoid"},  # Alg 3 (labels clipped at B_y); misspecified here, same law either way
    "stein_central_diagnostic": {"family": "linear"},
    "stein_nonprivate": {"family": "linear"},
}


def instance(s: float = 0.08) -> tuple[LinearGaussian, np.ndarray]:
    rng = np.random.default_rng(17)
    g = rng.standard_normal(P)
    return LinearGaussian(s, g / np.linalg.norm(g), 0.06), 0.08 * rng.standard_normal((M, P))


@cache
def draws(path: str, mechanism: str) -> dict[str, np.ndarray]:
    """SAMPLES fits of ``mechanism``: ``rows`` (literal rows), ``sums`` (data-free), ``control`` (sums, s × 1.5)."""
    model, public_X = instance(0.12 if path == "control" else 0.08)
    fit = registry.get_mechanism(mechanism).fit
    out: dict[str, list[float]] = {"xtx00": [], "xty0": [], "theta0": [], "err2": []}
    for k in range(SAMPLES):
        data_rng = np.random.default_rng([k, 1 if path == "rows" else 2])
        noise_rng = np.random.default_rng([k, 3])
        if path == "rows":
            X, y = model.rows(N, data_rng)
            stats = gram_stats(X, y)
        else:
            X = y = None
            stats = model.sums(N, data_rng)
        result = fit(X, y, EPS, N**-1.1, noise_rng, public_X=public_X, stats=stats, **MECHANISMS[mechanism])
        out["xtx00"].append(stats.xtx[0, 0])
        out["xty0"].append(stats.xty[0])
        out["theta0"].append(result.theta[0])
        out["err2"].append(float(np.sum((result.theta - model.w) ** 2)))
    return {key: np.array(values) for key, values in out.items()}


def test_sum_stats_match_the_gram_of_the_rows() -> None:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 4))
    y = X @ np.array([1.0, -2.0, 0.5, 3.0]) + rng.standard_normal(300)
    rows = gram_stats(X, y)
    Z = np.column_stack([X, y])
    sums = SumStats(rows=300, gram=Z.T @ Z)
    assert not has_rows(sums) and has_rows(rows)
    assert (sums.n, sums.d) == (300, 4)
    np.testing.assert_allclose(sums.xtx, rows.xtx, rtol=1e-12)
    np.testing.assert_allclose(sums.xty, rows.xty, rtol=1e-12)
    assert sums.yty == pytest.approx(rows.yty, rel=1e-12)
    np.testing.assert_allclose(sums.theta_ols, rows.theta_ols, rtol=1e-9)
    assert sums.ols_loss == pytest.approx(rows.ols_loss, rel=1e-9)
    assert sums.lam_min_xy == pytest.approx(rows.lam_min_xy, rel=1e-9)


def test_wishart_sums_have_the_joint_covariance_as_mean() -> None:
    model, _ = instance()
    rng = np.random.default_rng(5)
    mean = np.mean([model.gram(1_000, rng) for _ in range(2_000)], axis=0) / 1_000
    C = model.joint_cov()
    # entries of M/n have sd ≤ √(2/n)·max C_ii; over 2,000 draws the mean is within 5 sd of C
    assert np.max(np.abs(mean - C)) < 5 * np.sqrt(2 / 1_000 / 2_000) * C.diagonal().max()
    assert C[-1, -1] == pytest.approx(0.08**2 + 0.06**2)


@pytest.mark.parametrize("mechanism", list(MECHANISMS))
def test_rows_free_fit_has_the_law_of_the_fit_from_rows(mechanism: str) -> None:
    rows, sums, control = draws("rows", mechanism), draws("sums", mechanism), draws("control", mechanism)
    for key in rows:
        assert sps.ks_2samp(rows[key], sums[key]).pvalue > P_MIN, key
    for key in ("xtx00", "theta0", "err2") if mechanism != "stein_nonprivate" else ("xtx00", "err2"):
        assert sps.ks_2samp(rows[key], control[key]).pvalue < P_MIN, key


def test_rows_free_fit_records_the_clipping_tv_bound_and_refuses_a_large_one() -> None:
    model, public_X = instance()
    fit = registry.get_mechanism("stein_glm_gauss").fit
    stats = model.sums(N, np.random.default_rng(1))
    result = fit(
        None, None, 10.0, 1e-4, np.random.default_rng(2), public_X=public_X, stats=stats, family="linear", clip_y=True
    )
    # B_y = 1 is 10 sd of y, r ≈ 2.7 is 34 sd of a coordinate: n·P ≈ 2000·1.5e-23
    assert 0.0 < result.info["clip_tv_bound"] < 1e-18
    on_sums = functools.partial(fit, None, None, 10.0, 1e-4, public_X=public_X, stats=stats, family="linear")
    with pytest.raises(ValueError, match="P\\(row clipped\\)"):
        on_sums(np.random.default_rng(2), clip_y=True, y_bound=0.3)
    with pytest.raises(ValueError, match="per_user"):
        on_sums(np.random.default_rng(2), simulation="per_user")


def test_engine_refuses_a_rows_only_mechanism_on_rows_free_data() -> None:
    registry.discover()
    dataset = registry.get_dataset("stein_linear_sums").load(np.random.default_rng(0), n=10**12, m=50)
    assert dataset.X_train is None and dataset.n == 10**12 and dataset.d == 5
    with pytest.raises(ConfigError, match="'stein_nonprivate_mle'.*'stein_linear_sums'"):
        fit_inputs(registry.get_mechanism("stein_nonprivate_mle"), dataset, dataset.sums)
    inputs = fit_inputs(registry.get_mechanism("stein_nonprivate"), dataset, dataset.sums)
    assert inputs["stats"] is dataset.sums


def test_registry_refuses_rows_free_without_stats() -> None:
    with pytest.raises(ValueError, match="rows_free"):
        registry.register_mechanism(
            "x_rows_free", summary="x", privacy_model="none", neighbour="none", rows_free=True, _into={}
        )(lambda X, y, epsilon, delta, rng: None)


def test_rows_and_sums_loaders_share_the_instance() -> None:
    registry.discover()
    load = registry.get_dataset("stein_linear_sums").load
    with_rows = load(np.random.default_rng(3), n=500, m=20, rows=True)
    without = load(np.random.default_rng(3), n=500, m=20)
    np.testing.assert_array_equal(with_rows.population.theta, without.population.theta)
    np.testing.assert_array_equal(with_rows.X_public, without.X_public)
    assert with_rows.X_train.shape == (500, 5) and without.sums.n == 500


def rows_free_config(tmp_path, mechanisms: list[dict]) -> dict:
    """A two-trial config of ``mechanisms`` on n = 10¹² rows-free linear sums."""
    return {
        "name": "rows_free",
        "output_dir": str(tmp_path),
        "seed": 1,
        "trials": 2,
        "epsilons": [10.0],
        "n_jobs": 1,
        "delta": "1/n^1.1",
        "metrics": ["stein_err2"],
        "datasets": [{"loader": "stein_linear_sums", "options": {"n": 10**12, "m": 500}}],
        "mechanisms": mechanisms,
    }


def run_rows_free(tmp_path, mechanisms: list[dict]) -> object:
    from dpbench.config import parse_config
    from dpbench.engine import run

    return run(parse_config(rows_free_config(tmp_path, mechanisms)), progress=False, log=lambda m: None)


def test_engine_runs_rows_free_data_end_to_end(tmp_path) -> None:
    import json

    import pandas as pd

    run_dir = run_rows_free(
        tmp_path,
        [
            {"mechanism": "stein_glm_gauss", "hyper": {"family": "linear", "clip_y": True}},
            {"mechanism": "stein_nonprivate", "hyper": {"family": "linear"}},
        ],
    )
    trials = pd.read_csv(run_dir / "trials.csv")
    assert len(trials) == 4 and (trials["n"] == 10**12).all()
    assert trials["stein_err2"].max() < 1e-2  # n ≫ n*: the literal error is ≈ n*/(16n) ≈ 3·10⁻⁴
    assert (trials["info.clip_tv_bound"] < 1e-10).all()
    described = next(iter(json.loads((run_dir / "datasets.json").read_text()).values()))
    assert described["n"] == 10**12 and described["d"] == 5
    assert 0.0 < described["ols_train_mse"] < described["zero_train_mse"]  # from the Gram: yᵀy − θᵀXᵀy


def test_config_validation_refuses_a_rows_only_mechanism_on_rows_free_data(tmp_path) -> None:
    """Refused when the config is read (the loader declares rows_free for its options), before any task runs; the
    same pair with rows: true, or with a rows_free mechanism, validates."""
    from dpbench.config import parse_config

    config = rows_free_config(
        tmp_path,
        [
            {"mechanism": "stein_nonprivate", "hyper": {"family": "linear"}},
            {"mechanism": "stein_nonprivate_mle", "hyper": {"family": "linear"}},
        ],
    )
    with pytest.raises(
        ConfigError,
        match=r"'mechanisms\[1\].mechanism': 'stein_nonprivate_mle' needs data rows, "
        r"but datasets\[0\] \(stein_linear_sums .*\) has none",
    ):
        parse_config(config)
    assert not (tmp_path / "rows_free").exists()  # nothing written
    rows = {**config, "datasets": [{"loader": "stein_linear_sums", "options": {"n": 1000, "m": 50, "rows": True}}]}
    assert len(parse_config(rows).mechanisms) == 2
    assert len(parse_config({**config, "mechanisms": config["mechanisms"][:1]}).mechanisms) == 1
    assert registry.get_dataset("stein_linear_sums").rows_free(n=10, rows=False)
