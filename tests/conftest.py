from __future__ import annotations

import os

import matplotlib
import pytest

matplotlib.use("Agg")
os.environ.setdefault("PYTHONHASHSEED", "0")
# a project module that fails to import is an error in the tests, never a silently shrunken registry
os.environ["DPBENCH_STRICT_DISCOVERY"] = "1"


@pytest.fixture
def small_config(tmp_path):
    """A small but complete regression config on synthetic data (2 mechanisms × 2 ε × 6 trials)."""
    return {
        "name": "smoke",
        "output_dir": str(tmp_path / "results"),
        "seed": 7,
        "trials": 6,
        "trial_block": 2,
        "epsilons": [0.5, 4.0],
        "delta": "1/n^2",
        "datasets": [{"loader": "sphere_linear", "options": {"n": 300, "d": 4}}],
        "mechanisms": [
            {"mechanism": "adassp", "label": "AdaSSP"},
            {"mechanism": "ihm", "label": "IHM", "hyper": {"T": 2}},
            "ols",
        ],
    }
