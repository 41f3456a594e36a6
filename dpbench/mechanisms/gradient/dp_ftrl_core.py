"""Moved to :mod:`dpbench.mechanisms.gradient.dp_ftrl.core`; this name is the same module object, kept while other
branches still import it."""

import sys

from dpbench.mechanisms.gradient.dp_ftrl import core as _moved

sys.modules[__name__] = _moved
