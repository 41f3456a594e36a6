"""The analysis stage: a finished run → numbers, figures and pages. Nothing here runs a mechanism or writes a trial.

* :mod:`~dpbench.analysis.runs` — find and load run folders, read a metric per trial (a leaf; writes nothing);
* :mod:`~dpbench.analysis.stats` — the one summary (mean | median with a normal | bootstrap interval), the one
  bootstrap, the one log–log slope fit with its CI, the one number formatter;
* :mod:`~dpbench.analysis.figures` — one module per figure kind (curves, panels, profiles) and the one atomic
  save function;
* :mod:`~dpbench.analysis.report` — the per-run report page; :mod:`~dpbench.analysis.leaderboard` — ranks across
  datasets.
"""

from dpbench.analysis.runs import Run, find_runs, load_run

__all__ = ["Run", "find_runs", "load_run"]
