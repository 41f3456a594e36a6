"""Empirical privacy audit (dpbench.audit, `dpbench audit`): statistics, neighbouring pairs, negative controls."""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest
from scipy.stats import binomtest
from typer.testing import CliRunner

from dpbench import audit as A
from dpbench import registry
from dpbench.cli import app
from dpbench.commands.audit import DOC_BEGIN as A_DOC_BEGIN
from dpbench.commands.audit import DOC_END as A_DOC_END
from dpbench.privacy.agm import epsilon_agm, sigma_agm
from dpbench.registry import MechanismInfo

registry.discover()
BUILTIN_PRIVATE = ["adassp", "linmix", "ihm", "dpgd"]
runner = CliRunner()


def gaussian_fit(X, y, epsilon, delta, rng):
    """A test mechanism: XᵀY + N(0, σ²I) with σ = σ_AGM(ε, δ, 1) (exactly (ε, δ)-DP under zero-out, ‖x y‖ ≤ 1)."""
    return X.T @ y + sigma_agm(epsilon, delta, 1.0) * rng.standard_normal(X.shape[1])


def info_for(fit, privacy_model="central", neighbour="zero_out", name="toy") -> MechanismInfo:
    return MechanismInfo(name, fit, "test mechanism", privacy_model, neighbour)


# ------------------------------------------------------------------------------------------------------------
# Clopper–Pearson and the ε lower bound


@pytest.mark.parametrize(("k", "n"), [(0, 50), (3, 50), (25, 50), (50, 50), (7, 1000)])
def test_clopper_pearson_matches_scipy_exact_interval(k, n):
    alpha = 0.025
    lo, hi = A.clopper_pearson(k, n, alpha)
    ci = binomtest(k, n).proportion_ci(confidence_level=1 - 2 * alpha, method="exact")
    assert lo == pytest.approx(ci.low, abs=1e-12)
    assert hi == pytest.approx(ci.high, abs=1e-12)
    if k == 0:
        assert hi == pytest.approx(1 - alpha ** (1 / n))


@pytest.mark.parametrize(("k", "n", "alpha"), [(-1, 5, 0.1), (6, 5, 0.1), (1, 0, 0.1), (1, 5, 0.0), (1, 5, 1.0)])
def test_clopper_pearson_rejects_bad_input(k, n, alpha):
    with pytest.raises(ValueError):
        A.clopper_pearson(k, n, alpha)


def test_identical_laws_give_no_evidence():
    rng = np.random.default_rng(1)
    s1, s0 = rng.standard_normal(5000), rng.standard_normal(5000)
    thresholds = np.quantile(rng.standard_normal(1000), A.THRESHOLD_LEVELS)
    eps, detail = A.epsilon_lower_bound(s1, s0, thresholds, 1e-5)
    assert eps == 0.0 and detail is None


def test_separated_laws_hit_the_ceiling():
    s1, s0 = np.ones(1000), np.zeros(1000)
    eps, detail = A.epsilon_lower_bound(s1, s0, np.array([0.5]), 1e-5)
    assert eps == pytest.approx(A.audit_ceiling(1000, 1e-5, n_thresholds=1))
    assert detail.p_count == 1000 and detail.q_count == 0 and detail.event == "s > t"
    assert A.audit_ceiling(20_000, 1e-5) > A.audit_ceiling(1000, 1e-5) > 3.0


@pytest.mark.parametrize("mu", [0.5, 1.5, 3.0])
def test_gaussian_shift_bound_is_valid_and_informative(mu):
    """N(μ,1) vs N(0,1) is exactly (ε(δ), δ)-DP with ε = ε_AGM(1/μ, δ): ε̂_lower stays below it, and is > 0."""
    delta = 1e-5
    rng = np.random.default_rng(int(mu * 10))
    true_eps = epsilon_agm(1.0 / mu, delta, 1.0)
    thresholds = np.quantile(np.concatenate([rng.normal(mu, 1, 2000), rng.normal(0, 1, 2000)]), A.THRESHOLD_LEVELS)
    s1, s0 = rng.normal(mu, 1, 20_000), rng.normal(0, 1, 20_000)
    eps, detail = A.epsilon_lower_bound(s1, s0, thresholds, delta)
    assert 0.0 < eps <= true_eps
    assert detail.point >= eps  # the raw-frequency estimate is above the confidence bound


def test_bound_uses_both_orders_of_the_pair():
    rng = np.random.default_rng(3)
    s1, s0 = rng.normal(0, 1, 5000), rng.normal(2, 1, 5000)  # D' is the shifted one
    thresholds = np.quantile(np.concatenate([s1, s0]), A.THRESHOLD_LEVELS)
    eps, detail = A.epsilon_lower_bound(s1, s0, thresholds, 1e-5)
    assert eps > 1.0
    assert (detail.p_side, detail.event) in {("D'", "s > t"), ("D", "s <= t")}


