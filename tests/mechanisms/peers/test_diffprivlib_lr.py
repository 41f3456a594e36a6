"""The diffprivlib adapter: explicit bounds (no leak warning), determinism from the trial rng, and a clear reason
when the optional library is missing or broken (the CI installs only the test extra, where it is skipped)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dpbench import registry
from dpbench.config import ConfigError, parse_config
from dpbench.mechanisms.peers import diffprivlib_lr

registry.discover()
INFO = registry.MECHANISMS["diffprivlib_lr"]
needs_diffprivlib = pytest.mark.skipif(
    bool(diffprivlib_lr.UNAVAILABLE), reason=f"optional peer unavailable: {diffprivlib_lr.UNAVAILABLE}"
)


def sphere_data(n=2000, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    theta = np.resize([0.5, -0.3, 0.2], d) / max(1.0, d / 3)
    return X, np.clip(X @ theta + 0.05 * rng.standard_normal(n), -1, 1), theta


def test_registry_declares_pure_central_replace_one():
    assert (INFO.privacy_model, INFO.neighbour) == ("central", "replace_one")
    assert INFO.hyperparameters() == {"x_bound": 1.0, "y_bound": 1.0}


def test_bad_privacy_parameters_are_named_whether_or_not_installed():
    X, y, _ = sphere_data(100)
    with pytest.raises(ValueError, match="epsilon"):
        INFO.fit(X, y, 0.0, 1e-5, np.random.default_rng(0))
    with pytest.raises(ValueError, match="delta"):
        INFO.fit(X, y, 1.0, 2.0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="x_bound"):
        INFO.fit(X, y, 1.0, 1e-5, np.random.default_rng(0), x_bound=-1.0)


@pytest.mark.skipif(not diffprivlib_lr.UNAVAILABLE, reason="diffprivlib imports here; the unavailable path is moot")
def test_unavailable_library_is_reported_not_raised_at_import(tmp_path):
    assert INFO.summary.startswith("UNAVAILABLE: ") and "pip install" in INFO.summary
    X, y, _ = sphere_data(100)
    with pytest.raises(diffprivlib_lr.MechanismUnavailableError, match="diffprivlib"):
        INFO.fit(X, y, 1.0, 1e-5, np.random.default_rng(0))
    raw = {
        "name": "x",
        "output_dir": str(tmp_path),
        "epsilons": [1.0],
        "trials": 1,
        "datasets": [{"loader": "sphere_linear", "options": {"n": 50, "d": 2}}],
        "mechanisms": ["diffprivlib_lr"],
    }
    with pytest.raises(ConfigError, match=r"mechanisms\[0\]\.mechanism.*unavailable.*peers"):
        parse_config(raw)


def test_list_says_why_when_unavailable(monkeypatch):
    from typer.testing import CliRunner

    from dpbench.cli import app

    reason = "diffprivlib is not installed; pip install -e '.[peers]'"
    fake = registry.MechanismInfo("diffprivlib_lr", INFO.fit, f"UNAVAILABLE: {reason}", "central", "replace_one")
    monkeypatch.setitem(registry.MECHANISMS, "diffprivlib_lr", fake)
    out = CliRunner().invoke(app, ["list"])
    assert out.exit_code == 0 and f"UNAVAILABLE: {reason}" in out.output


@needs_diffprivlib
def test_fit_is_deterministic_in_the_trial_rng_and_never_warns_about_bounds():
    X, y, theta = sphere_data(20_000)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a PrivacyLeakWarning (bounds read off the data) would fail here
        a = INFO.fit(X, y, 50.0, 1e-5, np.random.default_rng(3)).theta
        b = INFO.fit(X, y, 50.0, 1e-5, np.random.default_rng(3)).theta
        c = INFO.fit(X, y, 50.0, 1e-5, np.random.default_rng(4)).theta
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert a.shape == (3,)


@needs_diffprivlib
def test_large_epsilon_recovers_the_least_squares_fit():
    X, y, theta = sphere_data(50_000)
    ols = np.linalg.lstsq(X, y, rcond=None)[0]
    estimates = np.array([INFO.fit(X, y, 1e4, 1e-5, np.random.default_rng(s)).theta for s in range(5)])
    assert np.linalg.norm(np.median(estimates, axis=0) - ols) < 0.05


def documented_call(X, y, epsilon, trial_seed, x_bound=1.0, y_bound=1.0):
    """diffprivlib's LinearRegression called directly as its docs say (bounds given, no intercept), seeded as the
    adapter seeds it: one draw from the trial's rng."""
    lib = diffprivlib_lr.DIFFPRIVLIB
    d = X.shape[1]
    model = lib.models.LinearRegression(
        epsilon=epsilon,
        bounds_X=(np.full(d, -x_bound), np.full(d, x_bound)),
        bounds_y=(-y_bound, y_bound),
        fit_intercept=False,
        random_state=int(np.random.default_rng(trial_seed).integers(2**31 - 1)),
        accountant=lib.BudgetAccountant(),
    )
    return model.fit(X, y)


