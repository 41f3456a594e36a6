"""dpbench.estimators: scikit-learn conventions, data-independent clipping, agreement with the raw mechanisms."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

pytest.importorskip("sklearn", reason="scikit-learn is an optional dependency (pip install 'dpbench[sklearn]')")

from sklearn.base import clone  # noqa: E402
from sklearn.exceptions import NotFittedError  # noqa: E402
from sklearn.model_selection import GridSearchCV  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

from dpbench import registry  # noqa: E402
from dpbench.estimators import (  # noqa: E402
    ClippingWarning,
    DPLinearRegression,
    as_generator,
    clip_labels,
    clip_rows,
)
from dpbench.mechanisms import FitResult  # noqa: E402


@parametrize_with_checks(  # scikit-learn's test rows lie beyond the unit bounds: clipped without a warning each time
    [
        DPLinearRegression("ihm", clip="ignore"),
        DPLinearRegression("adassp", clip="ignore"),
        DPLinearRegression("linmix", epsilon=2.0, clip="ignore"),
    ]
)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def sphere_problem(n: int = 2000, d: int = 4, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    theta = np.linspace(0.2, -0.3, d)
    y = np.clip(X @ theta + 0.1 * rng.standard_normal(n), -1, 1)
    return X, y, theta


@pytest.fixture
def recorder(monkeypatch):
    """A registered mechanism that records the (X, y) it receives and returns θ = 1."""
    seen: dict[str, np.ndarray] = {}

    def fit(X, y, epsilon, delta, rng, *, scale: float = 1.0):
        seen.update(X=X.copy(), y=y.copy(), epsilon=epsilon, delta=delta)
        return FitResult(scale * np.ones(X.shape[1]), {"note": "recorded"})

    registry.discover()
    info = registry.MechanismInfo("_recorder", fit, "records inputs", "central", "zero_out")
    monkeypatch.setitem(registry.MECHANISMS, "_recorder", info)
    return seen


def test_clip_rows_and_labels_are_per_row_projections():
    X = np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]])
    clipped = clip_rows(X, 1.0)
    np.testing.assert_allclose(clipped, [[0.6, 0.8], [0.3, 0.4], [0.0, 0.0]])
    np.testing.assert_allclose(clip_labels(np.array([-5.0, 0.2, 7.0]), 2.0), [-2.0, 0.2, 2.0])


def test_fit_clips_to_given_bounds_and_never_rescales_by_the_data(recorder):
    # Rows well inside the bound must reach the mechanism unchanged (÷ the constant bound), not stretched so
    # that the largest row has norm 1 — that would be a data-dependent map and void the privacy guarantee.
    X = np.array([[0.1, 0.0], [0.0, 0.2], [6.0, 8.0]])
    y = np.array([0.5, -0.25, 9.0])
    model = DPLinearRegression(
        "_recorder", epsilon=1.0, delta=1e-3, x_bound=2.0, y_bound=1.0, fit_intercept=False, clip="ignore"
    ).fit(X, y)
    np.testing.assert_allclose(recorder["X"], [[0.05, 0.0], [0.0, 0.1], [0.6, 0.8]])
    np.testing.assert_allclose(recorder["y"], [0.5, -0.25, 1.0])
    assert recorder["delta"] == 1e-3
    # θ̂ = 1 on the unit-scaled problem maps back to y_bound / x_bound
    np.testing.assert_allclose(model.coef_, [0.5, 0.5])
    assert model.fit_info_ == {"note": "recorded"}


def test_default_delta_is_one_over_n_squared(recorder):
    X, y, _ = sphere_problem(n=50)
    model = DPLinearRegression("_recorder").fit(X, y)
    assert model.delta_ == pytest.approx(1 / 50**2)
    assert recorder["delta"] == pytest.approx(1 / 50**2)


def test_coefficients_map_back_to_the_original_scale():
    X, y, _ = sphere_problem(n=300, d=3)
    X2, y2 = 2.0 * X, 3.0 * y  # within bounds 2 and 3: no clipping, so the non-private fit is exact OLS
    model = DPLinearRegression("ols", epsilon=None, x_bound=2.0, y_bound=3.0, fit_intercept=False).fit(X2, y2)
    np.testing.assert_allclose(model.coef_, np.linalg.lstsq(X2, y2, rcond=None)[0], rtol=1e-10)


@pytest.mark.parametrize("mechanism", ["ihm", "adassp", "linmix"])
def test_matches_the_mechanism_called_directly_with_the_same_rng(mechanism):
    X, y, _ = sphere_problem(n=400)
    model = DPLinearRegression(mechanism, epsilon=2.0, delta=1e-5, random_state=3, fit_intercept=False).fit(X, y)
    info = registry.get_mechanism(mechanism)  # the default privacy profile is strict: the theorem's accounting
    direct = info.fit(X, y, 2.0, 1e-5, np.random.default_rng(3), **info.strict)
    np.testing.assert_allclose(model.coef_, direct.theta)


def test_privacy_profile_is_strict_by_default():
    """LinMix's code variant under-counts its λ_min release (docs/privacy.md): the estimator fits strict=True unless
    asked for the papers' choice (privacy="paper"), and refuses strict=False under the strict profile."""
    X, y, _ = sphere_problem(n=400)
    linmix = registry.get_mechanism("linmix")
    assert linmix.strict == {"strict": True}
    default = DPLinearRegression("linmix", epsilon=2.0, delta=1e-5, random_state=3, fit_intercept=False).fit(X, y)
    paper = DPLinearRegression(
        "linmix", epsilon=2.0, delta=1e-5, random_state=3, fit_intercept=False, privacy="paper"
    ).fit(X, y)
    strict_fit = linmix.fit(X, y, 2.0, 1e-5, np.random.default_rng(3), strict=True)
    code_fit = linmix.fit(X, y, 2.0, 1e-5, np.random.default_rng(3))
    np.testing.assert_allclose(default.coef_, strict_fit.theta)
    np.testing.assert_allclose(paper.coef_, code_fit.theta)
    assert not np.allclose(default.coef_, paper.coef_)
    assert DPLinearRegression("linmix").get_params()["privacy"] == "strict"
    with pytest.raises(ValueError, match="'strict' of mechanism 'linmix': not allowed under privacy: strict"):
        DPLinearRegression("linmix", strict=False).fit(X, y)
    with pytest.raises(ValueError, match="privacy must be one of"):
        DPLinearRegression("ihm", privacy="loose").fit(X, y)


