"""Central-DP mechanisms of spec 000 (information-weighted regression, §3.4–3.6, §3.8, §3.9, §3.12).

Registered: ``iwr_dp`` (Alg 4 + 5), ``iwr_dp_erm`` (Alg 4 + 13 + 14, ν = id), ``iwr_dp_oracle`` (Alg 10, W from the
generator's p), ``ssp_ball`` (unweighted SSP + ball-constrained least squares), ``dp_sgd_improper`` (Alg 16)
(the reference θ̂ = 0 is :mod:`dpbench.mechanisms.reference.zero`).

Conventions (spec 000 §1.3, §3.13, §4.1): ``calibration`` ∈ {paper, classical, agm}; for ``paper`` every release
uses σ_{ε,δ} with the paper's (doubled) half-sensitivities, for the generic families the l2-sensitivities of the
§3.13 "generic calibration" paragraph with joint releases. ``neighbour="zero_out"`` halves every central
sensitivity (Alg 14's Δ_N is kept). The contract declares the neighbour notion (and ``none`` for
``nonprivate: true``) as a function of the hyperparameters: the CSV's ``privacy_model`` / ``neighbour`` columns follow.
Each record is used in exactly one release stage (D₀ → W, D₁ → θ̂; epochs of D₀ disjoint).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from dpbench.contract import FALLBACK_INFO, AuditSetup, Bounds, Hyper
from dpbench.mechanisms._base import FitResult, recording, released
from dpbench.mechanisms.iwr._common import (
    AUDIT,
    AUDIT_STAGED,
    RULE,
    STYLES,
    StageNoise,
    calibrated_epsilons,
    central_factor,
    central_model,
    central_neighbour,
    check_preset,
    declared,
    epoch_slices,
    gamma_zero_needs_noise_off,
    halves,
    loglog_K,
    prepare,
    shuffled,
    stage_noise,
    unit_sigma,
)
from dpbench.mechanisms.iwr._memo import data_memo
from dpbench.mechanisms.iwr.calibration import gaussian_std, release_stds
from dpbench.mechanisms.iwr.linalg import ball_lsq, msqrt, row_norms
from dpbench.mechanisms.iwr.matrix import (
    SpectralResult,
    population_info_matrix,
    solve_info_matrix,
)
from dpbench.mechanisms.iwr.releases import (
    central_ssp_release,
    hessian_release,
    output_release,
    spectral_dp_release,
)
from dpbench.mechanisms.iwr.sgd import cached_sgd_average, sgd_average
from dpbench.registry import register_mechanism

AUDIT_SMALL = AuditSetup(hyper={"calibration": "agm"}, whitebox={"pair": {"n": 16}})
#: Alg 16's average θ̄ = mean of θ_1..θ_T never includes the last record's step: the canary goes first
AUDIT_SGD = AuditSetup(
    hyper={"calibration": "agm"}, whitebox={"pair": {"n": 16, "canary_first": True}, "hyper": {"shuffle": False}}
)
#: ‖φ_i‖ ≤ B and |y_i| ≤ 1, or clipped to them with ``clip: true``
BOUNDS = Bounds(x="B", y=1.0, clips="clip")
#: the declarations of the two-stage central fits (iwr_dp, iwr_dp_erm), in their tables' order: the data bound and
#: clipping, the noise, the (K, λ, γ) rules' inputs; then the record order, the printed-noise switch, the noise switch
CENTRAL_RULE = ("B", "clip", "calibration", "neighbour", "fail_prob", "preset", "c_gamma")
STAGED = ("shuffle", "paper_literal_noise", "nonprivate")


# ---------------------------------------------------------------------------------------------------------------
# hyperparameter rules (spec 000 §3.5, §6)


def iwr_dp_hyper(
    n: int,
    d: int,
    epsilon: float,
    delta: float,
    *,
    B: float = 1.0,
    calibration: str = "paper",
    neighbour: str = "replace",
    preset: str = "calibrated",
    c_gamma: float = 1.0,
    fail_prob: float = 0.05,
    lam_rule: str = "l2",
) -> dict[str, float]:
    """(K, λ, γ) of IWR-DP (spec 000 §6.1/6.2): K = 4 (calibrated) or max{⌈log log T⌉, 4} (theory); λ = 1/√T
    (``lam_rule="l2"``, Thm 5.3) or √(d log(1/δ_f)/T) (``"l1"``, Prop 5.4);
    γ = c_γ·B·K·(σ√(d + log(K/δ_f)) + log(K/δ_f))/(λT) (Eq. 39 with C = 1), σ = σ_{ε,δ} (paper) or the generic
    std per unit half-sensitivity, times ½ for zero-out neighbours."""
    check_preset(preset)
    K = 4 if preset == "calibrated" else loglog_K(n, 4)
    if lam_rule == "l2":
        lam = 1.0 / math.sqrt(n)
    elif lam_rule == "l1":
        lam = math.sqrt(d * math.log(1.0 / fail_prob) / n)
    else:
        raise ValueError(f"lam_rule must be 'l2' or 'l1', got {lam_rule!r}")
    sigma = unit_sigma(epsilon, delta, calibration, central_factor(neighbour))
    logk = math.log(K / fail_prob)
    gamma = c_gamma * B * K * (sigma * math.sqrt(d + logk) + logk) / (lam * n)
    return {"K": K, "lam": lam, "gamma": gamma, "sigma_unit": sigma}


# ---------------------------------------------------------------------------------------------------------------
# algorithm functions (importable; no input checks beyond shapes)


def spectral_dp(
    Phi0: np.ndarray, *, K: int, gamma: float, lam: float, noise: StageNoise, rng: np.random.Generator
) -> tuple[SpectralResult, float]:
    """Algorithm 4 (Spectral-Iteration-DP) on block D₀; returns (result, per-entry noise std).

    H_(k) = (1/N)Σ W^{1/2}φφᵀW^{1/2}/(1 + γ‖Wφ‖), per-record ‖·‖_F < B/γ ⇒ replace-one l2-sensitivity of the
    epoch mean 2B/(γN); H̃ = SymPriv: upper-triangle std gaussian_std(2B/(γN)·f, ε, δ) (= σ_{ε,δ}B/(γN) for
    the paper calibration; f = ½ for zero-out); constant λ; floor at λ/2.
    """
    epochs = epoch_slices(Phi0.shape[0], K, Phi0.shape[1])
    N = epochs[0].stop - epochs[0].start
    sensitivity = 2.0 * noise.B * central_factor(noise.neighbour) / (gamma * N) if gamma > 0 else float("inf")
    std = noise.std(sensitivity)  # γ = 0 only with the noise off (gamma_zero_needs_noise_off)
    result = spectral_dp_release([Phi0[s] for s in epochs], gamma=gamma, lam=lam, std=std, sensitivity=sensitivity,
                                 rng=rng)  # fmt: skip
    return result, std


SPECTRAL_DP_SIGNATURE = inspect.signature(spectral_dp)


def shared_spectral_dp(
    X: np.ndarray, y: np.ndarray, rows: slice, *, rng: np.random.Generator, **params: Any
) -> tuple[SpectralResult, float]:
    """``spectral_dp(X[rows], rng=rng, **params)``, memoised per (read-only data draw, rows, params, rng state).

    Alg 4 is a deterministic function of its block, its parameters and the rng state it starts from; on a hit the
    memo returns the stored result and moves ``rng`` to the state the computation left it in, so every later draw
    of the caller is the same (bit-identical). With common random numbers, mechanisms that run the same stage 1 on
    the same trial seed share one computation: ``iwr_dp``, the learned-W ``iwr_dp_ablation`` variants and
    ``iwr_dp_erm`` when its (K, γ, λ) agree. Off during an audit, whose recorder must see every release.
    """
    if recording():
        return spectral_dp(X[rows], rng=rng, **params)
    bound = SPECTRAL_DP_SIGNATURE.bind(X, rng=rng, **params)
    bound.apply_defaults()  # the key names every parameter, defaults included
    settings = tuple(sorted((k, v) for k, v in bound.arguments.items() if k not in ("Phi0", "rng")))
    key = ("alg4_stage1", rows.start, rows.stop, settings, repr(rng.bit_generator.state))

    def compute() -> tuple[SpectralResult, float, dict]:
        result, std = spectral_dp(X[rows], rng=rng, **params)
        return result, std, rng.bit_generator.state

    result, std, state = data_memo(X, y, key, compute)
    rng.bit_generator.state = state
    return result, std


def iw_features(Phi: np.ndarray, W: np.ndarray, gamma: float) -> np.ndarray:
    """Rows w(φ) = Wφ/(1 + γ‖Wφ‖) (‖w(φ)‖ < 1/γ; spec 000 §3.5)."""
    P = Phi @ W
    return P / (1.0 + gamma * row_norms(P))[:, None]


def stage2_moments(Phi1: np.ndarray, y1: np.ndarray, W: np.ndarray, gamma: float) -> tuple[np.ndarray, np.ndarray]:
    """Alg 5's noiseless statistics ψ = (1/N₁)Σ w(φ)y and Ψ = (1/N₁)Σ w(φ)φᵀ, w(φ) = Wφ/(1 + γ‖Wφ‖)."""
    N1 = Phi1.shape[0]
    wf = iw_features(Phi1, W, gamma)
    return wf.T @ y1 / N1, wf.T @ Phi1 / N1


