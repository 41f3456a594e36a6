"""Stein-lemma GLM / non-linear-regression estimators in non-interactive local DP with public unlabeled data
(Wang, Hu, Zhang, Gaboardi, Xu, JMLR 2023; spec 003 §3–§4).

Algorithms 1–4 share one pipeline (:func:`stein_fit`):

1. Gaussian covariates (Alg 1/3): server broadcasts ‖Σ_m‖₂ of the public rows; r = √(20 p ‖Σ_m‖₂ log n);
   users clip x_i to the ℓ2 ball of radius r. Bounded covariates (Alg 2/4): r = the known ℓ1 radius, no clipping.
2. Each user releases Ẑ_i = x̄_i x̄_iᵀ + Sym_p(s_xx²), ẑ_i = x̄_i y_i + N(0, s_xy² I) with
   s_xx = √(32 log(2.5/δ)) r²/ε, s_xy = √(32 log(2.5/δ)) r B_y/ε ((ε, δ)-LDP per user; spec 003 §2).
3. Server: ŵ_ols = A⁻¹b (experimental "mixed" A, §3.2), ỹ_j = ⟨x_j, ŵ_ols⟩ on the public rows,
   ĉ = SolveScale(ỹ) (root of (c/m)Σ h(c ỹ_j) = 1), output ĉ·ŵ_ols.

Privacy model: local, replace-one over the user's domain ({‖x‖ ≤ r} after clipping, resp. the ℓ1 ball; |y| ≤ B_y).
For GLMs the paper assumes |y| ≤ 1 without clipping (B_y = 1); the exponential GLM on ±1/p data violates it (A8),
recorded as ``info.y_over_bound``. The central-noise variant is a separate, clearly labelled diagnostic mechanism
(``stein_central_diagnostic``, central DP only, §3.8) — never the paper's private algorithm.

Rows-free data (issue 17): Alg 1/3, the diagnostic and the non-private Stein estimator read only XᵀX and Xᵀy in
their aggregate paths, so they are registered ``rows_free`` and fit from a :class:`~dpbench.linalg.SumStats`
(``X = y = None``); clipping is then accounted for by a total-variation bound (:func:`sums_without_rows`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import numpy as np
from scipy.optimize import minimize

from dpbench.contract import AuditSetup, Bounds, Choice, Hyper
from dpbench.linalg import GramStats, SumStats, has_rows
from dpbench.mechanisms._base import FitResult, check_inputs, recording
from dpbench.mechanisms._simulation import PER_USER_VARIANT, SIMULATION, is_per_user
from dpbench.mechanisms.stein.calibration import CALIBRATIONS, clip_radius, stein_noise_scales
from dpbench.mechanisms.stein.core import (
    COV_ESTIMATORS,
    UserChannel,
    clean_sums,
    declare_sums,
    derived,
    noise_sums,
    private_ols,
    row_norms,
    simulate_user_sums,
    solve_scale,
)
from dpbench.mechanisms.stein.families import FAMILIES, Family, get_family
from dpbench.registry import register_mechanism

COVARIATES = ("gaussian", "l1")
SKLEARN_SOLVERS = ("lbfgs", "newton-cholesky")

# ----------------------------------------------------------------------------------------------------------------
# the contract pieces of the Stein mechanisms (declared in each registration below and in two_round.py)


def family_choice(kind: str | None = None) -> Hyper:
    """The link families of ``kind`` (glm | nlr; None: all), as a declared choice; default logistic (sigmoid for
    NLR)."""
    names = [name for name, fam in FAMILIES.items() if kind is None or fam.kind == kind]
    return Choice(
        *names,
        default="sigmoid" if kind == "nlr" else "logistic",
        doc=f"{kind.upper() if kind else 'GLM or NLR'} link family (spec 003 §4)",
    )


def radius(covariates: str) -> Hyper:
    """r: the ℓ2 clipping radius (Gaussian covariates; None = the public-data rule) or the known ℓ1 radius (1)."""
    if covariates == "gaussian":
        return Hyper(
            float, default=None, gt=0, none="√(r_const·p·‖Σ_m‖₂·log n) from the public rows", doc="ℓ2 clipping radius"
        )
    return Hyper(float, default=1.0, gt=0, doc="known ℓ1 radius of the rows (‖x_i‖₁ ≤ r)")


HYPER: dict[str, Hyper] = {
    "covariates": Choice(*COVARIATES, default="gaussian", doc="Gaussian (rows clipped at r) or ℓ1-bounded covariates"),
    "r": Hyper(float, default=None, gt=0, none="the rule (gaussian) or 1 (l1)", doc="clipping / ℓ1 radius"),
    "r_const": Hyper(float, default=20.0, gt=0, doc="constant of the clipping-radius rule"),
    "y_bound": Hyper(
        float, default=None, gt=0, none="the family's bound B_y(r)", doc="label bound B_y of the calibration"
    ),
    "noise_c": Hyper(float, default=0.05, ge=0, doc="noise margin c of the families' label bounds"),
    "clip_y": Hyper(bool, default=None, none="clip for NLR families only", doc="clip labels at B_y"),
    "cov_estimator": Choice(
        *COV_ESTIMATORS, default="mixed", doc="server's covariance: mixed (experiments) or private"
    ),
    "calibration": Choice(*CALIBRATIONS, default="analytic", doc="per-user Gaussian calibration"),
    "c0": Hyper(float, default=None, none="the family's c0", doc="start of the SolveScale Newton iteration (≠ 0)"),
    "simulate_users": Hyper(bool, default=False, doc="alias of simulation: per_user (kept for old configs)"),
    "simulation": SIMULATION,
}
SIMULATE = PER_USER_VARIANT


def clips_labels(hyper: Mapping[str, Any]) -> bool:
    """Whether labels are clipped at B_y: ``clip_y`` when set, else for NLR families only (GLMs assume |y| ≤ B_y)."""
    clip_y = hyper.get("clip_y")
    return get_family(hyper["family"]).kind == "nlr" if clip_y is None else bool(clip_y)


def stein_bounds(covariates: str) -> Bounds:
    note = "|y_i| ≤ B_y is assumed, not enforced, for GLM families (info.y_over_bound); NLR families clip y at B_y"
    if covariates == "l1":
        return Bounds(x="r", x_norm="l1", note=note)
    return Bounds(clips=True, clipped=lambda h: ("x", "y") if clips_labels(h) else ("x",),
                  note="rows clipped to ‖x‖ ≤ r (data-independent radius); " + note)  # fmt: skip


T = TypeVar("T")

#: per-process cache of the deterministic non-private fits (keyed by a hash of the data)
_MLE_CACHE: dict[tuple[str, str], Any] = {}
#: entries kept before the cache is emptied (a run holds a few data draws)
MLE_CACHE_SIZE = 16


def cached_fit(key: tuple[str, str], compute: Callable[[], T]) -> T:
    """``compute()`` (a deterministic function of the data that ``key`` fingerprints), once per key and process."""
    if key not in _MLE_CACHE:
        if len(_MLE_CACHE) > MLE_CACHE_SIZE:
            _MLE_CACHE.clear()
        _MLE_CACHE[key] = compute()
    return _MLE_CACHE[key]


def check_public(public_X: np.ndarray | None, p: int) -> np.ndarray:
    if public_X is None or np.asarray(public_X).ndim != 2 or np.asarray(public_X).shape[0] == 0:
        raise ValueError("public_X: the Stein estimators need a non-empty (m, p) array of public unlabeled rows")
    public_X = np.asarray(public_X, dtype=float)
    if public_X.shape[1] != p:
        raise ValueError(f"public_X must have p = {p} columns, got shape {public_X.shape}")
    return public_X


def check_family_kind(family: Family, kind: str, mechanism: str) -> None:
    if family.kind != kind:
        raise ValueError(f"family: {mechanism} needs a {kind.upper()} family, got {family.name!r} ({family.kind})")


def radius_for(covariates: str, public_X: np.ndarray, n: int, r: float | None, r_const: float) -> float:
    """Gaussian: r = √(r_const p ‖Σ_m‖₂ log n) from public rows only (§3.2); l1: the given ℓ1 radius (§3.3)."""
    if covariates == "gaussian":
        if r is not None:
            return float(r)
        sigma_m = public_X.T @ public_X / public_X.shape[0]
        return clip_radius(public_X.shape[1], float(np.linalg.eigvalsh(sigma_m)[-1]), n, r_const)
    if covariates == "l1":
        if r is None or r <= 0:
            raise ValueError(f"r: bounded-covariate algorithms need the known ℓ1 radius r > 0, got {r!r}")
        return float(r)
    raise ValueError(f"covariates must be one of {COVARIATES}, got {covariates!r}")


def stein_fit(
    X: np.ndarray | None,
    y: np.ndarray | None,
    epsilon: float | None,
    delta: float | None,
    rng: np.random.Generator,
    public_X: np.ndarray,
    *,
    family: str = "logistic",
    covariates: str = "gaussian",
    r: float | None = None,
    r_const: float = 20.0,
    y_bound: float | None = None,
    noise_c: float = 0.05,
    clip_y: bool | None = None,
    cov_estimator: str = "mixed",
    noise_aggregation: str = "local",
    calibration: str = "analytic",
    c0: float | None = None,
    newton_tol: float = 1e-12,
    newton_max_iter: int = 100,
    root_fallback: bool = True,
    simulate_users: bool = False,
    stats: GramStats | None = None,
    simulation: str = "aggregate",
) -> FitResult:
    """Algorithms 1–4 (spec 003 §3.2–§3.5); ``epsilon=None`` switches the noise off (ε = ∞ sanity estimator).

    ``simulation``: ``aggregate`` draws Σ_i E_{1,i} =_d Sym_p(n s_xx²), Σ_i E_{2,i} =_d N(0, n s_xy² I) once (§2.4,
    exact in law); ``per_user`` randomises every user (:func:`~dpbench.mechanisms.stein.core.simulate_user_sums`);
    ``simulate_users=True`` is an alias of ``per_user``. ``X = y = None``: rows-free data, fitted from
    ``stats`` (a :class:`~dpbench.linalg.SumStats`; aggregate path, Gaussian covariates; :func:`sums_without_rows`).
    """
    per_user = is_per_user(simulation, simulate_users)
    fam = get_family(family)
    rows_free = X is None
    if rows_free:
        n, p = check_rows_free(stats, epsilon, delta, covariates, per_user)
    else:
        X, y = check_inputs(X, y, epsilon, delta, x_bound=None, y_bound=None)
        n, p = X.shape
    public_X = check_public(public_X, p)
    radius = radius_for(covariates, public_X, n, r, r_const)
    if covariates == "l1" and not rows_free:
        l1 = row_norms(X, 1)
        if l1.max() > radius * (1 + 1e-9):
            raise ValueError(
                f"X: {int((l1 > radius * (1 + 1e-9)).sum())} rows have ‖x_i‖₁ > r = {radius} (Alg 2/4 do not clip; "
                "scale the rows into the ℓ1 ball first)"
            )
    b_y = fam.y_bound(radius, noise_c) if y_bound is None else float(y_bound)
    clip_y = (fam.kind == "nlr") if clip_y is None else bool(clip_y)
    y_clip = b_y if clip_y else None
    clip_l2 = covariates == "gaussian"
    private = epsilon is not None
    if private:
        scales = stein_noise_scales(epsilon, delta, radius, b_y, calibration)
        s_xx, s_xy = scales.s_xx, scales.s_xy
    else:
        s_xx = s_xy = 0.0
    if rows_free:
        xtx, xty, tv_bound = sums_without_rows(stats, r=radius, clip_l2=clip_l2, y_clip=y_clip)
        n_clipped = float("nan")  # not observable; the law is within TV tv_bound of the literal one
    else:
        xtx, xty, n_clipped = clean_sums(X, y, r=radius, clip_l2=clip_l2, y_clip=y_clip, stats=stats)
    channel = UserChannel(radius, s_xx, s_xy, clip_l2, y_clip)
    if private and per_user:
        if noise_aggregation != "local":
            raise ValueError("simulation='per_user' is only defined for noise_aggregation='local'")
        Z_sum, z_sum = simulate_user_sums(X, y, rng, channel)
        Z_sum, z_sum = declare_sums(Z_sum, z_sum, xtx, xty, X, y, channel, y_bound=b_y, aggregation="local")
    elif private:
        E1, E2 = noise_sums(p, n, s_xx, s_xy, rng, noise_aggregation)
        Z_sum, z_sum = declare_sums(xtx + E1, xty + E2, xtx, xty, X, y, channel, y_bound=b_y,
                                    aggregation=noise_aggregation)  # fmt: skip
    else:
        Z_sum, z_sum = xtx, xty
    w_ols, A = private_ols(Z_sum, z_sum, n, public_X, cov_estimator)
    sol = solve_scale(public_X @ w_ols, fam, c0, tol=newton_tol, max_iter=newton_max_iter, fallback=root_fallback)
    lam_clean = float(np.linalg.eigvalsh(xtx)[0])
    noise_norm = 2.0 * np.sqrt(p) * s_xx * (np.sqrt(n) if noise_aggregation == "local" else 1.0)
    info: dict[str, Any] = {
        "c_hat": sol.c,
        "root_status": sol.status,
        "newton_iters": sol.iters,
        "r": radius,
        "y_bound": b_y,
        "s_xx": s_xx,
        "s_xy": s_xy,
        "m": public_X.shape[0],
        "n_clipped": n_clipped,
        "y_over_bound": float("nan") if rows_free else float(np.mean(np.abs(y) > b_y * (1 + 1e-12))),
        "lam_min_A": float(np.linalg.eigvalsh(A)[0]),
        "noise_dominated": bool(noise_norm >= lam_clean / 2.0),
        "ols_norm": float(np.linalg.norm(w_ols)),
        "noise_aggregation": noise_aggregation if private else "none",
    }
    if rows_free:
        info["clip_tv_bound"] = tv_bound
    return FitResult(sol.c * w_ols, info)


#: largest total-variation bound n·P(a row is clipped) a rows-free fit accepts (:func:`sums_without_rows`)
ROWS_FREE_MAX_TV = 1e-6


def check_rows_free(
    stats: GramStats | None, epsilon: float | None, delta: float | None, covariates: str, per_user: bool
) -> tuple[int, int]:
    """(n, p) of rows-free data (``X = y = None``, ``stats`` a :class:`~dpbench.linalg.SumStats`); raises if the
    fit needs rows: the per-user simulation, ℓ1 covariates (‖x_i‖₁ ≤ r is checked per row), an audit."""
    if stats is None or has_rows(stats):
        raise ValueError("X is None: a rows-free Stein fit needs stats = the data's SumStats")
    if per_user:
        raise ValueError("simulation='per_user' randomises every user's row; rows-free data has none")
    if covariates != "gaussian":
        raise ValueError("rows-free data: only covariates='gaussian' (the ℓ1 algorithms check ‖x_i‖₁ ≤ r per row)")
    if recording():
        raise ValueError("rows-free data cannot be audited (the releases' per-user centres are rows)")
    check_inputs(np.zeros((1, stats.d)), np.zeros(1), epsilon, delta, x_bound=None, y_bound=None)
    return stats.n, stats.d


def sums_without_rows(
    stats: SumStats, *, r: float, clip_l2: bool, y_clip: float | None
) -> tuple[np.ndarray, np.ndarray, float]:
    """(XᵀX, Xᵀy, TV bound) of rows-free data, standing in for :func:`~dpbench.mechanisms.stein.core.clean_sums`.

    The sums are of the unclipped rows; the clipped sums equal them unless a row has ‖x‖₂ > r (``clip_l2``) or
    |y| > B (``y_clip``), so every law computed from them is within total variation n·P(row clipped) of the
    literal one (docs/deviations.md). Raises when that bound is unknown or exceeds :data:`ROWS_FREE_MAX_TV`."""
    tv = 0.0
    if clip_l2 or y_clip is not None:
        if stats.change_probability is None:
            raise ValueError("rows-free data without a row law: cannot bound the effect of clipping (r, B_y)")
        tv = stats.n * stats.change_probability(r if clip_l2 else None, y_clip)
        if not tv <= ROWS_FREE_MAX_TV:
            raise ValueError(
                f"rows-free sums: n·P(row clipped) = {tv:.3g} > {ROWS_FREE_MAX_TV:g} at r = {r:.4g}, B_y = {y_clip}; "
                "the unclipped sums are not a valid stand-in (raise the bounds or use rows)"
            )
    return stats.xtx.copy(), stats.xty.copy(), float(tv)


def _literal(kind: str, covariates: str):
    """The registered fit of one of Algorithms 1–4 (local noise only)."""

    def fit(
        X: np.ndarray,
        y: np.ndarray,
        epsilon: float,
        delta: float,
        rng: np.random.Generator,
        *,
        public_X: np.ndarray | None = None,
        stats: GramStats | None = None,
        **hyper: Any,
    ) -> FitResult:
        check_family_kind(get_family(hyper["family"]), kind, f"stein_{kind}_{covariates}")
        return stein_fit(
            X, y, epsilon, delta, rng, public_X, covariates=covariates, noise_aggregation="local", stats=stats, **hyper
        )

    return fit


def stein_certify(hyper) -> tuple[str, str] | None:
    """The strict profile's test (:meth:`~dpbench.registry.MechanismInfo.with_profile`): the paper's classical σ
    (Lemma 4) is a theorem only for ε′ < 1; the paper uses it at ε′ = ε/2 up to 10 (docs/deviations.md, issue 15)."""
    if hyper.get("calibration") != "classical":
        return None
    return "calibration", "the classical Gaussian σ is a theorem only for ε′ < 1; use analytic (the default)"


def stein_audit(kind: str, covariates: str) -> AuditSetup:
    """White-box audit pair: Gaussian covariates are clipped to r, so a canary x = 10³·e₁ lands on the clip radius;
    ℓ1 covariates must lie in the ℓ1 ball (no clipping); GLM labels are in [−1, 1] (the paper's B_y = 1, not
    enforced), NLR labels are clipped at B_y, so a label of 10³ saturates the clip."""
    pair = {"n": 32, "y_bound": 1.0 if kind == "glm" else 1e3}
    pair.update({"x_bound": 1e3} if covariates == "gaussian" else {"x_norm": 1})
    return AuditSetup(whitebox={"pair": pair})


#: Algorithms 1–4 of spec 003 (§3.2–§3.5) by number: (link kind, covariates); the 2-round baselines mirror them
ALGORITHMS = {1: ("glm", "gaussian"), 2: ("glm", "l1"), 3: ("nlr", "gaussian"), 4: ("nlr", "l1")}


def stein_contract(kind: str, covariates: str) -> dict[str, Any]:
    """The contract every LDP Stein algorithm shares: local DP for one user (replace-one), the covariates' bounds,
    the white-box audit pair, the strict profile's certificate."""
    return {
        "privacy_model": "local",
        "neighbour": "replace_one",
        "bounds": stein_bounds(covariates),
        "audit": stein_audit(kind, covariates),
        "certify": stein_certify,
    }