def test_large_epsilon_recovers_ols_and_scores_well():
    X, y, theta = sphere_problem(n=5000)
    model = DPLinearRegression("ihm", epsilon=50.0, random_state=0).fit(X, y)
    ols = np.linalg.lstsq(X, y, rcond=None)[0]
    assert np.linalg.norm(model.coef_ - ols) < 0.05 * np.linalg.norm(ols)
    assert model.score(X, y) > 0.5
    np.testing.assert_allclose(model.predict(X), X @ model.coef_ + model.intercept_)


def test_random_state_makes_fits_reproducible():
    X, y, _ = sphere_problem(n=500)
    a = DPLinearRegression("adassp", random_state=1).fit(X, y).coef_
    b = DPLinearRegression("adassp", random_state=1).fit(X, y).coef_
    c = DPLinearRegression("adassp", random_state=2).fit(X, y).coef_
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)
    assert isinstance(as_generator(np.random.RandomState(0)), np.random.Generator)
    with pytest.raises(ValueError, match="random_state"):
        as_generator("seed")


def test_hyperparameters_are_estimator_parameters():
    model = DPLinearRegression("ihm", epsilon=2.0, T=4, C=0.5)
    params = model.get_params()
    assert params["T"] == 4 and params["C"] == 0.5 and params["epsilon"] == 2.0
    copy = clone(model).set_params(T=2, epsilon=3.0)
    assert copy.get_params()["T"] == 2 and copy.epsilon == 3.0
    assert model.get_params()["T"] == 4  # clone is independent
    X, y, _ = sphere_problem(n=600)
    search = GridSearchCV(DPLinearRegression("ihm", random_state=0), {"T": [1, 3]}, cv=2).fit(X, y)
    assert search.best_params_["T"] in (1, 3)
    assert search.best_estimator_.get_params()["T"] == search.best_params_["T"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"mechanism": "nope"}, "mechanism: unknown mechanism 'nope'"),
        ({"mechanism": "ihm", "Tee": 3}, "unknown hyperparameter 'Tee' of mechanism 'ihm'"),
        ({"epsilon": -1.0}, "epsilon must be finite and > 0"),
        ({"delta": 2.0}, "delta must lie in"),
        ({"x_bound": 0.0}, "x_bound must be a finite number > 0"),
        ({"y_bound": "big"}, "y_bound must be a finite number > 0 or None"),
        ({"mechanism": None}, "mechanism must be a registered name"),
        ({"T": 0}, "hyperparameter 'T' of mechanism 'ihm': must be an integer ≥ 1, got 0"),
        ({"sketch": "gramm"}, "hyperparameter 'sketch' of mechanism 'ihm': must be one of 'gram', 'explicit'"),
        ({"mechanism": "adassp", "y_bound": None}, "y_bound: mechanism 'adassp' relies on a label bound"),
        ({"mechanism": "iwr_dp", "epsilon": 2.0}, r"calibrated for ε ∈ \(0, 1\] only, got 2"),
    ],
)
def test_bad_parameters_raise_value_error_naming_the_field(kwargs, message):
    X, y, _ = sphere_problem(n=100)
    with pytest.raises(ValueError, match=message):
        DPLinearRegression(**{"mechanism": "ihm", **kwargs}).fit(X, y)


