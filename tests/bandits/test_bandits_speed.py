"""Issue 16: the bandit speed-ups are bit-identical to the literal computations they replace.

* :func:`elimination.eliminate` evaluates Eq. 8's tests of all estimates at once and intersects them; the literal
  algorithm intersects them one at a time, ignoring a test that would empty a row (spec 001 #10).
* :func:`elimination.eliminate` computes exact widths only for (row, estimate) pairs that the σ_min lower bound of
  the widths does not certify as keeping every arm.
* :func:`elimination.spanner` sends only rows with ≥ 2 survivors through the greedy + swap computation; rows with
  ≤ d survivors stop after the greedy when it picks them all, the others run on their packed survivors.
* The G-PowerLaw sampler draws its Rademacher signs from the raw 64-bit words behind ``rng.random`` (and sets the
  sign bits of root in place); its chosen features are stored as packed sign bits (:class:`envs.SignCodec`).
* Cumulative regret reads f* of a block once per trial (shared by the lockstep runs).
* The spanner's greedy Gram–Schmidt runs coordinate-major with einsum's summation order (row-major form kept).
* :func:`simulator.run_lockstep` runs several cells of a trial on one shared stream; each run is its own
  :func:`simulator.run_bandit`.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import yaml

from dpbench.bandits import elimination as elim
from dpbench.bandits import kind
from dpbench.bandits.config import parse_bandit_config
from dpbench.bandits.envs import ContextStream, get_env, powerlaw, unit_sphere
from dpbench.bandits.oracles import LinearEstimate, dimfree_jdp_fit
from dpbench.bandits.simulator import DataLedger, EpochData, chunks, run_bandit, run_lockstep


def sequential_eliminate(Phi: np.ndarray, estimates: list[LinearEstimate | None]) -> tuple[np.ndarray, int]:
    """Eq. 8 as literally written: A^(τ) = {a ∈ A^(τ−1): f̂ + b̂ ≥ max_{a'∈A}(f̂ − b̂)}, τ = 0, 1, …, one at a time;
    a test that would empty a row is skipped for that row (counted)."""
    n, n_arms, _ = Phi.shape
    mask = np.ones((n, n_arms), dtype=bool)
    emptied = 0
    for est in estimates:
        if est is None:
            continue
        f, b = est.predict(Phi)
        new = mask & (f + b >= np.max(f - b, axis=1, keepdims=True))
        empty = ~new.any(axis=1)
        emptied += int(empty.sum())
        new[empty] = mask[empty]
        mask = new
    return mask, emptied


def _estimate(rng: np.random.Generator, d: int, scale: float, link: str = "linear") -> LinearEstimate:
    return LinearEstimate(unit_sphere(rng, (), d), np.eye(d) + 0.3 * rng.standard_normal((d, d)), scale, link=link)


@pytest.mark.parametrize("scale", [0.01, 0.3, 1.5])
def test_eliminate_equals_sequential_intersection(scale):
    rng = np.random.default_rng(11)
    Phi = unit_sphere(rng, (400, 8), 4)
    estimates = [None, *(_estimate(rng, 4, scale) for _ in range(5)), None, _estimate(rng, 4, 50.0)]
    mask, emptied = elim.eliminate(Phi, estimates)
    ref_mask, ref_emptied = sequential_eliminate(Phi, estimates)
    np.testing.assert_array_equal(mask, ref_mask)
    assert emptied == ref_emptied
    assert mask.any(axis=1).all()
    if scale == 0.01:  # disagreeing narrow estimates: rows are emptied and replayed in order
        assert emptied > 0 and (mask.sum(axis=1) < 8).all()


@pytest.mark.parametrize("scale", [0.01, 0.3])
def test_eliminate_equals_sequential_intersection_with_glm_estimates(scale):
    """Logistic estimates (f̂ = σ(<φ, θ̂>), spec 000 Thm H.5) mixed with linear ones: the stacked, certified path
    equals Eq. 8 applied one estimate at a time with each estimate's own ``predict``."""
    rng = np.random.default_rng(12)
    Phi = unit_sphere(rng, (400, 8), 4)
    estimates = [_estimate(rng, 4, scale, link) for link in ("logistic", "linear", "logistic", "logistic")]
    mask, emptied = elim.eliminate(Phi, estimates)
    ref_mask, ref_emptied = sequential_eliminate(Phi, estimates)
    np.testing.assert_array_equal(mask, ref_mask)
    assert emptied == ref_emptied
    assert (mask.sum(axis=1) < 8).any()  # the test does eliminate


def test_spanner_single_survivor_rows_match_the_greedy_computation():
    rng = np.random.default_rng(5)
    Phi = unit_sphere(rng, (600, 10), 5)
    Phi[:20, 3] = 0.0  # zero features fail the rank tolerance on both paths
    mask = rng.random((600, 10)) < rng.choice([0.05, 0.3, 1.0], size=(600, 1))
    mask[np.arange(600), rng.integers(10, size=600)] = True
    mask[:20] = False
    mask[:20, 3] = True
    span = elim.spanner(Phi, mask, C=2.0)
    full = elim._greedy_spanner(Phi, mask, 2.0, 1e-10, 100)
    np.testing.assert_array_equal(span, full)
    assert (mask.sum(axis=1) == 1).sum() > 100 and not span[:20].any()


def test_certified_tests_keep_every_arm_and_skip_exact_widths(monkeypatch):
    rng = np.random.default_rng(12)
    Phi = unit_sphere(rng, (500, 8), 4) * np.where(rng.random(500) < 0.05, 1.0, 0.01)[:, None, None]
    wide = [_estimate(rng, 4, 3.0) for _ in range(3)]  # ‖θ̂‖ = 1, b̂ ≥ 3σ_min‖φ‖: certified on every row
    narrow = _estimate(rng, 4, 0.05)
    estimates = [*wide, narrow]
    calls = []
    original = elim.exact_keep
    monkeypatch.setattr(elim, "exact_keep", lambda P, f, est: calls.append((est, P.shape[0])) or original(P, f, est))
    mask, emptied = elim.eliminate(Phi, estimates)
    ref_mask, ref_emptied = sequential_eliminate(Phi, estimates)
    np.testing.assert_array_equal(mask, ref_mask)
    assert emptied == ref_emptied and (mask.sum(axis=1) < 8).any()
    assert [est for est, _ in calls] == [narrow]  # exact widths of the narrow estimate only
    f, b = wide[0].predict(Phi)
    assert (b >= wide[0].safe_slope * np.linalg.norm(Phi, axis=2) - 1e-12).all()


@pytest.mark.parametrize("C", [2.0, 1.2])
def test_spanner_packed_and_independent_rows_match_the_greedy_computation(C):
    rng = np.random.default_rng(8)
    n, n_arms, d = 900, 10, 5
    Phi = unit_sphere(rng, (n, n_arms), d)
    mask = rng.random((n, n_arms)) < rng.uniform(0.1, 1.0, size=(n, 1))
    mask[np.arange(n), rng.integers(n_arms, size=n)] = True
    mask[:10] = False
    mask[:10, :3] = True
    Phi[:10, 1] = Phi[:10, 0] * (1 + 1e-13)  # nearly dependent survivors: the greedy stops at rank 2 < m = 3
    counts = mask.sum(axis=1)
    assert {2, 3, 4, 5, 6, 7, 8, 9, 10} <= set(counts)
    span = elim.spanner(Phi, mask, C=C)
    full = elim._greedy_spanner(Phi, mask, C, 1e-10, 100)
    np.testing.assert_array_equal(span, full)
    assert (span[:10].sum(axis=1) == 2).all()
    few = (counts >= 2) & (counts <= d)
    assert (span[few] == mask[few]).sum() > 0.9 * mask[few].size and (span != mask).any()


def test_sign_codec_round_trip_and_oracle_on_codes_are_bit_identical():
    env = powerlaw(np.random.default_rng(1), d=37, n_arms=4)
    Phi = env.contexts(np.random.default_rng(2), 300)[:, 1]
    codes = env.codec.encode(Phi)
    assert codes.nbytes * 8 < Phi.nbytes / 7
    np.testing.assert_array_equal(env.codec.decode(codes).view(np.uint64), Phi.view(np.uint64))
    np.testing.assert_array_equal(env.codec.decode(codes, rows=7).view(np.uint64), Phi.view(np.uint64))
    y = np.where(np.random.default_rng(3).random(300) < 0.5, -1.0, 1.0)
    plain = EpochData(Phi, y, 0, DataLedger(300))
    coded = EpochData(codes, y, 0, DataLedger(300), env.codec)
    assert coded.d == plain.d == 37
    fits = [dimfree_jdp_fit(data, 1.0, 1e-5, np.random.default_rng(4), fail_prob=1e-3)[0] for data in (plain, coded)]
    np.testing.assert_array_equal(fits[0], fits[1])
    assert coded.ledger.used == 300


@pytest.mark.parametrize(("d", "n_arms"), [(3, 9), (5, 9), (5, 3), (5, 5)])
def test_coordinate_major_greedy_basis_equals_the_row_major_form(d, n_arms):
    """Also with |A| ≤ d slots (packed rows of ≤ d survivors): the fast form stops after min(d, |A|) steps."""
    rng = np.random.default_rng(d)
    Phi = unit_sphere(rng, (700, n_arms), d)  # unit rows: the first pick is decided by the last bit of the norms
    Phi[:5, 2] = 0.0
    mask = rng.random((700, n_arms)) < rng.uniform(0.2, 1.0, size=(700, 1))
    mask[:, n_arms // 2] = True
    assert elim.planes_match_einsum(d)  # this platform's einsum order (else the row-major form runs: same result)
    fast = elim._greedy_basis(Phi, mask, 1e-10)
    literal = elim._greedy_basis_literal(Phi, mask, 1e-10)
    for got, ref in zip(fast, literal, strict=True):
        np.testing.assert_array_equal(got, ref)
    assert (fast[2] == np.minimum(mask.sum(axis=1), d)).mean() > 0.95
    assert fast[2].max() == min(d, n_arms)


def test_powerlaw_signs_bit_identical_to_uniform_threshold():
    env = powerlaw(np.random.default_rng(0), d=37, n_arms=4)
    root = np.sqrt(env.meta["spectrum"])
    fast, literal = np.random.default_rng(9), np.random.default_rng(9)
    Phi = env.contexts(fast, 50)
    ref = np.where(literal.random((50, 4, 37)) < 0.5, -1.0, 1.0) * root
    np.testing.assert_array_equal(Phi.view(np.uint64), ref.view(np.uint64))
    assert fast.random() == literal.random()  # the stream advanced by the same number of words


@pytest.mark.parametrize(
    "env_name, options, cells",
    [
        (
            "sphere",
            {"d": 4, "n_arms": 6},
            [
                ("elim_iwr_jdp", 0.2, {"c_b": 0.025}),
                ("elim_iwr_jdp", math.inf, {"c_b": 0.025}),
                ("elim_ssp_jdp", 1.0, {}),
                ("elim_ssp_jdp", 0.5, {"planning": "uniform"}),
                ("linucb", math.inf, {}),
            ],
        ),
        ("powerlaw", {"d": 30, "n_arms": 5}, [("squarecb_jdp", 1.0, {}), ("squarecb_ldp", math.inf, {})]),
    ],
)
def test_lockstep_runs_equal_separate_runs(env_name, options, cells):
    """run_lockstep shares one stream (contexts, all-arms spanners) but each cell's run is its run_bandit."""
    env = get_env(env_name).make(np.random.default_rng(3), **options)
    T = 3000
    together = run_lockstep(
        env,
        [(a, eps, np.random.default_rng(k), h) for k, (a, eps, h) in enumerate(cells)],
        T,
        1e-5,
        ContextStream(env, (4, 1)),
    )
    for k, ((algo, eps, hyper), got) in enumerate(zip(cells, together, strict=True)):
        alone = run_bandit(
            env, algo, T, eps, 1e-5, np.random.default_rng(k), stream=ContextStream(env, (4, 1)), **hyper
        )
        np.testing.assert_array_equal(got.regret, alone.regret)
        np.testing.assert_array_equal(got.actions, alone.actions)
        assert got.info == alone.info and got.ledger.used == alone.ledger.used
    assert together[0].cumulative[-1] != together[1].cumulative[-1]  # the cells really differ


def test_shared_all_arms_spanner_is_drawn_once_per_block():
    env = get_env("sphere").make(np.random.default_rng(0), d=3, n_arms=5)
    stream = ContextStream(env, (1, 2))
    calls = []

    def counted(Phi):
        calls.append(Phi.shape[0])
        return Phi[:, :, 0]

    first = stream.derived("x", counted, 10, 2 * stream.block + 5)
    again = stream.derived("x", counted, 0, 2 * stream.block + 5)
    assert calls == [stream.block] * 3
    np.testing.assert_array_equal(first, stream.get(10, 2 * stream.block + 5)[0][:, :, 0])
    np.testing.assert_array_equal(again[10:], first)


def test_chunks_cover_the_epoch_and_respect_blocks():
    assert list(chunks(5, 300, 64, 128)) == [(5, 69), (69, 128), (128, 192), (192, 256), (256, 300)]
    assert list(chunks(5, 300, 200, 0)) == [(5, 205), (205, 300)]
    sphere_stream = ContextStream(get_env("sphere").make(np.random.default_rng(0), d=3, n_arms=4), (1, 1))
    arms = ContextStream(get_env("fixedarms").make(np.random.default_rng(0), d=3, n_arms=4), (1, 1))
    assert sphere_stream.view_block == sphere_stream.block and arms.view_block == 0  # broadcast arms: no cut


def test_lockstep_groups_respect_the_memory_budget():
    raw = yaml.safe_load(open("configs/bandits/bandit_dimfree.yaml"))
    raw.update(T=1 << 20, trials=2)
    tasks = kind.task_list(parse_bandit_config(raw))
    by_d = {}
    for task in tasks:
        d = dict(task.env.options)["d"]
        by_d.setdefault(d, set()).add(len(task.cells))
        assert len(task.cells) * kind.cell_bytes(1 << 20, d, (d + 7) // 8) <= kind.LOCKSTEP_BYTES
    assert by_d[1000] == {6} and by_d[10] == {6}  # sign-packed features: 91 MB per d = 1000 run
    assert kind.cell_bytes(1 << 20, 1000) > kind.LOCKSTEP_BYTES  # float64 rows would need one cell per task
    keys = [key for task in tasks for key in task.planned_keys()]
    assert len(keys) == len(set(keys)) == 3 * 6 * 2 * len(tasks[0].checkpoints)


def test_sigmoid_in_one_buffer_is_the_expression_bit_for_bit():
    """envs.sigmoid (in place, issue 40) equals 1/(1 + exp(−t)) bit for bit, overflow included; scalars and other
    dtypes keep the expression's result type."""
    from dpbench.bandits.envs import sigmoid

    t = np.concatenate([np.random.default_rng(4).standard_normal((1000, 10)).ravel() * 30, [-800.0, 800.0, 0.0]])
    with np.errstate(over="ignore"):
        expected = 1.0 / (1.0 + np.exp(-t))
        got = sigmoid(t)
    assert got.dtype == np.float64 and np.array_equal(got, expected)
    assert np.array_equal(sigmoid(t[:10000].reshape(-1, 4)[::3]), expected[:10000].reshape(-1, 4)[::3])  # strided
    assert sigmoid(0.5) == 1.0 / (1.0 + np.exp(-0.5)) and np.ndim(sigmoid(0.5)) == 0
    assert sigmoid(np.float32([1.0])).dtype == np.float32
    assert t[0] == np.random.default_rng(4).standard_normal(1)[0] * 30  # the input is not modified
