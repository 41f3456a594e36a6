"""dpbench.analysis.leaderboard and `dpbench leaderboard`: normalised excess, ranks, win/tie/loss, profiles, report
section."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from dpbench.analysis.leaderboard import (
    build_leaderboard,
    performance_profile,
    ranks,
    summary_markdown,
    win_tie_loss,
)
from dpbench.analysis.report import build_report, write_report
from dpbench.analysis.runs import Run
from dpbench.cli import app
from dpbench.config import parse_config
from dpbench.engine import run


def fake_run(path: Path, cells: dict[tuple[str, str], list[float]], epsilon: float = 1.0) -> Run:
    """A run whose train MSEs are given per (dataset, label); every dataset has OLS 1.0 and ‖Y‖²/n 3.0."""
    rows = []
    for (dataset, label), values in cells.items():
        for t, value in enumerate(values):
            rows.append(
                {
                    "dataset": dataset,
                    "dataset_id": dataset,
                    "label": label,
                    "epsilon": epsilon,
                    "trial": t,
                    "privacy_model": "none" if label == "OLS" else "central",
                    "train_mse": value,
                }
            )
    datasets = {d: {"ols_train_mse": 1.0, "zero_train_mse": 3.0} for d, _ in cells}
    return Run(path, pd.DataFrame(rows), datasets, {}, {"name": path.name}, {})


def test_ranks_share_ties_and_put_missing_last():
    np.testing.assert_array_equal(ranks(np.array([[0.1, 0.1, 0.5, np.nan]])), [[1.5, 1.5, 3.0, 4.0]])


def test_win_tie_loss_uses_interval_separation():
    lo = np.array([[0.0, 0.5, np.nan], [0.0, 0.05, 0.2]])
    hi = np.array([[0.1, 0.6, np.nan], [0.1, 0.15, 0.3]])
    wtl = win_tie_loss(lo, hi)
    assert tuple(wtl[0, 1]) == (1, 1, 0)  # dataset 0: separated (win), dataset 1: overlap (tie)
    assert tuple(wtl[0, 2]) == (2, 0, 0)  # a mechanism that did not run loses
    assert tuple(wtl[2, 0]) == (0, 0, 2)


def test_normalised_excess_summary_and_reference(tmp_path):
    cells = {
        ("a", "OLS"): [1.0, 1.0],
        ("b", "OLS"): [1.0, 1.0],
        ("a", "good"): [1.2, 1.2],
        ("b", "good"): [1.4, 1.4],  # r = 0.1, 0.2
        ("a", "bad"): [2.0, 2.2],
        ("b", "bad"): [3.0, 3.0],  # r = 0.55, 1.0
    }
    board = build_leaderboard([fake_run(tmp_path / "r", cells)], replicates=200)
    assert board.reference == ["OLS"] and board.labels == ["good", "bad"]
    got = board.cells.set_index(["dataset", "label"])["mean"]
    assert got[("a", "good")] == pytest.approx(0.1) and got[("a", "bad")] == pytest.approx(0.55)
    summary = board.summary.set_index("label")
    assert summary.loc["good", "mean_rank"] == 1.0 and summary.loc["bad", "mean_rank"] == 2.0
    assert summary.loc["good", "median"] == pytest.approx(0.15)
    assert (summary.loc["good", "wins"], summary.loc["good", "losses"]) == (2, 0)
    assert summary.loc["good", "rank_lo"] <= 1.0 <= summary.loc["good", "rank_hi"]


def test_performance_profile_fractions(tmp_path):
    cells = {("a", "x"): [1.1], ("a", "y"): [1.4], ("b", "x"): [1.8], ("b", "y"): [1.2]}  # r: a 0.05/0.2, b 0.4/0.1
    board = build_leaderboard([fake_run(tmp_path / "r", cells)], replicates=20)
    profile = performance_profile(board, 1.0, np.array([1.0, 3.9, 4.001, 4.1]))
    assert profile["x"].tolist() == [0.5, 0.5, 1.0, 1.0]  # ratio 1 on a, 4 on b
    assert profile["y"].tolist() == [0.5, 0.5, 1.0, 1.0]  # ratio 4 on a, 1 on b


def test_the_tables_state_the_privacy_profile(tmp_path):
    """Each run's config says ``privacy:`` (default paper); the tables state it, and say when runs mix profiles."""
    cells = {("a", "x"): [1.1, 1.2], ("b", "x"): [1.3, 1.2]}
    strict = [fake_run(tmp_path / "r1", cells), fake_run(tmp_path / "r2", {("a", "y"): [1.4], ("b", "y"): [1.5]})]
    for run_ in strict:
        run_.config["privacy"] = "strict"
    board = build_leaderboard(strict, replicates=20)
    assert board.privacy == "strict"
    assert summary_markdown(board, 1.0).startswith("| mechanism (ε = 1; privacy: strict) |")
    assert build_leaderboard([fake_run(tmp_path / "r3", cells)], replicates=20).privacy == "paper"
    mixed = build_leaderboard([strict[0], fake_run(tmp_path / "r4", {("a", "y"): [1.4]})], replicates=20)
    assert mixed.privacy == "mixed (r1: strict, r4: paper)"


