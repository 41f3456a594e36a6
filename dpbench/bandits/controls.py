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
from dpbench.bandits.oracles import sigma_scale
from dpbench.bandits.simulator import EpochData, register_algorithm
from dpbench.bandits.squarecb import SquareCBPolicy, _checked, rate_jdp, rate_ldp

SCHEDULES = {"jdp": rate_jdp, "ldp": rate_ldp}


@register_algorithm(
    "squarecb_perfect_oracle",
    summary="control: SquareCB with θ̂ = θ* and the γ schedule of squarecb_jdp/ldp at schedule_epsilon",
    privacy_model="none",
    spec="001 Alg 13 (issue 17 control)",
    style={"color": "black", "marker": "", "linestyle": "--"},
)
def squarecb_perfect_oracle(
    env: BanditEnv,
    T: int,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    *,
    schedule: str = "jdp",
    schedule_epsilon: float = 1.0,
    calibration: str = "paper",
    fail_prob: float | None = None,
) -> SquareCBPolicy:
    """SquareCB with the perfect oracle; ε of the run is ignored (non-private), ``schedule_epsilon`` sets σ in γ^(j)."""
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {sorted(SCHEDULES)}, got {schedule!r}")
    schedule_epsilon = float(schedule_epsilon)
    if not schedule_epsilon > 0:
        raise ValueError(f"schedule_epsilon must be > 0 (.inf = the non-private schedule), got {schedule_epsilon!r}")
    fail = _checked(env, T, schedule_epsilon, fail_prob, calibration)

    def oracle(data: EpochData, _rng: np.random.Generator, _fail_epoch: float) -> tuple[np.ndarray, dict[str, Any]]:
        return env.theta.copy(), {"K": 0}

    return SquareCBPolicy(env, T, oracle, SCHEDULES[schedule], sigma_scale(schedule_epsilon, delta, calibration), fail)
