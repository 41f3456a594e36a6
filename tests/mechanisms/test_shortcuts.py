"""Every exact-in-law shortcut against its literal per-user path (issue 16): two-sample KS on the estimate.

For each local-DP mechanism with per-user Gaussian noise, ``simulation="aggregate"`` (one draw of the summed noise)
and ``simulation="per_user"`` (every user's noise drawn) are run on the same small data set with independent seeds;
the two samples of θ̂[0] and of ‖θ̂‖ must not be told apart by a two-sample KS test (p > 10⁻³; fixed seeds, so the
test is deterministic). A control shows the same test at the same size rejects a 50% error in the noise std.
The default-suite version uses 500 trials per path at small n; the slow one 2000 trials at larger n.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np
import pytest
import scipy.stats as sps

from dpbench import registry
from dpbench.bandits import oracles
from dpbench.bandits.simulator import DataLedger, EpochData
from dpbench.mechanisms._simulation import (
    is_per_user,
    per_user_gaussian_sum,
    per_user_sym_sum,
    sym_from_upper,
)
from dpbench.mechanisms.stein import core as stein_core

P_MIN = 1e-3


@dataclass(frozen=True)
class Case:
    """One mechanism on one small data set (n rows, y scaled by ``y_scale``); ``hyper`` are fixed (both paths).

    Settings are chosen so that the estimate is informative about the noise law (not saturated by a constraint)."""

    mechanism: str
    loader: str
    options: dict[str, Any]
    epsilon: float
    delta: float
    hyper: dict[str, Any] = field(default_factory=dict)
    n: int = 300
    y_scale: float = 1.0


GLM, NLR = {"family": "logistic"}, {"family": "sigmoid"}
GAUSS, L1 = {"covariates": "gauss_diag", "p": 3}, {"covariates": "bernoulli", "p": 3}
AGM = {"calibration": "agm"}
CASES = [
    # Stein Algs 1–4 (spec 003 §3.2–3.5): a small clipping radius / y bound makes the per-user clipping matter
    Case("stein_glm_gauss", "stein_synthetic", {**GAUSS, **GLM}, 20.0, 1e-3, {"r": 1.5}),
    Case("stein_glm_l1", "stein_synthetic", {**L1, **GLM}, 50.0, 1e-3),
    Case("stein_nlr_gauss", "stein_synthetic", {**GAUSS, **NLR}, 50.0, 1e-3, {"r": 1.5, "y_bound": 0.6}),
    Case("stein_nlr_l1", "stein_synthetic", {**L1, **NLR}, 50.0, 1e-3),
    # 2-round baselines (spec 003 §3.6), round 1 aggregated
    Case("stein_twostage_glm_gauss", "stein_synthetic", {**GAUSS, **GLM}, 50.0, 1e-3, {"r": 1.5}),
    Case("stein_twostage_nlr_l1", "stein_synthetic", {**L1, **NLR}, 50.0, 1e-3),
    # information-weighted LDP (spec 000 §3.3, §3.7, §3.10, §3.6, §3.12)
    Case("iwr_ldp", "iwr_twoscale", {"d": 2, "rho": 0.1, "s": 0.3}, 16.0, 1e-5, AGM),
    Case("iwr_glm_ldp", "iwr_twoscale", {"d": 2, "rho": 0.1, "s": 0.3}, 16.0, 1e-5, AGM),
    Case("ldp_clipped_sgd", "iwr_gauss", {"d": 3, "s": 0.5}, 1.0, 1e-5),
    Case("iwr_ldp_oracle", "iwr_gauss", {"d": 3, "s": 0.5}, 1.0, 1e-5, {"channel": "gauss"}),
    Case("ldp_ssp", "iwr_gauss", {"d": 3, "s": 0.5}, 16.0, 1e-5, AGM, n=3000, y_scale=0.2),
]
#: the control: the aggregate path at ε/NOISE_ERROR (noise std × NOISE_ERROR) must be told apart from per_user
NOISE_ERROR = 1.5


@cache
def dataset(loader: str, n: int, options: tuple, y_scale: float) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    ds = registry.get_dataset(loader).load(np.random.default_rng(2016), n=n, **dict(options))
    inputs = {"public_X": ds.X_public, "population": ds.population}
    return ds.X_train, y_scale * ds.y_train, inputs


def estimates(
    case: Case, simulation: str, trials: int, seed: int, eps_scale: float = 1.0, n: int | None = None
) -> np.ndarray:
    """θ̂ of ``trials`` independent fits (seeds [seed, t])."""
    X, y, available = dataset(case.loader, n or case.n, tuple(sorted(case.options.items())), case.y_scale)
    info = registry.get_mechanism(case.mechanism)
    inputs = {k: available[k] for k in info.needs if k in available}
    out = []
    for t in range(trials):
        rng = np.random.default_rng([seed, t])
        fit = info.fit(X, y, case.epsilon * eps_scale, case.delta, rng, **inputs, **case.hyper, simulation=simulation)
        out.append(fit.theta)
    return np.array(out)


def summaries(thetas: np.ndarray) -> dict[str, np.ndarray]:
    return {"theta[0]": thetas[:, 0], "norm": np.linalg.norm(thetas, axis=1)}


def ks_compare(a: np.ndarray, b: np.ndarray) -> dict[str, tuple[float, float]]:
    """KS (statistic, p-value) of each summary of two samples of estimates."""
    sa, sb = summaries(a), summaries(b)
    return {k: tuple(float(v) for v in sps.ks_2samp(sa[k], sb[k])) for k in sa}


def case_ks(case: Case, trials: int, n: int | None = None) -> tuple[dict, dict]:
    """KS of aggregate vs per_user, and of the control (aggregate with noise × NOISE_ERROR) vs per_user."""
    per = estimates(case, "per_user", trials, seed=2, n=n)
    agg = estimates(case, "aggregate", trials, seed=1, n=n)
    wrong = estimates(case, "aggregate", trials, seed=1, eps_scale=1.0 / NOISE_ERROR, n=n)
    assert np.all(np.isfinite(agg)) and np.all(np.isfinite(per))
    return ks_compare(agg, per), ks_compare(wrong, per)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.mechanism)
def test_aggregate_and_per_user_estimates_agree_in_law(case):
    same, control = case_ks(case, trials=500)
    for name, (stat, p) in same.items():
        assert p > P_MIN, f"{case.mechanism} {name}: KS D = {stat:.3f}, p = {p:.2g}"
    assert min(p for _, p in control.values()) < P_MIN, f"{case.mechanism}: the control was not detected {control}"


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.mechanism)
def test_aggregate_and_per_user_estimates_agree_in_law_heavy(case):
    same, _ = case_ks(case, trials=2000, n=10 * case.n)
    for name, (stat, p) in same.items():
        assert p > P_MIN, f"{case.mechanism} {name}: KS D = {stat:.3f}, p = {p:.2g}"


# ---------------------------------------------------------------------------------------------------------------
# the LDP bandit oracles (spec 000 Alg 2 + 3, spec 000 §3.12 / 001 §7.2, spec 001 Alg 6) on one epoch


def epoch(N: int, d: int, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    Phi = rng.standard_normal((N, d))
    Phi /= np.maximum(np.linalg.norm(Phi, axis=1), 1.0)[:, None]
    y = np.clip(Phi @ np.full(d, 0.5) + 0.3 * rng.standard_normal(N), -1.0, 1.0)
    return Phi, y


ORACLES: dict[str, Callable[..., np.ndarray]] = {
    "iwr_ldp_fit": lambda data, rng, sim, eps: (
        oracles.iwr_ldp_fit(data, eps, 1e-5, rng, fail_prob=0.05, simulation=sim, calibration="agm").theta
    ),
    "ssp_ols_fit_local": lambda data, rng, sim, eps: (
        oracles.ssp_ols_fit(data, eps, 1e-5, rng, fail_prob=0.05, local=True, simulation=sim, calibration="agm").theta
    ),
    "dimfree_ldp_fit": lambda data, rng, sim, eps: oracles.dimfree_ldp_fit(
        data, eps, 1e-5, rng, fail_prob=0.05, simulation=sim, calibration="agm"
    )[0],
}
#: ε per oracle (AGM calibration) at which the estimate at N = 400 is informative about the noise scale
ORACLE_EPSILON = {"iwr_ldp_fit": 8.0, "ssp_ols_fit_local": 8.0, "dimfree_ldp_fit": 1.0}


def oracle_estimates(
    name: str, simulation: str, trials: int, seed: int, N: int = 400, noise_error: float = 1.0
) -> np.ndarray:
    epsilon = ORACLE_EPSILON[name] / noise_error
    Phi, y = epoch(N, 3)
    out = []
    for t in range(trials):
        data = EpochData(Phi, y, 0, DataLedger(N))
        out.append(ORACLES[name](data, np.random.default_rng([seed, t]), simulation, epsilon))
    return np.array(out)


@pytest.mark.parametrize("name", list(ORACLES))
def test_bandit_oracles_aggregate_and_per_user_agree_in_law(name):
    per = oracle_estimates(name, "per_user", 500, 2)
    for summary, (stat, p) in ks_compare(oracle_estimates(name, "aggregate", 500, 1), per).items():
        assert p > P_MIN, f"{name} {summary}: KS D = {stat:.3f}, p = {p:.2g}"
    control = ks_compare(oracle_estimates(name, "aggregate", 500, 1, noise_error=NOISE_ERROR), per)
    assert min(p for _, p in control.values()) < P_MIN, f"{name}: the control was not detected {control}"


# ---------------------------------------------------------------------------------------------------------------
# the building blocks


def test_per_user_sums_have_the_aggregate_moments():
    rng = np.random.default_rng(4)
    n, d, std, reps = 40, 3, 1.5, 3000
    vec = np.array([per_user_gaussian_sum(n, (d,), std, rng) for _ in range(reps)])
    sym = np.array([per_user_sym_sum(n, d, std, rng) for _ in range(reps)])
    assert np.allclose(sym, np.transpose(sym, (0, 2, 1)))
    target = std * math.sqrt(n)
    assert np.allclose(vec.std(axis=0), target, rtol=0.05)
    assert np.allclose(sym.std(axis=0), target, rtol=0.05)  # diagonal and off-diagonal alike (Sym_d(n s²))
    assert abs(np.corrcoef(sym[:, 0, 1], sym[:, 0, 2])[0, 1]) < 0.06


def test_per_user_path_chunks_users(monkeypatch):
    """The chunked draw is the row-by-row sum: same normals, any chunk size."""
    import dpbench.mechanisms._simulation as sim

    whole = per_user_gaussian_sum(37, (2, 2), 0.7, np.random.default_rng(5))
    monkeypatch.setattr(sim, "CHUNK_FLOATS", 8)  # 2 users per chunk
    chunked = per_user_gaussian_sum(37, (2, 2), 0.7, np.random.default_rng(5))
    rows = 0.7 * np.random.default_rng(5).standard_normal((37, 4)).sum(axis=0).reshape(2, 2)
    assert np.allclose(whole, rows) and np.allclose(chunked, rows)


def test_sym_from_upper_places_the_upper_triangle():
    M = sym_from_upper(np.arange(1.0, 7.0), 3)
    assert np.array_equal(M, [[1, 2, 3], [2, 4, 5], [3, 5, 6]])


def test_stein_user_releases_are_the_clipped_outer_products_plus_noise():
    rng = np.random.default_rng(6)
    X = rng.standard_normal((5, 3)) * 3
    y = rng.standard_normal(5) * 3
    Z_upper, z = stein_core.user_releases(X, y, rng, stein_core.UserChannel(1.0, 0.0, 0.0, True, 0.5))
    Xc = stein_core.clip_rows_l2(X, 1.0)
    assert np.allclose(sym_from_upper(Z_upper, 3), np.einsum("ij,ik->ijk", Xc, Xc))
    assert np.allclose(z, Xc * np.clip(y, -0.5, 0.5)[:, None])


def test_simulation_value_is_checked():
    with pytest.raises(ValueError, match="simulation must be one of"):
        is_per_user("perUser")
    assert is_per_user("aggregate", legacy_flag=True) and not is_per_user("aggregate")
