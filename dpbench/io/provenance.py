"""Where the running code comes from: the git commit of the dpbench source tree (recorded in a run's meta.json and
printed in a report). A leaf: imports nothing from dpbench."""

from __future__ import annotations

import subprocess
from pathlib import Path


def git_commit() -> str | None:
    """The commit of the installed dpbench source tree, if it is a git checkout."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            cwd=Path(__file__).resolve().parent,
        )
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None
