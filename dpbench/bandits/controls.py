"""Controls for the bandit claims of specs 001/000 (issue 17): a perfect-oracle SquareCB and the dimension-free
regression oracles as regression mechanisms (spec 001 §7.3 F8).

* ``squarecb_perfect_oracle`` (bandit algorithm, non-private control): SquareCB (001 Alg 13) whose epoch regression
  returns θ̂ = θ* exactly, with the *same* exploration schedule γ^(j) = √|A|/ℰ_{δ'}(N^(j−1)) as ``squarecb_jdp``
  (``schedule="jdp"``) or ``squarecb_ldp`` (``"ldp"``) at ε = ``schedule_epsilon``. Its regret is what the
  schedule alone costs: Σ_t Σ_{a ≠ a*} p_t(a)·gap_t(a) ≤ (|A| − 1)/γ per round — dimension-free by construction, so
  a private SquareCB curve that sits on it says nothing about its oracle's dimension dependence.
* ``bandit_powerlaw`` (regression dataset): G-PowerLaw(d) of spec 001 §7.1 as i.i.d. regression data:
  φ_i = z_i√λ_i (z Rademacher), λ_i = i^{−2}/H_d, ‖φ‖ = 1; θ*_i = s_i√λ_i; y ∈ {−1, +1} with mean <φ, θ*>; Σ = diag(λ).
* ``dimfree_jdp_gd`` (001 Alg 5, batched projected GD + one output release), ``dimfree_jdp_gd_proper`` (the same,
  then θ̃ projected onto B^d(1): the "proper" baseline of 001 §7.2, post-processing) and ``dimfree_ldp_sgd``
  (001 Alg 6 = 000 Alg 8): the bandit oracles of :mod:`dpbench.bandits.oracles` run once on the whole data set
  (the regression half of F8: ‖θ̂ − θ*‖²_Σ vs d at fixed n). Failure probability δ_f = 1/n unless given.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpbench.bandits.envs import BanditEnv, powerlaw
from dpbench.bandits.oracles import dimfree_jdp_fit, dimfree_ldp_fit, sigma_scale
from dpbench.bandits.simulator import DataLedger, EpochData, register_algorithm
from dpbench.bandits.squarecb import SquareCBPolicy, _checked, rate_jdp, rate_ldp
from dpbench.contract import AuditSetup, Bounds, Hyper
from dpbench.data._base import Dataset, Population
from dpbench.mechanisms._base import FitResult, check_inputs
from dpbench.registry import register_dataset, register_mechanism

SCHEDULES = {"jdp": rate_jdp, "ldp": rate_ldp}


@register_algorithm("squarecb_perfect_oracle",
                    summary="control: SquareCB with θ̂ = θ* and the γ schedule of squarecb_jdp/ldp at schedule_epsilon",
                    privacy_model="none", spec="001 Alg 13 (issue 17 control)",
                    style={"color": "black", "marker": "", "linestyle": "--"})
def squarecb_perfect_oracle(env: BanditEnv, T: int, epsilon: float, delta: float, rng: np.random.Generator, *,
                            schedule: str = "jdp", schedule_epsilon: float = 1.0, calibration: str = "paper",
                            fail_prob: float | None = None) -> SquareCBPolicy:
    """SquareCB with the perfect oracle; ε of the run is ignored (non-private), ``schedule_epsilon`` sets σ in γ^(j)."""
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {sorted(SCHEDULES)}, got {schedule!r}")
    schedule_epsilon = float(schedule_epsilon)
    if not schedule_epsilon > 0:
        raise ValueError(f"schedule_epsilon must be > 0 (.inf = the non-private schedule), got {schedule_epsilon!r}")
    fail = _checked(env, T, schedule_epsilon, fail_prob, calibration)

    def oracle(data: EpochData, _rng: np.random.Generator, _fail_epoch: float) -> tuple[np.ndarray, dict[str, Any]]:
        return env.theta.copy(), {"K": 0}

    return SquareCBPolicy(env, T, oracle, SCHEDULES[schedule], sigma_scale(schedule_epsilon, delta, calibration),
                          fail)


# ---------------------------------------------------------------------------------------------------------------
# F8: the dimension-free oracles as regression mechanisms on G-PowerLaw data


@register_dataset("bandit_powerlaw", summary="G-PowerLaw(d) regression data: φ_i = z_i√λ_i, λ_i ∝ i^(−2) (001 §7.1)",
                  kind="synthetic", spec="001 §7.1", shape=lambda n, d, **_: (n, d))
def load_powerlaw(rng: np.random.Generator, *, n: int = 16384, d: int = 100) -> Dataset:
    """n i.i.d. rows of the G-PowerLaw environment with one arm; Rademacher labels; exact Σ = diag(λ), θ*."""
    if n < 1 or d < 1:
        raise ValueError(f"bandit_powerlaw: need n ≥ 1 and d ≥ 1, got n={n}, d={d}")
    env = powerlaw(rng, d=d, n_arms=2)  # θ* and λ exactly as the bandit instance; contexts drawn for one arm below
    lam = np.asarray(env.meta["spectrum"])
    X = np.where(rng.random((n, d)) < 0.5, -1.0, 1.0) * np.sqrt(lam)
    y = env.reward(X @ env.theta, rng.random(n))
    population = Population(cov=np.diag(lam), theta=env.theta, noise_var=float(1.0 - lam @ lam),
                            extra={"B": 1.0})
    return Dataset("bandit_powerlaw", X, y, np.zeros((0, d)), np.zeros(0), population=population,
                   meta={"title": f"G-PowerLaw(d={d})", "recipe": "synthetic (spec 001 §7.1)"})


def _epoch(X: np.ndarray, y: np.ndarray, epsilon: float, delta: float) -> EpochData:
    X, y = check_inputs(X, y, epsilon, delta, x_bound=1.0, y_bound=1.0)
    return EpochData(X, y, 0, DataLedger(y.size))


def _fail(fail_prob: float | None, n: int) -> float:
    fail = 1.0 / n if fail_prob is None else float(fail_prob)
    if not 0 < fail < 1:
        raise ValueError(f"fail_prob must lie in (0, 1), got {fail_prob!r}")
    return fail


#: the hyperparameters the three F8 mechanisms share (spec 001 §3.10–3.11)
DIMFREE_HYPER = {
    "R": Hyper(float, gt=0, doc="projection radius of the GD iterates / clipping level of the predictions"),
    "c_K": Hyper(float, gt=0, doc="constant of the number of batches K"),
    "calibration": Hyper(str, choices=("paper", "classical", "agm"), doc="noise family (paper: ε ≤ 1 only)"),
    "fail_prob": Hyper(float, gt=0, lt=1, none="1/n", doc="failure probability of the K rule"),
    "nonprivate": Hyper(bool, doc="σ = 0 through the same code path (reference)"),
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
    theta, info = dimfree_jdp_fit(data, eps, delta, rng, fail_prob=_fail(fail_prob, data.n), R=R, c_K=c_K,
                                  calibration=calibration)
    return FitResult(_ball(theta, 1.0) if proper else theta, {**info, "norm_released": float(np.linalg.norm(theta))})


@register_mechanism("dimfree_jdp_gd", summary="001 Alg 5: batched projected GD + one Gaussian release (improper)",
                    privacy_model=_model("central"), neighbour=_neighbour, hyper=DIMFREE_HYPER, bounds=DIMFREE_BOUNDS,
                    epsilon_range=_epsilons, audit=DIMFREE_AUDIT,
                    spec="001 §3.10",
                    style={"color": "tab:purple", "marker": "D", "linestyle": "-"})
def fit_dimfree_jdp_gd(X: np.ndarray, y: np.ndarray, epsilon: float, delta: float, rng: np.random.Generator, *,
                       R: float = 2.0, c_K: float = 1.0, calibration: str = "paper", fail_prob: float | None = None,
                       nonprivate: bool = False) -> FitResult:
    """Spec 001 Alg 5 on the whole data set (:func:`dpbench.bandits.oracles.dimfree_jdp_fit`)."""
    return _fit_jdp(X, y, epsilon, delta, rng, R=R, c_K=c_K, calibration=calibration, fail_prob=fail_prob,
                    nonprivate=nonprivate, proper=False)


@register_mechanism("dimfree_jdp_gd_proper", summary="001 Alg 5, then θ̃ projected on B^d(1) (proper baseline 001 §7.2)",
                    privacy_model=_model("central"), neighbour=_neighbour, hyper=DIMFREE_HYPER, bounds=DIMFREE_BOUNDS,
                    epsilon_range=_epsilons, audit=DIMFREE_AUDIT,
                    spec="001 §7.2",
                    style={"color": "tab:gray", "marker": "s", "linestyle": "--"})
def fit_dimfree_jdp_gd_proper(X: np.ndarray, y: np.ndarray, epsilon: float, delta: float, rng: np.random.Generator,
                              *, R: float = 2.0, c_K: float = 1.0, calibration: str = "paper",
                              fail_prob: float | None = None, nonprivate: bool = False) -> FitResult:
    """Alg 5 followed by the projection of the released θ̃ onto the unit ball (post-processing)."""
    return _fit_jdp(X, y, epsilon, delta, rng, R=R, c_K=c_K, calibration=calibration, fail_prob=fail_prob,
                    nonprivate=nonprivate, proper=True)


@register_mechanism("dimfree_ldp_sgd", summary="001 Alg 6 = 000 Alg 8: LDP clipped batched SGD (dimension-free)",
                    privacy_model=_model("local"), neighbour=_neighbour, hyper=DIMFREE_HYPER, bounds=DIMFREE_BOUNDS,
                    epsilon_range=_epsilons, audit=DIMFREE_AUDIT,
                    spec="001 §3.11",
                    style={"color": "tab:brown", "marker": "P", "linestyle": "-"})
def fit_dimfree_ldp_sgd(X: np.ndarray, y: np.ndarray, epsilon: float, delta: float, rng: np.random.Generator, *,
                        R: float = 2.0, c_K: float = 1.0, calibration: str = "paper", fail_prob: float | None = None,
                        nonprivate: bool = False) -> FitResult:
    """Spec 001 Alg 6 on the whole data set (:func:`dpbench.bandits.oracles.dimfree_ldp_fit`; per-user noises of a
    batch summed in one exact draw)."""
    data = _epoch(X, y, epsilon, delta)
    theta, info = dimfree_ldp_fit(data, math.inf if nonprivate else epsilon, delta, rng,
                                  fail_prob=_fail(fail_prob, data.n), R=R, c_K=c_K, calibration=calibration)
    return FitResult(theta, info)
