"""One-dimensional pure-LDP mechanisms of spec 000 §3.1 and §3.12 (E5: the L1-covariance, not the covariance).

``ldp_simple_1d`` (Alg 1) privatises sign(φ)y and |φ| and estimates θ̂ = clip_1(ψ̂/Ψ̂), which targets
E|φ|·θ = E[sign(φ)y]; ``ldp_laplace_ssp_1d`` privatises φy and φ² (the smooth channel of Prop 3.2), targeting
E[φ²]θ = E[φy]. Both: per-user Laplace noise, scales b_ψ = 4/ε (range 2) and b_Ψ = 2/ε (range 1), each release at
ε/2 ⇒ (ε, 0)-LDP (spec 000 #6). ``paper_scale=True`` uses 2/ε for both (the variance in the proof of Lemma 3.1),
which is only 1.5ε-LDP and is recorded as ``epsilon_effective``. Inputs: φ ∈ [−1, 1], y ∈ [−1, 1] (B = 1, d = 1).

The server uses only the mean of the n reports a_i + L_i, L_i iid Laplace(0, b). ``simulation="aggregate"``
(default, issue 16) draws the summed noise once, exactly in law: Laplace(0, b) =_d E − E′ with E, E′ iid Exp(b), and
a sum of n iid Exp(b) is Gamma(n, b), so Σ_{i≤n} L_i =_d G − G′ with G, G′ iid Gamma(n, b) — O(1) noise instead of n
Laplace draws. ``simulation="per_user"`` draws every user's Laplace variable (the literal path).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from dpbench.contract import AuditSetup, Bounds, Hyper
from dpbench.mechanisms._base import FitResult, check_inputs, released
from dpbench.mechanisms._simulation import PER_USER_VARIANT, SIMULATION, is_per_user
from dpbench.mechanisms.iwr._common import STYLES
from dpbench.mechanisms.iwr.calibration import laplace_scale
from dpbench.registry import register_mechanism


def _scales(epsilon: float, paper_scale: bool) -> tuple[float, float, float]:
    if paper_scale:
        return 2.0 / epsilon, 2.0 / epsilon, 1.5 * epsilon
    return laplace_scale(2.0, epsilon / 2.0), laplace_scale(1.0, epsilon / 2.0), epsilon


#: the contract both mechanisms share: pure ε-LDP (δ unused) for one user (replace-one), φ ∈ [−1, 1], y ∈ [−1, 1],
#: d = 1
CONTRACT = {
    "privacy_model": "local",
    "neighbour": "replace_one",
    "hyper": {
        "paper_scale": Hyper(bool, default=False, doc="scale 2/ε for both releases (only 1.5ε-LDP: epsilon_effective)"),
        "simulation": SIMULATION,
    },
    "bounds": Bounds(x=1.0, y=1.0, d=1),
    "audit": AuditSetup(d=1, whitebox={"pair": {"n": 16}}),
    "uses_delta": False,
    "variants": PER_USER_VARIANT,
}


def laplace_sum(n: int, scale: float, rng: np.random.Generator, per_user: bool) -> float:
    """Σ_{i≤n} L_i, L_i iid Laplace(0, b = ``scale``): n draws (``per_user``) or G − G′, G, G′ iid Gamma(n, b)
    (exact in law: Laplace(0, b) =_d Exp(b) − Exp(b) and Σ_{i≤n} Exp(b) = Gamma(n, b); see the module docstring)."""
    if per_user:
        return float(rng.laplace(0.0, scale, n).sum())
    gammas = rng.gamma(float(n), scale, 2)
    return float(gammas[0] - gammas[1])


def laplace_mean(values: np.ndarray, scale: float, rng: np.random.Generator, per_user: bool) -> float:
    """(1/n)Σ_i (a_i + L_i): the server's mean of the users' Laplace(0, ``scale``) reports of a_i = ``values``."""
    n = values.shape[0]
    return float(np.mean(values)) + laplace_sum(n, scale, rng, per_user) / n


def _ratio(psi: float, Psi: float) -> float:
    return 0.0 if Psi == 0 else float(np.clip(psi / Psi, -1.0, 1.0))


def _check_1d(X: np.ndarray, y: np.ndarray, epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    X, y = check_inputs(X, y, epsilon, None, x_bound=1.0, y_bound=1.0)
    if X.shape[1] != 1:
        raise ValueError(f"this mechanism is one-dimensional (d = 1), got d = {X.shape[1]}")
    return X[:, 0], y


def _released_ratio(
    X: np.ndarray,
    y: np.ndarray,
    epsilon: float,
    rng: np.random.Generator,
    hyper: Mapping[str, Any],
    numerator: tuple[str, Callable],
    denominator: tuple[str, Callable],
) -> FitResult:
    """θ̂ = clip(ψ̂/Ψ̂) from the two Laplace releases: the users' mean of ``numerator``'s per-user values
    ``numerator[1](φ, y)`` (range 2, scale b_ψ) and of ``denominator``'s ``denominator[1](φ)`` (range 1, scale b_Ψ),
    in that order from ``rng``."""
    per_user = is_per_user(hyper["simulation"])
    phi, y = _check_1d(X, y, epsilon)
    b_psi, b_Psi, eps_eff = _scales(epsilon, hyper["paper_scale"])
    released_means = []
    for (name, rows), scale, sensitivity in zip(
        ((numerator[0], numerator[1](phi, y)), (denominator[0], denominator[1](phi))),
        (b_psi, b_Psi),
        (2.0, 1.0),
        strict=True,
    ):
        released_means.append(
            float(
                released(
                    name,
                    laplace_mean(rows, scale, rng, per_user),
                    rows,
                    kind="laplace",
                    scale=scale,
                    users=True,
                    sensitivity=sensitivity,
                )
            )
        )
    theta = _ratio(*released_means)
    return FitResult(np.array([theta]), {"b_psi": b_psi, "b_Psi": b_Psi, "epsilon_effective": eps_eff})


def register_ratio(
    name: str,
    *,
    summary: str,
    spec: str,
    style: dict[str, str],
    numerator: tuple[str, Callable],
    denominator: tuple[str, Callable],
) -> Callable[..., FitResult]:
    """Register the 1-D ratio estimator of the per-user statistics ``numerator`` (φ, y) and ``denominator`` (φ)
    (:func:`_released_ratio`) as mechanism ``name`` with the shared :data:`CONTRACT`."""

    def fit(
        X: np.ndarray, y: np.ndarray, epsilon: float, delta: float | None, rng: np.random.Generator, **hyper: Any
    ) -> FitResult:
        return _released_ratio(X, y, epsilon, rng, hyper, numerator, denominator)

    fit.__name__ = fit.__qualname__ = f"fit_{name}"
    fit.__doc__ = f"θ̂ = clip(ψ̂/Ψ̂): {numerator[0]} over {denominator[0]}, each a Laplace release ({spec})."
    return register_mechanism(name, summary=summary, spec=spec, style=style, **CONTRACT)(fit)


fit_ldp_simple_1d = register_ratio(
    "ldp_simple_1d",
    spec="000 §3.1",
    style=STYLES["iwr"],
    summary="Optimal 1-D LDP regression: Laplace on sign(φ)y and |φ|, θ̂ = clip(ψ̂/Ψ̂) (Alg 1; 000 §3.1)",
    numerator=("ψ̂ (sign(φ)y per user)", lambda phi, y: np.sign(phi) * y),
    denominator=("Ψ̂ (|φ| per user)", np.abs),
)
fit_ldp_laplace_ssp_1d = register_ratio(
    "ldp_laplace_ssp_1d",
    spec="000 §3.12",
    style=STYLES["ssp"],
    summary="1-D LDP Laplace SSP: Laplace on φy and φ², θ̂ = clip(ψ̂/Ψ̂) (baseline of 000 §3.12)",
    numerator=("ψ̂ (φy per user)", lambda phi, y: phi * y),
    denominator=("Ψ̂ (φ² per user)", lambda phi: phi**2),
)
