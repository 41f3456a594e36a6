"""SquareCB with a private dimension-free regression oracle (spec 001 Alg 13 / §3.12; spec 000 Alg 17 / §3.11).

Epoch j (N^(j) = 2^j rounds) uses f̂^(j)(x, a) = <θ̂^(j−1), φ(x, a)> (f̂^(0) ≡ 0) and the inverse-gap weighting
``p_t(a) = 1/(|A| + γ^(j)(f̂(x_t, â_t) − f̂(x_t, a)))`` for a ≠ â_t = argmax_a f̂(x_t, a), p_t(â_t) = the rest.
γ^(0) = 1, γ^(j) = √|A| / ℰ_{δ'}(N^(j−1)), δ' = δ/(2J²) (spec 000 #26: no factor 4). The oracle of epoch j sees only
epoch j's data: spec 001 Alg 5 (JDP, batched projected GD, one output release) or Alg 6 (LDP clipped SGD).
Epochs too small for the oracle (N < 8) are not regressed; f̂ then keeps its previous value (post-processing).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from dpbench.bandits.envs import BanditEnv
from dpbench.bandits.oracles import (
    bandit_failure_probability,
    dimfree_jdp_fit,
    dimfree_ldp_fit,
    oracle_hyper,
    sigma_scale,
)
from dpbench.bandits.simulator import EpochData, doubling_epochs, register_algorithm


def rate_jdp(N: int, sigma: float, fail: float) -> float:
    """ℰ_δ(N) = (log N log(1/δ)/N)^{1/4} + (σ log(1/δ)/N)^{1/3} (spec 000 §3.11, Alg 17 with Alg 16)."""
    log_n, log_d = math.log(max(N, 3)), math.log(1.0 / fail)
    return (log_n * log_d / N) ** 0.25 + (sigma * log_d / N) ** (1.0 / 3.0)


def rate_ldp(N: int, sigma: float, fail: float) -> float:
    """ℰ_δ(N) = (σ² log(N/δ)/N)^{1/6} (Alg 17 with Alg 8), never below the non-private rate [CHOICE for σ → 0]."""
    log_n, log_d = math.log(max(N, 3)), math.log(1.0 / fail)
    return max((sigma**2 * math.log(N / fail) / N) ** (1.0 / 6.0), (log_n * log_d / N) ** 0.25)


def igw_probabilities(f: np.ndarray, gamma: float) -> np.ndarray:
    """Inverse-gap weighting (spec 001 §3.12): rows of ``f`` (n, |A|) → action probabilities (n, |A|)."""
    n, n_arms = f.shape
    best = np.argmax(f, axis=1)
    gap = f[np.arange(n), best][:, None] - f
    p = 1.0 / (n_arms + gamma * gap)
    p[np.arange(n), best] = 0.0
    p[np.arange(n), best] = 1.0 - p.sum(axis=1)
    return p


class SquareCBPolicy:
    def __init__(self, env: BanditEnv, T: int, oracle, rate, sigma: float, fail: float):
        self.env = env
        self.oracle = oracle
        self.rate = rate
        self.sigma = sigma
        self.bounds = doubling_epochs(T)
        J = len(self.bounds) - 1
        self.fail_epoch = fail / (2.0 * J * J)
        self.theta = np.zeros(env.d)
        self.gamma = 1.0
        self.info: dict[str, Any] = {"epochs_fitted": 0, "gamma_last": 1.0}

    def epochs(self, T: int) -> list[int]:
        return self.bounds

    def act(self, Phi: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        p = igw_probabilities(Phi @ self.theta, self.gamma)
        cum = np.cumsum(p, axis=1)
        u = rng.random(Phi.shape[0]) * cum[:, -1]
        return np.minimum(np.sum(cum <= u[:, None], axis=1), Phi.shape[1] - 1)

    def update(self, data: EpochData, rng: np.random.Generator) -> None:
        self.gamma = math.sqrt(self.env.n_arms) / self.rate(data.n, self.sigma, self.fail_epoch)
        self.info["gamma_last"] = self.gamma
        if data.n < 8:
            return
        self.theta, oracle_info = self.oracle(data, rng, self.fail_epoch)
        self.info["epochs_fitted"] += 1
        self.info["K_last"] = oracle_info["K"]


def squarecb(
    env: BanditEnv, T: int, epsilon: float, delta: float, hyper: Mapping[str, Any], fit: Callable[..., Any], rate
) -> SquareCBPolicy:
    """SquareCB with the dimension-free oracle ``fit`` (:mod:`dpbench.bandits.oracles`) at (ε, δ), its batch rule's
    hyperparameters (R, c_K, calibration, and simulation for the local one) from ``hyper``; γ by ``rate``."""
    fail = bandit_failure_probability(env, T, epsilon, hyper["fail_prob"], hyper["calibration"], "SquareCB's oracles")
    kwargs = {name: value for name, value in hyper.items() if name != "fail_prob"}

    def oracle(data: EpochData, r: np.random.Generator, fail_epoch: float):
        return fit(data, epsilon, delta, r, fail_prob=fail_epoch, **kwargs)

    return SquareCBPolicy(env, T, oracle, rate, sigma_scale(epsilon, delta, hyper["calibration"]), fail)


@register_algorithm(
    "squarecb_jdp",
    summary="SquareCB + dimension-free JDP batched projected GD (001 Alg 5)",
    privacy_model="joint",
    spec="001 Alg 13 + Alg 5; 000 Alg 17",
    style={"color": "tab:purple", "marker": "D"},
    hyper=oracle_hyper("R", "c_K", "calibration", "fail_prob"),
)
def squarecb_jdp(
    env: BanditEnv, T: int, epsilon: float, delta: float, rng: np.random.Generator, **hyper: Any
) -> SquareCBPolicy:
    return squarecb(env, T, epsilon, delta, hyper, dimfree_jdp_fit, rate_jdp)


@register_algorithm(
    "squarecb_ldp",
    summary="SquareCB + dimension-free LDP clipped SGD (001 Alg 6 = 000 Alg 8)",
    privacy_model="local",
    spec="001 Alg 13 + Alg 6; 000 Alg 17",
    style={"color": "tab:brown", "marker": "P"},
    hyper=oracle_hyper("R", "c_K", "calibration", "fail_prob", "simulation"),
)
def squarecb_ldp(
    env: BanditEnv, T: int, epsilon: float, delta: float, rng: np.random.Generator, **hyper: Any
) -> SquareCBPolicy:
    """``simulation``: the users' gradient noise by its exact aggregate law (default) or drawn per user."""
    return squarecb(env, T, epsilon, delta, hyper, dimfree_ldp_fit, rate_ldp)
