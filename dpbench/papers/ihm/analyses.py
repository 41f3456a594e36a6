"""Analyses of the IHM paper (spec 004) run by ``dpbench analyze``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from dpbench import registry


@registry.register_analysis(
    "table2", summary="recompute the IHM paper's Table 2 and compare (004 §5.4); -o seed=50 resamples=10 output=F.csv",
    needs_runs=False,
)
def table2_analysis(runs: list[Path], options: dict[str, str], echo: Callable[[str], None]) -> None:
    from dpbench.papers.ihm.table2 import compare_table2, format_comparison

    unknown = set(options) - {"seed", "resamples", "output"}
    if unknown:
        raise ValueError(f"table2: unknown options {sorted(unknown)} (allowed: seed, resamples, output)")
    seed = int(options.get("seed", 50))
    resamples = int(options.get("resamples", 10))
    table, missing = compare_table2(seed=seed, resamples=resamples, log=echo)
    echo(format_comparison(table))
    for key, reason in missing.items():
        echo(f"{key}: not available offline ({reason})")
    if options.get("output"):
        table.to_csv(options["output"], index=False)
        echo(f"wrote {options['output']}")
