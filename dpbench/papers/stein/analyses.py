"""Analyses of the Stein GLM paper (spec 003) run by ``dpbench analyze NAME RUN`` / ``dpbench report RUN``.

Its figures are generic presets (``plots:`` in configs/stein/*.yaml); what is left here is the §6.6 claim table.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd

from dpbench import registry
from dpbench.analysis.runs import load_run, require_columns
from dpbench.io.atomic import write_atomic

#: spec 003 §6.6 (median err2; literal 10 trials with c0 = 1, central 20 trials with c0 = 4)
SPEC_TABLE_66 = {
    (10, 100_000): (1.29, 1.20, 1.44, 0.61, 0.045, 0.012, 2e-3),
    (10, 300_000): (1.22, 1.15, 1.66, 0.026, 0.0057, 0.0013, 5e-4),
    (10, 700_000): (10.1, 2.16, 1.22, 0.0044, 0.0015, 0.0004, 5e-4),
    (20, 700_000): (1.73, 2.12, 1.25, 0.096, 0.010, 0.003, 5e-4),
}
TABLE_COLUMNS = (("literal", 4), ("literal", 10), ("literal", 20), ("central", 4), ("central", 10), ("central", 20))


def table_66(trials: pd.DataFrame) -> str:
    """Markdown table: dpbench medians of ``stein_err2`` next to the spec's §6.6 values ("ours / spec").

    Rows (p, n) come from the dataset label "p = <p>" and the ``n`` column; columns are the curve labels
    ``literal`` / ``central`` at ε ∈ {4, 10, 20} and ``non-private Stein`` (configs/stein/stein_table66.yaml).
    """
    p_of = trials["dataset"].astype(str).str.extract(r"p = (\d+)")[0]
    if p_of.isna().any():
        raise ValueError("stein_table66: every dataset label must read 'p = <p>' (configs/stein/stein_table66.yaml)")
    frame = trials.assign(_p=p_of.astype(int))
    med = frame.groupby(["_p", "n", "label", "epsilon"])["stein_err2"].median()
    head = "| p | n | " + " | ".join(f"ε = {e:g} {lab}" for lab, e in TABLE_COLUMNS) + " | non-private Stein |"
    lines = [head, "|" + "---|" * (len(TABLE_COLUMNS) + 3)]
    for (p, n), spec in SPEC_TABLE_66.items():
        cells = []
        for (lab, e), ref in zip(TABLE_COLUMNS, spec, strict=False):
            got = med.get((p, n, lab, float(e)), float("nan"))
            cells.append(f"{got:.3g} / {ref:g}")
        nonpriv = frame[(frame["_p"] == p) & (frame["n"] == n) & (frame["label"] == "non-private Stein")]
        cells.append(f"{nonpriv['stein_err2'].median():.2g} / ≈{spec[-1]:g}")
        lines.append(f"| {p} | {n:,} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


@registry.register_analysis(
    "stein_table66", summary="spec 003 §6.6 table (median err2, ours / spec) from a stein_table66 run → table66.md"
)
def stein_table66(runs: list[Path], options: dict[str, str], echo: Callable[[str], None]) -> list[Path]:
    registry.analysis_options("stein_table66", options, {})
    written = []
    for run_dir in runs:
        run = load_run(run_dir)
        require_columns(run, ("stein_err2",), "stein_table66", "a stein_table66 run has it")
        text = table_66(run.trials)
        path = run.path / "table66.md"
        write_atomic(path, text + "\n")
        echo(text)
        echo(f"wrote {path}")
        written.append(path)
    return written
