"""The dataset container every loader returns, and the shared preprocessing steps.

A loader is ``load(rng, **options) -> Dataset``: ``rng`` drives every random choice of the loader (split index,
permutation, synthetic draws), so a dataset is a pure function of (loader, options, seed).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np


class DataUnavailableError(FileNotFoundError):
    """A loader's data file is not on this machine (nothing is ever downloaded at run time)."""


@dataclass(frozen=True)
class Population:
    """Exact population quantities of a synthetic generator (so metrics need no estimation).

    ``cov`` is Σ = E[x xᵀ]; ``theta`` the population minimiser θ*; ``extra`` holds generator-specific
    functionals (e.g. an information matrix).
    """

    cov: np.ndarray
    theta: np.ndarray
    noise_var: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Dataset:
    """Normalised train/test split of one regression dataset.

    Attributes
    ----------
    name : loader name (registry key).
    X_train, y_train : training rows; after the declared preprocessing ‖x_i‖ ≤ x_bound and |y_i| ≤ y_bound.
    X_test, y_test : test rows scaled with the training factors (may exceed the bounds); may be empty.
    X_public : unlabeled public rows for mechanisms that need them (else None).
    population : exact population quantities for synthetic data (else None).
    x_bound, y_bound : the data-independent bounds the preprocessing guarantees on the training rows.
    meta : provenance (file, recipe, split index, ...), written to the run's ``datasets.json``.
    sums : rows-free data (``X_train = y_train = None``): the training rows' sufficient statistics
        (:class:`~dpbench.linalg.SumStats`), which only mechanisms declared ``rows_free`` can fit from.
    """

    name: str
    X_train: np.ndarray | None
    y_train: np.ndarray | None
    X_test: np.ndarray
    y_test: np.ndarray
    X_public: np.ndarray | None = None
    population: Population | None = None
    x_bound: float = 1.0
    y_bound: float = 1.0
    meta: dict[str, Any] = field(default_factory=dict)
    sums: Any = None

    def __post_init__(self) -> None:
        if (self.X_train is None) != (self.sums is not None) or (self.X_train is None) != (self.y_train is None):
            raise ValueError(f"dataset {self.name!r}: give either training rows (X_train, y_train) or sums, not both")

    @property
    def n(self) -> int:
        return int(self.sums.n if self.X_train is None else self.X_train.shape[0])

    @property
    def d(self) -> int:
        return int(self.sums.d if self.X_train is None else self.X_train.shape[1])


def data_dir() -> Path:
    """Folder holding the vendored data: ``$DPBENCH_DATA_DIR``; else ``dpbench/_datasets/``, the copy an installed
    wheel carries (``pip install .``, see setup.py); else ``datasets/`` of the clone (an editable install)."""
    env = os.environ.get("DPBENCH_DATA_DIR")
    if env:
        return Path(env)
    package = Path(__file__).resolve().parents[1]
    shipped = package / "_datasets"
    return shipped if shipped.is_dir() else package.parent / "datasets"


def require_file(relative: str) -> Path:
    """Path of a vendored data file, or a :class:`DataUnavailableError` naming it (the read is recorded, see
    :func:`note_read`)."""
    path = data_dir() / relative
    if not path.is_file():
        raise DataUnavailableError(
            f"data unavailable: {path} is missing (this dataset is not vendored; see datasets/README.md)"
        )
    note_read(path)
    return path


# ----------------------------------------------------------------------------------------------------------------
# which files a load read (a trial's identity includes their content digests: dpbench.engine.identity)

#: the open recorders of :func:`recording_reads` (innermost last)
_RECORDERS: list[set[str]] = []
#: sha256 of a file keyed by (path, mtime_ns, size): each file is hashed once per process and version
_DIGESTS: dict[tuple[str, int, int], str] = {}


def note_read(path: str | Path) -> None:
    """Record that the current load reads ``path`` (every loader reading a file calls this, directly or through
    :func:`require_file`; a reader cached per process must call it on every load, not only on the first)."""
    resolved = str(Path(path).resolve())
    for recorder in _RECORDERS:
        recorder.add(resolved)


@contextlib.contextmanager
def recording_reads() -> Iterator[set[str]]:
    """Collect the (resolved) paths of the files read inside the block."""
    recorder: set[str] = set()
    _RECORDERS.append(recorder)
    try:
        yield recorder
    finally:
        _RECORDERS.remove(recorder)


def file_digest(path: str | Path) -> str | None:
    """sha256 of a file's bytes (None if it is gone); cached per (path, mtime, size)."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    key = (str(path), stat.st_mtime_ns, stat.st_size)
    if key not in _DIGESTS:
        sha = hashlib.sha256()
        try:
            with open(path, "rb") as handle:
                for chunk in iter(lambda: handle.read(1 << 20), b""):
                    sha.update(chunk)
        except OSError:
            return None
        _DIGESTS[key] = sha.hexdigest()
    return _DIGESTS[key]


def check_finite(array: np.ndarray, what: str) -> None:
    """Raise a ValueError naming ``what`` if ``array`` holds NaN or inf."""
    bad = ~np.isfinite(array)
    if bad.any():
        rows = np.unique(np.nonzero(bad)[0])[:5]
        raise ValueError(f"{what}: {int(bad.sum())} non-finite values (first rows {rows.tolist()})")


def scale_labels(y_train: np.ndarray, y_test: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """y ← y / max|y_train| on both splits (004 §5.3); returns the factor too."""
    factor = float(np.max(np.abs(y_train)))
    if factor == 0.0:
        raise ValueError("all training labels are zero; cannot normalise y")
    return y_train / factor, y_test / factor, factor


def standardize_features(X_train: np.ndarray, X_test: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """z-score with training mean/std (ddof=0), constant columns left at zero (std 0 → 1; 004 §5.3 M)."""
    mean = X_train.mean(axis=0)
    std = X_train.std(axis=0)
    std[std == 0] = 1.0
    return (X_train - mean) / std, (X_test - mean) / std


def normalize_rows(X_train: np.ndarray, X_test: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """X ← X / max_i ‖x_i^train‖ on both splits, so every training row has norm ≤ 1 (004 §5.3)."""
    factor = float(np.sqrt(np.max(np.sum(X_train**2, axis=1))))
    if factor == 0.0:
        raise ValueError("all training rows are zero; cannot normalise X")
    return X_train / factor, X_test / factor, factor


def finalize(
    name: str,
    X_train: np.ndarray,
    y_train: np.ndarray,
    X_test: np.ndarray,
    y_test: np.ndarray,
    *,
    standardize: bool,
    meta: dict[str, Any],
) -> Dataset:
    """Common last steps of the 004 recipes: optional z-score, y scaling, row normalisation."""
    for array, what in ((X_train, "X_train"), (y_train, "y_train"), (X_test, "X_test"), (y_test, "y_test")):
        check_finite(np.asarray(array, dtype=float), f"{name}: {what}")
    X_train = np.asarray(X_train, dtype=float)
    X_test = np.asarray(X_test, dtype=float)
    if standardize:
        X_train, X_test = standardize_features(X_train, X_test)
    y_train, y_test, y_factor = scale_labels(np.asarray(y_train, float), np.asarray(y_test, float))
    X_train, X_test, x_factor = normalize_rows(X_train, X_test)
    meta = {**meta, "y_scale": y_factor, "x_scale": x_factor}
    return Dataset(name, X_train, y_train, X_test, y_test, meta=meta)
