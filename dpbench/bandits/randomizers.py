"""The local randomisers of the LDP bandit oracles, registered for the white-box local audit (issue 15, item 3).

Each wrapper runs one oracle on one epoch made of the audit pair's rows (one user per row: φ_t = x_t, r_t = y_t)
and returns its estimate; the oracle declares every user's report (:func:`dpbench.mechanisms.released`,
``users=True``), so ``dpbench audit`` tests one user's reports on two neighbouring records. They are not regression
mechanisms: :func:`dpbench.registry.register_randomizer` keeps them out of the runners' mechanism lists.
"""

from __future__ import annotations

import numpy as np

from dpbench.bandits.oracles import dimfree_ldp_fit, iwr_glm_ldp_fit, iwr_ldp_fit, ssp_ols_fit
from dpbench.bandits.simulator import DataLedger, EpochData
from dpbench.contract import AuditSetup, Bounds, Choice
from dpbench.mechanisms._base import FitResult
from dpbench.mechanisms.info_weighted.calibration import CALIBRATIONS
from dpbench.registry import register_randomizer

CALIBRATION = Choice(*CALIBRATIONS, doc="Gaussian calibration of the users' reports (the oracles' default: paper)")
#: the exact (AGM) calibration, valid at every audited ε; records on the unit bound (‖φ‖ ≤ B = 1, |r| ≤ 1); the canary
#: first, so it reaches a release whatever the epoch split
PAIR = AuditSetup(hyper={"calibration": "agm"}, whitebox={"pair": {"n": 32, "d": 2, "canary_first": True}})


def _epoch(X: np.ndarray, y: np.ndarray) -> EpochData:
    X, y = np.asarray(X, dtype=float), np.asarray(y, dtype=float)
    return EpochData(X, y, 0, DataLedger(y.size))


@register_randomizer(
    "bandit_iwr_ldp_oracle",
    summary="LDP bandit oracle: information-weighted regression (spec 000 Alg 2 + 3 inside spec 001's elimination)",
    spec="001 §3.10 / 000 Alg 3",
    hyper={"calibration": CALIBRATION},
    bounds=Bounds(x=1.0, y=1.0),
    audit=PAIR,
)
def iwr_ldp_randomizer(X, y, epsilon, delta, rng, *, calibration: str = "paper") -> FitResult:
    est = iwr_ldp_fit(_epoch(X, y), epsilon, delta, rng, fail_prob=delta, calibration=calibration)
    return FitResult(est.theta, dict(est.info))


@register_randomizer(
    "bandit_iwr_glm_ldp_oracle",
    summary="LDP GLM bandit oracle: Alg 2 + per-user LDP-SGD with the logistic link (spec 000 Alg 12, Remark H.6)",
    spec="000 Alg 11/12",
    hyper={"calibration": CALIBRATION},
    bounds=Bounds(x=1.0, y=1.0),
    audit=PAIR,
)
def iwr_glm_ldp_randomizer(X, y, epsilon, delta, rng, *, calibration: str = "paper") -> FitResult:
    est = iwr_glm_ldp_fit(_epoch(X, y), epsilon, delta, rng, link="logistic", fail_prob=delta, calibration=calibration)
    return FitResult(est.theta, dict(est.info))


@register_randomizer(
    "bandit_ssp_ols_ldp_oracle",
    summary="LDP bandit oracle: SSP-OLS with per-user φφᵀ and φy reports (spec 001 §7.2 baseline)",
    spec="001 §7.2",
    hyper={"calibration": CALIBRATION},
    bounds=Bounds(x=1.0, y=1.0),
    audit=PAIR,
)
def ssp_ols_ldp_randomizer(X, y, epsilon, delta, rng, *, calibration: str = "paper") -> FitResult:
    est = ssp_ols_fit(_epoch(X, y), epsilon, delta, rng, fail_prob=delta, local=True, calibration=calibration)
    return FitResult(est.theta, dict(est.info))


@register_randomizer(
    "bandit_dimfree_ldp_oracle",
    summary="LDP bandit oracle: dimension-free clipped SGD with per-user gradient reports (spec 001 Alg 6)",
    spec="001 Alg 6",
    hyper={"calibration": CALIBRATION},
    bounds=Bounds(x=1.0, y=1.0),
    audit=PAIR,
)
def dimfree_ldp_randomizer(X, y, epsilon, delta, rng, *, calibration: str = "paper") -> FitResult:
    theta, info = dimfree_ldp_fit(_epoch(X, y), epsilon, delta, rng, fail_prob=delta, calibration=calibration)
    return FitResult(theta, dict(info))
