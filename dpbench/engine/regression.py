"""The ``regression`` experiment kind: (dataset, data draw, mechanism, ε, trial) grid → tidy per-trial CSV.

Run by the generic loop of :mod:`dpbench.engine.core` (verified resume, loky/Dask, atomic shards, checked assembly).

Design
------
* **Seeds.** Data draw r of a dataset entry comes from ``SeedSequence([seed, H(dataset), r])`` (r = 0 without
  ``data_draws``; a trailing 0 leaves a SeedSequence unchanged, so draw 0 is the historical single draw), shared by
  every mechanism and ε. Trial t of (dataset, mechanism, ε) on draw r draws all its noise from
  ``SeedSequence([seed, H(dataset), H(mechanism), H(ε), t] + ([r] if r else []))`` (H = a stable CRC32 of the
  entry's key, of ε's value; with ``common_random_numbers`` the mechanism part is 0). Nothing depends on n_jobs,
  block size, task order or a position in the config.
* **Identity.** Each trial is known to the store by value (:meth:`Task.trials`, :mod:`dpbench.engine.identity`): the
  dataset entry (loader, options, label, draw) and the content of every file its load read, the mechanism (name,
  resolved hyperparameters) and its module's source, the loader's source, the dpbench version, ε, the δ rule, the
  trial index, the seed, the metrics. The ε index and the curve label are positions and names in the current config:
  set at assembly, so adding an ε or renaming a curve reuses every finished trial.
* **Checked first.** A loader that reads the user's files (``csv``) is loaded once in the main process before any
  trial (:func:`check_entries`): a missing value, a non-numeric cell, n ≤ d, … stop the run with the loader's one-line
  message (file, row, column, fix) before anything is written.
* **Arithmetic.** Loading, the Gram statistics and every trial run with one BLAS thread (``threadpool_limits``;
  each lazy statistic of :class:`~dpbench.linalg.GramStats` sets it itself): a multi-threaded BLAS splits
  reductions such as ``yᵀy`` differently by thread count, which made the main process (n_jobs = 1) and the workers
  differ at 1e-13.
* **Lazy statistics.** XᵀX, its eigendecompositions and θ_OLS are computed when first read (by a mechanism, a
  metric or the description below), never for a data draw nobody asks them of: with ``data_draws``, the Gram-based
  characteristics of ``datasets.json`` (OLS floor, spectrum) describe draw 0; the other draws record n, d, δ and
  ‖Y‖²/n (an O(n d²) Gram plus two O(d³) eigendecompositions per draw dominated one-pass DP-FTRL at d = 1024).
* **Lazy data.** The plan never loads a dataset unless its trial/draw counts depend on its size and the loader
  declares no ``shape``; workers load each dataset draw once (in-process cache) and compute its Gram statistics
  once (O(nd²)). δ = rule(n) is resolved in the worker; the dataset's description for ``datasets.json`` travels
  back with every block (and in its shard header).
* **Tasks.** Trials are grouped in blocks of ``trial_block``; one task = (dataset, mechanism, ε, block), or with
  ``data_draws`` (dataset, draw, block) holding every (mechanism, ε) cell of the draw (one load, one shard).
"""

from __future__ import annotations

import functools
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dpbench import registry
from dpbench.analysis.metrics import TrialCoordinates, get_metric, metric_columns
from dpbench.config import ConfigError
from dpbench.config.fields import swept_id
from dpbench.data import Dataset, DataUnavailableError
from dpbench.data._base import file_digest, recording_reads
from dpbench.engine.cells import Cell, CellTask, Entry, TrialContext, cell_slot, info_columns
from dpbench.engine.core import Plan, TaskResult, check_plan_size
from dpbench.engine.identity import code_version
from dpbench.engine.schema import Config, DatasetEntry, parse_regression_config
from dpbench.engine.seeds import stable_hash, value_hash
from dpbench.linalg import GramStats, gram_stats, has_rows, one_blas_thread_limit
from dpbench.mechanisms import as_fit_result

