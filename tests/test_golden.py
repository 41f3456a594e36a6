"""Golden values: a small run of one config per paper must give the recorded numbers, on any CPU and BLAS build.

Each case loads a real config file, shrinks it (fewer trials, ε values, smaller n or T) with the same patch every
time, runs it with n_jobs = 1 and compares ``trials.csv`` (without its timing columns) with the table stored in
``tests/golden/<case>.csv``, cell by cell, within the case's relative tolerance (``tests/golden_tables.py`` says how
a cell is compared). Text columns and missing cells must match exactly.

Tolerances (``RTOL``): 1e-9 relative for every case. Measured (docs/reliability.md has the table): the largest
relative difference of any numeric cell between OpenBLAS kernels (Haswell, Zen, Sandybridge, Nehalem, Prescott) is
5.3e-13 (ihm_figure6: LinMix's η, through λ_min of Tamielectric's ill-conditioned [X, y] Gram), ≤ 6e-14 for figure1,
stein_fig01, iw_e2, ftrl_e3 and 4e-16 for bandit_jdp (no arm decision changed). 1e-9 leaves a margin of ≥ 2,000 over
kernels and is ≥ 1,000× below the smallest real change the tests of the test below must catch (a relative 1e-6
change of one noise scale). Discrete outcomes (an arm eliminated, a clip counted, a text column) have no tolerance:
a flip between kernels fails the test, as it should.

The numbers change only when a change of numbers is intended: then re-record with ``DPBENCH_RECORD_GOLDEN=1
python -m pytest tests/test_golden.py`` and say why in the commit message.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import yaml
from golden_tables import read_table, worst_mismatch, write_table

from dpbench.config import parse_config
from dpbench.engine import run

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "golden"
RECORD = bool(os.environ.get("DPBENCH_RECORD_GOLDEN"))


def _first_datasets(raw: dict[str, Any], key: str, count: int = 1) -> None:
    raw[key] = raw[key][:count]


def _shrink_ihm(raw: dict[str, Any]) -> None:
    raw.update(trials=3, epsilons=[0.1, 1.0, 10.0])


def _shrink_iw(raw: dict[str, Any]) -> None:
    raw.update(trials=2, epsilons=[0.1, 1.0], trial_block=1)
    raw.pop("large_dataset_trials", None)
    raw.pop("data_draws", None)  # one draw, as recorded (the config's 10 draws are the full grid)
    _first_datasets(raw, "datasets")
    raw["datasets"][0]["grid"] = {"n": [3000]}


def _shrink_stein(raw: dict[str, Any]) -> None:
    raw.update(trials=2, epsilons=[4, 20], data_draws=2)  # 2 draws: covers the data-draw path (config: 20)
    _first_datasets(raw, "datasets")
    raw["datasets"][0]["grid"] = {"n": [20000]}


def _shrink_ftrl(raw: dict[str, Any]) -> None:
    raw.update(trials=2, epsilons=[1, 4], trial_block=1)
    raw["datasets"][0]["options"].update(n=256, d=32, public_MC=50)
    for mech in raw["mechanisms"]:
        if "public_C_rows" in mech.get("hyper", {}):
            mech["hyper"]["public_C_rows"] = 50


def _shrink_bandit(raw: dict[str, Any]) -> None:
    raw.update(trials=2, T=2048, epsilons=[1.0, float("inf")])
    _first_datasets(raw, "environments", 2)


CASES: dict[str, tuple[str, Callable[[dict[str, Any]], None]]] = {
    "figure1": ("configs/ihm_vs_adassp.yaml", _shrink_ihm),
    "ihm_figure6": ("configs/ihm/ihm_figure6.yaml", _shrink_ihm),
    "iw_e2": ("configs/info_weighted/iw_e2_central_vs_eps.yaml", _shrink_iw),
    "stein_fig01": ("configs/stein/stein_fig01.yaml", _shrink_stein),
    "ftrl_e3": ("configs/ftrl/ftrl_e3_eps.yaml", _shrink_ftrl),
    "bandit_jdp": ("configs/bandits/bandit_jdp.yaml", _shrink_bandit),
}
RTOL = {case: 1e-9 for case in CASES}


def shrunk_config(case: str, output_dir: Path):
    path, shrink = CASES[case]
    raw = copy.deepcopy(yaml.safe_load((ROOT / path).read_text()))
    shrink(raw)
    raw.update(n_jobs=1, output_dir=str(output_dir))
    return parse_config(raw, source=path)


def small_run(case: str, output_dir: Path) -> pd.DataFrame:
    run_dir = run(shrunk_config(case, output_dir), n_jobs=1, progress=False, log=lambda *_: None)
    return read_table(run_dir / "trials.csv")


@pytest.mark.parametrize("case", sorted(CASES))
def test_small_run_of_each_paper_matches_the_golden_values(case, tmp_path):
    ours = small_run(case, tmp_path)
    golden_path = GOLDEN / f"{case}.csv"
    if RECORD:
        write_table(ours, golden_path)
    assert golden_path.exists(), f"no golden table recorded for {case} ({golden_path})"
    mismatch = worst_mismatch(ours, read_table(golden_path), RTOL[case])
    assert mismatch is None, f"{case}: trials.csv differs from {golden_path.name} (rtol {RTOL[case]:g}); {mismatch}"


def _one_ulp_up(table: pd.DataFrame, column: str) -> pd.DataFrame:
    nudged = table.copy()
    nudged[column] = np.nextafter(nudged[column].to_numpy(float), np.inf)
    return nudged


def test_one_ulp_on_every_stored_value_of_a_column_passes():
    golden = read_table(GOLDEN / "figure1.csv")
    for column in ("train_mse", "test_mse", "excess_train_mse", "info.sigma"):
        assert worst_mismatch(_one_ulp_up(golden, column), golden, RTOL["figure1"]) is None


def test_a_relative_1e6_change_of_one_noise_scale_fails(tmp_path, monkeypatch):
    """AdaSSP's (σ₁, σ₂) scaled by 1 + 1e-6 on a copy of its calibration: the golden comparison must flag it."""
    from dpbench.mechanisms.ssp import adassp

    honest = adassp.adassp_scales

    def nudged(*args, **kwargs):
        return tuple(s * (1 + 1e-6) for s in honest(*args, **kwargs))

    monkeypatch.setattr(adassp, "adassp_scales", nudged)
    ours = small_run("figure1", tmp_path)
    mismatch = worst_mismatch(ours, read_table(GOLDEN / "figure1.csv"), RTOL["figure1"])
    assert mismatch is not None and mismatch.relative > 1e-8
    assert "adassp" in mismatch.where, mismatch


def test_a_failure_names_the_worst_cell_with_both_values():
    golden = read_table(GOLDEN / "figure1.csv")
    changed = golden.copy()
    changed.loc[5, "test_mse"] *= 1 + 1e-4
    changed.loc[9, "test_mse"] *= 1 + 1e-3
    mismatch = worst_mismatch(changed, golden, RTOL["figure1"])
    assert mismatch is not None and mismatch.column == "test_mse"
    assert mismatch.relative == pytest.approx(1e-3, rel=1e-2)
    text = str(mismatch)
    assert repr(changed.loc[9, "test_mse"]) in text and repr(golden.loc[9, "test_mse"]) in text
    assert f"trial={golden.loc[9, 'trial']}" in text


def test_a_changed_label_or_a_missing_row_fails_regardless_of_tolerance():
    golden = read_table(GOLDEN / "figure1.csv")
    relabelled = golden.copy()
    relabelled.loc[0, "label"] = "something else"
    assert worst_mismatch(relabelled, golden, rtol=1.0).column == "label"
    assert worst_mismatch(golden.iloc[1:], golden, rtol=1.0).column == "<rows>"
