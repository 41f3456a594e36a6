"""DP-GD with checkpoint confidence intervals (Brown, Dvijotham, Evans, Liu, Smith, Thakurta, ICML 2024; spec 005 §4).

Privacy model: central (ε, δ)-DP, replace-one neighbours, ‖x_i‖ ≤ 1 (residual clipping at C, as ``dpgd``). One
exact GDP budget μ*(ε, δ) for everything released, composed adaptively (Dong–Roth–Su):

* the T noisy gradient steps of ``dpgd`` (its ``gdp`` accounting), at μ_GD = μ*·√(1 − f);
* with ``sampling_term=True`` two more releases at μ*·√(f/2) each — R_X = XᵀX + s_X·Sym(Z) (Δ_F = √2 under
  replace-one: ‖xxᵀ − x'x'ᵀ‖_F² = ‖x‖⁴ + ‖x'‖⁴ − 2(xᵀx')² ≤ 2) and R_r = Σ_i clip_C(y_i − x_iᵀθ̄)² + s_r·z
  (Δ = C², each term in [0, C²]; θ̄ is public, post-processing of the path); f = ``extra_share``.

Defaults (T = 200, η = 1, b = 100, k = 10, K = 10): the loss (1/2n)‖y − Xθ‖² is L-smooth with
L = λ_max(XᵀX/n) ≤ max‖x_i‖² ≤ 1 under the declared bound, so η = 1/L = 1 is the largest constant step that
contracts on every dataset the contract admits; without clipping θ_t − θ̂ = (I − ηΣ̂)^t(θ₀ − θ̂) + noise (spec 005
§4), so the start's bias left at the first checkpoint is ≤ (1 − ηλ_min(Σ̂))^b·‖θ̂‖ — 0.6% for λ_min(Σ̂) ≥ 0.05
(d ≲ 10 coefficients spread over the unit ball). Brown et al.'s script (T = 50, η = 1/5, b = 5, k = 5) is for
x ~ N(0, I) *unscaled* (λ_min ≈ 1, ηλ_min = 0.2); in the unit ball λ_min ≈ 1/d and their T and b leave
most of the start's bias (the estimator's fit did not converge). Smaller λ_min(Σ̂) needs a larger T and b.

Intervals (post-processing of the released path θ_0..θ_T and R_X, R_r):

* ``checkpoint`` (target: the data set's own least-squares fit θ̂_OLS — privacy noise only): the K checkpoints
  θ_b, θ_{b+k}, …, θ_{b+(K−1)k} (b = burn-in, k = stride), θ̄ their mean, s_j their sample std (ddof 1);
  CI_j = θ̄_j ± z_{1−α/2}·s_j/√K. θ̂ = θ̄. Checkpoints k steps apart are correlated by (I − ηΣ̂)^k, so the K-mean
  interval under-covers when ηλ_min·k is small — measured, not corrected (spec 005 §4).
* ``checkpoint_pop`` (target: the population θ; only with ``sampling_term=True``): the sampling term added privately,
  CI_j = θ̄_j ± z·√(s_j²/K + σ̃²[H⁻¹]_jj), H = PSD(R_X) floored at 1 (one row's worth), σ̃² = max{floor, R_r/(n − d)}.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpbench.contract import SATURATING_LABEL, AuditSetup, Bounds, Hyper, HyperError
from dpbench.linalg import symmetric_gaussian
from dpbench.mechanisms._base import FitResult, check_inputs, released
from dpbench.mechanisms._intervals import psd_floor, wald
from dpbench.mechanisms.gradient import dpgd
from dpbench.privacy.gdp import gdp_epsilon, gdp_mu
from dpbench.registry import register_mechanism


def checkpoint_indices(T: int, burn_in: int, stride: int, K: int) -> np.ndarray:
    """b, b + k, …, b + (K − 1)k — the checkpoints' steps (each ≤ T)."""
    return burn_in + stride * np.arange(K)


