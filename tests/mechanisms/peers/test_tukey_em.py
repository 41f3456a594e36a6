"""TukeyEM (dpbench/mechanisms/peers/tukey_em.py) and its calibration (dpbench/mechanisms/peers/tukey_calibration.py).

Calibration checks: the depth-region volumes against a brute-force depth, the PTR distance bound against its
definition and its sensitivity 1 over random neighbouring model sets, the mechanism's PTR pass rate against the exact
Laplace tail, the sampled depth levels against the exponential-mechanism law, and every sample's depth.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import chisquare

from dpbench import audit, registry
from dpbench.mechanisms.peers import tukey_calibration as tukey
from dpbench.mechanisms.peers import tukey_em

registry.discover()
INFO = registry.MECHANISMS["tukey_em"]


def brute_depth(models: np.ndarray, point: np.ndarray) -> int:
    """min_j min(#{i: β_ij ≤ y_j}, #{i: β_ij ≥ y_j}) straight from the definition."""
    below = (models <= point).sum(axis=0)
    above = (models >= point).sum(axis=0)
    return int(np.minimum(below, above).min())


def sorted_coords(models: np.ndarray) -> np.ndarray:
    return np.sort(models.T, axis=1)


@pytest.mark.parametrize("m", [9, 10, 40])
def test_depth_boxes_match_the_brute_force_depth(m):
    rng = np.random.default_rng(m)
    models = rng.standard_normal((m, 3))
    coords = sorted_coords(models)
    log_v = tukey.log_depth_volumes(coords)
    assert len(log_v) == m // 2
    for i in range(1, m // 2 + 1):
        lo, hi = coords[:, i - 1], coords[:, m - i]
        assert log_v[i - 1] == pytest.approx(np.sum(np.log(hi - lo)))
        inside = rng.uniform(lo, hi, size=(50, 3))
        assert all(brute_depth(models, p) >= i for p in inside)
        outside = inside.copy()
        outside[:, 0] = hi[0] + 1e-9  # just past the box in one coordinate
        assert all(brute_depth(models, p) < i for p in outside)


def definition_k_hat(log_v: np.ndarray, t: int, eps: float, delta: float) -> int:
    """1 + the largest k with C(0..k), C(k) spelled out with explicit loops over g."""
    top = len(log_v)

    def holds(k: int) -> bool:
        if t - k - 1 < 1:
            return False
        for g in range(1, top + 1):
            if t + k + g + 1 > top:
                break
            if log_v[t - k - 2] - log_v[t + k + g] - eps * g / 2 <= math.log(delta / (8 * math.exp(eps))):
                return True
        return False

    k = 0
    while holds(k):
        k += 1
    return k


@pytest.mark.parametrize("seed", range(6))
def test_distance_bound_matches_its_definition(seed):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(40, 400))
    models = rng.standard_normal((m, 2)) * rng.uniform(0.01, 1.0)
    log_v = tukey.log_depth_volumes(sorted_coords(models))
    t = tukey.restriction_depth(m)
    for eps, delta in [(0.5, 1e-5), (2.0, 1e-6), (5.0, 1e-3)]:
        assert tukey.distance_lower_bound(log_v, t, eps, delta) == definition_k_hat(log_v, t, eps, delta)


def test_distance_bound_has_sensitivity_one_over_neighbouring_model_sets():
    rng = np.random.default_rng(7)
    seen = set()
    for trial in range(300):
        m = 200
        models = rng.standard_normal((m, 2)) * 0.05
        neighbour = models.copy()
        neighbour[rng.integers(m)] = rng.standard_normal(2) * rng.choice([0.01, 1.0, 100.0])  # any one row changed
        eps = float(rng.choice([1.0, 4.0, 10.0]))
        t = tukey.restriction_depth(m)
        k1 = tukey.distance_lower_bound(tukey.log_depth_volumes(sorted_coords(models)), t, eps, 1e-5)
        k2 = tukey.distance_lower_bound(tukey.log_depth_volumes(sorted_coords(neighbour)), t, eps, 1e-5)
        assert abs(k1 - k2) <= 1, (trial, k1, k2)
        seen.add(k1)
    assert len(seen) > 3  # the check exercised a range of bounds, not a constant


def test_ptr_threshold_and_pass_probability():
    assert tukey.ptr_threshold(0.5, 1e-5) == pytest.approx(math.log(1 / 2e-5) / 0.5)
    thr = tukey.ptr_threshold(1.0, 1e-6)
    assert tukey.ptr_pass_probability(math.ceil(thr) + 50, 1.0, 1e-6) > 0.999
    assert tukey.ptr_pass_probability(0, 1.0, 1e-6) == pytest.approx(1e-6, rel=1e-9)  # P(Lap > log(1/2δ)) = δ
    assert tukey.split_budget(1.0) == (0.5, 0.5)
    with pytest.raises(ValueError, match="delta"):
        tukey.ptr_threshold(1.0, 1.5)


@pytest.fixture
def fixed_models(monkeypatch):
    """Replace the batch OLS step by a fixed model set, so k̂ and the volumes are deterministic (jitter 0)."""
    models = np.random.default_rng(3).standard_normal((400, 2)) * [0.02, 0.05] + [0.3, -0.2]
    monkeypatch.setattr(tukey_em, "batch_ols", lambda X, y, m, rng: models[:m])
    X = np.ones((4000, 2))
    return models, X, np.zeros(4000)


def test_mechanism_ptr_pass_rate_is_the_laplace_tail(fixed_models):
    models, X, y = fixed_models
    delta = 1e-5
    coords = sorted_coords(models)
    log_v = tukey.log_depth_volumes(coords)

    def pass_probability(eps: float) -> float:
        eps_ptr = tukey.split_budget(eps)[0]
        return tukey.ptr_pass_probability(tukey.distance_lower_bound(log_v, 100, eps_ptr, delta), eps_ptr, delta)

    # an ε where the test is informative (pass probability well inside (0, 1))
    eps = next(e for e in np.linspace(0.9, 1.5, 121) if 0.2 < pass_probability(e) < 0.8)
    p = pass_probability(eps)
    runs = 3000
    rng = np.random.default_rng(11)
    passed = sum(INFO.fit(X, y, eps, delta, rng, models=400, jitter=0.0).info["ptr_passed"] for _ in range(runs))
    assert abs(passed / runs - p) < 4 * math.sqrt(p * (1 - p) / runs)


def test_sampled_depths_follow_the_exponential_mechanism(fixed_models):
    models, X, y = fixed_models
    eps = 2.0  # PTR passes with probability 1 − 1e-16 here; ε_em = 1 spreads the mass over ~8 depth levels
    coords = sorted_coords(models)
    log_v = tukey.log_depth_volumes(coords)
    t = tukey.restriction_depth(400)
    weights = tukey.depth_level_log_weights(log_v, t, eps / 2)
    probs = np.exp(weights - weights.max())
    probs /= probs.sum()
    rng = np.random.default_rng(5)
    runs = 3000
    results = [INFO.fit(X, y, eps, 1e-5, rng, models=400, jitter=0.0) for _ in range(runs)]
    assert all(r.info["ptr_passed"] == 1 for r in results)
    depths = np.array([r.info["depth"] for r in results])
    for r in results[:200]:  # every sample lies in its drawn depth level
        assert brute_depth(models, r.theta) == r.info["depth"]
    levels = np.arange(t, t + len(probs))
    expected = probs * runs
    keep = expected >= 5
    observed = np.array([(depths == lev).sum() for lev in levels])
    assert observed[~keep].sum() <= max(15, 3 * expected[~keep].sum())
    stat = chisquare(observed[keep], expected[keep] * observed[keep].sum() / expected[keep].sum())
    assert stat.pvalue > 1e-3


def test_data_rich_problem_is_solved_without_any_bound():
    rng = np.random.default_rng(0)
    n, d = 40_000, 3
    theta = np.array([3.0, -2.0, 0.5])
    X = 50.0 * rng.standard_normal((n, d))  # far outside any unit ball: TukeyEM needs no bounds
    y = X @ theta + rng.standard_normal(n)
    result = INFO.fit(X, y, 1.0, 1e-5, np.random.default_rng(1))
    assert result.info["ptr_passed"] == 1 and result.info["models"] == 1000
    assert np.linalg.norm(result.theta - theta) < 0.05


def test_too_few_rows_per_model_releases_zero():
    X = np.random.default_rng(0).standard_normal((50, 10))
    result = INFO.fit(X, X[:, 0], 1.0, 1e-5, np.random.default_rng(0))
    assert result.info == {"models": 5, "ptr_passed": 0, "depth": 0, "k_hat": 0, "fallback": 1}
    assert not result.theta.any()


@pytest.mark.parametrize(
    "hyper, match", [({"models": 1}, "models"), ({"models": 2.5}, "models"), ({"jitter": -1.0}, "jitter")]
)
def test_bad_hyperparameters_are_named(hyper, match):
    X = np.ones((100, 2))
    with pytest.raises(ValueError, match=match):
        INFO.fit(X, X[:, 0], 1.0, 1e-5, np.random.default_rng(0), **hyper)


def test_registry_declares_privacy_model_and_neighbours():
    assert (INFO.privacy_model, INFO.neighbour) == ("central", "replace_one")
    assert INFO.hyperparameters() == {"models": 1000, "jitter": 1e-10}


@pytest.mark.slow  # 8 s; `dpbench audit --all` and the slow honest-built-ins audit test cover it too
def test_audit_small_n_passes():
    result = audit.audit(INFO, 1.0, 1e-5, trials=400, pilot=200)
    assert result.status == "inconclusive", result
