"""``dataset_statistics: basic`` (issue 40): datasets.json keeps only the O(n) statistics, the trials are the same."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from dpbench.config import ConfigError, parse_config
from dpbench.engine import run


def run_with(small_config, tmp_path, statistics: str | None, draws: int | None):
    raw = {**small_config, "output_dir": str(tmp_path / (statistics or "default")), "trials": 2}
    raw["mechanisms"] = [{"mechanism": "adassp", "label": "AdaSSP"}]
    if statistics is not None:
        raw["dataset_statistics"] = statistics
    if draws is not None:
        raw["data_draws"] = draws
    run_dir = run(parse_config(raw), n_jobs=1, fresh=True, progress=False, log=lambda _m: None)
    trials = pd.read_csv(run_dir / "trials.csv").drop(columns=["seconds"])
    return trials, json.loads((run_dir / "datasets.json").read_text())


@pytest.mark.parametrize("draws", [None, 2])
def test_basic_statistics_drop_the_gram_fields_and_keep_the_trials(small_config, tmp_path, draws):
    full_trials, full = run_with(small_config, tmp_path, None, draws)
    basic_trials, basic = run_with(small_config, tmp_path, "basic", draws)
    pd.testing.assert_frame_equal(full_trials, basic_trials)  # the same numbers, bit for bit
    (entry_full,), (entry_basic,) = full.values(), basic.values()
    assert "ols_train_mse" in entry_full and "lam_min_x" in entry_full
    assert "ols_train_mse" not in entry_basic and "lam_min_x" not in entry_basic
    assert entry_basic["zero_train_mse"] == entry_full["zero_train_mse"] and entry_basic["n"] == 300


def test_dataset_statistics_must_be_full_or_basic(small_config):
    with pytest.raises(ConfigError, match="dataset_statistics.*full, basic.*'some'"):
        parse_config({**small_config, "dataset_statistics": "some"})
