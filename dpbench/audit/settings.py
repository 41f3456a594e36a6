"""Per-mechanism settings of the white-box audit, read from the mechanism's contract (``AuditSetup``).

``AuditSetup.whitebox["pair"]`` holds fields of :class:`~dpbench.audit.pairs.PairSpec` (defaults: n = 32 and the
contract's d), ``AuditSetup.whitebox["hyper"]`` hyperparameters added to ``AuditSetup.hyper`` for the white-box
audit. The declarations live next to each mechanism (e.g. a saturating label for mechanisms that clip residuals,
``shuffle: false`` so the canary reaches a known stage, the first row for DP-FTRL's tree); no module here names a
mechanism.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from dpbench.audit.pairs import PairSpec
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
