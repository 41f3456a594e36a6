"""``dpbench bench --suite --papers``: per-figure / per-paper wall time and per-trial cost per mechanism family
(issue 16). Timings are measured, never asserted; these tests check the tables' shape and bookkeeping."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from dpbench.cli import app
from dpbench.engine.bench import (
    family_costs,
    mechanism_family,
    paper_config_sets,
    paper_configs,
    paper_totals,
    per_trial_costs,
    time_figures,
)
from dpbench.engine.bench_record import (
    SLOWER,
    check_record,
    compare_records,
    comparison_text,
    mechanism_seconds,
    read_record,
    write_record,
)

ROOT = Path(__file__).resolve().parents[2]


def write(tmp_path: Path, name: str, raw: dict) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


@pytest.fixture
def tiny_configs(tmp_path, small_config):
    regression = write(tmp_path, "reg", {**small_config, "trials": 2})
    bandit = write(
        tmp_path,
        "band",
        {
            "name": "bt",
            "kind": "bandit",
            "seed": 3,
            "trials": 2,
            "T": 200,
            "epsilons": [0.5],
            "delta": 1e-5,
            "environments": [{"env": "sphere", "label": "S", "options": {"d": 3, "n_arms": 4}}],
            "algorithms": [{"algorithm": "elim_iwr_jdp", "label": "IWR"}],
        },
    )
    return [("ihm", regression), ("bandits", bandit)]


def test_every_paper_has_configs_and_all_is_their_union():
    sets = paper_config_sets(ROOT)
    assert {"stein", "ftrl", "info_weighted", "bandits"} <= set(sets)
    everything = sorted((ROOT / "configs").rglob("*.yaml"))
    assert sorted(path for paths in sets.values() for path in paths) == everything  # each config in one paper
    assert ROOT / "configs" / "ihm_vs_adassp.yaml" in sets["ihm"]
    assert len(paper_configs(["all"], ROOT)) == len(everything)
    assert paper_configs(["configs/ihm_vs_adassp.yaml"], ROOT) == [("ihm", ROOT / "configs" / "ihm_vs_adassp.yaml")]
    with pytest.raises(ValueError, match="neither a paper"):
        paper_configs(["no_such_paper"], ROOT)


def test_mechanism_families_come_from_the_package_layout():
    assert mechanism_family("stein_glm_gauss") == "stein"
    assert mechanism_family("iwr_ldp") == "iwr"
    assert mechanism_family("dp_ftrl_identity") == "gradient"
    assert mechanism_family("adassp") == "ssp"
    assert mechanism_family("elim_iwr_jdp") == "bandits"  # not a regression mechanism


def test_per_trial_costs_count_a_bandit_trial_once():
    table = pd.DataFrame(
        {
            "dataset_id": ["e"] * 4,
            "label": ["A"] * 4,
            "mechanism": ["elim_iwr_jdp"] * 4,
            "epsilon_index": [0] * 4,
            "trial": [0, 0, 1, 1],
            "T": [1, 2, 1, 2],
            "seconds": [0.5, 0.5, 0.7, 0.7],
        }
    )
    costs = per_trial_costs(table)
    assert costs["seconds"].tolist() == [0.5, 0.7] and set(costs["family"]) == {"bandits"}


def test_per_trial_costs_count_every_data_draw():
    table = pd.DataFrame(
        {
            "dataset_id": ["s"] * 3,
            "label": ["A"] * 3,
            "mechanism": ["stein_glm_gauss"] * 3,
            "epsilon_index": [0] * 3,
            "data_draw": [0, 1, 2],
            "trial": [0, 0, 0],
            "seconds": [0.1, 0.2, 0.3],
        }
    )
    assert per_trial_costs(table)["seconds"].tolist() == [0.1, 0.2, 0.3]


def test_time_figures_tables(tiny_configs):
    figures, trials = time_figures(tiny_configs, n_jobs=1, log=lambda _m: None)
    assert figures["figure"].tolist() == ["reg", "band"]
    # regression: 3 mechanisms × 2 ε × 2 trials; bandit: 1 algorithm × 1 ε × 2 trials
    assert figures["trials"].tolist() == [12, 2]
    assert (figures["wall_s"] > 0).all() and (figures["cpu_s"] > 0).all()  # the child process's CPU is counted
    totals = paper_totals(figures)
    assert totals["paper"].tolist() == ["ihm", "bandits", "total"]
    assert totals.loc[totals["paper"] == "total", "wall_s"].item() == pytest.approx(figures["wall_s"].sum())
    families = family_costs(trials)
    assert set(families["family"]) == {"ssp", "sketch", "bandits"}
    assert families["trials"].sum() == 14


@pytest.mark.slow  # 9 s; test_time_figures_tables covers the same tables without the CLI
def test_cli_suite_papers_writes_the_tables(tiny_configs, tmp_path):
    out = tmp_path / "bench"
    result = CliRunner().invoke(
        app,
        [
            "bench",
            "--no-mechanism-table",
            "--suite",
            "--papers",
            ",".join(str(p) for _, p in tiny_configs),
            "--suite-jobs",
            "1",
            "--suite-output",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    assert {p.name for p in out.iterdir()} == {"figures.csv", "papers.csv", "families.csv", "record.json"}
    record = read_record(out / "record.json")
    assert set(record["figures"]) == {"reg", "band"} and record["n_jobs"] == 1
    assert set(record["mechanisms"]) == {"adassp", "ihm", "ols", "elim_iwr_jdp"}
    bad = CliRunner().invoke(app, ["bench", "--no-mechanism-table", "--suite", "--papers", "nope"])
    assert bad.exit_code != 0 and "neither a paper" in bad.output


def test_bench_table_never_prints_nan_for_a_mechanism_without_an_explicit_path():
    """AdaSSP has no literal sketch path: its line says so instead of "explicit nan ms (nan MB) ratio nan"."""
    from dpbench.engine.bench import bench_dataset

    lines: list[str] = []
    rows = bench_dataset(
        "tecator", ["adassp", "linmix"], trials=1, explicit_trials=1, epsilon=1.0, seed=0, log=lines.append
    )
    assert [row["mechanism"] for row in rows] == ["adassp", "linmix"]
    assert not any("nan" in line for line in lines), lines
    assert "no literal path" in lines[1] and "ratio" in lines[2]


def fake_record(figures: dict[str, float], mechanisms: dict[str, float], commit: str = "abc") -> dict:
    return {
        "version": 1,
        "commit": commit,
        "date": "2026-11-29T05:00:00+00:00",
        "machine": {"cpu": "test CPU", "cores": 2},
        "load": [0.1, 0.2, 0.3],
        "n_jobs": 2,
        "figures": {name: {"paper": "p", "wall_s": cpu, "cpu_s": cpu} for name, cpu in figures.items()},
        "mechanisms": {name: {"fit_s": fit, "trials": 10} for name, fit in mechanisms.items()},
    }


def test_record_comparison_ratios_and_flags():
    """Fake numbers (no timing): ratio now / before per figure and mechanism, flagged beyond ×SLOWER either way."""
    before = fake_record({"fig_a": 100.0, "fig_b": 50.0, "gone": 3.0}, {"ihm": 10.0, "adassp": 0.0})
    now = fake_record({"fig_a": 150.0, "fig_b": 40.0 * SLOWER**-1, "new": 1.0}, {"ihm": 10.5, "adassp": 1.0}, "def")
    table = compare_records(before, now).set_index("name")
    assert table.loc["fig_a", "ratio"] == pytest.approx(1.5) and table.loc["fig_a", "flag"] == "slower"
    assert table.loc["fig_b", "flag"] == "faster"
    assert table.loc["ihm", "ratio"] == pytest.approx(1.05) and table.loc["ihm", "flag"] == ""
    assert np.isnan(table.loc["adassp", "ratio"])  # nothing to divide by: no ratio, no flag
    assert set(table.index) == {"fig_a", "fig_b", "ihm", "adassp"}
    text = comparison_text(before, now)
    assert "commit abc" in text and "commit def" in text and "test CPU × 2" in text
    assert "new figures (no previous record): new" in text and "not timed now: gone" in text
    assert "2 of 4 beyond" in text


def test_record_round_trip_and_format_errors(tmp_path):
    record = fake_record({"fig": 1.0}, {"ihm": 2.0})
    write_record(tmp_path / "r.json", record)
    assert read_record(tmp_path / "r.json") == record
    with pytest.raises(ValueError, match="'version' must be 1"):
        check_record({**record, "version": 2}, "r.json")
    with pytest.raises(ValueError, match="'figures.fig.cpu_s' must be a number"):
        check_record({**record, "figures": {"fig": {"wall_s": 1.0}}}, "r.json")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ValueError, match="not a JSON speed record"):
        read_record(tmp_path / "bad.json")


def test_mechanism_seconds_sum_the_trials():
    trials = pd.DataFrame({"mechanism": ["a", "a", "b"], "seconds": [0.25, 0.5, 2.0]})
    assert mechanism_seconds(trials) == {"a": {"fit_s": 0.75, "trials": 2}, "b": {"fit_s": 2.0, "trials": 1}}


def test_committed_record_has_the_format():
    """benchmarks/record.json (the reference ``make bench-all`` compares with) reads as a version-1 record."""
    path = ROOT / "benchmarks" / "record.json"
    record = read_record(path)
    assert record["figures"] and record["commit"] and record["machine"]["cores"]
