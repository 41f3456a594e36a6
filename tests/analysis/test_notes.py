"""dpbench.analysis.notes: what a run tells its user — clipping, benchmark outliers, noise-dominated results."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from dpbench.analysis.notes import clipping_notes, gaussian_noise_scale, noise_notes, run_notes


def trials(values: dict[tuple[float, str], list[float]]) -> pd.DataFrame:
    rows = [
        {"dataset_id": "d", "epsilon": eps, "label": label, "privacy_model": "central", "delta": 1e-6, "train_mse": v}
        for (eps, label), vs in values.items()
        for v in vs
    ]
    return pd.DataFrame(rows)


DATASETS = {"d": {"label": "mine", "n": 353, "ols_train_mse": 0.1, "zero_train_mse": 0.5, "lam_min_x": 0.02}}


def test_noise_dominated_epsilons_are_named_with_the_noise_scale():
    # r = (mse − 0.1)/0.4: ε = 0.5 → 0.9 and 0.75 (best 0.75 > 0.5), ε = 1 → 0.6, ε = 8 → 0.05
    table = trials({(0.5, "A"): [0.46], (0.5, "B"): [0.4], (1.0, "A"): [0.34], (8.0, "A"): [0.12]})
    (note,) = noise_notes(table, DATASETS)
    assert note.startswith("Noise-dominated: mine at ε ≤ 1: the best private mechanism's median excess is over 50%")
    sigma = math.sqrt(2 * math.log(1.25 / 1e-6)) / 1.0
    assert f"{sigma:.3g} per released statistic at ε = 1, n = 353" in note and "XᵀX is 0.02" in note
    assert noise_notes(trials({(8.0, "A"): [0.12]}), DATASETS) == []


def test_non_private_rows_do_not_count_and_only_shown_datasets_are_noted():
    table = trials({(1.0, "A"): [0.45]}).assign(privacy_model="none")
    assert noise_notes(table, DATASETS) == []
    meta = {"rows_clipped_x": 3, "labels_clipped_y": 0}
    datasets = {"d": {**DATASETS["d"], "meta": meta}, "e": {"label": "other", "n": 10, "meta": meta}}
    assert [n.split(":")[1].strip() for n in clipping_notes(datasets, shown=["d"])] == ["mine"]
    (note,) = [n for n in run_notes(table, datasets, shown=["other"])]
    assert note.startswith("Clipped: other: 3 of 10 training rows clipped") and "30.0%" in note


def test_gaussian_noise_scale():
    assert gaussian_noise_scale(1.0, 1e-5) == pytest.approx(4.844805262605389, rel=1e-12)
