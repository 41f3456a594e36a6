"""Discovery: one broken module must not hide the others for a user (loud warning, named by the lookups), and is an
error in the tests; every project module imports."""

from __future__ import annotations

import importlib
import sys

import pytest

from dpbench import registry


@pytest.fixture
def broken_linmix(monkeypatch):
    """Discovery from scratch in which dpbench.mechanisms.sketch.linmix fails to import (on patched registries)."""
    registry.discover()  # the real registries stay complete; the test works on patched copies
    real_import = importlib.import_module

    def flaky_import(name, *args, **kwargs):
        if name == "dpbench.mechanisms.sketch.linmix":
            raise SyntaxError("half-written file")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(registry, "_DISCOVERED", False)
    monkeypatch.setattr(registry, "IMPORT_ERRORS", {})
    monkeypatch.setattr(registry, "MECHANISMS", {})
    monkeypatch.setattr(registry.importlib, "import_module", flaky_import)


def test_broken_module_is_reported_not_fatal_for_users(broken_linmix, monkeypatch):
    monkeypatch.setenv(registry.STRICT_ENV, "0")  # as for a user (the suite runs strictly)
    with pytest.warns(registry.DiscoveryWarning, match="dpbench.mechanisms.sketch.linmix"):
        registry.discover()
    assert list(registry.IMPORT_ERRORS) == ["dpbench.mechanisms.sketch.linmix"]  # the others imported
    with pytest.raises(KeyError, match="failed to import: dpbench.mechanisms.sketch.linmix"):
        registry.get_mechanism("definitely_not_registered")


def test_broken_project_module_is_an_error_in_the_tests(broken_linmix):
    """The suite runs discovery strictly (tests/conftest.py): a registry shrunk by an import failure fails loudly."""
    with pytest.warns(registry.DiscoveryWarning), pytest.raises(registry.DiscoveryError, match="sketch.linmix"):
        registry.discover()
    with pytest.raises(registry.DiscoveryError):  # and keeps failing: no lookup sees the shrunken registry
        registry.get_mechanism("adassp")


def test_every_project_module_imports_and_registers():
    registry.discover()
    assert registry.IMPORT_ERRORS == {}
    modules = registry.project_modules()
    assert len(modules) > 40 and "dpbench.bandits.linucb" in modules
    assert [name for name in modules if name not in sys.modules] == []
    assert {"regression", "bandit"} <= set(registry.KINDS)


def test_lookup_of_unknown_names_suggests_close_ones():
    with pytest.raises(KeyError, match="did you mean 'adassp'"):
        registry.get_mechanism("adasp")
    with pytest.raises(KeyError, match="did you mean 'concreteslump'"):
        registry.get_dataset("concrete_slump")
    with pytest.raises(KeyError, match="dpbench list datasets"):
        registry.get_dataset("nope")


def test_unknown_name_lists_short_lists_and_matches_case():
    message = registry.unknown_name("key", "Foo", ["foo", "bar"])
    assert message == "unknown key 'Foo'; did you mean 'foo'? (allowed: bar, foo)"
    long_names = [f"mechanism_number_{i}" for i in range(20)]
    message = registry.unknown_name("mechanism", "zzz", long_names, see="dpbench list mechanisms")
    assert message == "unknown mechanism 'zzz' (`dpbench list mechanisms` shows all 20)"


