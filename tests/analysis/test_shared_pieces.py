"""The small shared pieces of the analysis stage: the per-curve slopes, the column check, the panel-grid frame and
the first free style."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpbench.analysis.figures.panels import CAPTION_LINE_INCHES, finish_grid, panel_grid
from dpbench.analysis.figures.styles import first_free
from dpbench.analysis.runs import Run, require_columns
from dpbench.analysis.stats import curve_slopes, loglog_slope_ci


def _trials() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    rows = [
        {"label": label, "epsilon": eps, "n": n, "err": float(rng.lognormal(-power * np.log(n), 0.2))}
        for label, power in (("a", 1.0), ("b", 0.5))
        for eps in (1.0, 2.0)
        for n in (100, 400, 1600)
        for _ in range(8)
    ]
    return pd.DataFrame(rows)


def test_curve_slopes_is_loglog_slope_ci_per_curve_with_one_stream_in_curve_order():
    trials = _trials()
    got = list(curve_slopes(trials, ["label", "epsilon"], "n", "err", np.random.default_rng(0)))
    assert [key for key, _, _ in got] == [("a", 1.0), ("a", 2.0), ("b", 1.0), ("b", 2.0)]
    rng = np.random.default_rng(0)
    for (label, eps), groups, fit in got:
        part = trials[(trials["label"] == label) & (trials["epsilon"] == eps)]
        expected = {float(n): g["err"].to_numpy() for n, g in part.groupby("n")}
        assert sorted(groups) == [100.0, 400.0, 1600.0]
        assert fit == loglog_slope_ci(expected, rng, stat=np.median)
    assert got[0][2][0] == pytest.approx(-1.0, abs=0.1) and got[2][2][0] == pytest.approx(-0.5, abs=0.1)


def test_require_columns_names_the_analysis_the_file_and_the_missing_columns():
    run = Run(path=Path("/runs/x"), trials=_trials(), datasets={}, skipped={}, config={}, meta={})
    require_columns(run, ("err", "n"), "demo", "a demo run has them")  # present: no error
    with pytest.raises(ValueError, match=r"^demo: /runs/x/trials.csv lacks \['T', 'regret'\] \(a bandit run"):
        require_columns(run, ("T", "err", "regret"), "demo", "a bandit run has them")


def test_panel_grid_leaves_room_for_each_caption_line_and_the_legend():
    bare = panel_grid(2, 3, 10.0, 7.0, "")
    assert bare.axes.shape == (2, 3) and bare.caption == [] and bare.height == 7.0
    long = panel_grid(1, 1, 4.0, 3.0, "word " * 60)
    assert len(long.caption) > 1 and all(len(line) <= 4 * 13 for line in long.caption)
    assert long.height == pytest.approx(3.0 + CAPTION_LINE_INCHES * len(long.caption))
    assert tuple(long.fig.get_size_inches()) == pytest.approx((4.0, long.height))
    (line,) = long.axes[0, 0].plot([1, 2], [1, 2])
    fig = finish_grid(long, title="t", legend={"curve": line}, legend_inches=1.0)
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["curve"]
    assert fig.texts[-1].get_text() == "\n".join(long.caption)
    right = long.axes[0, 0].get_position().x1
    assert right <= 1 - 1.0 / 4.0 + 1e-9  # the panels stop where the legend's inches begin


def test_first_free_takes_the_first_unused_then_cycles():
    assert first_free(("o", "s", "^"), {"o"}, 0) == "s"
    assert first_free(("o", "s", "^"), set(), 5) == "o"
    assert first_free(("o", "s", "^"), {"o", "s", "^"}, 4) == "s"  # all taken: pool[4 % 3]
