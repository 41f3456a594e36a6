"""Local-DP mechanisms of spec 000 (§3.2, §3.3, §3.6, §3.7, §3.10, §3.12). Plot them in "local DP" panels only.

Registered: ``iwr_ldp`` (Alg 2 + 3), ``iwr_glm_ldp`` (Alg 2 + 11 + 12, ν = id), ``ldp_clipped_sgd`` (Alg 8),
``iwr_ldp_oracle`` (Alg 9, U from the generator's p), ``ldp_ssp`` (smooth SSP channel of Prop 3.2).

Every user randomises its own record once (disjoint epochs, Lemma F.1). The server only needs sums of the per-user
Gaussian noises, and Σ_{t≤N} N(0, s²) = N(0, N s²) exactly in law (spec 000 §3.0; symmetric noise: Σ_t Sym_d(s²) =
Sym_d(N s²), the upper triangles add), so by default (``simulation="aggregate"``) the noise of a mean is drawn once
with std s/√N; ``simulation="per_user"`` (alias ``per_user_noise=True``) draws every user's noise
(:mod:`dpbench.mechanisms._simulation`; tests/mechanisms/test_shortcuts.py compares the two laws by KS). No aggregate
law is used where none is exact: the l2-ball channel of Alg 9 (vectorised over users) and the per-user SGD of Alg 11.
Calibration: ``paper`` uses σ_{ε,δ} with the paper's Δ (Alg 2: SymPriv_B, std σB; Alg 3: Priv_2, Priv_{2B};
Alg 11: Priv_2; Alg 8: Priv_{R+1}); generic families use the l2-sensitivities of spec 000 §3.13 at (ε, δ)
(joint release of (ψ_t, vec Ψ_t) with s = 2√(1+B²)). The central neighbour notion does not apply here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from dpbench.contract import AuditSetup, Bounds, Choice, Hyper
from dpbench.mechanisms._base import FitResult, released
from dpbench.mechanisms._simulation import PER_USER_VARIANT, is_per_user, mean_noise
from dpbench.mechanisms.iwr._common import (
    AUDIT_STAGED,
    STYLES,
    StageNoise,
    calibrated_epsilons,
    check_preset,
    declared,
    epoch_slices,
    halves,
    local_model,
    local_neighbour,
    loglog_K,
    permutation,
    prepare,
    shuffled,
    stage_noise,
    unit_sigma,
)
from dpbench.mechanisms.iwr.calibration import gaussian_std, release_stds
from dpbench.mechanisms.iwr.linalg import ball_lsq, row_norms, unit_rows
from dpbench.mechanisms.iwr.matrix import (
    SpectralResult,
    population_info_matrix,
)
from dpbench.mechanisms.iwr.noise import l2ball_sample
from dpbench.mechanisms.iwr.releases import ldp_ssp_release, spectral_ldp_release
from dpbench.registry import register_mechanism

AUDIT_SMALL = AuditSetup(hyper={"calibration": "agm"}, whitebox={"pair": {"n": 16}, "hyper": {"shuffle": False}})
#: ‖φ_i‖ ≤ B and |y_i| ≤ 1, or clipped to them by each user with ``clip: true``
BOUNDS = Bounds(x="B", y=1.0, clips="clip")
#: the declarations of the two-stage local fits (iwr_ldp, iwr_glm_ldp), in their tables' order: the data bound and
#: clipping, the noise, the (K, λ) rule's inputs and explicit values, the record order
LOCAL_RULE = ("B", "clip", "calibration", "fail_prob", "preset", "c_lam", "K", "lam", "shuffle")
PER_USER = PER_USER_VARIANT


def noisy_mean(
    rows: np.ndarray, std: float, rng: np.random.Generator, per_user: bool, symmetric: bool = False
) -> np.ndarray:
    """Mean over users of row_t + Z_t, Z_t iid N(0, std²) per entry (symmetric matrices: upper triangle iid).

    rows: (N, d) vectors or (N, d, d) matrices. Aggregated path: mean + Z/√N (exact in law)."""
    mean = rows.mean(axis=0)
    if std == 0:
        return mean
    return mean + mean_noise(rows.shape[0], rows.shape[1:], std, rng, per_user=per_user, symmetric=symmetric)


def iwr_ldp_hyper(
    n: int,
    d: int,
    epsilon: float,
    delta: float,
    *,
    B: float = 1.0,
    calibration: str = "paper",
    preset: str = "calibrated",
    c_lam: float = 1.0,
    fail_prob: float = 0.05,
) -> dict[str, float]:
    """(K, λ) of IWR-LDP (spec 000 §6): calibrated K = 4, λ = c_λ·σ·B·√((d + log(K/δ_f))/n₀), n₀ = ⌊T/2⌋;
    theory K = max{⌈log log T⌉, 12}, λ = K·B·σ·√(K(d + log(K/δ_f))/T) (proof of Thm 4.4, C₁ = 1)."""
    check_preset(preset)
    if n < 2:
        raise ValueError(f"IWR-LDP needs n ≥ 2 users (two stages of ⌊n/2⌋), got n = {n}")
    sigma = unit_sigma(epsilon, delta, calibration)
    if preset == "calibrated":
        K = 4
        lam = c_lam * sigma * B * math.sqrt((d + math.log(K / fail_prob)) / (n // 2))
    else:
        K = loglog_K(n, 12)
        lam = K * B * sigma * math.sqrt(K * (d + math.log(K / fail_prob)) / n)
    return {"K": K, "lam": lam, "sigma_unit": sigma}


def spectral_ldp(
    Phi0: np.ndarray, *, K: int, lam: float, noise: StageNoise, rng: np.random.Generator, per_user: bool = False
) -> tuple[SpectralResult, float]:
    """Algorithm 2 (Spectral-Iteration-LDP) on K disjoint epochs of ``Phi0`` (:func:`spectral_ldp_release`), with
    the per-user std σB = gaussian_std(2B, ε, δ); returns the result and that std. ``per_user``: every user's noise
    drawn (else the exact aggregate law)."""
    epochs = epoch_slices(Phi0.shape[0], K, Phi0.shape[1])
    std = noise.std(2.0 * noise.B)
    result = spectral_ldp_release([Phi0[s] for s in epochs], lam=lam, std=std, B=noise.B, rng=rng, per_user=per_user)
    return result, std


def iwr_ldp_stage2(
    Phi1: np.ndarray,
    y1: np.ndarray,
    U: np.ndarray,
    *,
    lam: float,
    noise: StageNoise,
    rng: np.random.Generator,
    per_user: bool = False,
) -> tuple[np.ndarray, dict[str, float]]:
    """Algorithm 3 stage 2: ψ_t = Uφy/‖Uφ‖ (‖·‖ ≤ 1), Ψ_t = Uφφᵀ/‖Uφ‖ (‖·‖_F ≤ B, not symmetric), Priv_2 and
    Priv_{2B} (paper: std 2σ, 2Bσ; generic joint s = 2√(1+B²)); θ̂ = ball_lsq(Ψ̂ + λI, ψ̂, r = 1).
    Noise of the means: N(0, s²/N₁) per entry (aggregate, exact in law) or N₁ per-user draws (``per_user``)."""
    N1, d = Phi1.shape
    B, nonprivate = noise.B, noise.nonprivate
    a = unit_rows(Phi1 @ U)  # Uφ/‖Uφ‖ (0 at φ = 0)
    s_psi, s_Psi = (
        (0.0, 0.0) if nonprivate else release_stds([2.0, 2.0 * B], noise.epsilon, noise.delta, noise.calibration)
    )
    psi_rows = a * y1[:, None]
    psi_hat = psi_rows.mean(axis=0) + mean_noise(N1, (d,), s_psi, rng, per_user=per_user)
    Psi_hat = a.T @ Phi1 / N1 + mean_noise(N1, (d, d), s_Psi, rng, per_user=per_user)
    if not nonprivate:
        psi_hat = released("ψ̂ (ψ_t = Uφy/‖Uφ‖)", psi_hat, psi_rows, scale=s_psi, users=True, sensitivity=2.0)
        Psi_hat = released("Ψ̂ (Ψ_t = Uφφᵀ/‖Uφ‖)", Psi_hat, lambda: a[:, :, None] * Phi1[:, None, :], scale=s_Psi,
                           users=True, sensitivity=2.0 * B)  # fmt: skip
    theta = ball_lsq(Psi_hat + lam * np.eye(d), psi_hat, 1.0)
    return theta, {"std_psi": s_psi, "std_Psi": s_Psi}


def _alg2_stage(
    X: np.ndarray,
    y: np.ndarray,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    hyper: Mapping[str, Any],
    per_user: bool,
):
    """The first half of an LDP IWR fit with hyperparameters ``hyper``: inputs checked, K and λ by the rule unless
    given, the users shuffled, Alg 2 on the first half. Returns (X, y, the second half's slice, K, λ, the Alg 2
    result, its per-user std)."""
    B, calibration = hyper["B"], hyper["calibration"]
    X, y = prepare(X, y, epsilon, delta, B=B, clip=hyper["clip"], calibration=calibration)
    n, d = X.shape
    rule = iwr_ldp_hyper(
        n,
        d,
        epsilon,
        delta,
        B=B,
        calibration=calibration,
        preset=hyper["preset"],
        c_lam=hyper["c_lam"],
        fail_prob=hyper["fail_prob"],
    )
    K = int(rule["K"] if hyper["K"] is None else hyper["K"])
    lam = float(rule["lam"] if hyper["lam"] is None else hyper["lam"])
    X, y = shuffled(X, y, rng, hyper["shuffle"])
    s0, s1 = halves(n)
    stage1, std_V = spectral_ldp(
        X[s0], K=K, lam=lam, noise=stage_noise(epsilon, delta, hyper), rng=rng, per_user=per_user
    )
    return X, y, s1, K, lam, stage1, std_V


def _local_info(
    K: int, lam: float, stage1: SpectralResult, std_V: float, epsilon: float, hyper: Mapping[str, Any]
) -> dict:
    return {
        "K": K,
        "lam": lam,
        "n_floor": stage1.n_floor,
        "floor_rate": stage1.n_floor / K,
        "std_V": std_V,
        "calibration": hyper["calibration"],
        "preset": hyper["preset"],
        "epsilon_effective": epsilon,
        "U": stage1.X,
    }


@register_mechanism(
    "iwr_ldp",
    summary="Information-weighted regression, local DP (Alg 2 spectral iteration + Alg 3 per-user SSP; 000 §3.3)",
    privacy_model=local_model,
    neighbour=local_neighbour,
    spec="000 §3.2–3.3",
    style=STYLES["iwr"],
    hyper=declared(*LOCAL_RULE, "per_user_noise", "nonprivate", "simulation"),
    epsilon_range=calibrated_epsilons,
    bounds=BOUNDS,
    audit=AUDIT_STAGED,
    variants=PER_USER,
)
def fit_iwr_ldp(
    X: np.ndarray, y: np.ndarray, epsilon: float, delta: float, rng: np.random.Generator, **hyper: Any
) -> FitResult:
    per_user_noise = is_per_user(hyper["simulation"], hyper["per_user_noise"])
    X, y, s1, K, lam, stage1, std_V = _alg2_stage(X, y, epsilon, delta, rng, hyper, per_user_noise)
    noise = stage_noise(epsilon, delta, hyper)
    theta, info2 = iwr_ldp_stage2(X[s1], y[s1], stage1.X, lam=lam, noise=noise, rng=rng, per_user=per_user_noise)
    return FitResult(theta, {**_local_info(K, lam, stage1, std_V, epsilon, hyper), **info2})


def _identity(t: float) -> float:
    return t


def ldp_sgd_glm(
    Phi: np.ndarray,
    y: np.ndarray,
    U: np.ndarray,
    *,
    lam: float,
    std: float,
    rng: np.random.Generator,
    sensitivity: float = 0.0,
    mean=_identity,
    mu: float = 1.0,
) -> np.ndarray:
    """Algorithm 11 (spec 000 §3.7) for the link ν = ``mean`` (a scalar function) with curvature floor μ_ν = ``mu``:
    w_1 = 0; per user g_t = unit(Uφ_t)(ν(<Uφ_t, w_t>) − y_t) + λμ_νUw_t, g̃_t = g_t + N(0, std²I) (noise on the
    data part), w_{t+1} = Proj_{‖Uw‖≤1}(w_t − η_t g̃_t), η_t = 2/(μ_ν t); returns the final iterate w (θ̂ = Uw).
    Run in U's eigenbasis (U = Q diag(u) Qᵀ, v = Qᵀw) where the constraint is the axis-aligned ellipsoid
    Σ u_i² v_i² ≤ 1 and the isotropic noise keeps its law. ν = id, μ_ν = 1 is the linear-regression variant."""
    u, Q = np.linalg.eigh((U + U.T) / 2.0)
    C = Phi @ U @ Q  # rows Qᵀ Uφ_t
    norms = row_norms(C)
    A = np.divide(C, norms[:, None], out=np.zeros_like(C), where=norms[:, None] > 0)
    N, d = Phi.shape
    Z = std * rng.standard_normal((N, d))
    v = np.zeros(d)
    u2 = u**2
    lam_u = lam * mu * u
    for t in range(N):
        resid = mean(C[t] @ v) - y[t]
        g = A[t] * resid + lam_u * v + Z[t]
        if std > 0:  # user t's report (its data part carries the noise; λμ_νUw_t is public)
            g = released("user gradient", g, lambda: (A[t] * resid + lam_u * v)[None], scale=std, users=True,  # noqa: B023
                         sensitivity=sensitivity)  # fmt: skip
        v = v - (2.0 / (mu * (t + 1))) * g
        if u2 @ (v * v) > 1.0:
            v = _proj_axis_ellipsoid(v, u2)
    return Q @ v


def _proj_axis_ellipsoid(v: np.ndarray, u2: np.ndarray) -> np.ndarray:
    """Projection onto {Σ u2_i v_i² ≤ 1}: v/(1 + μ u2) with Σ u2 v²/(1 + μu2)² = 1 (Newton from below).

    The μ-free factors u2·v² and −2u2²v² are formed once (same arithmetic as forming them per iteration)."""
    mu = 0.0
    num_g = u2 * v * v
    num_dg = -2.0 * u2 * u2 * v * v
    for _ in range(100):
        denom = 1.0 + mu * u2
        g = float((num_g / denom**2).sum()) - 1.0
        if g <= 1e-12:
            break
        dg = float((num_dg / denom**3).sum())
        mu -= g / dg
    return v / (1.0 + mu * u2)


@register_mechanism(
    "iwr_glm_ldp",
    summary="Information-weighted LDP regression by per-user SGD (Alg 2 + Alg 11/12, linear link; 000 §3.7)",
    privacy_model=local_model,
    neighbour=local_neighbour,
    spec="000 §3.7",
    style=STYLES["iwr_stage2"],
    hyper=declared(*LOCAL_RULE, "nonprivate", "simulation"),
    epsilon_range=calibrated_epsilons,
    bounds=BOUNDS,
    audit=AUDIT_STAGED,
    variants=PER_USER,
)
def fit_iwr_glm_ldp(
    X: np.ndarray, y: np.ndarray, epsilon: float, delta: float, rng: np.random.Generator, **hyper: Any
) -> FitResult:
    """Per-user noise std of the gradient's data part: replace sensitivity 2(1 + B) (norm ≤ 1 + B; paper:
    Priv_2 = std 2σ at B = 1). Pure-Python loop over the second half of the users (~5 µs per user); its noise is
    always drawn per user (no aggregate law); ``simulation`` applies to the Alg 2 stage."""
    X, y, s1, K, lam, stage1, std_V = _alg2_stage(X, y, epsilon, delta, rng, hyper, is_per_user(hyper["simulation"]))
    B = hyper["B"]
    std_g = 0.0 if hyper["nonprivate"] else gaussian_std(2.0 * (1.0 + B), epsilon, delta, hyper["calibration"])
    w = ldp_sgd_glm(X[s1], y[s1], stage1.X, lam=lam, std=std_g, rng=rng, sensitivity=2.0 * (1.0 + B))  # ν = id
    return FitResult(stage1.X @ w, {**_local_info(K, lam, stage1, std_V, epsilon, hyper), "std_g": std_g})


@register_mechanism(
    "ldp_clipped_sgd",
    summary="Dimension-free LDP batch SGD with clipped predictions (Alg 8 ≡ spec 001 Alg 6)",
    privacy_model="local",
    neighbour="replace_one",
    spec="000 §3.10",
    style=STYLES["sgd"],
    hyper=declared(
        "calibration",
        "fail_prob",
        "shuffle",
        "per_user_noise",
        "simulation",
        K=Hyper(int, default=None, ge=1, none="max{1, ⌊(T/(σ² log(T/δ_f)))^{1/3}⌋}", doc="epochs"),
        R=Hyper(float, default=2.0, gt=0, doc="prediction clipping level"),
        eta=Hyper(float, default=1.0, gt=0, doc="step size"),
    ),
    epsilon_range=calibrated_epsilons,
    bounds=Bounds(x=1.0, y=1.0),
    audit=AUDIT_SMALL,
    variants=PER_USER,
)
def fit_ldp_clipped_sgd(
    X: np.ndarray, y: np.ndarray, epsilon: float, delta: float, rng: np.random.Generator, **hyper: Any
) -> FitResult:
    """K = max{1, ⌊(T/(σ² log(T/δ_f)))^{1/3}⌋} (calibrated, Eq. 43 not enforced), N = ⌊T/K⌋; per epoch and user
    g_t = φ_t(clip_R(<θ_(k), φ_t>) − y_t) (‖g_t‖ ≤ R + 1), Priv_{R+1} (paper std (R+1)σ; generic s = 2(R+1));
    θ_(k+1) = θ_(k) − η·mean g̃ (no projection); output θ_(K). ``info.clip_rate`` = fraction with |<θ,φ>| > R.
    The epoch's noise: N(0, std²/N I) (aggregate, exact in law) or N per-user draws (per_user)."""
    per_user_noise = is_per_user(hyper["simulation"], hyper["per_user_noise"])
    calibration, K, R = hyper["calibration"], hyper["K"], hyper["R"]
    X, y = prepare(X, y, epsilon, delta, B=1.0, clip=False, calibration=calibration)
    n, d = X.shape
    sigma = unit_sigma(epsilon, delta, calibration)
    if K is None:
        K = max(1, int((n / (sigma**2 * math.log(n / hyper["fail_prob"]))) ** (1.0 / 3.0)))
    N = n // K
    if N < 1:
        raise ValueError(f"K = {K} epochs leave no users per epoch (n = {n})")
    std = gaussian_std(2.0 * (R + 1.0), epsilon, delta, calibration)
    order = permutation(n, rng, hyper["shuffle"])
    theta = np.zeros(d)
    clipped = 0
    for k in range(K):
        idx = order[k * N : (k + 1) * N]
        Phi, yk = X[idx], y[idx]
        pred = Phi @ theta
        clipped += int(np.sum(np.abs(pred) > R))
        g = Phi * (np.clip(pred, -R, R) - yk)[:, None]
        step = released(f"gradients epoch {k + 1}", noisy_mean(g, std, rng, per_user_noise), g, scale=std, users=True,
                        sensitivity=2.0 * (R + 1.0))  # fmt: skip
        theta = theta - hyper["eta"] * step
    return FitResult(
        theta,
        {"K": K, "std": std, "clip_rate": clipped / (K * N), "calibration": calibration, "epsilon_effective": epsilon},
    )


