"""Calibrated preset: choose the width multiplier c_b once, offline, by a coverage pilot (spec 001 §6).

For an oracle (regression with confidence) and an environment, pilot data of N rounds are collected with uniformly
random actions (a fixed policy, as in Def. 6 of spec 001), the oracle is fitted with c_b = 1, and on fresh
contexts we measure the coverage ``P_x(∀a: |f̂(x,a) − f*(x,a)| ≤ min(c·b̂₁(x,a), 2))`` for every c of the grid.
c_b = the smallest grid value whose mean coverage over pilot seeds is ≥ 0.95 for *every* epoch size N and every ε
(the same multiplier for every ε; privacy noise scales are never tuned). Pilot instances come from the root
``PILOT_ROOT``, disjoint from every evaluation seed (those are ``SeedSequence([config seed, …])`` with
config seed < 2^31 and a different structure).

Run: ``python -m dpbench.bandits.calibrate [--out results/bandit_calibration]`` (≈ 1–3 minutes).
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from dpbench.bandits.envs import get_env
from dpbench.bandits.oracles import (
    LinearEstimate,
    iwr_dp_fit,
    iwr_glm_dp_fit,
    iwr_glm_ldp_fit,
    iwr_ldp_fit,
    ssp_ols_fit,
)
from dpbench.bandits.simulator import DataLedger, EpochData

PILOT_ROOT = 987_654_321_123
#: spec 001 §6 grid {1, .5, .25, .1, .05}, extended below 0.05 [CHOICE, logged in the deviations]
C_B_GRID = (1.0, 0.5, 0.25, 0.1, 0.05, 0.025, 0.01)
TARGET = 0.95
#: c_γ of the GLM oracle: with c_γ = 1 the output perturbation of Alg 14 exceeds the 8L_νλ width (pilot coverage
#: < 0.95 for every c_b ≤ 1 at N ≥ 2^16); c_γ = 4 restores it (chosen on pilot seeds from {1, 4}) [CHOICE]
GLM_C_GAMMA = 4.0


def fit_oracle(
    name: str,
    data: EpochData,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    fail_prob: float,
    d_A: int,
    link: str = "linear",
) -> LinearEstimate:
    if name == "iwr_glm_jdp":
        return iwr_glm_dp_fit(data, epsilon, delta, rng, link=link, fail_prob=fail_prob, c_gamma=GLM_C_GAMMA)
    if name == "iwr_glm_ldp":
        return iwr_glm_ldp_fit(data, epsilon, delta, rng, link=link, fail_prob=fail_prob)
    if name == "iwr_jdp":
        return iwr_dp_fit(data, epsilon, delta, rng, d_A=d_A, fail_prob=fail_prob)
    if name == "iwr_ldp":
        return iwr_ldp_fit(data, epsilon, delta, rng, fail_prob=fail_prob)
    if name == "ssp_jdp":
        return ssp_ols_fit(data, epsilon, delta, rng, fail_prob=fail_prob, local=False)
    if name == "ssp_ldp":
        return ssp_ols_fit(data, epsilon, delta, rng, fail_prob=fail_prob, local=True)
    raise ValueError(f"oracle must be iwr_jdp, iwr_glm_jdp, iwr_glm_ldp, iwr_ldp, ssp_jdp or ssp_ldp, got {name!r}")


def coverage_pilot(
    oracle: str,
    env_name: str,
    env_options: dict,
    sizes: list[int],
    epsilons: list[float],
    *,
    delta: float = 1e-5,
    fail_prob: float = 2.0**-20,
    seeds: int = 5,
    n_eval: int = 2000,
) -> pd.DataFrame:
    """Coverage of min(c·b̂₁, 2) for every c in :data:`C_B_GRID` (one row per seed, N, ε, c)."""
    rows = []
    info = get_env(env_name)
    for seed in range(seeds):
        env = info.make(np.random.default_rng([PILOT_ROOT, seed, 0]), **env_options)
        for N in sizes:
            drng = np.random.default_rng([PILOT_ROOT, seed, 1, N])
            Phi = env.contexts(drng, N)
            a = drng.integers(env.n_arms, size=N)
            chosen = Phi[np.arange(N), a]
            y = env.reward(env.mean(chosen[:, None, :])[:, 0], drng.random(N))
            Phi_eval = env.contexts(drng, n_eval)
            truth = env.mean(Phi_eval)
            for eps_index, eps in enumerate(epsilons):
                rng = np.random.default_rng([PILOT_ROOT, seed, 2, N, eps_index])
                est = fit_oracle(
                    oracle, EpochData(chosen, y, 0, DataLedger(N)), eps, delta, rng, fail_prob, env.d_A, env.link
                )
                f, _ = est.predict(Phi_eval)
                P = Phi_eval @ est.M
                b1 = est.scale * np.sqrt(np.einsum("nak,nak->na", P, P))
                err = np.abs(f - truth)
                for c in C_B_GRID:
                    cover = np.all(err <= np.minimum(c * b1, est.cap), axis=1).mean()
                    rows.append(
                        {
                            "oracle": oracle,
                            "env": env_name,
                            "seed": seed,
                            "N": N,
                            "epsilon": eps,
                            "c_b": c,
                            "coverage": float(cover),
                        }
                    )
    return pd.DataFrame(rows)


def choose_c_b(table: pd.DataFrame, target: float = TARGET) -> float:
    """Smallest c whose mean coverage over seeds is ≥ target at every (N, ε)."""
    worst = table.groupby(["c_b", "N", "epsilon"])["coverage"].mean().groupby("c_b").min()
    valid = sorted(c for c, cov in worst.items() if cov >= target)
    if not valid:
        return max(C_B_GRID)
    return float(valid[0])


#: the pilots behind the configs' c_b values (environment options as in the figures)
PILOTS = {
    "iwr_jdp": ("sphere", {"d": 5, "n_arms": 10}, [0.1, 0.5, 1.0, math.inf]),
    "ssp_jdp": ("sphere", {"d": 5, "n_arms": 10}, [0.1, 0.5, 1.0, math.inf]),
    "iwr_ldp": ("sphere", {"d": 3, "n_arms": 5}, [0.5, 1.0, math.inf]),
    "ssp_ldp": ("sphere", {"d": 3, "n_arms": 5}, [0.5, 1.0, math.inf]),
    "iwr_glm_jdp": ("sphere", {"d": 5, "n_arms": 10, "link": "logistic"}, [0.1, 0.5, 1.0, math.inf]),
    "iwr_glm_ldp": ("sphere", {"d": 3, "n_arms": 5, "link": "logistic"}, [0.5, 1.0, math.inf]),
}


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="results/bandit_calibration")
    parser.add_argument("--max-log2", type=int, default=17, help="largest pilot epoch size 2^k")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--only", nargs="*", default=None, help="subset of the pilot oracles")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    sizes = [2**k for k in range(6, args.max_log2 + 1)]
    tables, chosen = [], {}
    for oracle, (env_name, options, epsilons) in PILOTS.items():
        if args.only and oracle not in args.only:
            continue
        table = coverage_pilot(oracle, env_name, options, sizes, epsilons, seeds=args.seeds)
        chosen[oracle] = choose_c_b(table)
        tables.append(table)
        print(f"{oracle}: c_b = {chosen[oracle]}")
    suffix = "" if not args.only else "_" + "_".join(args.only)
    pd.concat(tables).to_csv(out / f"coverage{suffix}.csv", index=False)
    (out / f"chosen{suffix}.json").write_text(json.dumps(chosen, indent=2), encoding="utf-8")
    return chosen


if __name__ == "__main__":
    main()
