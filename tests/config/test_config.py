from __future__ import annotations

import numpy as np
import pytest
import yaml

from dpbench.config import ConfigError, load_config, parse_config


def test_figure1_config_resolves():
    cfg = load_config("configs/ihm_vs_adassp.yaml")
    assert [d.loader for d in cfg.datasets] == ["crime", "pol", "concreteslump", "solar"]
    assert [m.name for m in cfg.mechanisms] == ["linmix", "adassp", "ihm"]
    np.testing.assert_allclose(cfg.epsilons, np.logspace(-1, 1, 6))
    assert cfg.trials == 500
    assert cfg.delta_for(1000) == pytest.approx(1e-6)


def test_defaults_and_shorthand(small_config):
    cfg = parse_config(small_config)
    assert cfg.mechanisms[2].label == "ols"
    assert dict(cfg.mechanisms[1].hyper) == {"T": 2}
    assert cfg.run_dir.name == "smoke"


@pytest.mark.parametrize(
    ("patch", "field"),
    [
        ({"bogus": 1}, "'bogus'"),
        ({"trials": 0}, "'trials'"),
        ({"trials": 2.5}, "'trials'"),
        ({"epsilons": [1.0, -0.5]}, "'epsilons[1]'"),
        ({"epsilons": [0]}, "'epsilons[0]'"),
        ({"epsilons": {"logspace": [0, 1]}}, "'epsilons.logspace'"),
        ({"delta": 1.5}, "'delta'"),
        ({"delta": 0}, "'delta'"),
        ({"delta": "1/m^2"}, "'delta'"),
        ({"n_jobs": 0}, "'n_jobs'"),
        ({"seed": -1}, "'seed'"),
        ({"metrics": ["train_mse", "nope"]}, "'metrics[1]'"),
        ({"mechanisms": ["ihm", "nonexistent"]}, "'mechanisms[1].mechanism'"),
        ({"mechanisms": [{"mechanism": "ihm", "hyper": {"TT": 3}}]}, "'mechanisms[0].hyper.TT'"),
        ({"mechanisms": [{"mechanism": "ihm", "grid": {"Q": [1]}}]}, "'mechanisms[0].grid.Q'"),
        ({"mechanisms": [{"mechanism": "ihm", "colour": "red"}]}, "'mechanisms[0].colour'"),
        ({"datasets": ["no_such_data"]}, "'datasets[0].loader'"),
        ({"datasets": [{"loader": "sphere_linear", "options": {"m": 3}}]}, "'datasets[0].options.m'"),
        ({"mechanisms": []}, "'mechanisms'"),
        ({"name": "bad name/"}, "'name'"),
    ],
)
def test_bad_values_name_the_field(small_config, patch, field):
    small_config.update(patch)
    with pytest.raises(ConfigError) as info:
        parse_config(small_config)
    message = str(info.value)
    assert field in message
    assert "\n" not in message


def test_unknown_name_points_at_the_listing_and_short_lists_are_printed(small_config):
    small_config["mechanisms"] = ["nonexistent"]
    with pytest.raises(ConfigError, match="`dpbench list mechanisms` shows all"):
        parse_config(small_config)
    small_config["mechanisms"] = [{"mechanism": "ihm", "hyper": {"nonexistent": 1}}]
    with pytest.raises(ConfigError, match=r"allowed: C, T, .*sketch\)"):
        parse_config(small_config)


def test_grid_expansion(small_config):
    small_config["mechanisms"] = [{"mechanism": "ihm", "label": "IHM", "grid": {"T": [1, 2, 3]}}]
    small_config["datasets"] = [{"loader": "sphere_linear", "grid": {"n": [100, 200]}}]
    cfg = parse_config(small_config)
    assert [m.label for m in cfg.mechanisms] == ["IHM (T=1)", "IHM (T=2)", "IHM (T=3)"]
    assert [dict(d.options)["n"] for d in cfg.datasets] == [100, 200]
    assert all(d.swept == ("n",) for d in cfg.datasets)


def test_duplicate_mechanism_labels_rejected(small_config):
    small_config["mechanisms"] = ["ihm", "ihm"]
    with pytest.raises(ConfigError, match="duplicates"):
        parse_config(small_config)


@pytest.mark.parametrize(("rule", "n", "expected"), [("1/n^2", 100, 1e-4), ("1/n", 50, 0.02), ("1/n^1.5", 100, 1e-3)])
def test_delta_rules(small_config, rule, n, expected):
    small_config["delta"] = rule
    assert parse_config(small_config).delta_for(n) == pytest.approx(expected)


def test_large_dataset_trials(small_config):
    small_config["large_dataset_trials"] = {"nd_above": 500000, "trials": 20}
    cfg = parse_config(small_config)
    assert cfg.trials_for(1000, 10) == 6
    assert cfg.trials_for(60000, 27) == 20


def test_load_config_file_errors(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: [unclosed")
    with pytest.raises(ConfigError, match="invalid YAML"):
        load_config(bad)
    listy = tmp_path / "list.yaml"
    listy.write_text(yaml.safe_dump([1, 2]))
    with pytest.raises(ConfigError, match="mapping"):
        load_config(listy)


def test_privacy_profile_field(small_config):
    """``privacy: strict`` gives each mechanism the accounting its theorem proves (LinMix strict: true) and refuses a
    setting that is not one, naming the field; the default ``paper`` keeps each mechanism's defaults."""
    from dpbench.config import parse_config as parse

    linmix = {**small_config, "mechanisms": [{"mechanism": "linmix", "hyper": {"k_factor": 3.0}}]}
    assert parse(linmix).privacy == "paper" and dict(parse(linmix).mechanisms[0].hyper) == {"k_factor": 3.0}
    strict = parse({**linmix, "privacy": "strict"})
    assert strict.privacy == "strict" and dict(strict.mechanisms[0].hyper) == {"k_factor": 3.0, "strict": True}
    refused = {**linmix, "privacy": "strict", "mechanisms": [{"mechanism": "linmix", "hyper": {"strict": False}}]}
    with pytest.raises(ConfigError, match=r"'mechanisms\[0\].hyper.strict': not allowed under privacy: strict"):
        parse(refused)
    with pytest.raises(ConfigError, match="'privacy': must be one of strict, paper"):
        parse({**linmix, "privacy": "loose"})
