"""The speed record of ``make bench-all`` (issue 40): per-figure and per-mechanism CPU seconds of one full run, with
the machine, the commit and the load it was measured under, written as JSON and compared with the previous record.

A record is a report, never a test: the comparison prints the ratio now / before of every figure and mechanism both
records have, and flags a ratio above :data:`SLOWER` (or below 1/:data:`SLOWER`), so a regression is seen the day
it lands. The committed record (``benchmarks/record.json``) is replaced by copying a new one over it, with its
commit message saying what was measured.

Format (``version`` 1)::

    {"version": 1, "commit": "<git hash>", "date": "<UTC ISO>", "machine": {...}, "load": [1, 5, 15 min],
     "n_jobs": 2, "figures": {"<config stem>": {"paper": "...", "wall_s": ..., "cpu_s": ...}},
     "mechanisms": {"<mechanism>": {"fit_s": ..., "trials": ...}}}

``cpu_s`` of a figure: user + system seconds of its ``dpbench run`` process and its workers; ``fit_s`` of a
mechanism: the summed ``seconds`` of its trials (each the fit's wall time in a worker with one BLAS thread, i.e. its
CPU time when the worker has a core to itself).
"""

from __future__ import annotations

import json
import math
import os
import platform
import subprocess
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pandas as pd

RECORD_VERSION = 1
#: a ratio now / before beyond this factor (either way) is flagged in the comparison
SLOWER = 1.2
#: the committed record ``make bench-all`` compares against
DEFAULT_RECORD = Path("benchmarks/record.json")


def machine_info() -> dict[str, Any]:
    """The CPU model, core count, OS and Python of this machine (what a speed record depends on)."""
    model = platform.processor() or "unknown"
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        names = [line.split(":", 1)[1].strip() for line in cpuinfo.read_text().splitlines() if "model name" in line]
        model = names[0] if names else model
    return {"cpu": model, "cores": os.cpu_count(), "os": platform.platform(), "python": platform.python_version()}


def git_commit(root: Path = Path(".")) -> str:
    """The checked-out commit of ``root`` (with ``+dirty`` when files differ from it), or ``unknown``."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "-uno"], cwd=root, capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def mechanism_seconds(trials: pd.DataFrame) -> dict[str, dict[str, float]]:
    """Summed fit seconds and trial count per mechanism (rows of :func:`~dpbench.engine.bench.per_trial_costs`)."""
    if trials.empty:
        return {}
    grouped = trials.groupby("mechanism")["seconds"].agg(["sum", "size"])
    return {str(name): {"fit_s": float(row["sum"]), "trials": int(row["size"])} for name, row in grouped.iterrows()}


def make_record(
    figures: pd.DataFrame, trials: pd.DataFrame, n_jobs: int, load: tuple[float, ...], root: Path = Path(".")
) -> dict[str, Any]:
    """The record of one timed suite: ``figures`` one row per config (paper, figure, wall_s, cpu_s), ``trials`` one
    row per trial (mechanism, seconds)."""
    return {
        "version": RECORD_VERSION,
        "commit": git_commit(root),
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": machine_info(),
        "load": [round(float(v), 2) for v in load],
        "n_jobs": int(n_jobs),
        "figures": {
            str(row.figure): {"paper": str(row.paper), "wall_s": float(row.wall_s), "cpu_s": float(row.cpu_s)}
            for row in figures.itertuples()
        },
        "mechanisms": mechanism_seconds(trials),
    }


def check_record(record: Any, source: str) -> dict[str, Any]:
    """``record`` if it has the fields of a version-1 record; else ValueError naming ``source`` and the field."""
    if not isinstance(record, dict):
        raise ValueError(f"{source}: a speed record is a JSON object, got {type(record).__name__}")
    if record.get("version") != RECORD_VERSION:
        raise ValueError(f"{source}: field 'version' must be {RECORD_VERSION}, got {record.get('version')!r}")
    for key, inner in (("figures", "cpu_s"), ("mechanisms", "fit_s")):
        entries = record.get(key)
        if not isinstance(entries, dict):
            raise ValueError(f"{source}: field '{key}' must be an object of name → {{{inner}: seconds}}")
        for name, entry in entries.items():
            if not isinstance(entry, dict) or not isinstance(entry.get(inner), (int, float)):
                raise ValueError(f"{source}: field '{key}.{name}.{inner}' must be a number of seconds")
    return record


def read_record(path: Path) -> dict[str, Any]:
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}: not a JSON speed record ({err})") from None
    return check_record(raw, str(path))


def write_record(path: Path, record: dict[str, Any]) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(check_record(record, str(path)), indent=1, sort_keys=True) + "\n")


def compare_records(before: dict[str, Any], now: dict[str, Any]) -> pd.DataFrame:
    """One row per figure (cpu_s) and mechanism (fit_s) in both records: seconds before and now, ratio now / before
    (NaN when before is 0) and a flag: ``slower`` / ``faster`` beyond :data:`SLOWER`, else empty."""
    rows = []
    for key, field in (("figures", "cpu_s"), ("mechanisms", "fit_s")):
        for name in sorted(set(before[key]) & set(now[key])):
            old, new = float(before[key][name][field]), float(now[key][name][field])
            ratio = new / old if old > 0 else math.nan
            flag = "slower" if ratio > SLOWER else "faster" if ratio < 1.0 / SLOWER else ""
            rows.append({"kind": key[:-1], "name": name, "before_s": old, "now_s": new, "ratio": ratio, "flag": flag})
    return pd.DataFrame(rows, columns=["kind", "name", "before_s", "now_s", "ratio", "flag"])


def comparison_text(before: dict[str, Any], now: dict[str, Any]) -> str:
    """The printed comparison: both records' commit, machine and load, then the table of :func:`compare_records`
    and the figures / mechanisms only one of them has."""

    def header(label: str, record: dict[str, Any]) -> str:
        machine = record.get("machine", {})
        return (
            f"{label}: commit {str(record.get('commit', '?'))[:12]}, {record.get('date', '?')}, "
            f"{machine.get('cpu', '?')} × {machine.get('cores', '?')}, load {record.get('load', '?')}"
        )

    table = compare_records(before, now)
    lines = [header("before", before), header("now", now)]
    if table.empty:
        lines.append("no figure or mechanism in both records")
    else:
        with pd.option_context("display.width", 160, "display.max_rows", 1000):
            lines.append(table.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
        flagged = table[table["flag"] != ""]
        lines.append(f"{len(flagged)} of {len(table)} beyond ×{SLOWER} (either way); a loaded machine inflates both")
    for key in ("figures", "mechanisms"):
        only_now, only_before = sorted(set(now[key]) - set(before[key])), sorted(set(before[key]) - set(now[key]))
        if only_now:
            lines.append(f"new {key} (no previous record): {', '.join(only_now)}")
        if only_before:
            lines.append(f"{key} of the previous record not timed now: {', '.join(only_before)}")
    return "\n".join(lines)
