"""The mechanism contract shared by every ``fit``: result type and the boundary input checks.

``fit(X, y, epsilon, delta, rng, **inputs, **hyper) -> FitResult`` (or a bare coefficient vector, which the runner
wraps). Input checks live here, at the boundary (scikit-learn style); mechanism bodies assume valid arrays.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpbench.linalg import GramStats, gram_stats, immutable
from dpbench.privacy.validate import check_delta, check_epsilon

#: slack for floating-point round-off when checking ‖x_i‖ ≤ bound
BOUND_TOL = 1e-9


@dataclass
class FitResult:
    """A mechanism's estimate θ̂, optional diagnostics (γ, σ, k, clipping rate, ...) and, for a mechanism that
    declares interval methods, its confidence intervals by method name (:mod:`dpbench.mechanisms._intervals`)."""

    theta: np.ndarray
    info: dict[str, Any] = field(default_factory=dict)
    intervals: dict[str, Any] = field(default_factory=dict)


def as_fit_result(output: Any) -> FitResult:
    """Normalise a mechanism's return value (FitResult, ndarray or (theta, info)) to a FitResult."""
    if isinstance(output, FitResult):
        return output
    if isinstance(output, tuple) and len(output) == 2 and isinstance(output[1], dict):
        return FitResult(np.asarray(output[0], dtype=float), dict(output[1]))
    return FitResult(np.asarray(output, dtype=float))


def check_inputs(
    X: np.ndarray,
    y: np.ndarray,
    epsilon: float | None,
    delta: float | None,
    *,
    x_bound: float | None = 1.0,
    y_bound: float | None = 1.0,
    require_overdetermined: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Validate a mechanism's inputs; return float arrays.

    Raises ValueError naming the problem: wrong shapes, NaN/inf, ε ≤ 0, δ ∉ (0, 1), rows with ‖x_i‖ > x_bound or
    |y_i| > y_bound (the data-independent bounds the calibration relies on; pass None to skip a check, e.g. when
    the mechanism clips), or n < d when the mechanism needs n ≥ d.
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    if epsilon is not None:
        check_epsilon(epsilon)
    if delta is not None:
        check_delta(delta)
    data_key = (x_bound, y_bound, require_overdetermined)
    if _already_checked(X, y, data_key):  # the runner's read-only arrays, checked in an earlier trial
        return X, y
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D array (n, d), got shape {X.shape}")
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise ValueError(f"y must be a 1-D array with {X.shape[0]} entries (rows of X), got shape {y.shape}")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"X must have at least one row and one column, got shape {X.shape}")
    if not np.isfinite(X).all():
        raise ValueError(f"X contains NaN or inf in rows {np.nonzero(~np.isfinite(X).all(axis=1))[0][:5].tolist()}")
    if not np.isfinite(y).all():
        raise ValueError(f"y contains NaN or inf at rows {np.nonzero(~np.isfinite(y))[0][:5].tolist()}")
    if x_bound is not None:
        norms = np.sqrt(np.einsum("ij,ij->i", X, X))
        over = np.nonzero(norms > x_bound * (1 + BOUND_TOL))[0]
        if over.size:
            raise ValueError(
                f"{over.size} rows have ‖x_i‖ > x_bound = {x_bound} (max {norms.max():.4g}, first rows "
                f"{over[:5].tolist()}); normalise or clip the data first"
            )
    if y_bound is not None:
        over = np.nonzero(np.abs(y) > y_bound * (1 + BOUND_TOL))[0]
        if over.size:
            raise ValueError(
                f"{over.size} labels have |y_i| > y_bound = {y_bound} (max {np.abs(y).max():.4g}); "
                "normalise or clip the labels first"
            )
    if require_overdetermined and X.shape[0] < X.shape[1]:
        raise ValueError(f"this mechanism needs n ≥ d, got n = {X.shape[0]} < d = {X.shape[1]}")
    _remember_checked(X, y, data_key)
    return X, y


