"""Privacy audits (pure logic, no CLI; the command is :mod:`dpbench.commands.audit`).

* :mod:`dpbench.audit.whitebox` / :mod:`dpbench.audit.driver` — the white-box audit of the releases a mechanism
  declares (:func:`dpbench.mechanisms.released`): worst-case pair (:mod:`dpbench.audit.pairs`), Neyman–Pearson
  log-likelihood-ratio statistic joint over all releases of a run (or one user's reports for local DP), certified
  Clopper–Pearson bound, Gaussian-DP estimate with interval, exact ε of the releases as the yardstick, and negative
  controls whose exact ε is 1.3× and 3× the claim.
* :mod:`dpbench.audit.integrity` — what the white-box audit would otherwise take on trust, checked on real paired
  runs over a family of pairs: θ̂ unchanged when every release is held fixed (an undeclared data path otherwise),
  θ̂ unchanged by recording, declared scale/sensitivity the same on both datasets and the observed shift within the
  declared sensitivity, no atom or near-atom of the noise, every user's noise, θ̂'s own black-box bound.
* :mod:`dpbench.audit.request` — what ``dpbench audit`` was asked (:class:`AuditRequest`) and all it does with it.
* :mod:`dpbench.audit.blackbox` — the black-box audit of the final estimate θ̂ for mechanisms that declare no
  releases (external plug-ins), with its ÷10 / no-bound / 10ε negative controls.
* :mod:`dpbench.audit.stats` — the statistics both use.
"""

from dpbench.audit.blackbox import (
    BROKEN_VARIANTS,
    AuditResult,
    NeighbourPair,
    audit,
    broken_available,
    broken_copy,
    default_hyper,
    default_shape,
    fisher_direction,
    format_table,
    mechanism_inputs,
    neighbour_kind,
    neighbouring_pair,
    noise_patches,
    plot_histograms,
    project,
    run_mechanism,
)
from dpbench.audit.driver import CONTROLS, WhiteboxResult, audit_whitebox
from dpbench.audit.integrity import IntegrityResult, check_integrity, integrity_pairs, integrity_runs
from dpbench.audit.pairs import PairSpec, find_worst_pair
from dpbench.audit.stats import (
    THRESHOLD_LEVELS,
    BoundDetail,
    GdpEstimate,
    ProfileEstimate,
    audit_ceiling,
    clopper_pearson,
    detectable_epsilon,
    epsilon_lower_bound,
    gdp_estimate,
    profile_estimate,
)

__all__ = [
    "AuditResult", "BROKEN_VARIANTS", "BoundDetail", "CONTROLS", "GdpEstimate", "IntegrityResult", "NeighbourPair",
    "PairSpec", "ProfileEstimate", "THRESHOLD_LEVELS", "WhiteboxResult", "audit", "audit_ceiling", "audit_whitebox",
    "broken_available", "broken_copy", "check_integrity", "clopper_pearson", "default_hyper", "default_shape",
    "detectable_epsilon", "epsilon_lower_bound", "integrity_pairs", "integrity_runs",
    "find_worst_pair", "fisher_direction", "format_table", "gdp_estimate", "mechanism_inputs", "neighbour_kind",
    "neighbouring_pair", "noise_patches", "plot_histograms", "profile_estimate", "project", "run_mechanism",
]  # fmt: skip
