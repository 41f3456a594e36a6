"""Installed as a package, dpbench has its data: a wheel built from the clone, installed into a fresh virtual
environment outside the clone, runs Figure 1's config on one real dataset (pol) and draws it.

The fresh environment gets dpbench only from the wheel; its third-party dependencies (numpy, scipy, …) are borrowed
from the running interpreter through a ``.pth`` line (nothing is downloaded but the build backend), which adds those
folders to ``sys.path`` after the venv's own site-packages without running their ``.pth`` files, so an editable
dpbench of the running interpreter stays invisible.
"""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "dpbench", "datasets", "configs")

pytestmark = pytest.mark.slow


#: the environment of every command: no PYTHONPATH (a clone on it would shadow or fake the installed dpbench)
ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "DPBENCH_DATA_DIR")}


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    out = subprocess.run(args, cwd=cwd, env=ENV, capture_output=True, text=True, check=False)
    assert out.returncode == 0, f"{' '.join(map(str, args))}\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out


def build_wheel(tmp: Path) -> Path:
    """``pip wheel`` of a copy of the sources (the clone itself is left untouched)."""
    source = tmp / "src"
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(
                ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__", "_datasets", "_configs")
            )
        else:
            source.mkdir(exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp / "wheel"), str(source)], tmp)
    (wheel,) = (tmp / "wheel").glob("dpbench-*.whl")
    return wheel


def fresh_venv(tmp: Path, wheel: Path) -> Path:
    venv = tmp / "venv"
    run([sys.executable, "-m", "venv", str(venv)], tmp)
    python = venv / "bin" / "python"
    run([str(python), "-m", "pip", "install", "--no-deps", "-q", str(wheel)], tmp)
    purelib = run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], tmp).stdout
    borrowed = [p for p in [*site.getsitepackages(), site.getusersitepackages()] if Path(p).is_dir()]
    (Path(purelib.strip()) / "_dpbench_test_dependencies.pth").write_text("\n".join(borrowed) + "\n")
    return venv


def test_wheel_installed_outside_the_clone_runs_figure1_on_pol(tmp_path):
    wheel = build_wheel(tmp_path)
    venv = fresh_venv(tmp_path, wheel)
    work = tmp_path / "work"
    work.mkdir()
    where = run([str(venv / "bin" / "python"), "-c", "import dpbench; print(dpbench.__file__)"], work).stdout
    assert where.startswith(str(venv)), where

    config = yaml.safe_load((ROOT / "configs" / "ihm_vs_adassp.yaml").read_text())
    config.update(datasets=[d for d in config["datasets"] if d["loader"] == "pol"], trials=2, n_jobs=1)
    (work / "figure1_pol.yaml").write_text(yaml.safe_dump(config))
    dpbench = str(venv / "bin" / "dpbench")
    out = run([dpbench, "run", "figure1_pol.yaml", "--no-progress"], work)
    assert "SKIPPED" not in out.stdout + out.stderr and "unavailable" not in out.stdout + out.stderr
    rows = (work / "results" / "ihm_vs_adassp" / "trials.csv").read_text().splitlines()
    assert len(rows) == 1 + 3 * 6 * 2  # 3 mechanisms × 6 ε × 2 trials on pol
    run([dpbench, "plot", "results/ihm_vs_adassp"], work)
    assert (work / "results" / "ihm_vs_adassp" / "figure_train_mse.png").stat().st_size > 10_000
    listing = run([dpbench, "datasets"], work).stdout
    pol = next(line for line in listing.splitlines() if line.startswith("pol "))
    assert "n=" in pol, pol
    # the configs ship with the package: listed, and runnable by name outside the clone (issue 39 item 4)
    configs = run([dpbench, "list", "configs"], work).stdout
    assert "\nihm_vs_adassp " in configs and "_configs" in configs, configs
    plan = run([dpbench, "run", "ihm_vs_adassp", "--dry-run", "-d", "pol", "-m", "adassp", "-e", "0.1"], work)
    assert "total: 500 trials" in plan.stdout, plan.stdout
