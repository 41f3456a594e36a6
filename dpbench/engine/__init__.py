"""Generic experiment engine: plan → shards → execute (loky | dask) → assemble; seeds; resume.

The engine knows no experiment kind and no paper: kinds register their planner and task runner with
:func:`dpbench.registry.register_kind` (the built-in ``regression`` kind lives in :mod:`dpbench.engine.regression`;
``bandit`` in :mod:`dpbench.bandits.kind`).
"""

from dpbench.engine.core import Plan, TaskResult, run
from dpbench.engine.store import RunError

__all__ = ["Plan", "RunError", "TaskResult", "run"]