#: row columns a task fixes (checked per block) and the columns identifying a row of trials.csv
KEY_COLUMNS = ("loader", "label", "epsilon_index", "trial")
COORDINATES = ("dataset_id", "label", "epsilon_index", "trial")


def dataset_seed(seed: int, entry: DatasetEntry, draw: int | None = None) -> np.random.SeedSequence:
    return np.random.SeedSequence([seed, stable_hash(entry.key)] + ([draw] if draw else []))


def trial_seed(
    seed: int, entry: DatasetEntry, mech: Entry, epsilon: float, trial: int, crn: bool, draw: int | None = None
) -> np.random.SeedSequence:
    mech_hash = 0 if crn else stable_hash(mech.key)
    words = [seed, stable_hash(entry.key), mech_hash, value_hash(epsilon), trial]
    return np.random.SeedSequence(words + ([draw] if draw else []))


def prepare_dataset(
    entry: DatasetEntry, seed: int, draw: int | None = None
) -> tuple[Dataset, GramStats, frozenset[str]]:
    """:func:`load_prepared`, cached per process as long as every file the load read is unchanged (same mtime and
    size): a worker that outlives a run (loky reuses its workers within a session) never serves an edited file's
    old data."""
    cached = _prepared(entry, seed, draw)
    if cached[3] == file_stats(cached[2]):
        return cached[:3]
    _prepared.cache_clear()
    return _prepared(entry, seed, draw)[:3]


def file_stats(paths: frozenset[str]) -> tuple[tuple[str, int, int] | None, ...]:
    """(path, mtime_ns, size) of each file (None if it is gone), in path order."""
    out = []
    for path in sorted(paths):
        try:
            stat = os.stat(path)
            out.append((path, stat.st_mtime_ns, stat.st_size))
        except OSError:
            out.append(None)
    return tuple(out)


@functools.lru_cache(maxsize=4)
def _prepared(entry: DatasetEntry, seed: int, draw: int | None) -> tuple[Any, ...]:
    dataset, stats, reads = load_prepared(entry, seed, draw)
    return dataset, stats, reads, file_stats(reads)


prepare_dataset.cache_clear = _prepared.cache_clear  # type: ignore[attr-defined]


def load_prepared(entry: DatasetEntry, seed: int, draw: int | None = None) -> tuple[Dataset, GramStats, frozenset[str]]:
    """Load (deterministically) data draw ``draw`` with its (lazy) Gram statistics and the files its load read.

    Loading and every statistic run with one BLAS thread, so they are bitwise the same in every process whatever its
    thread pool (see the module docstring); a statistic is computed the first time a mechanism, a metric or the
    dataset's description asks for it. A ``nested`` entry is the loader's ``prefix`` cut of the draw of its grid's
    largest value (:func:`nest_base_draw`, loaded once per worker and draw): read-only views, no copy.
    """
    with one_blas_thread_limit(), recording_reads() as reads:
        if entry.nest_from is None:
            dataset = load_draw(entry, seed, draw)
        else:
            prefix = registry.get_dataset(entry.loader).prefix
            base, base_reads = nest_base_draw(entry.nest_base(), seed, draw)
            reads |= base_reads
            dataset = prefix(base, **dict(entry.options))
        if dataset.X_train is None:  # rows-free data: its sufficient statistics are the loader's own
            return dataset, dataset.sums, frozenset(reads)
        return dataset, gram_stats(dataset.X_train, dataset.y_train, copy=False), frozenset(reads)


def load_draw(entry: DatasetEntry, seed: int, draw: int | None) -> Dataset:
    """The loader's data draw ``draw`` of ``entry``, from ``dataset_seed`` (call with one BLAS thread)."""
    info = registry.get_dataset(entry.loader)
    rng = np.random.default_rng(dataset_seed(seed, entry, draw))
    options = dict(entry.options)
    if draw is not None and "data_draw" in info.options():
        options["data_draw"] = draw
    return info.load(rng, **options)