def register_algorithms(
    prefix: str,
    make_fit: Callable[[str, str], Callable[..., FitResult]],
    describe: Callable[[int, str, str], dict[str, Any]],
) -> dict[str, Callable[..., FitResult]]:
    """Register, for each of Algorithms 1–4 (:data:`ALGORITHMS`), ``make_fit(kind, covariates)`` as mechanism
    ``<prefix>_<kind>_<gauss|l1>`` with :func:`stein_contract` and the fields ``describe(algorithm, kind,
    covariates)`` gives (its ``doc`` is the fit's docstring). Returns {``fit_<name>``: registered fit}."""
    fits = {}
    for alg, (kind, covariates) in ALGORITHMS.items():
        fields = dict(describe(alg, kind, covariates))
        name = f"{prefix}_{kind}_{'gauss' if covariates == 'gaussian' else 'l1'}"
        fit = make_fit(kind, covariates)
        fit.__name__ = fit.__qualname__ = f"fit_{name}"
        fit.__doc__ = fields.pop("doc")
        fits[fit.__name__] = register_mechanism(name, **fields, **stein_contract(kind, covariates))(fit)
    return fits


def _literal_fields(alg: int, kind: str, covariates: str) -> dict[str, Any]:
    """What Algorithm ``alg`` (one of 1–4) declares besides :func:`stein_contract`."""
    return {
        "doc": f"Algorithm {alg} of Wang et al. (JMLR 2023): NLDP {kind.upper()}, {covariates} covariates.",
        "summary": f"Alg {alg} (Wang et al. 2023): NLDP Stein {kind.upper()}, {covariates} x, public unlabeled data",
        "needs": ("public_X", "stats"),
        "spec": f"003 §3.{alg + 1}",
        "style": {"linestyle": "-"},
        "hyper": {
            "family": family_choice(kind),
            "r": radius(covariates),
            **{
                k: HYPER[k]
                for k in (
                    "r_const",
                    "y_bound",
                    "noise_c",
                    "clip_y",
                    "cov_estimator",
                    "calibration",
                    "c0",
                    "simulate_users",
                    "simulation",
                )
            },
        },
        "variants": SIMULATE,
        "rows_free": covariates == "gaussian",
    }


