"""Generic OpenML loader (spec 004 §8): any numeric OpenML regression dataset with the R recipe.

Needs the optional ``openml`` package (``pip install dpbench[openml]``), imported only when the loader runs.
By default it reads **only the local openml cache** and never touches the network: if the dataset is not
cached (or the package is missing) it raises :class:`DataUnavailableError` saying how to fill the cache. Pass
``allow_download=True`` to let openml download into the cache. Note: the loader points the process-wide
``openml.config`` cache at the chosen directory.

Cache directory: ``cache_dir`` if given, else ``$DPBENCH_DATA_DIR/openml`` when that variable is set, else
``~/.cache/dpbench/openml``. Tecator (the paper's dataset) is ``data_id=505``; the vendored copy used by the
``tecator`` loader needs no openml at all.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from dpbench.contract import Hyper
from dpbench.data._base import Dataset, DataUnavailableError, note_read
from dpbench.data.csv_loader import PREPROCESSING, assemble, check_preprocessing, handle_missing, split_indices
from dpbench.data.recipes import SPEC
from dpbench.registry import register_dataset


def openml_cache_root(cache_dir: str | None = None) -> Path:
    """Root cache directory handed to ``openml.config``."""
    if cache_dir:
        return Path(cache_dir).expanduser()
    env = os.environ.get("DPBENCH_DATA_DIR")
    if env:
        return Path(env) / "openml"
    return Path("~/.cache/dpbench/openml").expanduser()


def _import_openml() -> Any:
    try:
        import openml  # noqa: PLC0415  (optional dependency, imported lazily)
    except ImportError as err:
        raise DataUnavailableError(
            "the 'openml' loader needs the optional openml package: pip install 'dpbench[openml]' "
            "(the vendored 'tecator' loader needs nothing)"
        ) from err
    return openml


def _configure_cache(openml: Any, root: Path) -> Path:
    """Point openml at ``root``; return the directory holding ``datasets/<id>/``."""
    config = openml.config
    if hasattr(config, "set_root_cache_directory"):
        config.set_root_cache_directory(str(root))
    else:  # older openml releases
        config.cache_directory = str(root)
    getter = getattr(config, "get_cache_directory", None)
    return Path(getter()) if getter is not None else root


def _is_cached(dataset_dir: Path) -> bool:
    if not (dataset_dir / "description.xml").is_file():
        return False
    data_files = ("dataset.arff", "dataset.pq", "dataset.pkl.py3")
    return any((dataset_dir / name).is_file() for name in data_files) or any(dataset_dir.glob("*.pq"))


#: the options of ``loader: openml``, declared once: which dataset, then the file loaders' preprocessing
#: (:data:`~dpbench.data.csv_loader.PREPROCESSING`) with the R recipe's defaults (incomplete rows dropped, benchmark)
OPENML_OPTIONS: dict[str, Hyper] = {
    "data_id": Hyper(int, default=505, ge=1, doc="the OpenML dataset id (505 = Tecator)"),
    "target": Hyper(str, default=None, none="the dataset's default target", doc="the target column"),
    "allow_download": Hyper(bool, default=False, doc="fill the local cache from the network when missing"),
    "cache_dir": Hyper(str, default=None, none="$DPBENCH_DATA_DIR's openml cache", doc="the openml cache folder"),
    **PREPROCESSING,
    "missing": replace(PREPROCESSING["missing"], default="drop"),
    "bounds": replace(PREPROCESSING["bounds"], default="benchmark"),
}


@register_dataset(
    "openml",
    summary="Any numeric OpenML regression dataset (local cache only unless allow_download); bounds: benchmark "
    "(R recipe, default) | declared, as for csv",
    spec="004 §8 / " + SPEC,
    options=OPENML_OPTIONS,
)
def load_openml(rng: np.random.Generator, **options: Any) -> Dataset:
    """OpenML dataset ``data_id`` (default 505 = Tecator): X = all non-target columns, y = ``target`` (default: the
    dataset's default target). The split and preprocessing options are those of ``loader: csv``
    (:mod:`dpbench.data.csv_loader`); the defaults (incomplete rows dropped, random 80/20 split, ``bounds:
    benchmark``) are the R recipe of spec 004 §5.3."""
    return read_openml_dataset(rng, **options)


def read_openml_dataset(
    rng: np.random.Generator,
    *,
    data_id: int,
    target: str | None,
    standardize: bool,
    allow_download: bool,
    cache_dir: str | None,
    missing: str,
    test_fraction: float,
    split_seed: int | None,
    bounds: str,
    x_bound: float | None,
    y_bound: float | None,
    feature_ranges: dict[str, list[float]] | None,
    target_range: list[float] | None,
    clip: str,
) -> Dataset:
    """The ``openml`` loader's body, every option given (:data:`OPENML_OPTIONS`)."""
    where = f"OpenML dataset {data_id}"
    prep = check_preprocessing(
        where,
        bounds=bounds,
        x_bound=x_bound,
        y_bound=y_bound,
        feature_ranges=feature_ranges,
        target_range=target_range,
        standardize=standardize,
        clip=clip,
    )
    openml = _import_openml()
    root = openml_cache_root(cache_dir)
    dataset_dir = _configure_cache(openml, root) / "datasets" / str(int(data_id))
    if not allow_download and not _is_cached(dataset_dir):
        raise DataUnavailableError(
            f"OpenML dataset {data_id} is not in the local cache {dataset_dir}; nothing is downloaded by "
            "default. Fill the cache once with the option allow_download=True (network needed), or set "
            "cache_dir / $DPBENCH_DATA_DIR to an existing openml cache."
        )
    try:
        dataset = openml.datasets.get_dataset(
            int(data_id),
            download_data=True,
            download_qualities=False,
            download_features_meta_data=False,
        )
        target_name = target or dataset.default_target_attribute
        if not target_name:
            raise ValueError(f"OpenML dataset {data_id} has no default target; pass target=...")
        X_frame, y_frame, _, names = dataset.get_data(target=target_name)
        for file in sorted(dataset_dir.glob("*")):
            if file.suffix in (".arff", ".pq"):  # the cached data (the pickle is derived from them)
                note_read(file)
    except ValueError:
        raise
    except Exception as err:  # network or cache errors inside openml
        if allow_download:
            raise
        raise DataUnavailableError(f"OpenML dataset {data_id}: could not read the local cache ({err})") from err
    where = f"OpenML dataset {data_id} ({getattr(dataset, 'name', '?')})"
    try:
        X = np.asarray(X_frame, dtype=float)
        y = np.asarray(y_frame, dtype=float).reshape(-1)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{where}: non-numeric feature or target ({err}); only numeric data is supported") from err
    if X.ndim != 2 or X.shape[0] != y.shape[0]:
        raise ValueError(f"{where}: features {X.shape} and target {y.shape} do not line up")
    features = [str(name) for name in names] if names is not None else [str(j) for j in range(X.shape[1])]
    values = np.column_stack([X, y])
    values[np.isinf(values)] = np.nan
    keep = handle_missing(values, [*features, str(target_name)], missing, where, header=False)
    train, test = split_indices(int(keep.sum()), rng, test_fraction, split_seed, where)
    meta = {
        "title": str(getattr(dataset, "name", f"OpenML {data_id}")),
        "recipe": "R" if prep.bounds == "benchmark" else "declared bounds",
        "file": f"openml:{int(data_id)}",
        "data_id": int(data_id),
        "rows_dropped_missing": int((~keep).sum()),
    }
    return assemble("openml", X[keep], y[keep], train, test, prep, features, str(target_name), where, meta)


#: the user's choice of data is opened and checked in the main process before any trial (dpbench.engine.regression)
load_openml.check_in_main = True
