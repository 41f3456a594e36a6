"""Real-data loaders with the R-type and special recipes of spec 004 §5.3, plus the shared file readers.

R recipe: uniformly random permutation from ``rng``, the first ⌊0.8N⌋ rows train, y ← y / max|y_train|,
features left raw, rows divided by the largest training-row norm. The special recipes (bike, breastcancer,
crime, gas, tamielectric, wine) build X, y from their file first and then use the same split. Every file is
read once per process (``functools.lru_cache`` keyed on path, mtime and size) into read-only arrays; a loader
call only draws the split and applies the scalings, so repeated loads are cheap.

Files live in :func:`dpbench.data._base.data_dir` (``$DPBENCH_DATA_DIR`` or the repository's ``datasets/``);
``datasets/README.md`` gives their provenance. A wrong column count or an unparsable value is a ValueError
that names the file.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pandas as pd

from dpbench.contract import Choice, Hyper
from dpbench.data._base import Dataset, finalize, require_file
from dpbench.registry import register_dataset

SPEC = "004 §5.3"

# --------------------------------------------------------------------------------------------------
# File readers (cached, read-only results)
# --------------------------------------------------------------------------------------------------


def file_key(relative: str) -> tuple[str, int, int]:
    """(path, mtime_ns, size) of a vendored file: the cache key, so an edited file is re-read."""
    path = require_file(relative)
    stat = path.stat()
    return str(path), stat.st_mtime_ns, stat.st_size


def frozen(array: np.ndarray) -> np.ndarray:
    """Mark ``array`` read-only (cached arrays are shared between calls) and return it."""
    array.flags.writeable = False
    return array


def _read_frame(path: str, *, sep: str, header: int | None, na_values: Any = None) -> pd.DataFrame:
    try:
        return pd.read_csv(path, sep=sep, header=header, na_values=na_values, keep_default_na=na_values is None)
    except (ValueError, pd.errors.ParserError, UnicodeDecodeError) as err:
        raise ValueError(f"{path}: cannot parse ({err})") from err


def _as_float(frame: pd.DataFrame, path: str, *, allow_nan: bool = False) -> np.ndarray:
    try:
        values = frame.to_numpy(dtype=float)
    except (ValueError, TypeError) as err:
        raise ValueError(f"{path}: non-numeric value ({err})") from err
    if not allow_nan and not np.isfinite(values).all():
        rows = np.unique(np.nonzero(~np.isfinite(values))[0])[:5] + 1
        raise ValueError(f"{path}: missing or non-finite values (first data rows {rows.tolist()})")
    return values


def _check_columns(values: np.ndarray | pd.DataFrame, path: str, ncols: int) -> None:
    if values.shape[1] != ncols:
        raise ValueError(f"{path}: expected {ncols} columns, found {values.shape[1]}")


@functools.lru_cache(maxsize=64)
def read_numeric_cached(key: tuple[str, int, int], sep: str, header: int | None, ncols: int) -> np.ndarray:
    path = key[0]
    frame = _read_frame(path, sep=sep, header=header)
    _check_columns(frame, path, ncols)
    return frozen(_as_float(frame, path))


def read_numeric(relative: str, *, ncols: int, sep: str = ",", header: int | None = None) -> np.ndarray:
    """All-numeric table ``relative`` (no header unless ``header=0``) as a read-only float array.

    ``sep=r"\\s+"`` reads whitespace-separated files (any line endings, CR-only included). Raises ValueError
    naming the file on a wrong column count, an unparsable value or a missing value.
    """
    return read_numeric_cached(file_key(relative), sep, header, ncols)


# --------------------------------------------------------------------------------------------------
# Split + final scaling
# --------------------------------------------------------------------------------------------------


def n_train_r(n_total: int) -> int:
    """⌊0.8 N⌋ in exact integer arithmetic."""
    return (4 * n_total) // 5


def split_r(
    name: str,
    X: np.ndarray,
    y: np.ndarray,
    rng: np.random.Generator,
    *,
    standardize: bool,
    meta: dict[str, Any],
) -> Dataset:
    """R-type split: permutation from ``rng``, first ⌊0.8N⌋ rows train, then :func:`finalize`."""
    n_total = len(y)
    perm = rng.permutation(n_total)
    n_train = n_train_r(n_total)
    train, test = perm[:n_train], perm[n_train:]
    meta = {**meta, "split": "perm", "n_total": n_total, "n": n_train, "d": int(X.shape[1])}
    return finalize(name, X[train], y[train], X[test], y[test], standardize=standardize, meta=meta)


# --------------------------------------------------------------------------------------------------
# Plain R-type datasets: numeric file, last column y (spec 004 §5.2 / §5.3 "R")
# --------------------------------------------------------------------------------------------------

#: key → (figure title, file under data_dir(), separator, header row or None, number of columns)
R_DATASETS: dict[str, tuple[str, str, str, int | None, int]] = {
    "airfoil": ("Airfoil", "raw/airfoil.txt", r"\s+", None, 6),
    "autompg": ("Autompg", "raw/autompg.txt", r"\s+", None, 8),
    "concrete": ("Concrete", "raw/Concrete.txt", r"\s+", None, 9),
    "housing": ("Boston housing", "raw/housing.txt", r"\s+", None, 14),
    "parkinsons": ("Parkinsons", "raw/parkinsons.txt", r"\s+", None, 22),
    "tecator": ("Tecator", "raw/tecator.csv", ",", 0, 125),
}

_R_NOTES = {
    "autompg": "y = last column (origin), mpg is a feature (004 §7 #16)",
    "parkinsons": "y = last column (PPE) (004 §7 #16)",
    "tecator": "OpenML 505 'tecator' v1 via PMLB; y = fat",
}


def load_r_dataset(key: str, rng: np.random.Generator, standardize: bool = False) -> Dataset:
    """Load R-type dataset ``key`` of :data:`R_DATASETS` (last column = y, raw features; z-scored with training
    mean/std before the row scaling when ``standardize``, the 004 §5.3 M step — not private, as the row scaling)."""
    title, relative, sep, header, ncols = R_DATASETS[key]
    table = read_numeric(relative, ncols=ncols, sep=sep, header=header)
    meta = {"title": title, "recipe": "R", "file": relative}
    if key in _R_NOTES:
        meta["note"] = _R_NOTES[key]
    if standardize:
        meta["standardize"] = True
    return split_r(key, table[:, :-1], table[:, -1], rng, standardize=standardize, meta=meta)


#: the option of the R-recipe datasets and wine, declared once
STANDARDIZE = {
    "standardize": Hyper(bool, default=False, doc="z-score the features with the training mean/std (004 §5.3 M step)")
}
#: a loader without options: a config giving one is refused, naming it
NO_OPTIONS: dict[str, Hyper] = {}


def _make_r_loader(key: str) -> None:
    title, relative, *_ = R_DATASETS[key]

    def load(rng: np.random.Generator, **options: Any) -> Dataset:
        return load_r_dataset(key, rng, options["standardize"])

    load.__name__ = load.__qualname__ = f"load_{key}"
    load.__doc__ = f"{title} ({relative}): R recipe of spec 004 §5.3."
    summary = f"{title}: {relative}, random 80/20 split, raw features (R)"
    register_dataset(key, summary=summary, spec=SPEC, options=STANDARDIZE)(load)


for _key in R_DATASETS:
    _make_r_loader(_key)


# --------------------------------------------------------------------------------------------------
# Energy (004 §7 #15)
# --------------------------------------------------------------------------------------------------

ENERGY_FILE = "raw/energy.txt"


@register_dataset(
    "energy",
    summary="Energy efficiency: raw/energy.txt, 8 features, y = heating load (004 §7 #15), R recipe",
    spec=SPEC,
    options={
        "target": Choice("heating", "cooling", default="heating", doc="the load taken as y"),
        "features": Choice(8, 9, default=8, doc="8: X1..X8; 9: the other load appended"),
    },
)
def load_energy(rng: np.random.Generator, **options: Any) -> Dataset:
    """Energy efficiency (ENB2012): columns X1..X8, Y1 heating load, Y2 cooling load.

    Default (spec recommendation, matches Table 2): X = X1..X8, y = heating load (d = 8). ``features=9``
    appends the other load as a 9th feature; ``target="cooling", features=9`` is the reference code's variant.
    """
    target, features = options["target"], options["features"]
    table = read_numeric(ENERGY_FILE, ncols=10, sep=r"\s+")
    y_col, other = (8, 9) if target == "heating" else (9, 8)
    columns = list(range(8)) + ([other] if features == 9 else [])
    meta = {"title": "Energy", "recipe": "R", "file": ENERGY_FILE, "target": target, "features": features}
    return split_r("energy", table[:, columns], table[:, y_col], rng, standardize=False, meta=meta)


# --------------------------------------------------------------------------------------------------
# Breast cancer (special R)
# --------------------------------------------------------------------------------------------------

BREASTCANCER_FILE = "raw/breastcancer.txt"


@register_dataset(
    "breastcancer",
    summary="Breast cancer (wpbc): X = cols 0,1,3..33, y = col 2 (time), R recipe",
    spec=SPEC,
    options=NO_OPTIONS,
)
def load_breastcancer(rng: np.random.Generator) -> Dataset:
    """wpbc minus '?' rows: X = cols [0, 1] + [3..33] (ID, outcome kept; last col dropped), y = time."""
    table = read_numeric(BREASTCANCER_FILE, ncols=35)
    columns = [0, 1, *range(3, 34)]
    meta = {"title": "Breast cancer", "recipe": "special", "file": BREASTCANCER_FILE}
    return split_r("breastcancer", table[:, columns], table[:, 2], rng, standardize=False, meta=meta)


# --------------------------------------------------------------------------------------------------
# Wine (special R): drop duplicate rows
# --------------------------------------------------------------------------------------------------

WINE_FILE = "raw/winequality-red.csv"


@functools.lru_cache(maxsize=4)
def _wine_table(key: tuple[str, int, int]) -> np.ndarray:
    path = key[0]
    frame = _read_frame(path, sep=",", header=0)
    _check_columns(frame, path, 12)
    if frame.columns[-1] != "quality":
        raise ValueError(f"{path}: last column should be 'quality', found {frame.columns[-1]!r}")
    return frozen(_as_float(frame.drop_duplicates(), path))


@register_dataset(
    "wine",
    summary="Wine quality (red): drop duplicate rows (1359 left), y = quality, R recipe",
    spec=SPEC,
    options=STANDARDIZE,
)
def load_wine(rng: np.random.Generator, **options: Any) -> Dataset:
    """winequality-red.csv (comma, header) → drop exact duplicate rows → X = 11 columns, y = quality (z-scored
    features with ``standardize``, as :func:`load_r_dataset`)."""
    standardize = options["standardize"]
    table = _wine_table(file_key(WINE_FILE))
    meta = {"title": "Wine", "recipe": "special", "file": WINE_FILE, **({"standardize": True} if standardize else {})}
    return split_r("wine", table[:, :-1], table[:, -1], rng, standardize=standardize, meta=meta)


# --------------------------------------------------------------------------------------------------
# Gas and Tamielectric: headerless files read the way the reference code does
# --------------------------------------------------------------------------------------------------

GAS_FILE = "raw/GasDataset.csv"
TAMIELECTRIC_FILE = "raw/tamielectric.csv"


@functools.lru_cache(maxsize=4)
def _headerless_as_pandas_default(key: tuple[str, int, int], ncols: int, dedup: bool) -> np.ndarray:
    """The reference ``pd.read_csv(path)`` on a headerless file: the first data row becomes the header."""
    table = read_numeric_cached(key, ",", None, ncols)[1:]
    if dedup:
        table = pd.DataFrame(table).drop_duplicates().dropna().to_numpy()
    return frozen(np.array(table, dtype=float))


def _headerless(
    name: str, title: str, file: str, ncols: int, rng: np.random.Generator, *, dedup: bool, standardize: bool, note: str
) -> Dataset:
    """A headerless file read as the reference ``pd.read_csv`` does (its first data row lost as the header)."""
    table = _headerless_as_pandas_default(file_key(file), ncols, dedup)
    meta = {
        "title": title,
        "recipe": "special",
        "file": file,
        "note": "first data row dropped (pandas header quirk of the reference code)" + note,
    }
    return split_r(name, table[:, :-1], table[:, -1], rng, standardize=standardize, meta=meta)


@register_dataset(
    "gas",
    summary="Gas sensor (GasDataset.csv): first row lost as header, drop_duplicates, R recipe",
    spec=SPEC,
    options=NO_OPTIONS,
)
def load_gas(rng: np.random.Generator) -> Dataset:
    """GasDataset.csv has no header; like the reference ``pd.read_csv`` we lose row 1 (→ 2,564 rows)."""
    return _headerless("gas", "Gas", GAS_FILE, 129, rng, dedup=True, standardize=False, note="")


@register_dataset(
    "tamielectric",
    summary="Tamielectric: first row lost as header, random 80/20 split, z-scored features",
    spec=SPEC,
    options=NO_OPTIONS,
)
def load_tamielectric(rng: np.random.Generator) -> Dataset:
    """tamielectric.csv has no header; first row dropped (reference quirk) → 45,780 rows; z-scored (train)."""
    return _headerless(
        "tamielectric",
        "Tamielectric",
        TAMIELECTRIC_FILE,
        4,
        rng,
        dedup=False,
        standardize=True,
        note="; z-scored, train stats",
    )


# --------------------------------------------------------------------------------------------------
# Bike sharing (Kaggle train.csv, special R)
# --------------------------------------------------------------------------------------------------

BIKE_FILE = "raw/bike_train.csv"
BIKE_COLUMNS = (
    "datetime", "season", "holiday", "workingday", "weather", "temp", "atemp", "humidity", "windspeed",
    "casual", "registered", "count",
)  # fmt: skip


@functools.lru_cache(maxsize=4)
def _bike_table(key: tuple[str, int, int]) -> tuple[np.ndarray, np.ndarray]:
    path = key[0]
    frame = _read_frame(path, sep=",", header=0)
    if tuple(frame.columns) != BIKE_COLUMNS:
        raise ValueError(f"{path}: expected columns {list(BIKE_COLUMNS)}, found {list(frame.columns)}")
    try:
        stamp = pd.to_datetime(frame["datetime"], format="%Y-%m-%d %H:%M:%S")
    except (ValueError, TypeError) as err:
        raise ValueError(f"{path}: unparsable datetime ({err})") from err
    numeric = _as_float(frame.drop(columns=["datetime"]), path)
    col = {name: numeric[:, i] for i, name in enumerate(BIKE_COLUMNS[1:])}
    for name, levels in (("season", 4), ("weather", 4)):
        if not np.isin(col[name], np.arange(1, levels + 1)).all():
            raise ValueError(f"{path}: column {name!r} has values outside 1..{levels}")
    year = stamp.dt.year.to_numpy()
    if not np.isin(year, (2011, 2012)).all():
        raise ValueError(f"{path}: datetime years outside 2011-2012")
    features = [col[name] for name in ("holiday", "workingday", "temp", "atemp", "humidity", "windspeed")]
    features += [(col["season"] == level).astype(float) for level in range(1, 5)]
    features += [(col["weather"] == level).astype(float) for level in range(1, 5)]
    features += [
        stamp.dt.hour.to_numpy(dtype=float),
        stamp.dt.day_of_week.to_numpy(dtype=float),
        stamp.dt.month.to_numpy(dtype=float),
        (year - 2011).astype(float),
    ]
    return frozen(np.column_stack(features)), frozen(col["count"].copy())


@register_dataset(
    "bike",
    summary="Bike sharing (Kaggle train.csv): 18 engineered features, y = count, R recipe",
    spec=SPEC,
    options=NO_OPTIONS,
)
def load_bike(rng: np.random.Generator) -> Dataset:
    """Kaggle bike-sharing-demand train.csv → [holiday, workingday, temp, atemp, humidity, windspeed,
    season_1..4, weather_1..4, hour, day-of-week, month, year − 2011]; y = count (casual, registered
    dropped)."""
    X, y = _bike_table(file_key(BIKE_FILE))
    meta = {"title": "Bike sharing", "recipe": "special", "file": BIKE_FILE}
    return split_r("bike", X, y, rng, standardize=False, meta=meta)


# --------------------------------------------------------------------------------------------------
# Communities & Crime (special)
# --------------------------------------------------------------------------------------------------

CRIME_DATA = "raw/communities.data"
CRIME_NAMES = "raw/communities.names"
CRIME_DROP = ("state", "county", "community", "fold", "communityname")
CRIME_LABEL = "ViolentCrimesPerPop"
CRIME_SENSITIVE = "racepctblack"


def _crime_attributes(path: str) -> list[str]:
    names = []
    with open(path, encoding="latin-1") as handle:
        for line in handle:
            parts = line.split()
            if len(parts) >= 2 and parts[0].lower() == "@attribute":
                names.append(parts[1])
    if len(names) != 128:
        raise ValueError(f"{path}: expected 128 @attribute lines, found {len(names)}")
    return names


@functools.lru_cache(maxsize=4)
def _crime_table(
    data_key: tuple[str, int, int], names_key: tuple[str, int, int], threshold: float
) -> tuple[np.ndarray, np.ndarray]:
    names = _crime_attributes(names_key[0])
    path = data_key[0]
    frame = _read_frame(path, sep=",", header=None, na_values="?")
    _check_columns(frame, path, len(names))
    frame.columns = names
    frame = frame.drop(columns=list(CRIME_DROP))
    try:
        frame = frame.astype(float)
    except (ValueError, TypeError) as err:
        raise ValueError(f"{path}: non-numeric value ({err})") from err
    frame["OtherPerCap"] = frame["OtherPerCap"].fillna(frame["OtherPerCap"].mean())
    frame = frame.dropna(axis=1)
    for needed in (CRIME_LABEL, CRIME_SENSITIVE):
        if needed not in frame.columns:
            raise ValueError(f"{path}: column {needed!r} missing or has missing values")
    y = frame[CRIME_LABEL].to_numpy(dtype=float)
    z = frame[CRIME_SENSITIVE].to_numpy(dtype=float)
    X = frame.drop(columns=[CRIME_LABEL, CRIME_SENSITIVE]).to_numpy(dtype=float)
    std = X.std(axis=0, ddof=1)
    std[std == 0] = 1.0
    X = (X - X.mean(axis=0)) / std  # z-score over ALL rows, before the filter and the split (reference code)
    keep = z >= threshold  # the RAW racepctblack (004 §5.3)
    return frozen(X[keep]), frozen(y[keep])


@register_dataset(
    "crime",
    summary="Communities & Crime: rows with raw racepctblack ≥ 0.1, z-scored over all rows, 80/20 split",
    spec=SPEC,
    options={
        "min_racepctblack": Hyper(float, default=0.1, ge=0, le=1, doc="rows kept: raw racepctblack ≥ this (004 §5.3)")
    },
)
def load_crime(rng: np.random.Generator, **options: Any) -> Dataset:
    """UCI Communities and Crime as the reference code's ``read_crimes(label='ViolentCrimesPerPop',
    sensitive_attribute='racepctblack', env_partition=0.1)``: d = 99, 822 rows, n_train = 657.

    The reference shuffles before filtering and permutes again before splitting; a single permutation of the
    filtered rows has the same distribution.
    """
    min_racepctblack = options["min_racepctblack"]
    X, y = _crime_table(file_key(CRIME_DATA), file_key(CRIME_NAMES), float(min_racepctblack))
    meta = {
        "title": "Communities & Crime",
        "recipe": "special",
        "files": [CRIME_DATA, CRIME_NAMES],
        "file": CRIME_DATA,
        "min_racepctblack": float(min_racepctblack),
    }
    return split_r("crime", X, y, rng, standardize=False, meta=meta)
