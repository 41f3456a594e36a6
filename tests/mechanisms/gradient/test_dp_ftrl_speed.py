"""DP-FTRL fast paths (issue 16): shared per-stream work is bit-identical, the eigenbasis factor is exact in law.

* Block Grams and tree draws shared by the mechanisms of one data draw and trial rng (common random numbers) give
  bit-identical outputs to a cold run.
* The public Σ = (λI + PᵀP)/M with the eigen factor F = V diag(√((μ+λ)/M)) (``sigma_factor: eigh``, default) has the
  same Σ and the same output law as the Cholesky factor: a two-sample KS test of the blocked eigen path against the
  literal tree loop with the Cholesky sampler (``engine: reference, sigma_factor: cholesky``), with a negative
  control (node noise std × 1.5) that the same test rejects.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from dpbench.mechanisms.gradient.dp_ftrl import covariance as dp_ftrl_covariance
from dpbench.mechanisms.gradient.dp_ftrl import engines as dp_ftrl_engines
from dpbench.mechanisms.gradient.dp_ftrl import stores as dp_ftrl_stores
from dpbench.mechanisms.gradient.dp_ftrl.core import fit_dp_ftrl
from dpbench.mechanisms.gradient.dp_ftrl.covariance import NoiseCovariance
from dpbench.mechanisms.gradient.dp_ftrl.mechanisms import fit_identity, fit_sgd_avg, fit_sigma_oracle, fit_sigma_public
from dpbench.mechanisms.gradient.tree_noise import blocked_tree_noise, inblock_prefix_noise
from dpbench.papers.ftrl.generators import (
    bartlett_factor,
    excess_pop_paper,
    load,
    sample_rows,
    spectrum_values,
    wishart_gram,
)

DESIGN = {"spectrum": "poly", "r": 2.0}


def _frozen_problem(n: int, d: int, seed: int = 0):
    ds = load(np.random.default_rng(seed), n=n, d=d, spectrum="poly", r=2.0, public_MC=40)
    for array in (ds.X_train, ds.y_train, ds.X_public):
        array.setflags(write=False)  # like the runner's arrays: the per-stream store may keep their work
    return ds


def _design(ds) -> dict:
    ex = ds.population.extra
    return {**DESIGN, "trH": ex["trH"], "l0": ex["l0"]}


def test_inblock_prefix_noise_matches_the_recursion():
    z = np.random.default_rng(1).standard_normal((16, 3))
    expected = np.zeros_like(z)
    for u in range(1, 16):
        expected[u] = expected[u - (u & -u)] + z[u]
    np.testing.assert_array_equal(inblock_prefix_noise(z), expected)
    buffer = np.full_like(z, np.nan)
    np.testing.assert_array_equal(inblock_prefix_noise(z, out=buffer), expected)


def test_blocked_tree_noise_draws_one_row_per_step_in_order():
    rng_a, rng_b = np.random.default_rng(2), np.random.default_rng(2)
    noise = blocked_tree_noise(rng_a, 21, 3, 8)
    u = rng_b.standard_normal((21, 3))  # row s−1 = node completing at step s
    nu = np.zeros((22, 3))
    for s in range(1, 22):
        nu[s] = nu[s - (s & -s)] + u[s - 1]
    for t in range(21):
        np.testing.assert_allclose(noise.starts[t // 8] + noise.inblock[t], nu[t], atol=1e-12)
    np.testing.assert_allclose(noise.end, nu[21], atol=1e-12)
    assert rng_a.bit_generator.state == rng_b.bit_generator.state  # same consumption as one (n, k) draw


def test_shared_stream_work_is_bit_identical_to_a_cold_run():
    ds = _frozen_problem(300, 16)
    fits = {
        "identity": lambda rng: fit_identity(ds.X_train, ds.y_train, 1.0, 1e-6, rng, **_design(ds)),
        "public": lambda rng: fit_sigma_public(
            ds.X_train, ds.y_train, 1.0, 1e-6, rng, public_X=ds.X_public, public_C_rows=40, **_design(ds)
        ),
        "oracle": lambda rng: fit_sigma_oracle(ds.X_train, ds.y_train, 1.0, 1e-6, rng, population=ds.population),
        "sgd": lambda rng: fit_sgd_avg(
            ds.X_train, ds.y_train, None, None, rng, spectrum="poly", r=2.0, trH=ds.population.extra["trH"]
        ),
    }
    warm = {name: fit(np.random.default_rng(5)).theta for name, fit in fits.items()}  # the store fills and hits
    assert any(key[0] == "grams" for key in dp_ftrl_stores._STREAMS)
    assert any(key[0] == "noise" for key in dp_ftrl_stores._STREAMS)
    for name, fit in fits.items():
        dp_ftrl_stores._STREAMS.clear()
        dp_ftrl_stores._CACHE.clear()
        dp_ftrl_stores._PUBLIC.clear()
        np.testing.assert_array_equal(fit(np.random.default_rng(5)).theta, warm[name], err_msg=name)


def test_stream_store_is_not_fooled_by_writeable_data():
    ds = _frozen_problem(200, 8)
    X = np.array(ds.X_train)  # writeable copy: may change between calls, so never cached
    first = fit_identity(X, ds.y_train, 1.0, 1e-6, np.random.default_rng(3), **_design(ds)).theta
    X[0] *= 2.0
    second = fit_identity(X, ds.y_train, 1.0, 1e-6, np.random.default_rng(3), **_design(ds)).theta
    cold = dp_ftrl_engines.block_grams(X[np.random.default_rng(3).permutation(200)], 128)
    assert not np.array_equal(first, second)
    assert len(cold) == 2


def test_eigen_factor_is_the_same_sigma():
    rng = np.random.default_rng(4)
    P = rng.standard_normal((30, 6)) * np.arange(1, 7)
    chol = NoiseCovariance.from_public(P, 1.5)
    eig = NoiseCovariance.from_public_eigh(np.linalg.eigh(P.T @ P), 30, 1.5)
    np.testing.assert_allclose(eig.matrix(), chol.matrix(), rtol=1e-12, atol=1e-12)
    X = rng.standard_normal((5, 6))
    np.testing.assert_allclose(eig.inv_sq_norms(X), chol.inv_sq_norms(X), rtol=1e-12)
    U = rng.standard_normal((5, 6))  # xᵀ(F u) = (Fᵀx)ᵀu for the eigen factor too
    np.testing.assert_allclose(
        np.einsum("ij,ij->i", X, eig.apply_factor(U)), np.einsum("ij,ij->i", eig.transpose_apply(X), U), rtol=1e-12
    )
    with pytest.raises(ValueError, match="sigma_factor"):
        dp_ftrl_stores.cached_public_cov(P, 1.0, "svd")


def _public_estimates(ds, seeds, *, engine: str, factor: str, noise_mult: float = 1.0) -> np.ndarray:
    """½‖θ̂ − w*‖²_H of DP-FTRL-Σ (public) at a fixed η (so the noise std is the only thing noise_mult changes)."""
    tau = 6.0 * noise_mult  # noise-dominated regime: the estimate's law is mostly the noise's
    out = []
    for seed in seeds:
        theta, _ = fit_dp_ftrl(
            ds.X_train,
            ds.y_train,
            1.0,
            1e-6,
            np.random.default_rng(seed),
            sigma_design="public",
            tau=tau,
            calibration_info={},
            public_X=ds.X_public,
            eta=0.05,
            public_C_rows=40,
            engine=engine,
            sigma_factor=factor,
            **_design(ds),
        )
        out.append(excess_pop_paper(theta, ds))
    return np.array(out)


def test_eigen_factor_blocked_matches_the_cholesky_reference_loop_in_law():
    """KS (500 trials per path): blocked + eigen factor (default) vs the literal loop with the Cholesky sampler."""
    ds = _frozen_problem(48, 6)
    fast = _public_estimates(ds, range(500), engine="auto", factor="eigh")
    literal = _public_estimates(ds, range(10_000, 10_500), engine="reference", factor="cholesky")
    wrong = _public_estimates(ds, range(20_000, 20_500), engine="auto", factor="eigh", noise_mult=1.5)
    assert sps.ks_2samp(fast, literal).pvalue > 1e-3
    assert sps.ks_2samp(wrong, literal).pvalue < 1e-6  # negative control: node noise std × 1.5 is rejected


def test_recycled_noise_memory_gives_the_same_outputs(monkeypatch):
    """A store with room for one stream only drops each noise for the next and lends it its memory: same outputs."""
    ds = _frozen_problem(300, 16)
    cold = []
    for seed in range(4):
        dp_ftrl_stores._STREAMS.clear()
        cold.append(fit_identity(ds.X_train, ds.y_train, 1.0, 1e-6, np.random.default_rng(seed), **_design(ds)).theta)
    dp_ftrl_stores._STREAMS.clear()
    noise_bytes, gram_bytes = (301 + 3) * 16 * 8, (2 * 128**2 + 44**2) * 8
    monkeypatch.setattr(dp_ftrl_stores, "_STREAM_BYTES", noise_bytes + gram_bytes)
    buffers = []
    for seed in range(4):
        theta = fit_identity(ds.X_train, ds.y_train, 1.0, 1e-6, np.random.default_rng(seed), **_design(ds)).theta
        np.testing.assert_array_equal(theta, cold[seed])
        buffers += [value.buffer for value, _ in dp_ftrl_stores._STREAMS.values() if hasattr(value, "buffer")]
    assert len(buffers) == 4 and all(b is buffers[0] for b in buffers)  # one array, reused by every later stream


# ----------------------------------------------------------------------------------------------------------------
# issue 16, part 3: allocation-free stream reads (bit-identical) and the Wishart public sampler (exact in law)


def test_row_quadratic_is_the_einsum_bit_for_bit():
    rng = np.random.default_rng(6)
    A, w = rng.standard_normal((1000, 37)), rng.random(37) + 0.1
    np.testing.assert_array_equal(dp_ftrl_covariance.row_quadratic(A, w, chunk=96), np.einsum("ij,ij->i", A, A / w))
    np.testing.assert_array_equal(dp_ftrl_covariance.row_quadratic(A, chunk=7), np.einsum("ij,ij->i", A, A))


def test_gathered_rows_are_slices_of_the_gathered_scaled_array():
    rng = np.random.default_rng(7)
    source, perm, scale = rng.standard_normal((50, 9)), rng.permutation(50), rng.random(9)
    full = source[perm]
    full *= scale
    rows = dp_ftrl_engines.GatheredRows(source, perm, scale)
    for start, stop in ((0, 16), (16, 32), (48, 50)):
        np.testing.assert_array_equal(rows[start:stop], full[start:stop])
    np.testing.assert_array_equal(dp_ftrl_engines.GatheredRows(source, perm)[3:11], source[perm][3:11])
    unshuffled = dp_ftrl_engines.GatheredRows(source, None, scale)  # drawn order: one-pass product, same values
    for start, stop in ((0, 16), (48, 50)):
        np.testing.assert_array_equal(unshuffled[start:stop], (source * scale)[start:stop])
    np.testing.assert_array_equal(dp_ftrl_engines.GatheredRows(source, None)[3:11], source[3:11])


def test_block_coefficients_match_the_matmul_recursion_bit_for_bit():
    """``np.dot`` per row is the same ddot as the former ``gram[u, :u] @ cb[:u]``: identical coefficients."""
    rng = np.random.default_rng(9)
    X = rng.standard_normal((128, 300))
    gram = X @ X.T
    for _ in range(5):
        base, y, q = 10 * rng.standard_normal(128), rng.standard_normal(128), np.abs(rng.standard_normal(128))
        eta, psi = 10 ** rng.uniform(-5, -2), rng.uniform(0.1, 5.0)
        expected, clipped = np.zeros(128), 0
        for u in range(128):
            r = -eta * (base[u] + float(gram[u, :u] @ expected[:u])) - y[u]
            c = dp_ftrl_engines.clip_coefficient(r, q[u], psi)
            clipped += c != r
            expected[u] = c
        cb, clips = dp_ftrl_engines.block_coefficients(base, gram, y, q, eta, psi)
        assert cb.tobytes() == expected.tobytes() and clips == clipped


def test_public_c_norms_are_shared_across_lambdas_bit_for_bit():
    """P_C V of the rows that set C is computed once per public set; every λ's norms equal the per-fit product."""
    dp_ftrl_stores.drop_stores()
    ds = _frozen_problem(256, 16)
    P, P_C = dp_ftrl_covariance.split_public(ds.X_public, 40)
    for lam in (0.5, 3.0):
        cov = dp_ftrl_stores.cached_public_cov(P, lam)
        assert cov.kind == "eigen"
        np.testing.assert_array_equal(dp_ftrl_stores.public_inv_sq_norms(cov, P_C), cov.inv_sq_norms(P_C))
    assert (
        sum(
            isinstance(key, tuple) and key[0] == "rotated_c"
            for design in dp_ftrl_stores._PUBLIC.values()
            for key in design
        )
        == 1
    )


