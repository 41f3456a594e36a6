"""``ftrl_public_split``: a registered real dataset with a share of its training rows turned into unlabeled public data.

Spec 002 §6.2 caveat 4 [CHOICE]: after the base loader's own preprocessing (004's normalisation: ‖x_i‖ ≤ 1 and
|y_i| ≤ 1 on the training rows), a uniformly random ``public_fraction`` of the training rows (drawn from the loader
rng) loses its labels and becomes ``Dataset.X_public``; every method then trains on the same remaining private rows,
so only DP-FTRL-Σ(public) benefits from the unlabeled rows. The test split is unchanged.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpbench import registry
from dpbench.contract import Hyper
from dpbench.data._base import Dataset
from dpbench.registry import register_dataset


@register_dataset(
    "ftrl_public_split",
    summary="Any registered real dataset with public_fraction of its training rows made unlabeled public (002 §6.2)",
    kind="real",
    spec="002 §6.2",
    options={
        "base": Hyper(str, default="crime", doc="the registered real dataset split"),
        "public_fraction": Hyper(float, default=0.5, ge=0, lt=1, doc="share of training rows made unlabeled public"),
    },
)
def load(rng: np.random.Generator, **options: Any) -> Dataset:
    base, public_fraction = options["base"], options["public_fraction"]
    if base == "ftrl_public_split":
        raise ValueError("ftrl_public_split: base cannot be ftrl_public_split itself")
    info = registry.get_dataset(base)
    data = info.load(rng)
    n = data.n
    n_public = int(np.floor(public_fraction * n))
    if n - n_public < 1:
        raise ValueError(f"ftrl_public_split: public_fraction={public_fraction} leaves no private rows (n = {n})")
    order = rng.permutation(n)
    public, private = order[:n_public], np.sort(order[n_public:])
    title = data.meta.get("title", base)
    return Dataset(
        f"{data.name}+public",
        data.X_train[private],
        data.y_train[private],
        data.X_test,
        data.y_test,
        X_public=data.X_train[public],
        population=None,
        x_bound=data.x_bound,
        y_bound=data.y_bound,
        meta={
            **data.meta,
            "title": f"{title} ({1 - public_fraction:.0%} private rows)",
            "base": base,
            "public_fraction": public_fraction,
            "n_public": int(n_public),
        },
    )
