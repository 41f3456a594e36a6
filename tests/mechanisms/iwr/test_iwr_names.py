"""The family's one prefix `iwr` (docs/architecture.md, "Names"): the old names still work, with a warning, and a
renamed generator draws exactly the data and noise it drew under its old name."""

from __future__ import annotations

import warnings

import pytest

from dpbench import registry
from dpbench.config import parse_config
from dpbench.engine.regression import trial_seed


def _config(loader: str):
    return parse_config(
        {
            "name": "names",
            "seed": 5,
            "trials": 1,
            "epsilons": [0.5],
            "datasets": [{"loader": loader, "options": {"n": 500, "d": 3}}],
            "mechanisms": ["iwr_dp"],
        }  # fmt: skip
    )


def test_an_old_generator_name_warns_and_keeps_its_seeds():
    new = _config("iwr_twoscale")
    with pytest.warns(DeprecationWarning, match="'iw_twoscale' is deprecated: it is 'iwr_twoscale' now"):
        old = _config("iw_twoscale")
    assert old.datasets == new.datasets and new.datasets[0].loader == "iwr_twoscale"
    entry, mech = new.datasets[0], new.mechanisms[0]
    assert entry.key.startswith("iw_twoscale{")  # the streams of the name it had
    assert (
        trial_seed(5, entry, mech, 0.5, 0, False).entropy == trial_seed(5, old.datasets[0], mech, 0.5, 0, False).entropy
    )
    assert registry.stream_name("iwr_gauss") == "iw_gauss" and registry.stream_name("sphere_linear") == "sphere_linear"


@pytest.mark.parametrize(
    ("what", "old", "new"),
    [("analysis", "iw_ratio", "iwr_ratio"), ("analysis", "iw-slopes", "iwr-slopes"),
     ("annotation", "iw_zero_level", "iwr_zero_level")],
)  # fmt: skip
def test_old_analysis_and_annotation_names_resolve_with_a_warning(what, old, new):
    get = registry.get_analysis if what == "analysis" else registry.get_annotation
    with pytest.warns(DeprecationWarning, match=f"{what} '{old}' is deprecated"):
        assert get(old).name == new
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert get(new).name == new


def test_the_old_module_path_is_the_same_module():
    from dpbench.mechanisms.info_weighted import central as old
    from dpbench.mechanisms.iwr import central

    assert old is central
