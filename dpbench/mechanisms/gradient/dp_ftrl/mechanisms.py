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
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from dpbench.contract import SATURATING_LABEL, AuditSetup, Bounds, HyperError
from dpbench.mechanisms._base import FitResult, check_inputs
from dpbench.mechanisms.gradient.dp_ftrl.core import declared, fit_dp_ftrl
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
    *,
    neighbour: str,
    calibration: str,
    **hyper: Any,
) -> FitResult:
    X, y = check_inputs(X, y, epsilon, delta, x_bound=None, y_bound=None)
    tau, cal = calibrate(epsilon, delta, X.shape[0], neighbour, calibration)
    theta, info = fit_dp_ftrl(
        X, y, epsilon, delta, rng, sigma_design=sigma_design, tau=tau, calibration_info=cal, **hyper
    )
    return FitResult(theta, info)


#: white-box audit of the tree: the literal loop declares its nodes; n = 2⁵ and the canary first (the first leaf is in
#: all k̄ = 6 released nodes); a huge label saturates the clip
TREE_WHITEBOX = {
    "pair": {"n": 32, "y_bound": SATURATING_LABEL, "canary_first": True},
    "hyper": {"shuffle": False, "engine": "reference"},
}


def poly_rule_needs_r(h: Mapping[str, Any]) -> None:
    """The η rule for a polynomial spectrum needs its exponent r > 1 (spec 002 §3.5)."""
    if h.get("eta") == "rule" and h.get("spectrum") == "poly" and (h.get("r") is None or h["r"] <= 1):
        raise HyperError("r", f"spectrum: poly with eta: rule needs r > 1, got {h.get('r')!r}")


def tree_neighbour(h: Mapping[str, Any]) -> str:
    return h["neighbour"]


STYLE = {
    "dp_ftrl_identity": {"color": "tab:purple", "marker": "o", "linestyle": "-"},
    "dp_ftrl_sigma_public": {"color": "darkorange", "marker": "s", "linestyle": "-"},
    "dp_ftrl_sigma_oracle": {"color": "tab:cyan", "marker": "^", "linestyle": "--"},
    "sgd_avg_nonprivate": {"color": "black", "marker": "x", "linestyle": ":"},
}


def tree_certify(hyper) -> tuple[str, str] | None:
    """The strict profile's test (:meth:`~dpbench.registry.MechanismInfo.with_profile`): the paper's Thm 4.1 τ is not
    certified under replace-one neighbours (spec 002 ambiguity #1; 27.8 vs the exact AGM 30.5 at ε = 1)."""
    if certified(hyper["neighbour"], hyper["calibration"]):
        return None
    return "calibration", "the paper's τ (Thm 4.1) is not certified under replace-one neighbours; use agm or rdp"


#: the hyperparameters every tree mechanism declares, in groups (the order of a mechanism's table): the neighbour
#: notion, the calibration and the step-size rule η; the spectrum-based η rule (identity and public Σ); the cap on η
#: and the clipping rule C
STEP_RULE = ("neighbour", "calibration", "eta", "eta_c1", "eta_c2")
SPECTRUM_RULE = ("spectrum", "r", "trH")
CLIP_RULE = ("eta_max", "clip_C", "c_C")


def register_tree(
    name: str, *, audit_hyper: Mapping[str, Any], **contract: Any
) -> Callable[[Callable[..., FitResult]], Callable[..., FitResult]]:
    """``register_mechanism`` for a tree mechanism: the contract the three share (central DP, the neighbour notion a
    hyperparameter, the strict profile's certificate of the tree calibration, the audit's tree white-box setup), its
    :data:`STYLE`, the audit's hyperparameters ``audit_hyper`` and its own declarations ``contract``."""
    return register_mechanism(
        name,
        privacy_model="central",
        neighbour=tree_neighbour,
        certify=tree_certify,
        style=STYLE[name],
        audit=AuditSetup(hyper=audit_hyper, whitebox=TREE_WHITEBOX),
        **contract,
    )


@register_tree(
    "dp_ftrl_identity",
    summary="DP-FTRL-I: one-pass tree-aggregated DP-FTRL with isotropic noise (spec 002 §3.1, Kairouz et al. 2021)",
    spec="002 §3.1",
    hyper=declared(
        *STEP_RULE,
        *SPECTRUM_RULE,
        *CLIP_RULE,
        "C_X",
        "C_Y",
        "l0",
        "shuffle",
        "engine",
    ),
    check=poly_rule_needs_r,
    bounds=Bounds(x="C_X", y="C_Y", clips=True, note="rows are clipped in the Σ⁻¹-norm at C·l0"),
    # white-box audit: the literal tree loop declares its nodes (TREE_WHITEBOX: n = 2⁵, the canary first — the first
    # leaf is in all k̄ = 6 released nodes); a huge label saturates the clip
    audit_hyper={"C_X": 1.0, "C_Y": 1.0},
)
def fit_identity(
    X: np.ndarray, y: np.ndarray, epsilon: float, delta: float, rng: np.random.Generator, **hyper: Any
) -> FitResult:
    """Σ = I; C = C_X (bounded rows) or c_C·√tr(H); ψ = C·l0 (l0 = √2·C_Y for |y| ≤ C_Y). ``engine="reference"``
    runs the literal tree loop, whose nodes are declared releases (the white-box audit uses it)."""
    return _fit(X, y, epsilon, delta, rng, "identity", **hyper)