@functools.lru_cache(maxsize=1)
def nest_base_draw(base: DatasetEntry, seed: int, draw: int | None) -> tuple[Dataset, frozenset[str]]:
    """The draw ``nested`` entries are cut from: exactly the largest-value entry's own draw (same seed), its
    arrays frozen so the cuts are immutable views (``linalg.immutable``) that the runner uses without copying;
    with the files its load read."""
    with recording_reads() as reads:
        dataset = load_draw(base, seed, draw)
    for array in (dataset.X_train, dataset.y_train):
        if isinstance(array, np.ndarray):
            array.setflags(write=False)
    return dataset, frozenset(reads)


def display_label(entry: DatasetEntry, dataset: Dataset | None) -> str:
    """Panel label: the config's label, else the loader's figure title, else the loader name."""
    if entry.label:
        return entry.label
    if dataset is not None and dataset.meta.get("title"):
        return str(dataset.meta["title"])
    return entry.loader


def entry_aliases(entry: DatasetEntry) -> tuple[str, ...]:
    """Other names ``-d`` accepts for an entry: its loader, and for a file loader its ``title`` option or the
    file's stem (the panel title when the entry has no label)."""
    options = dict(entry.options)
    names = [entry.loader]
    if isinstance(options.get("title"), str):
        names.append(options["title"])
    elif isinstance(options.get("path"), str):
        names.append(Path(options["path"]).stem)
    return tuple(names)


def dataset_id(entry: DatasetEntry, label: str) -> str:
    """Unique per concrete dataset: the label plus any swept options."""
    return swept_id(label, entry.options, entry.swept)


def trial_context(config: Config) -> TrialContext:
    """The config values that enter every regression trial's identity (besides its dataset, mechanism, ε, index)."""
    return TrialContext.of(
        seed=config.seed,
        delta=config.delta,
        metrics=tuple(config.metrics),
        common_random_numbers=config.common_random_numbers,
    )


@functools.lru_cache(maxsize=4096)
def cell_identity(
    entry: DatasetEntry, draw: int | None, mech: Entry, epsilon: float, context: TrialContext
) -> tuple[str, tuple[tuple[str, str], ...]]:
    """(digest of a (dataset draw, mechanism, ε) cell's identity by value, its code version); a trial's slot is
    the digest of this and its index (see the module docstring, "Identity")."""
    info = registry.get_mechanism(mech.name)
    loader = registry.get_dataset(entry.loader)
    dataset = {
        "loader": entry.loader,
        "options": dict(entry.options),
        "label": entry.label,
        "nest_from": None if entry.nest_from is None else dict(entry.nest_from),
    }
    hyper = {**info.hyperparameters(), **dict(mech.hyper)}
    slot = cell_slot("regression", {"dataset": dataset, "draw": draw}, "mechanism", info.name, hyper, epsilon, context)
    code = code_version((f"mechanism {info.name}", info.fit), (f"loader {entry.loader}", loader.load))
    return slot, code


