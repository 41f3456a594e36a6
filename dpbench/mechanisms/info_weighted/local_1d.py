"""One-dimensional pure-LDP mechanisms of spec 000 §3.1 and §3.12 (E5: the L1-covariance, not the covariance).

``ldp_simple_1d`` (Alg 1) privatises sign(φ)y and |φ| and estimates θ̂ = clip_1(ψ̂/Ψ̂), which targets
E|φ|·θ = E[sign(φ)y]; ``ldp_laplace_ssp_1d`` privatises φy and φ² (the smooth channel of Prop 3.2), targeting
E[φ²]θ = E[φy]. Both: per-user Laplace noise, scales b_ψ = 4/ε (range 2) and b_Ψ = 2/ε (range 1), each release at
ε/2 ⇒ (ε, 0)-LDP (spec 000 #6). ``paper_scale=True`` uses 2/ε for both (the variance in the proof of Lemma 3.1),
which is only 1.5ε-LDP and is recorded as ``epsilon_effective``. Inputs: φ ∈ [−1, 1], y ∈ [−1, 1] (B = 1, d = 1).
"""

from __future__ import annotations

import numpy as np

from dpbench.contract import AuditSetup, Bounds, Hyper
from dpbench.mechanisms._base import FitResult, check_inputs, released
from dpbench.privacy.info_weighted import laplace_scale
from dpbench.registry import register_mechanism


def _scales(epsilon: float, paper_scale: bool) -> tuple[float, float, float]:
    if paper_scale:
        return 2.0 / epsilon, 2.0 / epsilon, 1.5 * epsilon
    return laplace_scale(2.0, epsilon / 2.0), laplace_scale(1.0, epsilon / 2.0), epsilon


#: the contract both mechanisms share: pure ε-LDP (δ unused), φ ∈ [−1, 1], y ∈ [−1, 1], d = 1
CONTRACT = {
    "hyper": {"paper_scale": Hyper(bool, doc="scale 2/ε for both releases (only 1.5ε-LDP: epsilon_effective)")},
    "bounds": Bounds(x=1.0, y=1.0, d=1),
    "audit": AuditSetup(d=1, whitebox={"pair": {"n": 16}}),
    "uses_delta": False,
}


def _ratio(psi: float, Psi: float) -> float:
    return 0.0 if Psi == 0 else float(np.clip(psi / Psi, -1.0, 1.0))


def _check_1d(X: np.ndarray, y: np.ndarray, epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    X, y = check_inputs(X, y, epsilon, None, x_bound=1.0, y_bound=1.0)
    if X.shape[1] != 1:
        raise ValueError(f"this mechanism is one-dimensional (d = 1), got d = {X.shape[1]}")
    return X[:, 0], y


@register_mechanism(
    "ldp_simple_1d",
    summary="Optimal 1-D LDP regression: Laplace on sign(φ)y and |φ|, θ̂ = clip(ψ̂/Ψ̂) (Alg 1; 000 §3.1)",
    privacy_model="local", neighbour="replace_one", spec="000 §3.1",
    style={"color": "tab:red", "marker": "o", "linestyle": "-"}, **CONTRACT,
)
def fit_ldp_simple_1d(X: np.ndarray, y: np.ndarray, epsilon: float, delta: float | None,
                      rng: np.random.Generator, *, paper_scale: bool = False) -> FitResult:
    phi, y = _check_1d(X, y, epsilon)
    b_psi, b_Psi, eps_eff = _scales(epsilon, paper_scale)
    n = phi.shape[0]
    psi = float(released("ψ̂ (sign(φ)y per user)", np.mean(np.sign(phi) * y + rng.laplace(0.0, b_psi, n)),
                         lambda: np.sign(phi) * y, kind="laplace", scale=b_psi, users=True, sensitivity=2.0))
    Psi = float(released("Ψ̂ (|φ| per user)", np.mean(np.abs(phi) + rng.laplace(0.0, b_Psi, n)), lambda: np.abs(phi),
                         kind="laplace", scale=b_Psi, users=True, sensitivity=1.0))  # fmt: skip
    return FitResult(np.array([_ratio(psi, Psi)]), {"b_psi": b_psi, "b_Psi": b_Psi, "epsilon_effective": eps_eff})


@register_mechanism(
    "ldp_laplace_ssp_1d",
    summary="1-D LDP Laplace SSP: Laplace on φy and φ², θ̂ = clip(ψ̂/Ψ̂) (baseline of 000 §3.12)",
    privacy_model="local", neighbour="replace_one", spec="000 §3.12",
    style={"color": "tab:green", "marker": "^", "linestyle": "-"}, **CONTRACT,
)
def fit_ldp_laplace_ssp_1d(X: np.ndarray, y: np.ndarray, epsilon: float, delta: float | None,
                           rng: np.random.Generator, *, paper_scale: bool = False) -> FitResult:
    phi, y = _check_1d(X, y, epsilon)
    b_psi, b_Psi, eps_eff = _scales(epsilon, paper_scale)
    n = phi.shape[0]
    psi = float(released("ψ̂ (φy per user)", np.mean(phi * y + rng.laplace(0.0, b_psi, n)), lambda: phi * y,
                         kind="laplace", scale=b_psi, users=True, sensitivity=2.0))  # fmt: skip
    Psi = float(released("Ψ̂ (φ² per user)", np.mean(phi**2 + rng.laplace(0.0, b_Psi, n)), lambda: phi**2,
                         kind="laplace", scale=b_Psi, users=True, sensitivity=1.0))  # fmt: skip
    return FitResult(np.array([_ratio(psi, Psi)]), {"b_psi": b_psi, "b_Psi": b_Psi, "epsilon_effective": eps_eff})
