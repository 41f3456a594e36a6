"""The one zero predictor: θ̂ = 0 of the right size, and the papers' old names still reach it with a warning."""

from __future__ import annotations

import numpy as np
import pytest

from dpbench import registry


def test_zero_returns_the_zero_vector_without_touching_the_rng():
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    result = registry.get_mechanism("zero").fit(np.ones((5, 3)), np.ones(5), 1.0, 1e-5, rng)
    assert np.array_equal(result.theta, np.zeros(3)) and rng.bit_generator.state == state


@pytest.mark.parametrize("old", ["iw_zero", "ftrl_zero"])
def test_the_old_names_are_deprecated_aliases_of_zero(old):
    with pytest.warns(DeprecationWarning, match=f"'{old}' is deprecated: it is 'zero'"):
        info = registry.get_mechanism(old)
    assert info is registry.get_mechanism("zero") and old not in registry.MECHANISMS
