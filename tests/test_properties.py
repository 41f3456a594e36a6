"""Property-based tests (hypothesis): bad input always gives a clear error, never a crash or a silent result.

* Config loader: any value in any top-level field either parses or raises ConfigError naming that field.
* Mechanisms: NaN/inf anywhere, rows or labels over the bounds (when the mechanism does not clip), wrong shapes,
  n < d where n ≥ d is required, ε ≤ 0 or non-finite, δ ∉ (0, 1) — each raises ValueError naming the problem.
  The spec 004 mechanisms are checked on every property; every other registered private mechanism is checked on
  the privacy parameters and on non-finite data (the contract's `check_inputs` boundary).

Crash safety of the runner (SIGKILL mid-run, then resume: no lost/duplicated trials, no corrupt CSV) is tested in
tests/engine/test_runner.py::test_sigkill_mid_run_then_resume_loses_and_duplicates_nothing.
"""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from dpbench import audit, registry
from dpbench.config import ConfigError, parse_config
from dpbench.engine.schema import TOP_LEVEL_KEYS
from dpbench.privacy.validate import DELTA_MIN, EPSILON_RANGE

registry.discover()
#: every property is checked on the private mechanisms of spec 004; the lists below come from their contracts
SPEC004 = sorted(n for n, m in registry.MECHANISMS.items() if m.spec.startswith("004") and m.private)
#: mechanisms whose calibration relies on ‖x_i‖ ≤ bound (rows not clipped) and on |y_i| ≤ bound
X_BOUNDED = [n for n in SPEC004 if registry.MECHANISMS[n].bounds.enforced(registry.MECHANISMS[n].resolve())[0]]
Y_BOUNDED = [n for n in SPEC004 if registry.MECHANISMS[n].bounds.enforced(registry.MECHANISMS[n].resolve())[1]]
NEEDS_N_GE_D = [n for n in SPEC004 if registry.MECHANISMS[n].bounds.n_ge_d]
OTHER_PRIVATE = sorted(
    name for name, info in registry.MECHANISMS.items() if info.private and name not in SPEC004 and ":" not in name
)
PROPERTY = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

# ------------------------------------------------------------------------------------------------------------
# config loader

BASE_CONFIG = {
    "name": "prop",
    "seed": 1,
    "trials": 2,
    "epsilons": [0.5, 2.0],
    "delta": "1/n^2",
    "datasets": [{"loader": "sphere_linear", "options": {"n": 50, "d": 2}}],
    "mechanisms": ["adassp", {"mechanism": "ihm", "hyper": {"T": 2}}],
}

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**6), max_value=10**6),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(min_size=1, max_size=8), inner, max_size=4)
    ),
    max_leaves=10,
)


@PROPERTY
@given(key=st.sampled_from(sorted(TOP_LEVEL_KEYS)), value=values)
def test_config_any_field_value_parses_or_names_the_field(key, value):
    raw = copy.deepcopy(BASE_CONFIG)
    raw[key] = value
    try:
        parse_config(raw)
    except ConfigError as err:
        message = str(err)
        assert key in message, message
        assert "\n" not in message


def _entry_setter(path: str):
    """Put a value at one nested field of a dataset/mechanism entry (or an epsilons/large-trials mapping)."""
    section, key = path.split(".")

    def put(raw: dict, value) -> None:
        if section == "mechanisms":
            raw["mechanisms"] = [{"mechanism": "ihm", key: value}]
        elif section == "datasets":
            raw["datasets"] = [{"loader": "sphere_linear", key: value}]
        elif section == "grid":
            raw["mechanisms"] = [{"mechanism": "ihm", "grid": {key: value}}]
        elif section == "epsilons":
            raw["epsilons"] = {key: value}
        else:
            raw["large_dataset_trials"] = {"nd_above": 10, "trials": 1, key: value}

    return put


NESTED = [
    "mechanisms.mechanism", "mechanisms.label", "mechanisms.hyper", "mechanisms.grid", "datasets.loader",
    "datasets.options", "datasets.grid", "grid.T", "epsilons.logspace", "epsilons.linspace",
    "large_dataset_trials.nd_above", "large_dataset_trials.trials",
]  # fmt: skip


