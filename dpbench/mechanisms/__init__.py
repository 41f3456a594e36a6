"""Private regression mechanisms: one module per mechanism, each registering its ``fit`` (see registry)."""

from dpbench.mechanisms._base import FitResult, Release, as_fit_result, check_inputs, record_releases, released

__all__ = ["FitResult", "Release", "as_fit_result", "check_inputs", "record_releases", "released"]
