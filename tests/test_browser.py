"""The HTML pages a user opens, opened in a real browser: headless Chromium (Debian's ``chromium``) driven by
Playwright. `.ci/run` installs both; the tests skip, saying why, only where neither can be had.

Each page must load without a console error, every image must decode (``naturalWidth > 0``), its tables must be
there, and a screenshot must not be blank.
"""

from __future__ import annotations

import io
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from dpbench.cli import app
from dpbench.config import parse_config
from dpbench.engine import run

#: flags for a closed network and a root user: no sandbox, no GPU, no background connections (each would be refused)
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


def chromium_path() -> str | None:
    return os.environ.get("DPBENCH_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (.ci/run installs it)")
    executable = chromium_path()
    if executable is None:
        pytest.skip("no Chromium on this machine (.ci/run installs Debian's chromium)")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_FLAGS)
        yield chromium
        chromium.close()


def open_page(browser, path: Path) -> dict:
    """Load ``path`` and return what a user would see: console errors, images, tables, a screenshot."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    response = page.goto(path.resolve().as_uri(), wait_until="load")
    images = page.evaluate(
        "Array.from(document.images).map(i => ({src: i.src.slice(0, 40), complete: i.complete, width: i.naturalWidth}))"
    )
    seen = {
        "ok": response is None or response.ok,
        "errors": errors,
        "images": images,
        "tables": page.evaluate("document.querySelectorAll('table').length"),
        "title": page.title(),
        "screenshot": page.screenshot(full_page=False, path=os.environ.get("DPBENCH_SCREENSHOT")),
    }
    page.close()
    return seen


def assert_page_is_sound(seen: dict, *, min_images: int, min_tables: int) -> None:
    from matplotlib.image import imread

    assert seen["ok"] and seen["errors"] == [], seen["errors"]
    assert len(seen["images"]) >= min_images, seen["images"]
    broken = [image for image in seen["images"] if not image["complete"] or image["width"] == 0]
    assert broken == [], f"images that do not decode: {broken}"
    assert seen["tables"] >= min_tables
    pixels = imread(io.BytesIO(seen["screenshot"]), format="png")[..., :3]
    assert pixels.std() > 0.05, "the screenshot is blank"
    assert len(np.unique(pixels.reshape(-1, 3), axis=0)) > 50, "the screenshot has almost no distinct colours"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    base = {
        "output_dir": str(tmp_path_factory.mktemp("browser") / "results"),
        "seed": 3,
        "trials": 4,
        "trial_block": 4,
        "epsilons": [0.5, 4.0],
        "datasets": [{"loader": "sphere_linear", "label": f"n={n}", "options": {"n": n, "d": 3}} for n in (300, 3000)],
        "plots": {"train_mse": {"metric": "train_mse"}, "excess": {"metric": "excess", "logy": True}},
    }
    first = run(
        parse_config(
            {
                **base,
                "name": "main",
                "title": "Browser check",
                "mechanisms": ["ols", "adassp", {"mechanism": "ihm", "hyper": {"T": 2}}],
            }
        ),
        n_jobs=1,
        progress=False,
        log=lambda m: None,
    )
    second = run(
        parse_config({**base, "name": "extra", "mechanisms": ["linmix"]}), n_jobs=1, progress=False, log=lambda m: None
    )
    return first, second


def test_report_html_in_a_real_browser(browser, runs):
    first, _ = runs
    result = CliRunner().invoke(app, ["report", str(first)])
    assert result.exit_code == 0, result.output
    seen = open_page(browser, first / "report.html")
    assert seen["title"] == "Run report: main"
    assert_page_is_sound(seen, min_images=3, min_tables=3)  # two figures and the performance profile


@pytest.mark.slow  # 6 s; the report page test keeps a real browser in the default suite
def test_leaderboard_html_in_a_real_browser(browser, runs, tmp_path):
    first, second = runs
    out = tmp_path / "board"
    result = CliRunner().invoke(app, ["leaderboard", str(first), str(second), "--out", str(out), "--bootstrap", "50"])
    assert result.exit_code == 0, result.output
    seen = open_page(browser, out / "leaderboard.html")
    assert seen["title"] == "Leaderboard over 2 datasets"
    assert_page_is_sound(seen, min_images=1, min_tables=4)  # per ε: the summary and the win/tie/loss matrix
