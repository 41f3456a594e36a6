"""scikit-learn style estimators around dpbench's mechanisms (needs ``pip install dpbench[sklearn]``).

>>> from dpbench.estimators import DPLinearRegression
>>> model = DPLinearRegression("ihm", epsilon=1.0, x_bound=1.0, y_bound=1.0, random_state=0, T=3)
>>> model.fit(X, y).predict(X_new)                                                  # doctest: +SKIP

Any registered mechanism (``dpbench list``) or external ``"package.module:fit"`` function can be wrapped; its
hyperparameters (its declared table, or a plug-in's keyword parameters) are passed as extra keyword arguments and
behave as ordinary estimator parameters (``get_params``/``set_params``, grid search).
Noise comes only from ``random_state``.
"""

from __future__ import annotations

import numbers
import warnings
from typing import Any

import numpy as np

try:
    from sklearn.base import BaseEstimator, RegressorMixin
    from sklearn.utils.validation import check_is_fitted, validate_data
except ImportError as err:  # pragma: no cover - exercised only without scikit-learn
    raise ImportError("dpbench.estimators needs scikit-learn >= 1.6: pip install 'dpbench[sklearn]'") from err

from dpbench import registry
from dpbench.contract import HyperError
from dpbench.mechanisms._base import as_fit_result
from dpbench.mechanisms._intervals import Interval, check_alpha
from dpbench.privacy.validate import check_delta, check_epsilon

#: constructor parameters of :class:`DPLinearRegression`; every other keyword is a mechanism hyperparameter
ESTIMATOR_PARAMS = (
    "mechanism",
    "epsilon",
    "delta",
    "x_bound",
    "y_bound",
    "fit_intercept",
    "clip",
    "random_state",
    "privacy",
    "intervals",
)
#: what ``fit`` does when rows lie beyond the bounds: warn with the fraction clipped, refuse, or clip silently
CLIP_POLICIES = ("warn", "error", "ignore")
#: with ``fit_intercept`` the mechanism sees z_i = (a·x_i/x_bound, b) with a = b = 1/√2, so ‖z_i‖ ≤ 1 still holds
INTERCEPT_SHARE = 1.0 / np.sqrt(2.0)


class ClippingWarning(UserWarning):
    """Rows of X (or labels) lay beyond ``x_bound`` (``y_bound``) and were clipped: the fit is biased towards 0."""


#: mechanism inputs the estimator can supply (the others need data a plain fit(X, y) does not have)
SUPPORTED_INPUTS = ("stats",)


def clip_rows(X: np.ndarray, bound: float) -> np.ndarray:
    """Project every row onto the ℓ2 ball of radius ``bound``: x_i ← x_i · min{1, bound/‖x_i‖₂}.

    A per-row map that does not look at other rows, so neighbouring datasets stay neighbouring.
    """
    norms = np.sqrt(np.einsum("ij,ij->i", X, X))
    scale = np.minimum(1.0, bound / np.maximum(norms, np.finfo(float).tiny))
    return X * scale[:, None]


def clip_labels(y: np.ndarray, bound: float) -> np.ndarray:
    """y_i ← clip(y_i, −bound, bound)."""
    return np.clip(y, -bound, bound)


def clipped_fractions(X: np.ndarray, y: np.ndarray, x_bound: float, y_bound: float | None) -> tuple[float, float]:
    """Fractions of rows with ‖x_i‖₂ > x_bound and of labels with |y_i| > y_bound (0 when there is no y bound).

    Computed from the data without noise: the estimator tells the user (a warning on their own machine), it is never
    part of the release."""
    slack = 1.0 + 1e-12  # a row exactly on the bound is not clipped
    x_out = float(np.mean(np.sqrt(np.einsum("ij,ij->i", X, X)) > x_bound * slack))
    y_out = 0.0 if y_bound is None else float(np.mean(np.abs(y) > y_bound * slack))
    return x_out, y_out