def test_fisher_direction_finds_the_shifted_coordinate():
    rng = np.random.default_rng(4)
    out0 = rng.standard_normal((500, 3)) * [1.0, 5.0, 5.0]
    out1 = out0 + [0.5, 0.0, 0.0]
    out1[0] = np.inf  # non-finite outputs do not derail the direction
    w = A.fisher_direction(out1, out0)
    assert abs(w[0]) > 0.99 and np.linalg.norm(w) == pytest.approx(1.0)
    assert np.isinf(A.project(out1[:1], w)[0])


# ------------------------------------------------------------------------------------------------------------
# neighbouring pairs and negative controls


@pytest.mark.parametrize("name", ["adassp", "dpgd"])
def test_neighbouring_pair_follows_the_declared_notion(name):
    info = registry.get_mechanism(name)
    pair = A.neighbouring_pair(info, n=50, d=3, rng=np.random.default_rng(0))
    assert pair.X.shape == pair.X_prime.shape == (50, 3)
    assert np.linalg.norm(pair.X, axis=1).max() <= 1 + 1e-12 and np.abs(pair.y).max() <= 1 + 1e-12
    changed = np.nonzero((pair.X != pair.X_prime).any(axis=1) | (pair.y != pair.y_prime))[0]
    assert changed.tolist() == [pair.canary_index]
    c = pair.canary_index
    if info.neighbour == "zero_out":
        assert not pair.X_prime[c].any() and pair.y_prime[c] == 0.0
    else:
        assert np.array_equal(pair.X_prime[c], pair.X[c]) and pair.y_prime[c] == -pair.y[c] == -1.0


def test_local_and_label_models_use_a_per_record_change():
    for model, neighbour in [("local", "replace_one"), ("label", "replace_one"), ("central", "replace_one")]:
        assert A.neighbour_kind(info_for(gaussian_fit, model, neighbour)) == "label_flip"
    assert A.neighbour_kind(info_for(gaussian_fit)) == "zero_out"


@pytest.mark.parametrize("name", BUILTIN_PRIVATE)
def test_broken_copy_is_restored(name):
    info = registry.get_mechanism(name)
    module = sys.modules[info.fit.__module__]
    before = dict(vars(module))
    with pytest.raises(RuntimeError):
        with A.broken_copy(info, "noise_div10"):
            patched = [attr for attr, _ in A.noise_patches(info)]
            assert all(getattr(module, attr) is not before[attr] for attr in patched)
            raise RuntimeError
    checks = [attr for attr in A.blackbox.BOUND_CHECKS if attr in before]
    assert checks, f"{name}: no input check for the no_bound control to switch off"
    with A.broken_copy(info, "no_bound"):
        assert all(getattr(module, attr) is not before[attr] for attr in checks)
    assert all(vars(module)[key] is value for key, value in before.items())


def test_noise_control_needs_a_declared_patch():
    toy = info_for(gaussian_fit)
    assert not A.broken_available(toy, "noise_div10")
    with pytest.raises(ValueError, match="not available"):
        with A.broken_copy(toy, "noise_div10"):
            pass


# ------------------------------------------------------------------------------------------------------------
# audits (small N in the fast suite; the full N = 20,000 grid is marked slow)


def test_exactly_calibrated_gaussian_is_tight_and_never_exceeded():
    """A mechanism at exactly (ε, δ): no repetition exceeds ε, and the audit recovers a good part of it."""
    toy = info_for(gaussian_fit)
    values = [A.audit(toy, 2.0, 1e-5, trials=3000, seed=s).eps_lower for s in range(4)]
    assert max(values) <= 2.0
    assert min(values) > 0.3  # true ε = 2 needs far more runs to be reached (tails at δ = 1e-5)


def test_generic_mechanism_catches_miscalibration_by_eps_x10():
    toy = info_for(gaussian_fit)
    result = A.audit(toy, 0.5, 1e-5, trials=3000, broken="eps_x10")
    assert result.status == "caught" and result.eps_lower > 0.5


def local_gaussian_fit(X, y, epsilon, delta, rng):
    """A local-DP test mechanism: each user sends x_i y_i + N(0, σ²I), σ = σ_AGM(ε, δ, 2) (per-user change)."""
    messages = X * y[:, None] + sigma_agm(epsilon, delta, 2.0) * rng.standard_normal(X.shape)
    return messages.sum(axis=0)


def test_local_model_pair_passes_and_catches_miscalibration():
    """With few users the aggregate is close to the canary's own message, so the audit has power (n = 4)."""
    toy = info_for(local_gaussian_fit, "local", "replace_one")
    assert A.audit(toy, 1.0, trials=2000, n=4).status == "inconclusive"
    broken = A.audit(toy, 1.0, trials=2000, n=4, broken="eps_x10")
    assert broken.status == "caught" and "per-record change" in broken.pair


