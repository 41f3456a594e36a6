"""``diffprivlib_lr`` — adapter around IBM diffprivlib's ``LinearRegression`` (the functional mechanism of Zhang et
al. 2012: Laplace noise on the coefficients of the squared-loss polynomial, then exact minimisation).

Privacy model: central **pure ε-DP** (δ is not used), **replace-one** neighbours (its sensitivities are the ranges
of the monomials over the bounds). Bounds are passed explicitly as the library documents them — ``bounds_X`` the
per-feature box [−x_bound, x_bound]^d (it contains the ball ‖x_i‖ ≤ x_bound) and ``bounds_y`` = [−y_bound, y_bound]
— so diffprivlib never reads them off the data (no ``PrivacyLeakWarning``). No intercept (like every seed
mechanism), so the whole ε goes to the regression coefficients: ε/(1 + d + d(d+1)/2) per monomial.

Clipping. diffprivlib 0.6.6 clips the data to the bounds only on its ``fit_intercept=True`` path
(``_preprocess_data``); with ``fit_intercept=False`` a row outside the box enters the monomial sums unclipped and
the Laplace noise, calibrated to the box, no longer covers it. This adapter therefore clips every coordinate to
[−x_bound, x_bound] and y to [−y_bound, y_bound] itself, with diffprivlib's own ``clip_to_bounds`` (the step its
intercept path applies), before the fit: on data inside the bounds nothing changes and the estimate is exactly
diffprivlib's (``scripts/diffprivlib_check.py``, ``tests/mechanisms/peers/test_diffprivlib_lr.py``).

Why it is so far from OLS (docs/leaderboard.md, measured). The noisy quadratic form — XᵀX plus a symmetric matrix of
Laplace entries of scale 2(1 + d + d(d+1)/2)x_bound²/ε off the diagonal — is indefinite unless the smallest
eigenvalue of XᵀX exceeds the noise's spectral norm; diffprivlib then minimises an objective that is unbounded below
with scipy's BFGS from θ = 0, which stops wherever its line search gives up, far out along a negative direction.
Zhang et al. (2012, §5) add regularisation and spectral trimming for exactly this case; diffprivlib does not. The
row's ``info.noisy_quadratic_indefinite`` records it (1 = the released noisy quadratic had a negative eigenvalue; a
function of the released noisy coefficients only, so post-processing).

Optional: ``pip install -e ".[peers]"``. When diffprivlib is missing or fails to import (diffprivlib 0.6.6 does not
import with scikit-learn ≥ 1.9), the mechanism stays registered, ``dpbench list`` shows the reason, a config naming
it is rejected with that reason, and calling it raises :class:`MechanismUnavailableError`.
Randomness: diffprivlib draws from its own generator, seeded from the trial's rng (one draw), with a fresh
``BudgetAccountant`` per fit.
"""

from __future__ import annotations

import importlib
import importlib.util
import warnings
from typing import Any

import numpy as np

from dpbench.contract import AuditSetup, Bounds, Hyper
from dpbench.mechanisms._base import FitResult, check_inputs
from dpbench.registry import register_mechanism

INSTALL_HINT = "pip install -e '.[peers]' (diffprivlib with a scikit-learn it supports, < 1.9)"


class MechanismUnavailableError(ValueError):
    """An optional peer mechanism whose library is not installed or does not import (a named, one-line user error)."""


def _load_diffprivlib() -> tuple[Any, str]:
    """(diffprivlib module or None, reason it is unavailable or "")."""
    if importlib.util.find_spec("diffprivlib") is None:
        return None, f"diffprivlib is not installed; {INSTALL_HINT}"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return importlib.import_module("diffprivlib"), ""
    except Exception as err:  # noqa: BLE001 - any import failure of the optional library is reported, not raised
        return None, f"diffprivlib does not import ({type(err).__name__}: {err}); {INSTALL_HINT}"


