"""Synthetic generators of spec 000 §7.1 with exact population quantities, and the L1-error metric.

All generators have ‖φ‖ ≤ 1 (B = 1) and Rademacher labels y ~ Rad(<φ,θ*>) ∈ {−1, +1} (P(y = 1) = (1 + <φ,θ*>)/2,
well-specified, |y| = 1); θ* ~ Unif(S^{d−1}) (d ≥ 2) or U[−1, 1] (d = 1), drawn from the loader's rng.

* ``iwr_twoscale(d, rho, s)`` — φ = c·u, u ~ Unif(S^{d−1}), c = 1 w.p. ρ else s. Σ = ((ρ + (1−ρ)s²)/d)·I;
  E|<φ,v>| = (ρ + (1−ρ)s)·c_d·‖v‖, c_d = E|u₁| = Γ(d/2)/(√π Γ((d+1)/2)).
* ``iwr_gauss(d, s)`` — φ = Proj_{B^d(1)}(s·g/√d), g ~ N(0, I_d). Isotropic with radius r = min(sR/√d, 1),
  R ~ χ_d; Σ = (E r²/d)·I and E|<φ,v>| = c_d·E[r]·‖v‖ by 1-D quadrature (exact up to ~1e-10, no Monte Carlo).
* ``iwr_spike(d, rho)`` — φ = e_J w.p. ρ_J (default ρ_j = 0.4·2^{−(j−1)}), φ = 0 otherwise. Σ = diag(ρ),
  E|<φ,v>| = Σ ρ_j|v_j|.
* ``iwr_twoscale_1d(rho, s)`` — φ = ξ·c, ξ Rademacher, c as above; θ* ~ U[−1, 1]; E|φ| = ρ + (1−ρ)s.
* ``iwr_pareto(d, a, s)`` — heavy-tailed norms (issue 17 control, not in the spec): φ = r·u, u ~ Unif(S^{d−1}),
  r = min(1, s·V^{−1/a}), V ~ U(0, 1] (Pareto tail P(r > t) = (s/t)^a on [s, 1), atom P(r = 1) = s^a).
  E r^k = a s^a (1 − s^{k−a})/(k − a) + s^a (k ≠ a; a s^a log(1/s) + s^a at k = a); Σ = (E r²/d)·I.

``theta_norm`` (``iwr_twoscale``, ``iwr_gauss``, ``iwr_pareto``; default None = the spec's θ* ~ Unif(S^{d−1})): θ* =
theta_norm·u with u ~ Unif(S^{d−1}) — θ* strictly inside the unit ball, so a ball-constrained estimator with the
public radius 1 is no longer handed ‖θ*‖ (issue 17). The rng stream is the same as without it.

``Population.extra`` carries what the metrics and the oracle mechanisms need, as plain data:
``radial`` = (r_atoms, r_probs) for isotropic generators (a quantile rule of 400 points for G-Gauss),
``basis_probs`` for the spike, ``l1_iso`` (E|<φ,v>| = l1_iso·‖v‖) or ``l1_weights`` (E|<φ,v>| = Σ w_j|v_j|),
``mean_norm`` = E‖φ‖ and ``B`` = 1.

Independent draws of θ* and the data (spec 000 §7.2 draws them per seed) come from the engine's ``data_draws``
option (each draw seeds the loader's ``rng`` differently); plots pool the draws of a point. Every loader declares its
training shape (n, d) so a run plans size-dependent trial counts without generating the data.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import integrate, stats
from scipy.special import gammaln

from dpbench.analysis.metrics import TrialCoordinates, register_metric
from dpbench.contract import Hyper
from dpbench.data._base import Dataset, Population
from dpbench.mechanisms.iwr.linalg import row_norms
from dpbench.registry import register_alias, register_dataset

GAUSS_QUANTILE_POINTS = 400


def c_d(d: int) -> float:
    """E|u₁| for u uniform on S^{d−1}: Γ(d/2)/(√π Γ((d+1)/2)) (c_1 = 1, c_2 = 0.636620, c_5 = 0.375)."""
    return math.exp(gammaln(d / 2.0) - gammaln((d + 1) / 2.0)) / math.sqrt(math.pi)


def sphere_directions(n: int, d: int, rng: np.random.Generator) -> np.ndarray:
    z = rng.standard_normal((n, d))
    return z / row_norms(z)[:, None]


def rademacher_labels(X: np.ndarray, theta: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """y ∈ {−1, +1} with P(y = 1) = (1 + <φ,θ>)/2 (spec 000 §1.1; needs |<φ,θ>| ≤ 1)."""
    mean = X @ theta
    if np.any(np.abs(mean) > 1 + 1e-12):
        raise ValueError("rademacher_labels: |<φ,θ*>| > 1 for some rows")
    return np.where(rng.random(X.shape[0]) < (1.0 + mean) / 2.0, 1.0, -1.0)


def draw_theta(d: int, rng: np.random.Generator, theta_norm: float | None = None) -> np.ndarray:
    """θ* ~ Unif(S^{d−1}) for d ≥ 2, U[−1, 1] for d = 1 (spec 000 §7.1); ``theta_norm`` rescales the d ≥ 2 draw
    to ‖θ*‖ = theta_norm ∈ (0, 1] (same rng use)."""
    if d == 1:
        return np.array([rng.uniform(-1.0, 1.0)])
    theta = sphere_directions(1, d, rng)[0]
    if theta_norm is None:
        return theta
    if not 0 < theta_norm <= 1:
        raise ValueError(f"theta_norm must lie in (0, 1] (labels need |<φ,θ*>| ≤ 1), got {theta_norm!r}")
    return float(theta_norm) * theta


def _dataset(
    name: str, X: np.ndarray, theta: np.ndarray, rng: np.random.Generator, cov: np.ndarray, extra: dict, title: str
) -> Dataset:
    y = rademacher_labels(X, theta, rng)
    noise_var = float(1.0 - theta @ cov @ theta)  # E Var(y|φ) = 1 − E<φ,θ*>²
    d = X.shape[1]
    population = Population(cov=cov, theta=theta, noise_var=noise_var, extra={"B": 1.0, **extra})
    return Dataset(
        name,
        X,
        y,
        np.zeros((0, d)),
        np.zeros(0),
        population=population,
        meta={"title": title, "recipe": "synthetic (spec 000 §7.1)"},
    )


def _isotropic_dataset(
    name: str, X: np.ndarray, theta: np.ndarray, rng: np.random.Generator, radial, m1: float, m2: float, title: str
) -> Dataset:
    """:func:`_dataset` for covariates φ = r·u (u uniform on the sphere, r with first and second moments m1, m2 and
    radial description ``radial``): Σ = (m2/d)·I, E|<φ, v>| = m1·c_d·‖v‖ (spec 000 §7.1)."""
    d = X.shape[1]
    extra = {"radial": radial, "l1_iso": m1 * c_d(d), "mean_norm": m1}
    return _dataset(name, X, theta, rng, m2 / d * np.eye(d), extra, title)


def twoscale_radial(rho: float, s: float) -> tuple[np.ndarray, np.ndarray]:
    if not (0 < rho <= 1 and 0 < s <= 1):
        raise ValueError(f"twoscale: need rho ∈ (0, 1] and s ∈ (0, 1], got rho={rho}, s={s}")
    return np.array([1.0, s]), np.array([rho, 1.0 - rho])


#: the options the generators share, declared once (each generator's table picks them)
N = Hyper(int, default=100_000, ge=1, doc="rows T")
D = Hyper(int, default=5, ge=1, doc="dimension")
THETA_NORM = Hyper(float, default=None, gt=0, le=1, none="‖θ*‖ = 1", doc="‖θ*‖ (the direction uniform; labels ±1)")


def twoscale_options(rho: float, s: float) -> dict[str, Hyper]:
    """ρ and s of G-TwoScale (defaults ``rho``, ``s``): the share of rows at norm 1 and the norm of the others."""
    return {
        "rho": Hyper(float, default=rho, gt=0, le=1, doc="probability of the norm-1 scale"),
        "s": Hyper(float, default=s, gt=0, le=1, doc="the small scale"),
    }


@register_dataset(
    "iwr_twoscale",
    summary="G-TwoScale(d, ρ, s): φ = c·u, c = 1 w.p. ρ else s (spec 000 §7.1)",
    kind="synthetic",
    spec="000 §7.1",
    shape=lambda n, d, **_: (n, d),
    options={"n": N, "d": D, **twoscale_options(0.01, 0.1), "theta_norm": THETA_NORM},
)
def load_twoscale(rng: np.random.Generator, **options: Any) -> Dataset:
    n, d, rho, s, theta_norm = (options[k] for k in ("n", "d", "rho", "s", "theta_norm"))
    r, q = twoscale_radial(rho, s)
    theta = draw_theta(d, rng, theta_norm)
    radius = np.where(rng.random(n) < rho, 1.0, s)
    X = sphere_directions(n, d, rng) * radius[:, None]
    title = f"G-TwoScale(d={d}, ρ={rho:g}, s={s:g})"
    return _isotropic_dataset("iwr_twoscale", X, theta, rng, (r, q), float(q @ r), float(q @ r**2), title)


def gauss_radial(d: int, s: float, points: int = GAUSS_QUANTILE_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """Quantile rule for r = min(sR/√d, 1), R ~ χ_d (equal weights at the mid-quantiles)."""
    u = (np.arange(points) + 0.5) / points
    r = np.minimum(s * stats.chi.ppf(u, d) / math.sqrt(d), 1.0)
    return r, np.full(points, 1.0 / points)


def gauss_moment(d: int, s: float, power: int) -> float:
    """E[min(sR/√d, 1)^power], R ~ χ_d, by adaptive quadrature."""

    def integrand(t: float) -> float:
        return min(s * t / math.sqrt(d), 1.0) ** power * stats.chi.pdf(t, d)

    knee = math.sqrt(d) / s
    a, _ = integrate.quad(integrand, 0.0, knee, epsabs=1e-13, epsrel=1e-12, limit=200)
    b = float(stats.chi.sf(knee, d))
    return a + b


@register_dataset(
    "iwr_gauss",
    summary="G-Gauss(d, s): φ = Proj_B(s·g/√d) (spec 000 §7.1)",
    kind="synthetic",
    spec="000 §7.1",
    shape=lambda n, d, **_: (n, d),
    options={"n": N, "d": D, "s": Hyper(float, default=0.4, gt=0, doc="scale of s·g/√d"), "theta_norm": THETA_NORM},
)
def load_gauss(rng: np.random.Generator, **options: Any) -> Dataset:
    n, d, s, theta_norm = (options[k] for k in ("n", "d", "s", "theta_norm"))
    theta = draw_theta(d, rng, theta_norm)
    X = s * rng.standard_normal((n, d)) / math.sqrt(d)
    norms = row_norms(X)
    X /= np.maximum(norms, 1.0)[:, None]
    m1, m2 = gauss_moment(d, s, 1), gauss_moment(d, s, 2)
    return _isotropic_dataset("iwr_gauss", X, theta, rng, gauss_radial(d, s), m1, m2, f"G-Gauss(d={d}, s={s:g})")


def pareto_moment(a: float, s: float, k: float) -> float:
    """E[r^k] for r = min(1, s·V^{−1/a}), V ~ U(0, 1]: a s^a (1 − s^{k−a})/(k − a) + s^a (k ≠ a), a s^a log(1/s) + s^a
    (k = a). The integral ∫_s^1 t^k · a s^a t^{−a−1} dt plus the atom P(r = 1) = s^a."""
    atom = s**a
    if math.isclose(k, a):
        return a * atom * math.log(1.0 / s) + atom
    return a * atom * (1.0 - s ** (k - a)) / (k - a) + atom


def pareto_radial(a: float, s: float, points: int = GAUSS_QUANTILE_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """Radial description of G-Pareto: the continuous part on [s, 1) cut into ``points`` bins equally spaced in log r,
    each with its exact mass (s/t₁)^a − (s/t₂)^a and represented by its exact conditional mean (so E r is exact and
    E r² is off by O(bin width²)), plus the exact atom at r = 1 (mass s^a)."""
    if not (a > 0 and 0 < s < 1):
        raise ValueError(f"iwr_pareto: need a > 0 and s ∈ (0, 1), got a={a}, s={s}")
    edges = np.geomspace(s, 1.0, points + 1)
    t1, t2 = edges[:-1], edges[1:]
    mass = (s / t1) ** a - (s / t2) ** a
    if math.isclose(a, 1.0):
        first = a * s**a * np.log(t2 / t1)  # ∫ t · a s^a t^{−a−1} dt over each bin
    else:
        first = a * s**a * (t1 ** (1.0 - a) - t2 ** (1.0 - a)) / (a - 1.0)
    return np.append(first / mass, 1.0), np.append(mass, s**a)


@register_dataset(
    "iwr_pareto",
    summary="G-Pareto(d, a, s): φ = r·u, r = min(1, s·V^(−1/a)) — heavy-tailed norms (issue 17 control)",
    kind="synthetic",
    spec="000 §7.1 (added control)",
    shape=lambda n, d, **_: (n, d),
    options={
        "n": N,
        "d": D,
        "a": Hyper(float, default=2.0, gt=0, doc="Pareto tail index"),
        "s": Hyper(float, default=0.02, gt=0, lt=1, doc="the smallest norm"),
        "theta_norm": THETA_NORM,
    },
)
def load_pareto(rng: np.random.Generator, **options: Any) -> Dataset:
    """Isotropic covariates with a Pareto(a) norm tail above s, capped at the bound B = 1 (module docstring)."""
    n, d, a, s, theta_norm = (options[k] for k in ("n", "d", "a", "s", "theta_norm"))
    radial = pareto_radial(a, s)
    theta = draw_theta(d, rng, theta_norm)
    radius = np.minimum(1.0, s * (1.0 - rng.random(n)) ** (-1.0 / a))
    X = sphere_directions(n, d, rng) * radius[:, None]
    m1, m2 = pareto_moment(a, s, 1.0), pareto_moment(a, s, 2.0)
    title = f"G-Pareto(d={d}, a={a:g}, s={s:g})"
    return _isotropic_dataset("iwr_pareto", X, theta, rng, radial, m1, m2, title)


def spike_probs(d: int, rho: list[float] | None) -> np.ndarray:
    p = 0.4 * 0.5 ** np.arange(d) if rho is None else np.asarray(rho, dtype=float)
    if p.shape != (d,) or np.any(p < 0) or p.sum() > 1:
        raise ValueError(f"iwr_spike: rho must be d={d} non-negative numbers with sum ≤ 1, got {rho}")
    return p


@register_dataset(
    "iwr_spike",
    summary="G-Spike(d, ρ): φ = e_J w.p. ρ_J, else 0 (spec 000 §7.1, Example 1)",
    kind="synthetic",
    spec="000 §7.1",
    shape=lambda n, d, **_: (n, d),
    options={
        "n": N,
        "d": D,
        "rho": Hyper(object, default=None, none="ρ_j = 0.4·0.5^j", doc="d probabilities of e_1..e_d, sum ≤ 1"),
    },
)
def load_spike(rng: np.random.Generator, **options: Any) -> Dataset:
    n, d, rho = options["n"], options["d"], options["rho"]
    p = spike_probs(d, rho)
    theta = draw_theta(d, rng)
    J = rng.choice(d + 1, size=n, p=np.append(p, 1.0 - p.sum()))
    X = np.zeros((n, d))
    hit = J < d
    X[np.nonzero(hit)[0], J[hit]] = 1.0
    extra = {"basis_probs": p, "l1_weights": p.copy(), "mean_norm": float(p.sum())}
    return _dataset("iwr_spike", X, theta, rng, np.diag(p), extra, f"G-Spike(d={d})")


@register_dataset(
    "iwr_twoscale_1d",
    summary="G-TwoScale-1D(ρ, s): φ = ±1 w.p. ρ, ±s otherwise (spec 000 §7.1)",
    kind="synthetic",
    spec="000 §7.1",
    shape=lambda n, **_: (n, 1),
    options={"n": N, **twoscale_options(0.01, 0.1)},
)
def load_twoscale_1d(rng: np.random.Generator, **options: Any) -> Dataset:
    n, rho, s = options["n"], options["rho"], options["s"]
    r, q = twoscale_radial(rho, s)
    theta = draw_theta(1, rng)
    X = (np.where(rng.random(n) < rho, 1.0, s) * rng.choice([-1.0, 1.0], size=n))[:, None]
    extra = {"radial": (r, q), "l1_iso": float(q @ r), "mean_norm": float(q @ r)}
    return _dataset(
        "iwr_twoscale_1d", X, theta, rng, np.array([[float(q @ r**2)]]), extra, f"G-TwoScale-1D(ρ={rho:g}, s={s:g})"
    )


def l1_functional(population: Population, v: np.ndarray) -> float:
    """E_p|<φ, v>| from the generator's closed form (spec 000 §1.2, §7.1)."""
    extra = population.extra
    if "l1_iso" in extra:
        return float(extra["l1_iso"] * np.linalg.norm(v))
    if "l1_weights" in extra:
        return float(np.asarray(extra["l1_weights"]) @ np.abs(v))
    raise KeyError("population has no L1 closed form (l1_iso / l1_weights)")


