"""The 20 mask datasets (type M) of spec 004 §5.2/§5.3, from treforevans/uci_datasets.

Files: ``uci/<key>/data.csv.gz`` (N × (d+1), no header, last column y; every column already centred by
uci_datasets) and ``uci/<key>/test_mask.csv.gz`` (N × 10 of 0/1, a 10-fold partition). Recipe M:
split = ``split`` or a uniform draw from ``rng.integers(10)``; train = ¬mask[:, split]; y /= max|y_train|;
features z-scored with train mean/std (ddof = 0, std 0 → 1); rows divided by the largest training-row norm.

3droad, buzz and slice have only their masks vendored: their loaders raise DataUnavailableError naming
``uci/<key>/data.csv.gz``.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from dpbench.contract import Hyper
from dpbench.data._base import Dataset, finalize
from dpbench.data.recipes import SPEC, file_key, frozen, read_numeric, read_numeric_cached
from dpbench.registry import register_dataset

N_SPLITS = 10

#: key → (figure title in the paper, d = number of features)
MASK_DATASETS: dict[str, tuple[str, int]] = {
    "3droad": ("3droad", 3),
    "autos": ("Auto", 25),
    "buzz": ("Buzz", 77),
    "concreteslump": ("Concrete Slump", 7),
    "elevators": ("Elevators", 18),
    "fertility": ("Fertility", 9),
    "forest": ("Forest", 12),
    "keggdirected": ("Kegg (Directed)", 20),
    "keggundirected": ("Kegg (Undirected)", 27),
    "kin40k": ("Kin40k", 8),
    "machine": ("Machine", 7),
    "pendulum": ("Pendulum", 9),
    "pol": ("Pol", 26),
    "protein": ("Protein", 9),
    "pumadyn32nm": ("Pumadyn32nm", 32),
    "servo": ("Servo", 4),
    "slice": ("Slice", 385),
    "sml": ("Sml", 26),
    "solar": ("Solar", 10),
    "yacht": ("Yacht", 6),
}


def data_file(key: str) -> str:
    return f"uci/{key}/data.csv.gz"


def mask_file(key: str) -> str:
    return f"uci/{key}/test_mask.csv.gz"


@functools.lru_cache(maxsize=32)
def _read_test_mask(key: tuple[str, int, int]) -> np.ndarray:
    path = key[0]
    values = read_numeric_cached(key, ",", None, N_SPLITS)
    if not np.isin(values, (0.0, 1.0)).all():
        raise ValueError(f"{path}: test mask must hold only 0/1 values")
    if not (values.sum(axis=1) == 1).all():
        raise ValueError(f"{path}: test mask is not a 10-fold partition (each row needs exactly one 1)")
    return frozen(values.astype(bool))


def read_test_mask(relative: str) -> np.ndarray:
    """N × 10 read-only boolean test mask; ValueError naming the file unless it is a 0/1 10-fold partition."""
    return _read_test_mask(file_key(relative))


def load_mask_dataset(key: str, rng: np.random.Generator, *, split: int | None = None) -> Dataset:
    """Load mask dataset ``key`` with the M recipe; ``split=None`` draws the split index from ``rng``."""
    title, d = MASK_DATASETS[key]
    data_rel, mask_rel = data_file(key), mask_file(key)
    table = read_numeric(data_rel, ncols=d + 1)
    mask = read_test_mask(mask_rel)
    if mask.shape[0] != table.shape[0]:
        path = file_key(mask_rel)[0]
        raise ValueError(f"{path}: {mask.shape[0]} rows, but {data_rel} has {table.shape[0]}")
    if split is None:
        split = int(rng.integers(N_SPLITS))
    else:
        split = int(OPTIONS["split"].check(split, "split"))
    test = mask[:, split]
    train = ~test
    meta = {
        "title": title,
        "recipe": "M",
        "file": data_rel,
        "files": [data_rel, mask_rel],
        "split": split,
        "n_total": int(table.shape[0]),
        "n": int(train.sum()),
        "d": d,
    }
    X, y = table[:, :-1], table[:, -1]
    return finalize(key, X[train], y[train], X[test], y[test], standardize=True, meta=meta)


#: the options of every mask dataset, declared once
OPTIONS = {
    "split": Hyper(
        int,
        default=None,
        ge=0,
        lt=N_SPLITS,
        none="drawn from the trial's rng",
        doc=f"the mask column (0..{N_SPLITS - 1}) holding the test rows",
    ),  # fmt: skip
}


def _make_loader(key: str) -> None:
    title, d = MASK_DATASETS[key]

    def load(rng: np.random.Generator, **options: Any) -> Dataset:
        return load_mask_dataset(key, rng, split=options["split"])

    load.__name__ = load.__qualname__ = f"load_{key}"
    load.__doc__ = (
        f"{title} (uci_datasets '{key}', d = {d}): M recipe of spec 004 §5.3; split=None draws the split "
        "index from rng."
    )
    register_dataset(
        key,
        summary=f"{title}: uci_datasets {key}, fixed 90/10 mask split, z-scored features (M)",
        spec=SPEC,
        options=OPTIONS,
    )(load)


for _key in MASK_DATASETS:
    _make_loader(_key)