def test_the_same_label_in_two_runs_is_an_error(tmp_path):
    cells = {("a", "x"): [1.1], ("a", "y"): [1.4]}
    with pytest.raises(ValueError, match="label 'x' on dataset 'a' at ε = 1 appears in more than one run"):
        build_leaderboard([fake_run(tmp_path / "r1", cells), fake_run(tmp_path / "r2", cells)], replicates=20)


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("lb")
    base = {
        "seed": 1,
        "trials": 6,
        "trial_block": 6,
        "epsilons": [0.5, 4.0],
        "output_dir": str(root),
        "datasets": [{"loader": "sphere_linear", "label": f"n={n}", "options": {"n": n, "d": 3}} for n in (300, 3000)],
    }
    first = run(
        parse_config({**base, "name": "main", "mechanisms": ["ols", "adassp", "tukey_em"]}),
        n_jobs=1,
        progress=False,
        log=lambda m: None,
    )
    second = run(
        parse_config({**base, "name": "extra", "mechanisms": [{"mechanism": "dpgd", "hyper": {"T": 2}}]}),
        n_jobs=1,
        progress=False,
        log=lambda m: None,
    )
    return first, second


def test_cli_ranks_several_runs_and_writes_the_profile(two_runs, tmp_path):
    first, second = two_runs
    out = tmp_path / "board"
    result = CliRunner().invoke(
        app, ["leaderboard", str(first), str(second), "--out", str(out), "-e", "4", "--bootstrap", "50"]
    )
    assert result.exit_code == 0, result.output
    assert "| mechanism (ε = 4; privacy: paper) |" in result.output
    assert "dpgd" in result.output and "tukey_em" in result.output
    assert "ols" not in result.output.split("wrote")[0].split("\n", 2)[2]  # the reference is not ranked
    for name in ("leaderboard.md", "leaderboard_cells.csv", "performance_profile.png", "performance_profile.pdf"):
        assert (out / name).stat().st_size > 0
    assert CliRunner().invoke(app, ["leaderboard", str(tmp_path / "nothing")]).exit_code == 2


def test_report_has_a_leaderboard_section(two_runs):
    first, _ = two_runs
    report = build_report(first, metrics=["train_mse"])
    headings = [getattr(b, "text", "") for b in report.blocks]
    assert "Leaderboard across datasets" in headings and "ε = 4" in headings
    written = write_report(first, metrics=["train_mse"])
    assert "performance_profile.png" in written[0].read_text()


def test_one_mechanism_and_one_epsilon_leaderboard(tmp_path):
    """A run with one private mechanism at one ε: the table, the matrix note and the files, no bare KeyError."""
    config = {
        "name": "single",
        "output_dir": str(tmp_path / "results"),
        "seed": 1,
        "trials": 3,
        "epsilons": [1.0],
        "datasets": [{"loader": "sphere_linear", "label": f"n={n}", "options": {"n": n, "d": 3}} for n in (300, 900)],
        "mechanisms": ["adassp"],
    }
    run_dir = run(parse_config(config), n_jobs=1, progress=False, log=lambda m: None)
    result = CliRunner().invoke(app, ["leaderboard", str(run_dir), "--bootstrap", "20"])
    assert result.exit_code == 0, result.output
    assert "| adassp |" in result.output and "error" not in result.output
    text = (run_dir / "leaderboard" / "leaderboard.md").read_text()
    assert "no pair to compare" in text
    assert (run_dir / "leaderboard" / "performance_profile.png").stat().st_size > 0
    assert "<table" in (run_dir / "leaderboard" / "leaderboard.html").read_text()
    report = CliRunner().invoke(app, ["report", str(run_dir)])
    assert report.exit_code == 0, report.output
    only_ols = run(
        parse_config({**config, "name": "only_ols", "mechanisms": ["ols"]}),
        n_jobs=1,
        progress=False,
        log=lambda m: None,
    )
    result = CliRunner().invoke(app, ["leaderboard", str(only_ols)])
    assert result.exit_code == 2 and "nothing to rank" in result.output


def test_fallback_releases_are_counted_in_the_table_and_the_notes(tmp_path):
    """Trials whose ``info.fallback`` is 1 (TukeyEM's failed PTR test → θ̂ = 0) are counted per dataset and ε."""
    cells = {(d, lab): [2.0, 2.1, 1.9] for d in ("a", "b", "c") for lab in ("AdaSSP", "TukeyEM")}
    run = fake_run(tmp_path, cells)
    fell = (run.trials["label"] == "TukeyEM") & run.trials["dataset"].isin(["a", "b"])
    fell |= (run.trials["label"] == "TukeyEM") & (run.trials["dataset"] == "c") & (run.trials["trial"] == 0)
    run.trials["info.fallback"] = fell.astype(float).where(run.trials["label"] == "TukeyEM")  # NaN for AdaSSP
    board = build_leaderboard([run], replicates=20)
    row = board.summary.set_index("label").loc["TukeyEM"]
    assert row["fallback_datasets"] == 2 and board.summary.set_index("label").loc["AdaSSP", "fallback_datasets"] == 0
    assert "| 3 / 3, fallback on 2 |" in summary_markdown(board, 1.0)
    assert (
        "TukeyEM at ε = 1: the data-independent fallback (info.fallback, e.g. θ̂ = 0 after a failed PTR test) "
        "in 7 of 9 trials — in every trial on 2 of 3 datasets"
    ) in board.notes


