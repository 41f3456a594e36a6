"""Speed benchmark of the regression mechanisms (issue 4; 004 §3.10, §8).

For each dataset the one-off O(nd²) precomputation (Gram, eigen-decompositions, OLS) is timed once; then each
mechanism's cost per trial is timed on its default (fast) path and, for mechanisms that declare a *literal* variant
in their contract (e.g. the sketching mechanisms' S ~ N(0, I_{k×n}) materialised, O(knd), against the exact
Gram/Wishart shortcut, O(kd² + d³)), on that literal path, together with the peak memory a trial allocates
(tracemalloc sees NumPy's buffers). The default mechanisms are the private ones of the suite's configs. Whole-suite
wall times come from real ``dpbench run`` invocations. Timings are measurements, never test assertions.
"""

from __future__ import annotations

import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml
from threadpoolctl import threadpool_limits

from dpbench import registry
from dpbench.linalg import GramStats, gram_stats

DEFAULT_DATASETS = ("servo", "pol", "protein", "keggundirected")
#: the IHM paper's Figures 1–5, each config run as a user would (Figs 4 + 5 alone cover every dataset × method pair)
SUITE_CONFIGS = ("configs/ihm_vs_adassp.yaml", *(f"configs/ihm/ihm_figure{i}.yaml" for i in range(2, 6)))
#: the field's methods (spec 005: Wang 2018's family, Boosted AdaSSP, adaptive-clip DP-GD, the interval methods), timed
#: by ``dpbench bench`` beside the suite's
FIELD_CONFIGS = (
    "configs/wang2018/wang2018_uci.yaml",
    "configs/robust/robust_corruption.yaml",
    "configs/intervals/coverage_synthetic.yaml",
)


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


def suite_mechanisms(configs: Iterable[str] = SUITE_CONFIGS + FIELD_CONFIGS) -> tuple[str, ...]:
    """The private mechanisms the suite's and the field's configs run, in config order (``dpbench bench``'s
    default)."""
    names: dict[str, None] = {}
    for path in configs:
        if not Path(path).is_file():
            raise FileNotFoundError(
                f"{path}: the default mechanisms come from the suite configs; run from the "
                "repository root or name them with --mechanisms"
            )
        for entry in (yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}).get("mechanisms", []):
            name = entry if isinstance(entry, str) else entry.get("mechanism")
            if registry.get_mechanism(name).private:
                names[name] = None
    return tuple(names)


def literal_variant(name: str) -> dict[str, object] | None:
    """Hyperparameters of the mechanism's declared literal path (the reference of a shortcut), or None."""
    literal = [v for v in registry.get_mechanism(name).variants.values() if v.literal]
    return dict(literal[0].hyper) if literal else None


def mechanism_call(name: str, stats: GramStats, epsilon: float, delta: float, hyper: dict[str, object] | None = None):
    info = registry.get_mechanism(name)
    inputs = {"stats": stats} if "stats" in info.needs else {}
    return lambda rng: info.fit(stats.X, stats.y, epsilon, delta, rng, **inputs, **(hyper or {}))


def bench_mechanisms(
    datasets: Iterable[str] = DEFAULT_DATASETS,
    mechanisms: Iterable[str] | None = None,
    trials: int = 20,
    explicit_trials: int = 3,
    epsilon: float = 1.0,
    seed: int = 0,
    log: Callable[[str], None] = print,
) -> pd.DataFrame:
    """One row per (dataset, mechanism): per-trial seconds and peak MB on the fast and literal ("explicit") paths,
    and their ratio; ``mechanisms`` defaults to :func:`suite_mechanisms`."""
    mechanisms = suite_mechanisms() if mechanisms is None else tuple(mechanisms)
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
    stats = dataset.sums if dataset.X_train is None else gram_stats(dataset.X_train, dataset.y_train)
    _ = stats.eigh_x, stats.eigh_xy, stats.theta_ols, stats.ols_loss
    precompute = time.perf_counter() - start
    delta = 1.0 / stats.n**2
    log(f"{name}: n={stats.n} d={stats.d} precompute {precompute * 1e3:.1f} ms")
    for mech in mechanisms:
        literal = literal_variant(mech)
        fast = time_trials(mechanism_call(mech, stats, epsilon, delta), trials)
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
        if literal is not None and explicit_trials > 0:
            slow = time_trials(mechanism_call(mech, stats, epsilon, delta, literal), explicit_trials)
            row.update(explicit_ms=slow.seconds * 1e3, explicit_peak_mb=slow.peak_mb, ratio=slow.seconds / fast.seconds)
        rows.append(row)
        log(bench_line(row))
    return rows


def bench_line(row: dict[str, Any]) -> str:
    """One printed line of the per-mechanism table; a mechanism without an explicit (literal) path says so."""
    line = f"  {row['mechanism']:<14} fast {row['fast_ms']:9.2f} ms ({row['fast_peak_mb']:7.1f} MB)  "
    if not np.isfinite(row["explicit_ms"]):
        return line + "explicit: no literal path (the fast path is the mechanism)"
    return line + (
        f"explicit {row['explicit_ms']:9.2f} ms ({row['explicit_peak_mb']:7.1f} MB)  ratio {row['ratio']:.1f}"
    )


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


# ----------------------------------------------------------------------------------------------------------------
# per-paper / per-figure wall time and per-trial cost per mechanism family (issue 16)

#: columns that identify one trial in a run's trials.csv (a bandit trial has one row per checkpoint T; with
#: ``data_draws`` every draw numbers its trials from 0)
TRIAL_KEYS = ("dataset_id", "label", "epsilon_index", "data_draw", "trial")