@dataclass(frozen=True)
class Task(CellTask):
    """Trials [trial_start, trial_stop) of every cell on one dataset (draw).

    Without ``data_draws`` a task holds one (mechanism, ε) cell (the historical shard layout). With
    ``data_draws`` one task holds every (mechanism, ε) cell of its draw: the draw is loaded once, and a run with
    one trial per draw writes one shard per draw instead of one per (draw, mechanism, ε) — the per-shard cost
    (atomic write, fsync, verified read-back) dominated such runs (issue 16). A task that the store partly holds
    runs as its :meth:`subset` (the missing trials only).
    """

    entry: DatasetEntry
    cells: tuple[Cell, ...]
    trial_start: int
    trial_stop: int
    n_trials: int  # trials planned for this dataset (checked against its real shape in the worker)
    draw: int | None = None  # data draw (None: the config has no data_draws)
    context: TrialContext | None = None

    @property
    def affinity(self) -> tuple:
        """Tasks of the same dataset draw run in one worker (one load and Gram per draw; see core.affinity_chunks);
        with ``nested`` every entry of a draw reads one draw, so they share its key."""
        return (self.entry.data_key, self.draw)

    def release(self) -> None:
        """After a chunk (core.affinity_chunks): a data draw is used by one chunk only, so drop the worker's cached
        draws (frees up to n·d·16 bytes per draw); a dataset without draws stays cached for the worker's next chunk."""
        if self.draw is not None:
            prepare_dataset.cache_clear()
            nest_base_draw.cache_clear()

    @property
    def shard_name(self) -> str:
        """Readable prefix of the task's shard file (the store appends a digest of its trials' keys)."""
        draw = "" if self.draw is None else f"-r{self.draw}"
        if len(self.cells) == 1:
            only = self.cells[0]
            cell = f"-m{stable_hash(only.entry.key):08x}-e{only.epsilon:g}"
        else:
            cell = f"-u{stable_hash(repr([(c.entry.key, c.epsilon) for c in self.cells])):08x}"
        return f"d{stable_hash(self.entry.key):08x}{draw}{cell}-t{self.trial_start}-{self.trial_stop}.csv"

    def place_name(self) -> str:
        return dataset_id(self.entry, self.entry.label or self.entry.loader)

    def identity(self, cell: Cell) -> tuple[str, tuple[tuple[str, str], ...]]:
        return cell_identity(self.entry, self.draw, cell.entry, cell.epsilon, self.context)

    def row_keys(self, cell: Cell, trial: int) -> tuple[tuple, ...]:
        draw = () if self.draw is None else (self.draw,)
        return ((self.entry.loader, cell.entry.label, cell.eps_index, trial, *draw),)

    def aliases(self, cell: Cell) -> tuple[tuple[str, ...], tuple[str, ...]]:
        return entry_aliases(self.entry), (cell.entry.name,)

    def describe(self) -> str:
        data = self.entry.label or self.entry.loader
        options = ", ".join(f"{k}={v}" for k, v in self.entry.options)
        draw = "" if self.draw is None else f", data draw {self.draw}"
        if len(self.cells) == 1:
            cell = f"mechanism {self.cells[0].entry.label}, ε = {self.cells[0].epsilon:g}"
        else:
            cell = f"{len(self.cells)} (mechanism, ε) cells"
        return (
            f"dataset {data}{f' ({options})' if options else ''}{draw}, {cell}, "
            f"trials {self.trial_start}–{self.trial_stop - 1}"
        )


def characteristics(stats: GramStats) -> dict[str, float]:
    """Per-dataset reference values written to datasets.json (OLS floor, ‖Y‖²/n, spectrum: eigenvalues only unless a
    mechanism already decomposed the Grams, :attr:`~dpbench.linalg.GramStats.eigvals_x`; tiny negative round-off of
    the λ_min clamped at 0)."""
    return {
        "n": stats.n,
        "d": stats.d,
        "ols_train_mse": stats.ols_loss / stats.n,
        "zero_train_mse": stats.yty / stats.n,
        "lam_min_x": max(float(stats.eigvals_x[0]), 0.0),
        "lam_max_x": float(stats.eigvals_x[-1]),
        "lam_min_xy": max(float(stats.eigvals_xy[0]), 0.0),
        "theta_ols_sq_norm": float(stats.theta_ols @ stats.theta_ols),
    }


