"""Mechanism behaviour: input checks, exact Gram/Wishart shortcut, IHS convergence, sanity of the estimates."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from dpbench import registry
from dpbench.data.synthetic import load as sphere
from dpbench.linalg import gram_stats, psd_factor, sym_eigh, wishart
from dpbench.mechanisms.gradient import dpgd
from dpbench.mechanisms.sketch import ihm, linmix
from dpbench.mechanisms.ssp import adassp, ols

PRIVATE = ["adassp", "linmix", "ihm", "dpgd"]


@pytest.fixture(scope="module")
def data():
    ds = sphere(np.random.default_rng(0), n=400, d=4, theta_norm=0.6, noise=0.4)
    return ds.X_train, ds.y_train


def fit(name, X, y, eps=1.0, delta=1e-5, seed=0, **hyper):
    registry.discover()
    return registry.MECHANISMS[name].fit(X, y, eps, delta, np.random.default_rng(seed), **hyper)


@pytest.mark.parametrize("name", PRIVATE)
@pytest.mark.parametrize(
    ("mutate", "match"),
    [
        (lambda X, y: (X * np.nan, y), "NaN"),
        (lambda X, y: (X, np.where(np.arange(y.size) == 3, np.inf, y)), "NaN or inf"),
        (lambda X, y: (X[:, 0], y), "2-D"),
        (lambda X, y: (X, y[:-1]), "entries"),
    ],
)
def test_bad_arrays_are_named(data, name, mutate, match):
    X, y = mutate(*data)
    with pytest.raises(ValueError, match=match):
        fit(name, X, y)


@pytest.mark.parametrize("name", PRIVATE)
@pytest.mark.parametrize(
    ("eps", "delta", "match"),
    [
        (0.0, 1e-5, "epsilon"),
        (-1, 1e-5, "epsilon"),
        (1.0, 0.0, "delta"),
        (1.0, 1.0, "delta"),
        (float("nan"), 1e-5, "epsilon"),
    ],
)
def test_bad_privacy_parameters(data, name, eps, delta, match):
    with pytest.raises(ValueError, match=match):
        fit(name, *data, eps=eps, delta=delta)


@pytest.mark.parametrize("name", ["adassp", "linmix", "ihm"])
def test_rows_over_the_norm_bound_are_rejected(data, name):
    X, y = data
    with pytest.raises(ValueError, match="x_bound"):
        fit(name, 2 * X, y)


def test_ihm_needs_n_at_least_d():
    X = np.eye(3)[:2] / 2
    with pytest.raises(ValueError, match="n ≥ d"):
        fit("ihm", X, np.zeros(2))


def test_dpgd_per_example_allows_unbounded_rows(data):
    X, y = data
    theta = fit("dpgd", 3 * X, y, clip="per_example").theta
    assert np.all(np.isfinite(theta))


def test_same_seed_same_estimate_with_and_without_precomputed_stats(data):
    X, y = data
    stats = gram_stats(X, y)
    for name in PRIVATE:
        a = fit(name, X, y, seed=3).theta
        hyper = {"stats": stats} if "stats" in registry.MECHANISMS[name].needs else {}
        b = fit(name, X, y, seed=3, **hyper).theta
        np.testing.assert_array_equal(a, b)


def test_ols_is_min_norm_least_squares(data):
    X, y = data
    np.testing.assert_allclose(ols.fit(X, y).theta, np.linalg.lstsq(X, y, rcond=None)[0])


def test_ihs_converges_geometrically_to_ols(data):
    """004 §3.3: with η = σ = 0 and no clipping IHM is the IHS and converges to θ*."""
    X, y = data
    theta_star = np.linalg.lstsq(X, y, rcond=None)[0]
    steps = (1, 10, 40)
    errors = [np.linalg.norm(ihm.ihs(X, y, np.random.default_rng(1), k=24, T=T) - theta_star) for T in steps]
    assert errors[2] < 1e-9 * np.linalg.norm(theta_star)
    assert errors[0] > errors[1] > errors[2]
    # geometric: the per-step contraction is well below 1 (≈ √(d/k) for a Gaussian sketch)
    assert (errors[1] / errors[0]) ** (1 / 9) < 0.6


def test_private_estimates_approach_ols_for_large_epsilon():
    ds = sphere(np.random.default_rng(5), n=20000, d=3, theta_norm=0.6, noise=0.3)
    X, y = ds.X_train, ds.y_train
    stats = gram_stats(X, y)
    floor = stats.ols_loss / stats.n
    for name in ["adassp", "ihm"]:
        mse = np.mean(
            [np.mean((y - X @ fit(name, X, y, eps=50.0, delta=1e-8, seed=s, stats=stats).theta) ** 2) for s in range(5)]
        )
        assert mse < floor * 1.02, name


def test_estimates_improve_with_epsilon(data):
    X, y = data
    stats = gram_stats(X, y)
    for name in PRIVATE:
        risks = []
        for eps in (0.3, 30.0):
            thetas = [fit(name, X, y, eps=eps, seed=s).theta for s in range(30)]
            risks.append(np.mean([stats.loss(t) for t in thetas]))
        assert risks[1] < risks[0], name


def test_wishart_moments_match_sketch_gram():
    """E[W] = k Σ and Var[W_ij] = k(Σ_ij² + Σ_ii Σ_jj) for W ~ Wishart(k, Σ), the law of (ZF)ᵀ(ZF)."""
    rng = np.random.default_rng(2)
    A = rng.standard_normal((5, 3))
    cov = A.T @ A + 0.5 * np.eye(3)
    factor = psd_factor(*sym_eigh(cov))
    k, reps = 12, 20000
    draws = np.array([wishart(k, factor, rng) for _ in range(reps)])
    np.testing.assert_allclose(draws.mean(axis=0), k * cov, rtol=0.03, atol=0.03 * k)
    expected_var = k * (cov**2 + np.outer(np.diag(cov), np.diag(cov)))
    np.testing.assert_allclose(draws.var(axis=0), expected_var, rtol=0.08)


def test_wishart_draw_does_not_depend_on_the_eigenvector_basis_lapack_returns():
    """A repeated eigenvalue (rank-deficient Gram) leaves eigh free to return any basis of its eigenspace, and any
    eigenvector's sign is arbitrary: the symmetric root makes the same rng give the same draw for every such basis."""
    rng = np.random.default_rng(3)
    V = np.linalg.qr(rng.standard_normal((4, 4)))[0]
    eigvals = np.array([0.0, 0.0, 1.0, 3.0])
    angle = 0.7
    rotation = np.eye(4)
    rotation[:2, :2] = [[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]]
    other_basis = V @ rotation * np.array([1.0, -1.0, -1.0, 1.0])
    first, second = psd_factor(eigvals, V, 0.25), psd_factor(eigvals, other_basis, 0.25)
    np.testing.assert_allclose(first, second, atol=1e-14)
    np.testing.assert_allclose(first.T @ first, V @ np.diag(eigvals + 0.25) @ V.T, atol=1e-14)
    draws = [wishart(9, factor, np.random.default_rng(5)) for factor in (first, second)]
    np.testing.assert_allclose(draws[0], draws[1], rtol=1e-12)


