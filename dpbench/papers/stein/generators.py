"""Synthetic GLM / non-linear-regression data of Wang et al. (JMLR 2023) §6 with exact population quantities
(spec 003 §6.2).

* ``gauss_diag``: Σ = s²I_p, s ~ U[0, 1]; x ~ N(0, Σ).
* ``gauss_nondiag``: Σ = I_p + (U + Uᵀ)/2, U ~ Haar(SO(p)) — the symmetric PSD reading of the paper's "U + I"
  (ambiguity A3); x = z Σ^{1/2}.
* ``bernoulli``: x_ij iid ±1/p (Σ = I/p², ‖x‖₁ = 1 so r = 1). Signs from random bits, 8 per random byte
  (``bernoulli_sampler="bits"``, default): each bit of a uniform byte is an independent fair coin, so the law is the
  same as one fair integer per entry (``"integers"``, the historical sampler, ≈ 10× slower at 7·10⁵ × 40).

w* uniform on the unit sphere. Responses: logistic GLM y = σ(⟨x, w*⟩) (soft labels, A10; ``labels="bernoulli"``
samples y ~ Bern(σ)); exponential GLM y = exp(⟨x, w*⟩); NLR y = f(⟨x, w*⟩) + ς, ς ~ U[−C, C], C = 0.05 (A11).
Public rows: m fresh draws of x (m = ⌊n/p²⌋ unless given). Σ, w* are drawn per dataset instance (= per
(panel, x point, data draw) of a run); the engine's ``data_draws`` option gives independent instances.

Population (exact): cov = Σ, theta = w*; extra holds ‖Σ‖₂, λ_min(Σ), s, and for Gaussian covariates the Stein
constants κ = E[h(⟨x, w*⟩)] (200-point Gauss–Hermite) and c = 1/κ with w_ols = κ w* (Lemma 5, spec 003 C2).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import numpy as np
from scipy.stats import special_ortho_group

from dpbench.contract import Choice, Hyper
from dpbench.data._base import Dataset, Population
from dpbench.mechanisms.stein.families import Family, get_family
from dpbench.registry import register_dataset

COVARIATE_KINDS = ("gauss_diag", "gauss_nondiag", "bernoulli")
BERNOULLI_SAMPLERS = ("bits", "integers")


@functools.cache
def hermite_rule(nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """Gauss–Hermite nodes and weights (read-only; computed once per process: ≈ 10 ms at 200 nodes)."""
    t, w = np.polynomial.hermite.hermgauss(nodes)
    t.setflags(write=False)
    w.setflags(write=False)
    return t, w


def stein_constant(family: Family, scale: float, nodes: int = 200) -> float:
    """κ = E[h(scale·Z)], Z ~ N(0, 1), by Gauss–Hermite quadrature (spec 003 C2)."""
    t, w = hermite_rule(nodes)
    return float(np.sum(w * family.h(np.sqrt(2.0) * scale * t)) / np.sqrt(np.pi))


def make_sigma(kind: str, p: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, float]:
    """(Σ, Σ^{1/2}, s) for the covariate kind (s is the diagonal scale, NaN otherwise)."""
    if kind == "gauss_diag":
        s = float(rng.uniform(0.0, 1.0))
        return s**2 * np.eye(p), s * np.eye(p), s
    if kind == "gauss_nondiag":
        U = special_ortho_group.rvs(p, random_state=rng) if p > 1 else np.ones((1, 1))
        sigma = np.eye(p) + 0.5 * (U + U.T)
        vals, vecs = np.linalg.eigh(sigma)
        vals = np.clip(vals, 0.0, None)
        return (vecs * vals) @ vecs.T, (vecs * np.sqrt(vals)) @ vecs.T, float("nan")
    if kind == "bernoulli":
        return np.eye(p) / p**2, np.eye(p) / p, float("nan")
    raise ValueError(f"covariates must be one of {COVARIATE_KINDS}, got {kind!r}")


def random_signs(rows: int, p: int, rng: np.random.Generator, sampler: str = "bits") -> np.ndarray:
    """(rows, p) iid fair signs ±1/p (spec 003 §6.2).

    ``bits``: ⌈rows·p/8⌉ uniform bytes unpacked into bits b ∈ {0, 1} (the 8 bits of a uniform byte are iid fair
    coins), x = b·(2/p) − 1/p — exactly ±fl(1/p), since fl(2/p) = 2·fl(1/p); ``integers``: one fair integer per
    entry, x = (2b − 1)/p (the historical sampler; same law, other numbers).
    """
    if sampler == "integers":
        return (2.0 * rng.integers(0, 2, size=(rows, p)) - 1.0) / p
    if sampler != "bits":
        raise ValueError(f"bernoulli_sampler must be one of {BERNOULLI_SAMPLERS}, got {sampler!r}")
    size = rows * p
    bits = np.unpackbits(np.frombuffer(rng.bytes((size + 7) // 8), dtype=np.uint8), count=size).reshape(rows, p)
    out = np.multiply(bits, 2.0 / p, dtype=float)
    out -= 1.0 / p
    return out


def sample_covariates(
    kind: str, rows: int, sigma_sqrt: np.ndarray, rng: np.random.Generator, bernoulli_sampler: str = "bits"
) -> np.ndarray:
    p = sigma_sqrt.shape[0]
    if kind == "bernoulli":
        return random_signs(rows, p, rng, bernoulli_sampler)
    Z = rng.standard_normal((rows, p))
    if kind == "gauss_diag":
        Z *= sigma_sqrt[0, 0]  # in place: the same numbers as Z·s without a second n×p array
        return Z
    return Z @ sigma_sqrt


def sample_responses(
    family: Family,
    X: np.ndarray,
    w: np.ndarray,
    rng: np.random.Generator,
    noise_c: float = 0.05,
    labels: str = "soft",
) -> np.ndarray:
    """E[y|x] = mean(⟨x, w⟩) (+ U[−C, C] noise for NLR; Bernoulli labels optional for the logistic GLM)."""
    mu = family.mean(X @ w)
    if family.kind == "nlr":
        return mu + rng.uniform(-noise_c, noise_c, size=mu.shape)
    if labels == "bernoulli":
        if family.name != "logistic":
            raise ValueError("labels='bernoulli' is only defined for the logistic family")
        return (rng.uniform(size=mu.shape) < mu).astype(float)
    if labels != "soft":
        raise ValueError(f"labels must be 'soft' or 'bernoulli', got {labels!r}")
    return mu


def public_rows(n: int, p: int, m: int | None) -> int:
    """m public rows: ⌊n/p²⌋ unless given (spec 003 §6.2)."""
    return n // p**2 if m is None else int(m)


def prefix(dataset: Dataset, *, n: int, p: int, m: int | None = None, **_: object) -> Dataset:
    """The data set of n rows and m public rows cut from a draw of at least as many (``nested: n`` or ``m``): its
    first n training rows and first m public rows. Given the instance (Σ, w*), training rows (x_i, y_i) are iid and
    public rows iid, so the cut has the law of a draw at (n, m); the test rows (independent of both) and the
    population are the draw's own."""
    m = public_rows(n, p, m)
    if dataset.X_train.shape[0] < n or dataset.X_public.shape[0] < m:
        raise ValueError(f"stein_synthetic: cannot cut n = {n}, m = {m} from a draw of n = {dataset.X_train.shape[0]}")
    population = dataclasses.replace(dataset.population, extra={**dataset.population.extra, "m": m})
    return dataclasses.replace(
        dataset,
        X_train=dataset.X_train[:n],
        y_train=dataset.y_train[:n],
        X_public=dataset.X_public[:m],
        population=population,
        meta={**dataset.meta, "m": m},
    )


