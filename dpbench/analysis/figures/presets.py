"""A run's figure presets and their files: which figures a run's config asks for (``plot:`` / ``plots:``, each of
a figure kind: ``kind:``, default curves), and drawing and writing them (``dpbench plot``): ``<stem>.png`` /
``.pdf`` and ``<stem>_slopes.csv`` next to ``trials.csv``. Each figure is drawn through the kinds' table
(:func:`dpbench.analysis.figures.kinds.draw`): its options are resolved once, there."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dpbench.analysis.figures.kinds import DEFAULT_KIND, Drawing, draw, get_figure_kind
from dpbench.analysis.figures.save import save_figures, write_text
from dpbench.analysis.runs import Run, load_run


def _safe(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in text)


def figure_stem(metric: str, x: str = "epsilon") -> str:
    """``figure_<metric>``, or ``figure_<metric>_vs_<x>`` when x is not ε."""
    safe = _safe(metric)
    return f"figure_{safe}" if x == "epsilon" else f"figure_{safe}_vs_{''.join(c if c.isalnum() else '_' for c in x)}"


def presets(
    run: Run, overrides: Mapping[str, Any] | None = None, only: str | None = None
) -> list[tuple[str, dict[str, Any]]]:
    """The figures of a run as (file stem, options; ``kind`` among them unless the default): one per named preset
    of the config's ``plots:`` (merged over ``plot:`` — the options of ``plot:`` its kind declares, when its kind
    is another) — or the ``plot:`` preset alone — and one per metric of a ``metrics:`` list.

    ``only`` selects one named preset; ``overrides`` (e.g. CLI flags) apply to it, or — without ``only`` — make one
    ad-hoc figure from ``plot:`` and the overrides (file ``figure_<metric>[_vs_<x>]`` unless ``out`` is given).
    """
    base = dict(run.config.get("plot") or {})
    named = {str(k): dict(v or {}) for k, v in (run.config.get("plots") or {}).items()}
    overrides = {k: v for k, v in (overrides or {}).items() if v is not None}
    if only is not None:
        if only not in named:
            raise ValueError(
                f"no figure preset {only!r} in {run.path / 'config.yaml'}; "
                f"presets: {', '.join(named) or '(none: only plot:)'}"
            )
        chosen: dict[str | None, dict[str, Any]] = {only: {**_shared(base, named[only]), **named[only], **overrides}}
    elif overrides or not named:
        chosen = {None: {**base, **overrides}}
    else:
        chosen = {name: {**_shared(base, opts), **opts} for name, opts in named.items()}
    figures = []
    for name, options in chosen.items():
        kind = options.get("kind", DEFAULT_KIND)
        metrics = options.pop("metrics", None)
        declared = get_figure_kind(kind).options
        if "metric" not in declared:
            figures.append((options.get("out") or f"figure_{_safe(name or kind)}", options))
            continue
        if "metric" in overrides or not metrics:
            metrics = [options.get("metric") or declared["metric"].default]
        for metric in metrics:
            stem = options.get("out") or (
                f"figure_{_safe(name)}" + (f"_{_safe(metric)}" if len(metrics) > 1 else "")
                if name
                else figure_stem(metric, options.get("x", "epsilon"))
            )
            figures.append((stem, {**options, "metric": metric, **({"out": stem} if "out" in declared else {})}))
    return figures


def _shared(base: Mapping[str, Any], entry: Mapping[str, Any]) -> dict[str, Any]:
    """The options of ``plot:`` a ``plots:`` entry inherits: all of them for the same kind, else those its kind
    declares too (e.g. ``title``)."""
    kind = entry.get("kind", DEFAULT_KIND)
    if base.get("kind", DEFAULT_KIND) == kind:
        return dict(base)
    declared = get_figure_kind(kind).options
    return {k: v for k, v in base.items() if k in declared}


def save(drawing: Drawing, folder: Path, stem: str) -> list[Path]:
    """Write ``<stem>.png`` and ``.pdf``, and ``<stem>_slopes.csv`` when the drawing has slopes (a stem with a
    folder part gets its folder made)."""
    (folder / stem).parent.mkdir(parents=True, exist_ok=True)
    written = save_figures(drawing.figure, folder / stem)
    if len(drawing.slopes):
        written.append(write_text(folder / f"{stem}_slopes.csv", drawing.slopes.to_csv(index=False)))
    drawing.files = written
    return written


def plot_presets(
    run_dir: str | Path,
    overrides: Mapping[str, Any] | None = None,
    only: str | None = None,
    out_dir: str | Path | None = None,
) -> list[Drawing]:
    """Draw and write every figure of :func:`presets` for the run in ``run_dir``, into ``out_dir`` (made if needed;
    default: the run folder)."""
    run = load_run(run_dir)
    folder = run.path if out_dir is None else Path(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    drawings = []
    for stem, options in presets(run, overrides, only):
        drawing = draw(options.pop("kind", DEFAULT_KIND), run, **options)
        save(drawing, folder, stem)
        drawings.append(drawing)
    return drawings


def plot_run(run_dir: str | Path, **options: Any) -> list[Path]:
    """Draw one figure with ``options`` (defaults: :data:`DEFAULTS`, not the config's preset) and write it.

    The file stem is ``out`` or ``figure_<metric>[_vs_<x>]``. Unknown options raise :class:`ValueError`.
    """
    run = load_run(run_dir)
    drawing = draw(DEFAULT_KIND, run, **options)
    o = drawing.options
    return save(drawing, run.path, o["out"] or figure_stem(o["metric"], o["x"]))
