"""Tests of the Stein-lemma NLDP GLM estimators (spec 003): calibrations (§2.3, §3.9), root solver (§3.1, C3),
population constants (C2), public-term variance (C4), private-OLS first order (C5), regime threshold (C7),
noiseless limit (C9), linear family (C10), sign symmetry (C11), the §2.4 aggregation shortcut, the LDP data flow,
loaders and metrics."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from scipy import stats as sps

from dpbench import registry
from dpbench.data import DataUnavailableError
from dpbench.linalg import gram_stats, symmetric_gaussian
from dpbench.mechanisms.stein import core as stein_core
from dpbench.mechanisms.stein.calibration import (
    clip_radius,
    log_term,
    n_star,
    stein_noise_scales,
    two_round_noise_scales,
)
from dpbench.mechanisms.stein.core import UserChannel, noise_sums, simulate_user_sums, solve_scale
from dpbench.mechanisms.stein.families import FAMILIES, get_family
from dpbench.mechanisms.stein.glm import fit_nonprivate_stein, stein_fit
from dpbench.mechanisms.stein.two_round import projection_interval, two_round_fit
from dpbench.papers.stein.generators import load as load_synth
from dpbench.papers.stein.generators import stein_constant
from dpbench.papers.stein.metrics import glm_accuracy, stein_err2, stein_errinf
from dpbench.privacy.agm import sigma_classical

# spec 003 §3.9: n, ε, δ, Λ, s_xx = s_xy, 2-round s_xx, 2-round s_y (r = 1, B_y = 1, Δ_y = 1)
VECTORS = [
    (100_000, 10, 3.162278e-06, 13.580509, 2.084649, 4.169299, 1.042325),
    (700_000, 4, 3.718709e-07, 15.721010, 5.607318, 11.214637, 2.803659),
    (350_000, 15, 7.971227e-07, 14.958548, 1.458574, 2.917148, 0.729287),
    (180_000, 0.2, 1.656534e-06, 14.227074, 106.684860, 213.369719, 53.342430),
]


@pytest.mark.parametrize("n, eps, delta, lam, s1, s2r, sy", VECTORS)
def test_noise_scales_match_spec_vectors(n, eps, delta, lam, s1, s2r, sy):
    d = n**-1.1
    assert d == pytest.approx(delta, rel=1e-6)
    assert log_term(d) == pytest.approx(lam, abs=1e-6)
    one = stein_noise_scales(eps, d, 1.0, 1.0, calibration="classical")
    assert one.s_xx == pytest.approx(s1, abs=1e-6) and one.s_xy == pytest.approx(s1, abs=1e-6)
    two = two_round_noise_scales(eps, d, 1.0, 1.0, 1.0, calibration="classical")
    assert two.s_xx == pytest.approx(s2r, abs=1e-6) and two.s_xy == pytest.approx(s2r, abs=1e-6)
    assert two.s_y == pytest.approx(sy, abs=1e-6)
    # C12 composition: (ε, δ) for Alg 1–4, (ε, 1.5δ) for the 2-round baselines
    assert (one.epsilon_spent, one.delta_spent) == (eps, d)
    assert two.delta_spent == pytest.approx(1.5 * d)


def test_noise_scales_are_gaussian_mechanism_round_trip():
    """C1: s = √(2 log(1.25/δ'))Δ/ε' with (ε/2, δ/2, 2r²), (ε/2, δ/2, 2rB_y); inverting gives back ε/2."""
    eps, delta, r, b = 7.0, 1e-6, 3.3, 2.1
    sc = stein_noise_scales(eps, delta, r, b, calibration="classical")
    assert sc.s_xx == pytest.approx(sigma_classical(eps / 2, delta / 2, 2 * r**2), rel=1e-12)
    assert sc.s_xy == pytest.approx(sigma_classical(eps / 2, delta / 2, 2 * r * b), rel=1e-12)
    eps_back = math.sqrt(2 * math.log(1.25 / (delta / 2))) * 2 * r**2 / sc.s_xx
    assert eps_back == pytest.approx(eps / 2, rel=1e-12)
    assert sc.s_xx**2 == pytest.approx(32 * log_term(delta) * r**4 / eps**2, rel=1e-12)
    analytic = stein_noise_scales(eps, delta, r, b, calibration="analytic")
    assert analytic.s_xx < sc.s_xx  # the analytic GM is tighter
    with pytest.raises(ValueError, match="calibration"):
        stein_noise_scales(eps, delta, r, b, calibration="bogus")
    with pytest.raises(ValueError, match="epsilon"):
        stein_noise_scales(0.0, delta, r, b)


def test_gaussian_example_of_spec():
    """§3.9 Gaussian example: n = 10⁵, p = 10, ‖Σ_m‖₂ = 0.25, ε = 10."""
    n, eps = 100_000, 10.0
    d = n**-1.1
    r = clip_radius(10, 0.25, n)
    assert r == pytest.approx(23.992630, abs=1e-6)
    sc = stein_noise_scales(eps, d, r, 1.0, calibration="classical")
    assert sc.s_xx == pytest.approx(1200.0206, abs=1e-3)
    assert sc.s_xy == pytest.approx(50.016219, abs=1e-5)
    assert math.sqrt(n) * sc.s_xx == pytest.approx(379_479.84, abs=0.05)
    assert math.sqrt(n) * sc.s_xy == pytest.approx(15_816.517, abs=1e-3)
    b_sig = FAMILIES["sigmoid"].y_bound(r, 0.05)
    assert b_sig == pytest.approx(6.548157, abs=1e-6)
    assert stein_noise_scales(eps, d, r, b_sig, calibration="classical").s_xy == pytest.approx(327.5141, abs=1e-3)
    # Bernoulli NLR bounds (§3.5): cubic 1.05, logistic-link 1 + log 2 + 0.05
    assert FAMILIES["cubic"].y_bound(1.0) == pytest.approx(1.05)
    assert FAMILIES["logistic_link"].y_bound(1.0) == pytest.approx(1.743147, abs=1e-6)


def test_regime_threshold_n_star():
    """C7: Bernoulli n* = 512 p⁵ Λ/ε²; Gaussian (Σ = s²I) n* = 204800 p³ log²n Λ/ε² (s cancels)."""
    n, eps = 700_000, 10.0
    d = n**-1.1
    for p in (5, 10):
        s = stein_noise_scales(eps, d, 1.0, 1.0, calibration="classical").s_xx
        assert n_star(p, s, 1.0 / p**2) == pytest.approx(512 * p**5 * log_term(d) / eps**2, rel=1e-12)
    s_classical = stein_noise_scales(eps, d, 1.0, 1.0, calibration="classical").s_xx
    assert n_star(5, s_classical, 1 / 25) == pytest.approx(2.5e5, rel=0.01)
    p, s_cov = 10, 0.37
    r = clip_radius(p, s_cov**2, n)
    got = n_star(p, stein_noise_scales(4.0, d, r, 1.0, calibration="classical").s_xx, s_cov**2)
    assert got == pytest.approx(204_800 * p**3 * math.log(n) ** 2 * log_term(d) / 16.0, rel=1e-12)
    assert got > 1e10  # the paper's n ≤ 7·10⁵ is far below n* (§6.6)


# ---------------------------------------------------------------------------------------------------------------
# population constants and the root solver


@pytest.mark.parametrize(
    "s, kappa_log, c_log",
    [(0.25, 0.246211, 4.061562), (0.5, 0.236044, 4.236491), (0.75, 0.222065, 4.503178), (1.0, 0.206621, 4.839780)],
)
def test_stein_constants_table(s, kappa_log, c_log):
    """C2 reference values and closed forms."""
    assert stein_constant(FAMILIES["logistic"], s) == pytest.approx(kappa_log, abs=1e-6)
    assert 1 / stein_constant(FAMILIES["logistic"], s) == pytest.approx(c_log, abs=1e-5)
    assert 1 / stein_constant(FAMILIES["exponential"], s) == pytest.approx(math.exp(-(s**2) / 2), rel=1e-10)
    assert 1 / stein_constant(FAMILIES["cubic"], s) == pytest.approx(1 / s**2, rel=1e-10)
    assert 1 / stein_constant(FAMILIES["logistic_link"], s) == pytest.approx(-2.0, rel=1e-10)


def test_ols_is_kappa_times_w_star():
    """C2 Monte Carlo: ‖w̃_ols − κw*‖/κ ≤ 0.02 (n = 10⁶, p = 5, s = 0.5, soft labels, no intercept)."""
    rng = np.random.default_rng(3)
    p, n, s = 5, 1_000_000, 0.5
    w = rng.standard_normal(p)
    w /= np.linalg.norm(w)
    X = s * rng.standard_normal((n, p))
    for fam in ("logistic", "exponential"):
        family = FAMILIES[fam]
        y = family.mean(X @ w)
        w_ols = np.linalg.solve(X.T @ X, X.T @ y)
        kappa = stein_constant(family, s)
        assert np.linalg.norm(w_ols - kappa * w) / kappa < 0.02


def test_solve_scale_recovers_population_constant():
    """C3: u = κ s Z (m = 10⁶) gives c within 0.5 %; u ≡ 0 gives 1/h(0); cubic closed form."""
    rng = np.random.default_rng(0)
    z = rng.standard_normal(1_000_000)
    for s, c_ref in ((0.5, 4.236491), (1.0, 4.839780)):
        kappa = stein_constant(FAMILIES["logistic"], s)
        sol = solve_scale(kappa * s * z, FAMILIES["logistic"])
        assert sol.status == "newton"
        assert sol.c == pytest.approx(c_ref, rel=5e-3)
    kappa = stein_constant(FAMILIES["exponential"], 0.5)
    assert solve_scale(kappa * 0.5 * z, FAMILIES["exponential"]).c == pytest.approx(math.exp(-0.125), rel=5e-3)
    assert solve_scale(np.zeros(10), FAMILIES["logistic"]).c == pytest.approx(4.0, abs=1e-10)
    assert solve_scale(np.zeros(10), FAMILIES["exponential"]).c == pytest.approx(1.0, abs=1e-10)
    u = rng.standard_normal(1000) * 0.3
    assert solve_scale(u, FAMILIES["cubic"]).c == pytest.approx(np.mean(u**2) ** (-1 / 3), abs=1e-10)
    assert solve_scale(0.5 * z[:10000], FAMILIES["linear"]).c == pytest.approx(1.0, abs=1e-12)


def test_solve_scale_negative_roots():
    """C3: logistic link → −2; literal sigmoid f = 1/(1+e^{z}) → −c_logistic."""
    rng = np.random.default_rng(1)
    z = rng.standard_normal(200_000)
    s = 0.5
    kll = stein_constant(FAMILIES["logistic_link"], s)
    sol = solve_scale(kll * s * z, FAMILIES["logistic_link"])
    assert sol.c == pytest.approx(-2.0, rel=5e-3)
    kappa = stein_constant(FAMILIES["logistic"], s)
    lit = solve_scale(-kappa * s * z, FAMILIES["sigmoid_literal"])
    pos = solve_scale(kappa * s * z, FAMILIES["sigmoid"])
    assert lit.c < 0 and lit.c == pytest.approx(-pos.c, rel=1e-10)


def test_solve_scale_fallbacks():
    """Bracket + Brent after a forced Newton failure; no root → (c0, 'no_root') (§3.1, A26)."""
    rng = np.random.default_rng(2)
    u = 0.1 * rng.standard_normal(500)
    newton = solve_scale(u, FAMILIES["logistic"])
    bracket = solve_scale(u, FAMILIES["logistic"], max_iter=1)
    assert bracket.status == "bracket" and bracket.c == pytest.approx(newton.c, rel=1e-9)
    none = solve_scale(np.full(50, 100.0), FAMILIES["logistic"])  # max_c c·h(100c) ≈ 0.0045 < 1
    assert none.status == "no_root" and none.c == 4.0
    with pytest.raises(ValueError, match="u must be"):
        solve_scale(np.zeros((2, 2)), FAMILIES["logistic"])


def test_delta_method_variance_of_c_hat():
    """C4: Var(ĉ) ≈ c² Var[h(cU)] / (m (E[h(cU) + cU h'(cU)])²), ±10 %, ratio m = 500 vs 2000 ≈ 4."""
    fam = FAMILIES["logistic"]
    s = 0.5
    kappa = stein_constant(fam, s)
    c = 1 / kappa
    rng = np.random.default_rng(4)
    big = kappa * s * rng.standard_normal(4_000_000)
    hc = fam.h(c * big)
    predicted = c**2 * np.var(hc) / np.mean(hc + c * big * fam.h_prime(c * big)) ** 2
    variances = {}
    for m in (500, 2000):
        cs = np.array([solve_scale(kappa * s * rng.standard_normal(m), fam).c for _ in range(3000)])
        variances[m] = cs.var()
        assert variances[m] == pytest.approx(predicted / m, rel=0.10)
    assert variances[500] / variances[2000] == pytest.approx(4.0, rel=0.15)


def test_private_ols_first_order_error():
    """C5: E‖ŵ_ols − w̃_ols‖² ≈ tr(A₀⁻¹ M A₀⁻¹), M = S₂²I + S₁²(‖w̃‖²I + w̃w̃ᵀ − diag(w̃∘w̃)), ±3 %."""
    rng = np.random.default_rng(5)
    n, p = 2000, 4
    X = rng.standard_normal((n, p))
    y = X @ np.array([0.5, -0.2, 0.1, 0.3]) + 0.1 * rng.standard_normal(n)
    A0, b0 = X.T @ X, X.T @ y
    w = np.linalg.solve(A0, b0)
    lam = np.linalg.eigvalsh(A0)[0]
    S1 = 0.05 * lam / (2 * math.sqrt(p))  # ‖E1‖₂ ≈ 2√p S1 ≤ 0.05 λ_min
    S2 = 5.0
    M = S2**2 * np.eye(p) + S1**2 * (w @ w * np.eye(p) + np.outer(w, w) - np.diag(w * w))
    A0inv = np.linalg.inv(A0)
    formula = np.trace(A0inv @ M @ A0inv)
    errs = []
    for _ in range(20_000):
        E1, E2 = noise_sums(p, 1, S1, S2, rng, "central")
        errs.append(np.sum((np.linalg.solve(A0 + E1, b0 + E2) - w) ** 2))
    assert np.mean(errs) == pytest.approx(formula, rel=0.03)


# ---------------------------------------------------------------------------------------------------------------
# aggregation shortcut and the LDP data flow


def test_aggregation_shortcut_matches_per_user_noise():
    """§2.4: Σ_i E_{1,i} =_d Sym_p(n s²), Σ_i E_{2,i} =_d N(0, n s² I): moments and KS on entries."""
    rng = np.random.default_rng(6)
    n, p, s1, s2, reps = 50, 3, 2.0, 0.7, 300
    X = np.zeros((n, p))
    y = np.zeros(n)
    per_user = [simulate_user_sums(X, y, rng, UserChannel(1.0, s1, s2, False)) for _ in range(reps)]
    shortcut = [noise_sums(p, n, s1, s2, rng) for _ in range(reps)]
    for k, std in ((0, s1), (1, s2)):
        a = np.array([np.ravel(t[k]) for t in per_user])
        b = np.array([np.ravel(t[k]) for t in shortcut])
        assert np.allclose(a.std(axis=0), math.sqrt(n) * std, rtol=0.15)
        assert np.allclose(b.std(axis=0), math.sqrt(n) * std, rtol=0.15)
        assert sps.ks_2samp(a[:, 0], b[:, 0]).pvalue > 1e-3
    Z = per_user[0][0]
    assert np.allclose(Z, Z.T)  # symmetric, diagonal included in the noise


def test_simulated_users_and_shortcut_estimators_agree_in_distribution():
    """The full estimator with explicit per-user noise and with the shortcut: same error distribution (KS)."""
    ds = load_synth(np.random.default_rng(7), covariates="bernoulli", n=400, p=3)
    errs = {True: [], False: []}
    for sim in (True, False):
        for t in range(150):
            f = stein_fit(
                ds.X_train,
                ds.y_train,
                30.0,
                1e-3,
                np.random.default_rng(1000 + t),
                ds.X_public,
                covariates="l1",
                r=1.0,
                simulate_users=sim,
            )
            errs[sim].append(f.info["ols_norm"])
    assert sps.ks_2samp(errs[True], errs[False]).pvalue > 1e-3


def test_only_the_user_release_touches_private_data(monkeypatch):
    """Per-user simulation: the server sees only Σ releases + public rows: spy the randomizer, swap the data."""
    ds = load_synth(np.random.default_rng(8), covariates="gauss_diag", n=300, p=4)
    seen = []
    fixed = (np.eye(4) * 300.0, np.full(4, 7.0) / 4)

    def spy(X, y, rng, channel):  # the batch randomizer: one release per row (user)
        seen.extend(X.copy())
        c = X.shape[0]
        upper = (fixed[0] / 300)[np.triu_indices(4)]
        return np.broadcast_to(upper, (c, upper.size)), np.broadcast_to(fixed[1] / 300, (c, 4))

    monkeypatch.setattr(stein_core, "user_releases", spy)
    a = stein_fit(ds.X_train, ds.y_train, 5.0, 1e-4, np.random.default_rng(0), ds.X_public, simulation="per_user")
    assert len(seen) == 300 and np.allclose(np.array(seen), ds.X_train)
    other = np.random.default_rng(9).standard_normal(ds.X_train.shape)
    b = stein_fit(other, -ds.y_train, 5.0, 1e-4, np.random.default_rng(0), ds.X_public, simulation="per_user")
    assert np.array_equal(a.theta, b.theta)  # nothing else about (X, y) reaches the output


def test_clipping_radius_comes_from_public_data_only():
    ds = load_synth(np.random.default_rng(10), n=5000, p=5)
    f1 = stein_fit(ds.X_train, ds.y_train, 5.0, 1e-4, np.random.default_rng(0), ds.X_public)
    f2 = stein_fit(10 * ds.X_train, ds.y_train, 5.0, 1e-4, np.random.default_rng(0), ds.X_public)
    sig_m = ds.X_public.T @ ds.X_public / ds.X_public.shape[0]
    r = math.sqrt(20 * 5 * np.linalg.eigvalsh(sig_m)[-1] * math.log(5000))
    assert f1.info["r"] == pytest.approx(r) and f2.info["r"] == pytest.approx(r)
    assert f2.info["n_clipped"] > 0 and f1.info["n_clipped"] == 0


# ---------------------------------------------------------------------------------------------------------------
# estimator-level checks


def test_noiseless_limit_is_accurate():
    """C9: noise off, large n and m: err2 < 1e−3 (Gaussian, p = 5, n = 10⁶)."""
    ds = load_synth(np.random.default_rng(21), n=1_000_000, p=5, m=200_000)
    assert ds.meta["s"] > 0.5  # a tiny s makes the un-centred finite-n term of w̃_ols large (C2 note)
    st = gram_stats(ds.X_train, ds.y_train)
    f = fit_nonprivate_stein(st.X, st.y, 1.0, 0.5, None, public_X=ds.X_public, stats=st)
    assert stein_err2(f.theta, ds, st) < 1e-3
    assert f.info["c_hat"] == pytest.approx(ds.population.extra["c_true"], rel=0.01)


def test_linear_family_is_plain_private_ols():
    """C10: ĉ ≡ 1 and ŵ = ŵ_ols exactly."""
    ds = load_synth(np.random.default_rng(12), n=3000, p=4)
    f = stein_fit(ds.X_train, ds.y_train, 8.0, 1e-4, np.random.default_rng(1), ds.X_public, family="linear")
    assert f.info["c_hat"] == 1.0
    rng = np.random.default_rng(1)
    r = f.info["r"]
    E1, E2 = noise_sums(4, 3000, f.info["s_xx"], f.info["s_xy"], rng)
    Xb = stein_core.clip_rows_l2(ds.X_train, r)
    A = (Xb.T @ Xb + E1 + ds.X_public.T @ ds.X_public) / (3000 + ds.X_public.shape[0])
    assert np.allclose(f.theta, np.linalg.solve(A, (Xb.T @ ds.y_train + E2) / 3000), rtol=1e-10, atol=1e-12)


def test_sign_symmetry_of_literal_sigmoid():
    """C11: data of f = 1/(1+e^{z}) with w* equal data of σ with −w*; estimates are exact negatives."""
    ds = load_synth(np.random.default_rng(13), n=20_000, p=3, family="sigmoid_literal")
    kw = dict(epsilon=None, delta=None, public_X=ds.X_public)
    lit = stein_fit(ds.X_train, ds.y_train, rng=None, family="sigmoid_literal", **kw)
    pos = stein_fit(ds.X_train, ds.y_train, rng=None, family="sigmoid", **kw)
    assert lit.info["c_hat"] < 0 < pos.info["c_hat"]
    assert np.allclose(lit.theta, -pos.theta, rtol=1e-8)
    assert stein_err2(lit.theta, ds, None) < 0.05


def test_literal_ldp_is_noise_dominated_and_central_is_not():
    """§6.6: at p = 10, n = 10⁵, ε = 10 the literal estimate has err2 ≈ 1 (ŵ ≈ 0); the diagnostic ≪ 1."""
    ds = load_synth(np.random.default_rng(14), n=100_000, p=10)
    st = gram_stats(ds.X_train, ds.y_train)
    d = 100_000**-1.1
    lit = [
        stein_err2(stein_fit(st.X, st.y, 10.0, d, np.random.default_rng(t), ds.X_public, stats=st).theta, ds, st)
        for t in range(7)
    ]
    cen = registry.get_mechanism("stein_central_diagnostic")
    central = [
        stein_err2(cen.fit(st.X, st.y, 10.0, d, np.random.default_rng(t), public_X=ds.X_public, stats=st).theta, ds, st)
        for t in range(7)
    ]
    assert 0.5 < np.median(lit) < 3.0
    assert np.median(central) < 0.2
    info = stein_fit(st.X, st.y, 10.0, d, np.random.default_rng(0), ds.X_public, stats=st).info
    assert info["noise_dominated"] is True and info["root_status"] in stein_core.ROOT_STATUSES


def test_registered_mechanisms_and_input_errors():
    for name in ("stein_glm_gauss", "stein_glm_l1", "stein_nlr_gauss", "stein_nlr_l1"):
        assert registry.get_mechanism(name).privacy_model == "local"
        assert registry.get_mechanism(name.replace("stein_", "stein_twostage_")).privacy_model == "local"
    assert registry.get_mechanism("stein_central_diagnostic").privacy_model == "central"
    ds = load_synth(np.random.default_rng(15), covariates="bernoulli", n=2000, p=4, family="cubic")
    nlr = registry.get_mechanism("stein_nlr_l1").fit
    out = nlr(ds.X_train, ds.y_train, 5.0, 1e-4, np.random.default_rng(0), public_X=ds.X_public, family="cubic")
    assert out.info["y_bound"] == pytest.approx(1.05)
    with pytest.raises(ValueError, match="family"):
        registry.get_mechanism("stein_glm_l1").fit(
            ds.X_train, ds.y_train, 5.0, 1e-4, np.random.default_rng(0), public_X=ds.X_public, family="cubic"
        )
    with pytest.raises(ValueError, match="ℓ1"):
        nlr(2 * ds.X_train, ds.y_train, 5.0, 1e-4, np.random.default_rng(0), public_X=ds.X_public, family="cubic")
    with pytest.raises(ValueError, match="public_X"):
        nlr(ds.X_train, ds.y_train, 5.0, 1e-4, np.random.default_rng(0), public_X=None, family="cubic")
    with pytest.raises(ValueError, match="family must be"):
        get_family("probit")


def test_two_round_baseline_runs_and_projects():
    assert projection_interval(FAMILIES["logistic"], 1.0) == (0.0, 1.0)
    assert projection_interval(FAMILIES["cubic"], 1.0) == pytest.approx((-(1 / 3 + 0.05), 1 / 3 + 0.05))
    lo, hi = projection_interval(FAMILIES["logistic_link"], 1.0)
    assert hi == pytest.approx(math.log(1 + math.e) + 0.05)
    ds = load_synth(np.random.default_rng(16), n=5000, p=3)
    logistic = functools.partial(two_round_fit, ds.X_train, ds.y_train, 10.0, 1e-4, family="logistic", r=None)
    f = logistic(
        np.random.default_rng(0),
        covariates="gaussian",
        sigma_op_norm=ds.population.extra["sigma_op_norm"],
        calibration="classical",
    )
    assert f.info["r"] == pytest.approx(math.sqrt(10 * 3 * ds.population.extra["sigma_op_norm"] * math.log(5000)))
    assert f.info["s_y"] == pytest.approx(math.sqrt(8 * log_term(1e-4)) / 10.0)
    assert f.info["delta_spent"] == pytest.approx(1.5e-4)
    with pytest.raises(ValueError, match="sigma_op_norm"):
        logistic(np.random.default_rng(0), covariates="gaussian", sigma_op_norm=None)


# ---------------------------------------------------------------------------------------------------------------
# data and metrics


def test_synthetic_generators():
    b = load_synth(np.random.default_rng(17), covariates="bernoulli", n=1000, p=5, family="exponential")
    assert np.allclose(np.abs(b.X_train).sum(axis=1), 1.0) and b.X_public.shape == (40, 5)
    assert np.allclose(b.population.cov, np.eye(5) / 25)
    assert np.allclose(b.y_train, np.exp(b.X_train @ b.population.theta))
    g = load_synth(np.random.default_rng(18), covariates="gauss_nondiag", n=100, p=6)
    sig = g.population.cov
    assert np.allclose(sig, sig.T)
    eig = np.linalg.eigvalsh(sig)
    assert eig.min() >= -1e-12 and eig.max() <= 2 + 1e-12
    assert np.linalg.norm(g.population.theta) == pytest.approx(1.0)
    nl = load_synth(np.random.default_rng(19), covariates="bernoulli", n=500, p=4, family="cubic")
    resid = nl.y_train - (nl.X_train @ nl.population.theta) ** 3 / 3
    assert np.abs(resid).max() <= 0.05 and np.abs(resid).max() > 0.04
    with pytest.raises(ValueError, match="covariates"):
        load_synth(np.random.default_rng(0), covariates="uniform")
    with pytest.raises(ValueError, match="m = 0"):
        load_synth(np.random.default_rng(0), n=50, p=10)


def test_instance_seed_shares_private_instance_across_m():
    a = load_synth(np.random.default_rng(1), n=500, p=3, m=10, instance_seed=7)
    b = load_synth(np.random.default_rng(2), n=500, p=3, m=40, instance_seed=7)
    assert np.array_equal(a.X_train, b.X_train) and np.array_equal(a.population.theta, b.population.theta)
    assert a.X_public.shape == (10, 3) and b.X_public.shape == (40, 3)
    c = load_synth(np.random.default_rng(1), n=500, p=3, m=10)
    assert not np.array_equal(a.X_train, c.X_train)


def test_real_loader_missing_file(monkeypatch, tmp_path):
    from dpbench.papers.stein import datasets as glm_real

    monkeypatch.setenv("DPBENCH_DATA_DIR", str(tmp_path))
    glm_real.read_split.cache_clear()
    with pytest.raises(DataUnavailableError, match="data unavailable"):
        glm_real.load_skin(np.random.default_rng(0), n=100, m=10)
    glm_real.read_split.cache_clear()


def test_skin_loader_recipe():
    from dpbench.papers.stein import datasets as glm_real

    ds = glm_real.load_skin(np.random.default_rng(0), n=20_000, m=500)
    assert ds.X_train.shape == (20_000, 3) and ds.X_public.shape == (500, 3) and ds.X_test.shape == (5_000, 3)
    assert np.abs(ds.X_train).sum(axis=1).max() <= 1 + 1e-12
    assert set(np.unique(ds.y_train)) == {0.0, 1.0}
    assert 0.15 < ds.y_test.mean() < 0.25  # 50,859 / 245,057 skin rows


def test_metrics():
    ds = load_synth(np.random.default_rng(20), n=100, p=2, n_test=4)
    w = ds.population.theta
    assert stein_err2(w, ds, None) == 0.0
    assert stein_err2(np.zeros(2), ds, None) == pytest.approx(1.0)
    assert stein_errinf(2 * w, ds, None) == pytest.approx(1.0)
    ds.X_test = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])
    ds.y_test = np.array([1.0, 0.0, 1.0, 1.0])
    assert glm_accuracy(np.array([1.0, 0.0]), ds, None) == pytest.approx(0.5)  # scores 1, −1, 0, 0
    assert glm_accuracy(np.array([1.0, 0.0, 0.5]), ds, None) == pytest.approx(1.0)  # scores 1.5, −.5, .5, .5


def test_symmetric_noise_includes_diagonal():
    """A23: Sym_p(s²) has iid N(0, s²) upper triangle including the diagonal."""
    rng = np.random.default_rng(21)
    draws = np.array([symmetric_gaussian(3, rng) for _ in range(4000)])
    assert draws[:, 0, 0].std() == pytest.approx(1.0, rel=0.05)
    assert draws[:, 0, 1].std() == pytest.approx(1.0, rel=0.05)


@pytest.mark.parametrize("name", ["skin", "susy"])
def test_real_loader_gathers_preprocessed_rows_bit_for_bit(name):
    """The per-m cache of the preprocessed split (issue 16) gives exactly preprocess() of the drawn private rows."""
    from dpbench.papers.stein import datasets as glm_real

    X_tr, _, X_te, _, X_pool = glm_real.read_split(name)
    idx = np.random.default_rng(4).choice(X_tr.shape[0], size=X_tr.shape[0] // 3, replace=False)
    priv, test, pub = glm_real.preprocess(X_tr[idx], X_te, X_pool[:700])
    ds = glm_real.load_real(name, np.random.default_rng(4), X_tr.shape[0] // 3, 700, "all54")
    assert np.array_equal(ds.X_train, priv) and np.array_equal(ds.X_test, test) and np.array_equal(ds.X_public, pub)