globals().update(register_algorithms("stein", _literal, _literal_fields))


def l1_default_radius(covariates: str, r: float | None) -> float | None:
    """``r`` as given; unset with ℓ1 covariates: 1 (the ℓ1 ball of the spec), else None (the Gaussian rule)."""
    return 1.0 if covariates == "l1" and r is None else r


@register_mechanism(
    "stein_central_diagnostic",
    summary="DIAGNOSTIC ONLY (central DP, not LDP, not the paper's algorithm): Stein estimator, noise added once",
    privacy_model="central",
    neighbour="replace_one",
    needs=("public_X", "stats"),
    spec="003 §3.8",
    style={"linestyle": ":"},
    hyper={"family": family_choice(), **{k: HYPER[k] for k in ("covariates", "r", "noise_c", "c0")}},
    bounds=Bounds(note="as Alg 1–4 for the chosen covariates"),
    audit=stein_audit("glm", "gaussian"),
    rows_free=True,
)
def fit_central_diagnostic(
    X: np.ndarray,
    y: np.ndarray,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    *,
    public_X: np.ndarray | None = None,
    stats: GramStats | None = None,
    **hyper: Any,
) -> FitResult:
    """Same releases as Alg 1–4 but ONE draw of Sym_p(s_xx²), N(0, s_xy² I) added to the sums (hypothesis H1, §6.6).

    (ε, δ)-DP in the central model only (replace-one: the sums' sensitivities are those of one user's release).
    """
    r = l1_default_radius(hyper["covariates"], hyper["r"])
    return stein_fit(X, y, epsilon, delta, rng, public_X, **{**hyper, "r": r}, noise_aggregation="central", stats=stats)