def check_clipping(X: np.ndarray, y: np.ndarray, x_bound: float, y_bound: float | None, policy: str) -> None:
    """Warn (``policy='warn'``) or refuse (``'error'``) when rows lie beyond the bounds, naming the fractions."""
    x_out, y_out = clipped_fractions(X, y, x_bound, y_bound)
    if policy == "ignore" or (x_out == 0 and y_out == 0):
        return
    parts = [f"{x_out:.1%} of the rows have ‖x‖ > x_bound = {x_bound:g}"] if x_out else []
    parts += [f"{y_out:.1%} of the labels have |y| > y_bound = {y_bound:g}"] if y_out else []
    message = (
        " and ".join(parts) + "; they are clipped to the bounds, which biases the fit towards 0. Choose the "
        "bounds from what you know of the data (not from the data: that is not private), e.g. "
        "x_bound ≥ the largest possible row norm"
    )
    if policy == "error":
        raise ValueError(f"clip='error': {message}")
    warnings.warn(f"{message} (clip='error' refuses, clip='ignore' silences this)", ClippingWarning, stacklevel=3)


def as_generator(random_state: Any) -> np.random.Generator:
    """The trial rng from ``random_state``: None (fresh entropy), an int seed, a Generator or a RandomState."""
    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(np.iinfo(np.int32).max))
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool) and random_state >= 0:
        return np.random.default_rng(int(random_state))
    raise ValueError(
        f"random_state must be None, a non-negative int, a numpy Generator or RandomState, got {random_state!r}"
    )


def _positive(value: Any, name: str, allow_none: bool = False) -> float | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value) or value <= 0:
        allowed = "a finite number > 0" + (" or None" if allow_none else "")
        raise ValueError(f"{name} must be {allowed}, got {value!r}")
    return float(value)