@pytest.mark.parametrize("name", ["ihm", "linmix"])
def test_gram_and_explicit_sketch_have_the_same_output_law(name):
    """004 §3.10: the Wishart shortcut and the explicit k×n sketch give the same distribution of θ̂.

    Two-sample KS test on every coordinate of θ̂ (1500 draws each, fixed seeds); with 2×4 coordinates a
    Bonferroni level of 0.001 each keeps the false-alarm rate of the whole test below 1%.
    """
    ds = sphere(np.random.default_rng(11), n=60, d=4, theta_norm=0.7, noise=0.3)
    X, y = ds.X_train, ds.y_train
    draws = {}
    for sketch in ("gram", "explicit"):
        draws[sketch] = np.array(
            [
                fit(name, X, y, eps=2.0, delta=1e-3, seed=10_000 * (sketch == "gram") + s, sketch=sketch).theta
                for s in range(1500)
            ]
        )
    for j in range(X.shape[1]):
        assert sps.ks_2samp(draws["gram"][:, j], draws["explicit"][:, j]).pvalue > 1e-3


def test_adassp_shift_options(data):
    X, y = data
    with pytest.raises(ValueError, match="shift"):
        fit("adassp", X, y, shift="other")
    code, paper = (fit("adassp", X, y, seed=1, shift=s).info for s in ("code", "paper"))
    assert code["s1"] == paper["s1"]
    assert adassp.eigenvalue_shift(2.0, 1e-6, "code") == 4.0


def test_linmix_strict_is_more_conservative(data):
    X, y = data
    loose = fit("linmix", X, y).info["gamma"]
    strict = fit("linmix", X, y, strict=True).info["gamma"]
    assert strict > loose


def test_ihm_reports_calibration_and_theorem1_is_looser(data):
    X, y = data
    numerical = fit("ihm", X, y).info
    closed = fit("ihm", X, y, calibration="theorem1").info
    assert numerical["k"] == closed["k"]
    assert closed["gamma"] > numerical["gamma"] and closed["sigma"] > numerical["sigma"]


def test_dpgd_clip_variants_agree_without_clipping(data):
    X, y = data
    a = dpgd.fit(X, y, 1.0, 1e-5, np.random.default_rng(0), C=100.0).theta
    b = dpgd.fit(X, y, 1.0, 1e-5, np.random.default_rng(0), C=100.0, clip="per_example").theta
    np.testing.assert_allclose(a, b)


def test_linmix_registry_metadata():
    registry.discover()
    info = registry.MECHANISMS["linmix"]
    assert info.privacy_model == "central" and info.neighbour == "zero_out"
    assert set(info.hyperparameters()) == {"k_factor", "rho", "strict", "sketch"}
    assert linmix.fit is info.fit


def test_runner_arrays_are_checked_once_but_mutable_arrays_always():
    """Read-only, self-owning arrays (GramStats) skip the O(nd) re-check; anything else is re-checked every call."""
    from dpbench.mechanisms._base import _already_checked, check_inputs

    rng = np.random.default_rng(0)
    X = rng.uniform(-0.5, 0.5, (50, 3)) / 2
    y = rng.uniform(-1, 1, 50)
    stats = gram_stats(X, y)
    check_inputs(stats.X, stats.y, 1.0, 1e-3)
    assert _already_checked(stats.X, stats.y, (1.0, 1.0, False))
    assert not _already_checked(stats.X, stats.y, (0.1, 1.0, False))  # other bounds: checked again
    with pytest.raises(ValueError, match="x_bound"):
        check_inputs(stats.X, stats.y, 1.0, 1e-3, x_bound=0.01)
    X[0, 0] = 5.0  # a writeable array is re-checked on every call
    check_inputs(X.copy() / 10, y, 1.0, 1e-3)
    with pytest.raises(ValueError, match="x_bound"):
        check_inputs(X, y, 1.0, 1e-3)
    with pytest.raises(ValueError, match="epsilon"):  # ε/δ are checked even for cached data
        check_inputs(stats.X, stats.y, 0.0, 1e-3)