def description(task: Task, config: Config, dataset: Dataset, stats: GramStats, label: str) -> dict[str, Any]:
    """The dataset's entry in datasets.json (with data draws: draw 0 at the top, every draw under ``draws``).

    Draw 0 (or the only draw) gets every :func:`characteristics`; the other draws only the O(n) ones (n, d, δ,
    ‖Y‖²/n), so no draw pays for a Gram that its trials did not need (module docstring, "Lazy statistics"). When
    draw 0's trials are split over several tasks, only the first (trial 0) computes them: the worker frees a draw
    after each chunk, so every later task of draw 0 would recompute the Gram, spectrum and θ_OLS (issue 16: ≈ 13
    CPU-s per DP-FTRL E3 config); the entries are merged in plan order, the first task's first. With
    ``dataset_statistics: basic`` (a config whose metrics read the population, e.g. DP-FTRL E1) every draw gets only
    the O(n) ones: at d = 2048 the full set costs up to ≈ 45 CPU-s per N (an SVD ``lstsq`` on the N × d rows for the
    ill-conditioned spectra) that no figure of such a config reads (issue 40).
    """
    delta = config.delta_for(stats.n)
    meta = {k: v for k, v in dataset.meta.items() if isinstance(v, (int, float, str, bool))}
    head = {
        "label": label,
        "loader": task.entry.loader,
        "options": dict(task.entry.options),
        "delta": delta,
        "trials": task.n_trials,
    }
    basic = {"n": stats.n, "d": stats.d, "zero_train_mse": stats.yty / stats.n}
    full = config.dataset_statistics == "full"
    if task.draw is None:
        return {**head, **(characteristics(stats) if full else basic), "meta": meta}
    head["data_draws"] = config.draws_for(stats.n, stats.d)
    if task.draw == 0 and task.trial_start == 0:
        chars = characteristics(stats) if full else basic
        head.update({**chars, "meta": meta})
    else:
        chars = basic
    return {**head, "draws": {str(task.draw): {**chars, "delta": delta}}}


def fit_inputs(mech: registry.MechanismInfo, dataset: Dataset, stats: GramStats) -> dict[str, Any]:
    """The extra keyword inputs a mechanism declared in ``needs``; a rows-free dataset (``stats.X`` is None) only
    for a mechanism declared ``rows_free``."""
    if not has_rows(stats) and not mech.rows_free:
        raise ConfigError(
            f"mechanism '{mech.name}' needs data rows, but dataset '{dataset.name}' has none (its loader returns "
            "sufficient statistics only); use a mechanism declared rows_free, or a loader with rows"
        )
    available = {"stats": stats, "public_X": dataset.X_public, "population": dataset.population}
    missing = [name for name in mech.needs if available[name] is None]
    if missing:
        raise ConfigError(f"mechanism '{mech.name}' needs {missing} but dataset '{dataset.name}' provides none")
    return {name: available[name] for name in mech.needs}


def check_planned_size(task: Task, config: Config, stats: GramStats) -> None:
    """The plan fixed the trial/draw counts from a declared shape: the loaded data must agree with it."""
    draws = config.draws_for(stats.n, stats.d)
    if config.trials_for(stats.n, stats.d) != task.n_trials or (task.draw is not None and task.draw >= draws):
        raise ConfigError(
            f"loader '{task.entry.loader}' declared a shape that does not match the data it loaded "
            f"(n = {stats.n}, d = {stats.d}); fix its registered shape()"
        )


def run_block(task: Task, config: Config) -> TaskResult:
    """Run the trials of one task (every cell); pure function of (task, config) up to the timing column."""
    registry.discover()
    try:
        dataset, stats, reads = prepare_dataset(task.entry, config.seed, task.draw)
    except DataUnavailableError as err:
        return TaskResult([], skipped={dataset_id(task.entry, display_label(task.entry, None)): str(err)})
    check_planned_size(task, config, stats)
    label = display_label(task.entry, dataset)
    ident = dataset_id(task.entry, label)
    rows: list[dict[str, Any]] = []
    with one_blas_thread_limit():  # parallelism is across trials; one BLAS thread keeps arithmetic layout-free
        for cell in task.cells:
            rows += cell_rows(task, cell, config, dataset, stats, label, ident)
        described = {ident: description(task, config, dataset, stats, label)}
    return TaskResult(rows, described=described, reads={path: file_digest(path) for path in sorted(reads)})