#: read-only (X, y) pairs that passed the data checks, keyed by id and kept only while the arrays live
_CHECKED: weakref.WeakValueDictionary[int, np.ndarray] = weakref.WeakValueDictionary()
_CHECKED_KEYS: dict[int, set[tuple]] = {}


def _frozen(array: np.ndarray) -> bool:
    """Read-only with no writeable base behind it, like the runner's GramStats arrays (``linalg.immutable``)."""
    return immutable(array)


def _already_checked(X: np.ndarray, y: np.ndarray, key: tuple) -> bool:
    """True if these exact read-only arrays already passed the checks for ``key`` (no per-trial O(nd) re-check)."""
    return (
        _frozen(X)
        and _frozen(y)
        and _CHECKED.get(id(X)) is X
        and _CHECKED.get(id(y)) is y
        and (id(y), key) in _CHECKED_KEYS.get(id(X), set())
    )


def _remember_checked(X: np.ndarray, y: np.ndarray, key: tuple) -> None:
    if not (_frozen(X) and _frozen(y)):
        return  # arrays that may change between calls are always re-checked
    if _CHECKED.get(id(X)) is not X:
        _CHECKED_KEYS.pop(id(X), None)
    _CHECKED[id(X)] = X
    _CHECKED[id(y)] = y
    _CHECKED_KEYS.setdefault(id(X), set()).add((id(y), key))


def resolve_stats(X: np.ndarray, y: np.ndarray, stats: GramStats | None) -> GramStats:
    """The precomputed Gram statistics if they are those of (X, y), else fresh ones.

    The runner passes ``stats.X`` and ``stats.y`` themselves (an identity check, free); any other caller's
    statistics are reused only if their arrays equal (X, y) exactly — O(nd), against O(nd²) to recompute — so the
    statistics of other data of the same shape are never used silently.
    """
    if stats is not None and _same(stats.X, X) and _same(stats.y, y):
        return stats
    return gram_stats(X, y)


def checked_stats(
    X: np.ndarray, y: np.ndarray, epsilon: float | None, delta: float | None, stats: GramStats | None, **bounds: Any
) -> tuple[np.ndarray, np.ndarray, GramStats]:
    """The inputs of a mechanism fitted from the Gram statistics: :func:`check_inputs` (``bounds``: its keywords),
    then :func:`resolve_stats`."""
    X, y = check_inputs(X, y, epsilon, delta, **bounds)
    return X, y, resolve_stats(X, y, stats)


#: the contract fields shared by the central mechanisms fitted from the Gram statistics (the SSP and sketch
#: families, specs 004/005): central DP under zero-out (add/remove-one) neighbours, (XᵀX, XᵀY, YᵀY) as an input
CENTRAL_GRAM: dict[str, Any] = {"privacy_model": "central", "neighbour": "zero_out", "needs": ("stats",)}


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a is b or (a.shape == b.shape and np.array_equal(a, b))


def scaled_output(scale: float):
    """A wrapper factory f ↦ (… ↦ scale·f(…)): declares the black-box audit's ``noise_div10`` patch of a calibration
    function in a mechanism module's ``AUDIT_NOISE_DIV10`` (e.g. σ ÷ 10, or γ ÷ 100 when η ≈ √γ)."""

    def make(func):
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return func(*args, **kwargs) * scale

        return wrapper

    return make


# ----------------------------------------------------------------------------------------------------------------
# releases: the privatised quantities a mechanism computes from the data (the audit's contract)

RELEASE_KINDS = ("gaussian", "laplace", "wishart", "l2ball", "posterior", "objective")


