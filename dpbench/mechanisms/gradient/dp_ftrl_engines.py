"""Moved to :mod:`dpbench.mechanisms.gradient.dp_ftrl.engines`; this name is the same module object, kept while other
branches still import it."""

import sys

from dpbench.mechanisms.gradient.dp_ftrl import engines as _moved

sys.modules[__name__] = _moved
