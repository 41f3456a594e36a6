"""Ferrando et al. 2022 OLS reproduction (spec 005 §7a): the two calibrations' scales and one trial's outputs."""

from __future__ import annotations

import numpy as np
import pytest

from dpbench.papers.intervals import ferrando


def test_corrected_scales_are_the_l1_sensitivities_over_a_third_of_epsilon():
    scales = ferrando.Scales.of("corrected", 3.0)  # ε/3 = 1
    assert scales.xty == pytest.approx(np.full(4, 2 * 4 * 5.0 * 210.0))
    assert scales.xtx == pytest.approx(np.full((4, 4), 4 * 5 * 25.0))
    code = ferrando.Scales.of("code", 3.0)
    assert code.xtx[0, 0] == 25.0 and code.xtx[0, 1] == 50.0 and code.xty[0] == pytest.approx(350.0)
    # the code's σ̂² scale parses as Δ/(3ε): 9× below Δ/(ε/3)
    y, beta = np.array([1.0, 2.0]), np.zeros(4)
    assert ferrando.sigma_noise_scale("code", 3.0, y, beta, 14) == pytest.approx(2.0 / 10 / 9.0)


def test_one_trial_gives_ordered_intervals_for_each_method():
    out = ferrando.one_trial(200, 5.0, "corrected", 50, np.random.default_rng(0))
    for method in ("standard", "private", "bootstrap"):
        assert out[f"{method}_lo"] < out[f"{method}_hi"]
    with pytest.raises(ValueError, match="calibration"):
        ferrando.Scales.of("paper", 1.0)
