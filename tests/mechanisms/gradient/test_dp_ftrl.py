"""DP-FTRL (spec 002): calibration test vectors, tree noise law, engines, clipping, scale invariance, rules, data."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps

from dpbench.analysis.metrics import param_error_sigma
from dpbench.mechanisms.gradient.dp_ftrl.covariance import NoiseCovariance
from dpbench.mechanisms.gradient.dp_ftrl.engines import clip_coefficient, run_blocked, run_reference
from dpbench.mechanisms.gradient.dp_ftrl.mechanisms import fit_identity, fit_sgd_avg, fit_sigma_oracle, fit_sigma_public
from dpbench.mechanisms.gradient.dp_ftrl.rules import effective_dim, eta_rule, private_split_groups
from dpbench.mechanisms.gradient.tree_noise import ReferenceTreeAggregator, TreeNoise, release_counts
from dpbench.papers.ftrl.generators import excess_pop_paper, load
from dpbench.privacy.tree import (
    certified,
    dyadic_blocks,
    epsilon_tree,
    kbar,
    mu_gdp,
    popcount,
    tau_tree,
    v2,
)
from dpbench.privacy.zcdp import rho_from_epsilon

# spec 002 §2.3: δ = 1e−6, cells paper / rdp-replace / agm-replace / agm-zero
EPS = (0.25, 0.5, 1, 2, 4, 8, 16)
VECTORS = {
    256: [
        "90.010 126.725 92.459 46.229",
        "45.403 63.644 48.346 24.173",
        "23.095 32.100 25.348 12.674",
        "11.931 16.321 13.383 6.691",
        "6.331 8.419 7.161 3.581",
        "3.503 4.448 3.918 1.959",
        "2.048 2.433 2.212 1.106",
    ],
    1024: [
        "99.509 140.099 102.217 51.109",
        "50.195 70.361 53.448 26.724",
        "25.532 35.488 28.023 14.012",
        "13.190 18.044 14.795 7.398",
        "6.999 9.308 7.917 3.958",
        "3.873 4.918 4.331 2.166",
        "2.264 2.690 2.445 1.223",
    ],
    4096: [
        "108.178 152.304 111.122 55.561",
        "54.568 76.490 58.104 29.052",
        "27.756 38.579 30.465 15.232",
        "14.339 19.615 16.084 8.042",
        "7.609 10.119 8.607 4.303",
        "4.210 5.346 4.708 2.354",
        "2.461 2.925 2.658 1.329",
    ],
    16384: [
        "116.202 163.601 119.364 59.682",
        "58.615 82.164 62.414 31.207",
        "29.815 41.441 32.724 16.362",
        "15.402 21.070 17.277 8.639",
        "8.174 10.869 9.245 4.622",
        "4.522 5.743 5.058 2.529",
        "2.643 3.142 2.855 1.428",
    ],
}
# δ = 1/N² rows of §2.3: (N, ε) → paper / rdp-replace / agm-replace / agm-zero
VECTORS_N2 = {
    (1000, 0.1): (247.4434, 349.308, 240.8181, 120.409),
    (1000, 1): (25.532, 35.4878, 28.0233, 14.0117),
    (1000, 10): (3.2371, 4.0324, 3.5892, 1.7946),
    (13500, 0.1): (338.7113, 478.383, 364.6851, 182.3426),
    (13500, 1): (34.6591, 48.3955, 40.3227, 20.1614),
    (13500, 10): (4.1728, 5.3394, 4.8411, 2.4205),
}
METHODS = (("paper", "replace_one"), ("rdp", "replace_one"), ("agm", "replace_one"), ("agm", "zero_out"))


def fit_on(fit, ds, epsilon, seed, delta=1e-6, **hyper):
    """``fit`` on the training rows of ``ds`` at (ε, δ) with the rng of ``seed`` (every call of this file)."""
    return fit(ds.X_train, ds.y_train, epsilon, delta, np.random.default_rng(seed), **hyper)


def _taus(eps: float, delta: float, n: int) -> list[float]:
    return [tau_tree(eps, delta, n, neighbour, method) for method, neighbour in METHODS]


@pytest.mark.parametrize("n", sorted(VECTORS))
def test_tau_test_vectors(n):
    for eps, cell in zip(EPS, VECTORS[n], strict=True):
        expected = [float(v) for v in cell.split()]
        got = _taus(eps, 1e-6, n)
        for g, e in zip(got, expected, strict=True):
            assert g == pytest.approx(e, abs=6e-4), (n, eps, got, expected)


def test_tau_test_vectors_delta_one_over_n2():
    for (n, eps), expected in VECTORS_N2.items():
        got = _taus(eps, 1.0 / n**2, n)
        for g, e in zip(got, expected, strict=True):
            assert g == pytest.approx(e, rel=2e-5), (n, eps, got, expected)


def test_spot_checks_and_kbar():
    assert rho_from_epsilon(1, 1e-6) == pytest.approx(0.0174689, rel=1e-5)
    assert mu_gdp(1, 1e-6) == pytest.approx(0.2367044, rel=1e-6)
    assert (kbar(1), kbar(2), kbar(1024), kbar(1025)) == (1, 2, 11, 12)
    assert certified("zero_out", "paper") and not certified("replace_one", "paper")
    assert certified("replace_one", "agm") and certified("replace_one", "rdp")


@pytest.mark.parametrize("method,neighbour", METHODS + (("rdp", "zero_out"), ("paper", "zero_out")))
@pytest.mark.parametrize("eps,delta,n", [(0.3, 1e-6, 100), (1.0, 1e-5, 4096), (7.0, 1e-9, 33), (40.0, 1e-3, 1)])
def test_tau_round_trip(method, neighbour, eps, delta, n):
    tau = tau_tree(eps, delta, n, neighbour, method)
    back = epsilon_tree(tau, delta, n, neighbour, method)
    assert back <= eps * (1 + 1e-9)
    assert back == pytest.approx(eps, rel=1e-8)
    # a slightly smaller τ must violate the target (tightness)
    assert epsilon_tree(tau * 0.999, delta, n, neighbour, method) > eps


def test_tau_orderings():
    for eps in np.geomspace(0.01, 100, 13):
        for delta in (1e-12, 1e-9, 1e-6, 1e-3, 1e-2):
            for n in (1, 100, 5000):
                zero = tau_tree(eps, delta, n, "zero_out", "agm")
                assert tau_tree(eps, delta, n, "replace_one", "paper") / zero >= 1.6
                assert tau_tree(eps, delta, n, "replace_one", "agm") == pytest.approx(2 * zero, rel=1e-12)


def test_calibration_rejects_bad_input():
    with pytest.raises(ValueError, match="neighbour"):
        tau_tree(1.0, 1e-6, 10, "add_remove", "agm")
    with pytest.raises(ValueError, match="calibration"):
        tau_tree(1.0, 1e-6, 10, "zero_out", "exact")
    with pytest.raises(ValueError, match="epsilon"):
        tau_tree(0.0, 1e-6, 10)
    with pytest.raises(ValueError, match="N"):
        kbar(0)


# ------------------------------------------------------------------------------------------------ tree


def test_bit_helpers():
    assert [v2(s) for s in (1, 2, 3, 4, 6, 8, 12)] == [0, 1, 0, 2, 1, 3, 2]
    assert dyadic_blocks(13) == [(3, 0), (2, 2), (0, 12)]
    for s in range(1, 200):
        blocks = dyadic_blocks(s)
        assert len(blocks) == popcount(s)
        covered = sorted(i for j, q in blocks for i in range(q << j, (q + 1) << j))
        assert covered == list(range(s))
        assert all(q % 2 == 0 or j == max(b[0] for b in blocks) for j, q in blocks)  # left children (or root)


def _tree_prefix_noise(cls, n: int, reps: int, seed: int, sigma: float = 1.0) -> tuple[np.ndarray, int]:
    """ν(s), s = 1..n, for `reps` independent replicates (coordinates of a d = reps isotropic tree)."""
    rng = np.random.default_rng(seed)
    tree = cls(n, reps, lambda: rng.standard_normal(reps))
    out = np.empty((n, reps))
    for t in range(n):
        noisy = tree.step(np.zeros(reps), sigma)
        out[t] = noisy
        assert np.array_equal(noisy, tree.prefix_noise)
    return out, tree.draws


def test_tree_noise_law_t1():
    n, reps = 64, 20000
    nu, draws = _tree_prefix_noise(TreeNoise, n, reps, 1)
    assert draws == n  # exactly N draws
    var = nu.var(axis=1)
    pops = np.array([popcount(s) for s in range(1, n + 1)])
    # Var ν(s) = popcount(s); MC sd of a variance estimate ≈ pop·√(2/reps) ≤ 0.06
    assert np.max(np.abs(var - pops)) < 0.2
    assert np.mean(nu[3] * nu[4]) == pytest.approx(1.0, abs=0.06)  # Cov(ν(4), ν(5)) = 1
    assert np.mean(nu[3] * nu[7]) == pytest.approx(0.0, abs=0.06)  # Cov(ν(4), ν(8)) = 0
    # full covariance = number of shared blocks
    shared = np.array(
        [[len(set(dyadic_blocks(a)) & set(dyadic_blocks(b))) for b in range(1, 17)] for a in range(1, 17)]
    )
    assert np.max(np.abs(nu[:16] @ nu[:16].T / reps - shared)) < 0.2


def test_tree_reference_matches_efficient_in_distribution():
    n, reps = 24, 4000
    fast, _ = _tree_prefix_noise(TreeNoise, n, reps, 2)
    ref, ref_draws = _tree_prefix_noise(ReferenceTreeAggregator, n, reps, 3)
    assert ref_draws > n  # the reference noises right children too
    pvalues = [sps.ks_2samp(fast[s], ref[s]).pvalue for s in range(n)]
    assert min(pvalues) > 0.01 / n  # Bonferroni


def test_tree_sigma_zero_is_exact_prefix_sum():
    rng = np.random.default_rng(4)
    g = rng.standard_normal((37, 5))
    for cls in (TreeNoise, ReferenceTreeAggregator):
        tree = cls(37, 5, lambda: rng.standard_normal(5))
        out = np.array([tree.step(g[t], 0.0) for t in range(37)])
        np.testing.assert_allclose(out, np.cumsum(g, axis=0), rtol=0, atol=1e-12)


def test_tree_prefix_covariance_with_dense_sigma():
    """Cov ν(s) = popcount(s)·σ²Σ for a non-isotropic Σ (the law the accounting assumes)."""
    rng = np.random.default_rng(5)
    A = rng.standard_normal((3, 3))
    cov = NoiseCovariance.dense(A @ A.T + 0.5 * np.eye(3))
    sigma, n, reps = 1.7, 7, 3000
    samples = np.empty((reps, n, 3))
    for k in range(reps):
        tree = TreeNoise(n, 3, lambda: cov.sample(rng, 1)[0])
        for t in range(n):
            tree.step(np.zeros(3), sigma)
            samples[k, t] = tree.prefix_noise
    target = sigma**2 * cov.matrix()
    for t in range(n):
        emp = samples[:, t].T @ samples[:, t] / reps
        assert np.max(np.abs(emp - popcount(t + 1) * target)) < 0.15 * popcount(t + 1) * np.max(np.abs(target))


def test_release_counts():
    n = 11
    counts = np.zeros(n)
    for s in range(1, n):  # ν(1..N−1)
        for j, q in dyadic_blocks(s):
            counts[(q + 1) * (1 << j) - 1] += 1  # the block completes at step (q+1)2^j
    np.testing.assert_array_equal(release_counts(n), counts)


# ------------------------------------------------------------------------------------------------ Σ designs


def _eigen_public(P: np.ndarray, lam: float) -> NoiseCovariance:
    return NoiseCovariance.from_public_eigh(np.linalg.eigh(P.T @ P), P.shape[0], lam)


def _covariances(d: int, rng: np.random.Generator) -> list[NoiseCovariance]:
    return [
        NoiseCovariance.identity(d),
        NoiseCovariance.diagonal(rng.uniform(0.3, 2.0, d)),
        NoiseCovariance.from_public(rng.standard_normal((3 * d, d)), 2.0),  # dense Cholesky
        _eigen_public(rng.standard_normal((3 * d, d)), 2.0),  # dense, eigenbasis factor
        NoiseCovariance.from_public(rng.standard_normal((d // 2, d)), 2.0),  # low-rank + ridge
    ]


def test_noise_covariance_norms_and_draws():
    rng = np.random.default_rng(6)
    d = 8
    X = rng.standard_normal((5, d))
    for cov in _covariances(d, rng):
        sigma = cov.matrix()
        exact = np.einsum("ij,ij->i", X, np.linalg.solve(sigma, X.T).T)
        np.testing.assert_allclose(cov.inv_sq_norms(X), exact, rtol=1e-10)
        draws = cov.sample(np.random.default_rng(7), 40000)
        assert np.max(np.abs(draws.T @ draws / 40000 - sigma)) < 0.06 * np.max(np.abs(sigma)), cov.kind
        # chunked draws = one-shot draws (engines rely on it)
        r1, r2 = np.random.default_rng(8), np.random.default_rng(8)
        np.testing.assert_array_equal(cov.sample(r1, 5), np.vstack([cov.sample(r2, 2), cov.sample(r2, 3)]))
    assert NoiseCovariance.from_public(rng.standard_normal((4, 10)), 1.0).kind == "lowrank"


# ------------------------------------------------------------------------------------------------ engines


def _stream(n: int, d: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) / np.sqrt(d)
    return X, X @ rng.standard_normal(d) + 0.3 * rng.standard_normal(n)


@pytest.mark.parametrize("n", [1, 7, 64, 200])
def test_blocked_engine_equals_reference(n):
    X, y = _stream(n, 10, n)
    for cov in _covariances(10, np.random.default_rng(9)):
        q = np.sqrt(cov.inv_sq_norms(X))
        fast = run_blocked(X, y, q, 0.8, 0.9, 0.3, cov, np.random.default_rng(10), block=16)
        ref = run_reference(X, y, q, 0.9 / 0.8, 0.3, cov, np.random.default_rng(10), psi=0.8)
        np.testing.assert_allclose(fast.theta, ref.theta, rtol=1e-10, atol=1e-13)
        np.testing.assert_allclose(fast.w_last, ref.w_last, rtol=1e-10, atol=1e-13)
        assert fast.clip_frac == ref.clip_frac


def test_no_noise_no_clip_is_averaged_sgd_t2():
    X, y = _stream(150, 6, 11)
    eta = 0.4
    w, ws = np.zeros(6), []
    for t in range(150):
        ws.append(w)
        w = w - eta * X[t] * (X[t] @ w - y[t])
    cov = NoiseCovariance.identity(6)
    q = np.sqrt(cov.inv_sq_norms(X))
    for result in (
        run_blocked(X, y, q, math.inf, 0.0, eta, cov, np.random.default_rng(0), block=8),
        run_reference(X, y, q, 0.0, eta, cov, np.random.default_rng(0), psi=math.inf),
    ):
        np.testing.assert_allclose(result.theta, np.mean(ws, axis=0), rtol=1e-10)
        np.testing.assert_allclose(result.w_last, w, rtol=1e-10)
        assert result.clip_frac == 0.0


def test_noisy_iterates_follow_the_tree_t2():
    """w_{t+1} = −η(Σ_{i≤t} g_i + ν(t+1)) with ν rebuilt from the same draws by the dyadic decomposition."""
    n, d, eta, psi, tau = 20, 4, 0.5, 0.6, 2.0
    X, y = _stream(n, d, 12)
    cov = NoiseCovariance.identity(d)
    q = np.sqrt(cov.inv_sq_norms(X))
    res = run_reference(X, y, q, tau, eta, cov, np.random.default_rng(13), psi=psi, keep_iterates=True)
    draws = tau * psi * np.random.default_rng(13).standard_normal((n, d))  # draw s−1 made at step s
    w, gsum = np.zeros(d), np.zeros(d)
    for t in range(n):
        gsum += clip_coefficient(float(X[t] @ w - y[t]), q[t], psi) * X[t]
        nu = sum(draws[(qq + 1) * (1 << j) - 1] for j, qq in dyadic_blocks(t + 1))
        w = -eta * (gsum + nu)
        np.testing.assert_allclose(res.iterates[t + 1], w, rtol=1e-12, atol=1e-14)


def test_clipping_bound_on_neighbouring_records():
    """‖g − g'‖_{Σ⁻¹} ≤ 2ψ for any two records at the same w (replace-one), ‖g‖_{Σ⁻¹} ≤ ψ (zero-out)."""
    rng = np.random.default_rng(14)
    for cov in _covariances(6, rng):
        for _ in range(200):
            w = rng.standard_normal(6) * 10
            x, xp = rng.standard_normal(6) * rng.exponential(5), rng.standard_normal(6) * rng.exponential(5)
            yv, yp = rng.standard_normal() * 30, rng.standard_normal() * 30
            psi = rng.uniform(0.1, 3)
            g = clip_coefficient(x @ w - yv, math.sqrt(cov.inv_sq_norms(x[None])[0]), psi) * x
            gp = clip_coefficient(xp @ w - yp, math.sqrt(cov.inv_sq_norms(xp[None])[0]), psi) * xp
            assert math.sqrt(cov.inv_sq_norms(g[None])[0]) <= psi * (1 + 1e-9)
            assert math.sqrt(cov.inv_sq_norms((g - gp)[None])[0]) <= 2 * psi * (1 + 1e-9)


