"""Per-mechanism settings of the white-box audit, read from the mechanism's contract (``AuditSetup``).

``AuditSetup.whitebox["pair"]`` holds fields of :class:`~dpbench.audit.pairs.PairSpec` (defaults: n = 32 and the
contract's d), ``AuditSetup.whitebox["hyper"]`` hyperparameters added to ``AuditSetup.hyper`` for the white-box
audit. The declarations live next to each mechanism (e.g. a saturating label for mechanisms that clip residuals,
``shuffle: false`` so the canary reaches a known stage, the first row for DP-FTRL's tree); no module here names a
mechanism.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import fields
from typing import Any

import numpy as np

from dpbench.audit.pairs import PairSpec
from dpbench.engine.schema import DELTA_RULE
from dpbench.registry import MechanismInfo


def _setup(info: MechanismInfo) -> Any:
    return getattr(info, "audit", None)


def _whitebox(info: MechanismInfo) -> Mapping[str, Any]:
    setup = _setup(info)
    declared = getattr(setup, "whitebox", None) if setup is not None else None
    return declared if isinstance(declared, Mapping) else {}


def pair_spec(info: MechanismInfo) -> PairSpec:
    """The audit pair's shape and bounds declared by ``info`` (PairSpec defaults otherwise)."""
    setup = _setup(info)
    base = {"d": int(getattr(setup, "d", 2))} if setup is not None else {}
    declared = {**base, **dict(_whitebox(info).get("pair", {}))}
    known = {f.name for f in fields(PairSpec)}
    unknown = sorted(set(declared) - known)
    if unknown:
        raise ValueError(f"{info.name}: AuditSetup.whitebox['pair'] has unknown fields {unknown}")
    return PairSpec(**declared)


def whitebox_hyper(info: MechanismInfo, epsilon: float | None = None) -> dict[str, Any]:
    """Hyperparameters of the white-box audit: ``AuditSetup.hyper`` plus ``AuditSetup.whitebox['hyper']``."""
    setup = _setup(info)
    hyper = dict(getattr(setup, "hyper", {}) or {}) if setup is not None else {}
    hyper.update(dict(_whitebox(info).get("hyper", {})))
    allowed = info.hyperparameters()
    return {k: v for k, v in hyper.items() if k in allowed}


#: rows of a run's dataset audited by default (issue 36 item 2); fewer when one fit costs too much
RUN_N = 10_000
#: CPU seconds the run setting's real runs may take per mechanism (sets how far n is lowered)
RUN_SECONDS = 10.0
#: real fits the run setting needs (paired runs of the integrity checks × 3 fits each)
RUN_FITS = 900


def run_delta(rule: str | float, n: int) -> float:
    """δ of a run with n rows under a config's δ rule ('1/n^2', '1/n', '1/n^p' or a number), as the runner does."""
    if isinstance(rule, str):
        match = DELTA_RULE.match(rule)
        if not match:
            raise ValueError(f"--delta-rule must be '1/n^2', '1/n', '1/n^p' or a number, got {rule!r}")
        return float(n) ** (-float(match.group(1) or 1.0))
    return float(rule)


def run_n(info: MechanismInfo, spec: PairSpec, hyper: Mapping[str, Any], epsilon: float, n: int = RUN_N,
          seconds: float = RUN_SECONDS) -> tuple[int, str]:  # fmt: skip
    """The largest n ≤ ``n`` (10⁴, 3,162, 1,000, …, never below the audit pair's) whose :data:`RUN_FITS` fits fit in
    ``seconds`` CPU-s, timed on one fit of the run's shape; with the reason when n had to be lowered."""
    import time

    from dpbench.audit.pairs import background, inputs_for, public_rows

    declared = _whitebox(info).get("run", {})
    n = int(declared.get("n", n))
    why = ""
    while n > spec.n:
        shape = spec.with_(n=n)
        X, y = background(shape)
        X, y = np.vstack([X, np.eye(1, spec.d)]), np.append(y, 0.5 * spec.y_bound)
        inputs = inputs_for(info, X, y, public_rows(shape, np.random.default_rng(0)), shape)
        tick = time.process_time()
        info.fit(X, y, epsilon, 1.0 / n**2, np.random.default_rng(0), **inputs, **hyper)
        cost = time.process_time() - tick
        if cost * RUN_FITS <= seconds:
            return n, why
        why = f"lowered: {cost:.2g} CPU-s per fit at n = {n:,}"
        n = int(round(n / math.sqrt(10)))
    return spec.n, why
