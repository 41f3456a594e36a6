"""Golden hashes: a small run of one config per paper must give bit-identical numbers across refactors.

Each case loads a real config file, shrinks it (fewer trials, ε values, smaller n or T) with the same patch every
time, runs it with n_jobs = 1 and hashes ``trials.csv`` without its timing columns. The hashes in
``tests/golden/hashes.json`` were recorded on the tree before the issue-14 move (commit 9d97f56) and must never
change unless a change of numbers is intended (then re-record with ``DPBENCH_RECORD_GOLDEN=1`` and say why in the
commit message).
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from dpbench.config import parse_config
from dpbench.engine import run

ROOT = Path(__file__).resolve().parent.parent
HASHES = Path(__file__).resolve().parent / "golden" / "hashes.json"
TIMING_COLUMNS = ("seconds", "cpu_seconds")


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


def shrunk_config(case: str, output_dir: Path):
    path, shrink = CASES[case]
    raw = copy.deepcopy(yaml.safe_load((ROOT / path).read_text()))
    shrink(raw)
    raw.update(n_jobs=1, output_dir=str(output_dir))
    return parse_config(raw, source=path)


def table_hash(csv_path: Path) -> str:
    """sha256 of the CSV without timing columns (the only columns allowed to differ between runs)."""
    table = pd.read_csv(csv_path)
    table = table.drop(columns=[c for c in table.columns if c in TIMING_COLUMNS])
    return hashlib.sha256(table.to_csv(index=False).encode()).hexdigest()


@pytest.mark.parametrize("case", sorted(CASES))
def test_small_run_of_each_paper_is_bit_identical_to_the_recorded_hash(case, tmp_path):
    config = shrunk_config(case, tmp_path)
    run_dir = run(config, n_jobs=1, progress=False, log=lambda *_: None)
    digest = table_hash(run_dir / "trials.csv")
    recorded = json.loads(HASHES.read_text()) if HASHES.exists() else {}
    if os.environ.get("DPBENCH_RECORD_GOLDEN"):
        recorded[case] = digest
        HASHES.write_text(json.dumps(recorded, indent=2, sort_keys=True) + "\n")
    assert case in recorded, f"no golden hash recorded for {case}"
    assert digest == recorded[case], f"{case}: trials.csv changed (hash {digest[:12]} ≠ {recorded[case][:12]})"
