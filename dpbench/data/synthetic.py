"""Simple synthetic linear-regression generators with exact population quantities.

``sphere_linear``: x uniform on the unit sphere S^{d−1} (so ‖x‖ = 1 and Σ = E[xxᵀ] = I/d exactly),
y = xᵀθ* + ξ with ‖θ*‖ = theta_norm and ξ ~ Uniform[−noise, noise] independent of x, so |y| ≤ theta_norm + noise.
With theta_norm + noise ≤ 1 the rows satisfy the unit bounds with no clipping and no data-dependent scaling, and
θ* is exactly the population least-squares solution. Useful for tests, smoke runs and rate demonstrations.

Label corruption (``corrupt`` = α, spec 005 §5's robustness track): after the clean draw, ⌊α·n⌋ training rows chosen
uniformly by the same rng get the label −sign(x_iᵀθ*)·(theta_norm + noise) — the extreme label on the wrong side,
still within the bound — while the test rows and the population (θ*, Σ) stay clean. α = 0 leaves the draw unchanged.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpbench.contract import Hyper
from dpbench.data._base import Dataset, Population
from dpbench.registry import register_dataset


def sphere_rows(n: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """n iid rows uniform on the unit sphere in ℝ^d."""
    z = rng.standard_normal((n, d))
    return z / np.linalg.norm(z, axis=1, keepdims=True)


def corrupt_labels(
    X: np.ndarray, y: np.ndarray, theta: np.ndarray, fraction: float, bound: float, rng: np.random.Generator
) -> np.ndarray:
    """y with ⌊fraction·n⌋ labels, at rows drawn uniformly without replacement, set to −sign(x_iᵀθ*)·bound."""
    count = int(np.floor(fraction * y.size))
    if count == 0:
        return y
    rows = rng.choice(y.size, size=count, replace=False)
    out = y.copy()
    out[rows] = -np.where(X[rows] @ theta >= 0, 1.0, -1.0) * bound
    return out


@register_dataset(
    "sphere_linear",
    summary="Synthetic: x uniform on the unit sphere, y = xᵀθ* + uniform noise (exact Σ = I/d, θ*)",
    kind="synthetic",
    shape=lambda n, d, **_: (n, d),
    options={
        "n": Hyper(int, default=1000, ge=1, doc="training rows"),
        "d": Hyper(int, default=5, ge=1, doc="dimension"),
        "theta_norm": Hyper(float, default=0.5, ge=0, le=1, doc="‖θ*‖ (theta_norm + noise ≤ 1: |y| ≤ 1)"),
        "noise": Hyper(float, default=0.5, ge=0, le=1, doc="half-width of the uniform label noise"),
        "n_test": Hyper(int, default=1000, ge=0, doc="test rows"),
        "corrupt": Hyper(float, default=0.0, ge=0, lt=0.5, doc="fraction of training labels flipped to the bound"),
    },
)
def load(rng: np.random.Generator, **options: Any) -> Dataset:
    """x uniform on the unit sphere, θ* uniform of norm theta_norm, y = xᵀθ* + U(−noise, noise)."""
    n, d, n_test, corrupt = options["n"], options["d"], options["n_test"], options["corrupt"]
    theta_norm, noise = options["theta_norm"], options["noise"]
    if theta_norm + noise > 1:
        raise ValueError(f"sphere_linear: need theta_norm + noise ≤ 1, got {theta_norm} + {noise}")
    direction = rng.standard_normal(d)
    theta = theta_norm * direction / np.linalg.norm(direction)
    X = sphere_rows(n + n_test, d, rng)
    y = X @ theta + rng.uniform(-noise, noise, size=n + n_test)
    y[:n] = corrupt_labels(X[:n], y[:n], theta, corrupt, theta_norm + noise, rng)
    population = Population(cov=np.eye(d) / d, theta=theta, noise_var=noise**2 / 3.0)
    return Dataset(
        "sphere_linear",
        X[:n],
        y[:n],
        X[n:],
        y[n:],
        population=population,
        meta={"title": f"Sphere (n={n}, d={d})", "recipe": "synthetic"},
    )
