"""Run one command and append its wall span and CPU seconds to a CSV (`make reproduce-all`'s per-run record).

Usage: python scripts/timed_run.py LOG.csv PAPER TARGET -- COMMAND [ARGS...]

Appends ``paper,target,command,start,end,wall_s,cpu_s,status``: start and end in epoch seconds, cpu_s the user +
system seconds of the command and every descendant it waited for (its workers), as ``/usr/bin/time`` counts them.
The exit status is passed on. Rows of concurrent runs (``make -j``) are appended under an exclusive lock.
"""

from __future__ import annotations

import csv
import fcntl
import io
import resource
import subprocess
import sys
import time
from pathlib import Path

FIELDS = ("paper", "target", "command", "start", "end", "wall_s", "cpu_s", "status")


def children_cpu() -> float:
    """User + system seconds of the waited-for descendants of this process so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def append_row(log: Path, row: dict[str, object]) -> None:
    """One CSV row appended under an exclusive lock (a header first if the file is new or empty)."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a", encoding="utf-8", newline="") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            buffer = io.StringIO()
            writer = csv.DictWriter(buffer, fieldnames=FIELDS)
            if handle.tell() == 0:
                writer.writeheader()
            writer.writerow(row)
            handle.write(buffer.getvalue())
            handle.flush()
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def timed(log: Path, paper: str, target: str, command: list[str]) -> int:
    """Run ``command``, record its row in ``log``, return its exit status."""
    cpu0, start = children_cpu(), time.time()
    status = subprocess.call(command)
    end, cpu = time.time(), children_cpu() - cpu0
    row = {
        "paper": paper,
        "target": target,
        "command": " ".join(command),
        "start": f"{start:.3f}",
        "end": f"{end:.3f}",
        "wall_s": f"{end - start:.3f}",
        "cpu_s": f"{cpu:.3f}",
        "status": status,
    }
    append_row(log, row)
    return status


def main(argv: list[str]) -> int:
    if len(argv) < 5 or argv[3] != "--":
        sys.exit("usage: timed_run.py LOG.csv PAPER TARGET -- COMMAND [ARGS...]")
    log, paper, target = Path(argv[0]), argv[1], argv[2]
    return timed(log, paper, target, argv[4:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
