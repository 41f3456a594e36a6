"""Private regression mechanisms: one module per mechanism, each registering its ``fit`` (see registry)."""

from dpbench.mechanisms._base import FitResult, as_fit_result, check_inputs

__all__ = ["FitResult", "as_fit_result", "check_inputs"]
