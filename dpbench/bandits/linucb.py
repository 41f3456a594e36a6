"""LinUCB / OFUL (non-private reference line, spec 001 §7.2), with rarely updated statistics.

UCB_t(a) = <φ, θ̂> + β_t‖φ‖_{V^{-1}}, V = λI + Σ φφᵀ, θ̂ = V^{-1}Σφr, β_t = √λ + √(2 log(1/δ) + d log(1 + t/(λd)))
(Abbasi-Yadkori et al. 2011, rewards 1-sub-Gaussian, ‖θ*‖ ≤ 1). For speed, (V, θ̂) are refreshed at the rounds
t_{k+1} = max(t_k + 1, ⌈(1 + 1/16)t_k⌉) (≈ 11 updates per doubling of t) instead of every round — a batched OFUL,
which only loosens the regret by a constant. Uses all past data (not private).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpbench.bandits.envs import BanditEnv
from dpbench.bandits.simulator import EpochData, register_algorithm
from dpbench.contract import Hyper
from dpbench.mechanisms.iwr.linalg import inv_msqrt


class LinUCBPolicy:
    def __init__(self, env: BanditEnv, lam: float, fail: float, growth: float):
        self.env = env
        self.lam = lam
        self.fail = fail
        self.growth = growth
        self.V = lam * np.eye(env.d)
        self.b = np.zeros(env.d)
        self.t = 0
        self._refresh()
        self.info: dict[str, Any] = {"updates": 0}

    def _refresh(self) -> None:
        self.theta = np.linalg.solve(self.V, self.b)
        self.root_inv = inv_msqrt(self.V)
        d = self.env.d
        self.beta = math.sqrt(self.lam) + math.sqrt(
            2 * math.log(1 / self.fail) + d * math.log(1 + max(self.t, 1) / (self.lam * d))
        )

    def epochs(self, T: int) -> list[int]:
        bounds = [0]
        while bounds[-1] < T:
            t = bounds[-1]
            bounds.append(min(T, max(t + 1, math.ceil((1 + self.growth) * t))))
        return bounds

    def act(self, Phi: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        ucb = Phi @ self.theta + self.beta * np.linalg.norm(Phi @ self.root_inv, axis=-1)
        return np.argmax(ucb, axis=1)

    def update(self, data: EpochData, rng: np.random.Generator) -> None:
        Phi, y = data.take(0, data.n)
        self.V += Phi.T @ Phi
        self.b += Phi.T @ y
        self.t += data.n
        self._refresh()
        self.info["updates"] += 1


@register_algorithm(
    "linucb",
    summary="LinUCB/OFUL (non-private reference, batched updates)",
    privacy_model="none",
    spec="001 §7.2",
    style={"color": "black", "marker": "x", "linestyle": "--"},
    hyper={
        "lam": Hyper(float, default=1.0, gt=0, doc="ridge λ of V = λI + Σφφᵀ"),
        "fail_prob": Hyper(float, default=None, gt=0, lt=1, none="1/T", doc="failure probability of the bonus β"),
        "growth": Hyper(float, default=1.0 / 16, gt=0, doc="epoch growth: the next update after (1 + growth)·t rounds"),
    },
)
def linucb(
    env: BanditEnv, T: int, epsilon: float, delta: float, rng: np.random.Generator, **hyper: Any
) -> LinUCBPolicy:
    if env.link != "linear":
        raise ValueError(f"linucb needs link='linear', environment has {env.link!r}")
    fail = 1.0 / T if hyper["fail_prob"] is None else float(hyper["fail_prob"])
    return LinUCBPolicy(env, hyper["lam"], fail, hyper["growth"])
