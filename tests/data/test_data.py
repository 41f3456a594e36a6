"""Real-data loaders of spec 004 §5.2/§5.3: sizes, bounds, determinism, failures, Table 2 statistics."""

from __future__ import annotations

import gzip
import inspect
import sys
import types

import numpy as np
import pytest

import dpbench.data.openml_loader  # noqa: F401  (registers the loader)
import dpbench.data.recipes as recipes
import dpbench.data.uci_masks as uci_masks
from dpbench.data._base import DataUnavailableError
from dpbench.papers.ihm.paper_table2 import TABLE2, TABLE2_SPLITS, is_upper_bound, matches
from dpbench.registry import DATASETS

MISSING = ("3droad", "buzz", "slice")
AVAILABLE = sorted(set(TABLE2) - set(MISSING))
MASK_KEYS = sorted(uci_masks.MASK_DATASETS)
R_KEYS = sorted(set(TABLE2) - set(MASK_KEYS))

#: split index of the paper's Table 2 row, identified by λ^X_min and λ^{XY}_min agreeing to ≥ 5 digits
PAPER_SPLIT = {
    "concreteslump": 3,
    "fertility": 9,
    "forest": 8,
    "kin40k": 8,
    "machine": 4,
    "pendulum": 3,
    "pumadyn32nm": 1,
    "servo": 2,
    "yacht": 8,
}


def load(key: str, seed: int = 0, **options):
    return DATASETS[key].load(np.random.default_rng(seed), **options)


def table_options(key: str) -> dict:
    """Options giving Table 2's n: an explicit split for mask datasets, none for R/special datasets."""
    return {"split": TABLE2_SPLITS[key][0]} if key in TABLE2_SPLITS else {}


def stats(ds) -> dict[str, float]:
    X, y = ds.X_train, ds.y_train
    n = len(y)
    theta = np.linalg.lstsq(X, y, rcond=None)[0]
    Z = np.column_stack([X, y])
    return {
        "ols_mse": float(np.sum((y - X @ theta) ** 2) / n),
        "zero_mse": float(y @ y / n),
        "lam_min_x": float(max(np.linalg.eigvalsh(X.T @ X)[0], 0.0)),
        "lam_min_xy": float(max(np.linalg.eigvalsh(Z.T @ Z)[0], 0.0)),
    }


# ---------------------------------------------------------------------------------------------------------
# registry
# ---------------------------------------------------------------------------------------------------------


def test_every_paper_dataset_is_registered_with_options():
    assert len(TABLE2) == 33
    for key in TABLE2:
        assert key in DATASETS, key
        info = DATASETS[key]
        assert info.kind == "real" and info.spec == "004 §5.3"
        first = next(iter(inspect.signature(info.load).parameters))
        assert first == "rng"
    for key in MASK_KEYS:
        assert DATASETS[key].options() == {"split": None}
    assert DATASETS["energy"].options() == {"target": "heating", "features": 8}
    assert DATASETS["crime"].options() == {"min_racepctblack": 0.1}
    assert DATASETS["openml"].options()["allow_download"] is False
    assert len({DATASETS[key].load for key in MASK_KEYS}) == len(MASK_KEYS)  # one function per key
    for key in ("crime", "pol", "concreteslump", "solar"):  # configs/ihm_vs_adassp.yaml
        assert key in DATASETS


def test_table2_encoding():
    assert TABLE2["crime"]["n"] == 657 and TABLE2["crime"]["d"] == 99
    assert is_upper_bound("tecator", "ols_mse") and TABLE2["tecator"]["ols_mse"] == 1e-3
    assert not is_upper_bound("concrete", "lam_min_x") and TABLE2["concrete"]["lam_min_x"] == 0.00497
    assert matches("tecator", "ols_mse", 1e-5) and not matches("tecator", "ols_mse", 0.01)
    assert matches("pol", "ols_mse", 0.19) and not matches("pol", "ols_mse", 0.3)
    assert set(TABLE2_SPLITS) == set(MASK_KEYS)