def checkpoint_moments(path: np.ndarray, index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(θ̄, s²/K): the checkpoints' mean and the variance of that mean (sample variance, ddof 1, over K)."""
    points = path[index]
    return points.mean(axis=0), points.var(axis=0, ddof=1) / len(index)


def budget_split(epsilon: float, delta: float, extra_share: float) -> tuple[float, float]:
    """(ε_GD, μ_extra): the ε whose exact GDP μ is μ*·√(1 − f) (passed to ``dpgd``'s gdp accounting) and the μ
    of each of the two extra releases, μ*·√(f/2), so that μ_GD² + 2μ_extra² = μ*²."""
    mu = gdp_mu(epsilon, delta)
    return gdp_epsilon(mu * np.sqrt(1.0 - extra_share), delta), mu * np.sqrt(extra_share / 2.0)


def _check(hyper: dict[str, Any]) -> None:
    last = hyper["burn_in"] + hyper["stride"] * (hyper["checkpoints"] - 1)
    if last > hyper["T"]:
        raise HyperError("T", f"must be ≥ burn_in + stride·(checkpoints − 1) = {last}, got {hyper['T']}")


@register_mechanism(
    "dpgd_checkpoints",
    summary="DP-GD (exact GDP) with checkpoint CIs of θ̂_OLS, + private sampling term for θ (Brown et al. 2024)",
    privacy_model="central",
    neighbour="replace_one",
    spec="005 §4",
    style={"color": "dimgray", "marker": "X", "linestyle": "--"},
    hyper={
        "T": Hyper(int, default=200, ge=2, doc="gradient steps"),
        "C": Hyper(float, default=1.0, gt=0, doc="residual clipping level"),
        "learning_rate": Hyper(float, default=1.0, gt=0, doc="step size η (1 = 1/L: module docstring)"),
        "burn_in": Hyper(int, default=100, ge=0, doc="first checkpoint b"),
        "stride": Hyper(int, default=10, ge=1, doc="steps k between checkpoints"),
        "checkpoints": Hyper(int, default=10, ge=2, doc="number K of checkpoints"),
        "sampling_term": Hyper(bool, default=True, doc="also release XᵀX and the residual sum (checkpoint_pop)"),
        "extra_share": Hyper(float, default=0.2, gt=0, lt=1, doc="share f of μ*² for the two extra releases"),
        "sigma2_floor": Hyper(float, default=1e-4, gt=0, doc="floor of the private residual variance"),
    },
    bounds=Bounds(x=1.0, n_ge_d=True),
    check=_check,
    audit=AuditSetup(
        hyper={"T": 12, "burn_in": 2, "stride": 2, "checkpoints": 5}, whitebox={"pair": {"y_bound": SATURATING_LABEL}}
    ),  # fmt: skip
    intervals=("checkpoint_pop", "checkpoint"),
)
def fit(
    X: np.ndarray, y: np.ndarray, epsilon: float, delta: float, rng: np.random.Generator, **hyper: Any
) -> FitResult:
    """θ̄ (the checkpoint mean) and its ``checkpoint`` / ``checkpoint_pop`` intervals (module docstring)."""
    X, y = check_inputs(X, y, epsilon, delta, x_bound=1.0, y_bound=None)
    n, d = X.shape
    if n <= d + 1:
        raise ValueError(f"dpgd_checkpoints needs n > d + 1 rows, got n = {n}, d = {d}")
    T, C, sampling = int(hyper["T"]), hyper["C"], hyper["sampling_term"]
    eps_gd, mu_extra = budget_split(epsilon, delta, hyper["extra_share"]) if sampling else (epsilon, 0.0)
    steps = {k: hyper[k] for k in ("T", "C", "learning_rate")}
    path = dpgd.fit(X, y, eps_gd, delta, rng, **steps, clip="residual", accounting="gdp").info["path"]
    index = checkpoint_indices(T, hyper["burn_in"], hyper["stride"], hyper["checkpoints"])
    theta, privacy_var = checkpoint_moments(path, index)
    intervals = {"checkpoint": wald("checkpoint", "data_fit", theta, privacy_var)}
    info: dict[str, Any] = {"epsilon_gd": eps_gd}
    if sampling:
        s_x, s_r = np.sqrt(2.0) / mu_extra, C**2 / mu_extra
        xtx = X.T @ X
        gram = released("XᵀX", xtx + s_x * symmetric_gaussian(d, rng), xtx, scale=s_x, sensitivity=np.sqrt(2.0),
                        symmetric=True)  # fmt: skip
        rss = float(np.sum(np.clip(y - X @ theta, -C, C) ** 2))
        rss_noisy = released("Σ clip(r_i)²", rss + s_r * rng.standard_normal(), rss, scale=s_r, sensitivity=C**2)
        sigma2 = max(hyper["sigma2_floor"], rss_noisy / (n - d))
        sampling_var = sigma2 * np.diag(np.linalg.inv(psd_floor(gram, 1.0)))
        intervals["checkpoint_pop"] = wald("checkpoint_pop", "population", theta, privacy_var + sampling_var)
        info.update({"sigma2_private": sigma2, "s_gram": s_x, "s_rss": s_r})
    return FitResult(theta, info, intervals)
