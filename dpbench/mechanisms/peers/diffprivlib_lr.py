"""``diffprivlib_lr`` — adapter around IBM diffprivlib's ``LinearRegression`` (the functional mechanism of Zhang et
al. 2012: Laplace noise on the coefficients of the squared-loss polynomial, then exact minimisation).

Privacy model: central **pure ε-DP** (δ is not used), **replace-one** neighbours (its sensitivities are the ranges
of the monomials over the bounds). Bounds are passed explicitly — x_j ∈ [−x_bound, x_bound] per coordinate (implied
by ‖x_i‖ ≤ x_bound) and y ∈ [−y_bound, y_bound] — so diffprivlib never reads them off the data (no
``PrivacyLeakWarning``); rows are clipped to them by diffprivlib. No intercept (like every seed mechanism), so the
whole ε goes to the regression coefficients: ε/(1 + d + d(d+1)/2) per monomial.

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
        "x_bound": Hyper(float, default=1.0, gt=0, doc="‖x_i‖ ≤ x_bound, passed as the box [−x_bound, x_bound]^d"),
        "y_bound": Hyper(float, default=1.0, gt=0, doc="|y_i| ≤ y_bound"),
    },
    bounds=Bounds(
        x="x_bound",
        y="y_bound",
        clips=True,
        note="diffprivlib clips every coordinate to [−x_bound, x_bound] and y to [−y_bound, y_bound]",
    ),
    uses_delta=False,
    audit=AuditSetup(skip=UNAVAILABLE or None),
)
def fit(
    X: np.ndarray, y: np.ndarray, epsilon: float, delta: float, rng: np.random.Generator, **hyper: Any
) -> FitResult:
    """diffprivlib ``LinearRegression(epsilon, bounds_X=(−x_bound, x_bound), bounds_y=(−y_bound, y_bound),
    fit_intercept=False)`` on (X, y); δ is validated but unused (pure ε-DP)."""
    X, y = check_inputs(X, y, epsilon, delta, x_bound=None, y_bound=None)  # diffprivlib clips to the bounds
    if UNAVAILABLE:
        raise MechanismUnavailableError(f"mechanism 'diffprivlib_lr' is unavailable: {UNAVAILABLE}")
    d, x_bound, y_bound = X.shape[1], float(hyper["x_bound"]), float(hyper["y_bound"])
    model = DIFFPRIVLIB.models.LinearRegression(
        epsilon=float(epsilon),
        bounds_X=(np.full(d, -x_bound), np.full(d, x_bound)),
        bounds_y=(-y_bound, y_bound),
        fit_intercept=False,
        random_state=int(rng.integers(2**31 - 1)),
        accountant=DIFFPRIVLIB.BudgetAccountant(),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", DIFFPRIVLIB.utils.PrivacyLeakWarning)  # a leak would be a bug here
        model.fit(X, y)
    return FitResult(np.asarray(model.coef_, dtype=float).reshape(-1), {"local_epsilon_share": 1 + d + d * (d + 1) / 2})


if UNAVAILABLE:
    fit.unavailable = UNAVAILABLE  # type: ignore[attr-defined]  # read by the config check and `dpbench list`