@pytest.mark.parametrize("name", BUILTIN_PRIVATE)
def test_builtin_mechanisms_pass_small_n(name):
    info = registry.get_mechanism(name)
    for epsilon in (0.5, 2.0):
        result = A.audit(info, epsilon, trials=1000, pilot=200)
        assert result.status == "inconclusive", (epsilon, result)
        assert result.eps_lower <= epsilon


@pytest.mark.parametrize("name", BUILTIN_PRIVATE)
def test_broken_copies_are_caught_small_n(name):
    info = registry.get_mechanism(name)
    noise = A.audit(info, 2.0, trials=1000, pilot=200, broken="noise_div10")
    bound = A.audit(info, 0.5, trials=1000, pilot=200, broken="no_bound")
    assert noise.status == "caught" and noise.eps_lower > 2.0
    assert bound.status == "caught" and bound.eps_lower > 0.5


def test_nonprivate_reference_reaches_the_ceiling():
    result = A.audit(registry.get_mechanism("ols"), 1.0, trials=500)
    assert result.status == "reference"
    assert result.eps_lower == pytest.approx(result.ceiling)


def test_audit_input_errors_name_the_field():
    info = registry.get_mechanism("adassp")
    with pytest.raises(ValueError, match="epsilon"):
        A.audit(info, 0.0)
    with pytest.raises(ValueError, match="delta"):
        A.audit(info, 1.0, 1.5)
    with pytest.raises(ValueError, match="trials"):
        A.audit(info, 1.0, trials=5)
    with pytest.raises(ValueError, match="broken"):
        A.audit(info, 1.0, broken="sometimes")
    with pytest.raises(ValueError, match="hyper"):
        A.audit(info, 1.0, hyper={"no_such": 1})


def test_mechanism_failures_become_error_rows():
    def failing(X, y, epsilon, delta, rng):
        raise ValueError("needs more data")

    result = A.audit(info_for(failing), 1.0, trials=20)
    assert result.status == "error" and "needs more data" in result.message and math.isnan(result.eps_lower)


def test_time_cap_lowers_n_and_reports_it():
    result = A.audit(registry.get_mechanism("ihm"), 1.0, trials=100_000, pilot=100, max_seconds=0.5)
    assert 100 <= result.trials < 100_000


@pytest.mark.slow
@pytest.mark.parametrize("name", BUILTIN_PRIVATE)
@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_builtin_mechanisms_full_audit(name, epsilon):
    """N = 20,000, seed 0: the honest mechanism passes, and both broken copies are caught at this ε."""
    info = registry.get_mechanism(name)
    assert A.audit(info, epsilon).status == "inconclusive"
    assert A.audit(info, epsilon, broken="noise_div10").status == "caught"
    assert A.audit(info, epsilon, broken="no_bound").status == "caught"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(n for n in registry.MECHANISMS if n not in BUILTIN_PRIVATE and ":" not in n))
def test_every_other_registered_mechanism_passes(name):
    """Every other registered mechanism, audited with the setup its contract declares (N ≤ 2000, ≤ 10 s per audit).

    An error fails the test: a mechanism that cannot run on the audit data declares why (``AuditSetup.skip``);
    tests/test_contract.py checks, in the fast suite, that every other one runs there."""
    info = registry.get_mechanism(name)
    if info.audit.skip:
        pytest.skip(f"declared in the contract: {info.audit.skip}")
    for epsilon in (0.5, 2.0):
        result = A.audit(info, epsilon, trials=2000, max_seconds=10)
        expected = "inconclusive" if info.private else "reference"
        assert result.status == expected, (epsilon, result.status, result.message, result.eps_lower)


# ------------------------------------------------------------------------------------------------------------
# command line


def test_cli_pass_and_table(tmp_path):
    result = runner.invoke(
        app, ["audit", "dpgd", "--mode", "blackbox", "--trials", "400", "-e", "1", "--plot", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    assert "ε̂_lower" in result.output and "inconclusive" in result.output
    assert (tmp_path / "audit_dpgd_eps1.png").stat().st_size > 0


def test_cli_exit_code_when_caught():
    result = runner.invoke(app, ["audit", "dpgd", "--trials", "400", "-e", "2", "--broken", "noise_div10"])
    assert result.exit_code == 1, result.output
    assert "caught" in result.output


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (["audit"], "exactly one"),
        (["audit", "dpgd", "--doc-block", "Bad Name"], "--doc-block"),
        (["audit", "nope"], "unknown mechanism"),
        (["audit", "dpgd", "--broken", "bad"], "--broken"),
        (["audit", "dpgd", "--hyper", "T"], "key=value"),
        (["audit", "dpgd", "--trials", "100", "--hyper", "T=0"], "T: must be an integer ≥ 1, got 0"),
    ],
)
def test_cli_user_errors(args, match):
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert match in result.output


