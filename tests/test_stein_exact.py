"""Issue 16 speed-ups of the Stein code that keep the numbers (to round-off) or the estimator: each against the
computation it replaces."""

from __future__ import annotations

import numpy as np

from dpbench.mechanisms.stein.families import get_family


def test_cubic_link_is_the_cube_over_three_to_one_ulp():
    z = np.random.default_rng(0).standard_normal(100_000) * np.geomspace(1e-3, 1e3, 100_000)
    fast, reference = get_family("cubic").mean(z), z**3 / 3.0
    assert np.all(np.abs(fast - reference) <= 2 * np.spacing(np.abs(reference)))
    np.testing.assert_array_equal(get_family("cubic").mean(np.array([0.0, 1.0, -3.0, 0.5])), [0, 1 / 3, -9, 1 / 24])
