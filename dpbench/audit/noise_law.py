"""The full noise law of the real runs (issue 36 item 3): every entry, every user, jointly, on each dataset.

A release declares iid noise of a known law on each of its entries (Gaussian or Laplace, std ``scale``; for local
reports one such noise per user). Checking each release's pooled variance (``noise`` in the driver) sees a noise
that is too small on average; it does not see one coordinate left without noise among many, half the users
under-noised when the half is chosen by the data, or noise with the right marginals whose *correlation* depends on
the data (across the entries of a release, across releases, or across users — another user's record coupled into a
user's report). Here the standardised noise z of every noised entry of every release of a run (each user's own
entries for reports released one by one) is stacked into one vector per run, and per group of runs on the same
dataset — each (pair, side), and all runs pooled — two things are tested against the declared law:

* ``entry`` / ``users``: each entry's scale — exactly: Σ z² ~ χ²_N for Gaussian noise, Σ |noise|/b ~ Gamma(N, 1)
  for Laplace noise — and no entry ever exactly at its centre (a continuous noise is never 0);
* ``correlation``: every pair of entries uncorrelated (correlation of the noises winsorised at ±4 std, so the
  test's normal approximation holds for heavy-tailed laws too; standard error 1/√N).

Thresholds are Bonferroni over entries, pairs of entries and groups at a family-wise false alarm ≤ 10⁻⁶, plus 2%
(scale) or 0.02 (correlation) of slack. Wide runs (many users) test a fixed random
subset of :data:`MAX_ENTRIES` entries, always including the canary's row. Sketch (Wishart) and ℓ2-ball releases
have no per-entry law and are left to the statistic.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import chi2, gamma, norm

from dpbench.audit.whitebox import (
    Pair,
    PairedRun,
    ReleasePair,
    _aggregate,
    _aggregate_scale,
    objective_noise,
    upper_indices,
    whitened_posterior,
)

#: family-wise false-alarm probability of each check over all its tests
ALPHA = 1e-6
#: entries per run tested jointly (a fixed random subset beyond this)
MAX_ENTRIES = 240
#: runs a group needs before it is tested
MIN_RUNS = 30


@dataclass(frozen=True)
class Finding:
    """One failed check: which (``integrity.CHECKS``), how often (``count`` of ``runs``), and what broke, in words."""

    check: str
    message: str
    count: int = 1
    runs: int = 1


@dataclass(frozen=True)
class Entry:
    """Where an entry of the stacked noise vector comes from: release, user (−1: none), entry within the report."""

    release: str
    user: int
    users: int
    index: int
    size: int

    def text(self) -> str:
        where = f"user {self.user + 1} of {self.users}, entry {self.index + 1}" if self.user >= 0 else (
            f"entry {self.index + 1} of {self.size}")  # fmt: skip
        return f"release {self.release!r} {where}"


def _upper(a: np.ndarray) -> np.ndarray:
    i, j = upper_indices(a.shape[-1])
    return a[..., i, j]


def unit_noise(rp: ReleasePair) -> tuple[np.ndarray, np.ndarray, tuple[str, int, int]] | None:
    """(z, laplace, block): the release's noise on its own dataset in units of its declared std (so E z² = 1),
    whether each entry's law is Laplace (else Gaussian), and its block (name, users, entries per user; users = 0
    for a release not per user); None for kinds without a per-entry law."""
    r = rp.release
    if r.kind not in ("gaussian", "laplace", "posterior", "objective"):
        return None
    own = np.asarray(rp.centre_d if rp.side == "D" else rp.centre_dp, dtype=float)
    if r.kind in ("posterior", "objective"):  # whitened by its own declared law: N(0, I) entries
        z = whitened_posterior(r, own) if r.kind == "posterior" else objective_noise(r, own)
        return z, np.zeros(z.size, dtype=bool), (r.name, 0, z.size)
    value = np.asarray(r.value, dtype=float)
    how = r.params.get("aggregate", "mean") if r.users else "none"
    if r.users and how == "none":
        rows = value - own
        rows = _upper(rows) if r.symmetric and rows.ndim > 2 else rows.reshape(rows.shape[0], -1)
        std = r.scale * (math.sqrt(2.0) if r.kind == "laplace" else 1.0)
        users, size = rows.shape
        return rows.ravel() / std, np.full(rows.size, r.kind == "laplace"), (r.name, users, size)
    resid = value - _aggregate(own, r)
    resid = _upper(resid) if r.symmetric else resid.ravel()
    if r.kind == "laplace" and not r.users:
        std, laplace = r.scale * math.sqrt(2.0), True
    elif r.kind == "laplace":  # the mean (sum) of N users' Laplace reports: variance 2b²/N (2b²N), near Gaussian
        users = np.asarray(r.centre).shape[0]
        std, laplace = r.scale * math.sqrt(2 * users if how == "sum" else 2 / users), False
    else:
        std, laplace = _aggregate_scale(r), False
    resid = np.ravel(resid)
    return resid / std, np.full(resid.size, laplace), (r.name, 0, resid.size)


def layout_of(blocks: list[tuple[str, int, int]]) -> list[Entry]:
    """The entries of a stacked noise vector, from its blocks (release, users (0: not per user), entries each)."""
    out = []
    for name, users, size in blocks:
        if users:
            out += [Entry(name, u, users, j, size) for u in range(users) for j in range(size)]
        else:
            out += [Entry(name, -1, 0, j, size) for j in range(size)]
    return out


def stacked(run: PairedRun) -> tuple[np.ndarray, np.ndarray, list[tuple[str, int, int]]]:
    """All releases' unit noises of one run, concatenated, with their blocks (:func:`layout_of`)."""
    parts = [p for p in (unit_noise(rp) for rp in run.releases) if p is not None]
    if not parts:
        return np.zeros(0), np.zeros(0), []
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]), [p[2] for p in parts]


