"""DP-FTRL-Σ work shared across fits: bounded module stores of the data-dependent arrays one data draw and trial
rng reuse across mechanisms and ε (block Grams, tree noise, the public Σ, XV, Σ⁻¹-norms), and the permuted rows.
:func:`drop_stores` empties them."""

from __future__ import annotations

import threading
import weakref
from typing import Any

import numpy as np

from dpbench.mechanisms.gradient.dp_ftrl.covariance import SIGMA_FACTORS, NoiseCovariance, PublicMoments, public_gram
from dpbench.mechanisms.gradient.dp_ftrl.engines import GatheredRows, block_grams
from dpbench.mechanisms.gradient.tree_noise import BlockedTreeNoise, blocked_tree_noise

_CACHE: dict[tuple, Any] = {}
#: the frozen data array the stores hold work for (a weak reference; :func:`forget_other_data`) and a spare XV
_CURRENT: dict[str, Any] = {}
_SPARE_XV: list[np.ndarray] = []
#: per-thread buffer of the permuted training rows (:func:`stream_rows`)
_GATHER = threading.local()
_CACHE_SIZE = 6
#: PᵀP (and its eigendecomposition) of the current public rows: the public Σ's O(Md²) work that λ does not change
_PUBLIC: dict[tuple, dict[str, Any]] = {}
#: per-stream arrays shared by the mechanisms of one data draw and trial rng (block Grams, tree noise), bounded in bytes
_STREAMS: dict[tuple, Any] = {}
_STREAM_BYTES = 2 * 2**30