def test_scale_invariance_t4():
    X, y = _stream(90, 8, 15)
    cov = NoiseCovariance.from_public(np.random.default_rng(16).standard_normal((30, 8)), 1.5)
    psi, tau, eta = 0.5, 3.0, 0.2
    base = run_blocked(X, y, np.sqrt(cov.inv_sq_norms(X)), psi, tau * psi, eta, cov, np.random.default_rng(1))
    c = 7.3
    scaled = cov.scaled(c)
    other = run_blocked(
        X,
        y,
        np.sqrt(scaled.inv_sq_norms(X)),
        psi / math.sqrt(c),
        tau * psi / math.sqrt(c),
        eta,
        scaled,
        np.random.default_rng(1),
    )
    np.testing.assert_allclose(other.theta, base.theta, rtol=1e-10)
    assert other.clip_frac == base.clip_frac > 0


# ------------------------------------------------------------------------------------------------ rules


def test_eta_rule_matches_pilot():
    # spec 002 §5.4 E3 pilot, r = 3, N = 4096 (τ agm replace-one)
    assert eta_rule(4096, 30.465, designed=False, spectrum="poly", r=3, eta_max=1 / 2.404) == pytest.approx(
        3.69e-3, rel=2e-3
    )
    assert eta_rule(4096, 30.465, designed=True, spectrum="poly", r=3, eta_max=1 / 2.404) == pytest.approx(
        4.10e-3, rel=2e-3
    )
    assert eta_rule(4096, 2.658, designed=False, spectrum="poly", r=3, eta_max=1 / 2.404) == pytest.approx(
        2.99e-2, rel=2e-3
    )
    assert eta_rule(4096, 2.658, designed=True, spectrum="poly", r=3, eta_max=1 / 2.404) == pytest.approx(
        4.70e-2, rel=2e-3
    )
    assert eta_rule(4096, 0.0, designed=False, spectrum="poly", r=3) == pytest.approx(0.125)
    assert eta_rule(100, 5.0, designed=False, spectrum="exp") == pytest.approx(8 / math.sqrt(2500))
    with pytest.raises(ValueError, match="r > 1"):
        eta_rule(100, 1.0, designed=False, spectrum="poly")


