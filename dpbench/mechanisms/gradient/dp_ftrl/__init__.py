"""DP-FTRL (spec 002): mechanisms.py (the registered mechanisms) · core.py (the body and the one HYPER table) ·
covariance.py (Σ designs, public moments) · rules.py (η, effective dimension, RESIDUALEST) · engines.py (blocked and
reference loops) · stores.py (every module-level cache of the family, gathered: streams, public designs, buffers)."""


def __getattr__(name: str):
    """``dpbench.mechanisms.gradient.dp_ftrl.<fit>`` — the names of the former module ``dp_ftrl.py`` (now
    :mod:`.mechanisms`), kept for code written against it."""
    import importlib

    if name.startswith("__"):
        raise AttributeError(name)
    return getattr(importlib.import_module(f"{__name__}.mechanisms"), name)