def test_bound_hyperparameters_follow_the_scaled_data():
    """A mechanism whose contract holds its bounds in hyperparameters gets them at the scale the data were put to."""
    X, y, _ = sphere_problem(n=400)
    model = DPLinearRegression(
        "adassp", epsilon=2.0, x_bound=3.0, y_bound=2.0, random_state=1, fit_intercept=False
    ).fit(3 * X, 2 * y)
    direct = registry.get_mechanism("adassp").fit(X, y, 2.0, 1 / 400**2, np.random.default_rng(1))
    np.testing.assert_allclose(model.coef_, direct.theta * 2.0 / 3.0)


def test_underdetermined_problem_is_reported_in_sklearn_terms():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="n_samples = 3 < n_features = 5"):
        DPLinearRegression("ihm").fit(rng.uniform(-0.1, 0.1, (3, 5)), rng.uniform(-1, 1, 3))


def test_docs_example_runs_and_recovers_the_coefficients(capsys):
    from pathlib import Path

    docs = (Path(__file__).parents[1] / "docs" / "library.md").read_text()
    section = docs[docs.index("## Estimators") : docs.index("## Your own mechanism")]
    (code,) = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    namespace: dict = {}
    exec(compile(code, "docs/library.md", "exec"), namespace)  # noqa: S102 - our own documentation
    model = namespace["model"]
    np.testing.assert_allclose(model.coef_, [0.8, -0.6, 0.4, 0.0], atol=0.15)
    assert model.score(namespace["X"], namespace["y"]) > 0.9
    assert model.delta_ == pytest.approx(1 / 5000**2)
    assert {"gamma", "sigma", "k"} <= set(model.fit_info_)
    assert "[" in capsys.readouterr().out


