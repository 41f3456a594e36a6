"""One global longest-first schedule for `make reproduce-all` (issue 40), and its simulation.

`make reproduce-all` used to run the five papers one after another (two figure targets of a paper at a time), so
each paper waited for its slowest run while a core idled. This script lists every paper's runs (the targets with a
recipe under `reproduce-<paper>`, read from make's own database, so a new figure is never forgotten), orders them
longest first by the CPU seconds of ``benchmarks/reproduce_costs.csv`` (a run missing there goes first, so it is
timed before it can hold up the end) and writes a make fragment: one goal whose prerequisites are the runs in that
order, which ``make -j2`` starts in that order as slots free up — list scheduling, longest processing time first.
Papers named in ``--serial`` (``REPRODUCE_SERIAL=ftrl`` on a machine under 16 GB) have their runs chained by
order-only prerequisites: never two of them at once, while another paper's run fills the other slot.

Scheduling only: every trial is seeded by its coordinates, so the results do not depend on the order.

Usage:
  python scripts/reproduce_schedule.py makefile --papers "ihm-paper stein ftrl iwr bandits" [--serial ftrl] --out F
  python scripts/reproduce_schedule.py order [--papers ...]
  python scripts/reproduce_schedule.py simulate [--costs benchmarks/reproduce_costs.csv] [--runs runs.csv]

`simulate` replays both schedules (papers one after another vs one global list) on 2 cores from per-run costs — a
projection, not a measurement (docs/performance.md).
"""

from __future__ import annotations

import argparse
import csv
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import pairwise
from pathlib import Path

PAPERS = ("ihm-paper", "stein", "ftrl", "iwr", "bandits")
COSTS = Path("benchmarks/reproduce_costs.csv")
GOAL = "reproduce-all-runs"


# ---------------------------------------------------------------------------------------------------------------
# make's database → the runs of each paper
# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rule:
    prerequisites: tuple[str, ...]
    has_recipe: bool


def parse_database(text: str) -> dict[str, Rule]:
    """Targets of ``make -pRrq`` output's "# Files" section: prerequisites (normal ones, in order) and whether a
    recipe is attached."""
    rules: dict[str, Rule] = {}
    files = text.split("\n# Files\n", 1)[-1]
    for block in files.split("\n\n"):
        lines = [line for line in block.splitlines() if line.strip()]
        head = next((line for line in lines if not line.startswith("#") and ":" in line), None)
        if head is None or head.startswith("\t"):
            continue
        target, _, rest = head.partition(":")
        if " " in target.strip() or target.startswith("."):
            continue
        normal = rest.lstrip(":").split("|", 1)[0].split()
        recipe = any(line.startswith("#  recipe to execute") for line in lines)
        rules[target.strip()] = Rule(tuple(normal), recipe)
    return rules