def test_effective_dim_t10():
    r, n, eta = 3.0, 2**14, 0.01
    lams = np.arange(1, 200001, dtype=float) ** -r
    assert effective_dim(lams, n, eta) == pytest.approx((n * eta) ** (1 / r) * (1 + 1 / (r - 1)), rel=0.15)
    lams = np.exp(-np.arange(1, 100, dtype=float))
    assert abs(effective_dim(lams, n, eta) - math.log(n * eta)) < 2.0


def test_private_split_is_infeasible_at_realistic_n():
    with pytest.raises(ValueError, match="residual_est_infeasible"):
        private_split_groups(2048, 4096, 1.0, 1e-6)
    groups, size = private_split_groups(10**9, 16, 50.0, 1e-3)
    assert groups >= 1 and size >= 1


# ------------------------------------------------------------------------------------------------ data + mechanisms


@pytest.fixture(scope="module")
def small_problem():
    return load(np.random.default_rng(0), n=512, d=128, r=3.0, public_MC=200, estimating_m=64)


def test_generator_population(small_problem):
    ds = small_problem
    pop = ds.population
    assert np.linalg.norm(pop.theta) == pytest.approx(1.0)
    assert ds.X_public.shape == (512 + 200, 128) and ds.X_train.shape == (512, 128)
    assert excess_pop_paper(np.zeros(128), ds) == pytest.approx(pop.extra["zero_excess"])
    theta = np.random.default_rng(1).standard_normal(128) * 0.1
    assert excess_pop_paper(theta, ds) == pytest.approx(0.5 * param_error_sigma(theta, ds, None))
    # spec §5.2 zero-predictor values
    big = load(np.random.default_rng(0), n=2, d=2048, r=3.0, public_M=0, public_MC=0)
    assert big.population.extra["zero_excess"] == pytest.approx(0.315, abs=5e-4)
    two = load(np.random.default_rng(0), n=2, d=1000, r=2.0, public_M=0, public_MC=0)
    assert two.population.extra["zero_excess"] == pytest.approx(0.329, abs=5e-4)
    # second moment of the draws matches H on the head
    emp = np.mean(ds.X_public[:, :3] ** 2, axis=0)
    np.testing.assert_allclose(emp, pop.extra["h_diag"][:3], rtol=0.15)


