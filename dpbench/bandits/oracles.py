"""Per-epoch private regression oracles used inside the bandit algorithms (spec 000 §3.4/3.5/3.2/3.3, spec 001
§3.10/3.11 and the baselines of spec 001 §7.2). Each takes one epoch's :class:`EpochData` (reading it only through
``take``, so every datum enters exactly one release) and returns an estimate.

Local-DP oracles simulate their users' Gaussian noise by the exact aggregate law by default (the server uses only
means: the mean of N users' N(0, s²) noises is N(0, s²/N), of N users' Sym_d(s²) is Sym_d(s²/N); spec 000 §3.0);
``simulation="per_user"`` draws every user's noise (:mod:`dpbench.mechanisms._simulation`; KS-tested in
tests/mechanisms/test_shortcuts.py).

Budgets: ``epsilon = math.inf`` means σ = 0 through the same code path (the "NP-" references). Noise scales use
the shared calibration of :mod:`dpbench.mechanisms.iwr.calibration` (``gaussian_std``: paper / classical /
AGM, with replace-one l2-sensitivities), never tuned.

Regression with confidence (for action elimination) returns a :class:`LinearEstimate` (f̂, b̂) on the mean scale:
``f̂(φ) = ν(<φ, θ̂>)`` — ``clip_{[-1,1]}(<φ, θ̂>)`` for the linear link (spec 000 §3.11 / #23), ``sigmoid(<φ, θ̂>)``
for the logistic one (spec 000 Thm H.5) — and ``b̂(φ) = min{scale·‖Mφ‖, 2}`` (the clip and cap are post-processing
and keep valid intervals valid).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from dpbench.bandits.envs import BanditEnv, link_constants, sigmoid
from dpbench.bandits.simulator import EpochData
from dpbench.contract import Choice, Hyper
from dpbench.mechanisms._base import released
from dpbench.mechanisms._simulation import SIMULATION, is_per_user, mean_noise
from dpbench.mechanisms.iwr._common import StageNoise
from dpbench.mechanisms.iwr.calibration import (
    CALIBRATIONS,
    check_calibration,
    gaussian_std,
    release_stds,
    sigma_chen,
)
from dpbench.mechanisms.iwr.central import iwr_dp_stage2
from dpbench.mechanisms.iwr.linalg import floor_psd, inv_msqrt, msqrt, proj_ellipsoid
from dpbench.mechanisms.iwr.local import iwr_ldp_stage2, ldp_sgd_glm
from dpbench.mechanisms.iwr.releases import (
    central_ssp_release,
    hessian_release,
    ldp_ssp_release,
    output_release,
    spectral_dp_release,
    spectral_ldp_release,
)

PRESETS = ("calibrated", "theory")
#: every hyperparameter of the bandit oracles, declared once; an algorithm's table picks its names
#: (:func:`oracle_hyper`) — the values reach the oracle as its keyword arguments
ORACLE_HYPER: dict[str, Hyper] = {
    "preset": Choice(*PRESETS, default="calibrated", doc="parameter rules: calibrated (K as given) or the theorems'"),
    "K": Hyper(int, default=4, ge=1, doc="epochs of the spectral iteration (2K batches per bandit epoch)"),
    "c_lam": Hyper(float, default=1.0, gt=0, doc="constant c_λ of the λ rule"),
    "c_gamma": Hyper(float, default=1.0, gt=0, doc="constant c_γ of the γ rule"),
    "c_b": Hyper(float, default=1.0, gt=0, doc="constant c_b of the confidence width b̂"),
    "calibration": Choice(
        *CALIBRATIONS, default="paper", doc="noise family: paper σ_{ε,δ} and classical (ε ≤ 1 only) or agm"
    ),
    "fail_prob": Hyper(float, default=None, gt=0, lt=1, none="1/T", doc="failure probability δ_f of the rules"),
    "simulation": SIMULATION,
    "R": Hyper(float, default=2.0, gt=0, doc="radius R of the projection / prediction clip"),
    "c_K": Hyper(float, default=1.0, gt=0, doc="constant c of the batch-count rule K"),
}


def oracle_hyper(*names: str) -> dict[str, Hyper]:
    """The declarations of ``names`` from :data:`ORACLE_HYPER` (an algorithm's table)."""
    return {name: ORACLE_HYPER[name] for name in names}


def failure_probability(fail_prob: float | None, n: int) -> float:
    """δ_f: ``fail_prob``, or 1/n when it is None (n: a bandit run's horizon T, a regression's rows); in (0, 1)."""
    fail = 1.0 / n if fail_prob is None else float(fail_prob)
    if not 0 < fail < 1:
        raise ValueError(f"fail_prob must lie in (0, 1), got {fail_prob!r}")
    return fail


def bandit_failure_probability(
    env: BanditEnv, T: int, epsilon: float, fail_prob: float | None, calibration: str, linear_oracles: str | None = None
) -> float:
    """A bandit algorithm's δ_f (:func:`failure_probability` with n = T) after the checks it makes before its first
    round: the noise ``calibration`` covers ε (finite ε; :func:`check_calibration`) and, when its oracles are linear
    (``linear_oracles`` names them in the error), the environment's link is linear."""
    if math.isfinite(epsilon):
        check_calibration(calibration, epsilon)
    if linear_oracles is not None and env.link != "linear":
        raise ValueError(f"{linear_oracles} are linear: they need link='linear', the environment has link {env.link!r}")
    return failure_probability(fail_prob, T)


def link_mean(lin: np.ndarray, link: str) -> np.ndarray:
    """The mean-scale prediction f̂ = ν(<φ, θ̂>) from the linear predictions ``lin`` = <φ, θ̂>: clipped to [−1, 1] for
    the linear link (the mean lies there; spec 000 #23), sigmoid(<φ, θ̂>) ∈ (0, 1) for the logistic link (spec 000
    Thm H.5: the GLM widths b̂ = 8L_νλ‖Wφ‖ bound |ν(<φ, θ̂>) − ν(<φ, θ*>)|, not the linear predictions)."""
    if link == "linear":
        return np.clip(lin, -1.0, 1.0)
    if link == "logistic":
        return sigmoid(lin)
    raise ValueError(f"link must be 'linear' or 'logistic', got {link!r}")


@dataclass
class LinearEstimate:
    """f̂(φ) = ν(<φ, θ̂>) (:func:`link_mean`); b̂(φ) = min(scale·‖Mφ‖, cap) (``scale = inf`` ⇒ b̂ ≡ cap: nothing
    eliminated)."""

    theta: np.ndarray
    M: np.ndarray
    scale: float
    cap: float = 2.0
    info: dict[str, Any] = field(default_factory=dict)
    link: str = "linear"  # logistic: f̂ = sigmoid(<φ, θ̂>) (spec 000 Thm H.5)

    @cached_property
    def smin(self) -> float:
        """σ_min(M) (computed once: the elimination asks for it on every chunk of rounds)."""
        return float(np.linalg.svd(self.M, compute_uv=False).min())

    @cached_property
    def safe_slope(self) -> float:
        """s with b̂(φ) ≥ min(s‖φ‖, cap) for every φ, rounding included: scale·(σ_min(M) − 10⁻¹²σ_max(M))₊.

        ‖Mᵀφ‖ ≥ σ_min(M)‖φ‖ (M square); the SVD's absolute error is O(ε_mach·σ_max), far below the slack."""
        if not math.isfinite(self.scale):
            return math.inf
        sv = np.linalg.svd(self.M, compute_uv=False)
        return self.scale * max(float(sv.min()) - 1e-12 * float(sv.max()), 0.0)

    def min_width(self, min_norm: float) -> float:
        """A lower bound of b̂ over features with ‖φ‖ ≥ min_norm: min(scale·σ_min(M)·min_norm, cap)."""
        if not math.isfinite(self.scale):
            return self.cap
        return min(self.scale * self.smin * min_norm, self.cap)

    def predict(self, Phi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        f = link_mean(Phi @ self.theta, self.link)
        if not math.isfinite(self.scale):
            return f, np.full(f.shape, self.cap)
        P = Phi @ self.M
        width = self.scale * np.sqrt(np.einsum("...k,...k->...", P, P))
        return f, np.minimum(width, self.cap)


def noise_std(l2_sens: float, epsilon: float, delta: float, calibration: str) -> float:
    """Gaussian std for replace-one l2-sensitivity ``l2_sens`` at (ε, δ); 0 when ε = ∞ (non-private)."""
    if math.isinf(epsilon):
        return 0.0
    return gaussian_std(l2_sens, epsilon, delta, calibration)


def sigma_scale(epsilon: float, delta: float, calibration: str) -> float:
    """The σ that enters the *parameter rules* (γ, λ, K): the paper's σ_{α,β} for ``paper``, else the std per unit
    half-sensitivity of the chosen family; 0 when ε = ∞."""
    if math.isinf(epsilon):
        return 0.0
    if calibration == "paper":
        return sigma_chen(epsilon, delta)
    return gaussian_std(2.0, epsilon, delta, calibration)


def release_pair(sens: tuple[float, float], epsilon: float, delta: float, calibration: str) -> list[float]:
    """Stds of two releases on the same records, (ε, δ) together (spec 000 §3.13); zeros when ε = ∞."""
    if math.isinf(epsilon):
        return [0.0, 0.0]
    return release_stds(list(sens), epsilon, delta, calibration)


# ----------------------------------------------------------------------------------------------------------------
# JDP: information-weighted regression (spec 000 Alg 4 + Alg 5), parameters of Lemma H.3 / §6


def iwr_dp_params(
    N: int,
    d: int,
    d_A: int,
    epsilon: float,
    delta: float,
    fail_prob: float,
    *,
    preset: str,
    K: int,
    c_lam: float,
    c_gamma: float,
    calibration: str,
) -> tuple[int, float, float]:
    """(K, λ, γ) of one JDP epoch with N records (spec 000 §6.1 "Bandits (Lemma H.3)").

    theory: λ = 8√(d_A log(2/δ)/N), γ = K(σ√(d + log(K/δ)) + log(K/δ))/(λN), K = max(⌈log log N⌉, 4).
    calibrated: λ = c_λ/√N (the regression default λ = 1/√T of spec 000 §6.2), γ = c_γ·(same rule), K given.
    δ here is the failure probability (1/T); σ = σ_{α,β}.
    """
    if preset == "theory":
        K = max(4, math.ceil(math.log(max(math.log(N), 1.0))))
        lam = 8.0 * math.sqrt(d_A * math.log(2.0 / fail_prob) / N)
        c_gamma = 1.0
    elif preset == "calibrated":
        lam = c_lam / math.sqrt(N)
    else:
        raise ValueError(f"preset must be one of {PRESETS}, got {preset!r}")
    sigma = sigma_scale(epsilon, delta, calibration)
    log_k = math.log(K / fail_prob)
    gamma = c_gamma * K * (sigma * math.sqrt(d + log_k) + log_k) / (lam * N)
    return K, lam, gamma


def epoch_noise(epsilon: float, delta: float, calibration: str, B: float) -> StageNoise:
    """The noise settings of one epoch's releases: (ε, δ), the calibration, the bound B; off when ε = ∞."""
    return StageNoise(epsilon, delta, B=B, calibration=calibration, nonprivate=math.isinf(epsilon))


def _alg4_epochs(
    data: EpochData, K: int, gamma: float, lam: float, noise: StageNoise, rng: np.random.Generator
) -> tuple[int, float, Any]:
    """Alg 4 on K epochs of the first half of ``data`` (:func:`spectral_dp_release`, std for the replace-one
    l2-sensitivity 2B/(γN_k) of an epoch mean): (n₀, that std, the spectral result)."""
    n0 = data.n // 2
    Nk = n0 // K
    blocks = [data.take(k * Nk, (k + 1) * Nk)[0] for k in range(K)]
    sensitivity = 2.0 * noise.B / (gamma * Nk)
    std_H = noise.std(sensitivity)
    spectral = spectral_dp_release(blocks, gamma=gamma, lam=lam, std=std_H, sensitivity=sensitivity, rng=rng)
    return n0, std_H, spectral


def iwr_dp_fit(
    data: EpochData,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    *,
    d_A: int,
    fail_prob: float,
    preset: str = "calibrated",
    K: int = 4,
    c_lam: float = 1.0,
    c_gamma: float = 1.0,
    c_b: float = 1.0,
    calibration: str = "paper",
    B: float = 1.0,
) -> LinearEstimate:
    """Spec 000 Alg 5 (with Alg 4 on the first half) on one epoch; width of Lemma F.4(3) / App. H.3.

    Stage 1 (Alg 4): K disjoint blocks of ⌊n₀/K⌋ records, H_(k) = mean of W^{1/2}φφᵀW^{1/2}/(1+γ‖Wφ‖), released
    with symmetric noise of l2-sensitivity 2B/(γN_k) (paper: SymPriv_{B/(γN)}, std σB/(γN)).
    Stage 2 (Alg 5): ψ = mean w(φ)y, Ψ = mean w(φ)φᵀ with w(φ) = Wφ/(1+γ‖Wφ‖); sensitivities 2/(γN₁), 2B/(γN₁)
    (paper: doubled Δ, std 2σ/(γN₁), 2Bσ/(γN₁), spec 000 #1); θ̂ = (Ψ̃ + λI)^{-1}ψ̃.
    Width b̂(φ) = c_b·(8λ + 16√(d_A log(2/δ)/N))·‖Wφ‖ (= 10λ‖Wφ‖ with the theory λ), capped at 2.
    """
    N, d = data.n, data.d
    K, lam, gamma = iwr_dp_params(
        N, d, d_A, epsilon, delta, fail_prob, preset=preset, K=K, c_lam=c_lam, c_gamma=c_gamma, calibration=calibration
    )
    noise = epoch_noise(epsilon, delta, calibration, B)
    n0, std_H, spectral = _alg4_epochs(data, K, gamma, lam, noise, rng)
    W = spectral.X
    Phi1, y1 = data.take(n0, N)
    theta, stage2 = iwr_dp_stage2(Phi1, y1, W, gamma=gamma, lam=lam, noise=noise, rng=rng)
    scale = c_b * (8.0 * lam + 16.0 * math.sqrt(d_A * math.log(2.0 / fail_prob) / N))
    info = {
        "lam": lam,
        "gamma": gamma,
        "K": K,
        "n_floor": spectral.n_floor,
        "lstsq": stage2["singular"],
        "std_H": std_H,
        "std_psi": stage2["std_psi"],
    }
    return LinearEstimate(theta, W, scale, info=info)


# ----------------------------------------------------------------------------------------------------------------
# JDP GLM: spec 000 Alg 13 (Alg 4 on the first half) + Alg 14 (DP-ERM with noisy-Hessian regulariser)


def _integral_link(t: np.ndarray, link: str) -> np.ndarray:
    """∫_0^t ν(s) ds: t²/2 (linear), log(1 + e^t) − log 2 (logistic) (spec 001 §1.1)."""
    if link == "linear":
        return 0.5 * t * t
    return np.logaddexp(0.0, t) - math.log(2.0)


def iwr_glm_dp_fit(
    data: EpochData,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    *,
    link: str,
    fail_prob: float,
    K: int = 4,
    c_lam: float = 1.0,
    c_gamma: float = 1.0,
    c_b: float = 1.0,
    calibration: str = "paper",
    B: float = 1.0,
    max_iter: int = 3000,
) -> LinearEstimate:
    """Spec 000 Alg 13 + Alg 14 (central-DP GLM regression by DP-ERM), one epoch; width of Thm H.5.

    λ = c_λ√(d/(μ_ν²N)), γ = c_γ·K(B + μ_ν^{-1})(σ√(d + log(K/δ)) + log(K/δ))/(λN) (spec 000 §6.1, calibrated by
    multipliers). Alg 4 on the first half gives W. Alg 14 on the second half (N₁ records):
    H = mean W^{1/2}φφᵀW^{1/2}/(1+γ‖Wφ‖) + λI, H̃ = H + symmetric noise (paper SymPriv_{2B/(γN₁)}, (ε/2, δ/2));
    if λ_min(W^{1/2}H̃W^{1/2}) < ¼ return θ̂ = 0; else minimise
    L̂(w) = mean ℓ_ν(<Wφ, w>, y)/(1+γ‖Wφ‖) + (μ_ν/2)wᵀW^{1/2}(λI + H̃ − H)W^{1/2}w on {‖Ww‖ ≤ 1} by projected GD
    (step 1/L_s, stop when the gradient mapping ‖G(w)‖ ≤ μ_νΔ_N/32), Δ_N = 32(μ_ν^{-1} + B)/(γN₁);
    w̃ = w + N(0, (σΔ_N)²I) (Priv_{Δ_N}, spec 000 #5), θ̂ = Ww̃. Width b̂ = min{c_b·8L_νλ‖Wφ‖, 2}.
    """
    mu, L = link_constants(link)
    N, d = data.n, data.d
    N1 = N - N // 2
    lam = c_lam * math.sqrt(d / (mu * mu * N))
    sigma = sigma_scale(epsilon, delta, calibration)
    log_k = math.log(K / fail_prob)
    gamma = c_gamma * K * (B + 1.0 / mu) * (sigma * math.sqrt(d + log_k) + log_k) / (lam * N)
    n0, _, spectral = _alg4_epochs(data, K, gamma, lam, epoch_noise(epsilon, delta, calibration, B), rng)
    W = spectral.X
    Phi, y = data.take(n0, N)
    delta_n = 32.0 * (1.0 / mu + B) / (gamma * N1)
    if math.isinf(epsilon):
        std_H, std_w = 0.0, 0.0
    elif calibration == "paper":
        std_H, std_w = release_stds([2.0 * B / (gamma * N1), delta_n], epsilon, delta, "paper")
    else:  # sequential releases, each at (ε/2, δ/2) (spec 000 §3.13)
        std_H = gaussian_std(2.0 * B / (gamma * N1), epsilon / 2, delta / 2, calibration)
        std_w = gaussian_std(delta_n, epsilon / 2, delta / 2, calibration)
    root = msqrt(W)
    WPhi = Phi @ W
    weights = 1.0 / (1.0 + gamma * np.linalg.norm(WPhi, axis=1))
    H = ((Phi @ root) * weights[:, None]).T @ (Phi @ root) / N1 + lam * np.eye(d)
    H_tilde, Z = hessian_release(H, std_H, rng, sensitivity=2.0 * B / (gamma * N1))
    info: dict[str, Any] = {"lam": lam, "gamma": gamma, "K": K, "std_w": std_w, "fallback_zero": 0}
    scale = c_b * 8.0 * L * lam
    if np.linalg.eigvalsh(root @ H_tilde @ root).min() < 0.25:
        info["fallback_zero"] = 1
        return LinearEstimate(np.zeros(d), W, scale, info=info, link=link)
    reg = mu * root @ (lam * np.eye(d) + Z) @ root  # μ_ν W^{1/2}(λI + H̃ − H)W^{1/2}
    data_curv = (WPhi * weights[:, None]).T @ WPhi / N1
    L_s = L * np.linalg.eigvalsh(data_curv).max() + max(0.0, np.linalg.eigvalsh(reg).max())
    tol = mu * delta_n / 32.0
    w = np.zeros(d)
    iters = 0
    for _ in range(max_iter):
        iters += 1
        t = WPhi @ w
        mean = t if link == "linear" else sigmoid(t)
        grad = WPhi.T @ ((mean - y) * weights) / N1 + reg @ w
        w_next = proj_ellipsoid(W, w - grad / L_s)
        gmap = L_s * np.linalg.norm(w - w_next)
        w = w_next
        if gmap <= tol:
            break
    info["pgd_iters"] = iters
    w_tilde = output_release(w, std_w, rng, sensitivity=delta_n)
    return LinearEstimate(W @ w_tilde, W, scale, info=info, link=link)


# ----------------------------------------------------------------------------------------------------------------
# LDP: information-weighted regression (spec 000 Alg 2 + Alg 3), width 8λ‖Uφ‖ (Thm 6.4)


def iwr_ldp_params(
    N: int,
    d: int,
    epsilon: float,
    delta: float,
    fail_prob: float,
    *,
    preset: str,
    K: int,
    c_lam: float,
    calibration: str,
    B: float = 1.0,
) -> tuple[int, float]:
    """(K, λ) of one LDP epoch (spec 000 §6.1/6.2).

    theory: K = max(⌈log log N⌉, 12), λ = K·B·σ·√(K(d + log(K/δ))/N) (proof of Thm 4.4, C₁ = 1).
    calibrated: K given (4), λ = c_λ·σ·B·√((d + log(K/δ))/n₀), n₀ = ⌊N/2⌋. σ = max(σ_{α,β}, 1): the matrix
    concentration term of a non-private run has the same form with σ → 1 [CHOICE, needed for ε = ∞].
    """
    sigma = max(sigma_scale(epsilon, delta, calibration), 1.0)
    if preset == "theory":
        K = max(12, math.ceil(math.log(max(math.log(N), 1.0))))
        lam = K * B * sigma * math.sqrt(K * (d + math.log(K / fail_prob)) / N)
    elif preset == "calibrated":
        lam = c_lam * sigma * B * math.sqrt((d + math.log(K / fail_prob)) / (N // 2))
    else:
        raise ValueError(f"preset must be one of {PRESETS}, got {preset!r}")
    return K, lam


def _alg2_epochs(
    data: EpochData, K: int, lam: float, noise: StageNoise, rng: np.random.Generator, per_user: bool
) -> tuple[int, int, float, Any]:
    """Alg 2 on K epochs of the first half of ``data`` (:func:`spectral_ldp_release`, per-user std for l2-sensitivity
    2B): (n₀, N₁ = rows of the second half, that std, the spectral result)."""
    N = data.n
    n0 = N // 2
    Nk = n0 // K
    blocks = [data.take(k * Nk, (k + 1) * Nk)[0] for k in range(K)]
    std_V = noise.std(2.0 * noise.B)  # per user
    return n0, N - n0, std_V, spectral_ldp_release(blocks, lam=lam, std=std_V, B=noise.B, rng=rng, per_user=per_user)


def iwr_ldp_fit(
    data: EpochData,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    *,
    fail_prob: float,
    preset: str = "calibrated",
    K: int = 4,
    c_lam: float = 1.0,
    c_b: float = 1.0,
    calibration: str = "paper",
    B: float = 1.0,
    simulation: str = "aggregate",
) -> LinearEstimate:
    """Spec 000 Alg 3 (Alg 2 on the first half) on one epoch, per-user noise aggregated exactly (§3.0 shortcut;
    ``simulation="per_user"``: every user's noise drawn).

    Alg 2: each user releases SymPriv_B(V_t), V_t = U^{1/2}φφᵀU^{1/2}/‖Uφ‖ (‖V_t‖_F ≤ B; l2-sensitivity 2B); the
    server averages; λ_(k) = (2k+1)λ/(2K+1). Alg 3: each user releases ψ_t = Uφy/‖Uφ‖ (Priv_2) and Ψ_t = Uφφᵀ/‖Uφ‖
    (Priv_{2B}); θ̂ = argmin_{‖θ‖≤1} ‖(Ψ̂ + λI)θ − ψ̂‖. Width b̂ = c_b·8λ‖Uφ‖ capped at 2.
    """
    N, d = data.n, data.d
    K, lam = iwr_ldp_params(
        N, d, epsilon, delta, fail_prob, preset=preset, K=K, c_lam=c_lam, calibration=calibration, B=B
    )
    per_user = is_per_user(simulation)
    noise = epoch_noise(epsilon, delta, calibration, B)
    n0, N1, std_V, spectral = _alg2_epochs(data, K, lam, noise, rng, per_user)
    U = spectral.X
    Phi1, y1 = data.take(n0, N)
    theta, stds = iwr_ldp_stage2(Phi1, y1, U, lam=lam, noise=noise, rng=rng, per_user=per_user)
    std_psi = stds["std_psi"]
    info = {"lam": lam, "K": K, "n_floor": spectral.n_floor, "std_V_user": std_V, "std_psi_user": std_psi}
    return LinearEstimate(theta, U, c_b * 8.0 * lam, info=info)


def iwr_glm_ldp_fit(
    data: EpochData,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    *,
    link: str,
    fail_prob: float,
    K: int = 4,
    c_lam: float = 1.0,
    c_b: float = 1.0,
    calibration: str = "paper",
    B: float = 1.0,
    simulation: str = "aggregate",
) -> LinearEstimate:
    """Spec 000 Alg 12 (Remark H.6: the LDP GLM bandit's oracle) on one epoch: (U, λ) by Alg 2 on the first half
    (:func:`~dpbench.mechanisms.iwr.local.spectral_ldp_release`, λ of Thm 4.4 as in
    :func:`iwr_ldp_params`), then Alg 11 — per-user LDP-SGD
    g_t = unit(Uφ_t)(ν(<Uφ_t, w_t>) − y_t) + λμ_νUw_t, Priv_2 (l2-sensitivity 4: |ν − y| ≤ 2), η_t = 2/(μ_ν t),
    projected on {‖Uw‖ ≤ 1}, last iterate, θ̂ = Uw — on the second half (N₁ users, noise drawn per user).

    Width on the mean scale (f̂ = ν(<φ, θ̂>)): Thm G.4 bounds ‖U^{-1}(θ̂ − θ*)‖ by λ + O(σ√d/(μ_ν√N₁)) and
    |ν(<φ, θ̂>) − ν(<φ, θ*>)| ≤ L_ν‖Uφ‖‖U^{-1}(θ̂ − θ*)‖, so b̂ = min{c_b·8L_ν(λ + σ̄√d/(μ_ν√N₁))‖Uφ‖, 2} with
    σ̄ = max(σ, 1) (the factor 8 of Thm 6.4 / H.5; σ̄ as in λ's rule) [DERIVED, docs/deviations.md]."""
    mu, L = link_constants(link)
    N, d = data.n, data.d
    K, lam = iwr_ldp_params(
        N, d, epsilon, delta, fail_prob, preset="calibrated", K=K, c_lam=c_lam, calibration=calibration, B=B
    )
    noise = epoch_noise(epsilon, delta, calibration, B)
    n0, N1, std_V, spectral = _alg2_epochs(data, K, lam, noise, rng, is_per_user(simulation))
    U = spectral.X
    Phi1, y1 = data.take(n0, N)
    std_g = noise_std(4.0, epsilon, delta, calibration)
    link_fn = {} if link == "linear" else {"mean": _scalar_sigmoid}
    w = ldp_sgd_glm(Phi1, y1, U, lam=lam, std=std_g, rng=rng, sensitivity=4.0, mu=mu, **link_fn)
    sigma_bar = max(sigma_scale(epsilon, delta, calibration), 1.0)
    scale = c_b * 8.0 * L * (lam + sigma_bar * math.sqrt(d) / (mu * math.sqrt(N1)))
    info = {"lam": lam, "K": K, "n_floor": spectral.n_floor, "std_V_user": std_V, "std_g_user": std_g}
    return LinearEstimate(U @ w, U, scale, info=info, link=link)


def _scalar_sigmoid(t: float) -> float:
    """ν(t) = 1/(1 + e^{−t}) of one float (the per-user SGD step calls it once per user)."""
    return 1.0 / (1.0 + math.exp(-t))


# ----------------------------------------------------------------------------------------------------------------
# baselines: SSP-OLS (spec 001 §7.2 / spec 000 §3.12), JDP and LDP


def ssp_ols_fit(
    data: EpochData,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    *,
    fail_prob: float,
    local: bool,
    c_b: float = 1.0,
    calibration: str = "paper",
    B: float = 1.0,
    simulation: str = "aggregate",
) -> LinearEstimate:
    """SSP-OLS with the ridge and width of spec 001 §7.2.

    JDP: G = (1/N)Σφφᵀ, g = (1/N)Σφy released with sensitivities 2B²/N, 2B/N (paper: SymPriv_{2B²/N}, Priv_{2B/N},
    spec 000 §3.12). LDP: each user releases φφᵀ (sym.) and φy with sensitivities 2B², 2B, averaged.
    Ridge ρ = 2·s_G·(2√d + √(2 ln(2/δ))) with s_G the std of the entries of G̃ (at least 1/N so that the
    non-private run is well posed); V = G̃ + ρI floored at ρ/2; θ̂ = V^{-1}g̃;
    b̂(φ) = c_b(√(d ln(1/δ)/N) + √ρ)‖φ‖_{V^{-1}}, capped at 2.
    LDP noise of the means: Sym_d(s_G²/N), N(0, s_g²/N I) in law, or N per-user draws (``simulation="per_user"``;
    ρ uses the std of the mean either way).
    """
    per_user = is_per_user(simulation)
    if per_user and not local:
        raise ValueError("simulation='per_user' applies to the local (LDP) SSP only")
    N, d = data.n, data.d
    Phi, y = data.take(0, N)
    if local:
        user_G, user_g = release_pair((2.0 * B * B, 2.0 * B), epsilon, delta, calibration)
        std_G = user_G / math.sqrt(N)
        G, g = ldp_ssp_release(Phi, y, user_G, user_g, rng, B=B, per_user=per_user)
    else:
        std_G, std_g = release_pair((2.0 * B * B / N, 2.0 * B / N), epsilon, delta, calibration)
        G, g = central_ssp_release(Phi, y, std_G, std_g, rng, B=B, factor=1.0)
    rho = max(2.0 * std_G * (2.0 * math.sqrt(d) + math.sqrt(2.0 * math.log(2.0 / fail_prob))), 1.0 / N)
    V, fired = floor_psd(G + rho * np.eye(d), rho / 2.0)
    theta = np.linalg.solve(V, g)
    scale = c_b * (math.sqrt(d * math.log(1.0 / fail_prob) / N) + math.sqrt(rho))
    info = {"rho": rho, "n_floor": int(fired), "std_G": std_G}
    return LinearEstimate(theta, inv_msqrt(V), scale, info=info)


# ----------------------------------------------------------------------------------------------------------------
# dimension-free oracles for SquareCB: spec 001 Alg 5 (JDP, batched projected GD) and Alg 6 (LDP clipped SGD)


def dimfree_jdp_fit(
    data: EpochData,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    *,
    fail_prob: float,
    R: float = 2.0,
    c_K: float = 1.0,
    calibration: str = "paper",
) -> tuple[np.ndarray, dict]:
    """Spec 001 Alg 5 (Thm 6.2): K batches of N = ⌊T/K⌋, θ ← Proj_{B(R)}(θ − g_(k)) (η = 1), then ONE release of
    the last iterate with l2-sensitivity 2(R+1)/N (paper: Priv_{(R+1)/N}, std σ(R+1)/N). Improper output.
    K = min{√(T/(log T·log(1/δ))), c (T/(σ√log(1/δ)))^{2/3}} (Prop E.1; c = c_K; σ = 0 ⇒ first term)."""
    T, d = data.n, data.d
    log_t, log_d = math.log(max(T, 3)), math.log(1.0 / fail_prob)
    K_float = math.sqrt(T / (log_t * log_d))
    sigma = sigma_scale(epsilon, delta, calibration)
    if sigma > 0:
        K_float = min(K_float, c_K * (T / (sigma * math.sqrt(log_d))) ** (2.0 / 3.0))
    K = max(1, min(T, int(K_float)))
    N = T // K
    theta = np.zeros(d)
    for k in range(K):
        Phi, y = data.take(k * N, (k + 1) * N)
        theta = theta - Phi.T @ (Phi @ theta - y) / N
        norm = np.linalg.norm(theta)
        if norm > R:
            theta *= R / norm
    std = noise_std(2.0 * (R + 1.0) / N, epsilon, delta, calibration)
    theta = released(
        "θ_K (last GD iterate)", theta + std * rng.standard_normal(d), theta, scale=std, sensitivity=2.0 * (R + 1.0) / N
    )
    return theta, {"K": K, "std": std}


def dimfree_ldp_fit(
    data: EpochData,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    *,
    fail_prob: float,
    R: float = 2.0,
    c_K: float = 1.0,
    calibration: str = "paper",
    simulation: str = "aggregate",
) -> tuple[np.ndarray, dict]:
    """Spec 001 Alg 6 ≡ spec 000 Alg 8 (Thm 6.3 / 7.3): K batches; each user sends g_t = φ(clip_R(<θ,φ>) − y) +
    Gaussian noise of l2-sensitivity 2(R+1) (paper: Priv_{R+1}, std σ(R+1)); θ ← θ − mean (η = 1, no projection).
    K = max{1, ⌊(T/(σ² log(T/δ)))^{1/3}⌋} (spec 000 §6.2, Eq. 43 not enforced), capped by the non-private rule
    √(T/(log T·log(1/δ))) so that σ → 0 is defined [CHOICE]. Batch noise: mean of N users' N(0, std²I) =
    N(0, std²/N I) in law (aggregate) or N per-user draws (``simulation="per_user"``)."""
    per_user = is_per_user(simulation)
    T, d = data.n, data.d
    log_t, log_d = math.log(max(T, 3)), math.log(1.0 / fail_prob)
    K_float = math.sqrt(T / (log_t * log_d))
    sigma = sigma_scale(epsilon, delta, calibration)
    if sigma > 0:
        K_float = min(K_float, c_K * (T / (sigma**2 * math.log(T / fail_prob))) ** (1.0 / 3.0))
    K = max(1, min(T, int(K_float)))
    N = T // K
    std = noise_std(2.0 * (R + 1.0), epsilon, delta, calibration)  # per user
    theta = np.zeros(d)
    clipped = 0
    for k in range(K):
        Phi, y = data.take(k * N, (k + 1) * N)
        pred = Phi @ theta
        clipped += int(np.sum(np.abs(pred) > R))
        residual = np.clip(pred, -R, R) - y
        g = Phi.T @ residual / N
        step = released(
            f"gradients batch {k + 1}",
            g + mean_noise(N, (d,), std, rng, per_user=per_user),
            lambda Phi=Phi, y=y, pred=pred: Phi * (np.clip(pred, -R, R) - y)[:, None],
            scale=std,
            users=True,
            sensitivity=2.0 * (R + 1.0),
        )
        theta = theta - step
        del Phi, y, pred, residual  # a decoded batch (SignCodec) is N·d floats: free it before the next take
    return theta, {"K": K, "std_user": std, "clip_rate": clipped / max(1, K * N)}