class DPLinearRegression(RegressorMixin, BaseEstimator):
    """Differentially private linear regression with any dpbench mechanism.

    Parameters
    ----------
    mechanism : registered mechanism name (``dpbench list``; e.g. ``ihm``, ``adassp``, ``linmix``, ``dpgd``, or
        ``ols`` = non-private reference) or an external ``"package.module:fit"`` function. Required.
    epsilon : privacy parameter ε > 0 of the whole fit.
    delta : δ ∈ (0, 1); None uses the benchmark's convention δ = 1/n² with n the number of rows (this treats n as
        public; pass a number if it is not).
    x_bound : rows are clipped to ‖x_i‖₂ ≤ x_bound before fitting.
    y_bound : labels are clipped to |y_i| ≤ y_bound; None leaves them alone (only for mechanisms whose contract
        relies on no label bound, e.g. IHM, which clips residuals instead).
    fit_intercept : fit an intercept (default True), privately and at no extra privacy cost: the mechanism is run on
        z_i = (x_i/x_bound, 1)/√2, a per-row map with ‖z_i‖ ≤ 1, and its last coefficient becomes ``intercept_``.
        The price is a factor √2 on the features' scale (their signal against the noise).
    clip : ``"warn"`` (default) warns with the fraction of rows and labels beyond the bounds, ``"error"`` refuses
        to fit them, ``"ignore"`` clips silently.
    random_state : seed (int), numpy Generator/RandomState, or None. All noise is drawn from it.
    privacy : ``"strict"`` (default): the mechanism at the accounting its theorem proves — e.g. LinMix with
        ``strict=True`` —, refusing a hyperparameter whose accounting is not a theorem; ``"paper"``: the mechanism's
        own defaults, the papers' choices (LinMix's code variant under-counts one release, docs/privacy.md).
    intervals : False (default): θ̂ only; True: also confidence intervals by the mechanism's default interval method,
        or the name of one of its interval methods (``dpbench list mechanisms`` shows which mechanisms have them,
        e.g. ``adassp_pboot``: ``pboot_ssp``, ``pboot``, ``wald_private``). The interval is post-processing of the
        same private releases — θ̂ and the intervals together are (ε, δ)-DP. Read it with :meth:`conf_int`.
        ``dpgd`` keeps the IHM comparison's T = 3, η = 0.25 (far from converged: set ``T`` and ``learning_rate``,
        e.g. ``T=200, learning_rate=1.0`` = 1/L for rows in the unit ball); ``dpgd_checkpoints``' defaults converge
        where λ_min(XᵀX/n) ≳ 0.05 (its docstring).
    **hyper : hyperparameters of the mechanism (e.g. ``T=3, C=1.0`` for IHM), validated in ``fit``
        against the mechanism's declared contract. Hyperparameters that hold a data bound (the contract's
        ``bounds``) are set by the estimator: the data it passes are scaled to that bound.

    Why clipping and not rescaling
    ------------------------------
    A mechanism's noise is calibrated to the sensitivity of what it releases, which it derives from a bound on
    every row (‖x_i‖ ≤ 1, |y_i| ≤ 1). The bound must not depend on the data: if ``fit`` divided by the largest
    row norm of X, adding or removing one row could rescale *every* row, the sensitivity would be unbounded and
    the (ε, δ) guarantee would be void. ``fit`` therefore clips each row to the user-given ``x_bound``/``y_bound``
    (a per-row map) and then divides by these constants, so the mechanism sees unit-bounded data; the fitted
    coefficients are mapped back: ``coef_ = θ̂ · y_bound / x_bound``. Choose the bounds from domain knowledge;
    rows beyond them are shrunk, which biases the fit but never weakens privacy.

    Attributes
    ----------
    coef_ : (n_features,) coefficients; ``intercept_`` the intercept (0.0 with ``fit_intercept=False``).
    delta_ : the δ actually used.
    interval_ : with ``intervals``, the fitted interval method's output in the coefficients' scale (rows: ``coef_``
        then the intercept); ``conf_int(alpha)`` reads it.
    fit_info_ : the mechanism's diagnostics (noise scales, ridge, ...), as in the runner's ``info.*`` columns.
        Some (e.g. IHM's ``clip_fraction``) are computed from the data without noise: do not publish them.
    n_features_in_, feature_names_in_ : as in scikit-learn.
    """

    def __init__(
        self,
        mechanism: str | None = None,
        epsilon: float = 1.0,
        delta: float | None = None,
        x_bound: float = 1.0,
        y_bound: float | None = 1.0,
        fit_intercept: bool = True,
        clip: str = "warn",
        random_state: Any = None,
        privacy: str = "strict",
        intervals: bool | str = False,
        **hyper: Any,
    ) -> None:
        self.mechanism = mechanism
        self.epsilon = epsilon
        self.delta = delta
        self.x_bound = x_bound
        self.y_bound = y_bound
        self.fit_intercept = fit_intercept
        self.clip = clip
        self.random_state = random_state
        self.privacy = privacy
        self.intervals = intervals
        self._hyper = dict(hyper)

    # -- scikit-learn parameter protocol (constructor parameters + the mechanism's hyperparameters) ------------

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        return {**{name: getattr(self, name) for name in ESTIMATOR_PARAMS}, **self._hyper}

    def set_params(self, **params: Any) -> DPLinearRegression:
        """Set constructor parameters or mechanism hyperparameters (validated in ``fit``, as in scikit-learn)."""
        for name, value in params.items():
            if name in ESTIMATOR_PARAMS:
                setattr(self, name, value)
            else:
                self._hyper[name] = value
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # A private fit on scikit-learn's 200-row test problem at ε = 1 cannot reach R² > 0.5.
        tags.regressor_tags.poor_score = True
        return tags

    # -- fitting --------------------------------------------------------------------------------------------------

    def _mechanism_info(self) -> registry.MechanismInfo:
        if not isinstance(self.mechanism, str):
            raise ValueError(
                f"mechanism must be a registered name (dpbench list) or 'package.module:fit', got {self.mechanism!r}"
            )
        try:
            info = registry.get_mechanism(self.mechanism)
        except KeyError as err:
            raise ValueError(f"mechanism: {err.args[0] if err.args else err}") from None
        unsupported = [name for name in info.needs if name not in SUPPORTED_INPUTS]
        if unsupported:
            raise ValueError(
                f"mechanism {info.name!r} needs {unsupported}, which DPLinearRegression.fit(X, y) cannot supply"
            )
        allowed = info.hyperparameters()
        unknown = sorted(set(self._hyper) - set(allowed))
        if unknown:
            raise ValueError(
                f"unknown hyperparameter {unknown[0]!r} of mechanism {info.name!r}; "
                f"allowed: {', '.join(sorted(allowed)) or '(none)'}"
            )
        return info

    def _hyper_for(self, info: registry.MechanismInfo) -> tuple[dict[str, Any], float, float | None]:
        """The mechanism's hyperparameters (validated, bound-holding ones set to the unit bound) and the x / y
        bounds its contract relies on (the data are scaled to them)."""
        hyper = dict(self._hyper)
        for name in info.bounds.hyper_names().values():  # the data are scaled to the unit bound: say so
            hyper[name] = 1.0
        if self.privacy not in registry.PRIVACY_PROFILES:
            raise ValueError(f"privacy must be one of {registry.PRIVACY_PROFILES}, got {self.privacy!r}")
        try:
            hyper = info.check_hyper(info.with_profile(hyper, self.privacy))
        except HyperError as err:
            raise ValueError(f"hyperparameter {err.name!r} of mechanism {info.name!r}: {err.reason}") from None
        x_target, y_target = info.bounds.resolve(info.resolve(hyper))
        return hyper, 1.0 if x_target is None else x_target, y_target

    def _interval_method(self, info: registry.MechanismInfo) -> str | None:
        """The interval method ``intervals`` asks for (None: no intervals); ValueError naming ``intervals``."""
        if self.intervals is False or self.intervals is None:
            return None
        if not info.intervals:
            having = sorted(m.name for m in registry.MECHANISMS.values() if m.intervals)
            raise ValueError(
                f"intervals: mechanism {info.name!r} has no interval method; mechanisms with one: "
                f"{', '.join(having) or '(none)'}"
            )
        if self.intervals is True:
            return info.intervals[0]
        if isinstance(self.intervals, str) and self.intervals in info.intervals:
            return self.intervals
        raise ValueError(
            f"intervals must be False, True or one of mechanism {info.name!r}'s interval methods "
            f"{', '.join(info.intervals)}, got {self.intervals!r}"
        )

    def fit(self, X: Any, y: Any) -> DPLinearRegression:
        """Clip rows to the bounds (warning how many were beyond), rescale to the bounds the mechanism relies on
        (with a constant feature for the intercept), run it once, map θ̂ (and its interval) back."""
        info = self._mechanism_info()
        method = self._interval_method(info)
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True, ensure_min_samples=2)
        n, d = X.shape
        columns = d + int(bool(self.fit_intercept))
        if method is not None and n <= columns + 1:
            raise ValueError(
                f"X: intervals need n_samples > n_coefficients + 1 (a residual variance), got n_samples = {n}, "
                f"n_coefficients = {columns}"
            )
        x_bound = _positive(self.x_bound, "x_bound")
        y_bound = _positive(self.y_bound, "y_bound", allow_none=True)
        if self.clip not in CLIP_POLICIES:
            raise ValueError(f"clip must be one of {', '.join(CLIP_POLICIES)}, got {self.clip!r}")
        if not isinstance(self.fit_intercept, (bool, np.bool_)):
            raise ValueError(f"fit_intercept must be True or False, got {self.fit_intercept!r}")
        check_clipping(X, y, x_bound, y_bound, self.clip)
        hyper, x_target, y_target = self._hyper_for(info)
        enforced_y = info.bounds.enforced(info.resolve(hyper))[1]
        if y_bound is None and enforced_y:
            raise ValueError(f"y_bound: mechanism {info.name!r} relies on a label bound; give y_bound (not None)")
        if info.privacy(hyper).model != "none":
            epsilon = check_epsilon(self.epsilon)
            lo, hi = info.epsilons(hyper)
            if not lo < epsilon <= hi:
                raise ValueError(
                    f"epsilon: mechanism {info.name!r} with these hyperparameters is calibrated for "
                    f"ε ∈ ({lo:g}, {hi:g}] only, got {epsilon:g}"
                )
        else:
            epsilon = self.epsilon
        delta = 1.0 / n**2 if self.delta is None else check_delta(self.delta)
        x_scale = x_target / x_bound
        y_scale = 1.0 if y_bound is None else (1.0 if y_target is None else y_target) / y_bound
        X_unit = clip_rows(X, x_bound) * x_scale
        if self.fit_intercept:  # z_i = (x_i/x_bound, 1)/√2 · x_target: still ‖z_i‖ ≤ x_target, a per-row map
            X_unit = np.hstack([X_unit, np.full((n, 1), x_target)]) * INTERCEPT_SHARE
        y_unit = y if y_bound is None else clip_labels(y, y_bound) * y_scale
        rng = as_generator(self.random_state)
        try:
            result = as_fit_result(info.fit(X_unit, y_unit, epsilon, delta, rng, **hyper))
        except ValueError as err:
            if "n ≥ d" in str(err):
                extra = " (+ 1 for the intercept)" if self.fit_intercept else ""
                raise ValueError(
                    f"mechanism {info.name!r} needs n_samples ≥ n_features{extra}, got n_samples = {n} < "
                    f"n_features = {d}{extra}"
                ) from err
            raise
        theta = np.asarray(result.theta, dtype=float).reshape(-1)
        if theta.shape != (columns,):
            raise ValueError(f"mechanism {info.name!r} returned θ of shape {theta.shape}, expected ({columns},)")
        share = INTERCEPT_SHARE if self.fit_intercept else 1.0
        factors = np.append(np.full(d, share * x_scale / y_scale), [share * x_target / y_scale][: columns - d])
        self.coef_ = theta[:d] * factors[:d]
        self.intercept_ = float(theta[d] * factors[d]) if self.fit_intercept else 0.0
        self.interval_ = None if method is None else self._fitted_interval(info, result.intervals, method, factors)
        self.delta_ = delta
        self.fit_info_ = dict(result.info)
        return self

    @staticmethod
    def _fitted_interval(
        info: registry.MechanismInfo, intervals: dict[str, Any], method: str, factors: np.ndarray
    ) -> Interval:
        if method not in intervals:
            raise ValueError(f"mechanism {info.name!r} declares interval method {method!r} but returned none")
        return intervals[method].scaled(factors)

    def conf_int(self, alpha: float = 0.05) -> np.ndarray:
        """(n_coefficients, 2) array of [lower, upper] (1 − alpha)-intervals: the rows of ``coef_`` in order, then the
        intercept's row when ``fit_intercept=True`` (statsmodels' convention). Like statsmodels', an interval for the
        population coefficient (sampling and privacy noise) unless the method's target says otherwise
        (``interval_.target``)."""
        check_is_fitted(self, "coef_", msg="conf_int: this %(name)s is not fitted yet; call fit(X, y) first")
        if getattr(self, "interval_", None) is None:
            raise ValueError(
                f"conf_int: this model was fitted with intervals={self.intervals!r}; refit with intervals=True "
                "(the interval is computed from the same private releases during fit)"
            )
        return self.interval_.conf_int(check_alpha(alpha))

    def predict(self, X: Any) -> np.ndarray:
        """X @ coef_ (no clipping at prediction time: predictions are post-processing)."""
        check_is_fitted(self, "coef_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return X @ self.coef_ + self.intercept_
