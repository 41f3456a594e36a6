"""The LDP bandit algorithms' ``simulation`` hyperparameter (issue 16): users' noise by its exact aggregate law
(default) or drawn per user. The oracles' estimates are KS-tested per epoch in the default suite
(tests/mechanisms/test_shortcuts.py); here the whole bandit: two-sample KS on the cumulative regret of squarecb_ldp at a
small T, 500 runs per path, plus the control that the same test rejects the aggregate path with its noise std × 1.5
(slow: ≈ 10 s)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import scipy.stats as sps

from dpbench.bandits import elimination, oracles
from dpbench.bandits.envs import ContextStream, sphere
from dpbench.bandits.simulator import run_bandit

P_MIN = 1e-3
RUNS = 500
T = 128
#: AGM at ε = 8: the users' noise is comparable to their gradients, so the regret law is sensitive to its scale
EPSILON = 8.0


def final_regret(simulation: str, seed: int, runs: int = RUNS) -> np.ndarray:
    """Cumulative regret at T of squarecb_ldp (AGM calibration) on one G-Sphere(3, 5) instance."""
    env = sphere(np.random.default_rng(0), d=3, n_arms=5)
    out = []
    for k in range(runs):
        result = run_bandit(
            env,
            "squarecb_ldp",
            T,
            EPSILON,
            1e-5,
            np.random.default_rng([seed, k]),
            stream=ContextStream(env, (seed, k)),
            simulation=simulation,
            calibration="agm",
        )
        out.append(result.cumulative[-1])
    return np.array(out)


@pytest.mark.slow
def test_squarecb_ldp_aggregate_and_per_user_agree_in_law(monkeypatch):
    per_user = final_regret("per_user", 2)
    aggregate = final_regret("aggregate", 1)
    assert sps.ks_2samp(aggregate, per_user).pvalue > P_MIN
    std = oracles.noise_std
    monkeypatch.setattr(oracles, "noise_std", lambda *a: 1.5 * std(*a))
    assert sps.ks_2samp(final_regret("aggregate", 1), per_user).pvalue < P_MIN, "the std × 1.5 control passed"


@pytest.mark.parametrize("algo", ["elim_iwr_ldp", "elim_ssp_ldp", "squarecb_ldp"])
def test_ldp_algorithms_pass_simulation_to_their_oracles(algo, monkeypatch):
    env = sphere(np.random.default_rng(0), d=3, n_arms=5)
    seen = []

    def spy(fit):
        return lambda *a, **k: seen.append(k["simulation"]) or fit(*a, **k)

    monkeypatch.setattr("dpbench.bandits.squarecb.dimfree_ldp_fit", spy(oracles.dimfree_ldp_fit))
    for name, oracle in elimination.ORACLES.items():  # each elimination algorithm's oracle (its fit, its table)
        monkeypatch.setitem(elimination.ORACLES, name, dataclasses.replace(oracle, fit=spy(oracle.fit)))
    run_bandit(env, algo, 512, 1.0, 1e-5, np.random.default_rng(1), simulation="per_user")
    assert seen and set(seen) == {"per_user"}
    with pytest.raises(ValueError, match="simulation"):
        run_bandit(env, algo, 64, 1.0, 1e-5, np.random.default_rng(1), simulation="per-user")