# ---------------------------------------------------------------------------------------------------------
# shapes, bounds, meta
# ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", AVAILABLE)
def test_sizes_bounds_and_meta(key):
    ds = load(key, **table_options(key))
    row = TABLE2[key]
    assert (ds.n, ds.d) == (row["n"], row["d"])
    assert ds.name == key
    for array in (ds.X_train, ds.y_train, ds.X_test, ds.y_test):
        assert np.isfinite(array).all()
    assert np.linalg.norm(ds.X_train, axis=1).max() <= 1 + 1e-9
    assert np.abs(ds.y_train).max() <= 1 + 1e-12
    assert np.isclose(np.linalg.norm(ds.X_train, axis=1).max(), 1.0)
    assert np.isclose(np.abs(ds.y_train).max(), 1.0)
    assert ds.X_test.shape[1] == ds.d and len(ds.X_test) == len(ds.y_test) > 0
    meta = ds.meta
    assert meta["title"] and meta["recipe"] in ("M", "R", "special") and meta["file"]
    assert (meta["n"], meta["d"]) == (ds.n, ds.d)
    if key in MASK_KEYS:
        assert meta["recipe"] == "M" and meta["split"] == TABLE2_SPLITS[key][0]
        assert ds.n + len(ds.y_test) == meta["n_total"]
    else:
        assert meta["split"] == "perm" and ds.n == (4 * meta["n_total"]) // 5


def test_titles():
    assert load("crime").meta["title"] == "Communities & Crime"
    assert load("concreteslump").meta["title"] == "Concrete Slump"
    assert load("housing").meta["title"] == "Boston housing"
    assert load("keggdirected", split=1).meta["title"] == "Kegg (Directed)"


@pytest.mark.parametrize("key", [k for k in MASK_KEYS if k not in MISSING])
def test_mask_split_is_drawn_from_rng(key):
    for seed in (0, 1, 2):
        ds = load(key, seed)
        expected = int(np.random.default_rng(seed).integers(10))
        assert ds.meta["split"] == expected
        assert abs(ds.n - TABLE2[key]["n"]) <= 1


def test_mask_split_validation():
    with pytest.raises(ValueError, match="split"):
        load("yacht", split=10)
    with pytest.raises(ValueError, match="split"):
        load("yacht", split=-1)


def test_special_row_counts():
    assert load("crime").meta["n_total"] == 822
    assert load("wine").meta["n_total"] == 1359
    assert load("gas").meta["n_total"] == 2564
    assert load("tamielectric").meta["n_total"] == 45780
    assert load("bike").meta["n_total"] == 10886
    assert load("tecator").meta["n_total"] == 240


def test_energy_variants():
    heating = load("energy")
    assert heating.d == 8 and heating.meta["target"] == "heating"
    code = load("energy", target="cooling", features=9)
    assert code.d == 9 and code.n == 614
    assert not np.allclose(heating.y_train, code.y_train)
    with pytest.raises(ValueError):
        load("energy", target="both")
    with pytest.raises(ValueError):
        load("energy", features=10)


def test_bike_features():
    ds = load("bike")
    X, _ = recipes._bike_table(recipes.file_key(recipes.BIKE_FILE))
    assert X.shape == (10886, 18)
    assert np.array_equal(X[:, 6:10].sum(axis=1), np.ones(10886))  # season one-hot
    assert np.array_equal(X[:, 10:14].sum(axis=1), np.ones(10886))  # weather one-hot
    assert set(np.unique(X[:, 17])) == {0.0, 1.0}  # year 2011 → 0, 2012 → 1
    assert X[:, 14].max() == 23 and X[:, 15].max() == 6 and X[:, 16].max() == 12
    assert ds.d == 18


def test_tamielectric_is_standardized_before_row_scaling():
    ds = load("tamielectric")
    scaled = ds.X_train * ds.meta["x_scale"]  # undo the row scaling: z-scored train features
    assert np.allclose(scaled.mean(axis=0), 0, atol=1e-10)
    assert np.allclose(scaled.std(axis=0), 1, atol=1e-10)


# ---------------------------------------------------------------------------------------------------------
# determinism and caching
# ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["housing", "crime", "wine", "solar", "pol"])
def test_deterministic_in_seed(key):
    a, b, c = load(key, 3), load(key, 3), load(key, 4)
    assert np.array_equal(a.X_train, b.X_train) and np.array_equal(a.y_train, b.y_train)
    assert np.array_equal(a.X_test, b.X_test) and a.meta == b.meta
    if key in MASK_KEYS:
        assert c.meta["split"] == int(np.random.default_rng(4).integers(10))
    else:
        assert not np.array_equal(a.y_train, c.y_train)