def test_tukey_em_records_its_fallback():
    from dpbench import registry

    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (300, 3))
    y = X @ [0.5, 0.2, -0.1]
    fit = registry.get_mechanism("tukey_em").fit
    failed = fit(X, y, 0.1, 1e-6, np.random.default_rng(0))  # m = 100 models: the PTR test cannot pass
    assert failed.info["fallback"] == 1 and failed.info["ptr_passed"] == 0 and not failed.theta.any()
    X = rng.uniform(-1, 1, (20000, 2))
    passed = fit(X, X @ [0.5, -0.5], 10.0, 1e-6, np.random.default_rng(0))
    assert passed.info["ptr_passed"] == 1 and passed.info["fallback"] == 0


def test_report_counts_fallbacks(two_runs):
    first, _ = two_runs
    text = write_report(first, metrics=["train_mse"])[0].read_text()
    assert "**Fallback**: tukey_em at ε = " in text and "in every trial on" in text


def test_wide_intervals_say_why_a_last_rank_has_no_loss_and_intervals_stop_at_zero(tmp_path):
    """Issue 39 item 7: a mechanism ranked last on every dataset, with one wild trial per cell, has intervals that
    overlap everything (0 wins, 0 losses): a note says the rank orders the means only; r ≥ 0 bounds every interval."""
    cells = {}
    for d in "abc":
        cells[(d, "good")] = [1.1, 1.1, 1.2]
        cells[(d, "mid")] = [1.3, 1.3, 1.4]
        cells[(d, "wild")] = [1.0, 1.0, 40.0]  # r = 0, 0, 19.5: mean 6.5, normal interval reaching below 0
    board = build_leaderboard([fake_run(tmp_path / "r", cells)], replicates=50)
    wild = board.summary.set_index("label").loc["wild"]
    assert wild["mean_rank"] == 3.0 and (wild["wins"], wild["losses"]) == (0, 0)
    assert (board.cells["lo"] >= 0).all()
    (note,) = [n for n in board.notes if "wild" in n]
    assert "mean rank 3.00 of 3 but 0 wins and 0 losses" in note and "R ≤ 3 trials" in note
    assert "datasets where the 95% intervals separate / overlap" in summary_markdown(board, 1.0)


def test_not_private_datasets_are_flagged(tmp_path):
    cells = {(d, lab): [1.1 + i / 10] for d in "ab" for i, lab in enumerate(["x", "y"])}
    run_ = fake_run(tmp_path / "r", cells)
    run_.datasets["b"]["meta"] = {"bounds": "benchmark"}
    board = build_leaderboard([run_], replicates=20)
    assert board.not_private == ["b"]
    assert "datasets (‡ 1 not private)" in summary_markdown(board, 1.0).splitlines()[0]
    assert any(n.startswith("Not private: b (bounds: benchmark") for n in board.notes)


def test_vectorised_ranks_equal_pandas_row_by_row():
    """ranks() over a (replicates, datasets, labels) block equals pandas' average rank of every row, NaN last."""
    rng = np.random.default_rng(4)
    block = rng.integers(0, 4, size=(6, 5, 7)).astype(float)  # many ties
    block[rng.random(block.shape) < 0.15] = np.nan
    expected = np.array(
        [
            [pd.Series(np.where(np.isnan(row), np.inf, row)).rank(method="average").to_numpy() for row in rows]
            for rows in block
        ]
    )
    np.testing.assert_array_equal(ranks(block), expected)
    np.testing.assert_array_equal(ranks(block[0]), expected[0])


def test_profile_lines_are_distinct_for_a_full_board():
    """14+ mechanisms: no two lines share colour and marker, nor colour and line style (the colour cycle has 10);
    the figure draws them with those styles."""
    import pandas as pd

    from dpbench.analysis.figures.profiles import line_style, profiles_figure

    styles = [line_style(j) for j in range(40)]
    assert len({(s["color"], s["marker"]) for s in styles}) == 40
    assert len({(s["color"], s["linestyle"]) for s in styles}) == 40
    labels = [f"m{j}" for j in range(14)]
    table = pd.DataFrame({"tau": [1.0, 2.0], **{lab: [0.5, 1.0] for lab in labels}})
    lines = profiles_figure({1.0: table}, labels, 30).axes[0].get_lines()
    drawn = {(line.get_color(), line.get_marker(), line.get_linestyle()) for line in lines}
    assert len(drawn) == 14