def cell_rows(
    task: Task, cell: Cell, config: Config, dataset: Dataset, stats: GramStats, label: str, ident: str
) -> list[dict[str, Any]]:
    """The rows of one (mechanism, ε) cell's trials [trial_start, trial_stop) on the task's data."""
    mech = registry.get_mechanism(cell.entry.name)
    inputs = fit_inputs(mech, dataset, stats)
    hyper = dict(cell.entry.hyper)
    delta = config.delta_for(stats.n)
    metrics = [(name, get_metric(name)) for name in config.metrics]
    privacy = mech.privacy(hyper)  # as declared for these hyperparameters (e.g. none when nonprivate: true)
    base = {
        "dataset": label,
        "dataset_id": ident,
        "loader": task.entry.loader,
        **{f"data.{k}": v for k, v in task.entry.options},
        "n": stats.n,
        "d": stats.d,
        "mechanism": mech.name,
        "label": cell.entry.label,
        "privacy_model": privacy.model,
        "neighbour": privacy.neighbour,
        **{f"hp.{k}": v for k, v in cell.entry.hyper},
        "epsilon_index": cell.eps_index,
        "epsilon": cell.epsilon,
        "delta": delta,
        **({} if task.draw is None else {"data_draw": task.draw}),
    }
    rows = []
    for trial in range(task.trial_start, task.trial_stop):
        seed = trial_seed(
            config.seed, task.entry, cell.entry, cell.epsilon, trial, config.common_random_numbers, task.draw
        )
        rng = np.random.default_rng(seed)
        start = time.perf_counter()
        result = as_fit_result(mech.fit(stats.X, stats.y, cell.epsilon, delta, rng, **inputs, **hyper))
        seconds = time.perf_counter() - start
        coords = TrialCoordinates(cell.epsilon, delta, hyper, trial, task.draw, mech.name, result.intervals)
        row = {**base, "trial": trial}
        for name, metric in metrics:
            row.update(metric_columns(name, metric(result.theta, dataset, stats, coords)))
        row["seconds"] = seconds
        row.update(info_columns(result.info))
        rows.append(row)
    return rows


def planned_shape(entry: DatasetEntry, seed: int) -> tuple[int, int]:
    """(n, d) of a dataset for size-dependent plans: the loader's declared ``shape`` or, failing that, one load."""
    info = registry.get_dataset(entry.loader)
    if info.shape is not None:
        options = {**{k: v for k, v in info.options().items()}, **dict(entry.options)}
        return tuple(int(v) for v in info.shape(**options))
    with one_blas_thread_limit():
        dataset = info.load(np.random.default_rng(dataset_seed(seed, entry)), **dict(entry.options))
    return dataset.n, dataset.d


def check_entries(config: Config) -> None:
    """Load, in this process and before any trial, every dataset entry whose loader reads the user's files (its
    load function has ``check_in_main = True``, e.g. ``csv``): bad data stops the run here with the loader's one-line
    message (file, row, column, fix), naming the entry, before anything is written."""
    for i, entry in enumerate(config.datasets):
        info = registry.get_dataset(entry.loader)
        if not getattr(info.load, "check_in_main", False):
            continue
        try:
            with one_blas_thread_limit():
                load_draw(entry, config.seed, None)
        except DataUnavailableError:
            continue  # reported as SKIPPED by the run, as for every loader
        except (ValueError, OSError) as err:
            name = entry.label or entry.loader
            raise ConfigError(f"datasets[{i}] ({name}): {err}") from None


