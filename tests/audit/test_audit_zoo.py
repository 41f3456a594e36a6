"""The zoo of broken mechanisms (tests/audit/audit_zoo.py): each is flagged for its reason; the honest bases are not.

CI-sized: ε = 2, 10⁶ batched runs, 400 replays (10⁴ for the branches of probability 10⁻³). The slow form adds
ε = 0.5 and three seeds of the honest bases."""

from __future__ import annotations

import math

import pytest
from audit_zoo import HONEST, ZOO, Broken

from dpbench.audit import audit_whitebox
from dpbench.audit.pairs import PairSpec
from dpbench.registry import MechanismInfo

DELTA = 1e-5


def audit(entry: Broken, epsilon: float = 2.0, seed: int = 0, replays: int | None = None):
    info = MechanismInfo(entry.name, entry.fit, entry.name, entry.model, entry.neighbour)
    replays = replays if replays is not None else (10_000 if entry.rare else 400)
    return audit_whitebox(info, epsilon, DELTA, runs=1_000_000, pilot=50, seed=seed, replays=replays, spec=PairSpec())


def assert_caught(entry: Broken, r) -> None:
    if entry.expected == ("error",):
        assert r.status == "error", (r.status, r.flags)
        return
    assert r.status == "FAIL", (entry.name, r.flags, r.message)
    assert set(entry.expected) & set(r.flags), (entry.name, r.flags, r.message)


@pytest.mark.parametrize("entry", ZOO, ids=[e.name for e in ZOO])
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
    assert r.status == "pass" and r.detectable > 4.0, (r.status, r.eps_lower, r.detectable)
    r = audit_whitebox(info, 2.0, DELTA, runs=1_000_000, pilot=50, replays=200, spec=PairSpec())
    assert r.status == "error" and "declares no releases" in r.message