def iwr_dp_stage2(
    Phi1: np.ndarray,
    y1: np.ndarray,
    W: np.ndarray,
    *,
    gamma: float,
    lam: float,
    noise: StageNoise,
    rng: np.random.Generator,
    paper_literal_noise: bool = False,
    radius: float | None = None,
    moments: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, dict[str, float]]:
    """Algorithm 5 stage 2: ψ = mean w(φ)y, Ψ = mean w(φ)φᵀ (non-symmetric), ψ̃ = ψ + N(0, s_ψ²I),
    Ψ̃ = Ψ + s_Ψ·G; θ̂ = (Ψ̃ + λI)^{-1}ψ̃ (lstsq fallback), or, with a public ``radius`` R (the issue-17 ablation),
    θ̂ = argmin_{‖θ‖ ≤ R} ‖(Ψ̃ + λI)θ − ψ̃‖ (post-processing of the same releases).

    Sensitivities (replace-one): ψ: 2/(γN₁), Ψ: 2B/(γN₁) (×½ zero-out). Paper: each at (ε/2, δ) — std 2σ/(γN₁),
    2Bσ/(γN₁) (the doubled Δ of spec 000 #1); ``paper_literal_noise`` halves them (the printed
    Priv_{2/(γT)}: ε_effective = 2ε). Generic: joint release, s = 2√(1+B²)/(γN₁) at (ε, δ).
    ``moments``: (ψ, Ψ) = ``stage2_moments(Phi1, y1, W, gamma)`` when the caller already has them (a memo).
    """
    N1, d = Phi1.shape
    B, f, nonprivate = noise.B, central_factor(noise.neighbour), noise.nonprivate
    psi, Psi = stage2_moments(Phi1, y1, W, gamma) if moments is None else moments
    if nonprivate:
        s_psi = s_Psi = 0.0
    else:
        sensitivities = [2.0 * f / (gamma * N1), 2.0 * B * f / (gamma * N1)]
        s_psi, s_Psi = release_stds(sensitivities, noise.epsilon, noise.delta, noise.calibration)
        if paper_literal_noise:
            s_psi, s_Psi = s_psi / 2.0, s_Psi / 2.0
    psi_t = psi + s_psi * rng.standard_normal(d)
    Psi_t = Psi + s_Psi * rng.standard_normal((d, d))
    if not nonprivate:
        psi_t = released("ψ̃", psi_t, psi, scale=s_psi, sensitivity=2.0 * f / (gamma * N1))
        Psi_t = released("Ψ̃", Psi_t, Psi, scale=s_Psi, sensitivity=2.0 * B * f / (gamma * N1))
    A = Psi_t + lam * np.eye(d)
    singular = 0
    if radius is not None:
        return ball_lsq(A, psi_t, radius), {"std_psi": s_psi, "std_Psi": s_Psi, "singular": singular}
    try:
        theta = np.linalg.solve(A, psi_t)
    except np.linalg.LinAlgError:
        theta = np.linalg.lstsq(A, psi_t, rcond=None)[0]
        singular = 1
    return theta, {"std_psi": s_psi, "std_Psi": s_Psi, "singular": singular}


