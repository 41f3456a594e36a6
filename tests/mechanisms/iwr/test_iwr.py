"""Information-weighted regression (spec 000): calibration (T1), information matrices (T2–T6, T16), sensitivities
(T7), noise scales (T8), data use (T9), helpers, generators, E1 table, mechanism contracts. Fast (< 60 s)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from dpbench import registry
from dpbench.mechanisms.iwr import central as iw_central
from dpbench.mechanisms.iwr import local as iw_local
from dpbench.mechanisms.iwr._common import StageNoise, epoch_slices, halves
from dpbench.mechanisms.iwr.calibration import (
    gaussian_std,
    l2ball_radius,
    neighbour_factor,
    priv_std,
    release_stds,
    sigma_chen,
)
from dpbench.mechanisms.iwr.linalg import ball_lsq, msqrt, proj_ellipsoid
from dpbench.mechanisms.iwr.matrix import (
    F_dp,
    U_basis,
    W_basis,
    W_gamma0,
    dp_weight,
    epoch_statistic,
    ldp_weight,
    population_info_matrix,
    solve_info_matrix,
    u_isotropic,
    w_isotropic,
)
from dpbench.mechanisms.iwr.noise import l2ball_sample, sym_priv
from dpbench.papers.iwr.generators import c_d, l1_functional
from dpbench.privacy.agm import epsilon_agm

P_BASIS = np.array([0.5, 0.2, 0.05, 0.01, 0.001])
ROOT = Path(__file__).resolve().parents[3]


# ---------------------------------------------------------------------------------------------------------------
# T1 calibration


@pytest.mark.parametrize(
    "alpha, beta, expected",
    [(1.0, 1e-5, 14.102037), (0.1, 1e-5, 141.020374), (0.5, 1e-6, 30.705623), (1.0, 1e-10, 19.572283)],
)
def test_sigma_chen_vectors(alpha, beta, expected):
    assert sigma_chen(alpha, beta) == pytest.approx(expected, abs=1e-6)


def test_gaussian_std_reference_values():
    assert gaussian_std(1.0, 1.0, 1e-5, "paper") == pytest.approx(7.051019, abs=1e-6)
    assert gaussian_std(1.0, 1.0, 5e-6, "classical") == pytest.approx(4.985823, abs=1e-6)
    assert gaussian_std(1.0, 1.0, 5e-6, "agm") == pytest.approx(3.884141, abs=1e-6)
    assert gaussian_std(3.0, 0.3, 1e-5, "paper") == pytest.approx(2 * math.sqrt(math.log(2.5e5)) * 3 / 0.3)


def test_agm_round_trip():
    for eps, delta, s in [(0.1, 1e-5, 1.0), (2.0, 1e-6, 0.3), (8.0, 1e-3, 5.0)]:
        sigma = gaussian_std(s, eps, delta, "agm")
        assert epsilon_agm(sigma, delta, s) == pytest.approx(eps, rel=1e-8)
        assert epsilon_agm(sigma * 0.999, delta, s) > eps


def test_paper_calibration_rejects_large_epsilon():
    with pytest.raises(ValueError, match="epsilon ≤ 1"):
        gaussian_std(1.0, 1.5, 1e-5, "paper")
    with pytest.raises(ValueError, match="calibration='paper'"):
        iw_central.fit_iwr_dp(np.full((64, 2), 0.1), np.ones(64), 2.0, 1e-5, np.random.default_rng(0))
    assert gaussian_std(1.0, 1.5, 1e-5, "agm") > 0
    with pytest.raises(ValueError, match="calibration must be"):
        gaussian_std(1.0, 0.5, 1e-5, "laplace")


def test_release_split_is_doubled_delta_and_generic_is_joint():
    sigma = sigma_chen(0.5, 1e-5)
    s_a, s_b = release_stds([2.0, 4.0], 0.5, 1e-5, "paper")
    # paper: Priv_{2Δ} with Δ = half-sensitivity: std = σ·2·(s/2) = σ·s
    assert s_a == pytest.approx(sigma * 2.0) and s_b == pytest.approx(sigma * 4.0)
    j_a, j_b = release_stds([2.0, 4.0], 0.5, 1e-5, "agm")
    assert j_a == j_b == pytest.approx(gaussian_std(math.hypot(2.0, 4.0), 0.5, 1e-5, "agm"))
    assert priv_std(0.25, 0.5, 1e-5) == pytest.approx(0.25 * sigma)


def test_neighbour_factor():
    assert neighbour_factor("replace") == 1.0 and neighbour_factor("replace_one") == 1.0
    assert neighbour_factor("zero_out") == 0.5 and neighbour_factor("zero_out", "local") == 1.0
    with pytest.raises(ValueError, match="neighbour"):
        neighbour_factor("add_remove")


# ---------------------------------------------------------------------------------------------------------------
# T2 closed forms, T3 iteration


W_TABLE = [
    (1, 0, 0.01, [1.404249, 2.211208, 4.373254, 9.512492, 27.015621]),
    (1, 1, 0.01, [2.674356, 5.569311, 17.454845, 50.490289, 90.999012]),
    (1, 10, 0.001, [19.705387, 47.714087, 166.749950, 500.049990, 909.099999]),
    (1, 100, 0.001, [166.675000, 333.340000, 666.670000, 909.091818, 990.099109]),
    (2, 1, 0.01, [1.351457, 2.854112, 9.522779, 33.661788, 83.416170]),
    (2, 10, 0.001, [9.950248, 24.438925, 90.954520, 333.366662, 833.341666]),
]


@pytest.mark.parametrize("B, gamma, lam, expected", W_TABLE)
def test_W_basis_table_and_iteration(B, gamma, lam, expected):
    W = W_basis(P_BASIS, B, gamma, lam)
    assert np.diag(W) == pytest.approx(expected, abs=5.1e-7)
    sol = solve_info_matrix("dp", B * np.eye(5), P_BASIS, lam, gamma)
    assert np.abs(sol.X - W).max() / W.max() < 1e-8
    assert np.linalg.norm(F_dp(sol.X, B * np.eye(5), P_BASIS, gamma, lam) - np.eye(5), 2) < 1e-10


def test_U_closed_forms():
    assert np.diag(U_basis(P_BASIS, 1, 0.01)) == pytest.approx([1.960784, 4.761905, 16.666667, 50, 90.909091], rel=1e-6)
    assert np.diag(U_basis(P_BASIS, 2, 0.01)) == pytest.approx(
        [0.990099, 2.439024, 9.090909, 33.333333, 83.333333], rel=1e-6
    )
    sol = solve_info_matrix("ldp", 2 * np.eye(5), P_BASIS, 0.01)
    assert np.abs(sol.X - U_basis(P_BASIS, 2, 0.01)).max() < 1e-8
    r, q = [1.0, 0.1], [0.01, 0.99]
    assert w_isotropic(r, q, 5, 0.0, 0.01) == pytest.approx(14.644490, abs=1e-6)
    assert w_isotropic(r, q, 5, 1.0, 0.01) == pytest.approx(36.392037, abs=1e-6)
    assert w_isotropic(r, q, 5, 10.0, 0.001) == pytest.approx(315.092368, abs=1e-6)
    assert u_isotropic(0.01 + 0.99 * 0.1, 5, 0.01) == pytest.approx(31.446541, abs=1e-6)


def test_W_gamma0_example_and_equation():
    S = np.array([[0.3, 0.1], [0.1, 0.05]])
    W0 = W_gamma0(S, 0.02)
    assert W0 == pytest.approx(np.array([[2.338425, -1.825854], [-1.825854, 6.903060]]), abs=1e-6)
    assert np.abs(W0 @ S @ W0 + 0.02 * W0 - np.eye(2)).max() < 1e-12


def test_isotropic_closed_form_matches_iteration_on_sphere_sample():
    """Isotropic TwoScale: W = wI solved on a symmetric atom set (±e_j scaled) equals the closed form in d=1."""
    r, q = np.array([1.0, 0.1]), np.array([0.01, 0.99])
    atoms = np.array([[1.0], [-1.0], [0.1], [-0.1]])
    probs = np.array([0.005, 0.005, 0.495, 0.495])
    sol = solve_info_matrix("dp", atoms, probs, 0.01, 1.0)
    assert sol.X[0, 0] == pytest.approx(w_isotropic(r, q, 1, 1.0, 0.01), rel=1e-9)


@pytest.mark.parametrize(
    "kind, lam, gamma, expected",
    [
        ("ldp", 0.01, 0.0, [4.5099, 2.2549, 1.1275, 0.5637]),
        ("ldp", 1e-3, 0.0, [6.2146, 3.1073]),
        ("dp", 0.01, 1.0, [4.5564, 2.2402, 1.1145, 0.5560]),
    ],
)
def test_iteration_log_eig_sequences(kind, lam, gamma, expected):
    sol = solve_info_matrix(kind, np.eye(5), P_BASIS, lam, gamma)
    assert sol.history[: len(expected)] == pytest.approx(expected, abs=1e-4)
    first = next(k for k, h in enumerate(sol.history) if h <= math.log(2))
    assert first == {0.01: 3, 1e-3: 4}[lam]


def random_discrete(rng: np.random.Generator, d: int = 5, m: int = 30) -> tuple[np.ndarray, np.ndarray]:
    """30 atoms in B^5(1) (5 scaled by 0.01) with Dirichlet weights (spec 000 §5.3 T3/T16)."""
    atoms = rng.standard_normal((m, d))
    atoms *= (rng.random(m) ** (1 / d) / np.linalg.norm(atoms, axis=1))[:, None]
    atoms[:5] *= 0.01
    return atoms, rng.dirichlet(np.ones(m))


def test_iteration_monotone_bounds_on_random_p():
    rng = np.random.default_rng(3)
    for _ in range(8):
        atoms, probs = random_discrete(rng)
        for kind, gamma, lam in (("ldp", 0.0, 0.01), ("dp", 0.5, 0.01), ("dp", 5.0, 0.001)):
            sol = solve_info_matrix(kind, atoms, probs, lam, gamma, keep_F=True)
            assert sol.history[-1] < 1e-10
            eigs = [np.linalg.eigvalsh(F) for F in sol.F_history]
            for prev, nxt in zip(eigs, eigs[1:], strict=False):
                lo, hi = prev.min(), prev.max()
                if kind == "dp":
                    lo, hi = min(lo, 1.0), max(hi, 1.0)
                assert nxt.min() >= math.sqrt(lo) * (1 - 1e-9)
                assert nxt.max() <= math.sqrt(hi) * (1 + 1e-9)


def test_information_matrix_inequalities_T4_T5_T6_T16():
    rng = np.random.default_rng(11)
    for _ in range(6):
        atoms, probs = random_discrete(rng)
        d = atoms.shape[1]
        Sigma = (atoms * probs[:, None]).T @ atoms
        for gamma, lam in ((0.5, 0.01), (5.0, 0.001), (0.05, 0.1)):
            U = solve_info_matrix("ldp", atoms, probs, lam).X
            W = solve_info_matrix("dp", atoms, probs, lam, gamma).X
            W0 = W_gamma0(Sigma, lam)
            Ugl = solve_info_matrix("ldp", atoms, probs, gamma * lam).X
            U1g = solve_info_matrix("ldp", atoms, probs, (1 + gamma) * lam).X
            for theta in rng.standard_normal((5, d)):
                l1 = float(probs @ np.abs(atoms @ theta))
                u_norm = np.linalg.norm(np.linalg.solve(U, theta))
                assert u_norm <= l1 + lam * np.linalg.norm(theta) + 1e-12  # Eq. 12 (T4)
                assert l1 + lam * np.linalg.norm(theta) <= (math.sqrt(d) + 1) * u_norm + 1e-12
                w_norm = np.linalg.norm(np.linalg.solve(W, theta))
                assert l1 <= (1 + math.sqrt(d) * gamma) * w_norm + 1e-12  # Lemma A.5 (T5)
            assert float(probs @ np.linalg.norm(atoms @ W, axis=1)) <= math.sqrt(2 * d) + d * gamma
            Wi = np.linalg.inv(W)
            assert np.linalg.eigvalsh(Wi @ (gamma**2 * Ugl @ Ugl) @ Wi).max() <= 1 + 1e-9  # Lemma 5.7 (T6)
            U1i = np.linalg.inv(U1g)
            assert np.linalg.eigvalsh(U1i @ W @ W @ U1i).max() <= 4 * (2 + gamma) ** 2
            assert np.linalg.eigvalsh(W - W0).min() > -1e-10
            e = np.linalg.eigvalsh(W0 @ (Sigma + lam**2 * np.eye(d)) @ W0)
            assert e.min() >= 0.75 - 1e-9 and e.max() <= 1 + 1e-9


def test_population_info_matrix_dispatch():
    p = np.array([0.3, 0.2])
    assert np.allclose(population_info_matrix("ldp", {"basis_probs": p}, 2, 0.1), U_basis(p, 1, 0.1))
    r, q = np.array([1.0, 0.1]), np.array([0.01, 0.99])
    W = population_info_matrix("dp", {"radial": (r, q)}, 5, 0.01, 1.0)
    assert np.allclose(W, 36.392037 * np.eye(5), atol=1e-5)


# ---------------------------------------------------------------------------------------------------------------
# helpers


def test_ball_lsq_interior_boundary_and_optimality():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((6, 3))
    b = A @ np.array([0.2, -0.1, 0.3])
    assert np.allclose(ball_lsq(A, b), [0.2, -0.1, 0.3])
    b_far = A @ np.array([3.0, -2.0, 1.0])
    theta = ball_lsq(A, b_far)
    assert np.linalg.norm(theta) == pytest.approx(1.0, abs=1e-9)
    obj = np.linalg.norm(A @ theta - b_far)
    for z in rng.standard_normal((2000, 3)):
        z /= max(1.0, np.linalg.norm(z))
        assert obj <= np.linalg.norm(A @ z - b_far) + 1e-9
    singular = np.array([[1.0, 0.0], [0.0, 0.0]])
    assert np.allclose(ball_lsq(singular, np.array([0.5, 0.0])), [0.5, 0.0])


def test_proj_ellipsoid():
    rng = np.random.default_rng(1)
    M = rng.standard_normal((3, 3))
    X = msqrt(M @ M.T + np.eye(3))
    v = 3 * rng.standard_normal(3)
    w = proj_ellipsoid(X, v)
    assert np.linalg.norm(X @ w) == pytest.approx(1.0, abs=1e-9)
    for z in rng.standard_normal((2000, 3)):
        z /= max(1.0, np.linalg.norm(X @ z))
        assert np.linalg.norm(v - w) <= np.linalg.norm(v - z) + 1e-9


# ---------------------------------------------------------------------------------------------------------------
# T7 sensitivities on neighbouring datasets, T8 noise scales, T9 data use


def _neighbour_pairs(rng, W, B, n, d):
    """Random base data + adversarial replacement (B·top-eigvec of W, ±1) and random replacements."""
    X = rng.standard_normal((n, d))
    X *= (B * rng.random(n) / np.linalg.norm(X, axis=1))[:, None]
    y = rng.choice([-1.0, 1.0], n)
    vals, vecs = np.linalg.eigh(W)
    top = B * vecs[:, -1]
    for phi_new, y_new in [
        (top, 1.0),
        (-top, -1.0),
        *((B * z / np.linalg.norm(z), 1.0) for z in rng.standard_normal((20, d))),
    ]:
        X2, y2 = X.copy(), y.copy()
        X2[0], y2[0] = phi_new, -y[0] * y_new
        yield X, y, X2, y2


def test_alg4_and_alg5_sensitivities():
    rng = np.random.default_rng(5)
    d, n, B, gamma = 4, 50, 1.5, 0.7
    M = rng.standard_normal((d, d))
    W = msqrt(M @ M.T + 0.5 * np.eye(d)) * 10
    for X, y, X2, y2 in _neighbour_pairs(rng, W, B, n, d):
        dH = epoch_statistic(X, W, dp_weight(gamma)) - epoch_statistic(X2, W, dp_weight(gamma))
        assert np.linalg.norm(dH) <= 2 * B / (gamma * n) + 1e-12
        f1, f2 = iw_central.iw_features(X, W, gamma), iw_central.iw_features(X2, W, gamma)
        assert np.linalg.norm(f1.T @ y / n - f2.T @ y2 / n) <= 2 / (gamma * n) + 1e-12
        assert np.linalg.norm(f1.T @ X / n - f2.T @ X2 / n) <= 2 * B / (gamma * n) + 1e-12


def test_per_user_bounds_alg2_alg3_alg8():
    rng = np.random.default_rng(6)
    d, B = 3, 2.0
    M = rng.standard_normal((d, d))
    U = msqrt(M @ M.T + 0.1 * np.eye(d)) * 5
    X = rng.standard_normal((500, d))
    X *= (B * rng.random(500) / np.linalg.norm(X, axis=1))[:, None]
    X[0] = 0.0
    root = msqrt(U)
    w = ldp_weight(X, U)
    V = np.einsum("i,ij,ik->ijk", w, X @ root, X @ root)
    assert np.all(np.linalg.norm(V, axis=(1, 2)) <= np.linalg.norm(X, axis=1) + 1e-12)
    a = X @ U / np.maximum(np.linalg.norm(X @ U, axis=1), 1e-300)[:, None]
    assert np.all(np.linalg.norm(a, axis=1) <= 1 + 1e-12)
    Psi = a[:, :, None] * X[:, None, :]
    assert np.all(np.linalg.norm(Psi, axis=(1, 2)) <= B + 1e-12)
    Xs = X / B  # Alg 8 requires ‖φ‖ ≤ 1
    theta = rng.standard_normal(d) * 3
    g = Xs * (np.clip(Xs @ theta, -2, 2) - rng.choice([-1, 1], 500))[:, None]
    assert np.all(np.linalg.norm(g, axis=1) <= 3 + 1e-12)


def test_alg16_trajectory_sensitivity():
    rng = np.random.default_rng(8)
    d, n, eta = 3, 200, 0.3
    worst = 0.0
    for _ in range(60):
        X = rng.standard_normal((n, d))
        X /= np.maximum(np.linalg.norm(X, axis=1), 1.0)[:, None]
        y = rng.choice([-1.0, 1.0], n)
        X2, y2 = X.copy(), y.copy()
        i = rng.integers(n)
        z = rng.standard_normal(d)
        X2[i], y2[i] = z / np.linalg.norm(z), -y[i]
        diff = np.linalg.norm(iw_central.sgd_average(X, y, eta) - iw_central.sgd_average(X2, y2, eta))
        worst = max(worst, diff)
    assert worst <= 4 * eta


def test_noise_scales_sympriv_and_stage2():
    rng = np.random.default_rng(9)
    draws = np.array([sym_priv(np.zeros((3, 3)), 2.0, rng) for _ in range(10_000)])
    assert np.allclose(draws, np.transpose(draws, (0, 2, 1)))
    assert draws[:, 0, 0].std() == pytest.approx(2.0, rel=0.02)
    assert draws[:, 0, 2].std() == pytest.approx(2.0, rel=0.02)
    # Alg 5 stage 2 with zero features: ψ̃ is pure noise of std 2σ/(γN₁) (paper), halved for zero-out
    Phi = np.zeros((100, 2))
    eps, delta, gamma = 0.5, 1e-5, 0.2
    expected = 2 * sigma_chen(eps, delta) / (gamma * 100)
    psi = []
    for _ in range(4000):
        _, info = iw_central.iwr_dp_stage2(
            Phi, np.zeros(100), np.eye(2), gamma=gamma, lam=1e9, noise=StageNoise(eps, delta), rng=rng
        )
        psi.append(info["std_psi"])
    assert psi[0] == pytest.approx(expected)
    _, info_z = iw_central.iwr_dp_stage2(
        Phi, np.zeros(100), np.eye(2), gamma=gamma, lam=1.0, noise=StageNoise(eps, delta, neighbour="zero_out"), rng=rng
    )
    assert info_z["std_psi"] == pytest.approx(expected / 2)
    # measured: θ̂ = ψ̃/λ with λ = 1 and Ψ = 0
    thetas = np.array(
        [
            iw_central.iwr_dp_stage2(
                Phi, np.zeros(100), np.eye(2), gamma=gamma, lam=1.0, noise=StageNoise(eps, delta), rng=rng
            )[0]
            for _ in range(10_000)
        ]
    )
    # (Ψ̃ + I)^{-1}ψ̃ with small Ψ noise: check the marginal std against the formula loosely (Ψ noise inflates)
    assert thetas[:, 0].std() >= expected * 0.98


def test_aggregated_ldp_noise_matches_per_user():
    rng = np.random.default_rng(10)
    rows = np.zeros((50, 2))
    agg = np.array([iw_local.noisy_mean(rows, 3.0, rng, per_user=False) for _ in range(6000)])
    per = np.array([iw_local.noisy_mean(rows, 3.0, rng, per_user=True) for _ in range(6000)])
    assert agg[:, 0].std() == pytest.approx(3.0 / math.sqrt(50), rel=0.04)
    assert per[:, 0].std() == pytest.approx(3.0 / math.sqrt(50), rel=0.04)


def test_data_use_disjoint():
    n, K, d = 1003, 4, 3
    s0, s1 = halves(n)
    epochs = epoch_slices(s0.stop - s0.start, K, d)
    used = np.concatenate([np.arange(n)[s0][e] for e in epochs] + [np.arange(n)[s1]])
    assert len(used) == len(set(used.tolist()))
    assert set(np.arange(n)[s1]).isdisjoint(np.arange(n)[s0])
    with pytest.raises(ValueError, match="epoch size"):
        epoch_slices(20, 4, 3)


def test_l2ball_sampler():
    assert l2ball_radius(1.0, 5) == pytest.approx(5.770542, abs=1e-6)
    rng = np.random.default_rng(12)
    v = np.array([0.3, -0.2, 0.1, 0.0, 0.4])
    Z = l2ball_sample(np.tile(v, (400_000, 1)), 1.0, rng)
    assert np.allclose(np.linalg.norm(Z, axis=1), 5.770542, rtol=1e-6)
    se = 5.770542 / math.sqrt(5) / math.sqrt(400_000)
    assert np.all(np.abs(Z.mean(axis=0) - v) < 4 * se)


# ---------------------------------------------------------------------------------------------------------------
# generators, E1, mechanisms


@pytest.mark.parametrize(
    "loader, options", [("iwr_twoscale", {}), ("iwr_gauss", {}), ("iwr_spike", {}), ("iwr_twoscale_1d", {})]
)
def test_generators_exact_quantities(loader, options):
    ds = registry.get_dataset(loader).load(np.random.default_rng(0), n=200_000, **options)
    X, pop = ds.X_train, ds.population
    assert np.linalg.norm(X, axis=1).max() <= 1 + 1e-12 and set(np.unique(ds.y_train)) <= {-1.0, 1.0}
    products = X[:, :, None] * X[:, None, :]
    se = products.std(axis=0) / math.sqrt(len(X)) + 1e-12
    assert np.all(np.abs(products.mean(axis=0) - pop.cov) < 5 * se)
    v = np.random.default_rng(1).standard_normal(ds.d)
    assert np.mean(np.abs(X @ v)) == pytest.approx(l1_functional(pop, v), rel=0.03)
    assert np.mean(ds.y_train * (X @ pop.theta)) == pytest.approx(pop.theta @ pop.cov @ pop.theta, abs=0.01)


def test_c_d_values():
    assert [round(c_d(k), 6) for k in (1, 2, 3, 5, 10)] == [1.0, 0.63662, 0.5, 0.375, 0.25869]


def test_e1_matches_spec_table():
    from dpbench.papers.iwr.e1 import compare_with_spec

    comp = compare_with_spec()
    assert comp["ratio_iw"].between(0.97, 1.03).all()
    assert comp["ratio_ssp"].between(0.98, 1.02).all()


IW_MECHS = [
    "iwr_dp",
    "iwr_dp_erm",
    "ssp_ball",
    "dp_sgd_improper",
    "iwr_ldp",
    "iwr_glm_ldp",
    "ldp_clipped_sgd",
    "ldp_ssp",
]


@pytest.mark.parametrize("name", IW_MECHS)
def test_mechanism_contract(name):
    ds = registry.get_dataset("iwr_gauss").load(np.random.default_rng(0), n=4000, d=3)
    info = registry.get_mechanism(name)
    assert info.privacy_model == ("local" if "ldp" in name else "central")
    out = info.fit(ds.X_train, ds.y_train, 0.5, 1e-5, np.random.default_rng(1))
    assert out.theta.shape == (3,) and np.isfinite(out.theta).all()
    again = info.fit(ds.X_train, ds.y_train, 0.5, 1e-5, np.random.default_rng(1))
    assert np.array_equal(out.theta, again.theta)  # all randomness from rng
    with pytest.raises(ValueError, match="x_bound|‖"):
        info.fit(ds.X_train * 3, ds.y_train, 0.5, 1e-5, np.random.default_rng(1))


@pytest.mark.parametrize("name", ["iwr_dp_oracle", "iwr_ldp_oracle"])
def test_oracle_mechanisms_need_population(name):
    ds = registry.get_dataset("iwr_twoscale").load(np.random.default_rng(0), n=2000, d=3)
    info = registry.get_mechanism(name)
    assert "population" in info.needs
    out = info.fit(ds.X_train, ds.y_train, 0.5, 1e-5, np.random.default_rng(1), population=ds.population)
    assert np.isfinite(out.theta).all()
    with pytest.raises(ValueError, match="population"):
        info.fit(ds.X_train, ds.y_train, 0.5, 1e-5, np.random.default_rng(1))


def test_label_dp_oracle_is_registered_as_label_model():
    ds = registry.get_dataset("iwr_twoscale").load(np.random.default_rng(0), n=3000, d=3)
    info = registry.get_mechanism("iwr_dp_oracle_label")
    assert info.privacy_model == "label"
    oracle = registry.get_mechanism("iwr_dp_oracle").fit(
        ds.X_train, ds.y_train, 0.5, 1e-5, np.random.default_rng(1), population=ds.population
    )
    label = info.fit(ds.X_train, ds.y_train, 0.5, 1e-5, np.random.default_rng(1))
    assert label.info["std"] == pytest.approx(oracle.info["std"])
    assert np.linalg.norm(label.theta - oracle.theta) < 0.5 * np.linalg.norm(oracle.theta - ds.population.theta) + 0.5


def test_one_dimensional_mechanisms():
    ds = registry.get_dataset("iwr_twoscale_1d").load(np.random.default_rng(0), n=20_000, rho=1.0, s=1.0)
    for name in ("ldp_simple_1d", "ldp_laplace_ssp_1d"):
        out = registry.get_mechanism(name).fit(ds.X_train, ds.y_train, 1.0, None, np.random.default_rng(2))
        assert abs(out.theta[0] - ds.population.theta[0]) < 0.3
        assert out.info["b_psi"] == 4.0 and out.info["b_Psi"] == 2.0
        paper = registry.get_mechanism(name).fit(
            ds.X_train, ds.y_train, 1.0, None, np.random.default_rng(2), paper_scale=True
        )
        assert paper.info["epsilon_effective"] == 1.5
    with pytest.raises(ValueError, match="one-dimensional"):
        registry.get_mechanism("ldp_simple_1d").fit(
            np.zeros((10, 2)), np.zeros(10), 1.0, None, np.random.default_rng(0)
        )


def test_nonprivate_iwr_dp_is_close_to_ols_and_literal_noise_flag():
    ds = registry.get_dataset("iwr_gauss").load(np.random.default_rng(2), n=200_000, d=3)
    pop = ds.population

    def err(th):
        return float((th - pop.theta) @ pop.cov @ (th - pop.theta))

    ols = np.linalg.lstsq(ds.X_train, ds.y_train, rcond=None)[0]
    np_iwr = iw_central.fit_iwr_dp(ds.X_train, ds.y_train, 0.5, 1e-5, np.random.default_rng(0), nonprivate=True)
    assert err(np_iwr.theta) <= 6 * err(ols) + 1e-5
    lit = iw_central.fit_iwr_dp(ds.X_train, ds.y_train, 0.5, 1e-5, np.random.default_rng(0), paper_literal_noise=True)
    assert lit.info["epsilon_effective"] == 1.0


def test_iw_configs_validate():
    from dpbench.config import load_config

    configs = sorted((ROOT / "configs" / "info_weighted").glob("iw_*.yaml"))
    assert configs, "no configs/info_weighted/iw_*.yaml"
    for path in configs:
        cfg = load_config(path)
        assert cfg.caption and "not a reproduction" in cfg.caption or "exploratory" in cfg.caption.lower()


def test_e1_command_writes_outputs(tmp_path):
    from dpbench.papers.iwr.e1 import run_e1

    paths = run_e1(tmp_path)
    assert all(p.exists() for p in paths.values())
    assert "TwoScale(5,.01,.1)" in paths["comparison"].read_text()


def test_presets_theory_vs_calibrated():
    from dpbench.mechanisms.iwr._common import loglog_K

    assert loglog_K(10**6, 4) == 4 and loglog_K(10**6, 12) == 12
    cal = iw_central.iwr_dp_hyper(10**6, 5, 0.5, 1e-5)
    assert cal["lam"] == pytest.approx(1e-3)
    sigma = sigma_chen(0.5, 1e-5)
    logk = math.log(4 / 0.05)
    assert cal["gamma"] == pytest.approx(4 * (sigma * math.sqrt(5 + logk) + logk) / (1e-3 * 1e6))
    zero_out = iw_central.iwr_dp_hyper(10**6, 5, 0.5, 1e-5, neighbour="zero_out")
    assert zero_out["gamma"] < cal["gamma"]
    ldp_cal = iw_local.iwr_ldp_hyper(10**7, 2, 1.0, 1e-5)
    ldp_theory = iw_local.iwr_ldp_hyper(10**7, 2, 1.0, 1e-5, preset="theory")
    assert ldp_theory["K"] == 12 and ldp_theory["lam"] > 10 * ldp_cal["lam"]
    assert 0.3 < ldp_theory["lam"] < 1.0  # spec 000 §6.1: ≈ 0.5 at T = 1e7, d = 2, α = 1
    with pytest.raises(ValueError, match="preset"):
        iw_central.iwr_dp_hyper(10**6, 5, 0.5, 1e-5, preset="tuned")


# ---------------------------------------------------------------------------------------------------------------
# figures: E4 θ̂ = 0 annotation, E5 ratio CIs, ablation caption, presets of the E2–E4 configs


def _e5_trials(seed: int = 0):
    import pandas as pd

    rng = np.random.default_rng(seed)
    rows = []
    for rho, s in ((1.0, 1.0), (0.01, 0.1)):
        for n in (10_000, 100_000):
            for eps in (0.5, 1.0):
                for draw in range(3):
                    for trial in range(4):
                        base = abs(rng.standard_normal()) * 0.01
                        for mech, factor in (("ldp_simple_1d", 1.0), ("ldp_laplace_ssp_1d", 1.0 if rho == 1 else 3.0)):
                            rows.append(
                                {
                                    "data.rho": rho,
                                    "data.s": s,
                                    "data.n": n,
                                    "epsilon": eps,
                                    "mechanism": mech,
                                    "data_draw": draw,
                                    "trial": trial,
                                    "abs_error_1d": base * factor,
                                }
                            )
    return pd.DataFrame(rows)


def test_e5_ratio_cis_are_paired_seeded_and_drawn(tmp_path):
    from dpbench.analysis.figures.save import save_figures
    from dpbench.papers.iwr.analyses import e5_tables
    from dpbench.papers.iwr.figures import dodge, e5_ratio_figure

    trials = _e5_trials()
    table, wide = e5_tables(trials, resamples=200)
    # SSP = 3 × Alg 1 in every (data_draw, trial) pair: a paired bootstrap of the ratio of means collapses to 3
    heavy = wide[wide["data.rho"] == 0.01]
    assert np.allclose(heavy["ratio_ssp_over_alg1"], 3) and np.allclose(heavy[["ratio_lo", "ratio_hi"]], 3)
    assert np.allclose(wide.loc[wide["data.rho"] == 1, ["ratio_lo", "ratio_hi"]], 1)
    assert {"ratio_lo", "ratio_hi"} <= set(table.columns)
    # unpaired noise: CI around the ratio, identical for the same seed
    noisy = trials.assign(abs_error_1d=trials["abs_error_1d"] * np.random.default_rng(1).lognormal(0, 0.3, len(trials)))
    _, a = e5_tables(noisy, seed=0, resamples=200)
    _, b = e5_tables(noisy, seed=0, resamples=200)
    assert a[["ratio_lo", "ratio_hi"]].equals(b[["ratio_lo", "ratio_hi"]])
    assert (a["ratio_lo"] <= a["ratio_ssp_over_alg1"]).all() and (a["ratio_ssp_over_alg1"] <= a["ratio_hi"]).all()
    # points of one E|φ|/Eφ² are spread around it (distinct, geometric mean kept)
    pos = dodge(wide)
    for value in wide["E_abs_phi_over_E_phi2"].unique():
        group = pos[wide["E_abs_phi_over_E_phi2"].to_numpy() == value]
        assert len(set(group)) == len(group) and np.exp(np.log(group).mean()) == pytest.approx(value)
    fig = e5_ratio_figure(wide, fits="12 fits per mechanism", resamples=200, seed=3)
    (ax,) = fig.axes
    assert ax.get_xscale() == ax.get_yscale() == "log" and "Laplace SSP / Alg 1" in ax.get_ylabel()
    assert "200 resamples, seed 3" in fig.texts[0].get_text().replace("\n", " ")
    png, pdf = save_figures(fig, tmp_path / "ratio")
    assert png.stat().st_size > 10_000 and pdf.exists()


def test_e5_ratio_kind_draws_a_run_and_the_analysis_writes_its_table(tmp_path):
    """The iwr_e5 analysis draws the iwr_e5_ratio kind (the kinds' table) with its declared options and writes the
    long table with the same ratios, PNG and PDF; a refused option names the field."""
    import pandas as pd

    from dpbench.analysis.figures.kinds import draw
    from dpbench.analysis.runs import load_run
    from dpbench.papers.iwr.analyses import e5_tables

    trials = _e5_trials().assign(label="x", dataset="d", dataset_id="d")
    folder = tmp_path / "e5"
    folder.mkdir()
    trials.to_csv(folder / "trials.csv", index=False)
    (folder / "config.yaml").write_text("name: e5\n")
    run = registry.get_analysis("iwr_e5").run
    written = run([folder], {"resamples": "200"}, echo=lambda _m: None)
    assert [p.name for p in written] == ["iw_e5_table.csv", "iw_e5_ratio.png", "iw_e5_ratio.pdf"]
    table, wide = e5_tables(trials, resamples=200)
    pd.testing.assert_frame_equal(pd.read_csv(written[0]), table.reset_index(drop=True), check_dtype=False)
    assert set(wide["ratio_lo"]) <= set(table["ratio_lo"])  # the figure's points are the table's ratios
    with pytest.raises(ValueError, match="resamples"):
        draw("iwr_e5_ratio", load_run(folder), resamples=5)
    with pytest.raises(ValueError, match="saturation"):
        run([folder], {"saturation": "-1"}, echo=lambda _m: None)


def test_iw_zero_level_annotation_draws_theta_zero_on_top(tmp_path):
    import pandas as pd

    from dpbench.analysis.figures.curves import render

    rows = [
        {
            "dataset": "A",
            "dataset_id": "A",
            "mechanism": mech,
            "label": label,
            "privacy_model": model,
            "epsilon": eps,
            "data_draw": 0,
            "trial": t,
            "err": value * (1 + 0.01 * t),
        }
        for mech, label, model, value in (("iwr_ldp", "IWR-LDP", "local", 0.05), ("zero", "θ = 0", "none", 0.07))
        for eps in (0.5, 1.0)
        for t in range(5)
    ]
    folder = tmp_path / "run"
    folder.mkdir()
    pd.DataFrame(rows).to_csv(folder / "trials.csv", index=False)
    drawing = render(folder, metric="err", logy=True, baseline={"label": "θ = 0"}, annotate="iwr_zero_level")
    (ax,) = drawing.figure.axes
    thick = [line for line in ax.get_lines() if line.get_linewidth() == pytest.approx(2.2)]
    assert len(thick) == 1 and thick[0].get_zorder() > 2
    assert any(text.get_text().startswith("θ̂ = 0: 0.07") for text in ax.texts)


def test_ablation_caption_counts_fits_per_d_and_figure_legend_is_readable():
    import pandas as pd

    from dpbench.papers.iwr.controls import ablation_figure, default_caption

    rows = []
    for d, draws, trials in ((5, 4, 4), (20, 4, 4), (50, 3, 2)):
        for label in ("IWR-DP (W learned)", "AdaSSP", "OLS (non-private)", "θ = 0"):
            for eps in (0.1, 1.0):
                for draw in range(draws):
                    for trial in range(trials):
                        rows.append(
                            {
                                "dataset": "G",
                                "data.d": d,
                                "n": 1_000_000,
                                "data.theta_norm": 0.5,
                                "label": label,
                                "epsilon": eps,
                                "data_draw": draw,
                                "trial": trial,
                                "param_error_sigma": 1e-4 * (1 + draw + trial) / eps,
                            }
                        )
    trials = pd.DataFrame(rows)
    caption = default_caption(trials, "param_error_sigma")
    assert caption.startswith("Synthetic control")
    assert "16 fits per point (4 draws of θ* and data × 4 noise trials) at d = 5, 20; 6 (3 × 2) at d = 50" in caption
    assert "n = 1,000,000" in caption and "‖θ*‖ = 0.5" in caption and "param_error_sigma" not in caption
    fig = ablation_figure(trials, "param_error_sigma", "IWR-DP ablations", caption)
    (legend,) = fig.legends
    assert legend.get_texts()[0].get_fontsize() >= 9 and legend._ncols == 4
    assert fig.axes[0].get_ylabel() != "param_error_sigma" and "param_error_sigma" not in fig.axes[0].get_ylabel()


def test_iw_figure_presets_titles_captions_and_references():
    from dpbench.config import load_config

    root = Path(__file__).resolve().parents[3] / "configs" / "info_weighted"
    e2 = load_config(root / "iw_e2_central_vs_eps.yaml")
    assert "L1" in e2.plots["l1_error"]["title"] and "excess risk" not in e2.plots["l1_error"]["title"]
    assert e2.plot["row"] == "dataset" and e2.plot["panel"] == "data.n"  # n once per panel title
    e3 = load_config(root / "iw_e3_rates.yaml")
    titles = {name: preset["title"] for name, preset in e3.plots.items()}
    assert "·n/d" in titles["scaled_excess_risk"] and "·n/d" not in titles["param_error_sigma"]
    assert e3.plots["param_error_sigma"]["fit"] and e3.plots["param_error_sigma"]["fit_draw"]
    e4 = load_config(root / "iw_e4_ldp.yaml")
    assert "All curves are LOCAL" not in e4.caption and "OLS" in e4.caption
    assert "OLS (non-private)" not in e4.plot["where"]["label"] and e4.plot["annotate"] == "iwr_zero_level"
    assert e4.plot["ref_slopes"][0]["slope"] == -0.5
    mk = (root.parents[1] / "mk" / "info_weighted.mk").read_text()
    assert "figure_param_error_sigma.png $(IWR_FIG)/iw_e3_slopes.png" in mk
