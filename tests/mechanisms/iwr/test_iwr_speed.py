"""Bit-identical speed-ups of the information-weighted code (spec 000, issue 16): each fast path against the
straightforward implementation it replaced."""

from __future__ import annotations

import gc
import math

import numpy as np
import pytest

from dpbench import registry
from dpbench.mechanisms._base import record_releases
from dpbench.mechanisms.iwr import _memo, sgd
from dpbench.mechanisms.iwr.calibration import l2ball_radius
from dpbench.mechanisms.iwr.linalg import row_norms, unit_rows
from dpbench.mechanisms.iwr.noise import l2ball_sample


def reference_sgd_average(X: np.ndarray, y: np.ndarray, eta: float) -> np.ndarray:
    """The list loop of Alg 16 that ``sgd.sgd_average`` replaced (spec 000 §3.9), kept verbatim as the reference."""
    n, d = X.shape
    rows, labels = X.tolist(), y.tolist()
    th, tot = [0.0] * d, [0.0] * d
    for t in range(n):
        for j in range(d):
            tot[j] += th[j]
        phi = rows[t]
        resid = sum(p * q for p, q in zip(phi, th, strict=True)) - labels[t]
        th = [q - eta * resid * p for p, q in zip(phi, th, strict=True)]
        norm2 = sum(q * q for q in th)
        if norm2 > 1.0:
            inv = 1.0 / math.sqrt(norm2)
            th = [q * inv for q in th]
    return np.asarray(tot) / n


