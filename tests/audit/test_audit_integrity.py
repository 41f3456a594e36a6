"""Units of the integrity checks (dpbench/audit/integrity.py) and of the black-box power statement."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binom

from dpbench.audit.integrity import _same, observed_shift, small_noise_threshold
from dpbench.audit.pairs import PairSpec, background, canary_row
from dpbench.audit.stats import detectable_epsilon
from dpbench.audit.whitebox import ReleasePair
from dpbench.mechanisms._base import Release, record_releases, released


@pytest.mark.parametrize("runs", [100, 10_000, 1_000_000])
def test_small_noise_threshold_is_the_binomial_tail(runs):
    k = small_noise_threshold(runs)
    assert binom.sf(k - 1, runs, 1e-6) <= 1e-6 < binom.sf(k - 2, runs, 1e-6)


def test_observed_shift_uses_the_noised_entries_and_the_worst_user():
    c = np.zeros((2, 2))
    d = np.array([[1.0, 2.0], [2.0, 0.0]])
    sym = Release("S", c, c, scale=1.0, symmetric=True)
    assert observed_shift(ReleasePair(sym, d, c, "D")) == pytest.approx(math.sqrt(1 + 4))  # upper triangle only
    lap = Release("L", np.zeros(2), np.zeros(2), kind="laplace", scale=1.0)
    assert observed_shift(ReleasePair(lap, np.array([1.0, -2.0]), np.zeros(2), "D")) == pytest.approx(3.0)
    rows = np.zeros((4, 2))
    moved = rows.copy()
    moved[2] = [3.0, 4.0]
    users = Release("U", np.zeros(2), rows, scale=1.0, users=True)
    assert observed_shift(ReleasePair(users, moved, rows, "D")) == pytest.approx(5.0)
    wishart = Release("W", np.eye(2), np.eye(2), kind="wishart", scale=1.0)
    assert observed_shift(ReleasePair(wishart, 2 * np.eye(2), np.eye(2), "D")) is None


def test_same_is_bitwise_unless_a_tolerance_is_given():
    a = np.array([1.0, np.nan, -2.0])
    assert _same(a, a.copy()) and not _same(a, a + 1e-16 * np.array([1, 0, 1]) + np.array([0, 0, 4e-16]))
    assert _same(a, a * (1 + 1e-12), rtol=1e-9) and not _same(a, a * 1.01, rtol=1e-9)
    assert not _same(a, a[:2])


def test_replayed_value_is_a_fresh_copy_of_the_recorded_one():
    with record_releases() as rec:
        released("v", np.array([1.0, 2.0]), np.zeros(2), scale=1.0)
    with record_releases(replay=rec.releases):
        out = released("v", np.array([5.0, 5.0]), np.ones(2), scale=1.0)
    assert np.array_equal(out, [1.0, 2.0]) and out is not rec.releases[0].value


def test_spread_background_moves_order_statistics_and_stays_in_the_bounds():
    spec = PairSpec(n=32, d=3, background="spread")
    X, y = background(spec)
    norms = np.linalg.norm(X, axis=1)
    assert np.all(norms <= 1 + 1e-12) and np.sum(np.isclose(norms, 1.0)) >= 3 and len(np.unique(norms.round(9))) > 20
    assert np.max(np.abs(y)) == pytest.approx(1.0) and np.all(np.abs(y) <= 1.0)
    assert canary_row(spec.with_(canary_index=5)) == 5 and canary_row(spec) == 31
    with pytest.raises(ValueError, match="canary_index"):
        canary_row(spec.with_(canary_index=32))


def test_detectable_epsilon_grows_with_the_claim_and_shrinks_with_runs():
    small, large = detectable_epsilon(2_000, 1.0, 1e-5), detectable_epsilon(20_000, 1.0, 1e-5)
    assert large < small and large > 1.0
    assert detectable_epsilon(20_000, 2.0, 1e-5) > large


@pytest.mark.parametrize("name", ["stein_glm_gauss", "stein_nlr_gauss"])
def test_outside_canaries_only_on_the_axes_a_mechanism_clips(name):
    """The false positive of `dpbench audit --all` (issue 36): the Stein GLMs clip rows to r and *assume* |y| ≤ 1
    (the paper's assumption, ``Bounds(clipped=("x",))``); the family fed them labels ±10 and flagged 'Σ ẑ_i':
    "sensitivity observed 32.58 > declared 3.644". Now their outside canaries are rows 10× out with labels ±Y, and
    the declared sensitivity holds on them; the NLR versions clip labels too and still get labels ±10Y."""
    from dpbench.audit.family import OUTSIDE
    from dpbench.audit.integrity import IntegrityRun, check_declarations, integrity_pairs
    from dpbench.audit.pairs import find_worst_pair
    from dpbench.audit.request import auditable
    from dpbench.audit.settings import pair_spec, whitebox_hyper
    from dpbench.audit.whitebox import paired_run

    info = auditable(name)
    spec, hyper = pair_spec(info), whitebox_hyper(info)
    worst, _ = find_worst_pair(info, spec, "local", 0.5, 1e-5, hyper, 0)
    pairs = integrity_pairs(info, spec, worst, 0, hyper)
    outside = [i for i, p in enumerate(pairs) if not p.unrelated and np.abs(p.X).max() > 2 * spec.x_bound]
    assert len(outside) == 2
    labels = {float(abs(pairs[i].y).max()) for i in outside}
    assert labels == ({spec.y_bound} if name == "stein_glm_gauss" else {OUTSIDE * spec.y_bound})
    runs = [IntegrityRun(i, paired_run(info, pairs[i], side, 0.5, 1e-5, np.random.SeedSequence([i, k]), hyper),
                         np.zeros(2)) for i in outside for k, side in enumerate(("D", "D'"))]  # fmt: skip
    findings, shifts = check_declarations(runs, pairs)
    assert not findings, findings
    assert all(declared is not None and 0 < shift <= declared * (1 + 1e-9) for shift, declared in shifts.values())
