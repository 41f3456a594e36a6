"""Deprecated name of :mod:`dpbench.mechanisms.iwr` (the family's one prefix is ``iwr``; docs/architecture.md,
"Names"): ``dpbench.mechanisms.info_weighted.<module>`` is the same module object as
``dpbench.mechanisms.iwr.<module>``, kept while other branches import the old path."""

from __future__ import annotations

import importlib
import pkgutil
import sys

from dpbench.mechanisms import iwr as _iwr

for _module in pkgutil.iter_modules(_iwr.__path__):
    sys.modules[f"{__name__}.{_module.name}"] = importlib.import_module(f"{_iwr.__name__}.{_module.name}")