def test_write_doc_replaces_only_the_generated_block(tmp_path):
    doc = tmp_path / "privacy.md"
    doc.write_text(f"# Privacy\n\nintro\n\n{A_DOC_BEGIN}\nold table\n{A_DOC_END}\n\nfooter\n")
    result = runner.invoke(app, ["audit", "dpgd", "--runs", "20000", "--pilot", "20", "--replays", "100", "-e", "1",
                                 "--run-n", "0", "--write-doc", str(doc)])  # fmt: skip
    assert result.exit_code == 0, result.output
    text = doc.read_text()
    assert "old table" not in text and "intro" in text and "footer" in text
    row = "| dpgd | replace_one | central | noisy gradient 1, noisy gradient 2, noisy gradient 3 | none | "
    row += "pair, δ = 1e-05 | 1 |"
    assert row in text and "run: n =" not in text
    assert text.count(A_DOC_BEGIN) == 1


@pytest.mark.slow  # 33 s (two full audits); test_write_doc_replaces_only_the_generated_block covers the doc block
def test_named_doc_blocks_and_several_mechanisms(tmp_path):
    doc = tmp_path / "privacy.md"
    doc.write_text("# Privacy\n")
    args = ["audit", "dpgd", "adassp", "--trials", "200", "-e", "1", "--write-doc", str(doc)]
    assert runner.invoke(app, [*args, "--doc-block", "controls", "--broken", "eps_x10"]).exit_code in (0, 1)
    assert runner.invoke(app, args).exit_code == 0
    text = doc.read_text()
    assert text.count("audit-table:controls:begin") == 1 and text.count(A_DOC_BEGIN) == 1
    assert "| adassp |" in text and "| eps_x10 |" in text


def test_one_pool_runs_whitebox_and_blackbox_audits_in_the_tables_order():
    """`dpbench audit` runs every audit in one pool (costliest kinds dispatched first): a mechanism that declares
    releases gets its white-box row, a non-private reference and a plug-in that declares nothing get the black-box
    audit of θ̂ — the latter routed there by a one-fit probe, without a white-box attempt — in the order asked."""
    from dpbench.audit.request import AuditRequest, auditable, probe_declares_releases, run_audit

    undeclared = "audit_zoo:undeclared_ssp_x04"
    assert probe_declares_releases(registry.get_mechanism("adassp"), 1.0, 1e-5, None)
    assert not probe_declares_releases(auditable(undeclared), 1.0, 1e-5, None)
    lines: list[str] = []
    request = AuditRequest(mechanisms=(undeclared, "dpgd", "zero"), epsilons=(1.0,), runs=20_000, pilot=20,
                           replays=100, run_n=0, trials=200)  # fmt: skip
    outcome = run_audit(request, progress=lines.append)
    assert [r.mechanism for r in outcome.white] == ["dpgd"] and outcome.white[0].status == "pass"
    assert [r.status for r in outcome.black] == ["inconclusive", "reference"], [r.message for r in outcome.black]
    assert len(lines) == 3 and sum("black-box" in line for line in lines) == 2


def test_sorted_tail_epsilon_equals_the_direct_sum():
    """ε from draws of the privacy loss reads only the sorted draws above each bisection point: the same ε (and
    interval) as the direct sum over every draw, to round-off."""
    from dpbench.audit.stats import loss_epsilon

    rng = np.random.default_rng(4)
    l_d, l_dp = 0.5 + rng.standard_normal(200_000), -0.5 + rng.standard_normal(200_000)

    def direct(loss: np.ndarray, shift: float) -> float:  # the definition: bisection on the full mean
        def excess(eps: float) -> float:
            terms = np.where(loss > eps, -np.expm1(eps - loss), 0.0)
            return terms.mean() + shift * terms.std() / math.sqrt(loss.size) - 1e-5

        lo, hi = 0.0, float(loss.max())
        for _ in range(60):
            lo, hi = (lo, (lo + hi) / 2) if excess((lo + hi) / 2) <= 0 else ((lo + hi) / 2, hi)
        return hi

    got = loss_epsilon(l_d, l_dp, 1e-5)
    z = 1.959963984540054
    expected = max(direct(l_d, 0.0), direct(-l_dp, 0.0))
    assert got.eps == pytest.approx(expected, rel=1e-9)
    assert got.eps_lo == pytest.approx(max(direct(l_d, -z), direct(-l_dp, -z)), rel=1e-9)
    assert got.eps_hi == pytest.approx(max(direct(l_d, z), direct(-l_dp, z)), rel=1e-9)
