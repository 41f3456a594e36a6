"""Bring your own data: ``loader: csv`` (any numeric CSV) and the preprocessing it shares with ``loader: openml``.

Options (config ``datasets[i].options``)::

    path: data/houses.csv        # relative to the config file, or absolute
    target: price                # default: the last column
    features: [area, rooms]      # default: every other column (minus split_column)
    delimiter: ","               # any single character, or "\\s+" for whitespace
    header: true                 # false: columns are named 0, 1, 2, ...
    missing: error               # or drop (the number of dropped rows is recorded)
    test_fraction: 0.2           # random split; split_seed fixes it (default: the run's dataset seed)
    split_column: null           # or a column holding train/test per row (then test_fraction is ignored)
    bounds: declared             # or benchmark (required: every run names its preprocessing)
    x_bound: 10.0                # declared: ‖x_i‖ ≤ x_bound (rows clipped to it), ...
    y_bound: 1000.0              # ... |y_i| ≤ y_bound (labels clipped)
    feature_ranges: {area: [0, 500]}   # or per-column ranges (every feature), with
    target_range: [0, 2000]            # a target range, instead of x_bound / y_bound
    clip: clip                   # declared: clip rows beyond the bounds (counted, said by dpbench run, the figure
                                 # notes and the report), or error: refuse the file if any training row is beyond

**Preprocessing modes.** ``bounds: declared`` is what a deployment can do privately: the user states the bounds, the
training rows are clipped to them and rescaled by the *declared* constants so that ‖x_i‖ ≤ 1 and |y_i| ≤ 1 —
either x ← clip_{x_bound}(x)/x_bound, y ← clip(y, ±y_bound)/y_bound, or per column z_j = (clip(x_j, lo_j, hi_j) −
mid_j)/(half_j·√d), y = (clip(y, lo, hi) − mid)/half. Nothing is read off the data. ``bounds: benchmark`` is the
papers' data-dependent normalisation (y/max|y_train|, X/max‖x_train‖, optional z-score with ``standardize``): it looks
at the private data and is **not private**; it is named in the trials' ``data.bounds`` column, datasets.json and the
figure notes. Test rows get the same affine maps (never clipped). So every MSE a run records (train_mse, test_mse,
excess_train_mse) is on this normalised scale, (y / y_bound)² (y / max|y_train| with benchmark bounds): multiply by
y_bound² for the data's own units. Clipped rows are counted (``rows_clipped_x``, ``labels_clipped_y``; ``clip:
error`` refuses them) and a benchmark scale set by an outlier is measured (``x_outlier_ratio``, ``y_outlier_ratio``:
max / 99th percentile); ``dpbench run``, the figure notes and the report say both.

Bad data raises one ValueError naming file, row and column: missing values (unless ``missing: drop``), non-numeric
columns, an unknown column, a constant target, fewer training rows than feature columns, bad split labels.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dpbench.contract import Choice, Hyper
from dpbench.data._base import Dataset, normalize_rows, note_read, scale_labels, standardize_features
from dpbench.registry import register_dataset

BOUNDS_MODES = ("declared", "benchmark")
MISSING_MODES = ("error", "drop")
CLIP_MODES = ("clip", "error")
NOT_PRIVATE = "benchmark (data-dependent normalisation, NOT private)"


@dataclass(frozen=True)
class Preprocessing:
    """Validated preprocessing options (see the module docstring)."""

    bounds: str
    x_bound: float | None = None
    y_bound: float | None = None
    feature_ranges: Mapping[str, tuple[float, float]] | None = None
    target_range: tuple[float, float] | None = None
    standardize: bool = False
    clip: str = "clip"
    label: str = field(default="", compare=False)

    @property
    def description(self) -> str:
        if self.bounds == "benchmark":
            return NOT_PRIVATE
        if self.feature_ranges is not None:
            return "declared per-column ranges (clipped; private)"
        return f"declared x_bound = {self.x_bound:g}, y_bound = {self.y_bound:g} (clipped; private)"


def _fail(where: str, message: str) -> ValueError:
    return ValueError(f"{where}: {message}")


def _positive(value: Any, name: str, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
        raise _fail(where, f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


def _range(value: Any, name: str, where: str) -> tuple[float, float]:
    ok = isinstance(value, (list, tuple)) and len(value) == 2
    ok = ok and all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in value)
    if not ok or not value[0] < value[1]:
        raise _fail(where, f"{name} must be [low, high] with low < high, got {value!r}")
    return float(value[0]), float(value[1])


def check_preprocessing(
    where: str,
    *,
    bounds: str | None,
    x_bound: float | None = None,
    y_bound: float | None = None,
    feature_ranges: Mapping[str, Any] | None = None,
    target_range: Sequence[float] | None = None,
    standardize: bool = False,
    clip: str = "clip",
) -> Preprocessing:
    """Validate the bounds options (``where`` prefixes every message, e.g. the file name)."""
    if clip not in CLIP_MODES:
        raise _fail(
            where,
            f"option clip must be 'clip' (rows beyond the declared bounds are clipped and counted) or 'error' "
            f"(refuse them), got {clip!r}",
        )
    if bounds not in BOUNDS_MODES:
        raise _fail(
            where,
            f"option bounds must be 'declared' (you state x_bound/y_bound or ranges; private) or "
            f"'benchmark' (the papers' data-dependent normalisation; not private), got {bounds!r}",
        )
    declared = (x_bound, y_bound, feature_ranges, target_range)
    if bounds == "benchmark":
        if any(v is not None for v in declared):
            raise _fail(
                where,
                "bounds: benchmark normalises by the data; drop x_bound/y_bound/feature_ranges/"
                "target_range or use bounds: declared",
            )
        return Preprocessing("benchmark", standardize=bool(standardize))
    if standardize:
        raise _fail(where, "standardize reads the data's mean and std; it is only available with bounds: benchmark")
    if (x_bound is None) == (feature_ranges is None):
        raise _fail(where, "bounds: declared needs exactly one of x_bound (row norm) or feature_ranges (per column)")
    if (y_bound is None) == (target_range is None):
        raise _fail(where, "bounds: declared needs exactly one of y_bound or target_range")
    ranges = None
    if feature_ranges is not None:
        if not isinstance(feature_ranges, Mapping) or not feature_ranges:
            raise _fail(where, f"feature_ranges must map every feature column to [low, high], got {feature_ranges!r}")
        ranges = {str(k): _range(v, f"feature_ranges.{k}", where) for k, v in feature_ranges.items()}
    return Preprocessing(
        "declared",
        x_bound=None if x_bound is None else _positive(x_bound, "x_bound", where),
        y_bound=None if y_bound is None else _positive(y_bound, "y_bound", where),
        feature_ranges=ranges,
        target_range=None if target_range is None else _range(target_range, "target_range", where),
        clip=clip,
    )


# ----------------------------------------------------------------------------------------------------------------
# the two preprocessing modes (pure functions of the split and the declared constants)


def clip_rows(X: np.ndarray, bound: float) -> tuple[np.ndarray, int]:
    """x ← x·min(1, bound/‖x‖); returns the clipped rows and how many were clipped."""
    norms = np.linalg.norm(X, axis=1)
    over = norms > bound
    scale = np.where(over, bound / np.where(over, norms, 1.0), 1.0)
    return X * scale[:, None], int(over.sum())


def declared_scaling(
    X_train: np.ndarray,
    y_train: np.ndarray,
    X_test: np.ndarray,
    y_test: np.ndarray,
    prep: Preprocessing,
    feature_names: Sequence[str],
    where: str,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
    """Clip the training rows to the declared bounds and map everything so that ‖x_i‖ ≤ 1, |y_i| ≤ 1."""
    d = X_train.shape[1]
    if prep.feature_ranges is not None:
        missing = [c for c in feature_names if c not in prep.feature_ranges]
        extra = [c for c in prep.feature_ranges if c not in feature_names]
        if missing or extra:
            raise _fail(
                where, f"feature_ranges must give every feature column exactly: missing {missing}, unknown {extra}"
            )
        lo = np.array([prep.feature_ranges[c][0] for c in feature_names])
        hi = np.array([prep.feature_ranges[c][1] for c in feature_names])
        clipped = np.clip(X_train, lo, hi)
        n_clipped = int(np.any(clipped != X_train, axis=1).sum())
        mid, half = (lo + hi) / 2, (hi - lo) / 2 * math.sqrt(d)
        X_train, X_test = (clipped - mid) / half, (X_test - mid) / half
    else:
        clipped, n_clipped = clip_rows(X_train, prep.x_bound)
        X_train, X_test = clipped / prep.x_bound, X_test / prep.x_bound
    y_lo, y_hi = prep.target_range if prep.target_range is not None else (-prep.y_bound, prep.y_bound)
    y_clipped = np.clip(y_train, y_lo, y_hi)
    y_mid, y_half = (y_lo + y_hi) / 2, (y_hi - y_lo) / 2
    info = {"rows_clipped_x": n_clipped, "labels_clipped_y": int((y_clipped != y_train).sum())}
    if prep.clip == "error" and (info["rows_clipped_x"] or info["labels_clipped_y"]):
        n = len(y_train)
        raise _fail(
            where,
            f"clip: error, and {info['rows_clipped_x']} of {n} training rows lie beyond the declared feature "
            f"bounds, {info['labels_clipped_y']} labels beyond the target bound; widen the declared bounds (they "
            "must hold for any possible record) or set clip: clip to clip them",
        )
    return X_train, (y_clipped - y_mid) / y_half, X_test, (y_test - y_mid) / y_half, info


def benchmark_scaling(
    X_train: np.ndarray, y_train: np.ndarray, X_test: np.ndarray, y_test: np.ndarray, prep: Preprocessing
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
    """The papers' recipe: optional z-score, y/max|y_train|, X/max‖x_train‖ (spec 004 §5.3) — not private."""
    if prep.standardize:
        X_train, X_test = standardize_features(X_train, X_test)
    outliers = {
        "x_outlier_ratio": outlier_ratio(np.linalg.norm(X_train, axis=1)),
        "y_outlier_ratio": outlier_ratio(np.abs(y_train)),
    }
    y_train, y_test, y_scale = scale_labels(y_train, y_test)
    X_train, X_test, x_scale = normalize_rows(X_train, X_test)
    return X_train, y_train, X_test, y_test, {"x_scale": x_scale, "y_scale": y_scale, **outliers}


