"""The table of figure kinds: what a config's ``plot:`` / ``plots:`` entries (``kind:``), ``dpbench plot``, the
analyses and the audit draw.

A figure kind is a function ``draw(source, **options) -> Drawing | Figure`` registered with
:func:`register_figure_kind` with its options, each declared once as a :class:`~dpbench.contract.Hyper` (name,
type, default, range or parser, meaning) — the scheme of the mechanisms' hyperparameters. ``reads`` says what
``source`` is: ``"run"`` — a finished run (:class:`dpbench.analysis.runs.Run`); only those kinds may be named in a
config's ``plot:`` entries — or what another stage computes (an analysis's table, an audit result), drawn by that
stage through :func:`draw`. ``draw`` receives every option resolved (defaults filled, values checked).

Built-in kinds live in this package (``curves`` — the default kind of ``plot:`` —, ``coverage``,
``audit_histogram``); a paper's own kinds in ``dpbench/papers/<paper>/figures.py`` (the bandit kind's in
``dpbench/bandits/figures.py``). Discovery imports them
(:func:`dpbench.registry.discover`): no generic module imports a kind. This module imports no matplotlib, so a
config's ``plot:`` is validated against the table without drawing anything.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from dpbench import registry
from dpbench.contract import MISSING, Hyper, HyperError, unknown_name

#: the kind of a ``plot:`` entry without ``kind:`` (every config written before kinds existed)
DEFAULT_KIND = "curves"
#: what a kind drawn from a finished run reads
RUN = "run"


@dataclass
class Drawing:
    """A drawn figure with the numbers behind it: ``points`` (the table drawn; for ``curves`` one row per point:
    panel keys, the curve's legend text ``curve``, x, ``centre``, ``lo``, ``hi``, ``se``, ``count``, ``private``)
    and ``slopes`` (one row per fitted curve; empty without ``fit``); ``files`` once saved."""

    figure: Any
    points: pd.DataFrame = field(default_factory=pd.DataFrame)
    slopes: pd.DataFrame = field(default_factory=pd.DataFrame)
    options: dict[str, Any] = field(default_factory=dict)
    panel: str = "dataset"  # the column keying the panels (``dataset`` resolved to ``dataset_id`` when one each)
    row: str | None = None
    files: list[Path] = field(default_factory=list)


@dataclass(frozen=True)
class FigureKind:
    """A row of :data:`FIGURE_KINDS`: ``draw(source, **options)``, its options (declared once), what it reads and
    a cross-option rule ``check(resolved)`` raising :class:`~dpbench.contract.HyperError`."""

    name: str
    summary: str
    draw: Callable[..., Any]
    options: Mapping[str, Hyper]
    reads: str = RUN
    check: Callable[[Mapping[str, Any]], None] | None = None


#: figure kind name → its row
FIGURE_KINDS: dict[str, FigureKind] = {}


def register_figure_kind(
    name: str,
    *,
    summary: str,
    options: Mapping[str, Hyper],
    reads: str = RUN,
    check: Callable[[Mapping[str, Any]], None] | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated ``draw(source, **options)`` as figure kind ``name``; each option needs its default,
    allowed by its declaration (checked here, at import)."""

    def decorator(draw: Callable[..., Any]) -> Callable[..., Any]:
        if name in FIGURE_KINDS and FIGURE_KINDS[name].draw is not draw:
            raise ValueError(f"figure kind {name!r} is registered twice")
        for key, spec in options.items():
            if spec.default is MISSING:
                raise TypeError(f"figure kind {name!r}: option {key!r} needs a default (Hyper(..., default=...))")
            if spec.parse is None and spec.default is not None:
                try:
                    spec.check(spec.default)
                except ValueError as err:
                    raise TypeError(f"figure kind {name!r}: default of {key} is not allowed: {err}") from None
        FIGURE_KINDS[name] = FigureKind(name, summary, draw, dict(options), reads, check)
        return draw

    return decorator


def get_figure_kind(name: str) -> FigureKind:
    """Figure kind ``name`` after discovery, or a KeyError suggesting close names."""
    registry.discover()
    if name in FIGURE_KINDS:
        return FIGURE_KINDS[name]
    raise KeyError(unknown_name("figure kind", name, FIGURE_KINDS, see="dpbench list figures") + registry.import_note())


def validate(kind: FigureKind, options: Mapping[str, Any], where: str = "") -> dict[str, Any]:
    """The given options of ``kind`` checked against their declarations (``None`` = the default, left out).

    An unknown name or a refused value raises :class:`~dpbench.contract.HyperError` naming the option as the field
    ``<where>.<option>``; a structured value's own error (naming its sub-field, e.g. ``plot.hlines[0].y``) passes
    through."""
    clean: dict[str, Any] = {}
    for key, value in options.items():
        name = f"{where}.{key}" if where else key
        if key not in kind.options:
            raise HyperError(name, unknown_name("plot option", key, kind.options, of=f" of figure kind {kind.name!r}",
                                               see=f"dpbench list figures {kind.name}"))  # fmt: skip
        if value is None:
            continue
        try:
            clean[key] = kind.options[key].check(value, name)
        except HyperError:
            raise
        except ValueError as err:
            if getattr(err, "field", None):  # a structured option's error naming its sub-field
                raise
            raise HyperError(name, str(err)) from None
    return clean


def resolve(kind: FigureKind, options: Mapping[str, Any], where: str = "") -> dict[str, Any]:
    """Every option of ``kind``: the given ones (:func:`validate`) over the defaults, then the cross-option rule."""
    resolved = {**{k: spec.default for k, spec in kind.options.items()}, **validate(kind, options, where)}
    if kind.check is not None:
        kind.check(resolved)
    return resolved


def draw(name: str, source: Any, **options: Any) -> Drawing:
    """Draw ``source`` as figure kind ``name`` with ``options`` (validated; defaults filled); nothing is written.
    Library callers get :class:`ValueError` naming the option."""
    kind = get_figure_kind(name)
    resolved = resolve(kind, options)
    out = kind.draw(source, **resolved)
    if isinstance(out, Drawing):
        return out
    return Drawing(out, options=resolved)
