"""Per-figure wall time of the finished runs under a results folder (from each run's meta.json) → CSV, the
per-trial cost of each mechanism family over those runs (their trials.csv ``seconds``) → families.csv beside it, and,
when `make reproduce-all` left its per-command record runs.csv beside it, per paper the CPU seconds and the wall span
(first start to last end) → papers.csv, with a row ``all`` for the whole run.

Usage: python scripts/walltime_table.py RESULTS_DIR OUT.csv
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd

from dpbench import registry
from dpbench.engine.bench import family_costs, paper_config_sets, per_trial_costs


def figure_paper() -> dict[str, str]:
    """Config stem → paper (the folders of configs/, as `dpbench bench --papers` sees them)."""
    return {path.stem: paper for paper, paths in paper_config_sets(Path(".")).items() for path in paths}


def table(results: Path) -> pd.DataFrame:
    owner = figure_paper()
    rows = []
    for meta_path in sorted(results.glob("*/meta.json")):
        meta = json.loads(meta_path.read_text())
        name = meta_path.parent.name
        rows.append(
            {
                "paper": owner.get(name, "-"),
                "figure": name,
                "n_jobs": meta.get("n_jobs"),
                "rows": meta.get("rows"),
                "wall_s": round(float(meta.get("wall_seconds_last_invocation", 0)), 1),
            }
        )
    return pd.DataFrame(rows, columns=["paper", "figure", "n_jobs", "rows", "wall_s"]).sort_values(["paper", "figure"])


def trial_costs(results: Path) -> pd.DataFrame:
    """Per-trial seconds of every finished run (paper, figure, mechanism, family, n, seconds)."""
    owner = figure_paper()
    registry.discover()
    frames = [
        per_trial_costs(pd.read_csv(path)).assign(paper=owner.get(path.parent.name, "-"), figure=path.parent.name)
        for path in sorted(results.glob("*/trials.csv"))
        if (path.parent / "meta.json").is_file()
    ]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def paper_spans(runs: pd.DataFrame) -> pd.DataFrame:
    """Per paper from the per-command record (scripts/timed_run.py rows): CPU seconds summed, the wall span from its
    first command's start to its last command's end, and the number of commands; then the row ``all``."""

    def summary(frame: pd.DataFrame) -> dict[str, float]:
        return {
            "cpu_s": round(float(frame["cpu_s"].sum()), 1),
            "wall_span_s": round(float(frame["end"].max() - frame["start"].min()), 1),
            "start_s": round(float(frame["start"].min() - runs["start"].min()), 1),
            "end_s": round(float(frame["end"].max() - runs["start"].min()), 1),
            "commands": len(frame),
        }

    rows = [{"paper": paper, **summary(frame)} for paper, frame in runs.groupby("paper", sort=False)]
    rows.append({"paper": "all", **summary(runs)})
    return pd.DataFrame(rows)


def main(results: str, out: str) -> None:
    frame = table(Path(results))
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(out, index=False)
    print(frame.to_string(index=False) if len(frame) else "no finished runs")
    print(frame.groupby("paper")["wall_s"].sum().to_string())
    runs_csv = Path(out).parent / "runs.csv"
    if runs_csv.is_file():
        papers = paper_spans(pd.read_csv(runs_csv))
        papers.to_csv(Path(out).parent / "papers.csv", index=False)
        print(papers.to_string(index=False))
    costs = trial_costs(Path(results))
    if len(costs):
        families = family_costs(costs)
        families.to_csv(Path(out).parent / "families.csv", index=False)
        print(families.to_string(index=False, float_format=lambda v: f"{v:.4g}"))


if __name__ == "__main__":
    main(*sys.argv[1:3])
