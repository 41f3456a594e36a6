"""Per-mechanism settings of the white-box audit: the pair's shape and bounds, and audit hyperparameters.

A plug-in mechanism can carry its own as ``fit.audit_pair`` (a :class:`~dpbench.audit.pairs.PairSpec` or a dict of
its fields) and ``fit.audit_hyper`` (a dict); built-in mechanisms are listed here.

* Mechanisms that clip residuals (DP-GD, IHM) take a canary label of 10⁶: the clip saturates at every step, so the
  gradient difference is the full sensitivity whatever the iterate.
* DP-FTRL-I runs its literal tree engine (``engine="reference"``), whose nodes are declared releases.
* Information-weighted mechanisms run with ``shuffle=False`` so the canary (the last row) sits in the last stage
  (the stage-2 releases of IWR-DP/LDP); n = 72 gives each of K = 4 epochs ≥ 8 rows.
* The Stein estimators clip x to the radius r computed from the public rows; the canary's x = 10³·e₁ is clipped to
  r·e₁ (its worst case); GLM labels lie in [−1, 1] (the paper's assumption, not enforced), NLR labels are clipped at
  the family's B_y (a canary label of 10³ is clipped to B_y).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from dpbench.audit.pairs import PairSpec
from dpbench.registry import MechanismInfo

SATURATING_LABEL = 1e6

_IW = PairSpec(n=72)
#: GLM labels are assumed in [−1, 1] (B_y = 1, not clipped); NLR labels are clipped at B_y, so a huge one saturates
_STEIN_Y = {"glm": 1.0, "nlr": 1e3}
AUDIT_PAIRS: dict[str, PairSpec] = {
    "dpgd": PairSpec(y_bound=SATURATING_LABEL),
    # n = 2⁵: the first leaf is in k̄ = 6 released (left-child or root) nodes, the most any leaf is in
    "dp_ftrl_identity": PairSpec(n=32, y_bound=SATURATING_LABEL, canary_first=True),
    "ihm": PairSpec(y_bound=SATURATING_LABEL),
    "linmix": PairSpec(n=64, background="xy_null"),
    "iwr_dp": _IW,
    "iwr_dp_erm": _IW,
    "iwr_ldp": _IW,
    "iwr_glm_ldp": _IW,
    "ldp_clipped_sgd": PairSpec(n=16),
    "ldp_ssp": PairSpec(n=16),
    "ssp_ball": PairSpec(n=16),
    "dp_sgd_improper": PairSpec(n=16, canary_first=True),  # θ̄ averages θ_1..θ_T: the last record never enters
    "ldp_simple_1d": PairSpec(n=16, d=1),
    "ldp_laplace_ssp_1d": PairSpec(n=16, d=1),
    **{f"stein_{k}_gauss": PairSpec(n=32, x_bound=1e3, y_bound=_STEIN_Y[k]) for k in ("glm", "nlr")},
    **{f"stein_{k}_l1": PairSpec(n=32, x_norm=1, y_bound=_STEIN_Y[k]) for k in ("glm", "nlr")},
    **{f"stein_twostage_{k}_gauss": PairSpec(n=32, x_bound=1e3, y_bound=_STEIN_Y[k]) for k in ("glm", "nlr")},
    **{f"stein_twostage_{k}_l1": PairSpec(n=32, x_norm=1, y_bound=_STEIN_Y[k]) for k in ("glm", "nlr")},
    "stein_central_diagnostic": PairSpec(n=32, x_bound=1e3),
}

WHITEBOX_HYPER: dict[str, dict[str, Any]] = {
    "iwr_dp": {"shuffle": False},
    "iwr_dp_erm": {"shuffle": False},
    "iwr_ldp": {"shuffle": False},
    "iwr_glm_ldp": {"shuffle": False},
    "ldp_clipped_sgd": {"shuffle": False},
    "dp_sgd_improper": {"shuffle": False},
    "dp_ftrl_identity": {"C_X": 1.0, "C_Y": 1.0, "shuffle": False, "engine": "reference"},
}


def pair_spec(info: MechanismInfo) -> PairSpec:
    declared = getattr(info.fit, "audit_pair", None)
    if isinstance(declared, PairSpec):
        return declared
    if isinstance(declared, Mapping):
        known = {f.name for f in fields(PairSpec)}
        return PairSpec(**{k: v for k, v in declared.items() if k in known})
    return AUDIT_PAIRS.get(info.name, PairSpec())


def whitebox_hyper(info: MechanismInfo, epsilon: float) -> dict[str, Any]:
    """Audit hyperparameters; a ``calibration`` only claimed for ε ≤ 1 (``paper``/``classical`` of the
    information-weighted family) is replaced by ``agm`` above 1 — the audit never runs a formula outside its range."""
    declared = getattr(info.fit, "audit_hyper", None)
    hyper = dict(declared) if isinstance(declared, Mapping) else dict(WHITEBOX_HYPER.get(info.name, {}))
    allowed = info.hyperparameters()
    if epsilon > 1 and allowed.get("calibration") in ("paper", "classical") and _iw_family(info):
        hyper.setdefault("calibration", "agm")
    return {k: v for k, v in hyper.items() if k in allowed}


def _iw_family(info: MechanismInfo) -> bool:
    return ".info_weighted." in getattr(info.fit, "__module__", "")
