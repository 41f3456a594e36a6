"""Figures say what they draw: the statistic/interval line comes from the options used, the config's caption only adds
context, reference lines are captioned only when drawn, and every curve of a panel has its own (colour, line style)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import yaml
from matplotlib.colors import to_hex
from typer.testing import CliRunner

from dpbench import registry
from dpbench.analysis.figures.curves import render
from dpbench.analysis.figures.styles import curve_styles, registered_colours
from dpbench.cli import app
from dpbench.config import parse_config
from dpbench.engine import run

ROOT = Path(__file__).resolve().parents[2]
#: what a config caption must not say: the statistic, the band, the reference lines (the figure writes those)
DRAWING_WORDS = re.compile(
    r"±\s?1\.96|\bbands?\b|\bmean over\b|\bmean ±|[Mm]edians? ± bootstrap|dotted = OLS|"
    r"dash-dot = θ = 0"
)


def figure_texts(figure) -> str:
    return "\n".join(text.get_text() for text in figure.texts)


@pytest.fixture(scope="module")
def figure1_run(tmp_path_factory):
    """Figure 1's config on one dataset, 3 trials, 2 ε."""
    raw = yaml.safe_load((ROOT / "configs" / "ihm_vs_adassp.yaml").read_text())
    raw.update(
        datasets=raw["datasets"][0:1],
        trials=3,
        epsilons=[0.5, 5.0],
        n_jobs=1,
        output_dir=str(tmp_path_factory.mktemp("fig1")),
    )
    return run(parse_config(raw), n_jobs=1, progress=False, log=lambda m: None)


def readme_adhoc_flags() -> list[str]:
    """The flags of the README's ad-hoc view (``dpbench plot results/ihm_vs_adassp --metric … --stat …``)."""
    readme = (ROOT / "README.md").read_text()
    match = re.search(r"^dpbench plot results/ihm_vs_adassp (--[^#\n]+)", readme, flags=re.M)
    assert match, "README.md shows no ad-hoc `dpbench plot results/ihm_vs_adassp --…` view"
    return shlex.split(match.group(1))


def test_the_readmes_adhoc_view_is_captioned_by_its_own_options(figure1_run):
    flags = readme_adhoc_flags()
    result = CliRunner().invoke(app, ["plot", str(figure1_run), *flags])
    assert result.exit_code == 0, result.output
    options = {flags[i].lstrip("-").replace("-", "_"): flags[i + 1] for i in range(0, len(flags), 2)}
    texts = figure_texts(render(figure1_run, **options).figure)
    assert f"Points: {options['stat']} over R = 3 trials per point" in texts
    assert "bootstrap CI (1000 resamples" in texts if options.get("interval") == "bootstrap" else True
    assert not DRAWING_WORDS.search(texts.split("Points:")[0]), texts  # the caption says nothing about the drawing
    assert "Reproduction of Lev et al. Fig. 1" in texts


def test_references_are_captioned_only_when_drawn(figure1_run):
    drawn = figure_texts(render(figure1_run, metric="train_mse").figure)
    assert "Grey reference lines (per dataset): dotted = non-private OLS, dash-dot = θ = 0." in drawn
    logy = figure_texts(render(figure1_run, metric="excess", logy=True).figure)  # no reference lines on a log axis
    assert "Grey reference lines" not in logy and "dotted" not in logy
    off = figure_texts(render(figure1_run, metric="train_mse", refs=False).figure)
    assert "Grey reference lines" not in off


def test_config_captions_leave_the_statistic_and_references_to_the_figure():
    offenders = []
    for path in sorted((ROOT / "configs").rglob("*.yaml")):
        config = yaml.safe_load(path.read_text())
        captions = [config.get("caption") or ""]
        captions += [
            (a.get("options") or {}).get("caption") or "" for a in config.get("analyses") or [] if isinstance(a, dict)
        ]
        offenders += [f"{path.relative_to(ROOT)}: {m.group(0)!r}" for c in captions for m in DRAWING_WORDS.finditer(c)]
    assert offenders == []


def meta(label: str, mechanism: str | None) -> dict:
    return {"_base": False, "_hue": label, "label": label, "mechanism": mechanism}


def test_an_unregistered_mechanism_never_takes_a_registered_colour():
    registry.discover()
    curves = [("adassp",), ("plug-in",), ("another",)]
    info = {
        ("adassp",): meta("adassp", "adassp"),
        ("plug-in",): meta("plug-in", "mine.module:fit"),
        ("another",): meta("another", None),
    }
    styles = curve_styles(curves, info, "label", None)
    adassp = to_hex(styles[("adassp",)]["color"])
    assert adassp == to_hex(registry.get_mechanism("adassp").style["color"])
    for key in (("plug-in",), ("another",)):
        assert to_hex(styles[key]["color"]) not in registered_colours()
    assert len({to_hex(s["color"]) for s in styles.values()}) == 3


def test_every_curve_of_a_panel_has_its_own_colour_and_line_style():
    """Two instances of one mechanism (same registered colour and line style) and more curves than colours."""
    curves = [(f"c{i}",) for i in range(30)]
    info = {c: meta(c[0], "ihm" if i < 2 else None) for i, c in enumerate(curves)}
    styles = curve_styles(curves, info, "label", None)
    pairs = [(to_hex(s["color"]), str(s["linestyle"])) for s in styles.values()]
    assert len(set(pairs)) == len(pairs)
