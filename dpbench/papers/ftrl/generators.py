"""``spectral_gaussian``: the DP-FTRL synthetic design with exact population quantities (spec 002 §5.2, PROPOSED).

x = H^{1/2} z, z ~ N(0, I_d), H = diag(λ_1..λ_d) with λ_i = i^{−r} (``spectrum="poly"``) or e^{−i} (``"exp"``);
w*_i = i^{−1}/√(Σ_{j≤d} j^{−2}) (‖w*‖ = 1); y = ⟨w*, x⟩ + ζ, ζ ~ N(0, σ_ζ²). Diagonal H is without loss of
generality (every Σ design and the Σ⁻¹-clipping are rotation equivariant, §5.2).

Public data: ``public_M`` (default N) fresh unlabeled rows to build Σ followed by ``public_MC`` (default 1000) fresh
rows to estimate C, concatenated in ``Dataset.X_public`` (set ``public_C_rows: public_MC`` on the mechanism).
``public_sampler``: ``rows`` (default, the literal M·d normals) or ``wishart``: Σ reads the M rows only through PᵀP,
which is drawn directly as H^{1/2}AAᵀH^{1/2} ~ Wishart_d(M, H) (Bartlett factor A, O(d³) instead of O(Md²)); then
``Dataset.X_public`` is a :class:`~dpbench.mechanisms.gradient.dp_ftrl.covariance.PublicMoments` (PᵀP, M, the M_C rows).
Exact in law (tests/mechanisms/gradient/test_dp_ftrl_speed.py, KS test); needs M ≥ d. ``auto``: ``wishart`` where M ≥ d,
``rows`` where M < d (the low-rank Σ of d > M reads P itself) — for an N grid crossing d (E1 at d = 2048, N from 2^8).
``estimating_m`` labelled public rows (RESIDUALEST Option 1 ablation) go to ``population.extra["estimating"]``.

Population extras (known design constants): ``h_diag``, ``spectrum``, ``r``, ``trH`` = tr H,
``l0`` = √(2(‖w*‖²_H + σ_ζ²)) (Option 1's value at w_0 = 0, §3.5), ``zero_excess`` = ½‖w*‖²_H.

Metric ``excess_pop_paper`` = ½(θ̂ − w*)ᵀH(θ̂ − w*) (the paper's L with the ½, §1.5), exact; the MSE convention
(no ½) is the shared ``param_error_sigma``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpbench.analysis.metrics import TrialCoordinates, register_metric
from dpbench.contract import Choice, Hyper
from dpbench.data._base import Dataset, Population
from dpbench.mechanisms.gradient.dp_ftrl.covariance import PublicMoments
from dpbench.registry import register_dataset

SPECTRA = ("poly", "exp")
PUBLIC_SAMPLERS = ("rows", "wishart", "auto")


def spectrum_values(d: int, spectrum: str, r: float) -> np.ndarray:
    """λ_i, i = 1..d: i^{−r} or e^{−i}."""
    i = np.arange(1, d + 1, dtype=float)
    if spectrum == "poly":
        if not r > 1:
            raise ValueError(f"spectral_gaussian: spectrum='poly' needs r > 1, got r={r}")
        return i ** (-float(r))
    if spectrum == "exp":
        return np.exp(-i)
    raise ValueError(f"spectral_gaussian: spectrum must be one of {SPECTRA}, got {spectrum!r}")


def wstar_inv_i(d: int) -> np.ndarray:
    """w*_i ∝ 1/i with ‖w*‖₂ = 1 (spec 002 §5.2)."""
    w = 1.0 / np.arange(1, d + 1, dtype=float)
    return w / np.linalg.norm(w)


def design_constants(h: np.ndarray, wstar: np.ndarray, sigma_noise: float) -> dict[str, float]:
    """tr H, l0 = √(2(‖w*‖²_H + σ²)) and the zero predictor's excess ½‖w*‖²_H."""
    signal = float(np.sum(h * wstar**2))
    return {
        "trH": float(np.sum(h)),
        "l0": math.sqrt(2.0 * (signal + sigma_noise**2)),
        "zero_excess": 0.5 * signal,
    }