def test_intercept_is_fitted_privately_through_a_constant_feature(recorder):
    """fit_intercept: the mechanism sees z_i = (x_i/x_bound, 1)/√2 (‖z_i‖ ≤ 1, a per-row map), and the non-private
    reference recovers the exact least-squares intercept."""
    X = np.array([[0.2, 0.0], [0.0, 0.4], [0.1, 0.1]])
    DPLinearRegression("_recorder", epsilon=1.0, delta=1e-3, x_bound=0.5).fit(X, np.array([0.1, 0.2, 0.3]))
    np.testing.assert_allclose(recorder["X"], np.hstack([X / 0.5, np.ones((3, 1))]) / np.sqrt(2))
    assert np.linalg.norm(recorder["X"], axis=1).max() <= 1.0
    rng = np.random.default_rng(0)
    X, theta = rng.uniform(-1, 1, (300, 3)), np.array([0.5, -1.0, 0.25])
    y = 2.0 + X @ theta + 0.1 * rng.standard_normal(300)
    model = DPLinearRegression("ols", epsilon=None, x_bound=2.0, y_bound=5.0).fit(X, y)
    exact = np.linalg.lstsq(np.hstack([X, np.ones((300, 1))]), y, rcond=None)[0]
    np.testing.assert_allclose(model.coef_, exact[:3], rtol=1e-9)
    assert model.intercept_ == pytest.approx(exact[3], rel=1e-9)
    X = rng.uniform(-1, 1, (5000, 3))
    y = 2.0 + X @ theta + 0.1 * rng.standard_normal(5000)
    private = DPLinearRegression("adassp", epsilon=5.0, x_bound=2.0, y_bound=5.0, random_state=0).fit(X, y)
    assert private.intercept_ == pytest.approx(2.0, abs=0.2)
    assert private.score(X, y) > 0.8


def test_clipping_is_announced_with_its_fraction_or_refused():
    """Unscaled data with the default unit bounds: every row is clipped, and the user is told (or refused)."""
    rng = np.random.default_rng(1)
    X = rng.normal(0, 3, (500, 4))
    y = X @ np.array([1.0, 0.5, 0.0, -1.0]) + rng.normal(0, 0.5, 500)
    with pytest.warns(ClippingWarning, match=r"99\.8% of the rows have ‖x‖ > x_bound = 1 and 82\.6% of the labels"):
        DPLinearRegression("adassp", random_state=0).fit(X, y)
    with pytest.raises(ValueError, match=r"clip='error': 99\.8% of the rows"):
        DPLinearRegression("adassp", random_state=0, clip="error").fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        DPLinearRegression("adassp", random_state=0, clip="ignore").fit(X, y)
        DPLinearRegression("adassp", random_state=0, x_bound=40.0, y_bound=40.0).fit(X, y)  # inside: no warning
    with pytest.raises(ValueError, match="clip must be one of warn, error, ignore"):
        DPLinearRegression("adassp", clip="sometimes").fit(X, y)


# -- confidence intervals (issue 37) ------------------------------------------------------------------------------


def _interval_data(n: int = 3000):
    rng = np.random.default_rng(7)
    X = rng.uniform(-1.0, 1.0, (n, 3))
    return X, X @ np.array([1.0, -0.5, 0.0]) + 0.3 + 0.2 * rng.uniform(-1.0, 1.0, n)


def _interval_model(**params):
    base = dict(epsilon=2.0, x_bound=2.0, y_bound=3.0, intervals=True, random_state=0, B=200)
    return DPLinearRegression("adassp_pboot", **{**base, **params})


CHECKPOINT_FAST = dict(T=30, burn_in=10, stride=2, checkpoints=10)


def _checkpoint_model(**params):
    base = dict(epsilon=2.0, x_bound=2.0, y_bound=3.0, intervals=True, random_state=0, **CHECKPOINT_FAST)
    return DPLinearRegression("dpgd_checkpoints", **{**base, **params})


