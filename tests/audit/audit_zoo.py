"""A zoo of broken mechanisms (issue 30): each claims (ε, δ)-DP and is not, in one specific way a plug-in author could
get wrong. ``ZOO`` lists them with the audit check that must catch each (tests/audit/test_audit_zoo.py,
docs/privacy.md).

The honest base is SSP with AdaSSP's adaptive ridge (three Gaussian releases at (ε/3, δ/3), zero-out, ‖x‖, |y| ≤ 1)
and a per-user Gaussian randomiser (replace-one, local); every entry changes one thing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpbench.linalg import symmetric_gaussian
from dpbench.mechanisms import released
from dpbench.mechanisms._base import recording
from dpbench.privacy.agm import sigma_agm

RIDGE_RHO = 1e-6


def _scales(epsilon: float, delta: float, bound: float = 1.0) -> float:
    return sigma_agm(epsilon / 3.0, delta / 3.0, bound)


def _ridge(lam: float, s: float, d: int) -> float:
    return max(0.0, math.sqrt(d * math.log(2.0 * d * d / RIDGE_RHO)) * s - max(0.0, lam))


def _ssp(X, y, epsilon, delta, rng, *, factor: float = 1.0, declared_factor: float = 1.0, sens: float = 1.0,
         scale_of=None, exact_lam: bool = False, exact_xtx: bool = False, shadow: float | None = None,
         skip_noise: bool = False):  # fmt: skip
    """SSP with an adaptive ridge; every keyword is one way to break it (see ``ZOO``)."""
    d = X.shape[1]
    s = _scales(epsilon, delta, sens) if scale_of is None else scale_of(X, y, epsilon, delta)
    noise = 0.0 if skip_noise else factor * s
    declared = declared_factor * s
    xtx, xty = X.T @ X, X.T @ y
    lam = float(np.linalg.eigvalsh(xtx)[0])
    z_lam, z_xtx, z_xty = rng.standard_normal(), symmetric_gaussian(d, rng), rng.standard_normal(d)
    lam_r = released("λ_min(XᵀX)", lam + noise * z_lam, lam, scale=declared, sensitivity=1.0)
    xtx_r = released("XᵀX", xtx + noise * z_xtx, xtx, scale=declared, sensitivity=1.0, symmetric=True)
    xty_r = released("XᵀY", xty + noise * z_xty, xty, scale=declared, sensitivity=1.0)
    if exact_lam:
        lam_r = lam
    if exact_xtx:
        xtx_r = xtx
    if shadow is not None:  # θ̂ from the same draws, scaled: the releases are a decoy
        lam_r, xtx_r, xty_r = lam + shadow * s * z_lam, xtx + shadow * s * z_xtx, xty + shadow * s * z_xty
    return np.linalg.solve(xtx_r + _ridge(lam_r, s, d) * np.eye(d), xty_r)


def honest_ssp(X, y, epsilon, delta, rng):
    return _ssp(X, y, epsilon, delta, rng)


def noise_reduced_declared_true(X, y, epsilon, delta, rng):
    """Noise ×0.4, declared at its true (reduced) scale."""
    return _ssp(X, y, epsilon, delta, rng, factor=0.4, declared_factor=0.4)


def declared_larger_than_added(X, y, epsilon, delta, rng):
    """Declares σ, adds 0.6σ."""
    return _ssp(X, y, epsilon, delta, rng, factor=0.6)


def normalised_by_max(X, y, epsilon, delta, rng):
    """Rows rescaled by the largest row norm (data-dependent normalisation), then calibrated for norm 1."""
    return _ssp(X / np.max(np.linalg.norm(X, axis=1)), y, epsilon, delta, rng)


def ridge_from_exact_lambda_min(X, y, epsilon, delta, rng):
    """Releases are fine; the ridge uses the exact λ_min(XᵀX)."""
    return _ssp(X, y, epsilon, delta, rng, exact_lam=True)


def exact_gram(X, y, epsilon, delta, rng):
    """Noise on XᵀY (and λ_min) only; θ̂ uses the exact XᵀX (the README plug-in with one line changed)."""
    return _ssp(X, y, epsilon, delta, rng, exact_xtx=True)


def shadow_computation(X, y, epsilon, delta, rng):
    """Releases declared with full noise; θ̂ computed from the same draws scaled ×0.4."""
    return _ssp(X, y, epsilon, delta, rng, shadow=0.4)


def discarded_releases(X, y, epsilon, delta, rng):
    """Releases declared, then discarded: θ̂ = exact OLS."""
    _ssp(X, y, epsilon, delta, rng)
    return np.linalg.lstsq(X, y, rcond=None)[0]


def rare_exact_ols(X, y, epsilon, delta, rng):
    """With probability 10⁻³ (100δ) the exact OLS is returned."""
    theta = _ssp(X, y, epsilon, delta, rng)
    return np.linalg.lstsq(X, y, rcond=None)[0] if rng.random() < 1e-3 else theta


def rare_no_noise(X, y, epsilon, delta, rng):
    """With probability 10⁻³ the releases carry no noise."""
    return _ssp(X, y, epsilon, delta, rng, skip_noise=bool(rng.random() < 1e-3))


def rare_tiny_noise(X, y, epsilon, delta, rng):
    """With probability 10⁻³ the noise is ×10⁻³ (not exactly zero: no atom, a near-atom)."""
    tiny = bool(rng.random() < 1e-3)
    return _ssp(X, y, epsilon, delta, rng, factor=1e-3 if tiny else 1.0)


def median_clip(X, y, epsilon, delta, rng):
    """Rows clipped to the median row norm m(D), noise calibrated to sensitivity m²: a data-dependent bound."""
    m = float(np.median(np.linalg.norm(X, axis=1)))
    norms = np.maximum(np.linalg.norm(X, axis=1), 1e-300)
    Xc = X * np.minimum(1.0, m / norms)[:, None]
    scale = _scales(epsilon, delta, max(m * m, 1e-6))
    return _ssp(Xc, np.clip(y, -1, 1), epsilon, delta, rng, scale_of=lambda *_: scale)


def scale_from_data(X, y, epsilon, delta, rng):
    """Noise scale shrinks with the data's spread: s·(1 + 0.5·‖XᵀY‖)⁻¹."""
    scale = _scales(epsilon, delta) / (1.0 + 0.5 * np.linalg.norm(X.T @ y))
    return _ssp(X, y, epsilon, delta, rng, scale_of=lambda *_: scale)


