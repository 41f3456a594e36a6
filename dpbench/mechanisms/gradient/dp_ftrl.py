"""DP-FTRL-Σ mechanisms (spec 002 §3, §6.1): one pass, Σ⁻¹-norm clipping, tree-aggregated Gaussian noise.

Privacy model: central (ε, δ)-DP for one labelled training record, neighbour notion a hyperparameter
(``neighbour="zero_out"``, the benchmark's, by default; the paper's stand-alone notion is ``replace_one``). Node noise
N(0, τ²ψ²Σ) with τ = :func:`~dpbench.privacy.tree.tau_tree` (``calibration`` = agm | rdp | paper, spec 002 §2.3);
Σ, C, l_0, η and the stream order are data-independent (public rows, known design constants or hyperparameters).
``calibration="paper"`` with replace-one is recorded with ``info.privacy_certified = False`` (ambiguity #1).

Registry keys (spec 002 §6.1): ``dp_ftrl_identity`` (Σ = I), ``dp_ftrl_sigma_public`` (Σ = X̃ᵀX̃/M + I/(Nη) from
unlabeled public rows), ``dp_ftrl_sigma_oracle`` (Σ = H + I/(Nη), synthetic only), ``sgd_avg_nonprivate`` (τ = 0,
ψ = ∞: one-pass constant-step averaged SGD, the reference line).

The design constants ``spectrum``/``r`` (η rule), ``trH`` (C and η_max) and ``l0`` (ψ = C·l0) default to the
generator's values for the oracle design (it sees the population) and must be given as hyperparameters otherwise
(or ``C_X``/``C_Y`` for bounded real data).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpbench.mechanisms._base import FitResult, check_inputs
from dpbench.mechanisms.gradient.dp_ftrl_core import fit_dp_ftrl
from dpbench.privacy.tree import certified, kbar, tau_tree
from dpbench.registry import register_mechanism


def calibrate(epsilon: float, delta: float, n: int, neighbour: str, calibration: str) -> tuple[float, dict[str, Any]]:
    """τ and the privacy columns of the CSV (spec 002 §2.3, §6.3)."""
    tau = tau_tree(epsilon, delta, n, neighbour, calibration)
    info = {
        "neighbour": neighbour,
        "calibration": calibration,
        "privacy_certified": certified(neighbour, calibration),
        "kbar": kbar(n),
    }
    return tau, info


def _fit(
    X: np.ndarray,
    y: np.ndarray,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    sigma_design: str,
    neighbour: str,
    calibration: str,
    **options: Any,
) -> FitResult:
    X, y = check_inputs(X, y, epsilon, delta, x_bound=None, y_bound=None)
    tau, cal = calibrate(epsilon, delta, X.shape[0], neighbour, calibration)
    theta, info = fit_dp_ftrl(X, y, epsilon, delta, rng, sigma_design=sigma_design, tau=tau,
                              calibration_info=cal, **options)
    return FitResult(theta, info)


STYLE = {
    "dp_ftrl_identity": {"color": "tab:purple", "marker": "o", "linestyle": "-"},
    "dp_ftrl_sigma_public": {"color": "darkorange", "marker": "s", "linestyle": "-"},
    "dp_ftrl_sigma_oracle": {"color": "tab:cyan", "marker": "^", "linestyle": "--"},
    "sgd_avg_nonprivate": {"color": "black", "marker": "x", "linestyle": ":"},
}


@register_mechanism(
    "dp_ftrl_identity",
    summary="DP-FTRL-I: one-pass tree-aggregated DP-FTRL with isotropic noise (spec 002 §3.1, Kairouz et al. 2021)",
    privacy_model="central",
    neighbour="zero_out",
    spec="002 §3.1",
    style=STYLE["dp_ftrl_identity"],
)
def fit_identity(
    X: np.ndarray,
    y: np.ndarray,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    *,
    neighbour: str = "zero_out",
    calibration: str = "agm",
    eta: float | str = "rule",
    eta_c1: float = 1.0,
    eta_c2: float = 8.0,
    spectrum: str = "unknown",
    r: float | None = None,
    trH: float | None = None,
    eta_max: float | None = None,
    clip_C: float | str = "auto",
    c_C: float = 2.0,
    C_X: float | None = None,
    C_Y: float | None = None,
    l0: float | None = None,
    shuffle: bool = True,
) -> FitResult:
    """Σ = I; C = C_X (bounded rows) or c_C·√tr(H); ψ = C·l0 (l0 = √2·C_Y for |y| ≤ C_Y)."""
    return _fit(X, y, epsilon, delta, rng, "identity", neighbour, calibration, eta=eta, eta_c1=eta_c1,
                eta_c2=eta_c2, spectrum=spectrum, r=r, trH=trH, eta_max=eta_max, clip_C=clip_C, c_C=c_C, C_X=C_X,
                C_Y=C_Y, l0=l0, shuffle=shuffle)


@register_mechanism(
    "dp_ftrl_sigma_public",
    summary="DP-FTRL-Σ with Σ = X̃ᵀX̃/M + I/(Nη) from unlabeled public rows (spec 002 §3.4, Eq. 3.2)",
    privacy_model="central",
    neighbour="zero_out",
    needs=("public_X",),
    spec="002 §3.4",
    style=STYLE["dp_ftrl_sigma_public"],
)
def fit_sigma_public(
    X: np.ndarray,
    y: np.ndarray,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    *,
    neighbour: str = "zero_out",
    calibration: str = "agm",
    eta: float | str = "rule",
    eta_c1: float = 1.0,
    eta_c2: float = 8.0,
    spectrum: str = "unknown",
    r: float | None = None,
    trH: float | None = None,
    eta_max: float | None = None,
    clip_C: float | str = "auto",
    c_C: float = 2.0,
    C_Y: float | None = None,
    l0: float | None = None,
    lam_mult: float = 1.0,
    public_C_fraction: float = 0.2,
    public_C_rows: int | None = None,
    shuffle: bool = True,
    public_X: np.ndarray | None = None,
) -> FitResult:
    """Σ from the first rows of ``public_X``; C = c_C·√(mean ‖x̃‖²_{Σ⁻¹}) on the held-out public rows."""
    return _fit(X, y, epsilon, delta, rng, "public", neighbour, calibration, public_X=public_X, eta=eta,
                eta_c1=eta_c1, eta_c2=eta_c2, spectrum=spectrum, r=r, trH=trH, eta_max=eta_max, clip_C=clip_C,
                c_C=c_C, C_Y=C_Y, l0=l0, lam_mult=lam_mult, public_C_fraction=public_C_fraction,
                public_C_rows=public_C_rows, shuffle=shuffle)


@register_mechanism(
    "dp_ftrl_sigma_oracle",
    summary="DP-FTRL-Σ with the population design Σ = H + I/(Nη) (synthetic only; spec 002 §3.4, Eq. 3.1)",
    privacy_model="central",
    neighbour="zero_out",
    needs=("population",),
    spec="002 §3.4",
    style=STYLE["dp_ftrl_sigma_oracle"],
)
def fit_sigma_oracle(
    X: np.ndarray,
    y: np.ndarray,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    *,
    neighbour: str = "zero_out",
    calibration: str = "agm",
    eta: float | str = "rule",
    eta_c1: float = 1.0,
    eta_c2: float = 8.0,
    eta_max: float | None = None,
    clip_C: float | str = "auto",
    c_C: float = 2.0,
    l0: float | None = None,
    lam_mult: float = 1.0,
    psi_mode: str = "fixed",
    psi_cap: float | str | None = None,
    estimating_m: int = 256,
    shuffle: bool = True,
    population=None,
) -> FitResult:
    """Σ = H + (lam_mult/(Nη))I with the generator's H; C = c_C·√tr(Σ⁻¹H) exact; ψ = C·l0 (l0 from the design).

    ``psi_mode="public_labeled"`` runs RESIDUALEST Option 1 on the first ``estimating_m`` labelled public rows the
    generator provides (``population.extra['estimating']``), capped at ``psi_cap`` if given (``"C_l0"``: the
    fixed-ψ level C·l0; spec 002 §3.5);
    ``psi_mode="private_split"`` treats the same rows as the disjoint private estimating split (Option 2).
    """
    est_X = est_y = None
    if psi_mode in ("public_labeled", "private_split"):
        if population is None or "estimating" not in population.extra:
            raise ValueError(f"psi_mode={psi_mode!r} needs labelled estimating rows from the generator")
        est_X, est_y = population.extra["estimating"]
        est_X, est_y = est_X[:estimating_m], est_y[:estimating_m]
    return _fit(X, y, epsilon, delta, rng, "oracle", neighbour, calibration, population=population, eta=eta,
                eta_c1=eta_c1, eta_c2=eta_c2, eta_max=eta_max, clip_C=clip_C, c_C=c_C, l0=l0, lam_mult=lam_mult,
                psi_mode=psi_mode, psi_cap=psi_cap, estimating_X=est_X, estimating_y=est_y, shuffle=shuffle)


@register_mechanism(
    "sgd_avg_nonprivate",
    summary="Non-private one-pass constant-step iterate-averaged SGD (= DP-FTRL with τ = 0, ψ = ∞; spec 002 §3.1)",
    privacy_model="none",
    neighbour="none",
    spec="002 §3.1",
    style=STYLE["sgd_avg_nonprivate"],
)
def fit_sgd_avg(
    X: np.ndarray,
    y: np.ndarray,
    epsilon: float | None,
    delta: float | None,
    rng: np.random.Generator,
    *,
    eta: float | str = "rule",
    eta_c1: float = 1.0,
    spectrum: str = "unknown",
    r: float | None = None,
    trH: float | None = None,
    eta_max: float | None = None,
    C_X: float | None = None,
    shuffle: bool = True,
) -> FitResult:
    """η = min{η_max, c1·N^{−1/(1+r)}} (rule, τ = 0); ignores ε and δ."""
    X, y = check_inputs(X, y, None, None, x_bound=None, y_bound=None)
    theta, info = fit_dp_ftrl(X, y, None, None, rng, sigma_design="identity", tau=0.0,
                              calibration_info={"privacy_certified": True}, eta=eta, eta_c1=eta_c1,
                              spectrum=spectrum, r=r, trH=trH, eta_max=eta_max, C_X=C_X, shuffle=shuffle,
                              nonprivate=True)
    info["psi"] = math.inf
    return FitResult(theta, info)


@register_mechanism(
    "ftrl_zero",
    summary="Zero predictor θ = 0 (reference line of the DP-FTRL figures; spec 002 §5.3 E3)",
    privacy_model="none",
    neighbour="none",
    spec="002 §5.3",
    style={"color": "grey", "marker": "", "linestyle": "-."},
)
def fit_zero(X: np.ndarray, y: np.ndarray, epsilon: float | None, delta: float | None,
             rng: np.random.Generator) -> FitResult:
    """θ = 0 (uses no data and no randomness)."""
    return FitResult(np.zeros(np.asarray(X).shape[1]))