def _design(ds):
    ex = ds.population.extra
    return {"spectrum": "poly", "r": ex["r"], "trH": ex["trH"], "l0": ex["l0"]}


def test_mechanisms_beat_zero_and_record_info(small_problem):
    ds = small_problem
    zero = ds.population.extra["zero_excess"]
    out_i = fit_on(fit_identity, ds, 2.0, 1, neighbour="replace_one", **_design(ds))
    out_p = fit_on(fit_sigma_public, ds, 2.0, 1, public_X=ds.X_public, public_C_rows=200, **_design(ds))
    out_o = fit_on(fit_sigma_oracle, ds, 2.0, 1, population=ds.population, calibration="paper", neighbour="replace_one")
    out_s = fit_on(fit_sgd_avg, ds, None, 1, delta=None, **{k: v for k, v in _design(ds).items() if k != "l0"})
    for out in (out_i, out_o, out_s):
        assert excess_pop_paper(out.theta, ds) < 0.5 * zero
    # one draw of the public design's noise exceeds zero/2 with probability ≈ 0.1 (eigen and Cholesky factor alike,
    # tests/mechanisms/gradient/test_dp_ftrl_speed.py): the median of five trials does not
    public_excess = [
        excess_pop_paper(
            fit_on(fit_sigma_public, ds, 2.0, seed, public_X=ds.X_public, public_C_rows=200, **_design(ds)).theta,
            ds,
        )
        for seed in range(1, 6)
    ]
    assert np.median(public_excess) < 0.5 * zero
    assert excess_pop_paper(out_s.theta, ds) < excess_pop_paper(out_i.theta, ds)
    assert out_i.info["tau"] == pytest.approx(tau_tree(2.0, 1e-6, 512, "replace_one", "agm"))
    assert out_p.info["tau"] == pytest.approx(tau_tree(2.0, 1e-6, 512, "zero_out", "agm"))
    assert out_o.info["privacy_certified"] is False and out_i.info["privacy_certified"] is True
    assert out_p.info["M"] == 512 and out_p.info["M_C"] == 200
    assert 0 <= out_i.info["clip_frac"] < 0.3