def test_stream_rows_reuses_one_buffer_and_gathers_exactly():
    rng = np.random.default_rng(8)
    X = rng.standard_normal((40, 5))
    first = dp_ftrl_stores.stream_rows(X, rng.permutation(40))
    perm = rng.permutation(40)
    second = dp_ftrl_stores.stream_rows(X, perm)
    assert second is first  # the same memory, overwritten
    np.testing.assert_array_equal(second, X[perm])
    assert dp_ftrl_stores.stream_rows(X[:30], perm[:30] % 30).shape == (30, 5)  # another shape: a new buffer


def _wishart_stats(grams: list[np.ndarray]) -> dict[str, np.ndarray]:
    """Statistics of PᵀP whose laws a wrong Wishart would change: diagonal and off-diagonal entries, λ_max."""
    return {
        "g00": np.array([g[0, 0] for g in grams]),
        "g10": np.array([g[1, 0] for g in grams]),
        "g_last": np.array([g[-1, -1] for g in grams]),
        "lam_max": np.array([np.linalg.eigvalsh(g)[-1] for g in grams]),
    }


def test_wishart_gram_has_the_law_of_the_public_rows_gram():
    """KS (500 draws per path): (H^{1/2}A)(H^{1/2}A)ᵀ, A Bartlett, vs PᵀP of M rows N(0, H); H × 1.5 is rejected."""
    h, m = spectrum_values(5, "poly", 2.0), 7
    rows = [sample_rows(h, m, np.random.default_rng(s)) for s in range(500)]
    literal = _wishart_stats([P.T @ P for P in rows])
    bartlett = _wishart_stats([wishart_gram(h, m, np.random.default_rng(10_000 + s)) for s in range(500)])
    wrong = _wishart_stats([wishart_gram(1.5 * h, m, np.random.default_rng(20_000 + s)) for s in range(500)])
    for name in literal:
        assert sps.ks_2samp(bartlett[name], literal[name]).pvalue > 1e-3, name
    assert sps.ks_2samp(wrong["g00"], literal["g00"]).pvalue < 1e-6  # negative control: the law × 1.5
    assert sps.ks_2samp(wrong["lam_max"], literal["lam_max"]).pvalue < 1e-6
    with pytest.raises(ValueError, match="m ≥ d"):
        bartlett_factor(5, 4, np.random.default_rng(0))


