"""The white-box audit on the registered mechanisms: every private mechanism declares its releases, the audit pair
attains what the issue-15 criteria need, honest mechanisms are never flagged, subtle controls are (slow tests)."""

from __future__ import annotations

import numpy as np
import pytest

from dpbench import registry
from dpbench.audit import audit_whitebox
from dpbench.audit.pairs import find_worst_pair
from dpbench.audit.settings import pair_spec, whitebox_hyper
from dpbench.audit.whitebox import pair_run, slots_of
from dpbench.mechanisms import record_releases

registry.discover()
DELTA = 1e-5
#: private mechanisms without a white-box audit, and why (they get the black-box one)
NOT_WHITEBOX = {
    "iwr_dp_oracle": "needs a synthetic population describing p (the audit pair has none)",
    "iwr_ldp_oracle": "needs a synthetic population describing p (the audit pair has none)",
    "tukey_em": "its main release is an exponential-mechanism draw over depth regions, not a noise-addition law the "
    "white-box statistic models (its calibration is tested piece by piece in "
    "tests/mechanisms/peers/test_tukey_em.py)",
    "diffprivlib_lr": "its Laplace noise is drawn inside diffprivlib, out of reach of `released`",
}
PRIVATE = sorted(k for k, v in registry.MECHANISMS.items() if v.private and ":" not in k and k not in NOT_WHITEBOX)
RANDOMIZERS = sorted(registry.RANDOMIZERS)
LOCAL = [k for k in PRIVATE if registry.MECHANISMS[k].privacy_model == "local"] + RANDOMIZERS
GDP_15 = ["adassp", "dpgd", "ssp_ball", "iwr_dp", "dp_ftrl_identity", *LOCAL]
SPEC004 = ["adassp", "dpgd", "linmix", "ihm"]


def audit(name: str, eps: float, **kw):
    info = registry.get_auditable(name)
    return audit_whitebox(info, eps, DELTA, spec=pair_spec(info), hyper=whitebox_hyper(info, eps), **kw)


@pytest.mark.parametrize("name", PRIVATE)
def test_every_private_mechanism_declares_its_releases(name):
    info = registry.get_mechanism(name)
    hyper = whitebox_hyper(info, 2.0)
    pair, divergence = find_worst_pair(info, pair_spec(info), "local" if info.privacy_model == "local" else "central",
                                       2.0, DELTA, hyper, refine=0)  # fmt: skip
    run = pair_run(info, pair, "D", 2.0, DELTA, np.random.SeedSequence(1), hyper)
    assert run, f"{name} declares no releases"
    assert divergence > 0, f"the audit pair does not reach any release of {name}"
    if info.privacy_model == "local":
        assert any(rp.release.users for rp in run), "a local mechanism must declare its users' reports"
    assert sum(s.kind != "none" for s in slots_of(run, "local" if info.privacy_model == "local" else "central"))


@pytest.mark.parametrize("name", ["adassp", "linmix", "ihm", "dpgd", "ssp_ball", "ldp_simple_1d", "stein_glm_gauss"])
def test_releases_leave_fit_bit_identical(name):
    """Declaring releases changes nothing outside an audit (and recording changes nothing either)."""
    info = registry.get_mechanism(name)
    pair, _ = find_worst_pair(info, pair_spec(info), "central", 1.0, DELTA, {}, refine=0)
    plain = info.fit(pair.X, pair.y, 1.0, DELTA, np.random.default_rng(3), **pair.inputs)
    with record_releases():
        recorded = info.fit(pair.X, pair.y, 1.0, DELTA, np.random.default_rng(3), **pair.inputs)
    assert np.array_equal(np.asarray(plain.theta), np.asarray(recorded.theta))


def test_adassp_exact_epsilon_is_the_issue_number_and_the_audit_is_tight():
    r = audit("adassp", 2.0, runs=200_000, pilot=50)
    assert r.eps_exact == pytest.approx(1.13, abs=0.005) and r.eps_declared == pytest.approx(r.eps_exact)
    assert r.status == "pass" and abs(r.estimate[0] / r.eps_exact - 1) < 0.05


