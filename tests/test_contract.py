"""The mechanism contract (issue 20): declared in register_mechanism, checked at import and config time, read by the
runner, the estimator, the bench and the audit — and the defects a code review found, each with its test."""

from __future__ import annotations

import ast
import inspect
import math
import pydoc
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from dpbench import audit, registry
from dpbench.config import ConfigError, load_config, parse_config
from dpbench.contract import INPUTS, AuditSetup, Bounds, Choice, Hyper, HyperError, Variant
from dpbench.engine import run
from dpbench.linalg import gram_stats
from dpbench.mechanisms._base import resolve_stats

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "dpbench"
registry.discover()
BUILTIN = sorted(name for name, info in registry.MECHANISMS.items() if info.fit.__module__.startswith("dpbench."))


def bounded_data(n: int = 300, d: int = 4, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X *= rng.uniform(0.2, 1.0, (n, 1)) / np.linalg.norm(X, axis=1, keepdims=True)
    return X, np.clip(X @ np.linspace(0.5, -0.5, d) + 0.1 * rng.standard_normal(n), -1, 1)


def config_with(mechanism, epsilons=(0.5,), **extra):
    return {
        "name": "contract", "seed": 3, "trials": 2, "epsilons": list(epsilons),
        "datasets": [{"loader": "sphere_linear", "options": {"n": 300, "d": 4}}],
        "mechanisms": [mechanism], **extra,
    }  # fmt: skip


# ------------------------------------------------------------------------------------------------------------
# the declarative pieces


@pytest.mark.parametrize(
    ("spec", "good", "bad", "message"),
    [
        (Hyper(float, gt=0), [1e-9, 3, 2.5], [0, -1.0, math.nan, math.inf, True, "x", None], "a number > 0"),
        (Hyper(float, gt=0, lt=1), [0.5], [0.0, 1.0], "a number > 0 and < 1"),
        (Hyper(int, ge=1), [1, 7, np.int64(3)], [0, 2.5, 3.0, True], "an integer ≥ 1"),
        (Hyper(bool), [True, False], [0, 1, "yes", None], "true or false"),
        (Choice("gram", "explicit"), ["gram", "explicit"], ["gramm", 1, None], "one of 'gram', 'explicit'"),
        (Hyper(float, gt=0, also=("rule",)), ["rule", 0.1], ["rules", -1], "or 'rule'"),
        (Hyper(int, ge=1, none="the rule"), [None, 4], [0], "or None (the rule)"),
        (Hyper(float, gt=0, inf=True), [math.inf, 2.0], [math.nan], "a number > 0"),
    ],
)
def test_a_declaration_accepts_exactly_what_it_says(spec, good, bad, message):
    for value in good:
        assert spec.check(value) is value or spec.check(value) == value
    for value in bad:
        with pytest.raises(ValueError, match="must be ") as err:
            spec.check(value)
        assert message in str(err.value) and "got" in str(err.value)


def test_a_yaml_float_written_without_a_dot_is_read_as_the_number():
    assert Hyper(float, gt=0).check("1e-6") == 1e-6  # PyYAML reads 1e-6 as a string
    with pytest.raises(ValueError):
        Hyper(int, ge=1).check("3")


T = Hyper(int, default=3, ge=1)
SKETCH = Choice("gram", "explicit", default="gram")


def toy_register(fit, **contract):
    return registry.register_mechanism(
        "_toy", summary="toy", privacy_model="central", neighbour="zero_out", **contract
    )(fit)


def test_registration_checks_the_table_where_each_hyperparameter_is_declared_once(monkeypatch):
    monkeypatch.setattr(registry, "MECHANISMS", dict(registry.MECHANISMS))

    def fit(X, y, epsilon, delta, rng, **hyper):
        return np.zeros(X.shape[1]) + hyper["T"]

    with pytest.raises(TypeError, match="'T' needs a default in its declaration"):
        toy_register(fit, hyper={"T": Hyper(int, ge=1)})
    with pytest.raises(TypeError, match="default of T is not allowed"):
        toy_register(fit, hyper={"T": Hyper(int, default=3, ge=4)})
    with pytest.raises(TypeError, match="audit.hyper.T"):
        toy_register(fit, hyper={"T": T, "sketch": SKETCH}, audit=AuditSetup(hyper={"T": 0}))
    with pytest.raises(TypeError, match="variants.fast.sketch"):
        toy_register(fit, hyper={"T": T, "sketch": SKETCH}, variants={"fast": Variant({"sketch": "x"})})
    with pytest.raises(TypeError, match="needs=\\['stats'\\]"):
        toy_register(fit, hyper={"T": T, "sketch": SKETCH}, needs=("stats",))
    with pytest.raises(TypeError, match="bounds.x names unknown hyperparameter 'B'"):
        toy_register(fit, hyper={"T": T, "sketch": SKETCH}, bounds=Bounds(x="B"))
    checked = toy_register(fit, hyper={"T": T, "sketch": SKETCH})
    assert registry.MECHANISMS["_toy"].fit is checked and checked.__wrapped__ is fit
    X, y = np.zeros((3, 2)), np.zeros(3)
    np.testing.assert_array_equal(checked(X, y, 1.0, 1e-5, None), [3, 3])  # the table's default reaches fit
    np.testing.assert_array_equal(checked(X, y, 1.0, 1e-5, None, T=5), [5, 5])
    with pytest.raises(HyperError, match="sketch: must be one of 'gram', 'explicit', got 'gramm'"):
        checked(X, y, 1.0, 1e-5, None, sketch="gramm")  # library callers are checked too
    with pytest.raises(HyperError, match="did you mean 'sketch'"):
        checked(X, y, 1.0, 1e-5, None, sketchh="gram")


def test_keyword_hyperparameters_beside_a_table_are_refused_saying_how_to_declare_once(monkeypatch):
    """The same fact written twice (a keyword default in fit and a declaration in the table) is refused at
    registration, with the way to write it once; so is a table whose fit cannot receive the hyperparameters."""
    monkeypatch.setattr(registry, "MECHANISMS", dict(registry.MECHANISMS))

    def twice(X, y, epsilon, delta, rng, *, T: int = 3, sketch: str = "gram"):
        return np.zeros(X.shape[1])

    with pytest.raises(
        TypeError,
        match="keyword hyperparameters \\['T', 'sketch'\\] and declares a hyper= table; "
        "declare each hyperparameter once: its default in the table",
    ) as err:
        toy_register(twice, hyper={"T": T, "sketch": SKETCH})
    assert "**hyper" in str(err.value) and "no hyper= table" in str(err.value)

    def closed(X, y, epsilon, delta, rng):
        return np.zeros(X.shape[1])

    with pytest.raises(TypeError, match="declared but fit does not take \\*\\*hyper"):
        toy_register(closed, hyper={"T": T})
    assert toy_register(closed, hyper={}) is registry.MECHANISMS["_toy"].fit  # nothing to declare: fine


def test_a_quick_plugin_without_a_table_infers_its_declarations_from_keyword_defaults(monkeypatch):
    monkeypatch.setattr(registry, "MECHANISMS", dict(registry.MECHANISMS))

    def fit(X, y, epsilon, delta, rng, *, ridge: float = 1.0, shrink: bool = False):
        return np.full(X.shape[1], ridge)

    checked = toy_register(fit)
    info = registry.MECHANISMS["_toy"]
    assert info.declared is None and info.hyperparameters() == {"ridge": 1.0, "shrink": False}
    assert info.specs()["ridge"].type is float and info.specs()["shrink"].type is bool
    assert inspect.signature(checked) == inspect.signature(fit)
    with pytest.raises(HyperError, match="shrink: must be true or false"):
        checked(np.zeros((3, 2)), np.zeros(3), 1.0, 1e-5, None, shrink="yes")


def test_the_registered_fit_shows_its_declared_hyperparameters_as_keyword_parameters():
    """help(), inspect.signature and IDEs see what a user can pass: the table's hyperparameters with defaults."""
    from dpbench.mechanisms.ssp import adassp

    params = inspect.signature(adassp.fit).parameters
    assert list(params) == [
        "X",
        "y",
        "epsilon",
        "delta",
        "rng",
        "rho",
        "shift",
        "accounting",
        "constants",
        "x_bound",
        "y_bound",
        "stats",
    ]
    assert {k: params[k].default for k in list(params)[5:11]} == {
        "rho": None,
        "shift": "code",
        "accounting": "paper",
        "constants": "ihm_paper",
        "x_bound": 1.0,
        "y_bound": 1.0,
    }
    assert all(params[k].kind is inspect.Parameter.KEYWORD_ONLY for k in list(params)[5:])
    assert params["rho"].annotation == "float | None" and params["shift"].annotation == "str"
    shown = pydoc.render_doc(adassp.fit, renderer=pydoc.plaintext)
    assert "rho: 'float | None' = None, shift: 'str' = 'code'" in shown
    assert "shift : one of 'code', 'paper' (default 'code') — λ_min shift" in shown
    for name in BUILTIN:  # every built-in: the signature is the table
        info = registry.get_mechanism(name)
        shown = {
            p.name: p.default
            for p in inspect.signature(info.fit).parameters.values()
            if p.kind is inspect.Parameter.KEYWORD_ONLY and p.name not in INPUTS
        }
        assert shown == info.hyperparameters(), name


@pytest.mark.parametrize("name", BUILTIN)
def test_every_builtin_mechanism_declares_its_whole_contract(name):
    info = registry.get_mechanism(name)
    assert info.declared is not None, f"{name}: declare every hyperparameter (hyper=...)"
    assert set(info.declared) == set(info.hyperparameters())
    for key, spec in info.specs().items():
        assert spec.describe(), key
        spec.check(info.hyperparameters()[key])
    assert info.privacy() == (info.privacy_model, info.neighbour)
    lo, hi = info.epsilons()
    assert 0 <= lo < hi
    assert (info.audit.skip is None) or len(info.audit.skip) > 20  # a reason, in words
    for variant in info.variants.values():
        info.check_hyper(variant.hyper)


def test_literal_variants_are_declared_for_the_shortcuts():
    literal = {name for name, info in registry.MECHANISMS.items() if any(v.literal for v in info.variants.values())}
    assert {"ihm", "linmix", "iwr_ldp", "ldp_ssp", "stein_glm_gauss"} <= literal


# ------------------------------------------------------------------------------------------------------------
# defect: hyperparameter values were checked only inside fit, at trial time


@pytest.mark.parametrize(
    ("mechanism", "field", "reason"),
    [
        ({"mechanism": "ihm", "hyper": {"sketch": "gramm"}}, "mechanisms[0].hyper.sketch", "one of 'gram', 'explicit'"),
        ({"mechanism": "ihm", "hyper": {"T": -3}}, "mechanisms[0].hyper.T", "an integer ≥ 1, got -3"),
        ({"mechanism": "ihm", "hyper": {"T": 2.5}}, "mechanisms[0].hyper.T", "an integer"),
        ({"mechanism": "adassp", "hyper": {"shift": "both"}}, "mechanisms[0].hyper.shift", "'code', 'paper'"),
        ({"mechanism": "dpgd", "hyper": {"C": 0}}, "mechanisms[0].hyper.C", "> 0"),
        ({"mechanism": "ihm", "grid": {"T": [2, 0]}}, "mechanisms[0].grid.T[1]", "≥ 1"),
        ({"mechanism": "iwr_dp", "hyper": {"lam": 0}}, "mechanisms[0].hyper.lam", "> 0"),
        ({"mechanism": "iwr_dp", "hyper": {"K": 0}}, "mechanisms[0].hyper.K", "≥ 1"),
        ({"mechanism": "iwr_dp", "hyper": {"gamma": 0}}, "mechanisms[0].hyper.gamma", "nonprivate: true"),
        ({"mechanism": "iwr_dp_erm", "hyper": {"gamma": 0}}, "mechanisms[0].hyper.gamma", "> 0"),
        ({"mechanism": "dp_ftrl_identity", "hyper": {"spectrum": "poly"}}, "mechanisms[0].hyper.r", "r > 1"),
    ],
)
def test_hyperparameter_values_are_checked_at_config_time_naming_the_field(mechanism, field, reason):
    with pytest.raises(ConfigError) as err:
        parse_config(config_with(mechanism))
    assert f"'{field}'" in str(err.value) and reason in str(err.value)


def test_dpbench_run_stops_before_the_first_trial_naming_the_field(tmp_path):
    from typer.testing import CliRunner

    from dpbench.cli import app

    raw = config_with({"mechanism": "ihm", "hyper": {"sketch": "gramm"}}, output_dir=str(tmp_path / "results"))
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(raw))
    result = CliRunner().invoke(app, ["run", str(tmp_path / "bad.yaml"), "--no-progress"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "'mechanisms[0].hyper.sketch': must be one of 'gram', 'explicit', got 'gramm'" in result.output
    assert not (tmp_path / "results").exists()  # nothing started, nothing half-written


def test_valid_values_parse_unchanged_and_yaml_numeric_strings_become_numbers():
    cfg = parse_config(config_with({"mechanism": "ihm", "hyper": {"T": 2, "C": 1, "rho": "1e-3"}}))
    assert dict(cfg.mechanisms[0].hyper) == {"T": 2, "C": 1, "rho": 1e-3}
    assert isinstance(dict(cfg.mechanisms[0].hyper)["C"], int)  # never rewritten: the entry's key seeds trials


def test_an_epsilon_outside_the_calibrations_theorem_fails_at_config_time():
    with pytest.raises(ConfigError, match=r"'mechanisms\[0\]'.*\(0, 1\] only.*epsilons\[1\] = 2"):
        parse_config(config_with("iwr_dp", epsilons=(0.5, 2.0)))
    parse_config(config_with({"mechanism": "iwr_dp", "hyper": {"calibration": "agm"}}, epsilons=(0.5, 2.0)))


def test_every_config_in_the_repository_satisfies_the_contract():
    paths = sorted((ROOT / "configs").rglob("*.yaml"))
    assert len(paths) > 50
    for path in paths:
        try:
            load_config(path)
        except ConfigError as err:  # an optional peer (extra `peers`) that does not import here is named, not hidden
            if "is unavailable: " not in str(err):
                raise


# ------------------------------------------------------------------------------------------------------------
# defect: resolve_stats reused the statistics of any data of the same shape


def test_statistics_of_other_data_of_the_same_shape_are_never_reused():
    X1, y1 = bounded_data(seed=1)
    X2, y2 = bounded_data(seed=2)
    ols = registry.get_mechanism("ols").fit
    truth = np.linalg.lstsq(X2, y2, rcond=None)[0]
    np.testing.assert_allclose(ols(X2, y2, stats=gram_stats(X1, y1)).theta, truth, rtol=1e-10)
    np.testing.assert_allclose(ols(X2, y2, stats=gram_stats(X2, y1)).theta, truth, rtol=1e-10)  # same X, other y
    stats = gram_stats(X2, y2)
    assert resolve_stats(stats.X, stats.y, stats) is stats  # the runner's own arrays: reused for free
    assert resolve_stats(X2.copy(), y2.copy(), stats) is stats  # equal data: reused
    assert resolve_stats(X1, y1, stats) is not stats


def test_the_stein_sums_use_the_runners_statistics_only_for_the_same_labels():
    from dpbench.mechanisms.stein.core import clean_sums

    X, y = bounded_data(seed=4)
    other = gram_stats(X, -y)
    xtx, xty, _ = clean_sums(X, y, r=10.0, clip_l2=True, y_clip=None, stats=other)
    np.testing.assert_allclose(xty, X.T @ y)


# ------------------------------------------------------------------------------------------------------------
# defect: an explicit lam: 0 / gamma: 0 / K was silently replaced by the rule's value (info-weighted, central)


def test_explicit_iwr_hyperparameters_are_used_or_rejected_never_replaced():
    X, y = bounded_data(n=400, d=3)
    fit = registry.get_mechanism("iwr_dp").fit
    rng = np.random.default_rng(0)
    reference = fit(X, y, 0.5, 1e-5, rng, nonprivate=True, gamma=0.0, K=2, lam=0.3)
    assert (reference.info["gamma"], reference.info["K"], reference.info["lam"]) == (0.0, 2, 0.3)
    for bad in ({"lam": 0}, {"K": 0}, {"gamma": 0}):
        with pytest.raises(HyperError, match=f"{next(iter(bad))}: "):
            fit(X, y, 0.5, 1e-5, rng, **bad)
    with pytest.raises(HyperError, match="lam: "):
        registry.get_mechanism("iwr_ldp").fit(X, y, 0.5, 1e-5, rng, lam=0)


# ------------------------------------------------------------------------------------------------------------
# defect: nonprivate=True turned privacy off while the CSV still said privacy_model: central


def test_nonprivate_instances_are_recorded_as_not_private(tmp_path):
    raw = config_with("iwr_dp", output_dir=str(tmp_path))
    raw["mechanisms"] = [
        {"mechanism": "iwr_dp", "label": "private"},
        {"mechanism": "iwr_dp", "label": "zero-out", "hyper": {"neighbour": "zero_out"}},
        {"mechanism": "iwr_dp", "label": "reference", "hyper": {"nonprivate": True}},
    ]
    table = pd.read_csv(run(parse_config(raw), progress=False, log=lambda _m: None) / "trials.csv")
    recorded = table.groupby("label")[["privacy_model", "neighbour"]].first()
    assert recorded.loc["private"].tolist() == ["central", "replace_one"]
    assert recorded.loc["zero-out"].tolist() == ["central", "zero_out"]
    assert recorded.loc["reference"].tolist() == ["none", "none"]


# ------------------------------------------------------------------------------------------------------------
# defect: the audit test turned errors into skips (11 of 25 mechanisms never audited)


def test_audit_defaults_are_the_declared_audit_setup():
    for name in BUILTIN:
        info = registry.get_mechanism(name)
        assert audit.default_hyper(info) == dict(info.audit.hyper), name
        assert audit.default_shape(info) == (info.audit.n, info.audit.d), name


@pytest.mark.parametrize("name", BUILTIN)
def test_every_mechanism_runs_on_the_audit_data_or_declares_why_not(name):
    """What `dpbench audit --all` and tests/audit/test_audit.py's every-mechanism audit run, once per audited ε: a
    mechanism that cannot run there must say why in its contract (AuditSetup.skip), never be skipped silently."""
    info = registry.get_mechanism(name)
    if info.audit.skip is not None:
        pytest.skip(f"declared: {info.audit.skip}")
    pair = audit.neighbouring_pair(info, info.audit.n, info.audit.d)
    for X, y in ((pair.X, pair.y), (pair.X_prime, pair.y_prime)):
        inputs = audit.mechanism_inputs(info, X, y, pair)
        for epsilon in (0.5, 2.0):
            theta = info.fit(X, y, epsilon, 1e-5, np.random.default_rng(0), **inputs, **info.audit.hyper)
            assert np.all(np.isfinite(np.ravel(getattr(theta, "theta", theta)))), epsilon


def test_only_mechanisms_that_cannot_run_on_a_neighbouring_pair_are_not_audited():
    skipped = {name for name in BUILTIN if registry.get_mechanism(name).audit.skip}
    unavailable = {name for name in BUILTIN if getattr(registry.get_mechanism(name).fit, "unavailable", "")}
    assert skipped - unavailable == {"iwr_dp_oracle", "iwr_ldp_oracle", "stein_sklearn_logreg", "stein_xty_oracle_cov"}


# ------------------------------------------------------------------------------------------------------------
# defect: bandits — `--backend dask` rejected, algorithms discovered from a hard-coded module list


def test_bandit_configs_take_the_backend_settings():
    path = ROOT / "configs" / "bandits" / "bandit_jdp.yaml"
    cfg = load_config(path, backend="dask", scheduler="tcp://127.0.0.1:8786")
    assert (cfg.backend, cfg.scheduler) == ("dask", "tcp://127.0.0.1:8786")
    assert "backend" not in cfg.fingerprint() and load_config(path).backend == "loky"
    with pytest.raises(ConfigError, match="'scheduler': is only used with backend: dask"):
        load_config(path, scheduler="tcp://127.0.0.1:8786")


NEW_ALGORITHM = """
from dpbench.bandits.linucb import LinUCBPolicy
from dpbench.bandits.simulator import register_algorithm


@register_algorithm("contract_test_algo", summary="a new algorithm file", privacy_model="none")
def make(env, T, epsilon, delta, rng):
    return LinUCBPolicy(env, 1.0, 1.0 / T, 1.0 / 16)
"""


def test_a_new_bandit_algorithm_file_registers_itself(tmp_path, monkeypatch):
    from dpbench import bandits
    from dpbench.bandits import simulator

    (tmp_path / "contract_test_algo.py").write_text(NEW_ALGORITHM)
    monkeypatch.setattr(bandits, "__path__", [*bandits.__path__, str(tmp_path)])
    monkeypatch.setattr(simulator, "ALGORITHMS", dict(simulator.ALGORITHMS))
    monkeypatch.setattr(registry, "_DISCOVERED", False)
    monkeypatch.setattr(registry, "IMPORT_ERRORS", {})
    monkeypatch.delitem(sys.modules, "dpbench.bandits.contract_test_algo", raising=False)
    try:
        assert simulator.get_algorithm("contract_test_algo").name == "contract_test_algo"
    finally:
        sys.modules.pop("dpbench.bandits.contract_test_algo", None)


# ------------------------------------------------------------------------------------------------------------
# defect: `make bench-ihm` called a script that does not exist


def make_recipes() -> list[str]:
    files = [ROOT / "Makefile", *sorted((ROOT / "mk").glob("*.mk"))]
    return [line.strip() for f in files for line in f.read_text().splitlines() if line.startswith("\t")]


def test_every_make_recipe_names_existing_files_modules_and_commands():
    import importlib.util

    import typer

    from dpbench.cli import app

    commands = set(typer.main.get_command(app).commands)
    problems = []
    for line in make_recipes():
        words = line.replace("$(", " $(").split()
        for i, word in enumerate(words):
            if word.endswith((".py", ".sh", ".yaml")) and "$" not in word and "*" not in word:
                if not (ROOT / word).is_file():
                    problems.append(f"missing file {word}: {line}")
            if word == "-m" and 0 < i < len(words) - 1 and words[i - 1] == "$(PYTHON)" and words[i + 1] != "pytest":
                if importlib.util.find_spec(words[i + 1]) is None:
                    problems.append(f"missing module {words[i + 1]}: {line}")
            if word == "$(DPBENCH)" and i + 1 < len(words) and words[i + 1] not in commands:
                problems.append(f"unknown command {words[i + 1]}: {line}")
    assert problems == []
    assert any("bench --suite" in line for line in make_recipes())


# ------------------------------------------------------------------------------------------------------------
# defect: privacy/ (the pure layer) drew random numbers


RANDOM_CALLS = {"standard_normal", "normal", "random", "laplace", "permutation", "choice", "integers", "chisquare",
                "uniform", "default_rng", "shuffle", "binomial", "exponential", "gamma"}  # fmt: skip


def test_the_privacy_layer_is_pure():
    offences = []
    for path in sorted((PACKAGE / "privacy").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.arg) and node.arg in ("rng", "random_state", "sampler"):
                offences.append(f"{path.name}:{node.lineno} takes {node.arg}")
            on_math = isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "math"
            if isinstance(node, ast.Attribute) and node.attr in RANDOM_CALLS and not on_math:
                offences.append(f"{path.name}:{node.lineno} uses .{node.attr}")
    assert offences == []


# ------------------------------------------------------------------------------------------------------------
# the contract in one place: no module outside a mechanism's own names it


#: files still naming mechanisms, each with the reason and who removes it (the test fails once one is clean)
NAMING_ALLOWED = {
    "dpbench/bandits/calibrate.py": "'iwr_ldp' is a bandit oracle key there, not the regression mechanism",
}


def mechanism_names_in(path: Path, names: set[str]) -> set[str]:
    tree = ast.parse(path.read_text())
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)
    }  # fmt: skip
    return {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
        and node.value in names
    }  # fmt: skip


def test_no_module_outside_a_mechanisms_own_names_it():
    """Generic code reads the contract; paper plug-ins (dpbench/papers/, like configs) may name mechanisms."""
    owner = {name: sys.modules[info.fit.__module__].__file__ for name, info in registry.MECHANISMS.items()}
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith("dpbench/papers/"):
            continue
        named = {n for n in mechanism_names_in(path, set(owner)) if Path(owner[n]).resolve() != path.resolve()}
        if named:
            found[relative] = sorted(named)
    assert sorted(set(found) - set(NAMING_ALLOWED)) == [], found
    assert sorted(set(NAMING_ALLOWED) - set(found)) == [], "clean now: drop it from NAMING_ALLOWED"