def _public_fit_outputs(sampler: str, seeds, gram_mult: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """(½‖θ̂ − w*‖²_H, tr̂(Σ⁻¹H)) of DP-FTRL-Σ (public), each seed its own data draw with the public sampler."""
    excess, trace = [], []
    for seed in seeds:
        ds = load(np.random.default_rng(seed), n=48, d=6, spectrum="poly", r=2.0, public_MC=20, public_sampler=sampler)
        public = ds.X_public
        if gram_mult != 1.0:
            public = dp_ftrl_covariance.PublicMoments(gram_mult * public.gram, public.m, public.rows)
        fit = fit_sigma_public(
            ds.X_train,
            ds.y_train,
            1.0,
            1e-6,
            np.random.default_rng(seed + 1),
            public_X=public,
            public_C_rows=20,
            **_design(ds),
        )
        excess.append(excess_pop_paper(fit.theta, ds))
        trace.append(fit.info["trSH_est"])
    return np.array(excess), np.array(trace)


def test_wishart_public_sampler_gives_the_mechanism_the_same_law():
    """KS (500 data draws per path) of DP-FTRL-Σ (public) on data with public rows vs PᵀP drawn as Wishart; the
    control (the drawn PᵀP × 1.5, i.e. Wishart(M, 1.5H)) is rejected."""
    rows = _public_fit_outputs("rows", range(0, 1000, 2))
    wishart = _public_fit_outputs("wishart", range(100_000, 101_000, 2))
    wrong = _public_fit_outputs("wishart", range(200_000, 201_000, 2), gram_mult=1.5)
    for literal, fast in zip(rows, wishart, strict=True):
        assert sps.ks_2samp(fast, literal).pvalue > 1e-3
    assert sps.ks_2samp(wrong[1], rows[1]).pvalue < 1e-6  # negative control on tr̂(Σ⁻¹H)


def test_public_moments_split_and_fit_agree_with_the_rows():
    """[P; E] given as (PᵀP, M, E): the same Σ and C as the rows (up to round-off), whichever rows are held out."""
    ds = _frozen_problem(64, 6)
    rows = np.asarray(ds.X_public)  # 64 rows for Σ, then 40 for C
    P, E = rows[:64], rows[64:]
    moments = dp_ftrl_covariance.PublicMoments(P.T @ P, 64, E)
    assert moments.shape == rows.shape and len(moments) == len(rows)
    assert moments.mean_sq_norm() == pytest.approx(float(np.mean(np.einsum("ij,ij->i", rows, rows))), rel=1e-12)
    for held_out in (40, 25):
        fits = [
            fit_sigma_public(
                ds.X_train,
                ds.y_train,
                1.0,
                1e-6,
                np.random.default_rng(9),
                public_X=public,
                public_C_rows=held_out,
                **_design(ds),
            )
            for public in (rows, moments)
        ]
        np.testing.assert_allclose(fits[1].theta, fits[0].theta, rtol=1e-8, atol=1e-12)
        assert fits[1].info["M"] == fits[0].info["M"] == len(rows) - held_out
        assert fits[1].info["C"] == pytest.approx(fits[0].info["C"], rel=1e-10)
    with pytest.raises(ValueError, match="explicit rows"):
        dp_ftrl_covariance.split_public(moments, 41)
    with pytest.raises(ValueError, match="public_M ≥ d"):
        load(np.random.default_rng(0), n=8, d=6, public_M=4, public_sampler="wishart")
    with pytest.raises(ValueError, match="public_sampler"):
        load(np.random.default_rng(0), n=8, d=6, public_sampler="cholesky")
    # auto: the rows where M < d (the low-rank Σ reads P), the Wishart moments where M ≥ d — the same draws as the
    # sampler it resolves to
    for n, resolved in ((4, "rows"), (6, "wishart"), (9, "wishart")):
        auto = load(np.random.default_rng(3), n=n, d=6, public_MC=5, public_sampler="auto")
        same = load(np.random.default_rng(3), n=n, d=6, public_MC=5, public_sampler=resolved)
        assert auto.meta["public_sampler"] == resolved
        assert isinstance(auto.X_public, dp_ftrl_covariance.PublicMoments) == (resolved == "wishart")
        got, want = (a.X_public.gram if resolved == "wishart" else a.X_public for a in (auto, same))
        np.testing.assert_array_equal(got, want)


def _order_estimates(shuffle: bool, seeds, tau: float = 1.0) -> np.ndarray:
    """½‖θ̂ − w*‖²_H of DP-FTRL-Σ (public) and -I at a fixed η, each seed its own data draw (iid rows)."""
    out = []
    for seed in seeds:
        ds = load(np.random.default_rng(seed), n=64, d=6, spectrum="poly", r=2.0, public_MC=20)
        for design in ("public", "identity"):
            theta, _ = fit_dp_ftrl(
                ds.X_train,
                ds.y_train,
                1.0,
                1e-6,
                np.random.default_rng(seed + 1),
                sigma_design=design,
                tau=tau,
                calibration_info={},
                public_X=ds.X_public,
                eta=0.2,
                public_C_rows=20,
                shuffle=shuffle,
                **_design(ds),
            )
            out.append(excess_pop_paper(theta, ds))
    return np.array(out).reshape(-1, 2).T


def test_unshuffled_stream_of_iid_rows_has_the_law_of_the_shuffled_one():
    """Rows drawn iid are exchangeable and the permutation is independent of them, so X[π] =_d X: KS (500 data draws
    per path) of the estimate with and without the shuffle; the control (node noise std × 1.5) is rejected."""
    shuffled = _order_estimates(True, range(0, 1000, 2))
    unshuffled = _order_estimates(False, range(100_000, 101_000, 2))
    wrong = _order_estimates(False, range(200_000, 201_000, 2), tau=1.5)
    for literal, fast, bad in zip(shuffled, unshuffled, wrong, strict=True):
        assert sps.ks_2samp(fast, literal).pvalue > 1e-3
        assert sps.ks_2samp(bad, literal).pvalue < 1e-6


def test_next_data_draw_drops_the_previous_draws_work_and_reuses_its_xv_memory():
    """A fit on a new frozen array forgets the Grams, XV and norms of the previous one (the old data can be freed);
    XV is recomputed into the dropped XV's memory, and every output equals a cold run's."""
    import gc
    import weakref

    draws = [_frozen_problem(300, 16, seed) for seed in (11, 12)]

    def public(ds, seed):
        return fit_sigma_public(
            ds.X_train,
            ds.y_train,
            1.0,
            1e-6,
            np.random.default_rng(seed),
            public_X=ds.X_public,
            public_C_rows=40,
            **_design(ds),
        ).theta

    cold = []
    for ds in draws:
        dp_ftrl_stores._STREAMS.clear()
        dp_ftrl_stores._CACHE.clear()
        dp_ftrl_stores._PUBLIC.clear()
        dp_ftrl_stores._SPARE_XV.clear()
        cold.append(public(ds, 5))
    dp_ftrl_stores._STREAMS.clear()
    dp_ftrl_stores._CACHE.clear()
    dp_ftrl_stores._CURRENT.clear()
    np.testing.assert_array_equal(public(draws[0], 5), cold[0])
    first_xv = next(value[2] for key, (value, _) in dp_ftrl_stores._STREAMS.items() if key[0] == "xv")
    np.testing.assert_array_equal(public(draws[1], 5), cold[1])
    xv = [value[2] for key, (value, _) in dp_ftrl_stores._STREAMS.items() if key[0] == "xv"]
    assert len(xv) == 1 and xv[0] is first_xv  # the same memory, now holding the new draw's XV
    old = weakref.ref(draws[0].X_train)
    draws[0] = None
    gc.collect()
    assert old() is None  # nothing in the stores keeps the previous draw's data alive


def test_freeing_the_data_empties_the_stores():
    """When the runner frees a finished draw, nothing of the stores stays (loky restarts a worker grown by 300 MB)."""
    import gc

    ds = _frozen_problem(300, 16, 13)
    fit_sigma_public(
        ds.X_train,
        ds.y_train,
        1.0,
        1e-6,
        np.random.default_rng(1),
        public_X=ds.X_public,
        public_C_rows=40,
        **_design(ds),
    )
    assert dp_ftrl_stores._STREAMS and dp_ftrl_stores._CACHE
    ds = None
    gc.collect()
    assert not dp_ftrl_stores._STREAMS and not dp_ftrl_stores._CACHE and not dp_ftrl_stores._PUBLIC