def test_list_mechanisms_names_the_interval_methods():
    from typer.testing import CliRunner

    from dpbench.cli import app

    lines = CliRunner().invoke(app, ["list", "mechanisms"]).output.splitlines()
    assert "intervals" in lines[1]
    start = lines[1].index("intervals")
    column = {line.split()[0]: line[start:].split()[0] for line in lines[2:] if line.strip()}
    assert column["adassp_pboot"] == "pboot_ssp,pboot,wald_private"
    assert column["dpgd_checkpoints"] == "checkpoint_pop,checkpoint"
    assert column["adassp"] == "-"


def test_conf_int_rows_are_the_coefficients_then_the_intercept():
    X, y = _interval_data()
    model = _interval_model(intervals="wald_private").fit(X, y)
    ci = model.conf_int(0.05)
    assert ci.shape == (4, 2) and np.all(ci[:, 0] < ci[:, 1])
    assert ci.mean(axis=1) == pytest.approx(np.append(model.coef_, model.intercept_))  # Wald: centred on θ̂
    assert np.all(model.conf_int(0.5)[:, 1] - model.conf_int(0.5)[:, 0] < ci[:, 1] - ci[:, 0])
    without = _interval_model(fit_intercept=False).fit(X, y)
    assert without.conf_int().shape == (3, 2)


@pytest.mark.parametrize("mechanism", ["adassp_pboot", "dpgd_checkpoints"])
def test_conf_int_works_in_a_pipeline_and_after_clone(mechanism):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import MinMaxScaler

    X, y = _interval_data()
    model = _interval_model() if mechanism == "adassp_pboot" else _checkpoint_model()
    pipe = make_pipeline(MinMaxScaler((-1, 1)), clone(model)).fit(X, y)
    ci = pipe[-1].conf_int(0.1)
    assert ci.shape == (4, 2)
    assert clone(model).get_params()["intervals"] is True
    assert np.array_equal(clone(model).fit(X, y).conf_int(), model.fit(X, y).conf_int())


def test_interval_errors_name_the_argument():
    X, y = _interval_data()
    with pytest.raises(ValueError, match="refit with intervals=True"):
        _interval_model(intervals=False).fit(X, y).conf_int()
    with pytest.raises(ValueError, match="intervals: mechanism 'adassp' has no interval method.*adassp_pboot"):
        DPLinearRegression("adassp", intervals=True).fit(X, y)
    with pytest.raises(ValueError, match="intervals must be False, True or one of"):
        _interval_model(intervals="checkpoint").fit(X, y)
    fitted = _interval_model().fit(X, y)
    for alpha in (1.5, 0.0, 1.0, -0.1, True, "0.05", None):
        with pytest.raises(ValueError, match="alpha must be a number in \\(0, 1\\)"):
            fitted.conf_int(alpha=alpha)
    with pytest.raises(NotFittedError, match="conf_int: .* not fitted yet"):
        _interval_model().conf_int()
    with pytest.raises(ValueError, match="X: intervals need n_samples > n_coefficients \\+ 1"):
        _interval_model().fit(X[:5], y[:5])


@pytest.mark.parametrize("intervals", [False, True])
def test_dpgd_checkpoints_defaults_converge_on_a_well_conditioned_problem(intervals):
    """η = 1/L and b = 100 (the mechanism's documented defaults): at large ε the fit reaches OLS (it did not with
    Brown et al.'s T = 50, b = 5 on unit-ball data: the start's bias dominated), and the interval is around it."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1.0, 1.0, (5000, 3))
    y = X @ np.array([1.0, -0.5, 0.25]) + 0.5 + 0.1 * rng.standard_normal(5000)
    ols = np.linalg.lstsq(np.column_stack([X, np.ones(5000)]), y, rcond=None)[0]
    model = DPLinearRegression("dpgd_checkpoints", epsilon=100.0, x_bound=np.sqrt(3), y_bound=3.0, random_state=0,
                               intervals=intervals).fit(X, y)  # fmt: skip
    assert np.append(model.coef_, model.intercept_) == pytest.approx(ols, abs=0.02)
    if intervals:
        bounds = model.conf_int()
        assert np.all((bounds[:, 0] <= ols) & (ols <= bounds[:, 1]))