DIFFPRIVLIB, UNAVAILABLE = _load_diffprivlib()
SUMMARY = "diffprivlib LinearRegression (functional mechanism, pure ε-DP), bounds passed explicitly"


@register_mechanism(
    "diffprivlib_lr",
    summary=SUMMARY if not UNAVAILABLE else f"UNAVAILABLE: {UNAVAILABLE}",
    privacy_model="central",
    neighbour="replace_one",
    spec="peer: diffprivlib",
    style={"color": "tab:cyan", "marker": "X", "linestyle": "-"},
    hyper={
        "x_bound": Hyper(
            float, default=1.0, gt=0, doc="box bound |x_ij| ≤ x_bound, passed as bounds_X = [−x_bound, x_bound]^d"
        ),
        "y_bound": Hyper(float, default=1.0, gt=0, doc="|y_i| ≤ y_bound"),
    },
    bounds=Bounds(
        x="x_bound",
        y="y_bound",
        clips=True,
        note="every coordinate is clipped to [−x_bound, x_bound] and y to [−y_bound, y_bound] (by the adapter, with "
        "diffprivlib's clip_to_bounds: the library itself clips only when it fits an intercept)",
    ),
    uses_delta=False,
    audit=AuditSetup(skip=UNAVAILABLE or None),
)
def fit(
    X: np.ndarray, y: np.ndarray, epsilon: float, delta: float, rng: np.random.Generator, **hyper: Any
) -> FitResult:
    """diffprivlib ``LinearRegression(epsilon, bounds_X=(−x_bound, x_bound), bounds_y=(−y_bound, y_bound),
    fit_intercept=False)`` on (X, y) clipped to those bounds; δ is validated but unused (pure ε-DP)."""
    X, y = check_inputs(X, y, epsilon, delta, x_bound=None, y_bound=None)  # clipped below, to the box
    if UNAVAILABLE:
        raise MechanismUnavailableError(f"mechanism 'diffprivlib_lr' is unavailable: {UNAVAILABLE}")
    d, x_bound, y_bound = X.shape[1], float(hyper["x_bound"]), float(hyper["y_bound"])
    bounds_X, bounds_y = (np.full(d, -x_bound), np.full(d, x_bound)), (-y_bound, y_bound)
    model = DIFFPRIVLIB.models.LinearRegression(
        epsilon=float(epsilon),
        bounds_X=bounds_X,
        bounds_y=bounds_y,
        fit_intercept=False,
        random_state=int(rng.integers(2**31 - 1)),
        accountant=DIFFPRIVLIB.BudgetAccountant(),
    )
    clip = DIFFPRIVLIB.validation.clip_to_bounds
    with warnings.catch_warnings():
        warnings.simplefilter("error", DIFFPRIVLIB.utils.PrivacyLeakWarning)  # a leak would be a bug here
        model.fit(clip(X, bounds_X), clip(y, bounds_y))
    info = {
        "local_epsilon_share": 1 + d + d * (d + 1) / 2,
        "noisy_quadratic_indefinite": noisy_quadratic_indefinite(model),
    }
    return FitResult(np.asarray(model.coef_, dtype=float).reshape(-1), info)


def noisy_quadratic_indefinite(model: Any) -> float:
    """1.0 when the released noisy second-degree coefficients (diffprivlib's ``_obj_coefs[2]``, the noisy XᵀX) have
    a negative eigenvalue — the objective diffprivlib minimises is then unbounded below —, 0.0 when not, NaN when the
    library does not expose them. Post-processing of the release: it reads only the noisy coefficients."""
    coefs = getattr(model, "_obj_coefs", None)
    if coefs is None or len(coefs) < 3:
        return float("nan")
    return float(np.linalg.eigvalsh(np.asarray(coefs[2], dtype=float))[0] < 0.0)


if UNAVAILABLE:
    fit.unavailable = UNAVAILABLE  # type: ignore[attr-defined]  # read by the config check and `dpbench list`