def _subset(entries: list[Entry], canary_user: int | None, seed: int = 0) -> np.ndarray:
    """Indices of the tested entries: all, or :data:`MAX_ENTRIES` of them (non-user entries and the canary's
    row first, then a fixed random draw)."""
    m = len(entries)
    if m <= MAX_ENTRIES:
        return np.arange(m)
    first = [i for i, e in enumerate(entries) if e.user < 0 or e.user == canary_user or e.user == 0]
    rest = np.setdiff1d(np.arange(m), first)
    extra = np.random.default_rng(seed).choice(rest, size=max(0, MAX_ENTRIES - len(first)), replace=False)
    return np.sort(np.concatenate([np.asarray(first[:MAX_ENTRIES], dtype=int), extra]).astype(int))


def scale_test(Z: np.ndarray, laplace: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per column of Z (N runs × entries, unit declared std): the scale ratio — variance (Gaussian) or mean |noise|
    over b (Laplace) against its declared value 1 — and its exact two-sided p-value (χ²_N resp. Gamma(N, 1))."""
    N = Z.shape[0]
    sq = np.sum(Z * Z, axis=0)
    ab = np.sum(np.abs(Z), axis=0) * math.sqrt(2.0)  # Σ |noise|/b for Laplace(b) noise z·b·√2
    ratio = np.where(laplace, ab / N, sq / N)
    lo = np.where(laplace, gamma.cdf(ab, N), chi2.cdf(sq, N))
    hi = np.where(laplace, gamma.sf(ab, N), chi2.sf(sq, N))
    return ratio, np.minimum(1.0, 2.0 * np.minimum(lo, hi))


def _where(pair: Pair | None, index: int | None, side: str | None) -> str:
    if pair is None:
        return "over all runs"
    return f"on {'D' if side == 'D' else 'D′'} of pair {index + 1} [{pair.description}]"


def check_noise_law(runs: Sequence[tuple[int, PairedRun]], pairs: list[Pair]) -> list[Finding]:
    """``entry`` / ``users`` and ``correlation`` findings over ``runs`` = (pair index, paired run) (module
    docstring); at most one finding of each check (the most significant)."""
    groups: dict[tuple[int, str] | None, list[np.ndarray]] = {}
    blocks: list[tuple[str, int, int]] | None = None
    laplace = np.zeros(0)
    zeros: dict[int, int] = {}
    for index, run in runs:
        z, k, parts = stacked(run)
        if not z.size:
            continue
        if blocks is None:
            blocks, laplace = parts, k
            layout = layout_of(blocks)
            keep = _subset(layout, pairs[0].X.shape[0] - 1 if pairs else None)
        if parts != blocks:
            continue  # a run of another shape (a data-dependent layout is the sequence check's business)
        for j in np.nonzero(z == 0.0)[0]:
            zeros[int(j)] = zeros.get(int(j), 0) + 1
        groups.setdefault((index, run.side), []).append(z[keep])
        groups.setdefault(None, []).append(z[keep])
    if blocks is None:
        return []
    out: list[Finding] = []
    if zeros:
        j, count = max(zeros.items(), key=lambda t: t[1])
        e = layout[j]
        text = f"{e.text()}: noise exactly 0 (value at its centre) in {count} of {len(runs)} runs: an entry left "
        out.append(Finding("users" if e.user >= 0 else "entry", text + "without its noise", count, len(runs)))
    tested = {key: np.asarray(rows) for key, rows in groups.items() if len(rows) >= MIN_RUNS}
    if not tested:
        return out
    m, g = keep.size, len(tested)
    k_cor = float(norm.isf(ALPHA / max(1, m * (m - 1) * g)))
    worst_var: tuple[float, str, Entry, int] | None = None
    worst_cor: tuple[float, str, Entry, Entry, float, int] | None = None
    for key, Z in tested.items():
        N = Z.shape[0]
        ratio, p = scale_test(Z, laplace[keep])
        score = np.where(np.abs(ratio - 1.0) > 0.02, -np.log(np.maximum(p, 1e-300)), 0.0)
        j = int(np.argmax(score))
        where = _where(None if key is None else pairs[key[0]], None if key is None else key[0],
                       None if key is None else key[1])  # fmt: skip
        if p[j] < ALPHA / (m * g) and abs(ratio[j] - 1.0) > 0.02 and (worst_var is None or score[j] > worst_var[0]):
            what = "mean |noise|" if laplace[keep][j] else "noise variance"
            worst_var = (float(score[j]), f"{what} {ratio[j]:.3g}× the declared {where} ({N} runs, p = {p[j]:.1e})",
                         layout[keep[j]], N)  # fmt: skip
        v = np.mean(Z * Z, axis=0)
        live = v > 1e-12
        if live.sum() < 2:
            continue
        C = np.clip(Z[:, live] / np.sqrt(v[live]), -4.0, 4.0)
        C /= np.sqrt(np.mean(C * C, axis=0))
        R = C.T @ C / N
        np.fill_diagonal(R, 0.0)
        a, b = np.unravel_index(int(np.argmax(np.abs(R))), R.shape)
        r = float(R[a, b])
        score_c = (abs(r) - 0.02) * math.sqrt(N)
        if score_c > k_cor and (worst_cor is None or score_c > worst_cor[0]):
            idx = keep[live]
            worst_cor = (score_c, where, layout[idx[a]], layout[idx[b]], r, N)
    if worst_var is not None:
        _, text, e, N = worst_var
        out.append(Finding("users" if e.user >= 0 else "entry", f"{e.text()}: {text}", N, N))
    if worst_cor is not None:
        _, where, e1, e2, r, N = worst_cor
        out.append(Finding("correlation", f"noise of {e1.text()} and {e2.text()} correlated (r = {r:.2f} {where}, "
                                          f"{N} runs): the declared law is independent noise", N, N))  # fmt: skip
    return out