def outlier_ratio(sizes: np.ndarray) -> float:
    """max / 99th percentile of the rows' sizes (‖x_i‖ or |y_i|): how far the largest row, which sets the
    ``bounds: benchmark`` scale, stands out (1 = no outlier; 1e12 when 99% of the rows are 0)."""
    q99 = float(np.quantile(sizes, 0.99))
    top = float(np.max(sizes))
    return top / q99 if q99 > 0 else (1.0 if top == 0 else 1e12)


# ----------------------------------------------------------------------------------------------------------------
# split and assembly (shared with the openml loader)


def split_indices(
    n_total: int, rng: np.random.Generator, test_fraction: float, split_seed: int | None, where: str
) -> tuple[np.ndarray, np.ndarray]:
    """Random split: a permutation from ``split_seed`` (or the loader's rng); its first ⌊(1 − f)·N⌋ rows train."""
    if isinstance(test_fraction, bool) or not isinstance(test_fraction, (int, float)) or not 0 <= test_fraction < 1:
        raise _fail(where, f"test_fraction must be a number in [0, 1), got {test_fraction!r}")
    if split_seed is not None and (isinstance(split_seed, bool) or not isinstance(split_seed, int) or split_seed < 0):
        raise _fail(where, f"split_seed must be a non-negative integer, got {split_seed!r}")
    source = rng if split_seed is None else np.random.default_rng(split_seed)
    perm = source.permutation(n_total)
    n_train = math.floor((1 - Fraction(str(test_fraction))) * n_total)  # exact: ⌊0.8N⌋ = the R recipe's split
    return perm[:n_train], perm[n_train:]