@dataclass
class Release:
    """One privatised quantity: ``value`` (what leaves the data curator) and its noiseless ``centre``.

    kind ``gaussian``: value = centre + N(0, scale²) per entry (``symmetric``: iid on the upper triangle incl. the
    diagonal, mirrored); ``laplace``: value = centre + Lap(scale) per entry; ``wishart``: value = W·``params['unit']``
    with W ~ Wishart(k = params['k'], centre) (the Gaussian-mixing sketch's Gram, centre = its covariance, of which
    ``params['ridge']`` = η² I is the added mixing noise);
    ``l2ball``: each user's report is the ε = ``scale`` ℓ2-ball sampler of centre (spec 000 §3.6);
    ``posterior``: value ~ N(centre, scale²·H⁻¹) with the data-dependent ``params['H']`` (one posterior sample,
    OPS: centre θ_λ = H⁻¹XᵀY, H = XᵀX + (1 + λ)I, scale = 1/√γ; its sensitivity bounds the gradient of the
    differing record's loss at the solution, ‖H_D(θ_D − θ_D′)‖, the Lipschitz constant of the OPS theorem);
    ``objective``: value = argmin_{‖θ‖ ≤ R} ½θᵀAθ − (centre − b)ᵀθ, b ~ N(0, scale²I), with the data-dependent
    ``params['A']``, ``params['radius']`` = R and ``params['value_at']`` (c ↦ the value at noise c·b: the controls);
    its law is the two-piece density of :mod:`dpbench.audit.objective_density` (ObjPert; sensitivity bounds the
    differing record's loss gradient on the ball, the KST Lipschitz constant).
    ``sensitivity`` is the declared bound on ‖centre(D) − centre(D′)‖ (ℓ2 for gaussian, ℓ1 for laplace; per user
    for local releases). ``users``: centre holds one row per user (local model); each user's report is its row plus
    its own noise of std ``scale``, and value is their ``params['aggregate']`` ("mean" | "sum") plus the summed noise,
    or (``"none"``) the reports themselves.
    """

    name: str
    value: np.ndarray
    centre: np.ndarray
    kind: str = "gaussian"
    scale: float = 0.0
    sensitivity: float | None = None
    symmetric: bool = False
    users: bool = False
    params: dict[str, Any] = field(default_factory=dict)

    def aggregate_centre(self) -> np.ndarray:
        """The noiseless value: the centre, or the mean/sum of the users' rows."""
        if not self.users:
            return np.asarray(self.centre, dtype=float)
        rows = np.asarray(self.centre, dtype=float)
        how = self.params.get("aggregate", "mean")
        return rows if how == "none" else rows.sum(axis=0) if how == "sum" else rows.mean(axis=0)


class ReleaseRecorder:
    """Collects the releases of one ``fit`` call (see :func:`record_releases`).

    ``noise_factor`` multiplies the noise of every gaussian/laplace/posterior release (value = centre + c·noise,
    scale·c), the mixing noise η of every wishart release (:func:`shrink_wishart`) and the noise b of every objective
    release (its ``value_at(c)``): the audit's negative controls.
    ``replay`` (the releases of a run on the neighbouring dataset, same random stream)
    forces every release to take that run's value, so the mechanism follows the same history and the recorded
    centres are those of *this* dataset at that history (white-box audit of adaptive mechanisms).
    """

    def __init__(self, noise_factor: float = 1.0, replay: list[Release] | None = None):
        self.noise_factor = float(noise_factor)
        self.replay = replay
        self.releases: list[Release] = []

    def add(self, release: Release) -> np.ndarray:
        if self.replay is not None:
            index = len(self.releases)
            if index >= len(self.replay) or self.replay[index].name != release.name:
                expected = self.replay[index].name if index < len(self.replay) else "no further release"
                raise RuntimeError(
                    f"release sequence differs between neighbouring datasets at #{index}: {release.name!r} vs "
                    f"{expected!r} (the sequence of releases must not depend on the data)"
                )
            release.value = np.array(self.replay[index].value, dtype=float, copy=True)
            release.scale *= self.noise_factor
            if self.noise_factor != 1.0 and release.kind == "wishart":
                shrink_wishart(release, self.noise_factor, transform_value=False)
        elif self.noise_factor != 1.0 and release.kind == "wishart":
            shrink_wishart(release, self.noise_factor)
        elif self.noise_factor != 1.0 and release.kind == "objective":
            release.value = np.array(release.params["value_at"](self.noise_factor), dtype=float)
            release.scale *= self.noise_factor
        elif self.noise_factor != 1.0 and release.kind in ("gaussian", "laplace", "posterior"):
            centre = release.aggregate_centre()
            release.value = centre + self.noise_factor * (np.asarray(release.value, dtype=float) - centre)
            release.scale *= self.noise_factor
        self.releases.append(release)
        return release.value


