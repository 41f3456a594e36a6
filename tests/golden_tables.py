"""Compare a run's trials.csv with a stored golden table, value by value, with a per-case tolerance.

Why values and not a hash of bytes: the same code on another CPU picks another BLAS kernel (OpenBLAS: Haswell,
SkylakeX, Sandybridge, Zen, NEON …), whose sums are ordered differently, so the last bits of every statistic that
goes through a matrix product legitimately differ. A golden test must catch a change of *numbers* (a formula, a
calibration, a seed, the order of rng draws), not a change of *kernel*.

Comparison, cell by cell (after aligning rows on the trial's coordinates):
- text columns, and which cells are missing: exactly equal;
- numbers: |a − b| ≤ rtol · max(|a|, |b|, scale_c), where scale_c = 1e-3 · max |column c| (a floor for cells near
  zero: an excess over the OLS floor, or a difference of two nearly equal MSEs, carries the absolute error of its
  operands, which is relative to the column's magnitude, not to the small difference).
A failure names the worst cell: its column, its row's coordinates, both values and their relative difference.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

TIMING_COLUMNS = ("seconds", "cpu_seconds")
COORDINATE_COLUMNS = ("dataset_id", "mechanism", "label", "epsilon", "delta", "data_draw", "n", "d", "trial", "T")
SCALE_FLOOR = 1e-3


@dataclass(frozen=True)
class Mismatch:
    """The worst disagreement between a table and its golden copy."""

    column: str
    where: str
    ours: object
    golden: object
    relative: float

    def __str__(self) -> str:
        return (
            f"worst cell: column {self.column!r} at {self.where}: ours {self.ours!r} vs golden {self.golden!r} "
            f"(relative difference {self.relative:.3g})"
        )


def comparable(table: pd.DataFrame) -> pd.DataFrame:
    """The table without its timing columns, rows sorted by the trial's coordinates, columns by name."""
    table = table.drop(columns=[c for c in TIMING_COLUMNS if c in table.columns])
    keys = [c for c in COORDINATE_COLUMNS if c in table.columns]
    table = table.sort_values(keys, kind="stable").reset_index(drop=True)
    return table[sorted(table.columns)]


def read_table(path: Path) -> pd.DataFrame:
    """Read a CSV back; pandas parses each float to within one ulp of what was written (far below any tolerance)."""
    return comparable(pd.read_csv(path))


def write_table(table: pd.DataFrame, path: Path) -> None:
    """Write the comparable table; pandas writes floats in their shortest round-trip form (repr)."""
    comparable(table).to_csv(path, index=False)


def _row_label(table: pd.DataFrame, row: int) -> str:
    keys = [c for c in COORDINATE_COLUMNS if c in table.columns]
    return ", ".join(f"{k}={table.at[row, k]}" for k in keys)


def _relative_gap(ours: np.ndarray, golden: np.ndarray) -> np.ndarray:
    """|a − b| / max(|a|, |b|, 1e-3 · max|column|); 0 where both are equal (including both infinite)."""
    finite = np.isfinite(ours) & np.isfinite(golden)
    scale_floor = SCALE_FLOOR * max(
        np.max(np.abs(golden[finite]), initial=0.0), np.max(np.abs(ours[finite]), initial=0.0)
    )
    denominator = np.maximum(np.maximum(np.abs(ours), np.abs(golden)), scale_floor)
    with np.errstate(invalid="ignore", divide="ignore"):
        gap = np.where(ours == golden, 0.0, np.abs(ours - golden) / denominator)
    return np.where(np.isnan(gap), np.inf, gap)


def worst_mismatch(ours: pd.DataFrame, golden: pd.DataFrame, rtol: float) -> Mismatch | None:
    """The worst cell outside tolerance, or None when the tables agree (see the module docstring)."""
    ours, golden = comparable(ours), comparable(golden)
    if list(ours.columns) != list(golden.columns):
        missing = sorted(set(golden.columns) - set(ours.columns))
        extra = sorted(set(ours.columns) - set(golden.columns))
        return Mismatch("<columns>", "header", f"extra {extra}", f"missing {missing}", np.inf)
    if len(ours) != len(golden):
        return Mismatch("<rows>", "table", len(ours), len(golden), np.inf)
    worst: Mismatch | None = None
    for column in golden.columns:
        a, b = ours[column], golden[column]
        if (a.isna() != b.isna()).any():
            row = int(np.flatnonzero((a.isna() != b.isna()).to_numpy())[0])
            return Mismatch(column, _row_label(golden, row), a.iloc[row], b.iloc[row], np.inf)
        present = (~b.isna()).to_numpy()
        numeric = pd.api.types.is_numeric_dtype(a) and pd.api.types.is_numeric_dtype(b)
        if not numeric or pd.api.types.is_bool_dtype(b):
            differs = (a.astype(str) != b.astype(str)).to_numpy() & present
            if differs.any():
                row = int(np.flatnonzero(differs)[0])
                return Mismatch(column, _row_label(golden, row), a.iloc[row], b.iloc[row], np.inf)
            continue
        gap = np.zeros(len(golden))
        gap[present] = _relative_gap(a.to_numpy(float)[present], b.to_numpy(float)[present])
        row = int(np.argmax(gap))
        if gap[row] > rtol and (worst is None or gap[row] > worst.relative):
            worst = Mismatch(column, _row_label(golden, row), a.iloc[row], b.iloc[row], float(gap[row]))
    return worst


def largest_gap(ours: pd.DataFrame, golden: pd.DataFrame) -> float:
    """The largest relative difference over all numeric cells (for reporting kernel-to-kernel spread)."""
    mismatch = worst_mismatch(ours, golden, rtol=0.0)
    return 0.0 if mismatch is None else mismatch.relative
