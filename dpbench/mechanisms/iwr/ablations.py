"""Ablations of IWR-DP (spec 000 Alg 4 + 5) that separate its three ingredients (issue 17): the learned weight
matrix W, the data split D₀ → W / D₁ → θ̂, and a public ball constraint on the final solve.

Registered: ``iwr_dp_ablation`` with

* ``weights = "learned"`` (Alg 4 on D₀, as ``iwr_dp``) or ``"identity"`` (W = I: no spectral iteration, no release
  from D₀). Stage 2 is always Alg 5's: w(φ) = Wφ/(1 + γ‖Wφ‖), ψ̃, Ψ̃ with the sensitivities 2/(γN₁), 2B/(γN₁) and
  θ̂ = (Ψ̃ + λI)⁻¹ψ̃, with (K, λ, γ) from IWR-DP's rule (:func:`iwr_dp_hyper`, same n, d, ε, δ);
* ``stage2_rows = "half"`` (D₁ only, as Alg 5) or ``"all"`` (every row; allowed only with W = I, which reads
  nothing from D₀, so each record still enters one release);
* ``radius`` = a public ball radius R: θ̂ = argmin_{‖θ‖ ≤ R} ‖(Ψ̃ + λI)θ − ψ̃‖ (post-processing); None = no ball.

``weights="learned", stage2_rows="half", radius=None`` is IWR-DP exactly (same rng draws; tested). The
constraint-only ablation (no weights, ball) is ``ssp_ball`` with its ``radius`` hyperparameter.
Privacy as IWR-DP: the W = I variants make one release (ψ̃, Ψ̃) of the stage-2 rows at (ε, δ).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpbench.contract import Bounds, Choice, Hyper
from dpbench.mechanisms._base import FitResult
from dpbench.mechanisms.iwr._common import (
    calibrated_epsilons,
    central_neighbour,
    declared,
    halves,
    prepare,
    shuffled,
    stage_noise,
)
from dpbench.mechanisms.iwr._memo import data_memo
from dpbench.mechanisms.iwr.central import (
    AUDIT_STAGED,
    iwr_dp_hyper,
    iwr_dp_stage2,
    rule_inputs,
    shared_spectral_dp,
    stage2_moments,
)
from dpbench.registry import register_mechanism

WEIGHTS = ("learned", "identity")
STAGE2_ROWS = ("half", "all")


def check_ablation(weights: str, stage2_rows: str, radius: float | None) -> None:
    """Reject unknown choices and the one invalid combination (learned W with stage 2 on all rows reuses D₀)."""
    if weights not in WEIGHTS:
        raise ValueError(f"weights must be one of {WEIGHTS}, got {weights!r}")
    if stage2_rows not in STAGE2_ROWS:
        raise ValueError(f"stage2_rows must be one of {STAGE2_ROWS}, got {stage2_rows!r}")
    if weights == "learned" and stage2_rows == "all":
        raise ValueError("stage2_rows='all' needs weights='identity': a learned W already used the rows of D₀")
    if radius is not None and not (radius > 0 and math.isfinite(radius)):
        raise ValueError(f"radius must be a finite number > 0 or None, got {radius!r}")


def identity_moments(X: np.ndarray, y: np.ndarray, rows: slice, gamma: float) -> tuple[np.ndarray, np.ndarray]:
    """Stage-2 moments with W = I on the rows ``rows`` of the unshuffled data: data only (no noise, no D₀), so
    memoised per data draw and γ (``_memo.data_memo``; one O(N₁d²) pass shared by every trial of an ε)."""
    d = X.shape[1]
    return data_memo(
        X,
        y,
        ("iwr_identity_moments", rows.start, rows.stop, float(gamma)),
        lambda: stage2_moments(X[rows], y[rows], np.eye(d), gamma),
    )


@register_mechanism(
    "iwr_dp_ablation",
    summary="IWR-DP ablation: W learned (Alg 4) or W = I, stage 2 on D₁ or all rows, optional public ball (issue 17)",
    privacy_model="central",
    neighbour=central_neighbour,
    spec="000 §3.4–3.5 (ablation)",
    style={"color": "tab:pink", "marker": "x", "linestyle": "--"},
    hyper=declared(
        "B",
        "calibration",
        "neighbour",
        "fail_prob",
        "preset",
        "c_gamma",
        "lam_rule",
        "shuffle",
        weights=Choice(*WEIGHTS, default="learned", doc="W from Alg 4 on D₀ (learned) or W = I (no stage 1)"),
        stage2_rows=Choice(*STAGE2_ROWS, default="half", doc="stage 2 on D₁ (half) or on every row (all; needs W = I)"),
        radius=Hyper(float, default=None, gt=0, none="no ball", doc="public ball radius R of the stage-2 solve"),
    ),
    check=lambda h: check_ablation(h["weights"], h["stage2_rows"], h["radius"]),
    epsilon_range=calibrated_epsilons,
    bounds=Bounds(x="B", y=1.0),
    audit=AUDIT_STAGED,
)
def fit_iwr_dp_ablation(
    X: np.ndarray, y: np.ndarray, epsilon: float, delta: float, rng: np.random.Generator, **hyper: Any
) -> FitResult:
    """IWR-DP with the ingredients switched by ``weights``, ``stage2_rows`` and ``radius`` (module docstring)."""
    weights, stage2_rows, radius, shuffle = hyper["weights"], hyper["stage2_rows"], hyper["radius"], hyper["shuffle"]
    B, calibration, neighbour = hyper["B"], hyper["calibration"], hyper["neighbour"]
    check_ablation(weights, stage2_rows, radius)
    X, y = prepare(X, y, epsilon, delta, B=B, clip=False, calibration=calibration, neighbour=neighbour)
    n, d = X.shape
    rule = iwr_dp_hyper(n, d, epsilon, delta, **rule_inputs(hyper), lam_rule=hyper["lam_rule"])
    K, lam, gamma = int(rule["K"]), float(rule["lam"]), float(rule["gamma"])
    X, y = shuffled(X, y, rng, shuffle)
    s0, s1 = halves(n) if stage2_rows == "half" else (slice(0, 0), slice(0, n))
    info: dict = {
        "K": K,
        "lam": lam,
        "gamma": gamma,
        "weights": weights,
        "stage2_rows": stage2_rows,
        "radius": radius,
        "calibration": calibration,
        "neighbour": neighbour,
        "epsilon_effective": epsilon,
    }
    noise = stage_noise(epsilon, delta, hyper)
    if weights == "learned":
        stage1, info["std_H"] = shared_spectral_dp(X, y, s0, K=K, gamma=gamma, lam=lam, noise=noise, rng=rng)
        W = stage1.X
        info["n_floor"] = stage1.n_floor
        moments = None
    else:
        W = np.eye(d)
        moments = None if shuffle else identity_moments(X, y, s1, gamma)
    theta, info2 = iwr_dp_stage2(
        X[s1], y[s1], W, gamma=gamma, lam=lam, noise=noise, rng=rng, radius=radius, moments=moments
    )
    return FitResult(theta, {**info, **info2, "W": W})