@register_metric("l1_error", "L1 error E|<φ, θ̂ − θ*>|")
def l1_error(theta: np.ndarray, dataset: Dataset, stats, trial: TrialCoordinates | None = None) -> float:
    """E_{φ~p}|<φ, θ̂ − θ*>| with the generator's exact closed form (NaN on data without one)."""
    pop = dataset.population
    if pop is None or not ({"l1_iso", "l1_weights"} & set(pop.extra)):
        return float("nan")
    return l1_functional(pop, np.asarray(theta, dtype=float) - pop.theta)


@register_metric("abs_error_1d", "|θ̂ − θ*| (d = 1)")
def abs_error_1d(theta: np.ndarray, dataset: Dataset, stats, trial: TrialCoordinates | None = None) -> float:
    """|θ̂ − θ*| for one-dimensional synthetic data (E5; NaN otherwise)."""
    pop = dataset.population
    if pop is None or pop.theta.shape != (1,):
        return float("nan")
    return float(abs(float(np.asarray(theta).ravel()[0]) - float(pop.theta[0])))


@register_metric("scaled_excess_risk", "empirical PoP ‖θ̂ − θ*‖²_Σ·n/d")
def scaled_excess_risk(theta: np.ndarray, dataset: Dataset, stats, trial: TrialCoordinates | None = None) -> float:
    """‖θ̂ − θ*‖²_Σ·n/d (spec 000 §7.5 E3: the empirical price of privacy; NaN on real data)."""
    pop = dataset.population
    if pop is None:
        return float("nan")
    diff = np.asarray(theta, dtype=float) - pop.theta
    return float(diff @ pop.cov @ diff) * dataset.n / dataset.d


# the generators' names before the one `iwr` prefix (docs/architecture.md, "Names"): old configs still run, with
# a DeprecationWarning, and draw exactly the data they drew (registry.stream_name)
for _old in ("iw_gauss", "iw_spike", "iw_twoscale", "iw_twoscale_1d", "iw_pareto"):
    register_alias(_old, "iwr" + _old[2:], what="dataset")