def test_epsilon_to_infinity_recovers_nonprivate_t9(small_problem):
    ds = small_problem
    design = _design(ds)
    sgd = fit_on(fit_sgd_avg, ds, None, 2, delta=None, eta=0.05, **{k: v for k, v in design.items() if k != "l0"})
    priv = fit_on(fit_identity, ds, 1e4, 2, eta=0.05, **design)
    assert excess_pop_paper(priv.theta, ds) == pytest.approx(excess_pop_paper(sgd.theta, ds), rel=0.05)


def test_mechanism_input_errors(small_problem):
    ds = small_problem
    with pytest.raises(ValueError, match="public_X"):
        fit_on(fit_sigma_public, ds, 1.0, 0, **_design(ds))
    with pytest.raises(ValueError, match="population"):
        fit_on(fit_sigma_oracle, ds, 1.0, 0)
    with pytest.raises(ValueError, match="l0"):
        fit_on(fit_identity, ds, 1.0, 0, trH=1.0)
    with pytest.raises(ValueError, match="neighbour"):
        fit_on(fit_identity, ds, 1.0, 0, neighbour="bad", **_design(ds))
    with pytest.raises(ValueError, match="residual_est_infeasible"):
        fit_on(fit_sigma_oracle, ds, 1.0, 0, population=ds.population, psi_mode="private_split")


