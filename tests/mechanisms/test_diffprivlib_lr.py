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
    theta = np.array([0.5, -0.3, 0.2])[:d]
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
