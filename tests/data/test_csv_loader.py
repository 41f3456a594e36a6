"""``loader: csv``: declared vs benchmark bounds, split rules, and one named error per kind of bad file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from dpbench import registry
from dpbench.config import load_config
from dpbench.data.csv_loader import NOT_PRIVATE
from dpbench.engine import run

registry.discover()
LOAD = registry.DATASETS["csv"].load
DECLARED = {"bounds": "declared", "x_bound": 10.0, "y_bound": 50.0}
SPLIT0 = {"split_seed": 0}  # the split of the houses fixture that trains on its outlier (row 0)


def write(tmp_path, text, name="data.csv"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.fixture
def houses(tmp_path):
    rng = np.random.default_rng(0)
    n = 200
    frame = pd.DataFrame({"area": rng.uniform(0, 6, n), "rooms": rng.integers(1, 5, n).astype(float)})
    frame["price"] = 3 * frame["area"] + 2 * frame["rooms"] + rng.standard_normal(n)
    frame.loc[0, "area"] = 100.0  # an outlier the declared bound clips
    path = tmp_path / "houses.csv"
    frame.to_csv(path, index=False)
    return str(path), frame


def test_declared_bounds_clip_and_rescale_by_the_stated_constants(houses):
    path, frame = houses
    data = LOAD(np.random.default_rng(1), path=path, target="price", **DECLARED)
    assert (data.n, data.d, len(data.y_test)) == (160, 2, 40)
    assert np.linalg.norm(data.X_train, axis=1).max() <= 1 + 1e-12 and np.abs(data.y_train).max() <= 1
    assert data.meta["bounds"] == "declared" and "private" in data.meta["preprocessing"]
    raw = frame[["area", "rooms"]].to_numpy()
    norms = np.linalg.norm(raw, axis=1)
    expected_clipped = int((norms > 10).sum())
    assert data.meta["rows_clipped_x"] <= expected_clipped and expected_clipped >= 1
    # unclipped training rows are the raw rows divided by the declared bound, nothing data-dependent
    rows = {tuple(np.round(r, 9)) for r in raw[norms <= 10] / 10.0}
    assert all(tuple(np.round(r, 9)) in rows for r in data.X_train if np.linalg.norm(r) < 1 - 1e-9)


def test_per_column_ranges_map_to_the_unit_ball(houses):
    path, _ = houses
    data = LOAD(
        np.random.default_rng(1),
        path=path,
        target="price",
        bounds="declared",
        feature_ranges={"area": [0, 6], "rooms": [1, 4]},
        target_range=[-5, 40],
    )
    assert np.linalg.norm(data.X_train, axis=1).max() <= 1 + 1e-12
    assert np.abs(data.y_train).max() <= 1


def test_benchmark_bounds_are_labelled_not_private(houses):
    path, _ = houses
    data = LOAD(np.random.default_rng(1), path=path, target="price", bounds="benchmark")
    assert data.meta["preprocessing"] == NOT_PRIVATE
    assert np.linalg.norm(data.X_train, axis=1).max() == pytest.approx(1.0)  # normalised by the data's max
    assert np.abs(data.y_train).max() == pytest.approx(1.0)


def test_split_seed_and_split_column(houses, tmp_path):
    path, frame = houses
    a = LOAD(np.random.default_rng(1), path=path, target="price", split_seed=7, **DECLARED)
    b = LOAD(np.random.default_rng(2), path=path, target="price", split_seed=7, **DECLARED)
    np.testing.assert_array_equal(a.X_train, b.X_train)  # the seed, not the run's rng, fixes the split
    frame["part"] = ["test" if i % 4 == 0 else "train" for i in range(len(frame))]
    split_path = tmp_path / "split.csv"
    frame.to_csv(split_path, index=False)
    c = LOAD(np.random.default_rng(1), path=str(split_path), target="price", split_column="part", **DECLARED)
    assert (c.n, len(c.y_test), c.d) == (150, 50, 2)  # the split column is not a feature


def test_features_delimiter_and_no_header(tmp_path):
    path = write(tmp_path, "1;2;9;3\n2;1;9;5\n3;0;9;6\n4;1;9;9\n5;2;9;11\n6;1;9;12\n")
    data = LOAD(
        np.random.default_rng(0),
        path=path,
        delimiter=";",
        header=False,
        target=3,
        features=["0", "1"],
        test_fraction=0.0,
        **DECLARED,
    )
    assert (data.n, data.d) == (6, 2)


@pytest.mark.parametrize(
    "text, options, match",
    [
        ("a,b,y\n1,2,3\n4,,6\n7,8,9\n1,1,1\n", {}, r"missing value at row 2 \(line 3\), column 'b'.*missing: drop"),
        ("a,b,y\n1,2,3\n4,x,6\n7,8,9\n1,1,1\n", {}, r"column 'b' is not numeric: 'x' at row 2 \(line 3\)"),
        ("a,b,y\n1,2,3\n4,5,3\n7,8,3\n1,1,3\n", {"test_fraction": 0.0}, r"target column 'y' is constant"),
        ("a,b,c,y\n1,2,3,4\n4,5,6,7\n", {"test_fraction": 0.0}, r"2 training rows for 3 feature columns"),
        ("a,b,y\n1,2,3\n", {"target": "price"}, r"target column 'price' not found; columns: a, b, y"),
        ("a,b,y\n1,2,3\n", {"features": ["a", "zz"]}, r"feature column 'zz' not found"),
        ("", {}, r"the file is empty"),
        ("a,b,y\n1,2,3\n2,2,1\n3,1,2\n4,2,1\n", {"split_column": "b"}, r"split column 'b' must hold 'train' or 'test'"),
        # issue 39 item 9: a duplicate column name (pandas would rename it a.1), a file of another separator
        ("a,b,a,y\n1,2,3,4\n", {}, r"duplicate column name 'a' \(columns 1 and 3 of the header\); rename one"),
        ("a;b;y\n1;2;3\n2;2;1\n", {}, r"the header has no ',' but 2 ';': set the loader option delimiter: \";\""),
    ],
)
def test_bad_files_name_file_row_and_column(tmp_path, text, options, match):
    path = write(tmp_path, text)
    with pytest.raises(ValueError, match=match) as err:
        LOAD(np.random.default_rng(0), path=path, **{**DECLARED, **options})
    assert path in str(err.value)  # every message names the file


@pytest.mark.parametrize(
    "options, match",
    [
        ({"missing": "ignore"}, r"^missing: must be one of 'error', 'drop', got 'ignore' \(dataset 'csv'\)"),
        ({"test_fraction": 1.5}, r"^test_fraction: must be a number ≥ 0 and < 1, got 1.5"),
        ({"clip": "no"}, r"^clip: must be one of 'clip', 'error'"),
        ({"x_bound": -1.0}, r"^x_bound: must be a number > 0"),
        ({"split_seed": -2}, r"^split_seed: must be an integer ≥ 0"),
        ({"dlimiter": ";"}, r"^dlimiter: .*delimiter"),
    ],
)
def test_a_refused_option_value_names_the_option_before_the_file_is_read(tmp_path, options, match):
    """The loader's options are declared once (CSV_OPTIONS): a value outside its declaration is refused by the
    table, naming the option, for library callers and (as datasets[i].options.<name>) for configs."""
    with pytest.raises(ValueError, match=match):
        LOAD(np.random.default_rng(0), path=str(tmp_path / "not_read.csv"), **{**DECLARED, **options})
    raw = {"name": "own", "trials": 1, "epsilons": [1.0], "mechanisms": ["adassp"],
           "datasets": [{"loader": "csv", "options": {"path": "x.csv", **DECLARED, **options}}]}  # fmt: skip
    (tmp_path / "own.yaml").write_text(yaml.safe_dump(raw))
    with pytest.raises(ValueError, match=rf"datasets\[0\]\.options\.{next(iter(options))}"):
        load_config(tmp_path / "own.yaml")


@pytest.mark.parametrize(
    "options, match",
    [
        ({}, r"option bounds must be 'declared'.*or 'benchmark'"),
        ({"bounds": "declared", "y_bound": 1.0}, r"exactly one of x_bound .* or feature_ranges"),
        ({"bounds": "declared", "x_bound": 1.0}, r"exactly one of y_bound or target_range"),
        ({"bounds": "benchmark", "x_bound": 1.0}, r"bounds: benchmark normalises by the data"),
        ({"bounds": "declared", "x_bound": 1.0, "y_bound": 1.0, "standardize": True}, r"standardize reads the data"),
        ({"bounds": "declared", "feature_ranges": {"a": [0, 1]}, "y_bound": 1.0}, r"missing \['b'\]"),
        ({"bounds": "declared", "feature_ranges": {"a": [1, 0], "b": [0, 1]}, "y_bound": 1.0}, r"low < high"),
    ],
)
def test_bad_bounds_options_are_named(tmp_path, options, match):
    path = write(tmp_path, "a,b,y\n1,2,3\n2,2,1\n3,1,2\n4,2,1\n5,5,5\n")
    with pytest.raises(ValueError, match=match):
        LOAD(np.random.default_rng(0), path=path, test_fraction=0.0, **options)


def test_missing_drop_counts_rows_and_a_missing_file_is_an_error(tmp_path):
    path = write(tmp_path, "a,b,y\n1,2,3\n4,,6\n7,8,9\n1,1,1\n2,3,4\n5,1,0\n")
    data = LOAD(np.random.default_rng(0), path=path, missing="drop", test_fraction=0.0, **DECLARED)
    assert data.meta["rows_dropped_missing"] == 1 and data.n == 5
    with pytest.raises(FileNotFoundError, match="nope.csv: CSV file not found"):
        LOAD(np.random.default_rng(0), path=str(tmp_path / "nope.csv"), **DECLARED)


def test_config_path_is_relative_to_the_config_and_bounds_are_a_column(houses, tmp_path):
    path, _ = houses
    config_dir = tmp_path / "cfg"
    config_dir.mkdir()
    raw = {
        "name": "own",
        "output_dir": str(tmp_path / "results"),
        "trials": 2,
        "epsilons": [1.0],
        "datasets": [
            {"loader": "csv", "label": "houses", "options": {"path": "../houses.csv", "target": "price", **DECLARED}}
        ],
        "mechanisms": ["adassp"],
    }
    (config_dir / "own.yaml").write_text(yaml.safe_dump(raw))
    config = load_config(config_dir / "own.yaml")
    resolved = Path(dict(config.datasets[0].options)["path"])
    assert resolved.is_absolute() and resolved.resolve() == Path(path).resolve()
    trials = pd.read_csv(run(config, n_jobs=1, progress=False, log=lambda m: None) / "trials.csv")
    assert set(trials["data.bounds"]) == {"declared"} and len(trials) == 2


def test_benchmark_preprocessing_is_named_in_the_figure_notes(houses, tmp_path):
    from dpbench.analysis.figures.curves import preprocessing_notes
    from dpbench.analysis.figures.presets import plot_run
    from dpbench.analysis.runs import load_run
    from dpbench.config import parse_config

    path, _ = houses
    raw = {
        "name": "mixed",
        "output_dir": str(tmp_path / "results"),
        "trials": 2,
        "epsilons": [1.0],
        "datasets": [
            {"loader": "csv", "label": "declared", "options": {"path": path, "target": "price", **SPLIT0, **DECLARED}},
            {
                "loader": "csv",
                "label": "benchmark",
                "options": {"path": path, "target": "price", **SPLIT0, "bounds": "benchmark"},
            },
        ],
        "mechanisms": ["adassp"],
    }
    run_dir = run(parse_config(raw), n_jobs=1, progress=False, log=lambda m: None)
    notes = preprocessing_notes(load_run(run_dir))
    assert notes[0] == "Benchmark bounds (data-dependent normalisation, NOT private): benchmark."
    # the outlier (area = 100 against ≤ 6; a training row under split_seed 0) set the benchmark scale, and the
    # declared copy clipped it: both said
    assert notes[1].startswith("Outlier: benchmark: the largest training row norm is")
    assert notes[2].startswith("Clipped: declared: 1 of 160 training rows clipped") and len(notes) == 3
    # a figure of the declared dataset only says nothing about the benchmark one (issue 39 item 6)
    only = preprocessing_notes(load_run(run_dir), shown=["declared"])
    assert len(only) == 1 and only[0].startswith("Clipped: declared")
    assert any(p.suffix == ".png" for p in plot_run(run_dir, metric="train_mse"))
    # the figure's own text: a panel of the declared dataset alone (--where) is not captioned with the other's bounds
    from dpbench.analysis.figures.curves import render

    drawn = render(load_run(run_dir), metric="train_mse", where={"dataset": ["declared"]})
    text = " ".join(t.get_text() for t in drawn.figure.texts)
    assert "Clipped: declared" in text and "Benchmark bounds" not in text and "Outlier" not in text


def test_a_folder_given_as_the_csv_is_named_as_a_folder(tmp_path):
    with pytest.raises(ValueError, match=r"is a folder, not a CSV file; give the file itself"):
        LOAD(np.random.default_rng(0), path=str(tmp_path), **DECLARED)


def test_a_constant_feature_is_recorded_and_said(tmp_path):
    from dpbench.analysis.notes import dataset_notes

    path = write(tmp_path, "a,k,y\n1,7,3\n2,7,1\n3,7,2\n4,7,1\n5,7,5\n")
    data = LOAD(np.random.default_rng(0), path=path, test_fraction=0.0, **DECLARED)
    assert data.meta["constant_features"] == "k"
    (note,) = dataset_notes({"data": {"label": "data", "n": 5, "meta": data.meta}})
    assert note.startswith("Constant feature: data: k (the same value in every training row")


def test_clip_error_refuses_rows_beyond_the_declared_bounds(houses):
    path, _ = houses
    with pytest.raises(ValueError, match=r"clip: error, and 1 of 160 training rows lie beyond"):
        LOAD(np.random.default_rng(1), path=path, target="price", split_seed=0, clip="error", **DECLARED)
    fine = LOAD(np.random.default_rng(1), path=path, target="price", split_seed=1, clip="error", **DECLARED)
    assert fine.meta["rows_clipped_x"] == 0  # split_seed 1 tests on the outlier: nothing to refuse


def test_benchmark_bounds_record_how_far_the_largest_row_stands_out(houses):
    path, _ = houses
    data = LOAD(np.random.default_rng(1), path=path, target="price", split_seed=0, bounds="benchmark")
    norms = np.hypot(*np.array([[100.0, 4.0]]).T)  # the outlier's row norm is ≥ 100; the others ≤ √(36 + 16)
    assert data.meta["x_outlier_ratio"] > norms[0] / np.sqrt(52) and data.meta["y_outlier_ratio"] < 5
