"""Wang 2018's UCI data sets with his ``exp_uci.m`` preprocessing and a seeded 10-fold split (spec 005 §2a).

Preprocessing on all N rows (the paper's, not private — as in the paper): NaN → 0; y ← y/max|y|; every feature
z-scored (sample std, ddof = 1, as Matlab's ``zscore``; a constant column becomes 0); every row rescaled to
‖x‖ = 1 exactly (an all-zero row stays 0). Then fold ``fold`` of a K-fold partition drawn from
(``partition_seed``, ``data_draw``) (:func:`dpbench.data.cv.kfold_split`) is the test set: one private fit per fold
on the other K − 1 folds, scored by ``test_mse``. The files are the uci_datasets versions (datasets/README.md);
3droad's data is not vendored (a missing file skips it visibly).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from dpbench.contract import Choice, Hyper
from dpbench.data._base import Dataset
from dpbench.data.cv import kfold_split
from dpbench.data.recipes import file_key, frozen, read_numeric_cached
from dpbench.registry import register_dataset

#: Wang's 29 data sets (``exp_uci.m``'s folders minus kegg*) → d, the features of the uci_datasets file
WANG_DATASETS: dict[str, int] = {
    "3droad": 3, "airfoil": 5, "autompg": 7, "autos": 25, "bike": 17, "breastcancer": 33, "concrete": 8,
    "concreteslump": 7, "elevators": 18, "energy": 8, "fertility": 9, "forest": 12, "gas": 128, "housing": 13,
    "kin40k": 8, "machine": 7, "parkinsons": 20, "pendulum": 9, "pol": 26, "protein": 9, "pumadyn32nm": 32,
    "servo": 4, "skillcraft": 19, "sml": 26, "solar": 10, "stock": 11, "tamielectric": 3, "wine": 11, "yacht": 6,
}  # fmt: skip


def wang_preprocess(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``exp_uci.m``: NaN → 0, y/max|y|, z-scored columns (ddof = 1, std 0 → 1), rows scaled to ‖x‖ = 1."""
    data = np.nan_to_num(np.asarray(table, dtype=float), nan=0.0)
    X, y = data[:, :-1], data[:, -1]
    top = np.abs(y).max()
    y = y / top if top > 0 else y
    std = X.std(axis=0, ddof=1)
    X = (X - X.mean(axis=0)) / np.where(std > 0, std, 1.0)
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    return X / np.where(norms > 0, norms, 1.0), y


@functools.lru_cache(maxsize=8)
def _prepared(key: tuple[str, int, int], ncols: int) -> tuple[np.ndarray, np.ndarray]:
    X, y = wang_preprocess(read_numeric_cached(key, ",", None, ncols))
    return frozen(X), frozen(y)


@register_dataset(
    "wang2018_uci",
    summary="Wang 2018's UCI sets: z-score, rows to ‖x‖ = 1, y/max|y|, fold k of a seeded 10-fold split (005 §2a)",
    spec="005 §2a",
    options={
        "name": Choice(*WANG_DATASETS, default="airfoil", doc="the UCI data set"),
        "fold": Hyper(int, default=0, ge=0, doc="the test fold (swept in grid:)"),
        "folds": Hyper(int, default=10, ge=2, doc="folds of the partition"),
        "partition_seed": Hyper(int, default=100000, ge=0, doc="seed of the partition (with data_draw)"),
        "data_draw": Hyper(int, default=0, ge=0, doc="the repetition (set by the engine's data_draws)"),
    },
)
def load(rng: np.random.Generator, **options: Any) -> Dataset:
    """Fold ``fold`` of repetition ``data_draw`` of data set ``name`` (module docstring); ``rng`` is unused (the
    partition must be the same for every fold of a repetition, so it comes from (partition_seed, data_draw))."""
    name, fold, folds = options["name"], options["fold"], options["folds"]
    partition_seed, data_draw = options["partition_seed"], options["data_draw"]
    relative = f"uci/{name}/data.csv.gz"
    X, y = _prepared(file_key(relative), WANG_DATASETS[name] + 1)
    X_train, y_train, X_test, y_test = kfold_split(X, y, fold, folds, partition_seed, data_draw)
    meta = {"title": name, "file": relative, "fold": int(fold), "folds": int(folds), "n_total": int(len(y)),
            "n": int(len(y_train)), "d": int(X.shape[1]), "recipe": "wang2018"}  # fmt: skip
    return Dataset(f"wang2018_{name}", X_train, y_train, X_test, y_test, meta=meta)