def test_adassp_exact_accounting_spends_the_budget():
    info = registry.get_mechanism("adassp")
    r = audit_whitebox(info, 2.0, DELTA, runs=200_000, pilot=50, spec=pair_spec(info), hyper={"accounting": "exact"})
    assert r.eps_exact == pytest.approx(2.0, rel=1e-6) and r.status == "pass"


@pytest.mark.parametrize("name", ["linmix", "ihm"])
def test_sketch_mechanisms_have_an_exact_epsilon_and_a_tight_estimate(name):
    """Gaussian-mixing sketches: exact ε by Monte Carlo over the exact privacy loss (interval ≤ 3% wide), the
    estimate layer recovers it, the claim is not flagged."""
    r = audit(name, 2.0, runs=100_000, pilot=30)
    lo, hi = r.eps_exact_ci
    assert lo <= r.eps_exact <= hi and hi - lo < 0.03 * r.eps_exact and r.eps_exact < 2.0
    assert r.status == "pass" and abs(r.tightness - 1) < 0.1


def test_sketch_control_hits_its_target_and_is_flagged():
    r = audit("linmix", 2.0, runs=100_000, pilot=30, control="x1.3")
    assert r.noise_factor < 1 and r.eps_exact == pytest.approx(2.6, rel=0.04)
    assert "pld" in r.flags


def test_bandit_ldp_oracles_are_registered_randomizers_not_mechanisms():
    assert set(RANDOMIZERS) == {
        "bandit_iwr_ldp_oracle",
        "bandit_ssp_ols_ldp_oracle",
        "bandit_dimfree_ldp_oracle",
        "bandit_iwr_glm_ldp_oracle",
    }
    assert not set(RANDOMIZERS) & set(registry.MECHANISMS)
    for name in RANDOMIZERS:
        info = registry.RANDOMIZERS[name]
        assert (info.privacy_model, info.neighbour) == ("local", "replace_one")
        with pytest.raises(KeyError):
            registry.get_mechanism(name)


@pytest.mark.parametrize("name", RANDOMIZERS)
def test_bandit_ldp_oracles_audited_per_user(name):
    """One user's reports, worst-case pair: the GDP estimate recovers the exact ε (≤ the claim), no flag."""
    r = audit(name, 2.0, runs=100_000, pilot=30)
    assert r.view == "local" and r.status == "pass" and r.releases
    assert 0 < r.eps_exact <= 2.0 + 1e-9 and r.eps_declared == pytest.approx(2.0, rel=1e-6)
    assert r.method == "gdp" and abs(r.tightness - 1) < 0.1


def test_ldp_laplace_channels_are_audited_per_user():
    r = audit("ldp_simple_1d", 2.0, runs=200_000, pilot=30)
    assert r.view == "local" and r.eps_exact == pytest.approx(2.0, abs=2e-3) and r.eps_lower > 1.9


# ------------------------------------------------------------------------------------------------------------
# the issue's "done when" criteria (slow: full-size runs)


@pytest.mark.slow
@pytest.mark.parametrize("name", GDP_15)
@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_gdp_estimate_within_15_percent_and_certified_half(name, eps):
    r = audit(name, eps)
    assert r.status == "pass", r.flags
    assert abs(r.estimate[0] / r.eps_ref - 1) <= 0.15, (r.estimate, r.eps_ref)
    if eps == 2.0:
        assert r.eps_lower >= 0.5 * r.eps_ref


@pytest.mark.parametrize("name", ["ops", "adaops"])
def test_ops_family_is_audited_white_box(name):
    """OPS / AdaOPS declare θ̂ as a ``posterior`` release (N(θ_λ, H⁻¹/γ), data-dependent H): exact ε by Monte Carlo
    below the claim, the estimate recovers it, no flag."""
    r = audit(name, 2.0, runs=100_000, pilot=30)
    assert "θ̂ (posterior sample)" in r.releases and r.eps_exact_ci is not None
    assert r.status == "pass" and r.eps_exact < 2.0 and abs(r.tightness - 1) < 0.1, (r.flags, r.eps_exact)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(set(SPEC004 + LOCAL + ["ops", "adaops"])))