@register_dataset(
    "stein_synthetic",
    summary="Wang et al. 2023 §6: Gaussian (diag / non-diag) or ±1/p covariates, GLM or NLR responses, public pool",
    kind="synthetic",
    spec="003 §6.2",
    shape=lambda n, p, **_: (n, p),
    prefix=prefix,
    nests=("n", "m"),
    options={
        "covariates": Choice(*COVARIATE_KINDS, default="gauss_diag", doc="Gaussian (diagonal / rotated Σ) or ±1/p"),
        "family": Hyper(str, default="logistic", doc="the GLM family or NLR response (mechanisms.stein.families)"),
        "n": Hyper(int, default=100_000, ge=2, doc="private rows"),
        "p": Hyper(int, default=10, ge=1, doc="dimension"),
        "m": Hyper(int, default=None, ge=1, none="⌊n/p²⌋", doc="public rows"),
        "data_draw": Hyper(int, default=0, ge=0, doc="set by the engine's data_draws, never in a config"),
        "noise_c": Hyper(float, default=0.05, ge=0, doc="noise level of the NLR responses"),
        "labels": Choice("soft", "bernoulli", default="soft", doc="GLM labels: the mean or a Bernoulli draw"),
        "n_test": Hyper(int, default=0, ge=0, doc="test rows"),
        "instance_seed": Hyper(
            int,
            default=None,
            ge=0,
            none="the trial's rng",
            doc="seed of Σ, w* and the private sample (shared along an m sweep)",
        ),  # fmt: skip
        "bernoulli_sampler": Choice(*BERNOULLI_SAMPLERS, default="bits", doc="sampler of the ±1 signs (same law)"),
    },
)
def load(rng: np.random.Generator, **options: Any) -> Dataset:
    """``data_draw`` is set by the engine (draw r of ``data_draws``; 0 otherwise), never in a config.

    ``instance_seed`` (for sweeps over m): Σ, w* and the private sample are drawn from
    ``SeedSequence([instance_seed, data_draw, n, p, n_test])`` instead of ``rng``, so entries that differ only in m
    share the same private instance (common random numbers); the public rows always come from ``rng``.
    ``bernoulli_sampler``: ``bits`` (default) or ``integers`` (the historical sampler; same law, see
    :func:`random_signs`).
    """
    covariates, family, n, p, m = (options[k] for k in ("covariates", "family", "n", "p", "m"))
    data_draw, noise_c, labels, n_test = (options[k] for k in ("data_draw", "noise_c", "labels", "n_test"))
    instance_seed, bernoulli_sampler = options["instance_seed"], options["bernoulli_sampler"]
    fam = get_family(family)
    m = public_rows(n, p, m)
    if m < 1:
        raise ValueError(f"stein_synthetic: m = {m} public rows (m defaults to ⌊n/p²⌋); need m ≥ 1")
    inst = (
        rng
        if instance_seed is None
        else np.random.default_rng(
            np.random.SeedSequence([int(instance_seed), int(data_draw), int(n), int(p), int(n_test)])
        )
    )
    sigma, sigma_sqrt, s = make_sigma(covariates, p, inst)
    g = inst.standard_normal(p)
    w = g / np.linalg.norm(g)
    X = sample_covariates(covariates, n + n_test, sigma_sqrt, inst, bernoulli_sampler)
    y = sample_responses(fam, X, w, inst, noise_c, labels)
    X_pub = sample_covariates(covariates, m, sigma_sqrt, rng, bernoulli_sampler)
    eig = np.linalg.eigvalsh(sigma)
    extra = {"sigma_op_norm": float(eig[-1]), "lam_min_sigma": float(eig[0]), "s": s, "m": m}
    if covariates != "bernoulli":
        kappa = stein_constant(fam, float(np.sqrt(w @ sigma @ w)))
        extra.update({"kappa": kappa, "c_true": 1.0 / kappa if kappa != 0 else float("inf"), "w_ols": kappa * w})
    population = Population(cov=sigma, theta=w, extra=extra)
    title = f"{family}, {covariates}, p={p}"
    meta = {
        "title": title,
        "recipe": "synthetic 003 §6.2",
        "m": m,
        "s": s,
        "sigma_op_norm": extra["sigma_op_norm"],
        "lam_min_sigma": extra["lam_min_sigma"],
    }
    X_train, y_train = (X, y) if n_test == 0 else (X[:n], y[:n])  # no view: the runner freezes owned arrays copy-free
    return Dataset(
        "stein_synthetic",
        X_train,
        y_train,
        X[n:],
        y[n:],
        X_public=X_pub,
        population=population,
        x_bound=float("inf"),
        y_bound=float("inf"),
        meta=meta,
    )
