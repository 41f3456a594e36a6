"""A plug-in that takes a set wall time per fit (for the tests that interrupt a run: the run must still be going when
Ctrl-C arrives, on any machine). θ̂ = 0, not private; the pace is read from ``DPBENCH_PACE_SECONDS`` (default 0)."""

import os
import time

import numpy as np

from dpbench.mechanisms import FitResult
from dpbench.registry import register_mechanism


@register_mechanism(
    "paced_zero", summary="θ̂ = 0 after a set pause (test plug-in)", privacy_model="none", neighbour="none"
)
def fit(X, y, epsilon, delta, rng):
    """θ̂ = 0, after sleeping ``DPBENCH_PACE_SECONDS`` (the wall time of a fit, whatever the CPU)."""
    time.sleep(float(os.environ.get("DPBENCH_PACE_SECONDS", "0")))
    return FitResult(np.zeros(np.shape(X)[1]))
