"""The data of Brown et al.'s iso-error experiment (spec 005 §4-addendum, the paper's script).

x ~ N(0, I_p), θ* uniform on the unit sphere, y = xᵀθ* + z with z ~ N(1, 1) (mean 1, as the script draws it; x has
mean 0, so θ* is still the population least-squares coefficient without intercept), n = ``n_per_p``·p rows.

``preprocess="max_norm"`` is **the paper's non-private preprocessing for AdaSSP** ("favourable to AdaSSP"): X is
divided by B = max_i ‖x_i‖ and y by C = max_i |y_i|, so the rows meet the unit bounds AdaSSP's calibration relies on
— read off the private data, not private. θ̂ fitted on the scaled data estimates θ*·B/C; the metric
``brown_l2_error`` reports ‖θ̂·C/B − θ*‖₂ in the raw units (``meta["error_scale"]`` = C/B).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpbench.contract import Choice, Hyper
from dpbench.data._base import Dataset, Population
from dpbench.registry import register_dataset

PREPROCESS = ("none", "max_norm")


@register_dataset(
    "brown_isotropic",
    summary="Brown et al. 2024 iso-error data: x ~ N(0, I_p), θ* on the unit sphere, y = xᵀθ* + N(1, 1)",
    kind="synthetic",
    spec="005 §4-addendum",
    shape=lambda n_per_p, p, **_: (n_per_p * p, p),
    options={
        "p": Hyper(int, default=5, ge=1, doc="dimension"),
        "n_per_p": Hyper(int, default=100, ge=1, doc="rows per dimension (n = n_per_p·p)"),
        "preprocess": Choice(
            *PREPROCESS, default="none", doc="max_norm: the paper's non-private scaling to the bounds"
        ),
    },
)
def load(rng: np.random.Generator, **options: Any) -> Dataset:
    p, n_per_p, preprocess = options["p"], options["n_per_p"], options["preprocess"]
    n = n_per_p * p
    theta = rng.standard_normal(p)
    theta /= np.linalg.norm(theta)
    X = rng.standard_normal((n, p))
    y = X @ theta + rng.normal(1.0, 1.0, size=n)
    x_scale = y_scale = 1.0
    if preprocess == "max_norm":
        x_scale, y_scale = float(np.linalg.norm(X, axis=1).max()), float(np.abs(y).max())
        X, y = X / x_scale, y / y_scale
    bounded = preprocess == "max_norm"
    population = Population(cov=np.eye(p) / x_scale**2, theta=theta * x_scale / y_scale, noise_var=2.0 / y_scale**2)
    return Dataset(
        "brown_isotropic",
        X,
        y,
        np.zeros((0, p)),
        np.zeros(0),
        population=population,
        x_bound=1.0 if bounded else float("inf"),
        y_bound=1.0 if bounded else float("inf"),
        meta={
            "title": f"p = {p}, n = {n}",
            "recipe": "synthetic" if not bounded else "synthetic, non-private max-norm scaling (the paper's)",
            "error_scale": y_scale / x_scale,
        },
    )
