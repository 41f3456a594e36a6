"""Link / loss families of the Stein-lemma estimators (spec 003 §1.2).

A family gives h (= Φ'' for a GLM, f' for non-linear regression), h' (Φ''' resp. f''), the mean function used to
generate responses (Φ' resp. f), the baseline loss with its gradient, and the constants of the privacy bound:
B_y = 1 for GLMs and B_y = L(r)·r + |f(0)| + C for NLR (spec 003 §2.2, App. B).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

Array = np.ndarray


def sigmoid(z: Array) -> Array:
    """σ(z) = 1/(1+e^{−z}), computed as ½(1 + tanh(z/2)) (no overflow)."""
    return 0.5 * (1.0 + np.tanh(0.5 * np.asarray(z, dtype=float)))


def softplus(z: Array) -> Array:
    """log(1 + e^z), stable."""
    z = np.asarray(z, dtype=float)
    return np.logaddexp(0.0, z)


@dataclass(frozen=True)
class Family:
    """One GLM cumulant Φ or NLR link f (spec 003 §1.2)."""

    name: str
    kind: str  # "glm" | "nlr"
    h: Callable[[Array], Array]
    h_prime: Callable[[Array], Array]
    mean: Callable[[Array], Array]  # Φ' (GLM) or f (NLR): E[y | x] = mean(⟨x, w*⟩)
    cumulant: Callable[[Array], Array] | None = None  # Φ (GLM only; baseline loss Φ(z) − y z)
    f0: float = 0.0  # f(0) (NLR)
    lipschitz: Callable[[float], float] = lambda r: 0.0  # L(r) = sup_{|z| ≤ r} |f'(z)| (NLR)

    def y_bound(self, r: float, noise_c: float = 0.05) -> float:
        """B_y: 1 for GLMs (paper assumes |y| ≤ 1), L(r)·r + |f(0)| + C for NLR (spec 003 §2.2, A8, A18)."""
        if self.kind == "glm":
            return 1.0
        return self.lipschitz(r) * r + abs(self.f0) + noise_c

    def c0(self) -> float:
        """Newton start 1/h(0), or 1.0 when h(0) = 0 (spec 003 §3.1, A4)."""
        h0 = float(self.h(np.zeros(1))[0])
        return 1.0 / h0 if h0 != 0.0 else 1.0

    def loss_grad(self, z: Array, y: Array) -> tuple[Array, Array]:
        """Per-row baseline loss and d loss/d z: GLM Φ(z) − yz; NLR ½(f(z) − y)² (spec 003 §3.7)."""
        if self.kind == "glm":
            return self.cumulant(z) - y * z, self.mean(z) - y
        resid = self.mean(z) - y
        return 0.5 * resid**2, resid * self.h(z)


def _logistic_h(z: Array) -> Array:
    s = sigmoid(z)
    return s * (1.0 - s)


def _logistic_hp(z: Array) -> Array:
    s = sigmoid(z)
    return s * (1.0 - s) * (1.0 - 2.0 * s)


def _boost_h(z: Array) -> Array:
    return 0.25 * (1.0 + np.asarray(z) ** 2 / 4.0) ** -1.5


def _boost_hp(z: Array) -> Array:
    z = np.asarray(z, dtype=float)
    return -(3.0 / 16.0) * z * (1.0 + z**2 / 4.0) ** -2.5


def _cube_third(z: Array) -> Array:
    """f(z) = z³/3 (cubic link, spec 003 §6.1) as (z·z·z)/3: two multiplications instead of ``z ** 3`` (libm pow,
    ≈ 600× slower per element); the two differ by at most 1 ulp (issue 16)."""
    z = np.asarray(z, dtype=float)
    return z * z * z / 3.0


FAMILIES: dict[str, Family] = {
    "logistic": Family("logistic", "glm", _logistic_h, _logistic_hp, sigmoid, softplus),
    "exponential": Family("exponential", "glm", np.exp, np.exp, np.exp, np.exp),
    "boosting": Family(
        "boosting",
        "glm",
        _boost_h,
        _boost_hp,
        lambda z: 0.5 + 0.25 * np.asarray(z) / np.sqrt(1.0 + np.asarray(z) ** 2 / 4.0),
        lambda z: np.asarray(z) / 2.0 + np.sqrt(1.0 + np.asarray(z) ** 2 / 4.0),
    ),
    "linear": Family(
        "linear",
        "glm",
        lambda z: np.ones_like(np.asarray(z, float)),
        lambda z: np.zeros_like(np.asarray(z, float)),
        lambda z: np.asarray(z, float),
        lambda z: 0.5 * np.asarray(z, float) ** 2,
    ),
    "sigmoid": Family("sigmoid", "nlr", _logistic_h, _logistic_hp, sigmoid, f0=0.5, lipschitz=lambda r: 0.25),
    # the literal §6.1 sign, f(z) = 1/(1+e^{z}) = σ(−z) (A9): f' = −σ(1−σ)(−z), f'' = σ(1−σ)(1−2σ) evaluated at −z
    "sigmoid_literal": Family(
        "sigmoid_literal",
        "nlr",
        lambda z: -_logistic_h(-np.asarray(z)),
        lambda z: _logistic_hp(-np.asarray(z)),
        lambda z: sigmoid(-np.asarray(z)),
        f0=0.5,
        lipschitz=lambda r: 0.25,
    ),
    "cubic": Family(
        "cubic",
        "nlr",
        lambda z: np.asarray(z, float) ** 2,
        lambda z: 2.0 * np.asarray(z, float),
        _cube_third,
        f0=0.0,
        lipschitz=lambda r: r**2,
    ),
    # f(z) = log(1 + e^{−z}): f' = −σ(−z) = σ(z) − 1, f'' = σ(z)(1 − σ(z))
    "logistic_link": Family(
        "logistic_link",
        "nlr",
        lambda z: sigmoid(z) - 1.0,
        _logistic_h,
        lambda z: softplus(-np.asarray(z, float)),
        f0=float(np.log(2.0)),
        lipschitz=lambda r: 1.0,
    ),
}


def get_family(name: str) -> Family:
    if name not in FAMILIES:
        raise ValueError(f"family must be one of {', '.join(FAMILIES)}, got {name!r}")
    return FAMILIES[name]