def understated_sensitivity(X, y, epsilon, delta, rng):
    """Releases 2·XᵀY (sensitivity 2) calibrated and declared for sensitivity 1."""
    s = sigma_agm(epsilon, delta, 1.0)
    c = 2.0 * X.T @ y
    return released("2XᵀY", c + s * rng.standard_normal(X.shape[1]), c, scale=s, sensitivity=1.0)


def lying_centre(X, y, epsilon, delta, rng):
    """XᵀY released at (ε, δ) but declared around a public constant (0): the audit would see no shift at all."""
    s = sigma_agm(epsilon, delta, 1.0)
    c = X.T @ y
    return released("XᵀY", c + s * rng.standard_normal(X.shape[1]), np.zeros_like(c), scale=s, sensitivity=1.0)


def lying_centre_x04(X, y, epsilon, delta, rng):
    """The same with noise ×0.4 (declared at its true scale): ε ≈ 5.7 at claim 2, invisible through the declared
    centre."""
    s = 0.4 * sigma_agm(epsilon, delta, 1.0)
    c = X.T @ y
    return released("XᵀY", c + s * rng.standard_normal(X.shape[1]), np.zeros_like(c), scale=s, sensitivity=1.0)


def honest_only_when_recorded(X, y, epsilon, delta, rng):
    """Honest inside an audit; outside it, θ̂ = exact OLS."""
    theta = _ssp(X, y, epsilon, delta, rng)
    return theta if recording() else np.linalg.lstsq(X, y, rcond=None)[0]


def low_bits(X, y, epsilon, delta, rng):
    """θ̂ carries the last label in its round-off: θ̂ + 10⁻¹³·y_n (invisible to any statistic, a data path all the
    same)."""
    return _ssp(X, y, epsilon, delta, rng) + 1e-13 * y[-1]


