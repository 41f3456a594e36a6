"""The local randomisers of the LDP bandit oracles, registered for the white-box local audit (issue 15, item 3).

Each wrapper runs one oracle on one epoch made of the audit pair's rows (one user per row: φ_t = x_t, r_t = y_t)
and returns its estimate; the oracle declares every user's report (:func:`dpbench.mechanisms.released`,
``users=True``), so ``dpbench audit`` tests one user's reports on two neighbouring records. They are not regression
mechanisms: :func:`dpbench.registry.register_randomizer` keeps them out of the runners' mechanism lists.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dpbench.bandits.oracles import dimfree_ldp_fit, iwr_glm_ldp_fit, iwr_ldp_fit, ssp_ols_fit
from dpbench.bandits.simulator import DataLedger, EpochData
from dpbench.contract import AuditSetup, Bounds, Choice
from dpbench.mechanisms._base import FitResult
from dpbench.mechanisms.iwr.calibration import CALIBRATIONS
from dpbench.registry import register_randomizer

CALIBRATION = Choice(
    *CALIBRATIONS, default="paper", doc="Gaussian calibration of the users' reports (the oracles' default: paper)"
)
#: the exact (AGM) calibration, valid at every audited ε; records on the unit bound (‖φ‖ ≤ B = 1, |r| ≤ 1); the canary
#: first, so it reaches a release whatever the epoch split
PAIR = AuditSetup(hyper={"calibration": "agm"}, whitebox={"pair": {"n": 32, "d": 2, "canary_first": True}})


def _epoch(X: np.ndarray, y: np.ndarray) -> EpochData:
    X, y = np.asarray(X, dtype=float), np.asarray(y, dtype=float)
    return EpochData(X, y, 0, DataLedger(y.size))


def _estimate(result: Any) -> tuple[np.ndarray, dict]:
    """(θ̂, info) of an oracle's result (a LinearEstimate, or the pair itself)."""
    return (result.theta, result.info) if hasattr(result, "theta") else result


#: name → (summary, spec, oracle(epoch, ε, δ, rng, calibration)) — one user per row, failure probability δ
ORACLES: dict[str, tuple[str, str, Callable[..., Any]]] = {
    "bandit_iwr_ldp_oracle": (
        "LDP bandit oracle: information-weighted regression (spec 000 Alg 2 + 3 inside spec 001's elimination)",
        "001 §3.10 / 000 Alg 3",
        lambda data, eps, delta, rng, cal: iwr_ldp_fit(data, eps, delta, rng, fail_prob=delta, calibration=cal),
    ),
    "bandit_iwr_glm_ldp_oracle": (
        "LDP GLM bandit oracle: Alg 2 + per-user LDP-SGD with the logistic link (spec 000 Alg 12, Remark H.6)",
        "000 Alg 11/12",
        lambda data, eps, delta, rng, cal: iwr_glm_ldp_fit(
            data, eps, delta, rng, link="logistic", fail_prob=delta, calibration=cal
        ),
    ),
    "bandit_ssp_ols_ldp_oracle": (
        "LDP bandit oracle: SSP-OLS with per-user φφᵀ and φy reports (spec 001 §7.2 baseline)",
        "001 §7.2",
        lambda data, eps, delta, rng, cal: ssp_ols_fit(
            data, eps, delta, rng, fail_prob=delta, local=True, calibration=cal
        ),
    ),
    "bandit_dimfree_ldp_oracle": (
        "LDP bandit oracle: dimension-free clipped SGD with per-user gradient reports (spec 001 Alg 6)",
        "001 Alg 6",
        lambda data, eps, delta, rng, cal: dimfree_ldp_fit(data, eps, delta, rng, fail_prob=delta, calibration=cal),
    ),
}


def register_oracle(name: str, summary: str, spec: str, oracle: Callable[..., Any]) -> Callable[..., FitResult]:
    """Register ``oracle`` run on one epoch of the audit pair's rows as the local randomiser ``name``."""

    @register_randomizer(
        name, summary=summary, spec=spec, hyper={"calibration": CALIBRATION}, bounds=Bounds(x=1.0, y=1.0), audit=PAIR
    )
    def randomizer(X, y, epsilon, delta, rng, **hyper: Any) -> FitResult:
        theta, info = _estimate(oracle(_epoch(X, y), epsilon, delta, rng, hyper["calibration"]))
        return FitResult(theta, dict(info))

    return randomizer


RANDOMIZERS = {name: register_oracle(name, *entry) for name, entry in ORACLES.items()}
