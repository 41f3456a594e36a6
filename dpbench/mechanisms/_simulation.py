"""How a local-DP mechanism simulates its n users' Gaussian noise: ``simulation="aggregate"`` (default) or
``simulation="per_user"`` (the literal path). Issue 16; spec 000 §3.0, spec 003 §2.4.

A server that uses only sums of the users' releases q(x_i, y_i) + E_i sees Σ_i q(x_i, y_i) + Σ_i E_i. With E_i iid
with independent N(0, s²) entries, Σ_{i≤n} E_i has independent N(0, n s²) entries (a sum of independent Gaussians is
Gaussian with the summed variance), so it is drawn as √n·E once: **exact in law**, O(size) instead of O(n·size).
The same holds for symmetric noise Sym_d(s²) (upper triangle, diagonal included, iid N(0, s²)): a sum of symmetric
matrices is symmetric and its upper triangle is the sum of the upper triangles, so Σ_{i≤n} Sym_d(s²) =_d Sym_d(n s²).

The per-user path draws every user's noise (vectorised over chunks of users, same law as a row-by-row loop); the
aggregate path keeps each mechanism's own single draw (so its rng stream, and the golden runs, are unchanged).
Tests: tests/mechanisms/test_shortcuts.py (two-sample KS on each mechanism's estimate, aggregate vs per_user).
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from dpbench.contract import Choice, Variant

SIMULATIONS = ("aggregate", "per_user")
#: the ``simulation`` hyperparameter as every mechanism with a per-user Gaussian shortcut declares it
SIMULATION = Choice(
    *SIMULATIONS,
    default="aggregate",
    doc="aggregate: the summed per-user noise drawn once (exact in law); per_user: every user's noise "
    "drawn (the literal path)",
)
#: the literal path of the shortcut, as a declared variant (``dpbench bench`` times it, tests compare in law)
PER_USER_VARIANT = {
    "per_user": Variant(
        {"simulation": "per_user"}, literal=True, doc="every user's noise drawn (same law as the aggregate draw)"
    )
}
#: normals drawn per chunk on the per-user path (bounds the memory of a chunk, ~8 MB)
CHUNK_FLOATS = 1 << 20


def is_per_user(simulation: str, legacy_flag: bool = False) -> bool:
    """True for the literal per-user path. ``legacy_flag`` is an older boolean spelling of the same choice
    (``per_user_noise`` / ``simulate_users``), kept as an alias: True means ``simulation="per_user"``."""
    if simulation not in SIMULATIONS:
        raise ValueError(f"simulation must be one of {SIMULATIONS}, got {simulation!r}")
    return simulation == "per_user" or bool(legacy_flag)


def user_chunks(n: int, floats_per_user: int) -> Iterator[slice]:
    """Consecutive slices of the n users, each drawing at most ~CHUNK_FLOATS normals."""
    size = max(1, CHUNK_FLOATS // max(1, floats_per_user))
    for start in range(0, n, size):
        yield slice(start, min(n, start + size))


def per_user_gaussian_sum(n: int, shape: tuple[int, ...], std: float, rng: np.random.Generator) -> np.ndarray:
    """Σ_{i≤n} E_i with E_i iid of ``shape``, entries iid N(0, std²): every user's draw made explicitly (no draw
    when std = 0)."""
    size = int(np.prod(shape, dtype=int))
    if std == 0:
        return np.zeros(shape)
    total = np.zeros(size)
    for users in user_chunks(n, size):
        total += rng.standard_normal((users.stop - users.start, size)).sum(axis=0)
    return std * total.reshape(shape)


def sym_from_upper(upper: np.ndarray, d: int) -> np.ndarray:
    """The symmetric d×d matrices (leading axes kept) whose upper triangles (row-major, diagonal included) are
    the last axis of ``upper``."""
    rows, cols = np.triu_indices(d)
    out = np.zeros((*upper.shape[:-1], d, d))
    out[..., rows, cols] = upper
    out[..., cols, rows] = upper
    return out


def per_user_sym_sum(n: int, d: int, std: float, rng: np.random.Generator) -> np.ndarray:
    """Σ_{i≤n} Sym_d(std²) with every user's d(d+1)/2 upper-triangle normals drawn explicitly."""
    return sym_from_upper(per_user_gaussian_sum(n, (d * (d + 1) // 2,), std, rng), d)


def sym_gaussian(d: int, std: float, rng: np.random.Generator) -> np.ndarray:
    """Symmetric d×d matrix Z with Z_ij = Z_ji ~ N(0, std²) iid for i ≤ j (diagonal included): Sym_d(std²)."""
    upper = np.triu(rng.standard_normal((d, d)))
    return std * (upper + np.triu(upper, 1).T)


def mean_noise(
    n: int, shape: tuple[int, ...], std: float, rng: np.random.Generator, *, per_user: bool, symmetric: bool = False
) -> np.ndarray:
    """The noise of a mean over n users who each add iid N(0, std²) entries (``symmetric``: Sym_d(std²), shape
    (d, d)) to their report — the one copy of "mean plus per-user or aggregate noise".

    aggregate: Z·std/√n in one draw (Z ~ N(0, 1) entries, or Sym_d(1)), exact in law (module docstring);
    per_user: every user's draw, summed, / n (no draw when std = 0)."""
    if per_user:
        total = per_user_sym_sum(n, shape[0], std, rng) if symmetric else per_user_gaussian_sum(n, shape, std, rng)
        return total / n
    scale = std / math.sqrt(n)
    return sym_gaussian(shape[0], scale, rng) if symmetric else scale * rng.standard_normal(shape)