def assemble(
    name: str,
    X: np.ndarray,
    y: np.ndarray,
    train: np.ndarray,
    test: np.ndarray,
    prep: Preprocessing,
    feature_names: Sequence[str],
    target_name: str,
    where: str,
    meta: dict[str, Any],
) -> Dataset:
    """Check the training part (constant target, n ≤ d), apply the preprocessing mode, build the Dataset."""
    n, d = len(train), X.shape[1]
    if n <= d:
        raise _fail(where, f"{n} training rows for {d} feature columns; a regression needs more rows than columns")
    y_train = y[train]
    if np.all(y_train == y_train[0]):
        raise _fail(where, f"target column {target_name!r} is constant ({y_train[0]:g}) in the training rows")
    constant = [name for name, column in zip(feature_names, X[train].T, strict=True) if np.all(column == column[0])]
    if constant:
        meta = {**meta, "constant_features": ", ".join(constant)}
    parts = (X[train], y_train, X[test], y[test])
    if prep.bounds == "declared":
        X_tr, y_tr, X_te, y_te, info = declared_scaling(*parts, prep, feature_names, where)
    else:
        X_tr, y_tr, X_te, y_te, info = benchmark_scaling(*parts, prep)
    meta = {
        **meta,
        **info,
        "bounds": prep.bounds,
        "preprocessing": prep.description,
        "target": target_name,
        "features": ", ".join(feature_names),
        "n": n,
        "n_test": len(test),
        "d": d,
    }
    return Dataset(name, X_tr, y_tr, X_te, y_te, x_bound=1.0, y_bound=1.0, meta=meta)