def make_database(makefile_dir: Path = Path(".")) -> dict[str, Rule]:
    """The rules make sees in ``makefile_dir`` (``make -pRrq`` of a target that does not exist: nothing runs)."""
    out = subprocess.run(
        ["make", "-pRrq", "-C", str(makefile_dir), "--no-print-directory", "__reproduce_schedule_probe__"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    return parse_database(out)


def runs_of(goal: str, rules: Mapping[str, Rule]) -> list[str]:
    """The targets with a recipe reached from ``goal`` (depth first, in prerequisite order, each once)."""
    seen: set[str] = set()
    order: list[str] = []

    def visit(target: str) -> None:
        if target in seen:
            return
        seen.add(target)
        rule = rules.get(target)
        if rule is None:
            raise SystemExit(f"reproduce_schedule: make has no rule for {target!r}")
        for prerequisite in rule.prerequisites:
            visit(prerequisite)
        if rule.has_recipe:
            order.append(target)

    visit(goal)
    return order


def paper_runs(papers: Sequence[str], rules: Mapping[str, Rule]) -> dict[str, list[str]]:
    """paper → its runs (``reproduce-<paper>``'s targets with a recipe); a run reached from two papers counts once,
    for the first."""
    out: dict[str, list[str]] = {}
    taken: set[str] = set()
    for paper in papers:
        runs = [run for run in runs_of(f"reproduce-{paper}", rules) if run not in taken]
        taken.update(runs)
        out[paper] = runs
    return out


# ---------------------------------------------------------------------------------------------------------------
# costs and the order
# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cost:
    """A run's cost on idle cores: ``cpu_s`` in all, of which ``serial_s`` single-process (start-up, assembly, plot,
    report) and the rest on ``N_JOBS`` workers, whose last ``task_s`` (one task) runs on one worker."""

    cpu_s: float
    serial_s: float = 8.0
    task_s: float = 10.0


def read_costs(path: Path) -> dict[str, Cost]:
    """target → Cost from the CSV (columns target, paper, cpu_s, serial_s, task_s, source)."""
    with path.open(encoding="utf-8") as handle:
        return {
            row["target"]: Cost(float(row["cpu_s"]), float(row["serial_s"]), float(row["task_s"]))
            for row in csv.DictReader(handle)
        }


def measured_costs(runs_csv: Path, previous: Mapping[str, Cost]) -> dict[str, Cost]:
    """target → Cost from a reproduce-all record (``timed_run.py`` rows: CPU seconds summed over a target's commands);
    the serial and task parts are kept from ``previous`` (the record does not split them)."""
    cpu: dict[str, float] = {}
    with runs_csv.open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            cpu[row["target"]] = cpu.get(row["target"], 0.0) + float(row["cpu_s"])
    return {target: replace(previous.get(target, Cost(0.0)), cpu_s=seconds) for target, seconds in cpu.items()}


def longest_first(runs: Iterable[str], costs: Mapping[str, Cost]) -> list[str]:
    """Runs by CPU seconds, largest first; a run without a cost first of all (timed before it can make the tail),
    ties by name."""
    return sorted(runs, key=lambda run: (-costs[run].cpu_s if run in costs else -float("inf"), run))


def schedule_makefile(by_paper: Mapping[str, Sequence[str]], costs: Mapping[str, Cost], serial: Iterable[str]) -> str:
    """The make fragment: the goal with every run longest first, each run's paper (REPRODUCE_PAPER, for the
    per-run record) and the order-only chains of the serial papers."""
    owner = {run: paper for paper, runs in by_paper.items() for run in runs}
    order = longest_first(owner, costs)
    lines = [
        "# generated by scripts/reproduce_schedule.py (make reproduce-all): every paper's runs, longest first",
        f".PHONY: {GOAL}",
        f"{GOAL}: " + " ".join(order),
    ]
    lines += [f"{run}: REPRODUCE_PAPER := {owner[run]}" for run in order]
    for paper in serial:
        if paper not in by_paper:
            raise SystemExit(f"reproduce_schedule: REPRODUCE_SERIAL names {paper!r}, not one of {sorted(by_paper)}")
        chain = [run for run in order if owner[run] == paper]
        lines += [f"{later}: | {earlier}" for earlier, later in pairwise(chain)]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------------------------
# simulation: processor sharing on `cores` cores
# ---------------------------------------------------------------------------------------------------------------


def phases(cost: Cost, workers: int) -> list[list[float]]:
    """A run as [CPU seconds, cores it can use] phases: start-up (half the serial part, one process), the parallel
    part on ``workers`` processes but its last task on one, then assembly, plot and report (the other half)."""
    serial = min(cost.serial_s, cost.cpu_s)
    parallel = cost.cpu_s - serial
    tail = min(cost.task_s, parallel)
    return [[serial / 2, 1.0], [parallel - tail, float(workers)], [tail, 1.0], [serial / 2, 1.0]]


@dataclass
class _Active:
    run: str
    start: float
    left: list[list[float]]  # phases still to run, each [CPU seconds, cores]

    def current(self) -> list[float]:
        while self.left and self.left[0][0] <= 1e-9:
            self.left.pop(0)
        return self.left[0] if self.left else [0.0, 1.0]

    @property
    def done(self) -> bool:
        return not self.left or all(cpu <= 1e-9 for cpu, _ in self.left)


@dataclass(frozen=True)
class Simulated:
    makespan: float
    spans: dict[str, tuple[float, float]]  # run → (start, end)
    idle_core_s: float


def simulate(
    order: Sequence[str],
    costs: Mapping[str, Cost],
    *,
    slots: int = 2,
    workers: int = 2,
    cores: float = 2.0,
    after: Mapping[str, Sequence[str]] | None = None,
) -> Simulated:
    """List scheduling of ``order`` with ``slots`` runs at a time (make -j), each run's parallel part on ``workers``
    processes, all sharing ``cores`` in proportion to their demand (the kernel's fair share). ``after[run]``: runs
    that must have finished before ``run`` starts (a barrier or an order-only chain); make starts the first startable
    run of the list whenever a slot is free."""
    after = after or {}
    pending = list(order)
    active: list[_Active] = []
    finished: dict[str, float] = {}
    spans: dict[str, tuple[float, float]] = {}
    now, idle = 0.0, 0.0
    while pending or active:
        for run in list(pending):
            if len(active) >= slots:
                break
            if all(dep in finished for dep in after.get(run, ())):
                active.append(_Active(run, now, phases(costs[run], workers)))
                pending.remove(run)
        if not active:
            raise SystemExit(f"reproduce_schedule: nothing can start (cyclic order?): {pending[:3]}")
        demands = [job.current()[1] for job in active]
        share = min(1.0, cores / sum(demands))
        rates = [demand * share for demand in demands]
        step = max(min(job.current()[0] / rate for job, rate in zip(active, rates, strict=True)), 1e-9)
        idle += (cores - sum(rates)) * step
        now += step
        for job, rate in zip(active, rates, strict=True):
            job.current()[0] -= rate * step
        for job in [job for job in active if job.done]:
            active.remove(job)
            finished[job.run] = now
            spans[job.run] = (job.start, now)
    return Simulated(now, spans, idle)


def barrier_constraints(by_paper: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
    """Papers one after another: every run of a paper waits for all runs of the papers before it."""
    after: dict[str, list[str]] = {}
    before: list[str] = []
    for runs in by_paper.values():
        for run in runs:
            after[run] = list(before)
        before = before + list(runs)
    return after


def chain_constraints(order: Sequence[str], members: set[str]) -> dict[str, list[str]]:
    """Order-only chain of ``members`` in ``order``: each waits for the one before it."""
    chain = [run for run in order if run in members]
    return {later: [earlier] for earlier, later in pairwise(chain)}


def paper_table(result: Simulated, by_paper: Mapping[str, Sequence[str]], costs: Mapping[str, Cost]) -> list[str]:
    """Per paper: CPU seconds and the wall span from its first start to its last end (minutes)."""
    lines = []
    for paper, runs in by_paper.items():
        start = min(result.spans[run][0] for run in runs)
        end = max(result.spans[run][1] for run in runs)
        cpu = sum(costs[run].cpu_s for run in runs)
        lines.append(f"  {paper:10s} CPU {cpu:7.0f} s   span {start / 60:5.1f} → {end / 60:5.1f} min")
    return lines


def compare(
    by_paper: Mapping[str, Sequence[str]], costs: Mapping[str, Cost], serial: Sequence[str] = ()
) -> dict[str, Simulated]:
    """The old schedule (papers in turn, each paper's runs in make's prerequisite order, -j2 within a paper; a serial
    paper at -j1) and the global longest-first one (serial papers chained)."""
    old_order = [run for runs in by_paper.values() for run in runs]
    old_after = barrier_constraints(by_paper)
    for paper in serial:
        for run, deps in chain_constraints(by_paper[paper], set(by_paper[paper])).items():
            old_after[run] = old_after[run] + deps
    new_order = longest_first(old_order, costs)
    new_after: dict[str, list[str]] = {}
    for paper in serial:
        new_after.update(chain_constraints(new_order, set(by_paper[paper])))
    return {
        "papers in turn": simulate(old_order, costs, after=old_after),
        "global longest-first": simulate(new_order, costs, after=new_after),
    }


def jittered_savings(
    by_paper: Mapping[str, Sequence[str]],
    costs: Mapping[str, Cost],
    *,
    spread: float,
    draws: int,
    serial: Sequence[str] = (),
    seed: int = 0,
) -> list[float]:
    """Minutes saved by the global list over papers in turn when every run's CPU is off by an independent factor
    exp(N(0, spread²)) (the costs are partly estimates): one saving per draw, sorted."""
    import numpy as np

    rng = np.random.default_rng(seed)
    savings = []
    for _ in range(draws):
        factors = np.exp(rng.normal(0.0, spread, len(costs)))
        drawn = {
            run: replace(cost, cpu_s=cost.cpu_s * f) for (run, cost), f in zip(costs.items(), factors, strict=True)
        }
        result = compare(by_paper, drawn, serial)
        savings.append((result["papers in turn"].makespan - result["global longest-first"].makespan) / 60)
    return sorted(savings)


# ---------------------------------------------------------------------------------------------------------------
# command line
# ---------------------------------------------------------------------------------------------------------------


def _by_paper(papers: str) -> dict[str, list[str]]:
    return paper_runs(papers.split(), make_database())


def main(argv: Sequence[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("makefile", "order", "simulate"))
    parser.add_argument("--papers", default=" ".join(PAPERS))
    parser.add_argument("--serial", default="", help="papers whose runs never run two at once")
    parser.add_argument("--costs", type=Path, default=COSTS)
    parser.add_argument("--runs", type=Path, help="simulate: per-run CPU seconds of a reproduce-all (runs.csv)")
    parser.add_argument("--set", action="append", default=[], metavar="TARGET=CPU_S", help="override a run's CPU")
    parser.add_argument("--jitter", type=float, default=0.0, help="simulate: spread of log CPU errors (e.g. 0.3)")
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    by_paper = _by_paper(args.papers)
    costs = read_costs(args.costs)
    if args.runs:
        costs = {**costs, **measured_costs(args.runs, costs)}
    for item in args.set:
        target, _, cpu = item.partition("=")
        costs[target] = replace(costs.get(target, Cost(0.0)), cpu_s=float(cpu))
    if args.command == "makefile":
        text = schedule_makefile(by_paper, costs, args.serial.split())
        if args.out:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(text, encoding="utf-8")
        else:
            sys.stdout.write(text)
        return
    if args.command == "order":
        for run in longest_first([run for runs in by_paper.values() for run in runs], costs):
            print(run, costs[run].cpu_s if run in costs else "no cost")
        return
    missing = [run for runs in by_paper.values() for run in runs if run not in costs]
    if missing:
        raise SystemExit(f"reproduce_schedule: no cost for {missing}")
    for name, result in compare(by_paper, costs, args.serial.split()).items():
        print(f"{name}: {result.makespan / 60:.1f} min, idle core time {result.idle_core_s / 60:.1f} core-min")
        print("\n".join(paper_table(result, by_paper, costs)))
    if args.jitter > 0:
        savings = jittered_savings(by_paper, costs, spread=args.jitter, draws=args.draws, serial=args.serial.split())
        pick = [savings[int(q * (len(savings) - 1))] for q in (0.05, 0.5, 0.95)]
        print(f"saving with every run's CPU × exp(N(0, {args.jitter}²)), {args.draws} draws: median {pick[1]:.1f} min,")
        print(f"  5–95%: {pick[0]:.1f} to {pick[2]:.1f} min")


if __name__ == "__main__":
    main(sys.argv[1:])