def test_adaptive_clipping_option1_runs_and_is_capped(small_problem):
    ds = small_problem
    capped = fit_on(
        fit_sigma_oracle, ds, 4.0, 3, population=ds.population, psi_mode="public_labeled", estimating_m=64, psi_cap=1.0
    )
    assert capped.info["psi"] <= 1.0 + 1e-12
    assert np.isfinite(excess_pop_paper(capped.theta, ds))


def test_ftrl_configs_validate():
    from dpbench.config import load_config

    configs = sorted((Path(__file__).resolve().parents[3] / "configs" / "ftrl").glob("ftrl_*.yaml"))
    assert configs, "no configs/ftrl/ftrl_*.yaml"
    for path in configs:
        cfg = load_config(path)
        caption = cfg.caption.lower()
        assert "synthetic demonstration" in caption or "exploratory" in caption, path.name


@pytest.mark.slow
def test_nonprivate_rate_t5_small():
    """τ = 0, r = 2: log–log slope of the excess over N = 2^8..2^12 ≤ −r/(1+r) + 0.1 (d = 512, 4 seeds)."""
    ns = [2**k for k in range(8, 13)]
    means = []
    for n in ns:
        vals = []
        for seed in range(4):
            ds = load(np.random.default_rng(seed), n=n, d=512, r=2.0, public_M=0, public_MC=0)
            ex = ds.population.extra
            out = fit_on(fit_sgd_avg, ds, None, seed, delta=None, spectrum="poly", r=2.0, trH=ex["trH"])
            vals.append(excess_pop_paper(out.theta, ds))
        means.append(np.mean(vals))
    slope = np.polyfit(np.log(ns), np.log(means), 1)[0]
    assert slope <= -2 / 3 + 0.1


