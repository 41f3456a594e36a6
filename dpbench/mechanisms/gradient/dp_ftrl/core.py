"""DP-FTRL-Σ for one-pass private linear regression (spec 002 §3): the mechanism body (§3.7, :func:`fit_dp_ftrl`).

Its parts, one module each: the covariance designs (:mod:`~dpbench.mechanisms.gradient.dp_ftrl.covariance`), the
η rule and RESIDUALEST (:mod:`~dpbench.mechanisms.gradient.dp_ftrl.rules`), the two engines
(:mod:`~dpbench.mechanisms.gradient.dp_ftrl.engines`) and the stores of work shared across fits
(:mod:`~dpbench.mechanisms.gradient.dp_ftrl.stores`).

Algorithm 1 (spec 002 §3.1), 0-based stream t = 0..N−1, w_0 = 0:

    r_t = x_tᵀw_t − y_t,   g_t = r_t x_t · min{1, ψ_t/(|r_t|·‖x_t‖_{Σ⁻¹})}           (Σ⁻¹-norm clipping)
    g̃_{≤t} = Σ_{i≤t} g_i + ν(t+1)   (tree aggregation, node noise N(0, τ²(max_{s≤t}ψ_s)²Σ))
    w_{t+1} = −η g̃_{≤t}            (FTRL with regulariser ‖w‖²/(2η)),   output w̄_N = (1/N)Σ_{t=0}^{N−1} w_t.

Engines (same draws, same output up to round-off; tested against each other):

* :func:`run_reference` — the literal loop with :class:`~dpbench.mechanisms.gradient.tree_noise.TreeNoise`; needed
  for adaptive ψ_t (RESIDUALEST, §3.3).
* :func:`run_blocked` — fixed ψ (the benchmark default, §3.5). Since g_t = c_t x_t with a scalar c_t, the only
  sequential quantity is c_t; within a block of B steps it needs x_tᵀ(Σ_{i<t} g_i) = x_tᵀG_{t0} + Σ_{t0≤i<t} c_i x_tᵀx_i
  (one B×B Gram per block) and a_t = x_tᵀν(t) (tree noise, batched per block by
  :func:`~dpbench.mechanisms.gradient.tree_noise.inblock_prefix_noise`). The average is
  w̄_N = −(η/N)[Σ_i (N−1−i) g_i + Σ_s m_s z_s] with m_s from
  :func:`~dpbench.mechanisms.gradient.tree_noise.release_counts`.

Noise N(0, σ²Σ) never costs O(d²) per step for a structured Σ: identity/diagonal are elementwise, a dense Σ is
factored once (Cholesky, draws as one GEMM per block), and Σ = (λI + PᵀP)/M with d > M uses the exact low-rank draw
z = √(λ/M)u + Pᵀv/√M and Woodbury norms (§3.4).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any

import numpy as np

from dpbench.contract import Choice, Hyper
from dpbench.mechanisms.gradient.dp_ftrl.covariance import SIGMA_FACTORS, NoiseCovariance, PublicMoments, split_public
from dpbench.mechanisms.gradient.dp_ftrl.engines import run_blocked, run_reference
from dpbench.mechanisms.gradient.dp_ftrl.rules import (
    SPECTRA,
    eta_rule,
    private_split_groups,
    residual_est_public,
    stability_histogram_l,
    theory_eta,
)
from dpbench.mechanisms.gradient.dp_ftrl.stores import (
    cached_grams,
    cached_norms,
    cached_public_cov,
    cached_tree_noise,
    forget_other_data,
    in_sample_tr,
    in_stream_order,
    public_inv_sq_norms,
    rng_key,
    stream_rows,
    stream_xf,
)
from dpbench.privacy.tree import TREE_METHODS, TREE_NEIGHBOURS, kbar

SIGMA_DESIGNS = ("identity", "public", "oracle")
PSI_MODES = ("fixed", "public_labeled", "private_split")
ENGINES = ("auto", "blocked", "reference")
#: ‖w̄_N‖ above this (or non-finite) counts as divergence; the estimate is then reported as NaN (info.diverged)
DIVERGED_NORM = 1e8


# ----------------------------------------------------------------------------------------------------------------
# the mechanism body (spec 002 §3.7)


#: every hyperparameter of the DP-FTRL family — name, type, range, default, meaning — written once: each mechanism
#: declares the subset it takes (:func:`declared`) and forwards them to :func:`fit_dp_ftrl`, which reads the rest here
HYPER: dict[str, Hyper] = {
    "neighbour": Choice(*TREE_NEIGHBOURS, default="zero_out", doc="neighbour notion of the tree calibration"),
    "calibration": Choice(
        *TREE_METHODS, default="agm", doc="τ by the exact GDP route (agm), zCDP (rdp) or Thm 4.1 (paper)"
    ),
    "eta": Hyper(
        float, default="rule", gt=0, also=("rule", "theory"), doc="step size η, or the rate-balancing / theory rule"
    ),
    "eta_c1": Hyper(float, default=1.0, gt=0, doc="constant c1 of the η rule"),
    "eta_c2": Hyper(float, default=8.0, gt=0, doc="constant c2 of the η rule"),
    "spectrum": Choice(
        *SPECTRA,
        default=None,
        none="the generator's design (oracle), else unknown",
        doc="design spectrum assumed by the η rule",
    ),
    "r": Hyper(
        float,
        default=None,
        gt=0,
        none="the generator's (oracle); needed with spectrum: poly",
        doc="polynomial decay exponent (> 1)",
    ),
    "trH": Hyper(float, default=None, gt=0, none="the design's, else unknown", doc="tr H of the design"),
    "eta_max": Hyper(float, default=None, gt=0, none="1/(2 tr H), 1/(2 C_X²) or ∞", doc="largest step size"),
    "clip_C": Hyper(float, default="auto", gt=0, also=("auto",), doc="clipping constant C, or c_C·√tr(Σ⁻¹H)"),
    "c_C": Hyper(float, default=2.0, gt=0, doc="constant of the automatic C"),
    "C_X": Hyper(float, default=None, gt=0, none="no bound on ‖x‖", doc="declared bound ‖x_i‖ ≤ C_X"),
    "C_Y": Hyper(float, default=None, gt=0, none="no bound on |y|", doc="declared bound |y_i| ≤ C_Y"),
    "l0": Hyper(
        float, default=None, gt=0, none="the generator's (oracle), else √2·C_Y", doc="residual bound: ψ = C·l0"
    ),
    "lam_mult": Hyper(float, default=1.0, gt=0, inf=True, doc="Σ = design + lam_mult/(Nη)·I (∞: Σ = I)"),
    "public_C_fraction": Hyper(float, default=0.2, ge=0, lt=1, doc="share of the public rows held out to set C"),
    "public_C_rows": Hyper(
        int, default=None, ge=0, none="public_C_fraction of the public rows", doc="public rows held out"
    ),
    "psi_mode": Choice(*PSI_MODES, default="fixed", doc="fixed ψ, or RESIDUALEST on labelled estimating rows"),
    "psi_cap": Hyper(float, default=None, gt=0, also=("C_l0",), none="no cap", doc="cap of the estimated ψ"),
    "estimating_m": Hyper(int, default=256, ge=1, doc="labelled estimating rows used by RESIDUALEST"),
    "shuffle": Hyper(bool, default=True, doc="stream the records in a uniformly random (data-independent) order"),
    "engine": Choice(*ENGINES, default="auto", doc="blocked fast path or the literal tree loop (declares nodes)"),
    "sigma_factor": Choice(
        *SIGMA_FACTORS,
        default="eigh",
        doc="square root of a dense public Σ: eigenbasis (XV shared by every ε) or Cholesky; same Σ, same law",
    ),
}


def declared(*names: str) -> dict[str, Hyper]:
    """The declarations of the hyperparameters ``names`` (a mechanism's subset of :data:`HYPER`)."""
    return {name: HYPER[name] for name in names}


def options(hyper: Mapping[str, Any]) -> SimpleNamespace:
    """``hyper`` over the defaults of :data:`HYPER` (names outside it raise TypeError)."""
    unknown = sorted(set(hyper) - set(HYPER))
    if unknown:
        raise TypeError(f"fit_dp_ftrl: unknown hyperparameter(s) {unknown}; known: {sorted(HYPER)}")
    return SimpleNamespace(**{name: hyper.get(name, spec.default) for name, spec in HYPER.items()})


def _design_value(name: str, given: Any, population, key: str) -> Any:
    if given is not None:
        return given
    if population is not None and key in population.extra:
        return population.extra[key]
    return None


def fit_dp_ftrl(
    X: np.ndarray,
    y: np.ndarray,
    epsilon: float | None,
    delta: float | None,
    rng: np.random.Generator,
    *,
    sigma_design: str,
    tau: float,
    calibration_info: dict[str, Any],
    public_X: np.ndarray | PublicMoments | None = None,
    population=None,
    estimating_X: np.ndarray | None = None,
    estimating_y: np.ndarray | None = None,
    block: int = 128,
    nonprivate: bool = False,
    **hyper: Any,
) -> tuple[np.ndarray, dict[str, Any]]:
    """Steps 1–7 of spec 002 §3.7 for a given τ (τ = 0 and ``nonprivate`` ⇒ ψ = ∞: averaged SGD); ``hyper``: any
    of :data:`HYPER` (the rest at their defaults)."""
    o = options(hyper)
    n, d = X.shape
    if sigma_design not in SIGMA_DESIGNS:
        raise ValueError(f"sigma_design must be one of {SIGMA_DESIGNS}, got {sigma_design!r}")
    if o.psi_mode not in PSI_MODES:
        raise ValueError(f"psi_mode must be one of {PSI_MODES}, got {o.psi_mode!r}")
    if o.engine not in ("auto", "blocked", "reference"):
        raise ValueError(f"engine must be 'auto', 'blocked' or 'reference', got {o.engine!r}")
    forget_other_data(X)
    # 1. stream order (data-independent permutation from the trial rng; None: the drawn order)
    order = rng_key(rng) if o.shuffle else None
    perm = rng.permutation(n) if o.shuffle else None
    X_original = X
    X, y = (stream_rows(X, perm), y[perm]) if o.shuffle else (X, y)
    # design constants: hyperparameters, else the generator's (known design, synthetic only)
    spectrum = _design_value("spectrum", o.spectrum, population, "spectrum") or "unknown"
    r = _design_value("r", o.r, population, "r")
    trH = _design_value("trH", o.trH, population, "trH")
    l0 = _design_value("l0", o.l0, population, "l0")
    h_diag = population.extra.get("h_diag") if population is not None else None
    P_sigma = P_C = None
    if sigma_design == "public":
        if public_X is None:
            raise ValueError("sigma_design='public' needs public_X (unlabeled public rows); none given")
        if not isinstance(public_X, PublicMoments):
            public_X = np.asarray(public_X, dtype=float)
        if len(public_X.shape) != 2 or public_X.shape[1] != d:
            raise ValueError(f"public_X must have shape (M, {d}), got {public_X.shape}")
        m_c = int(o.public_C_rows) if o.public_C_rows is not None else int(round(o.public_C_fraction * len(public_X)))
        P_sigma, P_C = split_public(public_X, m_c)
        if trH is None and isinstance(public_X, PublicMoments):
            trH = public_X.mean_sq_norm()
        elif trH is None:
            trH = float(np.mean(np.einsum("ij,ij->i", public_X, public_X)))
    if sigma_design == "oracle" and population is None:
        raise ValueError("sigma_design='oracle' needs the generator's population (synthetic data only)")
    if trH is None and sigma_design == "oracle":
        trH = float(np.trace(population.cov)) if h_diag is None else float(np.sum(h_diag))
    # 3. step size
    eta_max = o.eta_max
    if eta_max is None:
        if trH is not None:
            eta_max = 1.0 / (2.0 * trH)
        elif o.C_X is not None:
            eta_max = 1.0 / (2.0 * o.C_X**2)
        else:
            eta_max = math.inf
    if isinstance(o.eta, str):
        if o.eta == "rule":
            eta_value = eta_rule(
                n,
                tau,
                designed=sigma_design != "identity",
                spectrum=spectrum,
                r=r,
                eta_max=eta_max,
                c1=o.eta_c1,
                c2=o.eta_c2,
            )
        elif o.eta == "theory":
            if trH is None:
                raise ValueError("eta='theory' needs trH (or a design that provides it)")
            eta_value = theory_eta(n, trH)
        else:
            raise ValueError(f"eta must be a number, 'rule' or 'theory', got {o.eta!r}")
    else:
        eta_value = float(o.eta)
    if not eta_value > 0 or not math.isfinite(eta_value):
        raise ValueError(f"eta must be finite and > 0, got {eta_value}")
    # 4. Σ and the Σ⁻¹-norms
    lam = math.nan
    if sigma_design == "identity" or not math.isfinite(o.lam_mult):
        cov = NoiseCovariance.identity(d)
    elif sigma_design == "oracle":
        lam = o.lam_mult / (n * eta_value)
        if h_diag is not None:
            cov = NoiseCovariance.diagonal(np.asarray(h_diag) + lam)
        else:
            cov = NoiseCovariance.dense(population.cov + lam * np.eye(d))
    else:
        lam = o.lam_mult * len(P_sigma) / (n * eta_value)
        cov = cached_public_cov(P_sigma, lam, o.sigma_factor)
    # 5. clipping constant C
    tr_sh = math.nan
    if nonprivate:
        C = math.inf
    elif not isinstance(o.clip_C, str):
        C = float(o.clip_C)
    elif o.clip_C != "auto":
        raise ValueError(f"clip_C must be a number or 'auto', got {o.clip_C!r}")
    elif sigma_design == "identity" and o.C_X is not None:
        C = float(o.C_X)
    else:
        if cov.kind == "identity" and trH is not None and sigma_design != "public":
            tr_sh = float(trH)
        elif sigma_design == "oracle" and h_diag is not None:
            tr_sh = float(np.sum(np.asarray(h_diag) / cov.diag))
        elif sigma_design == "oracle":
            tr_sh = float(np.trace(np.linalg.solve(cov.matrix(), population.cov)))
        elif sigma_design == "public" and P_C is not None and len(P_C):
            tr_sh = float(np.mean(public_inv_sq_norms(cov, P_C)))
        elif sigma_design == "public":
            tr_sh = in_sample_tr(cov, P_sigma)  # in-sample: biased low (§3.5 pilot finding)
        else:
            raise ValueError("clip_C='auto' needs C_X, trH or a design that provides tr(Σ⁻¹H)")
        C = o.c_C * math.sqrt(tr_sh)
    # 6. clipping level
    if nonprivate:
        psi = math.inf
    else:
        if l0 is None:
            if o.C_Y is None:
                raise ValueError("psi_mode needs l0 (or C_Y, giving l0 = √2·C_Y); neither given")
            l0 = math.sqrt(2.0) * o.C_Y
        psi = C * float(l0)
    q = in_stream_order(cached_norms(cov, X_original), perm) if math.isfinite(psi) else np.zeros(n)
    XF = stream_xf(cov, X_original, perm) if tau > 0 and cov.kind in ("dense", "eigen", "lowrank") else None
    # 7. run
    failures = 0
    if o.psi_mode == "fixed" and o.engine != "reference":
        noise = cached_tree_noise(rng, n, cov.noise_dim, block) if tau > 0 else None
        result = run_blocked(
            X,
            y,
            q,
            psi,
            tau * psi if tau > 0 else 0.0,
            eta_value,
            cov,
            rng,
            block=block,
            XF=XF,
            grams=cached_grams(X_original, order, X, block),
            noise=noise,
        )
    else:
        psi_fn = None
        if o.psi_mode == "public_labeled":
            if estimating_X is None or estimating_y is None:
                raise ValueError("psi_mode='public_labeled' needs labelled public estimating data")
            if o.psi_cap is None:
                cap = math.inf
            elif o.psi_cap == "C_l0":  # the recommended cap ψ ≤ C·l0 (= the fixed-ψ level, spec 002 §3.5)
                cap = psi
            else:
                cap = float(o.psi_cap)

            def psi_fn(w):
                return min(C * residual_est_public(estimating_X, estimating_y, w), cap)

        elif o.psi_mode == "private_split":
            if estimating_X is None or estimating_y is None:
                raise ValueError("psi_mode='private_split' needs a private labelled estimating split")
            groups, size = private_split_groups(len(estimating_y), n, epsilon, delta)
            eps_t = epsilon / math.sqrt(8.0 * n * math.log(2.0 / delta))
            delta_t = delta / (2.0 * n)

            def psi_fn(w):
                res = estimating_y - estimating_X @ w
                value = stability_histogram_l(res * res, groups, size, eps_t, delta_t, rng)
                return None if value is None else C * value

        result = run_reference(X, y, q, tau, eta_value, cov, rng, psi_fn=psi_fn, psi=psi)
        failures = result.failures
        psi = result.psi_max
    theta = result.theta
    diverged = not np.all(np.isfinite(theta)) or float(np.linalg.norm(theta)) > DIVERGED_NORM
    if diverged:  # e.g. un-capped RESIDUALEST Option 1 (spec 002 §3.5 pilot): report NaN, not 1e270
        theta = np.full(d, np.nan)
    info = {
        "diverged": diverged,
        "tau": tau,
        "sigma_node": tau * psi if tau > 0 and math.isfinite(psi) else 0.0,
        "psi": psi,
        "C": C,
        "l0": math.nan if l0 is None else float(l0),
        "kbar": kbar(n),
        "eta": eta_value,
        "lam": lam,
        "clip_frac": result.clip_frac,
        "trSH_est": tr_sh,
        "M": 0 if P_sigma is None else len(P_sigma),
        "M_C": 0 if P_C is None else len(P_C),
        "sigma_design": sigma_design,
        "cov_kind": cov.kind,
        "residual_est_failures": failures,
        "w_last_norm": float(np.linalg.norm(result.w_last)),
        **calibration_info,
    }
    return theta, info
