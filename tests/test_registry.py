"""Discovery: one broken module must not hide the others, and lookups name it."""

from __future__ import annotations

import importlib

import pytest

from dpbench import registry


def test_broken_module_is_reported_not_fatal(monkeypatch):
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
    with pytest.warns(RuntimeWarning, match="dpbench.mechanisms.sketch.linmix"):
        registry.discover()
    assert "dpbench.mechanisms.sketch.linmix" in registry.IMPORT_ERRORS
    with pytest.raises(KeyError, match="failed to import: dpbench.mechanisms.sketch.linmix"):
        registry.get_mechanism("definitely_not_registered")


def test_lookup_of_unknown_names_lists_registered():
    with pytest.raises(KeyError, match="registered: .*adassp"):
        registry.get_mechanism("nope")
    with pytest.raises(KeyError, match="registered: .*concreteslump"):
        registry.get_dataset("nope")
