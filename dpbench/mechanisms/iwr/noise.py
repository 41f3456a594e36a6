"""The noisy releases of information-weighted regression (spec 000 §1.3, §3.6): Priv, SymPriv, the l2-ball sampler.

Calibration (the noise scales) is pure and lives in :mod:`dpbench.mechanisms.iwr.calibration`; these
functions draw the noise, from the caller's ``rng`` only. Shared by the regression mechanisms and the bandit oracles
(spec 000/001).
"""

from __future__ import annotations

import math

import numpy as np

from dpbench.mechanisms._simulation import sym_gaussian
from dpbench.mechanisms.iwr.calibration import l2ball_radius
from dpbench.mechanisms.iwr.linalg import row_norms


def priv(v: np.ndarray, std: float, rng: np.random.Generator) -> np.ndarray:
    """``Priv``: v + iid N(0, std²) on every entry (vector or matrix; no symmetry; §1.3)."""
    v = np.asarray(v, dtype=float)
    return v + std * rng.standard_normal(v.shape)


def sym_priv(V: np.ndarray, std: float, rng: np.random.Generator) -> np.ndarray:
    """``SymPriv``: V + Z with Z symmetric, upper triangle iid N(0, std²) (§1.3)."""
    V = np.asarray(V, dtype=float)
    return V + sym_gaussian(V.shape[0], std, rng)


def l2ball_sample(V: np.ndarray, epsilon: float, rng: np.random.Generator) -> np.ndarray:
    """(ε, 0)-LDP unbiased release of each row v of V (‖v‖ ≤ 1): E[Z|v] = v, E[ZZᵀ] = (M²/d)I (spec 000 §3.6).

    ṽ = ±v/‖v‖ with P(+) = ½ + ‖v‖/2 (v = 0: a uniform unit vector); b ~ Bernoulli(e^ε/(e^ε+1)); Z uniform on the
    sphere of radius M restricted to the half-space <z, ṽ> > 0 if b = 1, else <z, ṽ> ≤ 0.
    """
    V = np.atleast_2d(np.asarray(V, dtype=float))
    n, d = V.shape
    norms = row_norms(V)
    if np.any(norms > 1.0 + 1e-9):
        raise ValueError(f"l2ball_sample: rows must have ‖v‖ ≤ 1, max is {norms.max():.6g}")
    M = l2ball_radius(epsilon, d)
    rand_dir = rng.standard_normal((n, d))  # drawn for every row (the rng stream), used only for the rows v = 0
    direction = V / np.where(norms > 0, norms, 1.0)[:, None]
    zero = norms == 0
    if zero.any():
        direction[zero] = rand_dir[zero] / row_norms(rand_dir[zero])[:, None]
    sign = np.where(rng.random(n) < 0.5 + norms / 2.0, 1.0, -1.0)
    tilde = sign[:, None] * direction
    want_positive = rng.random(n) < math.exp(epsilon) / (math.exp(epsilon) + 1.0)
    u = rng.standard_normal((n, d))
    u /= row_norms(u)[:, None]
    side = np.einsum("ij,ij->i", u, tilde) > 0
    flip = side != want_positive
    return u * np.where(flip, -M, M)[:, None]  # = M·(±u) bit for bit: negation is exact


__all__ = ["l2ball_sample", "priv", "sym_gaussian", "sym_priv"]
