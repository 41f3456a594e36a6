"""``ssp`` (exact split and Wang's constants) and ``adassp``'s ``constants: wang`` (spec 005 §2a, §11)."""

from __future__ import annotations

import numpy as np
import pytest

from dpbench import registry
from dpbench.contract import HyperError
from dpbench.linalg import gram_stats
from dpbench.mechanisms import record_releases
from dpbench.mechanisms.ssp.calibration import wang_adassp_sigma, wang_ssp_epsilon, wang_ssp_sigma
from dpbench.privacy.exact import GaussianRelease, exact_epsilon

registry.discover()
DELTA = 1e-6


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((500, 4))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.clip(X @ np.array([0.5, -0.3, 0.2, 0.1]) + 0.05 * rng.standard_normal(500), -1, 1)
    return X, y


def releases_of(name, X, y, epsilon, **hyper):
    with record_releases() as rec:
        out = registry.get_mechanism(name).fit(X, y, epsilon, DELTA, np.random.default_rng(5), **hyper)
    return out, rec.releases


def test_ssp_exact_split_spends_exactly_epsilon(data):
    out, rels = releases_of("ssp_plain", *data, 1.0)
    assert [r.name for r in rels] == ["XᵀX", "XᵀY"]
    gauss = [GaussianRelease(r.sensitivity, r.scale) for r in rels]
    assert exact_epsilon(gauss, DELTA) == pytest.approx(1.0, rel=1e-6)
    assert out.info["epsilon_spent"] == 1.0


def test_ssp_wang_constants_are_labelled_with_what_they_spend(data):
    out, rels = releases_of("ssp_plain", *data, 1.0, constants="wang")
    assert all(r.scale == pytest.approx(wang_ssp_sigma(1.0, DELTA)) for r in rels)
    assert not rels[0].symmetric and rels[0].value.shape == (4, 4)  # the full non-symmetric d×d noise
    assert out.info["epsilon_spent"] == pytest.approx(wang_ssp_epsilon(1.0, DELTA)) == pytest.approx(1.587, abs=5e-4)
    assert exact_epsilon([GaussianRelease(r.sensitivity, r.scale) for r in rels], DELTA) > 1.5


def test_strict_profile_refuses_wang_ssp_and_sets_exact():
    info = registry.get_mechanism("ssp_plain")
    assert info.with_profile({}, "strict")["constants"] == "exact"
    with pytest.raises(HyperError, match="constants"):
        info.with_profile({"constants": "wang"}, "strict")


def test_bad_constants_name_the_field(data):
    with pytest.raises(HyperError, match="constants"):
        registry.get_mechanism("ssp_plain").fit(*data, 1.0, DELTA, np.random.default_rng(0), constants="paper")
    with pytest.raises(HyperError, match="ridge"):
        registry.get_mechanism("ssp_plain").fit(*data, 1.0, DELTA, np.random.default_rng(0), ridge=-1.0)


def test_adassp_default_is_unchanged_by_the_new_choice(data):
    info = registry.get_mechanism("adassp")
    a = info.fit(*data, 1.0, DELTA, np.random.default_rng(3))
    b = info.fit(*data, 1.0, DELTA, np.random.default_rng(3), constants="ihm_paper")
    assert np.array_equal(a.theta, b.theta) and "epsilon_spent" not in a.info


def test_adassp_wang_releases_are_declared_at_wangs_sigma(data):
    out, rels = releases_of("adassp", *data, 1.0, constants="wang")
    sigma = wang_adassp_sigma(1.0, DELTA)
    assert [r.name for r in rels] == ["λ_min(XᵀX)", "XᵀY", "S∘XᵀX"]
    assert all(r.scale == pytest.approx(sigma) and r.sensitivity == 1.0 for r in rels)
    assert out.info["epsilon_spent"] == pytest.approx(0.596, abs=5e-4)


def test_adassp_wang_xtx_noise_is_half_symmetric_and_its_declaration_is_iid():
    """½(Z + Zᵀ) has variance σ² on the diagonal, σ²/2 off it; scaled by S it is iid N(0, σ²) on the upper
    triangle, which is what the declared symmetric release says (distribution test over 2,500 fits)."""
    stats = gram_stats(np.eye(3) * 0.5, np.zeros(3))
    info = registry.get_mechanism("adassp")
    raw, scaled = [], []
    for seed in range(2500):
        with record_releases() as rec:
            info.fit(stats.X, stats.y, 1.0, DELTA, np.random.default_rng(seed), stats=stats, constants="wang")
        rel = rec.releases[2]
        noise = (rel.value - rel.centre) / rel.scale
        scaled.append(noise[np.triu_indices(3)])
        raw.append((noise / np.where(np.eye(3) > 0, 1.0, np.sqrt(2.0)))[np.triu_indices(3)])
    scaled_var, raw_var = np.var(scaled, axis=0), np.var(raw, axis=0)
    diag = np.array([True, False, False, True, False, True])  # upper-triangle order (0,0),(0,1),(0,2),(1,1),(1,2),(2,2)
    assert np.allclose(scaled_var, 1.0, atol=0.1)
    assert np.allclose(raw_var[diag], 1.0, atol=0.1) and np.allclose(raw_var[~diag], 0.5, atol=0.06)


def test_adassp_wang_refuses_other_bounds(data):
    with pytest.raises(HyperError, match="constants"):
        registry.get_mechanism("adassp").fit(*data, 1.0, DELTA, np.random.default_rng(0), constants="wang", x_bound=2.0)