def finish_described(config: Config, described: dict[str, Any]) -> dict[str, Any]:
    """Fields of datasets.json that come from the config, not from a block: the trials (and data draws) the config
    plans for each dataset now — a reused block may come from a run with other counts."""
    for entry in described.values():
        if not isinstance(entry, dict) or "n" not in entry or "d" not in entry:
            continue
        entry["trials"] = config.trials_for(entry["n"], entry["d"])
        if "data_draws" in entry:
            draws = config.draws_for(entry["n"], entry["d"])
            entry["data_draws"] = draws
            entry["draws"] = {k: v for k, v in entry.get("draws", {}).items() if draws is not None and int(k) < draws}
    return described


def plan_tasks(config: Config, log=print) -> Plan:
    """Every task (see ``Task``), without loading data (see the module docstring) except to check the user's files
    (:func:`check_entries`)."""
    check_entries(config)
    context = trial_context(config)
    counts: list[tuple[DatasetEntry, int, int | None]] = []
    skipped: dict[str, str] = {}
    for entry in config.datasets:
        if not config.size_dependent:
            counts.append((entry, config.trials, config.data_draws))
            continue
        try:
            n, d = planned_shape(entry, config.seed)
        except DataUnavailableError as err:
            label = display_label(entry, None)
            skipped[dataset_id(entry, label)] = str(err)
            log(f"SKIPPED {dataset_id(entry, label)}: {err}")
            continue
        counts.append((entry, config.trials_for(n, d), config.draws_for(n, d)))
    per_grid = len(config.mechanisms) * len(config.epsilons)
    check_plan_size(sum(trials * (draws or 1) * per_grid for _, trials, draws in counts), "trials")
    cells = [
        Cell(mech, eps_index, epsilon)
        for mech in config.mechanisms
        for eps_index, epsilon in enumerate(config.epsilons)
    ]
    tasks: list[Task] = []
    for entry, trials, draws in counts:
        blocks = [(start, min(trials, start + config.trial_block)) for start in range(0, trials, config.trial_block)]
        if draws is None:  # one task per (mechanism, ε, block)
            tasks += [
                Task(entry, (cell,), start, stop, trials, None, context) for cell in cells for start, stop in blocks
            ]
        else:  # one task per (draw, block), holding every (mechanism, ε) cell of the draw
            tasks += [
                Task(entry, tuple(cells), start, stop, trials, draw, context)
                for draw in range(draws)
                for start, stop in blocks
            ]
    tasks = affinity_order(tasks)
    draw_column = () if config.data_draws is None else ("data_draw",)
    return Plan(
        tasks,
        {},
        skipped,
        KEY_COLUMNS + draw_column,
        COORDINATES + draw_column,
        functools.partial(finish_described, config),
    )


def affinity_order(tasks: list[Task]) -> list[Task]:
    """Tasks that read the same data draw made consecutive (stable): draw-major within a ``nested`` group, so one
    worker cuts every n from one load (core.affinity_chunks); plain entries keep their (entry, draw) order."""
    group_rank: dict[str, int] = {}
    for task in tasks:
        group_rank.setdefault(task.entry.data_key, len(group_rank))
    return sorted(tasks, key=lambda t: (group_rank[t.entry.data_key], -1 if t.draw is None else t.draw))


def row_order(table: pd.DataFrame, config: Config, plan: Plan) -> np.ndarray:
    """Sort of ``trials.csv``: dataset (plan order), mechanism (config order), ε index, [data draw,] trial."""
    ds_rank = {ident: i for i, ident in enumerate(plan.described)}
    mech_rank = {m.label: i for i, m in enumerate(config.mechanisms)}
    keys = [table["trial"]]
    if "data_draw" in table.columns:
        keys.append(table["data_draw"])
    keys += [table["epsilon_index"], table["label"].map(mech_rank), table["dataset_id"].map(ds_rank)]
    return np.lexsort(keys)


registry.register_kind(
    "regression",
    summary="private regression: (dataset, mechanism, ε, trial) → metrics per trial",
    parse=parse_regression_config,
    plan=plan_tasks,
    run_task=run_block,
    order=row_order,
)