@register_mechanism(
    "iwr_ldp_oracle",
    summary="Oracle IWR-LDP with U from the generator's p (Alg 9; l2-ball sampler, pure ε-LDP by default)",
    privacy_model="local",
    neighbour="replace_one",
    needs=("population",),
    spec="000 §3.6",
    style=STYLES["oracle"],
    hyper=declared(
        "calibration",
        "simulation",
        channel=Choice("l2ball", "gauss", default="l2ball", doc="pure ε-LDP l2-ball sampler or Gaussian Priv_1"),
    ),
    epsilon_range=calibrated_epsilons,
    bounds=Bounds(x=None, y=1.0, note="‖φ_i‖ ≤ B with B from the generator's population"),
    audit=AuditSetup(
        skip="builds U from the generator's law p (population.extra: radial / basis_probs / atoms), "
        "which the audit's neighbouring datasets do not have"
    ),
)
def fit_iwr_ldp_oracle(
    X: np.ndarray,
    y: np.ndarray,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    *,
    population=None,
    **hyper: Any,
) -> FitResult:
    """Alg 9: λ = 1/(ε√T), U = U_λ(p) exactly; per user ψ_t = Uφy/‖Uφ‖ (‖·‖ ≤ 1) released by the l2-ball sampler
    ((ε, 0)-LDP, unbiased) or ``channel="gauss"`` (Priv_1: std gaussian_std(2, ε, δ)); θ̂ = U·mean ψ̃.
    ``simulation`` applies to the Gaussian channel (mean noise N(0, std²/T I) in law); the l2-ball channel has no
    closed-form law for a sum and is always sampled per user (vectorised over users)."""
    per_user = is_per_user(hyper["simulation"])
    channel, calibration = hyper["channel"], hyper["calibration"]
    if population is None:
        raise ValueError("iwr_ldp_oracle needs the generator's population (synthetic datasets only)")
    X, y = prepare(X, y, epsilon, delta, B=float(population.extra.get("B", 1.0)), clip=False, calibration=calibration)
    n, d = X.shape
    lam = 1.0 / (epsilon * math.sqrt(n))
    U = population_info_matrix("ldp", population.extra, d, lam)
    psi = unit_rows(X @ U) * y[:, None]
    if channel == "l2ball":
        released = l2ball_sample(psi, epsilon, rng).mean(axis=0)
        std = float("nan")
    elif channel == "gauss":
        std = gaussian_std(2.0, epsilon, delta, calibration)
        released = noisy_mean(psi, std, rng, per_user)
    else:
        raise ValueError(f"channel must be 'l2ball' or 'gauss', got {channel!r}")
    return FitResult(U @ released, {"lam": lam, "channel": channel, "std": std, "epsilon_effective": epsilon})


