"""Controls for the bandit claims of specs 001/000 (issue 17): a perfect-oracle SquareCB. (The regression half of
F8 — the G-PowerLaw data set and the dimension-free oracles as regression mechanisms — lives beside what it wraps:
``bandit_powerlaw`` in :mod:`dpbench.bandits.envs`, the three mechanisms in :mod:`dpbench.bandits.oracles`.)

* ``squarecb_perfect_oracle`` (bandit algorithm, non-private control): SquareCB (001 Alg 13) whose epoch regression
  returns θ̂ = θ* exactly, with the *same* exploration schedule γ^(j) = √|A|/ℰ_{δ'}(N^(j−1)) as ``squarecb_jdp``
  (``schedule="jdp"``) or ``squarecb_ldp`` (``"ldp"``) at ε = ``schedule_epsilon``. Its regret is what the
  schedule alone costs: Σ_t Σ_{a ≠ a*} p_t(a)·gap_t(a) ≤ (|A| − 1)/γ per round — dimension-free by construction, so
  a private SquareCB curve that sits on it says nothing about its oracle's dimension dependence.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpbench.bandits.envs import BanditEnv
from dpbench.bandits.oracles import bandit_failure_probability, oracle_hyper, sigma_scale
from dpbench.bandits.simulator import EpochData, register_algorithm
from dpbench.bandits.squarecb import SquareCBPolicy, rate_jdp, rate_ldp
from dpbench.contract import Choice, Hyper

SCHEDULES = {"jdp": rate_jdp, "ldp": rate_ldp}


@register_algorithm(
    "squarecb_perfect_oracle",
    summary="control: SquareCB with θ̂ = θ* and the γ schedule of squarecb_jdp/ldp at schedule_epsilon",
    privacy_model="none",
    spec="001 Alg 13 (issue 17 control)",
    style={"color": "black", "marker": "", "linestyle": "--"},
    hyper={
        "schedule": Choice(*SCHEDULES, default="jdp", doc="the γ schedule of squarecb_jdp or squarecb_ldp"),
        "schedule_epsilon": Hyper(
            float, default=1.0, gt=0, inf=True, doc="ε of the schedule's σ (.inf = the non-private schedule)"
        ),
        **oracle_hyper("calibration", "fail_prob"),
    },
)
def squarecb_perfect_oracle(
    env: BanditEnv, T: int, epsilon: float, delta: float, rng: np.random.Generator, **hyper: Any
) -> SquareCBPolicy:
    """SquareCB with the perfect oracle; ε of the run is ignored (non-private), ``schedule_epsilon`` sets σ in γ^(j)."""
    schedule_epsilon = float(hyper["schedule_epsilon"])
    calibration = hyper["calibration"]
    fail = bandit_failure_probability(env, T, schedule_epsilon, hyper["fail_prob"], calibration, "SquareCB's oracles")

    def oracle(data: EpochData, _rng: np.random.Generator, _fail_epoch: float) -> tuple[np.ndarray, dict[str, Any]]:
        return env.theta.copy(), {"K": 0}

    rate = SCHEDULES[hyper["schedule"]]
    return SquareCBPolicy(env, T, oracle, rate, sigma_scale(schedule_epsilon, delta, calibration), fail)
