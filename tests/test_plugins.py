"""Own mechanisms outside the package: by import path in a config, by the ``dpbench.mechanisms`` entry point.

The plug-in is the tiny package in ``tests/plugin_example`` (the same file docs/library.md shows). The entry-point
test writes the ``.dist-info`` folder that ``pip install tests/plugin_example`` would create, from the example's own
``pyproject.toml``, and runs ``dpbench run`` in a fresh interpreter — the real discovery path, without installing.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from joblib.externals.loky import get_reusable_executor

from dpbench import registry
from dpbench.config import ConfigError, parse_config
from dpbench.engine import run
from dpbench.privacy.agm import sigma_agm

PLUGIN_ROOT = Path(__file__).parent / "plugin_example"
EXAMPLE = PLUGIN_ROOT / "dpbench_plugin_example" / "noisy_ridge.py"
DOCS = Path(__file__).parents[1] / "docs" / "library.md"
REFERENCE = "dpbench_plugin_example.noisy_ridge:fit"


@pytest.fixture
def plugin_on_path(monkeypatch):
    monkeypatch.syspath_prepend(str(PLUGIN_ROOT))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(PLUGIN_ROOT), os.environ.get("PYTHONPATH")])))
    # joblib reuses worker processes across runs: workers started by earlier tests lack the new PYTHONPATH
    get_reusable_executor().shutdown(wait=True)


def plugin_config(tmp_path: Path, mechanism: str, name: str = "plugin") -> dict:
    return {
        "name": name,
        "output_dir": str(tmp_path / "results"),
        "seed": 3,
        "trials": 4,
        "trial_block": 2,
        "epsilons": [0.5, 4.0],
        "datasets": [{"loader": "sphere_linear", "options": {"n": 400, "d": 3}}],
        "mechanisms": [{"mechanism": mechanism, "label": "noisy ridge", "grid": {"ridge": [0.1, 10.0]}}, "adassp"],
    }


def test_docs_show_the_tested_example_in_at_most_20_lines():
    source = EXAMPLE.read_text()
    assert len(source.strip().splitlines()) <= 20
    assert source.strip() in DOCS.read_text(), "docs/library.md must show tests/plugin_example/.../noisy_ridge.py"
    readme = (DOCS.parents[1] / "README.md").read_text()
    if "register_mechanism(" in readme and "noisy_ridge" in readme:  # the README's copy must not drift either
        assert source.strip() in readme, "README.md must show tests/plugin_example/.../noisy_ridge.py verbatim"


def test_config_can_name_an_external_mechanism_by_import_path(tmp_path, plugin_on_path):
    tables = []
    for n_jobs in (1, 2):  # with 2, loky workers must re-import the plug-in from the path kept in the config
        config = parse_config(plugin_config(tmp_path / str(n_jobs), REFERENCE))
        assert config.mechanisms[0].name == REFERENCE
        tables.append(pd.read_csv(run(config, n_jobs=n_jobs, progress=False, log=lambda m: None) / "trials.csv"))
    pd.testing.assert_frame_equal(tables[0].drop(columns="seconds"), tables[1].drop(columns="seconds"))
    ours = tables[1][tables[1].mechanism == "noisy_ridge"]
    assert len(ours) == 2 * 2 * 4 and set(ours["hp.ridge"]) == {0.1, 10.0}
    for epsilon, sigma in ours.groupby("epsilon")["info.sigma"].first().items():
        assert sigma == pytest.approx(sigma_agm(epsilon / 2, 1 / 400**2 / 2, 1.0))
    # more privacy budget → less noise → smaller train MSE (means over 8 trials; the gap is large at n = 400)
    means = ours.groupby("epsilon")["train_mse"].mean()
    assert means[4.0] < means[0.5]


def test_estimator_accepts_an_external_mechanism(plugin_on_path):
    from_sklearn = pytest.importorskip("dpbench.estimators")
    rng = np.random.default_rng(0)
    X = rng.uniform(-0.5, 0.5, (500, 3))
    y = np.clip(X @ [0.5, -0.5, 0.2], -1, 1)
    model = from_sklearn.DPLinearRegression(REFERENCE, epsilon=5.0, random_state=0, ridge=2.0, fit_intercept=False).fit(
        X, y
    )
    direct = registry.get_mechanism(REFERENCE).fit(X, y, 5.0, 1 / 500**2, np.random.default_rng(0), ridge=2.0)
    np.testing.assert_allclose(model.coef_, direct.theta)


def write_dist_info(site: Path) -> None:
    """What pip writes for tests/plugin_example: METADATA + entry_points.txt (from its pyproject.toml)."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        tomllib = pytest.importorskip("tomli")
    project = tomllib.loads((PLUGIN_ROOT / "pyproject.toml").read_text())["project"]
    info = site / f"dpbench_plugin_example-{project['version']}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n")
    lines = []
    for group, entries in project["entry-points"].items():
        lines.append(f"[{group}]")
        lines.extend(f"{name} = {target}" for name, target in entries.items())
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")


def test_entry_point_registers_the_mechanism_for_configs_and_cli(tmp_path):
    site = tmp_path / "site"
    write_dist_info(site)
    config_file = tmp_path / "plugin.yaml"
    config_file.write_text(yaml.safe_dump(plugin_config(tmp_path, "noisy_ridge")))  # registered name, no path
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(PLUGIN_ROOT)])}
    script = (
        "import sys; from dpbench.cli import app\n"
        "app(['list'], standalone_mode=False)\n"
        "app(['run', sys.argv[1], '--no-progress', '-j', '2'], standalone_mode=False)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(config_file)], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert "noisy_ridge" in done.stdout and "plug-in example" in done.stdout  # `dpbench list`
    table = pd.read_csv(tmp_path / "results" / "plugin" / "trials.csv")
    assert (table.mechanism == "noisy_ridge").sum() == 16


def test_without_the_entry_point_the_name_is_unknown(tmp_path, monkeypatch):
    registry.discover()
    monkeypatch.delitem(registry.MECHANISMS, "noisy_ridge", raising=False)  # as in a process without the plug-in
    with pytest.raises(ConfigError, match=r"mechanisms\[0\]\.mechanism.*unknown mechanism 'noisy_ridge'"):
        parse_config(plugin_config(tmp_path, "noisy_ridge"))