def test_cache_returns_read_only_shared_arrays_and_writable_datasets():
    first = recipes.read_numeric("raw/housing.txt", ncols=14, sep=r"\s+")
    second = recipes.read_numeric("raw/housing.txt", ncols=14, sep=r"\s+")
    assert first is second and not first.flags.writeable
    ds = load("housing")
    ds.X_train[0, 0] = 0.0  # a loader's output is its own copy
    assert np.array_equal(recipes.read_numeric("raw/housing.txt", ncols=14, sep=r"\s+"), first)


# ---------------------------------------------------------------------------------------------------------
# failure modes
# ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", MISSING)
def test_missing_datasets_name_their_file(key):
    with pytest.raises(DataUnavailableError, match=f"uci/{key}/data.csv.gz"):
        load(key)


def _write_gz(path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt") as handle:
        handle.write(text)


def test_wrong_column_count_names_the_file(tmp_path, monkeypatch):
    monkeypatch.setenv("DPBENCH_DATA_DIR", str(tmp_path))
    _write_gz(tmp_path / "uci/yacht/data.csv.gz", "1,2,3\n4,5,6\n")
    _write_gz(tmp_path / "uci/yacht/test_mask.csv.gz", "1,0,0,0,0,0,0,0,0,0\n0,1,0,0,0,0,0,0,0,0\n")
    with pytest.raises(ValueError, match=r"uci/yacht/data\.csv\.gz.*expected 7 columns"):
        load("yacht", split=1)


def test_unparsable_value_names_the_file(tmp_path, monkeypatch):
    monkeypatch.setenv("DPBENCH_DATA_DIR", str(tmp_path))
    (tmp_path / "raw").mkdir()
    row = " ".join(["1.0"] * 14)
    (tmp_path / "raw/housing.txt").write_text(f"{row}\n{row.replace('1.0', 'abc', 1)}\n{row}\n")
    with pytest.raises(ValueError, match=r"raw/housing\.txt"):
        load("housing")


def test_missing_value_names_the_file(tmp_path, monkeypatch):
    monkeypatch.setenv("DPBENCH_DATA_DIR", str(tmp_path))
    (tmp_path / "raw").mkdir()
    (tmp_path / "raw/breastcancer.txt").write_text(",".join(["1"] * 35) + "\n" + ",".join(["1"] * 34) + ",\n")
    with pytest.raises(ValueError, match=r"raw/breastcancer\.txt"):
        load("breastcancer")


def test_bad_mask_names_the_file(tmp_path, monkeypatch):
    monkeypatch.setenv("DPBENCH_DATA_DIR", str(tmp_path))
    rows = "\n".join(",".join(str(v) for v in range(7)) for _ in range(3))
    _write_gz(tmp_path / "uci/yacht/data.csv.gz", rows + "\n")
    _write_gz(tmp_path / "uci/yacht/test_mask.csv.gz", "\n".join(["1,1,0,0,0,0,0,0,0,0"] * 3) + "\n")
    with pytest.raises(ValueError, match=r"uci/yacht/test_mask\.csv\.gz"):
        load("yacht", split=0)


def test_missing_file_in_data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("DPBENCH_DATA_DIR", str(tmp_path))
    with pytest.raises(DataUnavailableError, match=r"raw/communities\.data"):
        load("crime")


# ---------------------------------------------------------------------------------------------------------
# openml loader (no network: a missing package or an empty cache is DataUnavailableError)
# ---------------------------------------------------------------------------------------------------------


def test_openml_without_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "openml", None)  # makes `import openml` fail
    with pytest.raises(DataUnavailableError, match="openml"):
        load("openml")


def _fake_openml(root_holder: dict, frame_X, frame_y):
    config = types.SimpleNamespace()
    config.set_root_cache_directory = lambda path: root_holder.__setitem__("root", path)
    config.get_cache_directory = lambda: root_holder["root"] + "/org/openml/www"

    class FakeDataset:
        name = "fake"
        default_target_attribute = "t"

        def get_data(self, target):
            assert target == "t"
            return frame_X, frame_y, None, ["a", "b"]

    def get_dataset(data_id, **kwargs):
        root_holder["calls"] = root_holder.get("calls", 0) + 1
        return FakeDataset()

    return types.SimpleNamespace(config=config, datasets=types.SimpleNamespace(get_dataset=get_dataset))