def data_dependent_sequence(X, y, epsilon, delta, rng):
    """An extra release only when the data has a large row: the release sequence depends on the data."""
    if np.max(np.linalg.norm(X, axis=1)) > 0.5:
        released("extra", 0.0, 0.0, scale=1.0)
    return _ssp(X, y, epsilon, delta, rng)


# ------------------------------------------------------------------------------------------------------------
# local randomisers: one Gaussian report x_i y_i + N(0, s²I) per user, replace-one (‖xy − x′y′‖ ≤ 2)


def _reports(X, y, epsilon, delta, rng, per_user=None, aggregate="none", declared=1.0, factors=None):
    s = sigma_agm(epsilon, delta, 2.0)
    rows = X * y[:, None]
    if factors is None:
        factors = np.ones(len(y)) if per_user is None else per_user(len(y))
    noisy = rows + (s * factors)[:, None] * rng.standard_normal(rows.shape)
    value = noisy if aggregate == "none" else noisy.mean(axis=0)
    return released("x·y per user", value, rows, scale=declared * s, sensitivity=2.0, users=True, aggregate=aggregate)


def honest_randomizer(X, y, epsilon, delta, rng):
    return _reports(X, y, epsilon, delta, rng)


def honest_laplace_randomizer(X, y, epsilon, delta, rng):
    """Per-user Laplace reports x_i·y_i + Lap(b)^d released one by one (``aggregate="none"``): pure ε-LDP with
    b = 2√d/ε (‖xy − x′y′‖₁ ≤ √d·‖xy − x′y′‖₂ ≤ 2√d). The audit flagged it before issue 36 (its per-user Laplace
    noise was standardised as if it were the users' mean)."""
    d = X.shape[1]
    rows = X * y[:, None]
    b = 2.0 * math.sqrt(d) / epsilon
    noisy = rows + rng.laplace(0.0, b, rows.shape)
    return released("x·y per user (Laplace)", noisy, rows, scale=b, kind="laplace", sensitivity=2.0 * math.sqrt(d),
                    users=True, aggregate="none")  # fmt: skip


def ldp_half_noise_declared(X, y, epsilon, delta, rng):
    """Every user's noise ×0.5, declared honestly."""
    return _reports(X, y, epsilon, delta, rng, per_user=lambda n: np.full(n, 0.5), declared=0.5)


