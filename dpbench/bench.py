"""Speed benchmark of the regression mechanisms (issue 4; 004 §3.10, §8).

For each dataset the one-off O(nd²) precomputation (Gram, eigen-decompositions, OLS) is timed once; then each
mechanism's cost per trial is timed on the fast path (exact Gram/Wishart sketch sampling, O(kd² + d³) per sketch)
and, for sketching mechanisms, on the explicit path (S ~ N(0, I_{k×n}) materialised, O(knd)), together with the
peak memory a trial allocates (tracemalloc sees NumPy's buffers). Whole-suite wall times come from real
``dpbench run`` invocations. Timings are measurements, never test assertions.
"""

from __future__ import annotations

import inspect
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from dpbench import registry
from dpbench.linalg import GramStats, gram_stats

DEFAULT_DATASETS = ("servo", "pol", "protein", "keggundirected")
DEFAULT_MECHANISMS = ("linmix", "adassp", "ihm", "dpgd")
#: the IHM paper's Figures 1–5, each config run as a user would (Figs 4 + 5 alone cover every dataset × method pair)
SUITE_CONFIGS = ("configs/ihm_vs_adassp.yaml", *(f"configs/ihm/ihm_figure{i}.yaml" for i in range(2, 6)))


@dataclass(frozen=True)
class Timing:
    seconds: float  # median wall time per trial
    peak_mb: float  # peak memory allocated during one trial


def time_trials(call: Callable[[np.random.Generator], object], trials: int, seed: int = 0) -> Timing:
    """Median seconds per call over ``trials`` calls, and the peak allocation of one extra traced call."""
    times = []
    for trial in range(trials):
        rng = np.random.default_rng([seed, trial])
        start = time.perf_counter()
        call(rng)
        times.append(time.perf_counter() - start)
    tracemalloc.start()
    call(np.random.default_rng([seed, trials]))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return Timing(float(np.median(times)), peak / 2**20)


def mechanism_call(name: str, stats: GramStats, epsilon: float, delta: float, sketch: str | None):
    info = registry.get_mechanism(name)
    hyper = {"sketch": sketch} if sketch else {}
    inputs = {"stats": stats} if "stats" in info.needs else {}
    return lambda rng: info.fit(stats.X, stats.y, epsilon, delta, rng, **inputs, **hyper)


def has_sketch_option(name: str) -> bool:
    return "sketch" in inspect.signature(registry.get_mechanism(name).fit).parameters


def bench_mechanisms(
    datasets: Iterable[str] = DEFAULT_DATASETS,
    mechanisms: Iterable[str] = DEFAULT_MECHANISMS,
    trials: int = 20,
    explicit_trials: int = 3,
    epsilon: float = 1.0,
    seed: int = 0,
    log: Callable[[str], None] = print,
) -> pd.DataFrame:
    """One row per (dataset, mechanism): per-trial seconds and peak MB on the fast and explicit paths, and ratio."""
    rows = []
    with threadpool_limits(limits=1):  # per-trial cost as the runner sees it (one BLAS thread per worker)
        for name in datasets:
            rows.extend(bench_dataset(name, mechanisms, trials, explicit_trials, epsilon, seed, log))
    return pd.DataFrame(rows)


def bench_dataset(
    name: str,
    mechanisms: Iterable[str],
    trials: int,
    explicit_trials: int,
    epsilon: float,
    seed: int,
    log: Callable[[str], None],
) -> list[dict[str, float | str]]:
    rows = []
    dataset = registry.get_dataset(name).load(np.random.default_rng(seed))
    start = time.perf_counter()
    stats = gram_stats(dataset.X_train, dataset.y_train)
    _ = stats.eigh_x, stats.eigh_xy, stats.theta_ols, stats.ols_loss
    precompute = time.perf_counter() - start
    delta = 1.0 / stats.n**2
    log(f"{name}: n={stats.n} d={stats.d} precompute {precompute * 1e3:.1f} ms")
    for mech in mechanisms:
        sketching = has_sketch_option(mech)
        fast = time_trials(mechanism_call(mech, stats, epsilon, delta, "gram" if sketching else None), trials)
        row = {
            "dataset": name,
            "n": stats.n,
            "d": stats.d,
            "precompute_ms": precompute * 1e3,
            "mechanism": mech,
            "fast_ms": fast.seconds * 1e3,
            "fast_peak_mb": fast.peak_mb,
            "explicit_ms": np.nan,
            "explicit_peak_mb": np.nan,
            "ratio": np.nan,
        }
        if sketching and explicit_trials > 0:
            slow = time_trials(mechanism_call(mech, stats, epsilon, delta, "explicit"), explicit_trials)
            row.update(explicit_ms=slow.seconds * 1e3, explicit_peak_mb=slow.peak_mb, ratio=slow.seconds / fast.seconds)
        rows.append(row)
        log(
            f"  {mech:<8} fast {row['fast_ms']:9.2f} ms ({row['fast_peak_mb']:7.1f} MB)  "
            f"explicit {row['explicit_ms']:9.2f} ms ({row['explicit_peak_mb']:7.1f} MB)  ratio {row['ratio']:.1f}"
        )
    return rows


def suite_wall_time(configs: Iterable[str], n_jobs: int, trials: int | None = None) -> float:
    """Wall seconds of ``dpbench run`` over ``configs`` (fresh runs in a temporary folder)."""
    from dpbench.config import load_config
    from dpbench.engine import run

    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for path in configs:
            overrides = {"output_dir": str(Path(tmp)), **({"trials": trials} if trials else {})}
            run(load_config(path, **overrides), n_jobs=n_jobs, fresh=True, progress=False, log=lambda _m: None)
    return time.perf_counter() - start