#: the contract of the non-private references fitted from the rows (or their sums) and the public rows
NONPRIVATE = {"privacy_model": "none", "neighbour": "none", "needs": ("public_X", "stats")}


@register_mechanism(
    "stein_nonprivate",
    summary="Non-private Stein estimator c̃·w̃_ols (same pipeline as Alg 1–4 with the noise off, ε = ∞)",
    **NONPRIVATE,
    spec="003 §4",
    style={"linestyle": "--", "color": "dimgray"},
    hyper={"family": family_choice(), "covariates": HYPER["covariates"], "r": HYPER["r"]},
    rows_free=True,
)
def fit_nonprivate_stein(
    X: np.ndarray,
    y: np.ndarray,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    *,
    public_X: np.ndarray | None = None,
    stats: GramStats | None = None,
    **hyper: Any,
) -> FitResult:
    family, covariates = hyper["family"], hyper["covariates"]
    r = l1_default_radius(covariates, hyper["r"])
    if X is None:  # rows-free data: O(p³), nothing to cache
        return stein_fit(X, y, None, None, rng, public_X, family=family, covariates=covariates, r=r, stats=stats)
    public_X = check_public(public_X, np.asarray(X).shape[1])
    key = (_fingerprint(X, y), f"stein-{family}-{covariates}-{r}-{_fingerprint(public_X, public_X[:, 0])}")
    result = cached_fit(
        key, lambda: stein_fit(X, y, None, None, rng, public_X, family=family, covariates=covariates, r=r, stats=stats)
    )
    return FitResult(result.theta.copy(), dict(result.info))