# ---------------------------------------------------------------------------------------------------------------
# the pieces of a registered fit that read its hyperparameters


def _data_bounds(hyper: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments of :func:`prepare`: the data bound B, clipping, the calibration and neighbour notion."""
    return {key: hyper[key] for key in ("B", "clip", "calibration", "neighbour")}


def rule_inputs(hyper: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments of the (K, λ, γ) rules :func:`iwr_dp_hyper` and :func:`iwr_dp_erm_hyper` besides λ's rule."""
    return {key: hyper[key] for key in ("B", "calibration", "neighbour", "preset", "c_gamma", "fail_prob")}


def _two_stage_fit(
    X: np.ndarray,
    y: np.ndarray,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    hyper: Mapping[str, Any],
    *,
    rule: Callable[[int, int], Mapping[str, float]],
    stage2: Callable[..., tuple[np.ndarray, dict[str, float]]],
    stage1_std: str,
    epsilon_effective: float,
) -> FitResult:
    """A registered two-stage central IWR fit: the inputs checked (and clipped with ``clip``), K, λ, γ by
    ``rule(n, d)`` unless given, the records shuffled, Alg 4 on D₀ (its noise std recorded as ``stage1_std``),
    ``stage2`` (Alg 5 or Alg 14) on D₁ with W; the info holds (K, λ, γ), Alg 4's floors, the releases' stds, the
    settings and W."""
    X, y = prepare(X, y, epsilon, delta, **_data_bounds(hyper))
    given = rule(*X.shape)
    K = int(given["K"] if hyper["K"] is None else hyper["K"])
    lam = float(given["lam"] if hyper["lam"] is None else hyper["lam"])
    gamma = float(given["gamma"] if hyper["gamma"] is None else hyper["gamma"])
    X, y = shuffled(X, y, rng, hyper["shuffle"])
    s0, s1 = halves(X.shape[0])
    noise = stage_noise(epsilon, delta, hyper)
    stage1, std = shared_spectral_dp(X, y, s0, K=K, gamma=gamma, lam=lam, noise=noise, rng=rng)
    theta, releases = stage2(X[s1], y[s1], stage1.X, gamma=gamma, lam=lam, noise=noise, rng=rng,
                             paper_literal_noise=hyper["paper_literal_noise"])  # fmt: skip
    info = {"K": K, "lam": lam, "gamma": gamma, "n_floor": stage1.n_floor, "floor_rate": stage1.n_floor / K,
            stage1_std: std, **releases, "calibration": hyper["calibration"], "neighbour": hyper["neighbour"],
            "preset": hyper["preset"], "epsilon_effective": epsilon_effective, "W": stage1.X}  # fmt: skip
    return FitResult(theta, info)


# ---------------------------------------------------------------------------------------------------------------
# registered mechanisms


@register_mechanism(
    "iwr_dp",
    summary="Information-weighted regression, central DP (Alg 4 spectral iteration + Alg 5 weighted SSP; 000 §3.5)",
    privacy_model=central_model,
    neighbour=central_neighbour,
    spec="000 §3.4–3.5",
    style=STYLES["iwr"],
    hyper=declared(
        *CENTRAL_RULE,
        "lam_rule",
        "K",
        "lam",
        *STAGED,
        gamma=Hyper(float, default=None, ge=0, none=RULE, doc="weight scale γ (0 only with nonprivate: true)"),
    ),
    check=gamma_zero_needs_noise_off,
    epsilon_range=calibrated_epsilons,
    bounds=BOUNDS,
    audit=AUDIT_STAGED,
)
def fit_iwr_dp(
    X: np.ndarray, y: np.ndarray, epsilon: float, delta: float, rng: np.random.Generator, **hyper: Any
) -> FitResult:
    """IWR-DP (Alg 4 + 5). Explicit ``K``, ``lam``, ``gamma`` override the preset rule."""
    return _two_stage_fit(
        X,
        y,
        epsilon,
        delta,
        rng,
        hyper,
        rule=lambda n, d: iwr_dp_hyper(n, d, epsilon, delta, **rule_inputs(hyper), lam_rule=hyper["lam_rule"]),
        stage2=iwr_dp_stage2,
        stage1_std="std_H",
        epsilon_effective=(2.0 if hyper["paper_literal_noise"] else 1.0) * epsilon,
    )


def erm_stage2(
    Phi1: np.ndarray,
    y1: np.ndarray,
    W: np.ndarray,
    *,
    gamma: float,
    lam: float,
    noise: StageNoise,
    rng: np.random.Generator,
    paper_literal_noise: bool = False,
) -> tuple[np.ndarray, dict[str, float]]:
    """Algorithm 14 (DP-ERM with a noisy-Hessian regulariser + output perturbation), linear link ν = id.

    H = (1/N)Σ W^{1/2}φφᵀW^{1/2}/(1+γ‖Wφ‖) + λI; H̃ = SymPriv (sens. 2B/(γN)·f); if λ_min(W^{1/2}H̃W^{1/2}) < ¼
    return 0. L̂(w) = ½wᵀW^{1/2}H̃W^{1/2}w − bᵀw (b = (1/N)Σ Wφy/(1+γ‖Wφ‖)) on {‖Ww‖ ≤ 1}, solved exactly in
    θ = Ww by the trust-region secular equation (spec 000 #20 allows an exact solve for the linear link);
    Δ_N = 32(1 + B)/(γN); w̃ = w + N(0, s_w²I), θ̂ = Ww̃. Paper: H̃ std 2σB/(γN), w̃ std σΔ_N (each (ε/2, δ/2),
    spec 000 #5; ``paper_literal_noise`` → 2σΔ_N); generic: gaussian_std(·, ε/2, δ/2) with s = 2B/(γN)·f, Δ_N.
    """
    N, d = Phi1.shape
    B, f = noise.B, central_factor(noise.neighbour)
    delta_n = 32.0 * (1.0 + B) / (gamma * N)
    if noise.nonprivate:
        s_H = s_w = 0.0
    else:
        half = noise.epsilon / 2.0
        delta_each = noise.delta if noise.calibration == "paper" else noise.delta / 2.0
        s_H = noise.std(2.0 * B * f / (gamma * N), half, delta_each)
        s_w = noise.std(delta_n, half, delta_each)
        if paper_literal_noise:
            s_w *= 2.0
    root = msqrt(W)
    P = Phi1 @ root
    PW = Phi1 @ W  # rows Wφ (used for the weights and for b)
    weights = 1.0 / (1.0 + gamma * row_norms(PW))
    H_data = (P * weights[:, None]).T @ P / N
    H_tilde, _ = hessian_release(H_data + lam * np.eye(d), s_H, rng, sensitivity=2.0 * B * f / (gamma * N))
    Q = root @ H_tilde @ root
    if np.linalg.eigvalsh((Q + Q.T) / 2.0).min() < 0.25:
        return np.zeros(d), {"std_H": s_H, "std_w": s_w, "rejected": 1, FALLBACK_INFO: 1, "delta_N": delta_n}
    b = (PW * (weights * y1)[:, None]).sum(axis=0) / N
    W_inv = np.linalg.inv(W)
    A = W_inv @ Q @ W_inv  # Hessian in θ = Ww
    c = W_inv @ b
    theta_hat = _trust_region(A, c)
    w = W_inv @ theta_hat
    w_tilde = output_release(w, s_w, rng, sensitivity=delta_n)
    return W @ w_tilde, {"std_H": s_H, "std_w": s_w, "rejected": 0, "delta_N": delta_n}


def _trust_region(A: np.ndarray, c: np.ndarray, r: float = 1.0) -> np.ndarray:
    """argmin_{‖θ‖ ≤ r} ½θᵀAθ − cᵀθ for symmetric PD A: (A + μI)θ = c, μ ≥ 0 (secular equation)."""
    vals, vecs = np.linalg.eigh((A + A.T) / 2.0)
    cp = vecs.T @ c
    theta = cp / vals
    if np.linalg.norm(theta) <= r:
        return vecs @ theta
    lo, hi = 0.0, 1.0
    while np.linalg.norm(cp / (vals + hi)) > r:
        lo, hi = hi, 2.0 * hi
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if np.linalg.norm(cp / (vals + mid)) > r:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-13 * hi:
            break
    return vecs @ (cp / (vals + hi))


def iwr_dp_erm_hyper(
    n: int,
    d: int,
    epsilon: float,
    delta: float,
    *,
    B: float,
    calibration: str,
    neighbour: str,
    preset: str,
    c_gamma: float,
    fail_prob: float,
) -> dict[str, float]:
    """λ = √(d/T), λγ = c_γ·K(B + 1)(σ√(d + log(K/δ_f)) + log(K/δ_f))/T (spec 000 §6.1, IWR-GLM-DP, μ_ν = 1)."""
    check_preset(preset)
    K = 4 if preset == "calibrated" else loglog_K(n, 4)
    lam = math.sqrt(d / n)
    sigma = unit_sigma(epsilon, delta, calibration, central_factor(neighbour))
    logk = math.log(K / fail_prob)
    gamma = c_gamma * K * (B + 1.0) * (sigma * math.sqrt(d + logk) + logk) / (lam * n)
    return {"K": K, "lam": lam, "gamma": gamma}


@register_mechanism(
    "iwr_dp_erm",
    summary="IWR-DP by DP-ERM with noisy-Hessian regulariser + output perturbation (Alg 4 + 13 + 14, ν = id)",
    privacy_model=central_model,
    neighbour=central_neighbour,
    spec="000 §3.8",
    style=STYLES["iwr_stage2"],
    hyper=declared(*CENTRAL_RULE, "K", "lam", "gamma", *STAGED),
    epsilon_range=calibrated_epsilons,
    bounds=BOUNDS,
    audit=AUDIT_STAGED,
)
def fit_iwr_dp_erm(
    X: np.ndarray, y: np.ndarray, epsilon: float, delta: float, rng: np.random.Generator, **hyper: Any
) -> FitResult:
    """IWR-DP-ERM (Alg 4 + 13 + 14, ν = id). Explicit ``K``, ``lam``, ``gamma`` override the preset rule."""
    return _two_stage_fit(
        X,
        y,
        epsilon,
        delta,
        rng,
        hyper,
        rule=lambda n, d: iwr_dp_erm_hyper(n, d, epsilon, delta, **rule_inputs(hyper)),
        stage2=erm_stage2,
        stage1_std="std_spectral",
        epsilon_effective=epsilon,
    )


@register_mechanism(
    "iwr_dp_oracle",
    summary="Oracle IWR-DP with W from the generator's p (Alg 10; DP because W is data-independent)",
    privacy_model="central",
    neighbour=central_neighbour,
    needs=("population",),
    spec="000 §3.6",
    style=STYLES["oracle"],
    hyper=declared("B", "calibration", "neighbour"),
    epsilon_range=calibrated_epsilons,
    bounds=Bounds(x="B", y=1.0),
    audit=AuditSetup(
        skip="builds W from the generator's law p (population.extra: radial / basis_probs / atoms), "
        "which the audit's neighbouring datasets do not have"
    ),
)
def fit_iwr_dp_oracle(
    X: np.ndarray,
    y: np.ndarray,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    *,
    population=None,
    **hyper: Any,
) -> FitResult:
    """Alg 10: λ = 1/√T, γ = √(log(1/δ)/(ε²T)), W = W_{γ,λ}(p) exactly; ψ = (1/T)Σ Wφy/(1+γ‖Wφ‖),
    ψ̃ = ψ + N(0, s²I) with replace sensitivity 2/(γT) (paper: std σ/(γT)), θ̂ = Wψ̃."""
    if population is None:
        raise ValueError("iwr_dp_oracle needs the generator's population (synthetic datasets only)")
    calibration, neighbour = hyper["calibration"], hyper["neighbour"]
    X, y = prepare(X, y, epsilon, delta, B=hyper["B"], clip=False, calibration=calibration, neighbour=neighbour)
    n, d = X.shape
    lam = 1.0 / math.sqrt(n)
    gamma = math.sqrt(math.log(1.0 / delta) / (epsilon**2 * n))
    W = population_info_matrix("dp", population.extra, d, lam, gamma)
    psi = iw_features(X, W, gamma).T @ y / n
    std = gaussian_std(2.0 * central_factor(neighbour) / (gamma * n), epsilon, delta, calibration)
    theta = W @ released("ψ̃", psi + std * rng.standard_normal(d), psi, scale=std,
                         sensitivity=2.0 * central_factor(neighbour) / (gamma * n))  # fmt: skip
    return FitResult(
        theta,
        {
            "lam": lam,
            "gamma": gamma,
            "std": std,
            "calibration": calibration,
            "neighbour": neighbour,
            "epsilon_effective": epsilon,
        },
    )


@register_mechanism(
    "iwr_dp_oracle_label",
    summary="Alg 10 with W from the private covariates themselves: only LABEL-DP (yDP, spec 000 §3.6 (ii))",
    privacy_model="label",
    neighbour="replace_one",
    spec="000 §3.6",
    style=STYLES["oracle"],
    hyper=declared(
        "B", "calibration", tol=Hyper(float, default=1e-9, gt=0, doc="tolerance of the exact spectral iteration")
    ),
    epsilon_range=calibrated_epsilons,
    bounds=Bounds(x="B", y=1.0),
    audit=AUDIT,
)
def fit_iwr_dp_oracle_label(
    X: np.ndarray, y: np.ndarray, epsilon: float, delta: float, rng: np.random.Generator, **hyper: Any
) -> FitResult:
    """Alg 10 with p = the empirical distribution of X (exact iteration on the n rows, tolerance ``tol``): W depends
    on the covariates, so the release protects labels only (neighbours share all φ_i, Def. 6). Label sensitivity of
    ψ is 2/(γT) (|y| ≤ 1 changes w(φ)y by ≤ 2/γ)."""
    calibration = hyper["calibration"]
    X, y = prepare(X, y, epsilon, delta, B=hyper["B"], clip=False, calibration=calibration)
    n, d = X.shape
    lam = 1.0 / math.sqrt(n)
    gamma = math.sqrt(math.log(1.0 / delta) / (epsilon**2 * n))
    W = solve_info_matrix("dp", X, np.full(n, 1.0 / n), lam, gamma, tol=hyper["tol"]).X
    psi = iw_features(X, W, gamma).T @ y / n
    std = gaussian_std(2.0 / (gamma * n), epsilon, delta, calibration)
    theta = W @ released("ψ̃", psi + std * rng.standard_normal(d), psi, scale=std, sensitivity=2.0 / (gamma * n))
    return FitResult(
        theta, {"lam": lam, "gamma": gamma, "std": std, "calibration": calibration, "epsilon_effective": epsilon}
    )


@register_mechanism(
    "ssp_ball",
    summary="SSP-OLS baseline: noisy (1/T)XᵀX, XᵀY + ball-constrained least squares (000 §3.12)",
    privacy_model="central",
    neighbour=central_neighbour,
    spec="000 §3.12",
    style=STYLES["ssp"],
    hyper=declared(
        "B",
        "clip",
        "calibration",
        "neighbour",
        radius=Hyper(float, default=1.0, gt=0, doc="public ball radius R of the solve (θ̂ with ‖θ̂‖ ≤ R)"),
    ),
    epsilon_range=calibrated_epsilons,
    bounds=BOUNDS,
    audit=AUDIT_SMALL,
)
def fit_ssp_ball(
    X: np.ndarray, y: np.ndarray, epsilon: float, delta: float, rng: np.random.Generator, **hyper: Any
) -> FitResult:
    """G = (1/T)Σφφᵀ, g = (1/T)Σφy; replace sensitivities 2B²/T, 2B/T (×½ zero-out); paper: SymPriv_{2B²/T},
    Priv_{2B/T} (each (ε/2, δ)); generic: joint s = 2√(B⁴ + B²)/T. θ̂ = ball_lsq(G̃, g̃, R) with the public radius
    R = ``radius`` (default 1, the spec's ‖θ*‖ ≤ 1)."""
    radius, B, calibration, neighbour = hyper["radius"], hyper["B"], hyper["calibration"], hyper["neighbour"]
    if not (radius > 0 and math.isfinite(radius)):
        raise ValueError(f"radius must be a finite number > 0, got {radius!r}")
    X, y = prepare(X, y, epsilon, delta, **_data_bounds(hyper))
    n, d = X.shape
    f = central_factor(neighbour)
    s_G, s_g = release_stds([2.0 * B * B * f / n, 2.0 * B * f / n], epsilon, delta, calibration)
    moments = data_memo(X, y, "ssp_moments", lambda: (X.T @ X / n, X.T @ y / n))  # data only: once per draw
    G, g = central_ssp_release(X, y, s_G, s_g, rng, B=B, factor=f, moments=moments)
    return FitResult(
        ball_lsq(G, g, radius),
        {"std_G": s_G, "std_g": s_g, "calibration": calibration, "neighbour": neighbour, "epsilon_effective": epsilon},
    )


@register_mechanism(
    "dp_sgd_improper",
    summary="Dimension-free DP-SGD: one-pass projected SGD, averaged iterate + Gaussian output noise (Alg 16)",
    privacy_model="central",
    neighbour=central_neighbour,
    spec="000 §3.9",
    style=STYLES["sgd"],
    hyper=declared(
        "calibration",
        "neighbour",
        "fail_prob",
        "shuffle",
        eta=Hyper(float, default=None, gt=0, le=0.5, none="min{1/(2√T), (σ²T log(1/δ_f))^(−1/3)}", doc="SGD step size"),
    ),
    epsilon_range=calibrated_epsilons,
    bounds=Bounds(x=1.0, y=1.0),
    audit=AUDIT_SGD,
)
def fit_dp_sgd_improper(
    X: np.ndarray, y: np.ndarray, epsilon: float, delta: float, rng: np.random.Generator, **hyper: Any
) -> FitResult:
    """Alg 16 (B = 1): η = min{1/(2√T), (σ²T log(1/δ_f))^{-1/3}}; θ̂ = θ̄ + N(0, s²I), replace sensitivity 4η
    (non-expansive projected GD map, per-record gradient norm ≤ 2; ×½ zero-out); paper: std 2ησ.

    ``shuffle=False`` processes the rows in the given order (valid for i.i.d. synthetic data); θ̄ is then a
    deterministic function of (data, η) and is cached across trials and ε values (``sgd.cached_sgd_average``; the
    scalar pass costs ≈ 0.1 s per 10⁵ rows at d = 5).
    """
    calibration, neighbour, eta = hyper["calibration"], hyper["neighbour"], hyper["eta"]
    X, y = prepare(X, y, epsilon, delta, B=1.0, clip=False, calibration=calibration, neighbour=neighbour)
    n, d = X.shape
    f = central_factor(neighbour)
    if eta is None:
        sigma = unit_sigma(epsilon, delta, calibration, f)
        eta = min(1.0 / (2.0 * math.sqrt(n)), (sigma**2 * n * math.log(1.0 / hyper["fail_prob"])) ** (-1.0 / 3.0))
    if not 0 < eta <= 0.5:  # the rule's value (an explicit eta is checked by the contract)
        raise ValueError(f"eta must lie in (0, 1/2], got {eta}")
    if hyper["shuffle"]:
        order = rng.permutation(n)
        avg = sgd_average(X[order], y[order], eta)
    else:
        avg = cached_sgd_average(X, y, eta)
    std = gaussian_std(4.0 * eta * f, epsilon, delta, calibration)
    theta = released("θ̄", avg + std * rng.standard_normal(d), avg, scale=std, sensitivity=4.0 * eta * f)
    return FitResult(
        theta,
        {"eta": eta, "std": std, "calibration": calibration, "neighbour": neighbour, "epsilon_effective": epsilon},
    )