@PROPERTY
@given(path=st.sampled_from(NESTED), value=values)
def test_config_nested_entry_fields_parse_or_raise_config_error(path, value):
    raw = copy.deepcopy(BASE_CONFIG)
    _entry_setter(path)(raw, value)
    try:
        parse_config(raw)
    except ConfigError as err:
        assert path.split(".")[0].replace("grid", "mechanisms") in str(err)


@PROPERTY
@given(eps=st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=1, max_size=4))
@example(eps=[EPSILON_RANGE[0], EPSILON_RANGE[1]])  # the ends of the supported range are accepted
@example(eps=[EPSILON_RANGE[0] / 2])
@example(eps=[EPSILON_RANGE[1] * 2])
def test_config_epsilons_rejected_iff_not_finite_positive(eps):
    """Accepted iff every ε is finite, in the supported range [1e-10, 1e10], and no ε repeats (the one range check
    of ε at config load; the calibrations' is check_epsilon, tested in tests/privacy/)."""
    raw = copy.deepcopy(BASE_CONFIG)
    raw["epsilons"] = eps
    low, high = EPSILON_RANGE
    good = all(math.isfinite(e) and low <= e <= high for e in eps) and len(set(eps)) == len(eps)
    if good:
        assert parse_config(raw).epsilons == tuple(eps)
    else:
        with pytest.raises(ConfigError, match="epsilons"):
            parse_config(raw)


@PROPERTY
@given(delta=st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-5, 5)))
def test_config_delta_rejected_iff_outside_unit_interval(delta):
    raw = copy.deepcopy(BASE_CONFIG)
    raw["delta"] = delta
    if DELTA_MIN <= delta < 1:
        assert parse_config(raw).delta == pytest.approx(delta)
    else:
        with pytest.raises(ConfigError, match="delta"):
            parse_config(raw)


@PROPERTY
@given(key=st.text(min_size=1, max_size=10))
def test_config_unknown_top_level_key_is_named(key):
    assume(key not in TOP_LEVEL_KEYS)
    raw = copy.deepcopy(BASE_CONFIG)
    raw[key] = 1
    with pytest.raises(ConfigError, match="unknown key"):
        parse_config(raw)


@PROPERTY
@given(name=st.sampled_from(SPEC004), hyper=st.text(min_size=1, max_size=10))
def test_config_unknown_hyperparameter_is_named(name, hyper):
    assume(hyper not in registry.MECHANISMS[name].hyperparameters())
    raw = copy.deepcopy(BASE_CONFIG)
    raw["mechanisms"] = [{"mechanism": name, "hyper": {hyper: 1}}]
    with pytest.raises(ConfigError, match=r"mechanisms\[0\]\.hyper"):
        parse_config(raw)


# ------------------------------------------------------------------------------------------------------------
# mechanism inputs


@st.composite
def bounded_data(draw, min_n=3, max_n=30, max_d=4):
    """(X, y) with ‖x_i‖ ≤ 1, |y_i| ≤ 1 and n ≥ d."""
    d = draw(st.integers(1, max_d))
    n = draw(st.integers(max(min_n, d), max_n))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X *= rng.uniform(0.1, 1.0, size=(n, 1)) / np.linalg.norm(X, axis=1, keepdims=True)
    y = rng.uniform(-1, 1, n)
    return X, y


def call(name, X, y, eps=1.0, delta=1e-5, seed=0):
    info = registry.MECHANISMS[name]
    return info.fit(X, y, eps, delta, np.random.default_rng(seed))


def spec004_valid_output(name, X, y):
    theta = np.asarray(getattr(call(name, X, y), "theta", None))
    assert theta.shape == (X.shape[1],) and np.isfinite(theta).all()


@PROPERTY
@given(name=st.sampled_from(SPEC004), data=bounded_data())
def test_valid_inputs_give_a_finite_estimate(name, data):
    spec004_valid_output(name, *data)