def test_controls_are_flagged(name):
    for eps in (0.5, 2.0):
        assert {"gdp", "pld", "profile"} & set(audit(name, eps, control="x1.3").flags)
        assert "cert" in audit(name, eps, control="x3").flags


@pytest.mark.slow
@pytest.mark.parametrize("name", PRIVATE + RANDOMIZERS)
def test_honest_mechanisms_are_never_flagged(name):
    """Over 3 seeds, both ε, with the integrity checks (2,000 replays at ε = 0.5, as `dpbench audit` runs them)."""
    for seed in range(3):
        for eps in (0.5, 2.0):
            r = audit(name, eps, seed=seed, replays=2_000 if eps == 0.5 else 0)
            assert r.status == "pass", (seed, eps, r.flags, r.message)


#: cheap built-ins whose integrity checks run in the default suite (every one runs in the slow test above)
INTEGRITY_QUICK = [
    "adassp",
    "objpert",
    "dpgd",
    "ihm",
    "linmix",
    "ldp_ssp",
    "dp_sgd_improper",
    "ldp_simple_1d",
    "bandit_ssp_ols_ldp_oracle",
]


@pytest.mark.parametrize("name", INTEGRITY_QUICK)
def test_builtin_declarations_survive_the_integrity_checks(name):
    """Release replay, recording invariance, scale/sensitivity on the pair family, atoms: nothing found."""
    from dpbench.audit.integrity import check_integrity, integrity_pairs, integrity_runs

    info = registry.get_auditable(name)
    spec = pair_spec(info)
    view = "local" if info.privacy_model == "local" else "central"
    hyper = whitebox_hyper(info, 1.0)
    pair, _ = find_worst_pair(info, spec, view, 1.0, DELTA, hyper, refine=0)
    pairs = integrity_pairs(info, spec, pair, 0)
    result = check_integrity(info, pairs, integrity_runs(info, pairs, 1.0, DELTA, hyper, 120, 0))
    assert len(pairs) >= 3 and result.runs == 120
    assert not result.findings, result.summary()
    assert any(declared is not None for _, declared in result.sensitivity.values())


def test_tree_nodes_whitened_by_sigma_give_the_known_covariance_likelihood_ratio():
    """DP-FTRL-Σ: a node block + N(0, σ²Σ) is declared as L⁻¹(node) with noise N(0, σ²I); its Gaussian likelihood
    ratio equals (r − m̄)ᵀ(σ²Σ)⁻¹(m_D − m_D′) in the original coordinates."""
    from dpbench.audit.whitebox import ReleasePair, observed_llr
    from dpbench.mechanisms.gradient.dp_ftrl.covariance import NoiseCovariance
    from dpbench.mechanisms.gradient.dp_ftrl.engines import TreeNodes

    cov_matrix = np.array([[2.0, 0.6], [0.6, 0.5]])
    cov, sigma, rng = NoiseCovariance.dense(cov_matrix), 0.7, np.random.default_rng(2)
    residuals = []
    for _ in range(3000):
        z = sigma * cov.sample(rng, 1)[0]
        with record_releases() as rec:
            TreeNodes(1, 2, cov).declare(1, np.array([1.0, 0.0]), np.array([1.0, 0.0]) + z, sigma, z)
        (release,) = rec.releases
        residuals.append((release.value - release.centre) / sigma)
    assert np.allclose(np.cov(np.array(residuals).T), np.eye(2), atol=0.08)
    g_d, g_dp = np.array([1.0, 0.0]), np.zeros(2)
    node = g_d + sigma * cov.sample(rng, 1)[0]
    chol = np.linalg.cholesky(cov_matrix)
    whiten = lambda v: np.linalg.solve(chol, v)  # noqa: E731
    from dpbench.mechanisms import Release

    rp = ReleasePair(Release("node", whiten(node), whiten(g_d), scale=sigma), whiten(g_d), whiten(g_dp), "D")
    direct = (node - (g_d + g_dp) / 2) @ np.linalg.solve(sigma**2 * cov_matrix, g_d - g_dp)
    assert observed_llr(rp) == pytest.approx(direct, rel=1e-10)