def ldp_first_half_half_noise(X, y, epsilon, delta, rng):
    """The first half of the users get ×0.5 noise (reports released one by one)."""
    return _reports(X, y, epsilon, delta, rng, per_user=lambda n: np.where(np.arange(n) < n // 2, 0.5, 1.0))


def ldp_first_half_half_noise_mean(X, y, epsilon, delta, rng):
    """The same, but only the mean report leaves the curator (the aggregate's variance is 0.625× the declared)."""
    return _reports(X, y, epsilon, delta, rng, per_user=lambda n: np.where(np.arange(n) < n // 2, 0.5, 1.0),
                    aggregate="mean")  # fmt: skip


def ldp_reads_neighbour(X, y, epsilon, delta, rng):
    """User i's report reads user i−1's record too (a local randomiser touching two records)."""
    s = sigma_agm(epsilon, delta, 2.0)
    rows = X * y[:, None]
    rows = rows + 0.5 * np.roll(rows, 1, axis=0)
    noisy = rows + s * rng.standard_normal(rows.shape)
    return released("x·y per user", noisy, rows, scale=s, sensitivity=2.0, users=True, aggregate="none")


# ------------------------------------------------------------------------------------------------------------
# undeclared (black-box only)


def undeclared_ssp_x04(X, y, epsilon, delta, rng):
    """The SSP above with every noise ×0.4 and no ``released`` declarations at all (exact ε ≈ 3 at claim 2)."""
    d = X.shape[1]
    s = 0.4 * _scales(epsilon, delta)
    xtx, xty = X.T @ X, X.T @ y
    lam = float(np.linalg.eigvalsh(xtx)[0]) + s * rng.standard_normal()
    return np.linalg.solve(xtx + s * symmetric_gaussian(d, rng) + _ridge(lam, s / 0.4, d) * np.eye(d),
                           xty + s * rng.standard_normal(d))  # fmt: skip


# ------------------------------------------------------------------------------------------------------------
# issue 36: kinds that passed the audit of issue 30 (written here; the real plug-ins of these kinds are kept back)


def _releases(X, y, epsilon, delta, rng, s, declared=None):
    """The three SSP releases at noise std ``s`` (declared ``declared``), returned as values."""
    d = X.shape[1]
    declared = s if declared is None else declared
    xtx, xty = X.T @ X, X.T @ y
    lam = float(np.linalg.eigvalsh(xtx)[0])
    lam_r = released("λ_min(XᵀX)", lam + s * rng.standard_normal(), lam, scale=declared, sensitivity=1.0)
    xtx_r = released("XᵀX", xtx + s * symmetric_gaussian(d, rng), xtx, scale=declared, sensitivity=1.0,
                     symmetric=True)  # fmt: skip
    xty_r = released("XᵀY", xty + s * rng.standard_normal(d), xty, scale=declared, sensitivity=1.0)
    return lam_r, xtx_r, xty_r


def _solve(lam_r, xtx_r, xty_r, s, extra_ridge=0.0):
    d = xty_r.size
    return np.linalg.solve(xtx_r + (_ridge(lam_r, s, d) + extra_ridge) * np.eye(d), xty_r)


def one_entry_unnoised(X, y, epsilon, delta, rng):
    """The joint SSP release [upper(XᵀX), XᵀY] with its last entry left without noise (its pooled variance is
    (m − 1)/m of the declared: within the old pooled check's slack for m ≥ 5)."""
    return _joint_release(X, y, sigma_agm(epsilon, delta, math.sqrt(2.0)), rng,
                          noise_mask=lambda m: np.append(np.ones(m - 1), 0.0))  # fmt: skip


def refine_on_negative_rows(X, y, epsilon, delta, rng):
    """Honest SSP, then one least-squares correction on the raw rows with y < 0 (rows selected by the data)."""
    s = _scales(epsilon, delta)
    theta = _solve(*_releases(X, y, epsilon, delta, rng, s), s)
    neg = y < 0
    if neg.any():
        Xn, yn = X[neg], y[neg]
        theta = theta - 0.5 * Xn.T @ (Xn @ theta - yn) / max(1, neg.sum())
    return theta


def ridge_by_cross_validation(X, y, epsilon, delta, rng):
    """Honest releases; the ridge λ picked from a grid by hold-out error on the raw rows."""
    s = _scales(epsilon, delta)
    lam_r, xtx_r, xty_r = _releases(X, y, epsilon, delta, rng, s)
    grid = (0.0, 1.0, 10.0, 100.0)
    half = X.shape[0] // 2
    errors = [np.mean((X[half:] @ _solve(lam_r, xtx_r, xty_r, s, g) - y[half:]) ** 2) for g in grid]
    return _solve(lam_r, xtx_r, xty_r, s, grid[int(np.argmin(errors))])


def clip_at_norm_quantile(X, y, epsilon, delta, rng):
    """Rows clipped to the 75% quantile C of the row norms (rounded up to a power of 2), the noise calibrated and
    declared for C: a clip bound chosen from the private data."""
    norms = np.linalg.norm(X, axis=1)
    c = 2.0 ** math.ceil(math.log2(max(float(np.quantile(norms, 0.75)), 1e-3)))
    c = min(c, 1.0)
    Xc = X * np.minimum(1.0, c / np.maximum(norms, 1e-300))[:, None]
    s = _scales(epsilon, delta, c)
    d = X.shape[1]
    xtx, xty = Xc.T @ Xc, Xc.T @ y
    lam = float(np.linalg.eigvalsh(xtx)[0])
    lam_r = released("λ_min(XᵀX)", lam + s * rng.standard_normal(), lam, scale=s, sensitivity=c * c)
    xtx_r = released("XᵀX", xtx + s * symmetric_gaussian(d, rng), xtx, scale=s, sensitivity=c * c, symmetric=True)
    xty_r = released("XᵀY", xty + s * rng.standard_normal(d), xty, scale=s, sensitivity=c)
    return _solve(lam_r, xtx_r, xty_r, s)


def correlated_when_labels_positive(X, y, epsilon, delta, rng):
    """XᵀY's two noise coordinates N(0, s²) each (right marginals), correlated 0.95 when Σy > 0."""
    s = _scales(epsilon, delta)
    lam_r, xtx_r, _ = _releases(X, y, epsilon, delta, rng, s)
    xty = X.T @ y
    z = rng.standard_normal(xty.size)
    if np.sum(y) > 0:
        z[1:] = 0.95 * z[0] + math.sqrt(1 - 0.95**2) * z[1:]
    xty_r = released("XᵀY (2)", xty + s * z, xty, scale=s, sensitivity=1.0)
    return _solve(lam_r, xtx_r, xty_r, s)


def ldp_noise_coupled_to_neighbour(X, y, epsilon, delta, rng):
    """User i's noise N(0, s²) (right marginal) shares a component with user i − 1's noise, with weight 0.9·y_{i−1}:
    another user's label sets the joint law of the reports."""
    s = sigma_agm(epsilon, delta, 2.0)
    rows = X * y[:, None]
    z = rng.standard_normal(rows.shape)
    rho = 0.9 * np.clip(np.roll(y, 1), -1, 1)
    noise = np.sqrt(1 - rho**2)[:, None] * z + rho[:, None] * np.roll(z, 1, axis=0)
    return released("x·y per user", rows + s * noise, rows, scale=s, sensitivity=2.0, users=True, aggregate="none")


def _joint_release(X, y, s, rng, noise_mask=None):
    """[upper(XᵀX), XᵀY] as one Gaussian release (ℓ2-sensitivity √2 under zero-out), θ̂ by a public ridge."""
    d = X.shape[1]
    i, j = np.triu_indices(d)
    stats = np.concatenate([(X.T @ X)[i, j], X.T @ y])
    noise = s * rng.standard_normal(stats.size)
    if noise_mask is not None:
        noise = noise * noise_mask(stats.size)
    v = released("[XᵀX, XᵀY]", stats + noise, stats, scale=s, sensitivity=math.sqrt(2.0))
    xtx = np.zeros((d, d))
    xtx[i, j] = v[: i.size]
    xtx[j, i] = v[: i.size]
    return np.linalg.solve(xtx + (1.0 + 3.0 * s) * np.eye(d), v[i.size :])


def joint_ssp(X, y, epsilon, delta, rng):
    """Honest: one release at the exact AGM σ for (ε, δ), sensitivity √2."""
    return _joint_release(X, y, sigma_agm(epsilon, delta, math.sqrt(2.0)), rng)


def delta_ignored(X, y, epsilon, delta, rng):
    """The joint SSP release calibrated at δ = 10⁻⁵ whatever δ is asked (declared at that scale)."""
    return _joint_release(X, y, sigma_agm(epsilon, 1e-5, math.sqrt(2.0)), rng)


def noise_shrinks_with_n(X, y, epsilon, delta, rng):
    """Honest up to n = 1,000; beyond, the noise (and its declared scale) shrinks as √(1000/n)."""
    n = X.shape[0]
    s = _scales(epsilon, delta) * min(1.0, math.sqrt(1000.0 / n))
    return _solve(*_releases(X, y, epsilon, delta, rng, s), s)


def one_sided_label_clip(X, y, epsilon, delta, rng):
    """Declares that it clips (rows to ‖x‖ ≤ 1, labels to |y| ≤ 1) but clips labels from below only."""
    norms = np.linalg.norm(X, axis=1)
    Xc = X / np.maximum(1.0, norms)[:, None]
    yc = np.maximum(y, -1.0)
    s = _scales(epsilon, delta)
    return _solve(*_releases(Xc, yc, epsilon, delta, rng, s), s)


def interval_from_raw_residuals(X, y, epsilon, delta, rng):
    """θ̂ honest SSP; its Wald interval uses the exact residual variance of the raw data (issue 37: an interval is
    output too — θ̂ alone would pass the replay check)."""
    from dpbench.mechanisms._base import FitResult
    from dpbench.mechanisms._intervals import wald

    s = _scales(epsilon, delta)
    lam_r, xtx_r, xty_r = _releases(X, y, epsilon, delta, rng, s)
    theta = _solve(lam_r, xtx_r, xty_r, s)
    n, d = X.shape
    sigma2 = float(np.sum((y - X @ theta) ** 2)) / max(1, n - d)
    variance = sigma2 * np.diag(np.linalg.pinv(xtx_r + np.eye(d)))
    return FitResult(theta, {}, {"wald": wald("wald", "population", theta, variance)})


def rare_branch_outputs_record(X, y, epsilon, delta, rng):
    """With probability 10⁻² (≫ δ) θ̂ is the row with the largest label, x·y, instead of the estimate."""
    s = _scales(epsilon, delta)
    theta = _solve(*_releases(X, y, epsilon, delta, rng, s), s)
    if rng.random() < 1e-2:
        k = int(np.argmax(y))
        return X[k] * y[k]
    return theta


def ldp_negative_labels_under_noised(X, y, epsilon, delta, rng):
    """Reports released one by one; users with y < 0 (half of them on typical data) get ×0.5 noise."""
    return _reports(X, y, epsilon, delta, rng, per_user=None, factors=np.where(y < 0, 0.5, 1.0))


# ------------------------------------------------------------------------------------------------------------
# honest but unusual


def output_perturbation(X, y, epsilon, delta, rng):
    """Ridge θ_λ = (XᵀX + λI)⁻¹XᵀY with λ = n, released with Gaussian noise: zero-out sensitivity
    ‖θ_D − θ_D′‖ ≤ ‖x‖·|y − xᵀθ_D′|/λ ≤ (1 + ‖XᵀY‖/λ)/λ ≤ (1 + n/λ)/λ = 2/n at ‖x‖, |y| ≤ 1."""
    n, d = X.shape
    lam = float(n)
    theta = np.linalg.solve(X.T @ X + lam * np.eye(d), X.T @ y)
    sens = (1.0 + n / lam) / lam
    s = sigma_agm(epsilon, delta, sens)
    return released("θ_λ", theta + s * rng.standard_normal(d), theta, scale=s, sensitivity=sens)


def rows_clipped_labels_assumed(X, y, epsilon, delta, rng):
    """Honest SSP that clips rows to ‖x‖ ≤ 1 and *assumes* |y| ≤ 1 (declared: ``Bounds(clipped=("x",))``, as the
    Stein GLMs do): the audit may feed rows far outside the bound, not labels."""
    Xc = X / np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    s = _scales(epsilon, delta)
    return _solve(*_releases(Xc, y, epsilon, delta, rng, s), s)


def child_generator(X, y, epsilon, delta, rng):
    """Honest SSP whose noise comes from a child generator spawned from the trial's rng."""
    child = np.random.default_rng(rng.integers(2**63))
    s = _scales(epsilon, delta)
    return _solve(*_releases(X, y, epsilon, delta, child, s), s)


@dataclass(frozen=True)
class Broken:
    """One zoo entry: the fit, its privacy model, and the checks that may catch it (any one suffices)."""

    name: str
    fit: object
    expected: tuple[str, ...]
    model: str = "central"
    neighbour: str = "zero_out"
    rare: bool = False  # a branch of probability 10⁻³: needs ≥ 10⁴ replays
    clips: bool = False  # declares that it clips the data to its bounds (Bounds(x=1, y=1, clips=True))
    clipped: tuple[str, ...] = ("x", "y")  # what it declares it clips (Bounds.clipped), when ``clips``
    settings: bool = False  # broken only at a run's own settings (δ = 1/n², large n): audited there too


ZOO = (
    Broken("noise ×0.4 declared at its true scale", noise_reduced_declared_true, ("cert", "gdp")),
    Broken("declared scale > noise added (×0.6)", declared_larger_than_added, ("noise",)),
    Broken("data-dependent normalisation (÷ max row norm)", normalised_by_max, ("sensitivity",)),
    Broken("ridge from the exact λ_min", ridge_from_exact_lambda_min, ("replay",)),
    Broken("exact XᵀX (noise on XᵀY only)", exact_gram, ("replay",)),
    Broken("shadow computation (same draws ×0.4)", shadow_computation, ("replay",)),
    Broken("releases discarded, θ̂ = OLS", discarded_releases, ("replay",)),
    Broken("exact OLS with probability 10⁻³", rare_exact_ols, ("replay",), rare=True),
    Broken("no noise with probability 10⁻³", rare_no_noise, ("atom",), rare=True),
    Broken("noise ×10⁻³ with probability 10⁻³", rare_tiny_noise, ("atom",), rare=True),
    Broken("clipping to the median row norm", median_clip, ("scale",)),
    Broken("noise scale computed from the data", scale_from_data, ("scale",)),
    Broken("understated sensitivity (2XᵀY declared 1)", understated_sensitivity, ("sensitivity",)),
    Broken("honest only while recorded", honest_only_when_recorded, ("recording",)),
    Broken("centre declared as a public constant (noise ×0.4)", lying_centre_x04, ("centre",)),
    Broken("label in θ̂'s round-off (10⁻¹³)", low_bits, ("replay",)),
    Broken("LDP noise ×0.5 declared honestly", ldp_half_noise_declared, ("cert", "gdp"), "local", "replace_one"),
    Broken("LDP: first half of users ×0.5 noise", ldp_first_half_half_noise, ("users",), "local", "replace_one"),
    Broken("LDP: first half ×0.5, mean released", ldp_first_half_half_noise_mean, ("noise",), "local",
           "replace_one"),
    Broken("LDP report reads a neighbour's record", ldp_reads_neighbour, ("error",), "local", "replace_one"),
    Broken("release sequence depends on the data", data_dependent_sequence, ("error",)),
)  # fmt: skip

ZOO36 = (
    Broken("one entry of a release without noise", one_entry_unnoised, ("entry",)),
    Broken("refinement on the raw rows with y < 0", refine_on_negative_rows, ("replay",)),
    Broken("ridge λ by cross-validation on the raw data", ridge_by_cross_validation, ("replay",)),
    Broken("clip bound from a quantile of the row norms", clip_at_norm_quantile, ("scale",)),
    Broken("noise correlation set by the data (right marginals)", correlated_when_labels_positive,
           ("correlation",)),
    Broken("LDP noise of a user coupled to another's label", ldp_noise_coupled_to_neighbour, ("correlation",),
           "local", "replace_one"),
    Broken("δ ignored (calibrated at 10⁻⁵)", delta_ignored, ("declared",), settings=True),
    Broken("noise shrinking with n beyond 1,000", noise_shrinks_with_n, ("cert", "gdp", "declared"),
           settings=True),
    Broken("labels clipped on one side by a clipping mechanism", one_sided_label_clip, ("sensitivity",),
           clips=True),
    Broken("rare branch (10⁻²) outputs a record", rare_branch_outputs_record, ("replay",)),
    Broken("interval from the raw residual variance", interval_from_raw_residuals, ("replay",)),
    Broken("LDP users with y < 0 under-noised (×0.5)", ldp_negative_labels_under_noised, ("users",), "local",
           "replace_one"),
)  # fmt: skip

HONEST_UNUSUAL = (
    Broken("output perturbation", output_perturbation, ()),
    Broken("child generator of the trial rng", child_generator, ()),
    Broken("one joint release at the exact AGM σ", joint_ssp, ()),
    Broken("rows clipped, labels assumed bounded", rows_clipped_labels_assumed, (), clips=True, clipped=("x",)),
    Broken("per-user Laplace reports", honest_laplace_randomizer, (), "local", "replace_one"),
)

HONEST = (
    Broken("honest SSP", honest_ssp, ()),
    Broken("honest randomiser", honest_randomizer, (), "local", "replace_one"),
    Broken("honest per-user Laplace reports", honest_laplace_randomizer, (), "local", "replace_one"),
)