# ----------------------------------------------------------------------------------------------------------------
# reading the file


def _column(frame: pd.DataFrame, column: Any, what: str, where: str) -> str:
    key = str(column)
    if key not in frame.columns:
        raise _fail(where, f"{what} column {column!r} not found; columns: {', '.join(map(str, frame.columns))}")
    return key


def read_table(path: Path, delimiter: str, header: bool) -> pd.DataFrame:
    """The CSV as strings-or-numbers, columns named by the header (or 0, 1, ...); errors name the file."""
    if not isinstance(delimiter, str) or not delimiter:
        raise _fail(str(path), f"delimiter must be a non-empty string, got {delimiter!r}")
    if path.is_dir():
        raise _fail(str(path), "is a folder, not a CSV file; give the file itself (option path)")
    if not path.is_file():
        raise FileNotFoundError(f"{path}: CSV file not found (a relative path is read from the config's folder)")
    note_read(path)
    if header:
        check_header(path, delimiter)
    try:
        frame = pd.read_csv(
            path,
            sep=delimiter,
            header=0 if header else None,
            skipinitialspace=True,
            engine="python" if len(delimiter) > 1 else "c",
        )
    except pd.errors.EmptyDataError:
        raise _fail(str(path), "the file is empty") from None
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as err:
        raise _fail(str(path), f"cannot parse as CSV with delimiter {delimiter!r} ({err})") from None
    frame.columns = [str(c).strip() for c in frame.columns]
    if frame.empty:
        raise _fail(str(path), "no data rows")
    return frame