def paper_config_sets(root: Path = Path(".")) -> dict[str, list[Path]]:
    """Each paper's configs — the set ``make reproduce-all`` runs: the YAML files of ``configs/<paper>/``, plus a
    top-level ``configs/<paper>_*.yaml`` (e.g. the IHM paper's Figure 1)."""
    folders = sorted(p for p in (root / "configs").iterdir() if p.is_dir())
    sets = {folder.name: sorted(folder.glob("*.yaml")) for folder in folders}
    for path in sorted((root / "configs").glob("*.yaml")):
        owner = [name for name in sets if path.stem.startswith(f"{name}_")]
        if owner:
            sets[owner[0]].insert(0, path)
    return {name: paths for name, paths in sets.items() if paths}


def paper_configs(selection: Iterable[str], root: Path = Path(".")) -> list[tuple[str, Path]]:
    """(paper, config path) for each name in ``selection``: a paper (a folder of configs/), ``all``, or a path."""
    sets = paper_config_sets(root) if (root / "configs").is_dir() else {}
    out: list[tuple[str, Path]] = []
    for item in selection:
        if item == "all":
            out += [(paper, path) for paper, paths in sets.items() for path in paths]
        elif item in sets:
            out += [(item, path) for path in sets[item]]
        elif (root / item).is_file():
            owner = [paper for paper, paths in sets.items() if root / item in paths]
            out.append((owner[0] if owner else Path(item).parent.name or "-", root / item))
        else:
            raise ValueError(f"papers: {item!r} is neither a paper ({', '.join(sets)}, all) nor a config file")
    return out


def mechanism_family(name: str) -> str:
    """The family of a registered mechanism: ``dpbench.mechanisms.<family>.<module>`` → family; a plug-in → its
    top-level package; a name the mechanism registry does not know (a bandit algorithm) → ``bandits``."""
    try:
        module = registry.get_mechanism(name).fit.__module__
    except KeyError:
        return "bandits"
    parts = module.split(".")
    return parts[2] if parts[:2] == ["dpbench", "mechanisms"] and len(parts) > 3 else parts[0]


def per_trial_costs(table: pd.DataFrame) -> pd.DataFrame:
    """One row per trial of a run's table: mechanism, its family, n (if any) and the trial's seconds."""
    keys = [k for k in TRIAL_KEYS if k in table.columns]
    trials = table.drop_duplicates(["mechanism", *keys])
    out = pd.DataFrame({"mechanism": trials["mechanism"], "seconds": trials["seconds"]})
    out["n"] = trials["n"] if "n" in trials.columns else np.nan
    out["family"] = out["mechanism"].map(mechanism_family)
    return out.reset_index(drop=True)


def run_config_process(path: Path, n_jobs: int, output_dir: Path, trials: int | None = None) -> tuple[float, float]:
    """Run ``dpbench run path`` fresh in a child process (as ``make`` does): (wall seconds, CPU seconds). CPU = user +
    system time of the child and the workers it waited for (``RUSAGE_CHILDREN``, what ``/usr/bin/time`` reports)."""
    command = [sys.executable, "-m", "dpbench", "run", str(path), "--n-jobs", str(n_jobs), "--no-progress"]
    command += ["--fresh", "--output-dir", str(output_dir), *(["--trials", str(trials)] if trials else [])]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"dpbench run {path} failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def time_figures(
    configs: Iterable[tuple[str, Path]], n_jobs: int, trials: int | None = None, log: Callable[[str], None] = print
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Run every config fresh (temporary folder, one child process each: :func:`run_config_process`) and time it.

    Returns (figures, trials): one row per config (paper, figure, wall and CPU seconds, trials, summed trial seconds)
    and one row per trial (paper, figure, mechanism, family, n, seconds) from the runs' ``seconds`` column.
    """
    from dpbench.config import load_config

    figures, trial_rows = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for paper, path in configs:
            wall, cpu = run_config_process(Path(path), n_jobs, Path(tmp), trials)
            run_dir = Path(tmp) / load_config(path).name
            costs = per_trial_costs(pd.read_csv(run_dir / "trials.csv")).assign(paper=paper, figure=path.stem)
            trial_rows.append(costs)
            figures.append(
                {
                    "paper": paper,
                    "figure": path.stem,
                    "n_jobs": n_jobs,
                    "wall_s": wall,
                    "cpu_s": cpu,
                    "trials": len(costs),
                    "trial_s": float(costs["seconds"].sum()),
                }
            )
            log(f"  {paper:<14} {path.stem:<28} {wall:8.1f} s wall {cpu:8.1f} CPU-s  {len(costs):6d} trials")
    return pd.DataFrame(figures), pd.concat(trial_rows, ignore_index=True) if trial_rows else pd.DataFrame()


def paper_totals(figures: pd.DataFrame) -> pd.DataFrame:
    """Wall and CPU seconds and figure count per paper, and the total."""
    per_paper = figures.groupby("paper", sort=False).agg(
        figures=("figure", "size"), wall_s=("wall_s", "sum"), cpu_s=("cpu_s", "sum")
    )
    per_paper.loc["total"] = per_paper.sum()
    return per_paper.reset_index()


def family_costs(trials: pd.DataFrame) -> pd.DataFrame:
    """Per-trial seconds per mechanism family and mechanism: count, median, 90th percentile, max, and the n of
    the slowest trial."""
    grouped = trials.groupby(["family", "mechanism"])["seconds"]
    out = grouped.agg(trials="size", median_s="median", p90_s=lambda s: s.quantile(0.9), max_s="max")
    out["n_at_max"] = trials.loc[grouped.idxmax().to_numpy(), "n"].to_numpy()
    return out.reset_index()