# ----------------------------------------------------------------------------------------------------------------
# non-private MLE / least-squares baseline (spec 003 §3.7)


def _digest(A: np.ndarray, step: int = 1) -> str:
    """sha1 of every ``step``-th row of A and of its shape."""
    digest = hashlib.sha1(np.ascontiguousarray(A[::step]).tobytes())
    digest.update(str(A.shape).encode())
    return digest.hexdigest()


def _fingerprint(X: np.ndarray, y: np.ndarray) -> str:
    """Cache key of a data set: every ⌊n/2000⌋-th row of X and all of y, each hashed once per read-only array (the
    runner's data; :func:`~dpbench.mechanisms.stein.core.derived`) instead of once per fit."""
    rows = derived(X, "fingerprint", lambda A: _digest(A, max(1, A.shape[0] // 2000)))
    return rows + derived(y, "fingerprint", _digest)


#: rows per block of the baseline's fused pass: ≈ 4 MB of X, so the block is still in cache for its Xᵀ product
BASELINE_BLOCK_VALUES = 1 << 19


def baseline_loss_grad(X: np.ndarray, y: np.ndarray, family: Family, w: np.ndarray) -> tuple[float, np.ndarray]:
    """(1/n) Σ_i loss(⟨x_i, w⟩, y_i) and its gradient (1/n) Σ_i x_i ∂loss/∂z_i in one pass over X by row blocks.

    Each block X_b is read from memory once for both X_b w and X_bᵀ dz_b (two separate passes over a 7·10⁵ × 40 X
    cost ≈ 1.6× as much). The same sums as the two-pass form, grouped by block: equal up to round-off (≈ 1e−19 in
    the loss and the gradient at 7·10⁵ × 40).
    """
    n, p = X.shape
    rows = max(1, BASELINE_BLOCK_VALUES // max(p, 1))
    total = 0.0
    grad = np.zeros(p)
    with np.errstate(over="ignore"):
        for start in range(0, n, rows):
            block = X[start : start + rows]
            loss, dz = family.loss_grad(block @ w, y[start : start + rows])
            total += float(np.sum(loss))
            grad += block.T @ dz
    return total / n, grad / n


def minimise_baseline_loss(X: np.ndarray, y: np.ndarray, family: Family, w0: np.ndarray) -> tuple[np.ndarray, int]:
    """argmin_w (1/n) Σ loss(⟨x_i, w⟩, y_i) by L-BFGS-B (gtol 1e−10, ≤ 2000 its) from w0 (§3.7, A20); objective and
    gradient by :func:`baseline_loss_grad`."""
    result = minimize(
        lambda w: baseline_loss_grad(X, y, family, w),
        w0,
        jac=True,
        method="L-BFGS-B",
        options={"gtol": 1e-10, "maxiter": 2000},
    )
    return result.x, int(result.nit)


@register_mechanism(
    "stein_nonprivate_mle",
    summary="Non-private baseline: GLM MLE / NLR least squares by L-BFGS from the Stein estimate (ignores ε)",
    **NONPRIVATE,
    spec="003 §3.7",
    style={"linestyle": "--", "color": "black"},
    hyper={"family": family_choice(), "covariates": HYPER["covariates"]},
)
def fit_nonprivate_mle(
    X: np.ndarray,
    y: np.ndarray,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    *,
    public_X: np.ndarray | None = None,
    stats: GramStats | None = None,
    **hyper: Any,
) -> FitResult:
    """Deterministic given the data, so it is computed once per dataset and process (cache keyed by a data hash)."""
    fam = get_family(hyper["family"])
    key = (_fingerprint(X, y), hyper["family"])
    theta, iters = cached_fit(
        key,
        lambda: minimise_baseline_loss(
            X, y, fam, fit_nonprivate_stein(X, y, 1.0, 0.5, rng, public_X=public_X, stats=stats, **hyper).theta
        ),
    )
    return FitResult(theta.copy(), {"lbfgs_iters": iters})


@register_mechanism(
    "stein_sklearn_logreg",
    summary="Non-private real-data baseline: sklearn LogisticRegression (intercept, C=1, max_iter=1000)",
    privacy_model="none",
    neighbour="none",
    spec="003 §3.7",
    style={"linestyle": "--", "color": "black"},
    hyper={
        "intercept": Hyper(bool, default=True, doc="fit an intercept (θ gets it as an extra entry)"),
        "solver": Choice(
            *SKLEARN_SOLVERS,
            default="lbfgs",
            doc="sklearn solver of the same objective (lbfgs: the spec's default; newton-cholesky: "
            "its exact optimum in 3–5 Newton steps)",
        ),
    },
    audit=AuditSetup(
        skip="a non-private baseline that needs both label classes y ∈ {0, 1}; the audit's neighbour "
        "D' has one class (and a non-private reference has no claim to audit)"
    ),
)
def fit_sklearn_logreg(
    X: np.ndarray, y: np.ndarray, epsilon: float, delta: float, rng: np.random.Generator, **hyper: Any
) -> FitResult:
    """θ = (coef, intercept) when ``intercept`` (glm_accuracy understands the extra entry); labels y ∈ {0, 1}.

    Both solvers minimise the same objective, (1/n)Σ_i log-loss + ‖w‖²/(2Cn) with C = 1 (sklearn's default, spec
    003 §3.7), to sklearn's tol = 1e−4. ``lbfgs`` (the spec's) stops up to ≈ 1.4e−4 above the optimum on Covertype
    (θ 3.7% from it); ``newton-cholesky`` reaches it in 3–5 Newton steps, 2–3× faster (issue 16; measured in
    docs/stein.md)."""
    from sklearn.linear_model import LogisticRegression

    intercept, solver = hyper["intercept"], hyper["solver"]
    if solver not in SKLEARN_SOLVERS:
        raise ValueError(f"solver must be one of {SKLEARN_SOLVERS}, got {solver!r}")

    def compute() -> tuple[np.ndarray, int]:
        model = LogisticRegression(max_iter=1000, fit_intercept=intercept, solver=solver).fit(X, (y > 0.5).astype(int))
        theta = np.concatenate([model.coef_[0], model.intercept_]) if intercept else model.coef_[0]
        return theta, int(np.max(model.n_iter_))

    theta, iters = cached_fit((_fingerprint(X, y), f"sklearn{intercept}{solver}"), compute)
    return FitResult(theta.copy(), {"lbfgs_iters": iters})