@register_mechanism(
    "ldp_ssp",
    summary="LDP sufficient-statistics perturbation (smooth channel of Prop 3.2) + ball-constrained LS (000 §3.12)",
    privacy_model="local",
    neighbour="replace_one",
    spec="000 §3.12",
    style=STYLES["ssp"],
    hyper=declared("B", "clip", "calibration", "per_user_noise", "simulation"),
    epsilon_range=calibrated_epsilons,
    bounds=BOUNDS,
    audit=AUDIT_SMALL,
    variants=PER_USER,
)
def fit_ldp_ssp(
    X: np.ndarray, y: np.ndarray, epsilon: float, delta: float, rng: np.random.Generator, **hyper: Any
) -> FitResult:
    """Per user SymPriv_{2B²}(φφᵀ), Priv_{2B}(φy) (paper: each (ε/2, δ), std 2σB², 2σB; generic joint
    s = 2√(B⁴ + B²)); θ̂ = ball_lsq(Σ̂, ĝ, 1) with no ridge (spec 000 §3.12). Noise of the means: Sym_d(s_G²/n),
    N(0, s_g²/n I) in law (aggregate) or n per-user draws (per_user)."""
    per_user_noise = is_per_user(hyper["simulation"], hyper["per_user_noise"])
    B, calibration = hyper["B"], hyper["calibration"]
    X, y = prepare(X, y, epsilon, delta, B=B, clip=hyper["clip"], calibration=calibration)
    s_G, s_g = release_stds([2.0 * B * B, 2.0 * B], epsilon, delta, calibration)
    G, g = ldp_ssp_release(X, y, s_G, s_g, rng, B=B, per_user=per_user_noise)
    return FitResult(
        ball_lsq(G, g, 1.0), {"std_G": s_G, "std_g": s_g, "calibration": calibration, "epsilon_effective": epsilon}
    )