def test_public_design_cache_is_keyed_on_the_data(small_problem):
    ds = small_problem
    kwargs = dict(public_C_rows=200, **_design(ds))
    first = fit_on(fit_sigma_public, ds, 1.0, 4, public_X=ds.X_public, **kwargs)
    again = fit_on(fit_sigma_public, ds, 1.0, 4, public_X=ds.X_public, **kwargs)
    np.testing.assert_array_equal(first.theta, again.theta)
    other_public = ds.X_public[::-1].copy()  # same rows, different Σ/C split
    other = fit_on(fit_sigma_public, ds, 1.0, 4, public_X=other_public, **kwargs)
    assert not np.array_equal(first.theta, other.theta)


def test_public_split_loader():
    from dpbench.papers.ftrl.public_split import load as load_split

    base = __import__("dpbench.data.synthetic", fromlist=["load"]).load(np.random.default_rng(3))  # n=1000, d=5
    ds = load_split(np.random.default_rng(3), base="sphere_linear", public_fraction=0.3)
    assert ds.X_public.shape == (300, 5) and ds.X_train.shape == (700, 5) and ds.population is None
    rows = {tuple(r) for r in np.vstack([ds.X_public, ds.X_train])}
    assert len(rows) == 1000 and rows == {tuple(r) for r in base.X_train}  # a partition of the training rows
    with pytest.raises(ValueError, match="public_fraction"):
        load_split(np.random.default_rng(3), base="sphere_linear", public_fraction=1.0)


