"""K-fold cross-validation splits: a dataset's rows partitioned into K folds, fold k the test rows (generic).

A loader that offers cross-validation takes ``fold`` (swept in a config's ``grid:``, so it becomes the ``data.fold``
CSV coordinate) and ``data_draw`` (the engine's ``data_draws``: one independent partition per repetition) and calls
:func:`kfold_split`; ``test_mse`` (:mod:`dpbench.data.metrics`) then scores each fold's fit on its held-out rows.
The partition depends on (``partition_seed``, draw) only — never on the fold — so the K folds of one repetition
are the K parts of one partition.
"""

from __future__ import annotations

import numpy as np


def kfold_assignment(n: int, folds: int, seed: int, draw: int = 0) -> np.ndarray:
    """Fold index (0 … K−1) of each of n rows: a uniformly random permutation cut into K parts whose sizes differ
    by at most one (the first n mod K parts one larger), like Matlab's ``cvpartition(n, 'KFold', K)``."""
    if not 2 <= folds <= n:
        raise ValueError(f"folds must be an integer in 2..n = {n}, got {folds!r}")
    order = np.random.default_rng(np.random.SeedSequence([seed, draw])).permutation(n)
    sizes = np.full(folds, n // folds) + (np.arange(folds) < n % folds)
    assignment = np.empty(n, dtype=int)
    assignment[order] = np.repeat(np.arange(folds), sizes)
    return assignment


def kfold_split(
    X: np.ndarray, y: np.ndarray, fold: int, folds: int, seed: int, draw: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(X_train, y_train, X_test, y_test) of fold ``fold`` of the partition :func:`kfold_assignment` draws."""
    if isinstance(fold, bool) or not isinstance(fold, (int, np.integer)) or not 0 <= fold < folds:
        raise ValueError(f"fold must be an integer in 0..{folds - 1}, got {fold!r}")
    test = kfold_assignment(len(y), folds, seed, draw) == fold
    return X[~test], y[~test], X[test], y[test]
