"""Per-figure wall time of the finished runs under a results folder (from each run's meta.json) → CSV + Markdown.

Usage: python scripts/walltime_table.py RESULTS_DIR OUT.csv
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd

from dpbench.bench import paper_config_sets


def figure_paper() -> dict[str, str]:
    """Config stem → paper (the folders of configs/, as `dpbench bench --papers` sees them)."""
    return {path.stem: paper for paper, paths in paper_config_sets(Path(".")).items() for path in paths}


def table(results: Path) -> pd.DataFrame:
    owner = figure_paper()
    rows = []
    for meta_path in sorted(results.glob("*/meta.json")):
        meta = json.loads(meta_path.read_text())
        name = meta_path.parent.name
        rows.append({"paper": owner.get(name, "-"), "figure": name, "n_jobs": meta.get("n_jobs"),
                     "rows": meta.get("rows"), "wall_s": round(float(meta.get("wall_seconds_last_invocation", 0)), 1)})
    return pd.DataFrame(rows, columns=["paper", "figure", "n_jobs", "rows", "wall_s"]).sort_values(["paper", "figure"])


def main(results: str, out: str) -> None:
    frame = table(Path(results))
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(out, index=False)
    print(frame.to_string(index=False) if len(frame) else "no finished runs")
    print(frame.groupby("paper")["wall_s"].sum().to_string())


if __name__ == "__main__":
    main(*sys.argv[1:3])