def _sym_power(a: np.ndarray, power: float) -> np.ndarray:
    w, v = np.linalg.eigh((a + a.T) / 2.0)
    return (v * np.clip(w, 1e-300, None) ** power) @ v.T


def shrink_wishart(release: Release, factor: float, transform_value: bool = True) -> None:
    """Mixing noise η → c·η of a wishart release: covariance Σ = M + η²I → Σ′ = M + c²η²I (``params['ridge']`` =
    η²), and the drawn value W → T W Tᵀ with T = Σ′^{1/2} Σ^{-1/2}, which is exactly Wishart(k, Σ′) when W is
    Wishart(k, Σ). A release declaring no ridge is left unchanged."""
    ridge = float(release.params.get("ridge", 0.0))
    if ridge <= 0.0:
        return
    cov = np.asarray(release.centre, dtype=float)
    shrunk = cov - (1.0 - factor * factor) * ridge * np.eye(cov.shape[0])
    if transform_value:
        T = _sym_power(shrunk, 0.5) @ _sym_power(cov, -0.5)
        release.value = T @ np.asarray(release.value, dtype=float) @ T.T
    release.centre = shrunk
    release.params["ridge"] = factor * factor * ridge


_RECORDER: ContextVar[ReleaseRecorder | None] = ContextVar("dpbench_release_recorder", default=None)


@contextmanager
def record_releases(noise_factor: float = 1.0, replay: list[Release] | None = None) -> Iterator[ReleaseRecorder]:
    """Within the block, every :func:`released` call of a mechanism is recorded (and possibly altered, see
    :class:`ReleaseRecorder`); outside it ``released`` is the identity and costs one context-variable lookup."""
    recorder = ReleaseRecorder(noise_factor, replay)
    token = _RECORDER.set(recorder)
    try:
        yield recorder
    finally:
        _RECORDER.reset(token)


def recording() -> bool:
    """True inside :func:`record_releases` (an audit): mechanisms may skip building audit-only views otherwise."""
    return _RECORDER.get() is not None


def released(
    name: str,
    value: Any,
    centre: Any,
    *,
    scale: float,
    kind: str = "gaussian",
    sensitivity: float | None = None,
    symmetric: bool = False,
    users: bool = False,
    **params: Any,
) -> Any:
    """Declare that ``value`` (= ``centre`` + noise, already computed by the mechanism) is released; return it.

    Mechanisms wrap every privatised quantity in this call: normal runs get ``value`` back unchanged (bit for bit),
    audits (:func:`record_releases`) see the release and may replace its value. Everything computed from the
    returned values only is post-processing. ``centre`` may be a zero-argument callable, evaluated only during an
    audit (per-user rows of a large dataset cost nothing in normal runs).
    """
    recorder = _RECORDER.get()
    if recorder is None:
        return value
    if callable(centre):
        centre = centre()
    if kind not in RELEASE_KINDS:
        raise ValueError(f"release kind must be one of {RELEASE_KINDS}, got {kind!r}")
    release = Release(
        name, np.array(value, dtype=float), np.array(centre, dtype=float), kind, float(scale),
        None if sensitivity is None else float(sensitivity), bool(symmetric), bool(users), dict(params),
    )  # fmt: skip
    out = recorder.add(release)
    return float(out) if np.ndim(value) == 0 and not isinstance(value, np.ndarray) else out
