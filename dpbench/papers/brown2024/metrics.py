"""Brown et al. 2024's error metric (spec 005 §4-addendum)."""

from __future__ import annotations

import numpy as np

from dpbench.analysis.metrics import register_metric


@register_metric("brown_l2_error", "‖θ̃ − θ*‖₂ (raw units)")
def brown_l2_error(theta, dataset, stats, trial) -> float:
    """‖θ̂·s − θ*‖₂ with s = meta["error_scale"] (C/B after the max-norm scaling, else 1): the paper's metric."""
    scale = float(dataset.meta.get("error_scale", 1.0))
    return float(np.linalg.norm((np.asarray(theta) - dataset.population.theta) * scale))