@PROPERTY
@given(
    name=st.sampled_from(SPEC004),
    data=bounded_data(),
    where=st.sampled_from(["X", "y"]),
    bad=st.sampled_from([np.nan, np.inf, -np.inf]),
    position=st.integers(0, 10**6),
)
def test_non_finite_values_are_named(name, data, where, bad, position):
    X, y = (a.copy() for a in data)
    target = X if where == "X" else y
    target.flat[position % target.size] = bad
    with pytest.raises(ValueError, match=f"{where} contains NaN or inf"):
        call(name, X, y)


@PROPERTY
@given(name=st.sampled_from(X_BOUNDED), data=bounded_data(), row=st.integers(0, 10**6), scale=st.floats(1.001, 1e6))
def test_rows_over_the_bound_are_rejected(name, data, row, scale):
    X, y = data[0].copy(), data[1]
    i = row % X.shape[0]
    X[i] = X[i] / np.linalg.norm(X[i]) * scale
    with pytest.raises(ValueError, match="x_bound"):
        call(name, X, y)


@PROPERTY
@given(name=st.sampled_from(Y_BOUNDED), data=bounded_data(), row=st.integers(0, 10**6), value=st.floats(1.001, 1e6))
def test_labels_over_the_bound_are_rejected(name, data, row, value):
    X, y = data[0], data[1].copy()
    y[row % y.size] = -value
    with pytest.raises(ValueError, match="y_bound"):
        call(name, X, y)


@PROPERTY
@given(name=st.sampled_from(SPEC004), data=bounded_data(), cut=st.integers(1, 5))
def test_wrong_shapes_are_named(name, data, cut):
    X, y = data
    with pytest.raises(ValueError, match="entries"):
        call(name, X, np.concatenate([y, np.zeros(cut)]))
    with pytest.raises(ValueError, match="2-D"):
        call(name, X.ravel(), y)
    with pytest.raises(ValueError, match="1-D"):
        call(name, X, y[:, None])


@PROPERTY
@given(name=st.sampled_from(NEEDS_N_GE_D), d=st.integers(2, 6), seed=st.integers(0, 1000))
def test_underdetermined_data_rejected_where_n_ge_d_is_needed(name, d, seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, d))
    X = rng.uniform(-1, 1, (n, d)) / (2 * np.sqrt(d))
    with pytest.raises(ValueError, match="n ≥ d"):
        call(name, X, np.zeros(n))


bad_epsilons = st.one_of(
    st.floats(max_value=0.0, allow_nan=False), st.just(math.inf), st.just(math.nan), st.just(-math.inf)
)
bad_deltas = st.one_of(
    st.floats(max_value=0.0, allow_nan=False), st.floats(min_value=1.0, allow_nan=False), st.just(math.nan)
)


@PROPERTY
@given(name=st.sampled_from(SPEC004 + OTHER_PRIVATE), eps=bad_epsilons)
def test_bad_epsilon_is_named_by_every_private_mechanism(name, eps):
    with pytest.raises(ValueError, match="(?i)epsilon|ε"):
        call_with_inputs(name, eps=eps)


#: pure ε-LDP mechanisms that ignore δ (and so accept any value; declared uses_delta=False); docs/privacy.md
IGNORE_DELTA = {name for name, info in registry.MECHANISMS.items() if not info.uses_delta}


@PROPERTY
@given(name=st.sampled_from([m for m in SPEC004 + OTHER_PRIVATE if m not in IGNORE_DELTA]), delta=bad_deltas)
def test_bad_delta_is_named_by_every_private_mechanism(name, delta):
    with pytest.raises(ValueError, match="(?i)delta|δ"):
        call_with_inputs(name, delta=delta)


def call_with_inputs(name, eps=1.0, delta=1e-5):
    """Call a mechanism on the audit's bounded dataset with whatever inputs it declares (stats, public_X, ...)."""
    info = registry.MECHANISMS[name]
    pair = audit.neighbouring_pair(info, *audit.default_shape(info))
    inputs = audit.mechanism_inputs(info, pair.X, pair.y, pair)
    return info.fit(pair.X, pair.y, eps, delta, np.random.default_rng(0), **inputs, **audit.default_hyper(info))