def test_strict_privacy_profile_sets_and_certifies_the_theorem_accounting():
    """``privacy: strict`` (registry.PRIVACY_PROFILES): each mechanism's strict values are set unless given, and a
    setting whose accounting is not a theorem is refused naming the hyperparameter; ``paper`` passes hyper through."""
    from dpbench.contract import HyperError

    registry.discover()
    assert registry.PRIVACY_PROFILES == ("strict", "paper")
    linmix = registry.get_mechanism("linmix")
    assert linmix.with_profile({"k_factor": 3.0}, "strict") == {"strict": True, "k_factor": 3.0}
    assert linmix.with_profile({"k_factor": 3.0}, "paper") == {"k_factor": 3.0}
    with pytest.raises(HyperError, match="strict: not allowed under privacy: strict .* C² = 2"):
        linmix.with_profile({"strict": False}, "strict")
    ftrl = registry.get_mechanism("dp_ftrl_identity")
    assert ftrl.with_profile({"calibration": "paper"}, "strict") == {"calibration": "paper"}  # zero-out: certified
    with pytest.raises(HyperError, match="calibration: .*not certified under replace-one"):
        ftrl.with_profile({"calibration": "paper", "neighbour": "replace_one"}, "strict")
    with pytest.raises(HyperError, match="calibration: .*classical Gaussian σ is a theorem only for ε′ < 1"):
        registry.get_mechanism("stein_glm_l1").with_profile({"calibration": "classical"}, "strict")
    assert registry.get_mechanism("ihm").with_profile({"T": 3}, "strict") == {"T": 3}  # nothing to change
    with pytest.raises(ValueError, match="privacy profile must be one of"):
        linmix.with_profile({}, "lenient")
    # every mechanism's strict values are declared and certified (checked at registration too)
    for info in registry.MECHANISMS.values():
        merged = info.with_profile({}, "strict")
        assert info.certify is None or info.certify(info.resolve(merged)) is None


def test_an_analysis_declares_its_options_once_with_hyper_and_they_are_read_and_checked():
    """register_analysis(options={...Hyper...}): `-o key=value` text read as the declared type, checked against the
    declaration, defaults filled; unknown keys and refused values name the option."""
    from dpbench.contract import Hyper

    declared = {"k": Hyper(int, default=3, ge=1), "fast": Hyper(bool, default=False)}

    @registry.register_analysis("toy_declared", summary="toy", options=declared)
    def toy(runs, options, echo):
        return []

    try:
        assert registry.analysis_options("toy_declared", {}) == {"k": 3, "fast": False}
        assert registry.analysis_options("toy_declared", {"k": "7", "fast": "yes"}) == {"k": 7, "fast": True}
        with pytest.raises(ValueError, match="option k: must be an integer ≥ 1, got 0"):
            registry.analysis_options("toy_declared", {"k": "0"})
        with pytest.raises(ValueError, match="unknown option 'kk'.*did you mean 'k'"):
            registry.analysis_options("toy_declared", {"kk": "1"})
        with pytest.raises(TypeError, match="default of k is not allowed"):
            registry.register_analysis("toy_bad", summary="", options={"k": Hyper(int, default=0, ge=1)})(toy)
    finally:
        registry.ANALYSES.pop("toy_declared", None)


def test_a_dataset_loader_declares_its_options_once_with_hyper(small_config):
    """register_dataset(options={...Hyper...}): the loader's signature is derived from the table, library calls
    and configs are checked against it, naming the option (sphere_linear is the example)."""
    import numpy as np

    from dpbench.config import ConfigError, parse_config

    info = registry.get_dataset("sphere_linear")
    assert info.declared is not None and info.options()["n"] == 1000 and registry.loader_specs(info)["n"].ge == 1
    with pytest.raises(ValueError, match=r"^n: must be an integer ≥ 1, got 0"):
        info.load(np.random.default_rng(0), n=0)
    raw = {**small_config, "datasets": [{"loader": "sphere_linear", "options": {"corrupt": 0.7}}]}
    with pytest.raises(ConfigError, match=r"datasets\[0\]\.options\.corrupt.*< 0.5"):
        parse_config(raw)


def test_every_built_in_dataset_loader_declares_its_options_once_with_hyper():
    """'one declaration scheme (Hyper) for every plug-in kind': each dpbench loader has its options table (empty for
    a loader without options), its defaults allowed by their declarations."""
    registry.discover()
    built_in = {name: info for name, info in registry.DATASETS.items() if info.load.__module__.startswith("dpbench.")}
    assert len(built_in) > 40
    assert not {name for name, info in built_in.items() if info.declared is None}
    for info in built_in.values():
        for key, spec in (info.declared or {}).items():
            assert spec.check(spec.default) == spec.default, (info.name, key)