def test_openml_reads_only_the_cache(tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(50, 2)), rng.normal(size=50)
    holder: dict = {}
    monkeypatch.setitem(sys.modules, "openml", _fake_openml(holder, X, y))
    with pytest.raises(DataUnavailableError, match="not in the local cache"):
        load("openml", cache_dir=str(tmp_path))
    assert holder.get("calls", 0) == 0  # never asked openml for data
    cached = tmp_path / "org/openml/www/datasets/505"
    cached.mkdir(parents=True)
    (cached / "description.xml").write_text("<x/>")
    (cached / "dataset.arff").write_text("")
    ds = load("openml", cache_dir=str(tmp_path))
    assert (ds.n, ds.d) == (40, 2) and ds.meta["data_id"] == 505 and ds.meta["target"] == "t"
    assert np.linalg.norm(ds.X_train, axis=1).max() <= 1 + 1e-9


# ---------------------------------------------------------------------------------------------------------
# statistics against spec 004 §5.3 / Table 2
# ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("key,split", sorted(PAPER_SPLIT.items()))
def test_eigenvalues_match_table2_at_the_paper_split(key, split):
    """The M recipe reproduces Table 2's λ^X_min and λ^{XY}_min to the printed digits at one split."""
    s = stats(load(key, split=split))
    assert s["lam_min_x"] == pytest.approx(TABLE2[key]["lam_min_x"], rel=2e-3)
    assert s["lam_min_xy"] == pytest.approx(TABLE2[key]["lam_min_xy"], rel=0.03)


# (key, options, L/n, ‖Y‖²/n, relative tolerance): spec 004 §5.3's verified values at seed 0
SPEC_VALUES = [
    ("concreteslump", {"split": 3}, 0.002, 0.153, 0.1),
    ("housing", {}, 0.0104, 0.241, 0.05),
    ("airfoil", {}, 0.047, 0.785, 0.03),
    ("parkinsons", {}, 0.0036, 0.106, 0.05),
    ("energy", {}, 0.0047, 0.323, 0.05),
    ("crime", {}, 0.041, 0.22, 0.06),
]


@pytest.mark.parametrize("key,options,ols,zero,rtol", SPEC_VALUES)
def test_spec_verified_statistics(key, options, ols, zero, rtol):
    s = stats(load(key, 0, **options))
    assert s["ols_mse"] == pytest.approx(ols, rel=rtol)
    assert s["zero_mse"] == pytest.approx(zero, rel=rtol)


def test_concreteslump_split3_lambda():
    s = stats(load("concreteslump", split=3))
    assert s["lam_min_x"] == pytest.approx(0.672, abs=5e-4)
    assert s["lam_min_xy"] == pytest.approx(0.0095, abs=5e-4)


#: datasets whose Table 2 L/n is not reproduced by an exact least-squares fit (see datasets/README.md)
OLS_KNOWN_OFF = {"breastcancer"}


@pytest.mark.parametrize("key", AVAILABLE)
def test_table2_statistics(key):
    """L/n and ‖Y‖²/n within split-to-split variation of Table 2 (one split, seed 0)."""
    s = stats(load(key, 0, **table_options(key)))
    assert matches(key, "zero_mse", s["zero_mse"], rtol=0.25)
    if key not in OLS_KNOWN_OFF:
        assert matches(key, "ols_mse", s["ols_mse"], rtol=0.35, atol=5e-4)
    for field in ("lam_min_x", "lam_min_xy"):
        if is_upper_bound(key, field):
            assert s[field] < 1e-3


def test_breastcancer_ols_gap_is_numerical():
    """Table 2's breastcancer L/n (0.046) exceeds the exact least-squares residual (≈ 0.037); a
    pseudo-inverse of the ill-conditioned Gram matrix (drops singular values < 1e-15·max) gives ≈ 0.05."""
    values = []
    for seed in range(10):
        ds = load("breastcancer", seed)
        X, y = ds.X_train, ds.y_train
        exact = np.linalg.lstsq(X, y, rcond=None)[0]
        gram = np.linalg.pinv(X.T @ X) @ (X.T @ y)
        values.append((np.mean((y - X @ exact) ** 2), np.mean((y - X @ gram) ** 2)))
    exact_mse, gram_mse = np.mean(values, axis=0)
    assert exact_mse < 0.042 < gram_mse