def _data(n: int, d: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X /= np.maximum(np.linalg.norm(X, axis=1), 1.0)[:, None]
    return X, rng.choice([-1.0, 1.0], n)


@pytest.mark.parametrize("d", [1, 2, 5, 13])
@pytest.mark.parametrize("eta", [1e-3, 0.5])  # 0.5: the projection is active on many steps
def test_sgd_kernel_is_bit_identical_to_the_list_loop(d, eta):
    X, y = _data(3000, d, seed=d)
    fast = sgd.sgd_average(X, y, eta)
    assert np.array_equal(fast, reference_sgd_average(X, y, eta))
    assert fast.shape == (d,)


def test_sgd_cache_reuses_read_only_arrays_only(monkeypatch):
    X, y = _data(500, 3, seed=1)
    calls = []
    real = sgd.sgd_average
    monkeypatch.setattr(sgd, "sgd_average", lambda *a: calls.append(1) or real(*a))
    first = sgd.cached_sgd_average(X, y, 0.1)
    sgd.cached_sgd_average(X, y, 0.1)
    assert len(calls) == 2  # writeable arrays may change: never cached
    Xf, yf = X.copy(), y.copy()
    Xf.flags.writeable = yf.flags.writeable = False
    again = sgd.cached_sgd_average(Xf, yf, 0.1)
    again[0] = 99.0  # the caller's copy: the cache is unaffected
    assert np.array_equal(sgd.cached_sgd_average(Xf, yf, 0.1), first)
    assert len(calls) == 3
    sgd.cached_sgd_average(Xf, yf, 0.2)  # another η: another pass
    assert len(calls) == 4


def test_sgd_cache_does_not_keep_data_alive():
    X, y = _data(200, 2, seed=2)
    X.flags.writeable = y.flags.writeable = False
    sgd.cached_sgd_average(X, y, 0.1)
    key = next(k for k in _memo._MEMO if k[0] == id(X))
    ref = _memo._MEMO[key][0]
    del X, y
    gc.collect()
    assert ref() is None


@pytest.mark.parametrize("d", [1, 2, 3, 5, 7, 8, 20])
def test_row_norms_are_bit_identical_to_numpy(d):
    rng = np.random.default_rng(d)
    M = rng.standard_normal((5000, d)) * rng.random((5000, 1)) ** 4  # norms over several orders of magnitude
    M[:3] = -0.0
    fast, ref = row_norms(M), np.linalg.norm(M, axis=1)
    assert np.array_equal(fast, ref) and np.array_equal(np.signbit(fast), np.signbit(ref))
    stacked = M.reshape(50, 100, d)
    assert np.array_equal(row_norms(stacked), np.linalg.norm(stacked, axis=-1))


def _frozen_draw(loader: str, n: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    ds = registry.get_dataset(loader).load(np.random.default_rng(11), n=n, d=d)
    X, y = ds.X_train.copy(), ds.y_train.copy()
    X.flags.writeable = y.flags.writeable = False
    return X, y


@pytest.mark.parametrize(
    "name, hyper",
    [
        ("ssp_ball", {}),
        ("iwr_dp_ablation", {"weights": "identity", "shuffle": False}),
        ("iwr_dp_ablation", {"weights": "identity", "stage2_rows": "all", "shuffle": False}),
        ("dp_sgd_improper", {"shuffle": False}),
    ],
)
def test_memoised_mechanisms_give_the_same_numbers(name, hyper):
    """Memo on (read-only arrays, repeated trials) vs no memo (writeable copies): bit-identical estimates."""
    X, y = _frozen_draw("iwr_twoscale", 4000, 3)
    fit = registry.get_mechanism(name).fit
    kw = {"calibration": "agm", "neighbour": "zero_out", **hyper}
    for eps in (0.5, 1.0):
        memo = [fit(X, y, eps, 1e-5, np.random.default_rng(t), **kw).theta for t in range(3)]
        plain = [fit(X.copy(), y.copy(), eps, 1e-5, np.random.default_rng(t), **kw).theta for t in range(3)]
        assert np.array_equal(np.array(memo), np.array(plain))
    assert any(key[0] == id(X) for key in _memo._MEMO)  # the read-only draw was memoised


def reference_l2ball_sample(V: np.ndarray, epsilon: float, rng: np.random.Generator) -> np.ndarray:
    """The l2-ball sampler before issue 16 (spec 000 §3.6), verbatim: every random direction normalised."""
    n, d = V.shape
    norms = np.linalg.norm(V, axis=1)
    M = l2ball_radius(epsilon, d)
    rand_dir = rng.standard_normal((n, d))
    rand_dir /= np.linalg.norm(rand_dir, axis=1, keepdims=True)
    safe = np.where(norms > 0, norms, 1.0)
    direction = np.where((norms > 0)[:, None], V / safe[:, None], rand_dir)
    sign = np.where(rng.random(n) < 0.5 + norms / 2.0, 1.0, -1.0)
    tilde = sign[:, None] * direction
    want_positive = rng.random(n) < math.exp(epsilon) / (math.exp(epsilon) + 1.0)
    u = rng.standard_normal((n, d))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    flip = (np.einsum("ij,ij->i", u, tilde) > 0) != want_positive
    u[flip] *= -1.0
    return M * u


@pytest.mark.parametrize("d", [1, 2, 5])
def test_l2ball_sampler_is_bit_identical_to_the_reference(d):
    rng = np.random.default_rng(d)
    V = rng.standard_normal((2000, d)) * rng.random((2000, 1)) / np.sqrt(d) / 3.0
    V[::7] = 0.0  # rows v = 0 take a uniform random direction
    fast = l2ball_sample(V, 0.7, np.random.default_rng(5))
    assert np.array_equal(fast, reference_l2ball_sample(V, 0.7, np.random.default_rng(5)))


@pytest.mark.parametrize("d", [1, 2, 5, 9])
def test_unit_rows_match_the_masked_division(d):
    rng = np.random.default_rng(d)
    M = rng.standard_normal((3000, d))
    M[::5] = 0.0
    M[1::5] = -0.0
    ref = np.divide(
        M,
        np.linalg.norm(M, axis=1, keepdims=True),
        out=np.zeros_like(M),
        where=np.linalg.norm(M, axis=1, keepdims=True) > 0,
    )
    fast = unit_rows(M)
    assert np.array_equal(fast, ref) and np.array_equal(np.signbit(fast), np.signbit(ref))


def test_stage1_is_shared_across_mechanisms_bit_for_bit():
    """iwr_dp, iwr_dp_erm and the learned-W ablation on one trial seed: memo hits give the numbers of fresh runs."""
    X, y = _frozen_draw("iwr_gauss", 6000, 3)
    kw = {"calibration": "agm", "neighbour": "zero_out", "shuffle": False}
    runs = [("iwr_dp", {}), ("iwr_dp_ablation", {"radius": 1.0}), ("iwr_dp_erm", {}), ("iwr_dp", {})]
    for eps in (0.3, 1.0):
        for name, extra in runs:
            fit = registry.get_mechanism(name).fit
            memo = fit(X, y, eps, 1e-5, np.random.default_rng(4), **kw, **extra)
            plain = fit(X.copy(), y.copy(), eps, 1e-5, np.random.default_rng(4), **kw, **extra)
            assert np.array_equal(memo.theta, plain.theta), name
            assert np.array_equal(memo.info["W"], plain.info["W"]), name
    assert any(key[0] == id(X) and key[2][0] == "alg4_stage1" for key in _memo._MEMO)


def test_stage1_memo_is_bypassed_in_an_audit():
    X, y = _frozen_draw("iwr_gauss", 4000, 2)
    fit = registry.get_mechanism("iwr_dp").fit
    fit(X, y, 0.5, 1e-5, np.random.default_rng(1), shuffle=False)  # memoised outside the audit
    with record_releases() as recorder:
        fit(X, y, 0.5, 1e-5, np.random.default_rng(1), shuffle=False)
    names = [release.name for release in recorder.releases]
    assert any(name.startswith("H̃ epoch") for name in names) and "ψ̃" in names


def test_stage1_memo_is_hit_by_the_learned_ablation(monkeypatch):
    import dpbench.mechanisms.iwr.central as central

    calls = []
    real = central.spectral_dp
    monkeypatch.setattr(central, "spectral_dp", lambda *a, **k: calls.append(1) or real(*a, **k))
    X, y = _frozen_draw("iwr_gauss", 3000, 3)
    kw = {"calibration": "agm", "neighbour": "zero_out", "shuffle": False}
    registry.get_mechanism("iwr_dp").fit(X, y, 0.5, 1e-5, np.random.default_rng(4), **kw)
    registry.get_mechanism("iwr_dp_ablation").fit(X, y, 0.5, 1e-5, np.random.default_rng(4), radius=1.0, **kw)
    registry.get_mechanism("iwr_dp").fit(X, y, 0.5, 1e-5, np.random.default_rng(5), **kw)  # another seed: computed
    assert len(calls) == 2
