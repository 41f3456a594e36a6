"""Figure 7 of the IHM paper: low-rank covariates that violate IHM's no-clipping condition (004 §5.5, App. L).

Notebook version (``Clipping_Test_IHM.ipynb``; ambiguity #20), all randomness from the loader's rng:

    u ~ LogNormal(1, 1)  (1-D latent),   h₁ = s(u W₁ + b₁),  h₂ = s(h₁ W₂ + b₂),  φ(u) = s(h₂ W₃ + b₃)
    W₁ ∈ ℝ^{1×w}, W₂, W₃ ∈ ℝ^{w×w} iid N(0, 1),  b_ℓ = 0.001·N(0, I),  s = sigmoid,  w = d = 128
    θ₀ = g/‖g‖, g ~ N(0, I_d);   y = φᵀθ₀ + 0.001·N(0, 1) + noise·N(0, 1)  (noise = 0.2)

then shuffle, 80/20 split, rows divided by the largest training row norm. n_total = 2¹⁸ by default.

The notebook meant to clip |y| ≤ 1 but its ``==`` typo made that a no-op, so labels can exceed 1. dpbench
clips labels to [−1, 1] by default (``clip_y=True``): AdaSSP and LinMix are calibrated for |y_i| ≤ 1 and reject
larger labels (a data-independent clip keeps their privacy guarantee). ``clip_y=False`` reproduces the notebook
literally; only mechanisms that clip residuals (IHM, DP-GD) can then run (docs/deviations.md, 004 #20).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpbench.contract import Hyper
from dpbench.data._base import Dataset, normalize_rows
from dpbench.registry import register_dataset


def sigmoid(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * z))  # = 1/(1 + e^{−z}) without overflow


def random_mlp_features(latent: np.ndarray, width: int, rng: np.random.Generator) -> np.ndarray:
    """Three sigmoid layers of ``width`` units with N(0, 1) weights and 0.001·N(0, 1) biases applied to a 1-D latent."""
    weights = [rng.standard_normal((1, width))] + [rng.standard_normal((width, width)) for _ in range(2)]
    biases = [1e-3 * rng.standard_normal(width) for _ in range(3)]
    hidden = latent[:, None]
    for weight, bias in zip(weights, biases, strict=True):
        hidden = sigmoid(hidden @ weight + bias)
    return hidden


@register_dataset(
    "mlp_latent",
    summary="Synthetic (IHM Fig. 7): 1-D LogNormal latent through a random 3-layer sigmoid MLP, d = 128",
    kind="synthetic",
    spec="004 §5.5 Fig. 7",
    options={
        "n_total": Hyper(int, default=2**18, ge=10, doc="rows before the train/test split"),
        "d": Hyper(int, default=128, ge=1, doc="width of the MLP (features)"),
        "noise": Hyper(float, default=0.2, ge=0, doc="label noise standard deviation"),
        "train_fraction": Hyper(float, default=0.8, gt=0, lt=1, doc="share of rows in training"),
        "clip_y": Hyper(bool, default=True, doc="clip labels to [−1, 1]"),
    },
)
def load(rng: np.random.Generator, **options: Any) -> Dataset:
    n_total, d, noise = options["n_total"], options["d"], options["noise"]
    train_fraction, clip_y = options["train_fraction"], options["clip_y"]
    latent = rng.lognormal(mean=1.0, sigma=1.0, size=n_total)
    features = random_mlp_features(latent, d, rng)
    direction = rng.standard_normal(d)
    theta0 = direction / np.linalg.norm(direction)
    y = features @ theta0 + 1e-3 * rng.standard_normal() + noise * rng.standard_normal(n_total)
    clipped = float(np.mean(np.abs(y) > 1.0))
    if clip_y:
        y = np.clip(y, -1.0, 1.0)
    order = rng.permutation(n_total)
    n_train = int(train_fraction * n_total)
    train, test = order[:n_train], order[n_train:]
    X_train, X_test, x_scale = normalize_rows(features[train], features[test])
    return Dataset(
        "mlp_latent",
        X_train,
        y[train],
        X_test,
        y[test],
        y_bound=1.0 if clip_y else float(np.max(np.abs(y[train]))),
        meta={
            "title": "Synthetic clipping test (App. L)",
            "recipe": "synthetic (004 Fig. 7, notebook version)",
            "x_scale": x_scale,
            "label_fraction_over_1": clipped,
            "clip_y": clip_y,
        },
    )