def sample_rows(h: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """n rows x = H^{1/2} z, z ~ N(0, I_d) (scaled in place: no second (n, d) array)."""
    rows = rng.standard_normal((n, h.size))
    rows *= np.sqrt(h)
    return rows


def bartlett_factor(d: int, m: int, rng: np.random.Generator) -> np.ndarray:
    """Lower-triangular A with AAᵀ ~ Wishart_d(m, I_d), m ≥ d (Bartlett decomposition).

    A_ii = √c_i with c_i ~ χ²_{m−i+1} (i = 1..d), A_ij ~ N(0, 1) for i > j, all independent; AAᵀ has the law of ZᵀZ
    for Z an (m, d) matrix of iid N(0, 1) (Bartlett 1933; e.g. Muirhead, Aspects of Multivariate Statistical Theory,
    Thm 3.2.14)."""
    if m < d:
        raise ValueError(f"the Bartlett factor of Wishart_d(m, I) needs m ≥ d, got m = {m}, d = {d}")
    A = np.zeros((d, d))
    below = np.tril_indices(d, -1)
    A[below] = rng.standard_normal(below[0].size)
    A[np.diag_indices(d)] = np.sqrt(rng.chisquare(m - np.arange(d, dtype=float)))
    return A


def wishart_gram(h: np.ndarray, m: int, rng: np.random.Generator) -> np.ndarray:
    """PᵀP of m rows x = H^{1/2}z, drawn without the rows: (H^{1/2}A)(H^{1/2}A)ᵀ ~ Wishart_d(m, H), H = diag(h).

    PᵀP = H^{1/2}(ZᵀZ)H^{1/2} and ZᵀZ =_d AAᵀ (:func:`bartlett_factor`), so the law is exact; O(d³) against
    O(m d²) for the rows and their Gram (spec 002 §5.2 public data, issue 16)."""
    B = bartlett_factor(h.size, m, rng)
    B *= np.sqrt(h)[:, None]
    return B @ B.T


def public_data(h: np.ndarray, m: int, m_c: int, sampler: str, rng: np.random.Generator) -> np.ndarray | PublicMoments:
    """The public set: m rows for Σ then m_c rows for C (``rows``), or PᵀP of the m rows and the m_c rows
    (``wishart``)."""
    if sampler == "rows":
        return sample_rows(h, m + m_c, rng)
    if sampler == "wishart":
        return PublicMoments(wishart_gram(h, m, rng), m, sample_rows(h, m_c, rng))
    raise ValueError(f"spectral_gaussian: public_sampler must be one of {PUBLIC_SAMPLERS}, got {sampler!r}")


@register_dataset(
    "spectral_gaussian",
    summary="Synthetic Gaussian design with power-law/exp spectrum, w* ∝ 1/i, public rows (spec 002 §5.2)",
    kind="synthetic",
    spec="002 §5.2",
    options={
        "n": Hyper(int, default=4096, ge=1, doc="private rows"),
        "d": Hyper(int, default=2048, ge=1, doc="dimension"),
        "spectrum": Choice(*SPECTRA, default="poly", doc="λ_i = i^−r (poly) or e^−i (exp)"),
        "r": Hyper(float, default=3.0, gt=0, doc="the power-law exponent (spectrum: poly needs r > 1)"),
        "sigma_noise": Hyper(float, default=0.5, ge=0, doc="label noise standard deviation"),
        "public_M": Hyper(int, default=None, ge=0, none="n", doc="public rows for Σ"),
        "public_MC": Hyper(int, default=1000, ge=0, doc="public rows for C"),
        "estimating_m": Hyper(int, default=0, ge=0, doc="labelled rows for estimating constants"),
        "n_test": Hyper(int, default=0, ge=0, doc="test rows"),
        "public_sampler": Choice(
            *PUBLIC_SAMPLERS, default="rows", doc="rows, their Wishart moments, or auto (wishart when public_M ≥ d)"
        ),  # fmt: skip
    },
)
def load(rng: np.random.Generator, **options: Any) -> Dataset:
    n, d, spectrum, r, sigma_noise = (options[k] for k in ("n", "d", "spectrum", "r", "sigma_noise"))
    public_MC, estimating_m, n_test = options["public_MC"], options["estimating_m"], options["n_test"]
    public_sampler = options["public_sampler"]
    public_M = n if options["public_M"] is None else int(options["public_M"])
    if public_sampler == "auto":
        public_sampler = "wishart" if public_M >= d else "rows"
    h = spectrum_values(d, spectrum, r)
    wstar = wstar_inv_i(d)
    X = sample_rows(h, n, rng)
    y = X @ wstar + sigma_noise * rng.standard_normal(n)
    if public_sampler == "wishart" and public_M < d:
        raise ValueError(
            f"spectral_gaussian: public_sampler='wishart' needs public_M ≥ d (the low-rank Σ uses the "
            f"rows), got public_M = {public_M}, d = {d}"
        )
    X_public = public_data(h, public_M, public_MC, public_sampler, rng)
    X_est = sample_rows(h, estimating_m, rng)
    y_est = X_est @ wstar + sigma_noise * rng.standard_normal(estimating_m)
    X_test = sample_rows(h, n_test, rng)
    y_test = X_test @ wstar + sigma_noise * rng.standard_normal(n_test)
    constants = design_constants(h, wstar, sigma_noise)
    extra = {
        "h_diag": h,
        "spectrum": spectrum,
        "r": float(r) if spectrum == "poly" else None,
        "estimating": (X_est, y_est),
        **constants,
    }
    population = Population(cov=np.diag(h), theta=wstar, noise_var=sigma_noise**2, extra=extra)
    shape = f"i^-{r:g}" if spectrum == "poly" else "e^-i"
    return Dataset(
        "spectral_gaussian",
        X,
        y,
        X_test,
        y_test,
        X_public=X_public,
        population=population,
        x_bound=math.inf,
        y_bound=math.inf,
        meta={
            "title": f"λ_i = {shape}, d = {d}, N = {n}",
            "recipe": "synthetic",
            "spectrum": spectrum,
            "r": float(r),
            "public_M": public_M,
            "public_MC": public_MC,
            "public_sampler": public_sampler,
            **constants,
        },
    )


@register_metric("excess_pop_paper", "Excess population risk ½‖θ̂ − w*‖²_H")
def excess_pop_paper(theta: np.ndarray, dataset: Dataset, stats=None, trial: TrialCoordinates | None = None) -> float:
    """½(θ̂ − w*)ᵀH(θ̂ − w*) with the generator's exact H (diagonal fast path); NaN on real data (spec 002 §1.5)."""
    population = dataset.population
    if population is None:
        return float("nan")
    diff = np.asarray(theta, dtype=float) - population.theta
    h = population.extra.get("h_diag")
    if h is not None:
        return 0.5 * float(np.sum(h * diff * diff))
    return 0.5 * float(diff @ population.cov @ diff)


if __name__ == "__main__":  # print the design constants the configs use: python -m dpbench.papers.ftrl.generators
    for d in (256, 512, 1024, 2048, 4096):
        for spectrum, r in (("poly", 2.0), ("poly", 3.0), ("poly", 5.0), ("exp", 0.0)):
            values = design_constants(spectrum_values(d, spectrum, r), wstar_inv_i(d), 0.5)
            print(d, spectrum, r, {k: round(v, 6) for k, v in values.items()})