def check_header(path: Path, delimiter: str) -> None:
    """The header line read as text: a duplicate column name is an error (pandas would rename it ``age.1``), and a
    file whose header has no ``delimiter`` but another usual separator gets the option to set."""
    with path.open(encoding="utf-8", errors="replace") as file:
        line = file.readline().rstrip("\r\n")
    if len(delimiter) == 1:
        names = [name.strip().strip('"') for name in next(csv.reader([line], delimiter=delimiter), [])]
        seen: dict[str, int] = {}
        for position, name in enumerate(names, start=1):
            if name in seen:
                raise _fail(
                    str(path),
                    f"duplicate column name {name!r} (columns {seen[name]} and {position} of the header); rename one",
                )
            seen[name] = position
        if len(names) <= 1:
            for other in (";", "\t", "|"):
                if line.count(other) >= 1:
                    shown = "\\t" if other == "\t" else other
                    raise _fail(
                        str(path),
                        f"the header has no {delimiter!r} but {line.count(other)} {shown!r}: set the loader option "
                        f'delimiter: "{shown}"',
                    )


def _line(row: int, header: bool) -> str:
    return f"row {row + 1} (line {row + 1 + int(header)})"


def numeric_block(frame: pd.DataFrame, columns: Sequence[str], where: str, header: bool) -> np.ndarray:
    """The columns as floats; a non-numeric cell raises an error naming its row and column."""
    out = np.empty((len(frame), len(columns)))
    for j, column in enumerate(columns):
        values = pd.to_numeric(frame[column], errors="coerce")
        bad = values.isna() & frame[column].notna()
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            raise _fail(
                where,
                f"column {column!r} is not numeric: {frame[column].iloc[row]!r} at "
                f"{_line(row, header)} ({int(bad.sum())} such cells); encode it or leave it out of features",
            )
        out[:, j] = values.to_numpy(dtype=float)
    if np.isinf(out).any():
        row, j = (int(v[0]) for v in np.nonzero(np.isinf(out)))
        raise _fail(where, f"infinite value at {_line(row, header)}, column {columns[j]!r}")
    return out


def handle_missing(values: np.ndarray, columns: Sequence[str], missing: str, where: str, header: bool) -> np.ndarray:
    """Rows to keep: all (error mode, raising on the first missing cell) or the complete ones (drop mode)."""
    if missing not in MISSING_MODES:
        raise _fail(where, f"missing must be 'error' or 'drop', got {missing!r}")
    holes = np.isnan(values)
    if holes.any() and missing == "error":
        row, j = (int(v[0]) for v in np.nonzero(holes))
        raise _fail(
            where,
            f"missing value at {_line(row, header)}, column {columns[j]!r} "
            f"({int(holes.sum())} missing cells in {int(holes.any(axis=1).sum())} rows); "
            "set missing: drop to drop incomplete rows",
        )
    return ~holes.any(axis=1)


def split_from_column(labels: pd.Series, where: str, header: bool) -> tuple[np.ndarray, np.ndarray]:
    """Rows marked train / test (case-insensitive) in the split column."""
    text = labels.astype(str).str.strip().str.lower()
    bad = ~text.isin(["train", "test"])
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise _fail(
            where,
            f"split column {labels.name!r} must hold 'train' or 'test', found "
            f"{labels.iloc[row]!r} at {_line(row, header)}",
        )
    return np.flatnonzero((text == "train").to_numpy()), np.flatnonzero((text == "test").to_numpy())