def test_uncapped_option1_divergence_is_reported_as_nan(small_problem):
    """Spec 002 §3.5 pilot: un-capped RESIDUALEST Option 1 feeds noise back into ψ and diverges at small ε."""
    ds = small_problem
    out = fit_on(fit_sigma_oracle, ds, 0.5, 3, population=ds.population, psi_mode="public_labeled", estimating_m=64)
    assert out.info["diverged"] is True and out.info["psi"] > 1e10
    assert np.all(np.isnan(out.theta))


def test_report_exponents_and_slopes():
    import pandas as pd

    from dpbench.papers.ftrl.analyses import rate_exponent, slope_table

    # spec 002 §4.3 Table 1
    assert rate_exponent("nonprivate", "poly", 3.0) == pytest.approx(0.75)
    assert rate_exponent("identity", "poly", 3.0) == pytest.approx(0.429, abs=1e-3)
    assert rate_exponent("designed", "poly", 3.0) == pytest.approx(0.5)
    assert rate_exponent("designed", "poly", 6.0) == pytest.approx(0.632, abs=1e-3)
    assert rate_exponent("designed", "poly", 2.0) == pytest.approx(rate_exponent("identity", "poly", 2.0))
    assert rate_exponent("designed", "exp", None) == pytest.approx(2 / 3)
    ns = np.array([256, 1024, 4096])
    trials = pd.DataFrame(
        {
            "data.n": np.repeat(ns, 2),
            "data.spectrum": "poly",
            "data.r": 3.0,
            "label": "I",
            "mechanism": "dp_ftrl_identity",
            "epsilon": 1.0,
            "excess_pop_paper": np.repeat(3.0 * ns**-0.2, 2),
        }
    )
    table = slope_table(trials, "excess_pop_paper")
    assert table["slope"].iloc[0] == pytest.approx(-0.2, abs=1e-3)
    assert bool(table.iloc[0, 5]) is False  # −0.2 > −0.429 + 0.1: the one-sided check fails


def test_control_figures_name_the_runs_dimension():
    """The η-grid figure's title states the d and N of its runs (issue 28: the controls moved to d = 2048)."""
    import pandas as pd

    from dpbench.papers.ftrl.controls import eta_figure

    rows = [
        {
            "dataset": "λ_i = i^-3",
            "d": 2048,
            "n": 4096,
            "epsilon": 1.0,
            "label": f"{mech} (eta={eta})",
            "hp.eta": eta,
            "info.eta": 0.003 if eta == "rule" else float(eta),
            "excess_pop_paper": v,
        }
        for mech in ("DP-FTRL-I", "DP-FTRL-Σ (oracle H)")
        for eta, v in (("rule", 0.01), ("0.001", 0.02), ("0.01", 0.015))
        for _ in range(3)
    ]
    fig = eta_figure([pd.DataFrame(rows)], caption="")
    assert "d = 2048, N = 4096" in fig._suptitle.get_text()
