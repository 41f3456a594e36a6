"""Analyses of the IHM paper (spec 004) run by ``dpbench analyze``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from dpbench import registry


@registry.register_analysis(
    "table2",
    summary="recompute the IHM paper's Table 2 and compare (004 §5.4); -o seed=50 resamples=10 output=F.csv",
    needs_runs=False,
)
def table2_analysis(runs: list[Path], options: dict[str, str], echo: Callable[[str], None]) -> None:
    from dpbench.papers.ihm.table2 import compare_table2, format_comparison

    o = registry.analysis_options("table2", options, {"seed": 50, "resamples": 10, "output": ""})
    table, missing = compare_table2(seed=o["seed"], resamples=o["resamples"], log=echo)
    echo(format_comparison(table))
    for key, reason in missing.items():
        echo(f"{key}: not available offline ({reason})")
    if o["output"]:
        table.to_csv(o["output"], index=False)
        echo(f"wrote {o['output']}")
