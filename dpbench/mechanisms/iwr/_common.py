"""Shared plumbing of the information-weighted mechanisms (spec 000 §3.0, §4.1, §6): input checks and clipping,
data-independent shuffling and splitting, the presets (theory-form vs calibrated) and the generic noise scale.

Not a registry module (leading underscore): the mechanisms live in ``iw_central.py``, ``iw_local.py``,
``iw_local_1d.py``; the algorithm functions there (``spectral_dp``, ``iwr_dp_stage2``, ``spectral_ldp``,
``iwr_ldp_stage2``, ...) are importable by the bandit algorithms.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpbench.contract import AuditSetup, Choice, Hyper, HyperError
from dpbench.mechanisms._base import check_inputs
from dpbench.mechanisms._simulation import SIMULATION
from dpbench.mechanisms.iwr.calibration import (
    CALIBRATIONS,
    check_calibration,
    check_neighbour,
    gaussian_std,
    neighbour_factor,
)
from dpbench.mechanisms.iwr.linalg import row_norms

#: audit setups shared by the central and local families: every ε is audited under the AGM calibration (it covers all
#: of them); ``AUDIT_STAGED``: the canary (last row, ``shuffle: false``) reaches the stage-2 releases and n = 72 gives
#: each of K = 4 epochs ≥ 8 rows (white-box audit, issue 15)
AUDIT = AuditSetup(hyper={"calibration": "agm"})
AUDIT_STAGED = AuditSetup(hyper={"calibration": "agm"}, whitebox={"pair": {"n": 72}, "hyper": {"shuffle": False}})

PRESETS = ("calibrated", "theory")
#: plot styles by role: a central mechanism and its local counterpart look alike in the figures
STYLES = {
    "iwr": {"color": "tab:red", "marker": "o", "linestyle": "-"},  # iwr_dp, iwr_ldp, ldp_simple_1d
    "iwr_stage2": {"color": "tab:orange", "marker": "s", "linestyle": "-"},  # iwr_dp_erm, iwr_glm_ldp
    "oracle": {"color": "tab:brown", "marker": "D", "linestyle": "--"},  # iwr_dp_oracle(_label), iwr_ldp_oracle
    "ssp": {"color": "tab:green", "marker": "^", "linestyle": "-"},  # ssp_ball, ldp_ssp, ldp_laplace_ssp_1d
    "sgd": {"color": "tab:purple", "marker": "v", "linestyle": "-"},  # dp_sgd_improper, ldp_clipped_sgd
}

# ---------------------------------------------------------------------------------------------------------------
# the contract pieces shared by the information-weighted mechanisms (declared in each @register_mechanism)

RULE = "the preset's rule (spec 000 §6)"
#: every hyperparameter the information-weighted mechanisms share, declared once
HYPER: dict[str, Hyper] = {
    "B": Hyper(float, default=1.0, gt=0, doc="declared bound ‖φ_i‖ ≤ B"),
    "clip": Hyper(
        bool, default=False, doc="clip φ to ‖φ‖ ≤ B and y to [−1, 1] (a per-record map) instead of rejecting rows"
    ),
    "calibration": Choice(
        *CALIBRATIONS, default="paper", doc="noise family: paper σ_{ε,δ} and classical (ε ≤ 1 only) or agm"
    ),
    "neighbour": Choice(
        "replace",
        "replace_one",
        "zero_out",
        default="replace",
        doc="central neighbours (zero-out halves sensitivities)",
    ),
    "fail_prob": Hyper(float, default=0.05, gt=0, lt=1, doc="failure probability δ_f of the hyperparameter rules"),
    "preset": Choice(
        *PRESETS, default="calibrated", doc="hyperparameter rules: calibrated (K = 4) or the theorems' forms"
    ),
    "c_gamma": Hyper(float, default=1.0, gt=0, doc="constant c_γ of the γ rule"),
    "c_lam": Hyper(float, default=1.0, gt=0, doc="constant c_λ of the λ rule"),
    "lam_rule": Choice("l2", "l1", default="l2", doc="λ = 1/√T (Thm 5.3) or √(d log(1/δ_f)/T) (Prop 5.4)"),
    "K": Hyper(int, default=None, ge=1, none=RULE, doc="epochs of the spectral iteration"),
    "lam": Hyper(float, default=None, gt=0, none=RULE, doc="regularisation λ"),
    "gamma": Hyper(float, default=None, gt=0, none=RULE, doc="weight scale γ (sensitivities ∝ 1/γ)"),
    "shuffle": Hyper(bool, default=True, doc="process the records in a uniformly random (data-independent) order"),
    "paper_literal_noise": Hyper(bool, default=False, doc="the printed noise scale (recorded as epsilon_effective)"),
    "per_user_noise": Hyper(bool, default=False, doc="alias of simulation: per_user (kept for old configs)"),
    "simulation": SIMULATION,
    "nonprivate": Hyper(
        bool, default=False, doc="all noise off: a non-private reference (recorded as privacy_model none)"
    ),
}


@dataclass(frozen=True)
class StageNoise:
    """What the noise scale of every release of a central or local IWR stage depends on: the budget (ε, δ), the data
    bound B (‖φ‖ ≤ B), the calibration family, the central neighbour notion (ignored by the local stages) and the
    switch that turns every noise off (the non-private reference). One value is handed to each stage function."""

    epsilon: float
    delta: float
    B: float = 1.0
    calibration: str = "paper"
    neighbour: str = "replace"
    nonprivate: bool = False

    def std(self, sensitivity: float, epsilon: float | None = None, delta: float | None = None) -> float:
        """gaussian_std(sensitivity, ε, δ) under this calibration (ε, δ: this budget unless given); 0 when the noise
        is off."""
        if self.nonprivate:
            return 0.0
        eps = self.epsilon if epsilon is None else epsilon
        return gaussian_std(sensitivity, eps, self.delta if delta is None else delta, self.calibration)


def stage_noise(epsilon: float, delta: float, hyper: Mapping[str, Any]) -> StageNoise:
    """The :class:`StageNoise` of a registered fit: (ε, δ) and the hyperparameters among B, calibration, neighbour and
    nonprivate that its table declares (the others at their defaults)."""
    fields = ("B", "calibration", "neighbour", "nonprivate")
    return StageNoise(epsilon, delta, **{key: hyper[key] for key in fields if key in hyper})


def declared(*names: str, **own: Hyper) -> dict[str, Hyper]:
    """The shared declarations ``names`` plus mechanism-specific ones (each with its default: the one place a
    hyperparameter is written)."""
    return {**{name: HYPER[name] for name in names}, **own}


def calibrated_epsilons(h: Mapping[str, Any]) -> tuple[float, float]:
    """ε covered by the calibration: the paper's σ_{ε,δ} and the classical formula are claimed for ε ≤ 1 only
    (spec 000 §1.3, :func:`~dpbench.mechanisms.iwr.calibration.check_calibration`); the AGM for every
    ε > 0."""
    return (0.0, 1.0) if h["calibration"] in ("paper", "classical") else (0.0, math.inf)


def central_model(h: Mapping[str, Any]) -> str:
    return "none" if h.get("nonprivate") else "central"


def central_neighbour(h: Mapping[str, Any]) -> str:
    """The neighbour notion the calibration uses (``neighbour`` hyperparameter; ``replace`` spelled replace_one)."""
    if h.get("nonprivate"):
        return "none"
    return "zero_out" if h.get("neighbour", "replace") == "zero_out" else "replace_one"


def local_model(h: Mapping[str, Any]) -> str:
    return "none" if h.get("nonprivate") else "local"


def local_neighbour(h: Mapping[str, Any]) -> str:
    return "none" if h.get("nonprivate") else "replace_one"


def gamma_zero_needs_noise_off(h: Mapping[str, Any]) -> None:
    """γ = 0 makes every sensitivity 2/(γN) unbounded: allowed only for the non-private reference."""
    if h.get("gamma") == 0 and not h.get("nonprivate"):
        raise HyperError("gamma", "γ = 0 makes the sensitivity 2/(γN) unbounded; allowed only with nonprivate: true")


def prepare(
    X: np.ndarray,
    y: np.ndarray,
    epsilon: float,
    delta: float,
    *,
    B: float,
    clip: bool,
    calibration: str,
    neighbour: str = "replace",
) -> tuple[np.ndarray, np.ndarray]:
    """Validate (ε, δ, calibration, neighbour) and the data bounds ‖φ‖ ≤ B, |y| ≤ 1 (spec 000 §3.0).

    ``clip=True`` maps φ ← φ·min(1, B/‖φ‖), y ← clip_1(y) instead of raising (a per-record map: privacy-neutral).
    """
    if not (B > 0 and math.isfinite(B)):
        raise ValueError(f"B must be a finite number > 0, got {B!r}")
    check_calibration(calibration, float(epsilon))
    check_neighbour(neighbour)
    if clip:
        X, y = check_inputs(X, y, epsilon, delta, x_bound=None, y_bound=None)
        norms = row_norms(X)
        X = X * np.minimum(1.0, B / np.maximum(norms, 1e-300))[:, None]
        y = np.clip(y, -1.0, 1.0)
        return X, y
    return check_inputs(X, y, epsilon, delta, x_bound=B, y_bound=1.0)


def check_preset(preset: str) -> str:
    if preset not in PRESETS:
        raise ValueError(f"preset must be one of {PRESETS}, got {preset!r}")
    return preset


def permutation(n: int, rng: np.random.Generator, shuffle: bool) -> np.ndarray:
    """Data-independent order of the records (spec 000 #13): a uniform permutation from ``rng`` or the identity."""
    return rng.permutation(n) if shuffle else np.arange(n)


def shuffled(X: np.ndarray, y: np.ndarray, rng: np.random.Generator, shuffle: bool) -> tuple[np.ndarray, np.ndarray]:
    """Rows in a uniformly random order from ``rng`` (no copy and no rng use when ``shuffle`` is False)."""
    if not shuffle:
        return X, y
    order = rng.permutation(X.shape[0])
    return X[order], y[order]


def halves(n: int) -> tuple[slice, slice]:
    """D₀ = first ⌊n/2⌋ records, D₁ = the rest (spec 000 §3.0)."""
    n0 = n // 2
    return slice(0, n0), slice(n0, n)


def epoch_slices(n0: int, K: int, d: int) -> list[slice]:
    """K disjoint epochs of N = ⌊n₀/K⌋ rows each (leftovers unused); raise if N < max(d, 8) (spec 000 #13)."""
    if K < 1:
        raise ValueError(f"K must be ≥ 1, got {K}")
    N = n0 // K
    if N < max(d, 8):
        raise ValueError(f"epoch size N = ⌊{n0}/{K}⌋ = {N} < max(d, 8) = {max(d, 8)}: need more data or smaller K")
    return [slice(k * N, (k + 1) * N) for k in range(K)]


def unit_sigma(epsilon: float, delta: float, calibration: str, factor: float = 1.0) -> float:
    """Noise std per unit of *half*-sensitivity: σ_{ε,δ} for the paper calibration (spec 000 §1.3), the analogous
    gaussian_std(2·factor, ε, δ) for the generic families. Used only inside hyperparameter rules (γ, λ, K, η)."""
    return gaussian_std(2.0 * factor, epsilon, delta, calibration)


def central_factor(neighbour: str) -> float:
    return neighbour_factor(neighbour, "central")


def loglog_K(T: int, floor: int) -> int:
    """K = max{⌈log log T⌉, floor} (natural logs; spec 000 #9)."""
    return max(int(math.ceil(math.log(max(math.log(max(T, 3)), 1.0 + 1e-12)))), floor)
