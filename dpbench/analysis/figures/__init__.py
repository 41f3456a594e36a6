"""Figures: one module per figure kind, all saved by :func:`~dpbench.analysis.figures.save.save_figure` (PNG + PDF,
atomic, one DPI). A figure module draws from tables it is given; it never imports the runner.

* :mod:`~dpbench.analysis.figures.curves` — the preset-driven curves figure behind ``dpbench plot`` (any x, hue,
  panels, stat ± interval, baselines, fits); :mod:`~dpbench.analysis.figures.presets` — a run's presets, written;
* :mod:`~dpbench.analysis.figures.slopes` — fitted log–log slopes and reference power laws on a figure;
* :mod:`~dpbench.analysis.figures.panels` — median-with-bootstrap-band panels of the control experiments;
* :mod:`~dpbench.analysis.figures.profiles` — the leaderboard's performance profiles;
* :mod:`~dpbench.analysis.figures.styles`, :mod:`~dpbench.analysis.figures.text` — curve styles, axis texts.
"""