@register_tree(
    "dp_ftrl_sigma_public",
    summary="DP-FTRL-Σ with Σ = X̃ᵀX̃/M + I/(Nη) from unlabeled public rows (spec 002 §3.4, Eq. 3.2)",
    needs=("public_X",),
    spec="002 §3.4",
    hyper=declared(
        *STEP_RULE,
        *SPECTRUM_RULE,
        *CLIP_RULE,
        "C_Y",
        "l0",
        "lam_mult",
        "public_C_fraction",
        "public_C_rows",
        "shuffle",
        "engine",
        "sigma_factor",
    ),
    check=poly_rule_needs_r,
    bounds=Bounds(y="C_Y", clips=True, note="rows are clipped in the Σ⁻¹-norm at C·l0"),
    # white-box audit: the literal loop declares its nodes whitened by Σ (noise N(0, σ²I)); a saturated clip moves
    # every whitened node the canary is in by ψ, whatever its direction
    audit_hyper={"C_Y": 1.0},
)
def fit_sigma_public(
    X: np.ndarray,
    y: np.ndarray,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    *,
    public_X: np.ndarray | None = None,
    **hyper: Any,
) -> FitResult:
    """Σ from the first rows of ``public_X``; C = c_C·√(mean ‖x̃‖²_{Σ⁻¹}) on the held-out public rows.

    ``sigma_factor``: the noise z = F u uses F = V diag(√((μ+λ)/M)) from the eigendecomposition PᵀP = V diag(μ) Vᵀ
    (``eigh``, default: the rows' XV is computed once per data draw and serves every ε) or the Cholesky factor of Σ
    (``cholesky``, the earlier engine). Both satisfy FFᵀ = Σ, so the output law is the same
    (tests/mechanisms/gradient/test_dp_ftrl_speed.py).
    """
    return _fit(X, y, epsilon, delta, rng, "public", public_X=public_X, **hyper)


@register_tree(
    "dp_ftrl_sigma_oracle",
    summary="DP-FTRL-Σ with the population design Σ = H + I/(Nη) (synthetic only; spec 002 §3.4, Eq. 3.1)",
    needs=("population",),
    spec="002 §3.4",
    hyper=declared(
        *STEP_RULE,
        *CLIP_RULE,
        "l0",
        "lam_mult",
        "psi_mode",
        "psi_cap",
        "estimating_m",
        "shuffle",
        "engine",
    ),
    bounds=Bounds(clips=True, note="rows are clipped in the Σ⁻¹-norm at C·l0 (l0 from the generator's design)"),
    audit_hyper={"l0": math.sqrt(2.0)},
)
def fit_sigma_oracle(
    X: np.ndarray,
    y: np.ndarray,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    *,
    population=None,
    **hyper: Any,
) -> FitResult:
    """Σ = H + (lam_mult/(Nη))I with the generator's H; C = c_C·√tr(Σ⁻¹H) exact; ψ = C·l0 (l0 from the design).

    ``psi_mode="public_labeled"`` runs RESIDUALEST Option 1 on the first ``estimating_m`` labelled public rows the
    generator provides (``population.extra['estimating']``), capped at ``psi_cap`` if given (``"C_l0"``: the
    fixed-ψ level C·l0; spec 002 §3.5);
    ``psi_mode="private_split"`` treats the same rows as the disjoint private estimating split (Option 2).
    """
    est_X = est_y = None
    if hyper["psi_mode"] in ("public_labeled", "private_split"):
        if population is None or "estimating" not in population.extra:
            raise ValueError(f"psi_mode={hyper['psi_mode']!r} needs labelled estimating rows from the generator")
        est_X, est_y = population.extra["estimating"]
        est_X, est_y = est_X[: hyper["estimating_m"]], est_y[: hyper["estimating_m"]]
    return _fit(
        X, y, epsilon, delta, rng, "oracle", population=population, estimating_X=est_X, estimating_y=est_y, **hyper
    )


@register_mechanism(
    "sgd_avg_nonprivate",
    summary="Non-private one-pass constant-step iterate-averaged SGD (= DP-FTRL with τ = 0, ψ = ∞; spec 002 §3.1)",
    privacy_model="none",
    neighbour="none",
    spec="002 §3.1",
    style=STYLE["sgd_avg_nonprivate"],
    hyper=declared("eta", "eta_c1", "spectrum", "r", "trH", "eta_max", "C_X", "shuffle"),
    check=poly_rule_needs_r,
    audit=AuditSetup(hyper={"C_X": 1.0}),
)
def fit_sgd_avg(
    X: np.ndarray, y: np.ndarray, epsilon: float | None, delta: float | None, rng: np.random.Generator, **hyper: Any
) -> FitResult:
    """η = min{η_max, c1·N^{−1/(1+r)}} (rule, τ = 0); ignores ε and δ."""
    X, y = check_inputs(X, y, None, None, x_bound=None, y_bound=None)
    theta, info = fit_dp_ftrl(
        X,
        y,
        None,
        None,
        rng,
        sigma_design="identity",
        tau=0.0,
        calibration_info={"privacy_certified": True},
        nonprivate=True,
        **hyper,
    )
    info["psi"] = math.inf
    return FitResult(theta, info)
