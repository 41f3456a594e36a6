"""Wang 2018's UCI experiment (spec 005 §2a): the K-fold split, the loader's preprocessing, the summary analysis."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpbench import registry
from dpbench.data.cv import kfold_assignment, kfold_split
from dpbench.papers.wang2018 import analyses, figures
from dpbench.papers.wang2018.generators import wang_preprocess

registry.discover()


def test_kfold_partition_is_balanced_deterministic_and_draw_dependent():
    a = kfold_assignment(103, 10, seed=5, draw=0)
    assert sorted(np.bincount(a)) == [10] * 7 + [11] * 3
    assert np.array_equal(a, kfold_assignment(103, 10, seed=5, draw=0))
    assert not np.array_equal(a, kfold_assignment(103, 10, seed=5, draw=1))


def test_kfold_folds_partition_the_rows():
    X, y = np.arange(40.0).reshape(20, 2), np.arange(20.0)
    tests = [kfold_split(X, y, k, 4, seed=1)[3] for k in range(4)]
    assert sorted(np.concatenate(tests).tolist()) == y.tolist()
    with pytest.raises(ValueError, match="fold"):
        kfold_split(X, y, 4, 4, seed=1)
    with pytest.raises(ValueError, match="folds"):
        kfold_assignment(3, 5, seed=1)


def test_wang_preprocessing_is_exp_uci():
    rng = np.random.default_rng(0)
    table = np.column_stack([rng.normal(3, 2, 50), np.full(50, 7.0), rng.normal(0, 1, 50), rng.normal(0, 5, 50)])
    table[4, 0] = np.nan
    X, y = wang_preprocess(table)
    assert np.abs(y).max() == pytest.approx(1.0)
    assert np.allclose(np.linalg.norm(X, axis=1), 1.0)
    assert np.all(X[:, 1] == 0.0)  # a constant column z-scores to 0 (Matlab's zscore: std 0 → 1)


def test_loader_gives_the_fold_of_one_partition():
    load = registry.get_dataset("wang2018_uci").load
    folds = [load(np.random.default_rng(k), name="servo", fold=k) for k in range(10)]
    assert sum(len(ds.y_test) for ds in folds) == 167 and all(ds.n + len(ds.y_test) == 167 for ds in folds)
    assert np.allclose(np.linalg.norm(folds[0].X_train, axis=1), 1.0) and folds[0].d == 4
    with pytest.raises(ValueError, match="name"):
        load(np.random.default_rng(0), name="nope")


def _trials() -> pd.DataFrame:
    """Two data sets, two folds, two draws: trivial 1.0, non-private 0.2, A 0.3 / 0.6, B 0.4 / 0.5 by data set."""
    rows = []
    mse = {"trivial": (1.0, 1.0), "non-private": (0.2, 0.2), "AdaOPS": (0.3, 0.6), "AdaSSP": (0.4, 0.5)}
    for i, dataset in enumerate(("d1", "d2")):
        for label, values in mse.items():
            for draw in (0, 1):
                for fold in (0, 1):
                    noise = 0.01 if fold else -0.01
                    rows.append({"dataset": dataset, "label": label, "epsilon": 1.0, "data_draw": draw,
                                 "data.fold": fold, "test_mse": values[i] + noise})  # fmt: skip
    return pd.DataFrame(rows)


def test_cv_mean_over_folds_and_normalised_excess():
    cv = analyses.cv_errors(_trials())
    assert len(cv) == 2 * 4 * 2 and np.allclose(cv.query("label == 'AdaOPS' and dataset == 'd1'")["cv_mse"], 0.3)
    ex = analyses.normalised_excess(cv)
    assert np.allclose(ex.query("label == 'AdaOPS' and dataset == 'd1'")["excess"], 0.125)
    assert np.allclose(ex.query("label == 'trivial'")["excess"], 1.0)
    table = analyses.summary(ex, resamples=200)
    row = table.query("label == 'AdaSSP'").iloc[0]
    assert row["median"] == pytest.approx((0.25 + 0.375) / 2) and row["datasets"] == 2


def test_claims_count_wins_and_ratios():
    out = analyses.compare(analyses.cv_errors(_trials()), "AdaOPS", "AdaSSP", resamples=200).iloc[0]
    assert out["A_better"] == 1 and out["datasets"] == 2
    assert out["median_ratio"] == pytest.approx((0.75 + 1.2) / 2)


def test_summary_figure_draws_every_method_and_the_trivial_line():
    table = pd.DataFrame([{"label": m, "epsilon": e, "median": 0.5 / e, "lo": 0.4 / e, "hi": 0.6 / e, "datasets": 2}
                          for m in analyses.PRIVATE for e in (0.1, 1.0, 10.0)])  # fmt: skip
    fig = figures.summary_figure(table)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [*analyses.PRIVATE, "trivial (θ̂ = 0)"]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"


@pytest.mark.slow
def test_end_to_end_small_run(tmp_path, monkeypatch):
    """The config's pipeline on two small data sets, one repetition, two ε: one row per (fold, method, ε)."""
    import yaml

    from dpbench.config import load_config
    from dpbench.engine import run as run_engine

    config = yaml.safe_load(open("configs/wang2018/wang2018_uci.yaml"))
    config.update(name="wang_small", data_draws=1, epsilons=[0.1, 1.0], n_jobs=1)
    config["datasets"] = [d for d in config["datasets"] if d["label"] in ("servo", "yacht")]
    path = tmp_path / "small.yaml"
    path.write_text(yaml.safe_dump(config))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DPBENCH_DATA_DIR", str(registry_root() / "datasets"))
    run_engine(load_config(path))
    trials = pd.read_csv(tmp_path / "results" / "wang_small" / "trials.csv")
    assert len(trials) == 2 * 10 * 7 * 2 and set(trials["label"]) == {*analyses.PRIVATE, "trivial", "non-private"}
    assert trials["test_mse"].notna().all()


def registry_root():
    from pathlib import Path

    return Path(__file__).resolve().parents[2]


def test_the_summary_analysis_writes_its_tables_atomically(tmp_path, monkeypatch):
    """wang2018_summary writes its CSVs and markdown through the one atomic write (dpbench.io.atomic): the bytes
    pandas would write, no temporary file left beside them."""
    trials = _trials()
    others = [trials[trials["label"] == "AdaSSP"].assign(label=label) for label in ("SSP", "ObjPert", "OPS")]
    folder = tmp_path / "wang"
    folder.mkdir()
    pd.concat([trials, *others], ignore_index=True).assign(dataset_id=lambda t: t["dataset"]).to_csv(
        folder / "trials.csv", index=False
    )
    (folder / "config.yaml").write_text("name: wang\n")
    atomic = []
    monkeypatch.setattr(analyses, "write_atomic", lambda path, text: atomic.append(path) or path.write_text(text))
    written = registry.get_analysis("wang2018_summary").run([folder], {"resamples": "200"}, echo=lambda _m: None)
    names = ["wang2018_summary.csv", "wang2018_claims.csv", "wang2018_summary.md"]
    assert [p.name for p in atomic] == names and {p.name for p in written} >= {"wang2018_summary.md"}
    table = pd.read_csv(folder / "wang2018_summary.csv")
    assert (folder / "wang2018_summary.csv").read_text() == table.to_csv(index=False)
    assert set(analyses.PRIVATE) <= set(table["label"]) and not list(folder.glob(".*.tmp"))
