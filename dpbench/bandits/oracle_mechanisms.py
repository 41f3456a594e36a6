"""The dimension-free bandit oracles as regression mechanisms, run once on the whole data set (the regression half of
spec 001 §7.3 F8: ‖θ̂ − θ*‖²_Σ vs d at fixed n): ``dimfree_jdp_gd``, ``dimfree_jdp_gd_proper``, ``dimfree_ldp_sgd``.
Failure probability δ_f = 1/n unless given. The oracles themselves are :mod:`dpbench.bandits.oracles`."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from dpbench.bandits.oracles import dimfree_jdp_fit, dimfree_ldp_fit, failure_probability
from dpbench.bandits.simulator import DataLedger, EpochData
from dpbench.contract import AuditSetup, Bounds, Hyper
from dpbench.mechanisms._base import FitResult, check_inputs
from dpbench.registry import register_mechanism


def _epoch(X: np.ndarray, y: np.ndarray, epsilon: float, delta: float) -> EpochData:
    X, y = check_inputs(X, y, epsilon, delta, x_bound=1.0, y_bound=1.0)
    return EpochData(X, y, 0, DataLedger(y.size))


#: the hyperparameters the three F8 mechanisms share (spec 001 §3.10–3.11)
DIMFREE_HYPER = {
    "R": Hyper(
        float, default=2.0, gt=0, doc="projection radius of the GD iterates / clipping level of the predictions"
    ),
    "c_K": Hyper(float, default=1.0, gt=0, doc="constant of the number of batches K"),
    "calibration": Hyper(
        str, default="paper", choices=("paper", "classical", "agm"), doc="noise family (paper: ε ≤ 1 only)"
    ),
    "fail_prob": Hyper(float, default=None, gt=0, lt=1, none="1/n", doc="failure probability of the K rule"),
    "nonprivate": Hyper(bool, default=False, doc="σ = 0 through the same code path (reference)"),
}
DIMFREE_BOUNDS = Bounds(x=1.0, y=1.0)
#: the audit runs ε > 1 too: the AGM calibration covers every ε
DIMFREE_AUDIT = AuditSetup(hyper={"calibration": "agm"})


def _epsilons(h) -> tuple[float, float]:
    """The paper's σ_{α,β} and the classical formula are claimed for ε ≤ 1 only; the AGM for every ε."""
    return (0.0, 1.0) if h["calibration"] in ("paper", "classical") else (0.0, math.inf)


def _model(kind: str):
    return lambda h: "none" if h.get("nonprivate") else kind


def _neighbour(h) -> str:
    return "none" if h.get("nonprivate") else "replace_one"


def _ball(theta: np.ndarray, radius: float) -> np.ndarray:
    norm = float(np.linalg.norm(theta))
    return theta if norm <= radius else theta * (radius / norm)


def _fit_jdp(X, y, epsilon, delta, rng, *, R, c_K, calibration, fail_prob, nonprivate, proper) -> FitResult:
    data = _epoch(X, y, epsilon, delta)
    eps = math.inf if nonprivate else epsilon
    theta, info = dimfree_jdp_fit(
        data, eps, delta, rng, fail_prob=failure_probability(fail_prob, data.n), R=R, c_K=c_K, calibration=calibration
    )
    return FitResult(_ball(theta, 1.0) if proper else theta, {**info, "norm_released": float(np.linalg.norm(theta))})


def _fit_ldp(X, y, epsilon, delta, rng, *, R, c_K, calibration, fail_prob, nonprivate) -> FitResult:
    data = _epoch(X, y, epsilon, delta)
    theta, info = dimfree_ldp_fit(
        data,
        math.inf if nonprivate else epsilon,
        delta,
        rng,
        fail_prob=failure_probability(fail_prob, data.n),
        R=R,
        c_K=c_K,
        calibration=calibration,
    )
    return FitResult(theta, info)


def register_dimfree(
    name: str, model: str, fit: Callable[..., FitResult], *, summary: str, doc: str, spec: str, style: dict[str, str]
) -> Callable[..., FitResult]:
    """Register ``fit`` (one of the F8 oracles on the whole data set) as mechanism ``name`` with the shared
    declarations (:data:`DIMFREE_HYPER`, bounds, audit, ε range) in the privacy model ``model``."""

    def fit_mechanism(
        X: np.ndarray, y: np.ndarray, epsilon: float, delta: float, rng: np.random.Generator, **hyper: Any
    ) -> FitResult:
        return fit(X, y, epsilon, delta, rng, **hyper)

    fit_mechanism.__name__ = fit_mechanism.__qualname__ = f"fit_{name}"
    fit_mechanism.__doc__ = doc
    return register_mechanism(
        name,
        summary=summary,
        privacy_model=_model(model),
        neighbour=_neighbour,
        hyper=DIMFREE_HYPER,
        bounds=DIMFREE_BOUNDS,
        epsilon_range=_epsilons,
        audit=DIMFREE_AUDIT,
        spec=spec,
        style=style,
    )(fit_mechanism)


fit_dimfree_jdp_gd = register_dimfree(
    "dimfree_jdp_gd",
    "central",
    functools.partial(_fit_jdp, proper=False),
    spec="001 §3.10",
    summary="001 Alg 5: batched projected GD + one Gaussian release (improper)",
    doc="Spec 001 Alg 5 on the whole data set (:func:`dpbench.bandits.oracles.dimfree_jdp_fit`).",
    style={"color": "tab:purple", "marker": "D", "linestyle": "-"},
)
fit_dimfree_jdp_gd_proper = register_dimfree(
    "dimfree_jdp_gd_proper",
    "central",
    functools.partial(_fit_jdp, proper=True),
    spec="001 §7.2",
    summary="001 Alg 5, then θ̃ projected on B^d(1) (proper baseline 001 §7.2)",
    doc="Alg 5 followed by the projection of the released θ̃ onto the unit ball (post-processing).",
    style={"color": "tab:gray", "marker": "s", "linestyle": "--"},
)
fit_dimfree_ldp_sgd = register_dimfree(
    "dimfree_ldp_sgd",
    "local",
    _fit_ldp,
    spec="001 §3.11",
    summary="001 Alg 6 = 000 Alg 8: LDP clipped batched SGD (dimension-free)",
    doc="Spec 001 Alg 6 on the whole data set (:func:`dpbench.bandits.oracles.dimfree_ldp_fit`; per-user noises "
    "of a batch summed in one exact draw).",
    style={"color": "tab:brown", "marker": "P", "linestyle": "-"},
)
