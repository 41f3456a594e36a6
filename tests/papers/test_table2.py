"""Table 2 recomputation (004 §5.4): the columns' formulas and the split-variation flags."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpbench.linalg import gram_stats
from dpbench.mechanisms.sketch.calibration import k_ihm, solve_gamma_ihm
from dpbench.papers.ihm import table2


def test_row_formulas_by_hand():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((500, 4))
    X /= np.linalg.norm(X, axis=1).max()
    y = np.clip(X @ np.array([0.5, -0.2, 0.1, 0.0]) + 0.1 * rng.standard_normal(500), -1, 1)
    row = table2.table2_row(gram_stats(X, y))
    n, d, delta = 500, 4, 1 / 500**2
    residual = y - X @ np.linalg.lstsq(X, y, rcond=None)[0]
    gamma_mix = math.sqrt(max(d, math.log(10 / delta)) * math.log(1 / delta)) / 0.65
    eig = np.linalg.eigvalsh(X.T @ X)
    psi = max(0.0, solve_gamma_ihm(0.325, k_ihm(d, 3, delta / 10), delta, 3) - eig[0])
    assert row["n"] == n and row["d"] == d
    assert row["ols_mse"] == pytest.approx(residual @ residual / n)
    assert row["zero_mse"] == pytest.approx(y @ y / n)
    assert row["l_ratio"] == pytest.approx(residual @ residual / (2 * gamma_mix))
    assert row["lam_min_x"] == pytest.approx(eig[0])
    assert row["kappa_col"] == pytest.approx(math.sqrt((eig[-1] + psi) / (eig[0] + psi)) / (2 * math.sqrt(8) - 1))


def test_flags_use_the_range_over_splits():
    values = np.array([0.010, 0.012, 0.011])
    assert table2.flag_field("solar", "ols_mse", values) == ""  # paper 0.01 inside the range
    assert "ols_mse" in table2.flag_field("solar", "ols_mse", values * 3)
    assert table2.flag_field("solar", "lam_min_x", np.array([0.0, 2e-4])) == ""  # paper "<1e-3"
    assert "lam_min_x" in table2.flag_field("solar", "lam_min_x", np.array([0.5, 0.7]))
    assert table2.flag_field("concreteslump", "n", np.array([92, 93])) == ""
    assert "n:" in table2.flag_field("concreteslump", "n", np.array([93]))


def test_concrete_slump_matches_the_paper():
    result = table2.compare_dataset("concreteslump", resamples=2)
    assert result["flags"] == ""
    assert result["ours.d"] == 7
    assert result["ours.zero_mse"] == pytest.approx(0.153, rel=0.1)


def test_missing_data_is_reported_not_raised():
    table, missing = table2.compare_table2(["3droad", "servo"], resamples=2, log=lambda _m: None)
    assert list(table["dataset"]) == ["servo"]
    assert "3droad/data.csv.gz" in missing["3droad"]


def test_text_table_headers_say_which_side_is_ours_and_which_the_papers():
    table, _ = table2.compare_table2(["servo"], resamples=2, log=lambda _m: None)
    lines = table2.format_comparison(table).splitlines()
    assert "ours" in lines[0] and "paper" in lines[0] and "Table 2" in lines[0]
    names, sides, servo = lines[1], lines[2], lines[3]
    assert names.startswith("dataset") and sides.count("ours / paper") == 8
    # each "ours / paper" label starts in the column of its field's cell
    assert servo.startswith("servo") and servo.index(" / ") > sides.index("ours / paper")
