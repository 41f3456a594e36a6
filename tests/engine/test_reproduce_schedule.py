"""`make reproduce-all`'s global longest-first schedule (scripts/reproduce_schedule.py), its per-command record
(scripts/timed_run.py) and the per-paper table built from it (scripts/walltime_table.py). Scheduling only: no
result depends on it; these tests check what is run, in which order, under which constraints, and the simulator's
arithmetic on cases worked by hand. No test depends on timing."""

from __future__ import annotations

import csv
import importlib.util
import shutil
import subprocess
import sys
from itertools import pairwise
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]


def _script(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


schedule = _script("reproduce_schedule")
timed_run = _script("timed_run")
needs_make = pytest.mark.skipif(shutil.which("make") is None, reason="GNU make not installed")

TOY = """\
.PHONY: reproduce-a reproduce-b a1 a2 b1 b2 b3 group
reproduce-a: a1 group
group: a2
reproduce-b: b1 b2 b3 a1
a1 a2 b1 b2 b3:
\t@echo "start $@ $$(date +%s.%N)" >> log.txt; sleep 0.05; echo "end $@ $$(date +%s.%N)" >> log.txt
"""


def _toy(tmp_path: Path) -> Path:
    (tmp_path / "Makefile").write_text(TOY, encoding="utf-8")
    return tmp_path


@needs_make
def test_runs_are_the_recipes_reached_from_each_paper_target_each_counted_once(tmp_path):
    rules = schedule.make_database(_toy(tmp_path))
    assert rules["group"] == schedule.Rule(("a2",), False)
    assert rules["a1"].has_recipe and not rules["reproduce-a"].has_recipe
    by_paper = schedule.paper_runs(["a", "b"], rules)
    assert by_paper == {"a": ["a1", "a2"], "b": ["b1", "b2", "b3"]}  # a1 belongs to the first paper reaching it
    with pytest.raises(SystemExit, match="no rule"):
        schedule.paper_runs(["c"], rules)


def test_the_order_is_longest_first_with_uncosted_runs_at_the_front():
    costs = {"x": schedule.Cost(5.0), "y": schedule.Cost(50.0), "z": schedule.Cost(50.0)}
    assert schedule.longest_first(["x", "y", "new", "z"], costs) == ["new", "y", "z", "x"]


@needs_make
def test_the_generated_schedule_runs_every_run_once_and_never_two_runs_of_a_serial_paper_at_once(tmp_path):
    root = _toy(tmp_path)
    by_paper = schedule.paper_runs(["a", "b"], schedule.make_database(root))
    costs = {"a1": schedule.Cost(1.0), "a2": schedule.Cost(9.0), "b1": schedule.Cost(8.0), "b2": schedule.Cost(7.0)}
    text = schedule.schedule_makefile(by_paper, costs, serial=["b"])
    assert f"{schedule.GOAL}: b3 a2 b1 b2 a1" in text  # b3 has no cost: first
    assert "b1: | b3" in text and "b2: | b1" in text and "a1: REPRODUCE_PAPER := a" in text
    (root / "schedule.mk").write_text(text, encoding="utf-8")
    subprocess.run(
        ["make", "-s", "-C", str(root), "-f", "Makefile", "-f", "schedule.mk", "-j2", schedule.GOAL], check=True
    )
    events = [line.split() for line in (root / "log.txt").read_text().splitlines()]
    starts = {name: float(t) for kind, name, t in events if kind == "start"}
    ends = {name: float(t) for kind, name, t in events if kind == "end"}
    assert sorted(starts) == ["a1", "a2", "b1", "b2", "b3"]  # every run exactly once (a1 reached twice)
    chain = ["b3", "b1", "b2"]
    assert all(ends[earlier] <= starts[later] for earlier, later in pairwise(chain))
    with pytest.raises(SystemExit, match="REPRODUCE_SERIAL names 'c'"):
        schedule.schedule_makefile(by_paper, costs, serial=["c"])


def test_a_barrier_idles_a_core_that_the_global_list_fills():
    """Two papers of one single-task run each (100 CPU-s on one worker): in turn 200 s with a core idle all along
    (200 core-s); one global list runs both at once: 100 s, nothing idle."""
    costs = {"a": schedule.Cost(100.0, 0.0, 100.0), "b": schedule.Cost(100.0, 0.0, 100.0)}
    by_paper = {"p": ["a"], "q": ["b"]}
    results = schedule.compare(by_paper, costs)
    old, new = results["papers in turn"], results["global longest-first"]
    assert old.makespan == pytest.approx(200.0) and old.idle_core_s == pytest.approx(200.0)
    assert new.makespan == pytest.approx(100.0) and new.idle_core_s == pytest.approx(0.0)


def test_processor_sharing_splits_two_cores_between_four_workers():
    """Two runs of 2 workers each (200 CPU-s, serial and tail parts 0) share 2 cores: each gets one core, both end
    at 200 s; a third run of 10 CPU-s waits for a slot (make -j2) and then has both cores: 205 s."""
    costs = {name: schedule.Cost(200.0, 0.0, 0.0) for name in "ab"} | {"c": schedule.Cost(10.0, 0.0, 0.0)}
    result = schedule.simulate(["a", "b", "c"], costs)
    assert result.spans["a"] == pytest.approx((0.0, 200.0)) and result.spans["b"] == pytest.approx((0.0, 200.0))
    assert result.spans["c"] == pytest.approx((200.0, 205.0)) and result.makespan == pytest.approx(205.0)


def test_a_serial_start_and_a_single_task_tail_use_one_core():
    """One run alone: 4 s serial (2 before, 2 after), 96 s parallel of which the last 16 on one worker:
    2 + (96 − 16)/2 + 16 + 2 = 60 s, idle 2 + 16 + 2 = 20 core-s."""
    result = schedule.simulate(["a"], {"a": schedule.Cost(100.0, 4.0, 16.0)})
    assert result.makespan == pytest.approx(60.0) and result.idle_core_s == pytest.approx(20.0)


def test_the_committed_costs_cover_every_run_of_reproduce_all():
    costs = schedule.read_costs(ROOT / "benchmarks" / "reproduce_costs.csv")
    assert all(cost.cpu_s >= cost.serial_s >= 0 and cost.task_s >= 0 for cost in costs.values())
    if shutil.which("make") is None:
        pytest.skip("GNU make not installed")
    runs = [run for runs in schedule.paper_runs(schedule.PAPERS, schedule.make_database(ROOT)).values() for run in runs]
    assert len(runs) == len(set(runs)) and len(runs) > 50
    assert set(costs) >= set(runs), "a run of reproduce-all has no cost row: it is scheduled first"


def test_timed_run_records_the_command_and_passes_its_status_on(tmp_path):
    log = tmp_path / "w" / "runs.csv"
    ok = timed_run.main([str(log), "stein", "reproduce-x", "--", sys.executable, "-c", "sum(range(10**5))"])
    bad = timed_run.main([str(log), "iwr", "reproduce-y", "--", sys.executable, "-c", "raise SystemExit(3)"])
    assert (ok, bad) == (0, 3)
    rows = list(csv.DictReader(log.open()))
    assert [(r["paper"], r["target"], r["status"]) for r in rows] == [
        ("stein", "reproduce-x", "0"),
        ("iwr", "reproduce-y", "3"),
    ]
    assert all(float(r["end"]) >= float(r["start"]) and float(r["cpu_s"]) >= 0 for r in rows)
    with pytest.raises(SystemExit, match="usage"):
        timed_run.main([str(log), "p", "t", "cmd"])


def test_paper_spans_sum_cpu_and_span_first_start_to_last_end():
    walltime = _script("walltime_table")
    runs = pd.DataFrame(
        {
            "paper": ["a", "b", "a"],
            "start": [100.0, 100.0, 150.0],
            "end": [160.0, 130.0, 190.0],
            "cpu_s": [50.0, 20.0, 30.0],
        }
    )
    table = walltime.paper_spans(runs).set_index("paper")
    assert table.loc["a", "cpu_s"] == 80.0 and table.loc["a", "wall_span_s"] == 90.0
    assert table.loc["b", "end_s"] == 30.0 and table.loc["all", "wall_span_s"] == 90.0
    assert table.loc["all", "cpu_s"] == 100.0 and table.loc["all", "commands"] == 3


def test_a_measured_record_replaces_the_cpu_of_each_target_and_keeps_its_shape(tmp_path):
    """``simulate --runs``: a target's CPU is the sum over its commands (run + report); serial and task parts stay."""
    log = tmp_path / "runs.csv"
    for target, cpu in (("x", 30.0), ("x", 2.5), ("y", 7.0)):
        timed_run.append_row(
            log,
            {
                "paper": "p",
                "target": target,
                "command": "c",
                "start": 0,
                "end": 1,
                "wall_s": 1,
                "cpu_s": cpu,
                "status": 0,
            },
        )
    previous = {"x": schedule.Cost(100.0, 12.0, 40.0)}
    measured = schedule.measured_costs(log, previous)
    assert measured == {"x": schedule.Cost(32.5, 12.0, 40.0), "y": schedule.Cost(7.0)}