def _fingerprint(A: np.ndarray) -> tuple:
    """Cheap identity of an array for the per-process cache (buffer address, shape, strides, strided checksum)."""
    flat = A.reshape(-1)
    address = A.__array_interface__["data"][0]
    return (address, A.shape, A.strides, float(flat[:: max(1, flat.size // 997)].sum()))


def rng_key(rng: np.random.Generator) -> str:
    """The generator's exact state: two generators in the same state draw the same numbers."""
    return repr(rng.bit_generator.state)


def _remember(key: tuple, value: Any) -> Any:
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[key] = value
    return value


def _make_room(nbytes: int) -> list[Any]:
    """Drop the oldest stream entries until ``nbytes`` more fit in _STREAM_BYTES; return the dropped values."""
    dropped = []
    while _STREAMS and sum(size for _, size in _STREAMS.values()) + nbytes > _STREAM_BYTES:
        dropped.append(_STREAMS.pop(next(iter(_STREAMS)))[0])
    return dropped


def _remember_stream(key: tuple, value: Any, nbytes: int) -> Any:
    """Keep ``value`` while the stream store holds at most _STREAM_BYTES (oldest entries dropped first)."""
    _make_room(nbytes)
    if nbytes <= _STREAM_BYTES:
        _STREAMS[key] = (value, nbytes)
    return value


def _frozen(A: np.ndarray) -> bool:
    """Read-only and owning its memory (the runner's data arrays): its contents cannot change while we hold it."""
    return not A.flags.writeable and A.base is None


def cached_grams(X_original: np.ndarray, order: str | None, X: np.ndarray, block: int) -> list[np.ndarray]:
    """Block Grams (:func:`block_grams`) of the stream X = X_original in the order drawn from a generator in state
    ``order`` (None: unshuffled). Every mechanism given the same data and the same trial rng (common random numbers)
    streams the same order, whatever its Σ, ψ or η. Cached only for frozen arrays, matched by identity (the entry
    holds a weak reference; the array's finalizer empties the stores, so its address cannot be reused by other data
    while an entry names it: :func:`forget_other_data`)."""
    if not _frozen(X_original):
        return block_grams(X, block)
    key = ("grams", id(X_original), order, X.shape[0], block)
    if key in _STREAMS and _STREAMS[key][0][0]() is X_original:
        return _STREAMS[key][0][1]
    grams = block_grams(X, block)
    _remember_stream(key, (weakref.ref(X_original), grams), sum(g.nbytes for g in grams))
    return grams


def cached_tree_noise(rng: np.random.Generator, n: int, k: int, block: int) -> BlockedTreeNoise:
    """The trial's standard-normal tree draws (:func:`blocked_tree_noise`), keyed by the rng's exact state: a
    mechanism handed a generator in the same state as an earlier one reads the draws it would make (the rng itself
    is not advanced; nothing reads it after the run)."""
    key = ("noise", rng_key(rng), n, k, block)
    if key in _STREAMS:
        return _STREAMS[key][0]
    nbytes = ((n + 1) + (n + block - 1) // block) * k * 8
    # a dropped noise of the same shape lends its memory (no fresh pages to fault in when nothing is shared, e.g. many
    # trials per (mechanism, ε) task); nothing else holds it between fits
    spare = [old.buffer for old in _make_room(nbytes) if isinstance(old, BlockedTreeNoise)]
    buffer = next((b for b in spare if b.shape == (n + 1, k)), None)
    noise = blocked_tree_noise(rng, n, k, block, buffer=buffer)
    return _remember_stream(key, noise, noise.nbytes)


def _public_key(P: np.ndarray | PublicMoments) -> tuple:
    """Cache identity of the public rows building Σ (of their PᵀP and M when given as :class:`PublicMoments`)."""
    return ("moments", _fingerprint(P.gram), P.m) if isinstance(P, PublicMoments) else _fingerprint(P)


def _public_design(P: np.ndarray | PublicMoments) -> dict[str, Any]:
    """PᵀP (O(Md²) from rows) and, once asked for, its eigendecomposition: shared by every λ, i.e. every ε and N·η."""
    key = _public_key(P)
    if key not in _PUBLIC:
        _PUBLIC.clear()  # one public set at a time (a data draw's)
        design = _PUBLIC[key] = {"gram": public_gram(P)}
        return design
    return _PUBLIC[key]


def cached_public_cov(P: np.ndarray | PublicMoments, lam: float, factor: str = "eigh") -> NoiseCovariance:
    """Σ = (λI + PᵀP)/M is deterministic given the public rows and λ: build it once per process (trials reuse).

    Dense (d ≤ M) with ``factor="eigh"``: the eigen design (:meth:`NoiseCovariance.from_public_eigh`); with
    ``"cholesky"``: the Cholesky factor (:meth:`NoiseCovariance.from_public`). Same Σ, same law of the noise."""
    if factor not in SIGMA_FACTORS:
        raise ValueError(f"sigma_factor must be one of {SIGMA_FACTORS}, got {factor!r}")
    M, d = P.shape
    key = ("cov", _public_key(P), float(lam), factor if d <= M else "lowrank")
    cached = _CACHE.get(key)
    if cached is not None:
        return cached
    if d > M:
        cov = NoiseCovariance.from_public(P, lam)
    elif factor == "eigh":
        design = _public_design(P)
        if "eigh" not in design:
            design["eigh"] = np.linalg.eigh(design["gram"])
        cov = NoiseCovariance.from_public_eigh(design["eigh"], M, lam)
    else:
        cov = NoiseCovariance.from_public(P, lam, gram=_public_design(P)["gram"])
    cov.cache_key = key
    return _remember(key, cov)


def public_inv_sq_norms(cov: NoiseCovariance, P_C: np.ndarray) -> np.ndarray:
    """‖p‖²_{Σ⁻¹} of the public rows that set C. Eigen design: Σ_j (Vᵀp)_j²/(s·v_j) from P_C V (O(M_C d²)), computed
    once per public set and kept with its eigendecomposition — every λ (every ε) shares V — instead of once per fit
    (the same product: bit-identical)."""
    design = _PUBLIC.get(cov.cache_key[1]) if cov.kind == "eigen" and cov.cache_key is not None else None
    if design is None or design.get("eigh", (None, None))[1] is not cov.basis:
        return cov.inv_sq_norms(P_C)
    key = ("rotated_c", _fingerprint(P_C))
    if key not in design:
        design[key] = np.asarray(P_C, dtype=float) @ cov.basis
    return cov.rotated_inv_sq_norms(design[key])


def _rotated_rows(cov: NoiseCovariance, X: np.ndarray) -> np.ndarray:
    """XV (O(Nd²)) of the eigen design: the same for every λ of the same public rows, so computed once per data draw
    (cached for the runner's frozen arrays, matched by identity)."""
    if not _frozen(X):
        return X @ cov.basis
    key = ("xv", id(X), id(cov.basis))
    if key in _STREAMS and _STREAMS[key][0][0]() is X and _STREAMS[key][0][1] is cov.basis:
        return _STREAMS[key][0][2]
    shape = (X.shape[0], cov.basis.shape[1])
    spare = [old[2] for old in _make_room(8 * shape[0] * shape[1]) if isinstance(old, tuple) and len(old) == 3]
    spare += _SPARE_XV
    _SPARE_XV.clear()
    buffer = next((b for b in spare if b.shape == shape), None)
    XV = np.matmul(X, cov.basis, out=buffer)  # a dropped XV lends its memory: no fresh pages (same product)
    _remember_stream(key, (weakref.ref(X), cov.basis, XV), XV.nbytes)
    return XV


def drop_stores() -> None:
    """Empty every per-process store (called when the data array they serve is freed, e.g. by the runner's release
    of a finished draw): between tasks a worker then holds none of it, so loky's between-call memory check (a worker
    grown by > 300 MB is restarted, with a fresh interpreter) does not fire."""
    _STREAMS.clear()
    _CACHE.clear()
    _PUBLIC.clear()
    _SPARE_XV.clear()
    _CURRENT.clear()
    _GATHER.__dict__.clear()


def forget_other_data(X: np.ndarray) -> None:
    """A fit on another frozen data array (the runner's next data draw): drop the stores' entries tied to earlier
    arrays — block Grams, XV, Σ⁻¹-norms, X F — which no later fit can read, and the arrays they hold with them (the
    per-process peak then holds one draw's data). The last XV's memory is kept for the next XV (same shape, no fresh
    pages); tree draws, keyed by the rng state, stay and are recycled as before."""
    if not _frozen(X):
        return
    current = _CURRENT.get("X")
    if current is not None and current() is X:
        return
    _CURRENT["X"] = weakref.ref(X)
    weakref.finalize(X, drop_stores)
    for key in [key for key in _STREAMS if key[0] in ("grams", "xv")]:
        value = _STREAMS.pop(key)[0]
        if key[0] == "xv":
            _SPARE_XV[:] = [value[2]]
    for key in [key for key in _CACHE if key[0] in ("q", "xf")]:
        del _CACHE[key]


def _cached_xf(cov: NoiseCovariance, X: np.ndarray) -> np.ndarray:
    """X F (the rows in the noise coordinates, O(Nd²) for a dense Σ); cached per (Σ, X)."""
    if cov.kind == "eigen":
        return cov.rotated_factor(_rotated_rows(cov, X))
    if cov.cache_key is None:
        return cov.transpose_apply(X)
    key = ("xf", cov.cache_key, _fingerprint(X))
    return _CACHE[key] if key in _CACHE else _remember(key, cov.transpose_apply(X))


def in_stream_order(values: np.ndarray, perm: np.ndarray | None) -> np.ndarray:
    """values[perm]; ``perm`` None (an unshuffled stream) is the drawn order: ``values`` itself (read only)."""
    return values if perm is None else values[perm]


def stream_xf(cov: NoiseCovariance, X: np.ndarray, perm: np.ndarray | None) -> GatheredRows:
    """X F in stream order (rows perm; None: the drawn order), read block by block: the eigen design gathers XV's
    rows and scales them by √(s·v) (:meth:`NoiseCovariance.rotated_factor`), other dense designs gather the cached
    X F."""
    if cov.kind != "eigen":
        return GatheredRows(_cached_xf(cov, X), perm)
    return GatheredRows(_rotated_rows(cov, X), perm, np.sqrt(cov.scale * cov.diag))


def cached_norms(cov: NoiseCovariance, X: np.ndarray) -> np.ndarray:
    """‖x_i‖_{Σ⁻¹} of the (unpermuted) training rows; cached for dense/low-rank Σ (O(Nd²) each)."""
    if cov.kind == "eigen":
        if not _frozen(X):
            return np.sqrt(cov.rotated_inv_sq_norms(_rotated_rows(cov, X)))
        key = ("q", cov.cache_key, id(X))  # trials of one (Σ, data) reuse it; identity match by weak reference
        cached = _CACHE.get(key)
        if cached is None or cached[0]() is not X:
            cached = _remember(key, (weakref.ref(X), np.sqrt(cov.rotated_inv_sq_norms(_rotated_rows(cov, X)))))
        return cached[1]
    if cov.kind in ("identity", "diag") or cov.cache_key is None:
        return np.sqrt(cov.inv_sq_norms(X))
    key = ("q", cov.cache_key, _fingerprint(X))
    return _CACHE[key] if key in _CACHE else _remember(key, np.sqrt(cov.inv_sq_norms(X)))


def in_sample_tr(cov: NoiseCovariance, P: np.ndarray | PublicMoments) -> float:
    """mean ‖p‖²_{Σ⁻¹} over the rows building Σ; for :class:`PublicMoments`, tr(Σ⁻¹PᵀP)/M (= the same mean)."""
    if isinstance(P, PublicMoments):
        return float(np.trace(np.linalg.solve(cov.matrix(), P.gram))) / P.m
    return float(np.mean(cov.inv_sq_norms(P)))


def stream_rows(X: np.ndarray, perm: np.ndarray) -> np.ndarray:
    """X[perm] written into this thread's reusable buffer of X's shape (the values of X[perm]; no fresh (N, d) array
    per fit, whose first-touch page faults cost as much as the gather on this machine). Valid until the thread's next
    call: a fit reads its stream only while it runs (nothing keeps it)."""
    buffer = getattr(_GATHER, "buffer", None)
    if buffer is None or buffer.shape != X.shape or buffer.dtype != X.dtype:
        _GATHER.buffer = buffer = None  # drop the old one before allocating
        buffer = _GATHER.buffer = np.empty_like(X, order="C")
    return np.take(X, perm, axis=0, out=buffer, mode="clip")  # perm is in range; "raise" would buffer a full copy