#: the options every file loader shares (``csv``, ``openml``): how rows are brought into the bounds, declared once
PREPROCESSING: dict[str, Hyper] = {
    "bounds": Choice(
        *BOUNDS_MODES,
        default=None,
        none="required: declared or benchmark",
        doc="declared: you state the bounds (private); benchmark: the papers' data-dependent "
        "normalisation (not private)",
    ),
    "x_bound": Hyper(float, default=None, gt=0, none="not declared", doc="row norm bound (bounds: declared)"),
    "y_bound": Hyper(float, default=None, gt=0, none="not declared", doc="label bound (bounds: declared)"),
    "feature_ranges": Hyper(
        object, default=None, none="not declared", doc="{column: [low, high]} per feature (bounds: declared)"
    ),
    "target_range": Hyper(object, default=None, none="not declared", doc="[low, high] of the target"),
    "standardize": Hyper(bool, default=False, doc="z-score the features (bounds: benchmark only)"),
    "clip": Choice(*CLIP_MODES, default="clip", doc="rows beyond declared bounds: clipped and counted, or refused"),
    "missing": Choice(*MISSING_MODES, default="error", doc="a missing cell: refuse the file, or drop the row"),
    "test_fraction": Hyper(float, default=0.2, ge=0, lt=1, doc="share of rows in the random test split"),
    "split_seed": Hyper(int, default=None, ge=0, none="the trial's rng", doc="seed of a fixed random split"),
}
#: the options of ``loader: csv``, declared once
CSV_OPTIONS: dict[str, Hyper] = {
    "path": Hyper(str, default=None, none="required", doc="the CSV file, relative to the config or absolute"),
    "target": Hyper(object, default=None, none="the last column", doc="the target column (name or index)"),
    "features": Hyper(object, default=None, none="every other column", doc="list of feature column names"),
    "delimiter": Hyper(str, default=",", doc="column separator"),
    "header": Hyper(bool, default=True, doc="the first line names the columns"),
    "split_column": Hyper(str, default=None, none="a random split", doc="column marking rows train / test"),
    **PREPROCESSING,
    "title": Hyper(str, default=None, none="the file's stem", doc="the panels' title"),
}


@register_dataset(
    "csv",
    summary="Your own CSV: path, target, features, split, bounds: declared (private) | benchmark (not private)",
    spec="issue 18",
    options=CSV_OPTIONS,
)
def load_csv(rng: np.random.Generator, **options: Any) -> Dataset:
    """Load a numeric CSV (module docstring); ``title`` names the panels (default: the file's stem)."""
    return read_csv_dataset(rng, **options)


def read_csv_dataset(
    rng: np.random.Generator,
    *,
    path: str | None,
    target: str | int | None,
    features: list[str] | None,
    delimiter: str,
    header: bool,
    missing: str,
    test_fraction: float,
    split_seed: int | None,
    split_column: str | None,
    bounds: str | None,
    x_bound: float | None,
    y_bound: float | None,
    feature_ranges: dict[str, list[float]] | None,
    target_range: list[float] | None,
    standardize: bool,
    clip: str,
    title: str | None,
) -> Dataset:
    """The ``csv`` loader's body, every option given (:data:`CSV_OPTIONS`)."""
    if not path:
        raise ValueError("csv loader: option path is required (the CSV file, relative to the config or absolute)")
    file = Path(path).expanduser()
    where = str(file)
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
    frame = read_table(file, delimiter, bool(header))
    target_col = _column(frame, frame.columns[-1] if target is None else target, "target", where)
    split_col = None if split_column is None else _column(frame, split_column, "split", where)
    if features is None:
        feature_cols = [c for c in frame.columns if c not in (target_col, split_col)]
    else:
        if not isinstance(features, list) or not features:
            raise _fail(where, f"features must be a non-empty list of column names, got {features!r}")
        feature_cols = [_column(frame, c, "feature", where) for c in features]
        if target_col in feature_cols:
            raise _fail(where, f"target column {target_col!r} is also listed in features")
    if not feature_cols:
        raise _fail(where, "no feature columns (the file has only the target column)")
    columns = [*feature_cols, target_col]
    values = numeric_block(frame, columns, where, bool(header))
    keep = handle_missing(values, columns, missing, where, bool(header))
    values, frame = values[keep], frame.loc[keep].reset_index(drop=True)
    if split_col is not None:
        train, test = split_from_column(frame[split_col], where, bool(header))
    else:
        train, test = split_indices(len(values), rng, test_fraction, split_seed, where)
    meta = {
        "title": title or file.stem,
        "file": where,
        "rows_dropped_missing": int((~keep).sum()),
        "split": f"column {split_col}" if split_col else f"random, test_fraction = {test_fraction:g}",
    }
    return assemble("csv", values[:, :-1], values[:, -1], train, test, prep, feature_cols, target_col, where, meta)


#: the user's file is opened and checked in the main process before any trial (dpbench.engine.regression)
load_csv.check_in_main = True