@needs_diffprivlib
def test_adapter_is_exactly_the_documented_direct_call_on_the_same_seed():
    X, y, _ = sphere_data(3000, d=3)
    for epsilon, seed in [(0.5, 0), (1.0, 1), (10.0, 2)]:
        ours = INFO.fit(X, y, epsilon, 1e-5, np.random.default_rng(seed))
        theirs = documented_call(X, y, epsilon, seed)
        np.testing.assert_array_equal(ours.theta, theirs.coef_)
        assert ours.info["local_epsilon_share"] == 1 + 3 + 6


@needs_diffprivlib
def test_rows_outside_the_bounds_are_clipped_before_diffprivlib_sees_them():
    """diffprivlib clips only on its intercept path; without the adapter's clip a row at 50 would enter XᵀX
    unclipped (its noise is calibrated to the box), and the estimate would move."""
    X, y, _ = sphere_data(2000, d=2)
    X[:5] = [[50.0, -50.0], [3.0, 0.2], [-7.0, 7.0], [0.5, 9.0], [-2.0, -2.0]]
    y[:5] = [40.0, -3.0, 2.0, -9.0, 1.5]
    ours = INFO.fit(X, y, 1e4, 1e-5, np.random.default_rng(7)).theta
    clipped = documented_call(np.clip(X, -1, 1), np.clip(y, -1, 1), 1e4, 7).coef_
    unclipped = documented_call(X, y, 1e4, 7).coef_
    np.testing.assert_array_equal(ours, clipped)
    assert np.max(np.abs(unclipped - clipped)) > 0.02  # the library itself did not clip: the clip is needed


@needs_diffprivlib
def test_indefinite_noisy_quadratic_is_recorded_and_explains_the_blow_up():
    # n = 100, d = 5, ε = 1: XᵀX ≈ (n/d)·I = 20·I against Laplace entries of scale 2·21/ε = 42 — indefinite
    X, y, _ = sphere_data(100, d=5)
    small = [INFO.fit(X, y, 1.0, 1e-5, np.random.default_rng(s)) for s in range(5)]
    assert all(f.info["noisy_quadratic_indefinite"] == 1.0 for f in small)
    ols = np.linalg.lstsq(X, y, rcond=None)[0]
    assert np.median([np.linalg.norm(f.theta) for f in small]) > 100 * np.linalg.norm(ols)
    # n = 50,000: λ_min(XᵀX) ≈ 10⁴ dwarfs the noise — positive definite, and the estimate is near OLS
    X, y, _ = sphere_data(50_000, d=5)
    large = [INFO.fit(X, y, 1.0, 1e-5, np.random.default_rng(s)) for s in range(3)]
    assert all(f.info["noisy_quadratic_indefinite"] == 0.0 for f in large)
    ols = np.linalg.lstsq(X, y, rcond=None)[0]
    assert max(np.linalg.norm(f.theta - ols) for f in large) < 0.1


def test_indefiniteness_is_read_off_the_released_noisy_quadratic_only():
    class Released:  # stands in for a fitted diffprivlib model: only its noisy coefficients are read
        def __init__(self, quadratic):
            self._obj_coefs = (np.zeros(1), np.zeros((2, 1)), np.asarray(quadratic, dtype=float))

    assert diffprivlib_lr.noisy_quadratic_indefinite(Released([[2.0, 0.0], [0.0, 1.0]])) == 0.0
    assert diffprivlib_lr.noisy_quadratic_indefinite(Released([[1.0, 2.0], [2.0, 1.0]])) == 1.0  # eigenvalues 3, −1
    assert np.isnan(diffprivlib_lr.noisy_quadratic_indefinite(object()))
