"""Issue 16 speed-ups of the Stein code that keep the numbers (to round-off) or the estimator: each against the
computation it replaces."""

from __future__ import annotations

import numpy as np
import pytest

from dpbench.mechanisms.stein.families import get_family


def test_cubic_link_is_the_cube_over_three_to_one_ulp():
    z = np.random.default_rng(0).standard_normal(100_000) * np.geomspace(1e-3, 1e3, 100_000)
    fast, reference = get_family("cubic").mean(z), z**3 / 3.0
    assert np.all(np.abs(fast - reference) <= 2 * np.spacing(np.abs(reference)))
    np.testing.assert_array_equal(get_family("cubic").mean(np.array([0.0, 1.0, -3.0, 0.5])), [0, 1 / 3, -9, 1 / 24])


def sklearn_objective(X: np.ndarray, y: np.ndarray, theta: np.ndarray) -> float:
    """sklearn's LogisticRegression objective at C = 1: (1/n)Σ_i [log(1 + e^{z_i}) − y_i z_i] + ‖w‖²/(2n)."""
    z = X @ theta[:-1] + theta[-1]
    return float(np.mean(np.logaddexp(0.0, z) - y * z) + 0.5 * theta[:-1] @ theta[:-1] / X.shape[0])


def test_sklearn_baseline_solvers_reach_the_same_optimum():
    """Newton–Cholesky (the Fig 15/16 configs) and lbfgs (the spec's default) minimise the same objective: the
    Newton point is at least as low and both are within sklearn's tol = 1e−4 of each other."""
    from dpbench.papers.stein.datasets import load_skin
    from dpbench.registry import get_mechanism

    ds = load_skin(np.random.default_rng(3), n=20_000, m=1_000)
    fit = get_mechanism("stein_sklearn_logreg").fit
    values = {
        solver: sklearn_objective(
            ds.X_train, ds.y_train, fit(ds.X_train, ds.y_train, 1.0, 0.5, np.random.default_rng(0), solver=solver).theta
        )
        for solver in ("lbfgs", "newton-cholesky")
    }
    assert values["newton-cholesky"] <= values["lbfgs"] + 1e-12
    assert values["lbfgs"] - values["newton-cholesky"] < 1e-4


def eager_first_sign_change(values: np.ndarray) -> int | None:
    """The scan :func:`solve_scale` did before issue 16: every value first, then the first finite sign change."""
    finite = np.isfinite(values)
    for k in range(len(values) - 1):
        if finite[k] and finite[k + 1] and np.sign(values[k]) != np.sign(values[k + 1]):
            return k
    return None


def test_lazy_bracket_scan_finds_the_eager_scans_bracket_and_stops_there():
    from dpbench.mechanisms.stein.core import first_sign_change

    rng = np.random.default_rng(1)
    for _ in range(300):
        values = rng.choice([-1.0, 1.0, 0.0, np.nan, np.inf], size=12, p=[0.2, 0.5, 0.05, 0.15, 0.1])
        calls: list[float] = []

        def g(k: float, values: np.ndarray = values, calls: list = calls) -> float:
            calls.append(k)
            return float(values[int(k)])

        found = first_sign_change(np.arange(12.0), g)
        assert found == eager_first_sign_change(values)
        assert len(calls) == (12 if found is None else found + 2)


def test_row_norms_of_a_new_draw_are_never_a_freed_draws():
    """Regression (issue 16): the memo was keyed by id() and data address, which the next data draw of the same
    shape can reuse once the runner frees the previous one — that draw then got the old draw's norms."""
    from dpbench.linalg import gram_stats
    from dpbench.mechanisms.stein.core import row_norms
    from dpbench.papers.stein.generators import load

    stale = 0
    for draw in range(12):  # the runner's pattern: load, copy into read-only statistics, fit, free
        data = load(np.random.default_rng(draw), n=200_000, p=10)
        stats = gram_stats(data.X_train, data.y_train)
        stale += bool(np.any(row_norms(stats.X) != np.sqrt(np.einsum("ij,ij->i", stats.X, stats.X))))
        del data, stats
    assert stale == 0


def test_derived_memoises_read_only_arrays_only():
    from dpbench.mechanisms.stein.core import derived

    calls: list[int] = []

    def compute(A: np.ndarray) -> float:
        calls.append(1)
        return float(A.sum())

    A = np.arange(6.0)
    assert derived(A, "sum", compute) == derived(A, "sum", compute) == 15.0 and len(calls) == 2  # writeable
    A.setflags(write=False)
    assert derived(A, "sum", compute) == derived(A, "sum", compute) == 15.0 and len(calls) == 3  # read-only


def test_stein_constant_is_unchanged_by_the_cached_hermite_rule():
    from dpbench.papers.stein.generators import hermite_rule, stein_constant

    t, w = np.polynomial.hermite.hermgauss(200)
    fam = get_family("logistic")
    reference = float(np.sum(w * fam.h(np.sqrt(2.0) * 0.7 * t)) / np.sqrt(np.pi))
    assert stein_constant(fam, 0.7) == stein_constant(fam, 0.7) == reference
    assert not hermite_rule(200)[0].flags.writeable


@pytest.mark.parametrize("family", ["logistic", "sigmoid", "cubic"])
def test_fused_baseline_pass_equals_the_two_pass_objective(family: str, monkeypatch) -> None:
    """The baseline's blocked one-pass loss/gradient = the two-pass (1/n)Σ loss, (1/n)Xᵀ dz up to round-off, with
    a ragged last block; and L-BFGS reaches the same optimum."""
    from dpbench.mechanisms.stein import glm

    fam = get_family(family)
    rng = np.random.default_rng(3)
    X = 0.4 * rng.standard_normal((5003, 7))
    w_true = rng.standard_normal(7) / 3.0
    y = fam.mean(X @ w_true) + (0.05 * rng.uniform(-1, 1, 5003) if fam.kind == "nlr" else 0.0)
    monkeypatch.setattr(glm, "BASELINE_BLOCK_VALUES", 7 * 1000)  # blocks of 1000 rows, last one of 3
    w = rng.standard_normal(7) / 3.0
    loss, grad = glm.baseline_loss_grad(X, y, fam, w)
    rows_loss, dz = fam.loss_grad(X @ w, y)
    assert loss == pytest.approx(np.sum(rows_loss) / 5003, rel=1e-12)
    np.testing.assert_allclose(grad, X.T @ dz / 5003, rtol=1e-11, atol=1e-15)

    def two_pass(v: np.ndarray) -> tuple[float, np.ndarray]:
        rows, dz_v = fam.loss_grad(X @ v, y)
        return float(np.sum(rows) / 5003), X.T @ dz_v / 5003

    theta, _ = glm.minimise_baseline_loss(X, y, fam, np.zeros(7))
    reference = glm.minimize(
        two_pass, np.zeros(7), jac=True, method="L-BFGS-B", options={"gtol": 1e-10, "maxiter": 2000}
    ).x
    np.testing.assert_allclose(theta, reference, rtol=1e-6, atol=1e-7)
