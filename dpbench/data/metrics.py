"""Moved to :mod:`dpbench.analysis.metrics` (the per-trial metrics beside the analysis that reads them); this name
is kept for plug-ins written against it."""

from dpbench.analysis.metrics import *  # noqa: F403
from dpbench.analysis.metrics import LABELS, METRICS, TrialCoordinates, get_metric, register_metric

__all__ = ["LABELS", "METRICS", "TrialCoordinates", "get_metric", "register_metric"]
