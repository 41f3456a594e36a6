"""The zoo of broken mechanisms (tests/audit/audit_zoo.py): each is flagged for its reason; the honest bases are not.

CI-sized: ε = 2, 10⁶ batched runs, 400 replays. The slow form adds the branches of probability 10⁻³ (10⁴ replays
each), ε = 0.5 and three seeds of the honest bases."""

from __future__ import annotations

import math

import pytest
from audit_zoo import HONEST, HONEST_UNUSUAL, ZOO, ZOO36, Broken

from dpbench.audit import audit_whitebox
from dpbench.audit.pairs import PairSpec
from dpbench.contract import Bounds
from dpbench.registry import MechanismInfo

DELTA = 1e-5


def info_of(entry: Broken) -> MechanismInfo:
    return MechanismInfo(entry.name, entry.fit, entry.name, entry.model, entry.neighbour,
                         bounds=Bounds(x=1.0, y=1.0, clips=entry.clips, clipped=entry.clipped))  # fmt: skip


def audit(entry: Broken, epsilon: float = 2.0, seed: int = 0, replays: int | None = None):
    replays = replays if replays is not None else (10_000 if entry.rare else 400)
    return audit_whitebox(info_of(entry), epsilon, DELTA, runs=1_000_000, pilot=50, seed=seed, replays=replays,
                          spec=PairSpec())  # fmt: skip


def audit_with_run_setting(entry: Broken, epsilon: float = 2.0, replays: int = 1_000):
    """The audit as ``dpbench audit`` runs it (issue 36): at the audit's pair, then at a run's own setting
    (n = 10⁴, δ = 1/n²) with the same records."""
    from dpbench.audit import request

    info = info_of(entry)
    original = request.auditable
    request.auditable = lambda name: info
    try:
        return request.whitebox_task(entry.name, epsilon, DELTA, "none", 1_000_000, 50, 0, 0.95, {}, replays, 20.0,
                                     10_000)  # fmt: skip
    finally:
        request.auditable = original


def assert_caught(entry: Broken, r) -> None:
    if entry.expected == ("error",):
        assert r.status == "error", (r.status, r.flags)
        return
    assert r.status == "FAIL", (entry.name, r.flags, r.message)
    assert set(entry.expected) & set(r.flags), (entry.name, r.flags, r.message)


@pytest.mark.parametrize("entry", ZOO36, ids=[e.name for e in ZOO36])
def test_issue36_kind_is_flagged_for_its_reason(entry):
    """Each kind that passed the audit of issue 30 is flagged now, for its reason (the flag that names it); the
    kinds broken only at a run's own n or δ are flagged at the run setting and pass at the audit's pair."""
    results = audit_with_run_setting(entry)
    flagged = [r for r in results if r.status == "FAIL" and set(entry.expected) & set(r.flags)]
    assert flagged, [(r.setting, r.status, r.flags, r.message) for r in results]
    if entry.settings:
        assert results[0].status == "pass" and flagged[0].setting.startswith("run: n = 10,000")
        assert flagged[0].delta == pytest.approx(1e-8)


@pytest.mark.parametrize("entry", HONEST_UNUSUAL, ids=[e.name for e in HONEST_UNUSUAL])
def test_honest_unusual_plugins_pass_at_both_settings(entry):
    results = audit_with_run_setting(entry)
    assert len(results) == 2 and all(r.status == "pass" for r in results), [r.message for r in results]


@pytest.mark.parametrize(
    "entry",
    # the branches of probability 10⁻³ need 10⁴ replays (≈ 16 s each): slow; the 10⁻² branch of ZOO36 stays here
    [pytest.param(e, marks=pytest.mark.slow) if e.rare else e for e in ZOO],
    ids=[e.name for e in ZOO],
)
def test_broken_mechanism_is_flagged_for_its_reason(entry):
    assert_caught(entry, audit(entry))


@pytest.mark.parametrize("entry", HONEST, ids=[e.name for e in HONEST])
def test_honest_bases_pass_every_check(entry):
    r = audit(entry, replays=2_000)
    assert r.status == "pass", r.message
    assert r.integrity is not None and r.integrity.runs == 2_000 and not r.integrity.findings
    assert r.integrity.branch_probability == pytest.approx(-math.log(0.05) / 2_000)


@pytest.mark.slow
@pytest.mark.parametrize("entry", ZOO, ids=[e.name for e in ZOO])
def test_broken_mechanism_is_flagged_at_small_epsilon(entry):
    assert_caught(entry, audit(entry, epsilon=0.5))


@pytest.mark.slow
@pytest.mark.parametrize("entry", HONEST, ids=[e.name for e in HONEST])
def test_honest_bases_pass_over_three_seeds(entry):
    for seed in range(3):
        for eps in (0.5, 2.0):
            r = audit(entry, epsilon=eps, seed=seed, replays=10_000)
            assert r.status == "pass", (seed, eps, r.message)


def test_randomizer_named_by_import_path_is_audited_as_a_randomizer(monkeypatch):
    """A randomiser registered with ``register_randomizer`` and named ``module:fit`` is audited in the local view
    (issue 30: it was audited as a central zero-out plug-in, and its ×0.5 noise passed)."""
    import audit_zoo

    from dpbench import registry
    from dpbench.audit.request import auditable
    from dpbench.audit.settings import pair_spec

    monkeypatch.setattr(registry, "RANDOMIZERS", dict(registry.RANDOMIZERS))
    fit = registry.register_randomizer("zoo_half_noise", summary="×0.5 noise, declared")(
        audit_zoo.ldp_half_noise_declared
    )
    monkeypatch.setattr(audit_zoo, "registered_randomizer", fit, raising=False)
    info = auditable("audit_zoo:registered_randomizer")
    assert info.name == "zoo_half_noise" and info.privacy_model == "local" and info.neighbour == "replace_one"
    r = audit_whitebox(info, 2.0, DELTA, runs=1_000_000, pilot=50, replays=200, spec=pair_spec(info))
    assert r.view == "local" and r.status == "FAIL" and {"cert", "gdp"} & set(r.flags), r.message


def test_undeclared_plugin_gets_the_blackbox_audit_with_its_power():
    """AdaSSP-like SSP with every noise ×0.4 and no declarations (exact ε ≈ 3 at claim 2): the black-box audit of
    θ̂ cannot see it, and says so — its power at this N is a true ε above the copy's."""
    import audit_zoo

    from dpbench.audit import audit

    info = MechanismInfo("undeclared ×0.4", audit_zoo.undeclared_ssp_x04, "x", "central", "zero_out")
    r = audit(info, 2.0, DELTA, trials=2_000, n=32)
    assert r.status == "inconclusive" and r.detectable > 4.0 and "detects ε ≥" in r.message, (
        r.status,
        r.eps_lower,
        r.detectable,
    )
    r = audit_whitebox(info, 2.0, DELTA, runs=1_000_000, pilot=50, replays=200, spec=PairSpec())
    assert r.status == "error" and "declares no releases" in r.message
