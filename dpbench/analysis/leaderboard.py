"""Leaderboard across every dataset of one or more runs (``dpbench leaderboard RUN…``; a section of ``dpbench report``).

Per trial the **normalised excess risk** is

    r = (train MSE − OLS train MSE) / (‖Y‖²/n − OLS train MSE)

(0 = the non-private least-squares fit, 1 = releasing θ = 0), from each run's datasets.json. Per privacy level ε:

* **cells** — per (dataset, mechanism): mean r over the R trials and its 95% normal interval mean ± 1.96·std/√R;
* **summary** — per mechanism: median over datasets of the cell means with a bootstrap 95% interval, the **mean
  rank** (1 = best; ties share the average rank; a mechanism that did not run on a dataset ranks last there) with a
  bootstrap 95% interval, and its wins/ties/losses against all others. Ranks order the means; wins/ties/losses
  count the intervals that separate, so a mechanism can rank last with no loss when its intervals are wide — a note
  then says so (:func:`rank_notes`). Since r ≥ 0 for every θ (OLS minimises the train MSE), a cell's interval is
  cut at 0 from below;
* **not private** — datasets normalised by their own data (``bounds: benchmark``) are flagged in the tables and
  named in a note: they are ranked with the others but their runs are not private;
* **win/tie/loss matrix** — for each pair (A, B) the datasets where A's interval lies entirely below B's (win),
  above it (loss) or the two overlap (tie); a mechanism that did not run loses to one that did;
* **performance profile** (Dolan & Moré 2002) — ρ_A(τ) = fraction of datasets where A's mean r is within a factor τ
  of the best mechanism's (never, if A did not run), plotted against τ on a log axis.

The bootstrap resamples the trials of every cell and, independently, the datasets (``B`` replicates, seeded), so the
intervals carry both the trial noise and the choice of datasets. Non-private mechanisms (``privacy_model: none``)
are shown as a reference row and are neither ranked nor profiled.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from dpbench.analysis.figures.profiles import profiles_figure
from dpbench.analysis.figures.save import save_figures
from dpbench.analysis.runs import Run, find_runs, load_run
from dpbench.analysis.stats import bootstrap, fallback_counts, fallback_sentences, fmt, halfwidth95
from dpbench.contract import FALLBACK_INFO
from dpbench.io.atomic import write_atomic

#: floor for the performance-profile ratio (a mean normalised excess of exactly 0 would divide by zero)
PROFILE_FLOOR = 1e-12
#: how the tables write a missing value (a mechanism that did not run)
MISSING = "n/a"
#: the trials' column marking a mechanism's data-independent fallback release (θ̂ = 0 after a failed PTR test, ...)
FALLBACK_COLUMN = f"info.{FALLBACK_INFO}"
#: the mark of a dataset that is not private (``bounds: benchmark``) in the tables
NOT_PRIVATE_MARK = "‡"
#: columns of :attr:`Leaderboard.matrix` (present even when one mechanism leaves no pair to compare)
MATRIX_COLUMNS = ["epsilon", "label", "other", "wins", "ties", "losses"]


@dataclass
class Leaderboard:
    """Everything the tables and the profile plot are made of (plain DataFrames, for notebooks too).

    ``cells``: epsilon, dataset, label, mean, ci95, lo, hi, count. ``summary``: epsilon, label, median, median_lo,
    median_hi, mean_rank, rank_lo, rank_hi, wins, ties, losses, datasets, fallback_datasets (datasets where every
    trial released the mechanism's data-independent fallback, ``info.fallback``). ``matrix``: epsilon, label, other,
    wins, ties, losses. ``reference``: the non-private labels. ``notes``: what was skipped and why.
    """

    cells: pd.DataFrame
    summary: pd.DataFrame
    matrix: pd.DataFrame
    labels: list[str]
    datasets: list[str]
    reference: list[str]
    notes: list[str]
    privacy: str = "paper"
    #: datasets normalised by their own data (``bounds: benchmark``): not private, flagged in the tables
    not_private: list[str] = field(default_factory=list)

    @property
    def epsilons(self) -> list[float]:
        return sorted(self.cells["epsilon"].unique())


# ----------------------------------------------------------------------------------------------------------------
# trials → per-trial normalised excess


def normalised_trials(runs: Sequence[Run]) -> tuple[pd.DataFrame, list[str], list[str], list[str]]:
    """One frame (epsilon, dataset, label, private, r) over all runs; returns it, label order, dataset order, notes."""
    frames, labels, datasets, notes = [], [], [], []
    for run in runs:
        trials = run.trials
        for column in ("train_mse", "epsilon"):
            if column not in trials:
                raise ValueError(f"{run.path / 'trials.csv'}: no {column!r} column; the leaderboard needs it")
        key = "dataset_id" if "dataset_id" in trials else "dataset"
        floors = {}
        for ident in pd.unique(trials[key]):
            info = run.datasets.get(ident, {})
            ols, zero = info.get("ols_train_mse"), info.get("zero_train_mse")
            if ols is None or zero is None or not zero - ols > 0:
                notes.append(f"{ident} ({run.name}): no OLS / ‖Y‖²/n reference in datasets.json, left out")
                continue
            floors[ident] = (float(ols), float(zero) - float(ols))
        part = trials[trials[key].isin(list(floors))]
        ols = part[key].map({k: v[0] for k, v in floors.items()})
        span = part[key].map({k: v[1] for k, v in floors.items()})
        private = part["privacy_model"].astype(str) != "none" if "privacy_model" in part else True
        fallback = pd.to_numeric(part[FALLBACK_COLUMN], errors="coerce").fillna(0) if FALLBACK_COLUMN in part else 0
        frames.append(
            pd.DataFrame(
                {
                    "epsilon": part["epsilon"].astype(float).round(12),
                    "dataset": part[key].astype(str),
                    "label": part["label"].astype(str),
                    "private": private,
                    "r": (part["train_mse"] - ols) / span,
                    FALLBACK_COLUMN: fallback,
                }
            )
        )
        labels += [lab for lab in run.label_order() if lab not in labels]
        datasets += [str(d) for d in pd.unique(part[key]) if str(d) not in datasets]
        notes += [f"{ident} ({run.name}): skipped, {reason}" for ident, reason in run.skipped.items()]
    seen: set[tuple[float, str, str]] = set()
    for run, part in zip(runs, frames, strict=True):
        pairs = set(zip(part["epsilon"], part["dataset"], part["label"], strict=True))
        clash = sorted(pairs & seen)
        if clash:
            raise ValueError(
                f"label {clash[0][2]!r} on dataset {clash[0][1]!r} at ε = {clash[0][0]:g} appears in "
                f"more than one run (again in {run.path}); relabel one of them"
            )
        seen |= pairs
    frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["epsilon", "dataset", "label"])
    return frame[frame["r"].notna()], labels, datasets, notes


# ----------------------------------------------------------------------------------------------------------------
# statistics


def cell_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Mean normalised excess per (ε, dataset, label) with its 95% normal interval."""
    grouped = frame.groupby(["epsilon", "dataset", "label"], sort=False)["r"]
    cells = grouped.agg(mean="mean", std=lambda v: float(np.std(v.to_numpy(), ddof=0)), count="count").reset_index()
    cells["ci95"] = halfwidth95(cells["std"], cells["count"])
    # r ≥ 0 exactly (OLS minimises the train MSE): the normal interval is cut at 0 (at the mean if rounding made
    # it negative)
    cells["lo"] = np.maximum(cells["mean"] - cells["ci95"], np.minimum(cells["mean"], 0.0))
    cells["hi"] = cells["mean"] + cells["ci95"]
    return cells.drop(columns="std")


def ranks(means: np.ndarray) -> np.ndarray:
    """Rank of every entry along the last axis (1 = smallest; ties share the average rank; NaN = did not run → last).

    One vectorised ``scipy.stats.rankdata`` over all rows (and bootstrap replicates): a pandas rank per row cost
    ≈ 3 ms, i.e. minutes for the report of a run with hundreds of datasets (wang2018: 280 fold datasets × 1,000
    replicates × 10 ε)."""
    filled = np.where(np.isnan(means), np.inf, means)
    return rankdata(filled, method="average", axis=-1)


def win_tie_loss(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """(labels, labels, 3) counts over datasets: A's interval below B's (win), above (loss), overlapping (tie)."""
    k = lo.shape[1]
    out = np.zeros((k, k, 3), dtype=int)
    ran = ~np.isnan(lo)
    for a in range(k):
        for b in range(k):
            if a == b:
                continue
            both = ran[:, a] & ran[:, b]
            win = (both & (hi[:, a] < lo[:, b])) | (ran[:, a] & ~ran[:, b])
            loss = (both & (lo[:, a] > hi[:, b])) | (~ran[:, a] & ran[:, b])
            tie = both & ~win & ~loss
            out[a, b] = win.sum(), tie.sum(), loss.sum()
    return out


def bootstrap_ranks(
    frame: pd.DataFrame, datasets: list[str], labels: list[str], replicates: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """(replicates, labels) mean ranks and medians: trials resampled within cells, datasets resampled."""
    n_ds, k = len(datasets), len(labels)
    means = np.full((replicates, n_ds, k), np.nan)
    groups = frame.groupby(["dataset", "label"])["r"]
    d_index, l_index = {d: i for i, d in enumerate(datasets)}, {lab: j for j, lab in enumerate(labels)}
    for (dataset, label), values in groups:
        means[:, d_index[dataset], l_index[label]] = bootstrap(values.to_numpy(), "mean", rng, replicates)
    pick = rng.integers(0, n_ds, size=(replicates, n_ds))
    resampled = np.take_along_axis(means, pick[:, :, None], axis=1)
    mean_ranks = ranks(resampled).mean(axis=1)
    medians = np.nanmedian(np.where(np.isnan(resampled), np.inf, resampled), axis=1)
    return mean_ranks, medians


def build_leaderboard(runs: Sequence[Run | str | Path], replicates: int = 1000, seed: int = 0) -> Leaderboard:
    """Leaderboard over every dataset of ``runs`` (run folders, or folders holding runs)."""
    loaded: list[Run] = []
    for item in runs:
        if isinstance(item, Run):
            loaded.append(item)
        else:
            found = find_runs(item)
            if not found:
                raise FileNotFoundError(f"no run (a folder with trials.csv) found under {item}")
            loaded += [load_run(path) for path in found]
    frame, order, datasets, notes = normalised_trials(loaded)
    if frame.empty:
        raise ValueError("no trials with a train_mse and an OLS reference: nothing to rank")
    reference = [lab for lab in order if lab in set(frame.loc[~frame["private"].astype(bool), "label"])]
    labels = [lab for lab in order if lab in set(frame["label"]) and lab not in reference]
    if not labels:
        raise ValueError(f"nothing to rank: only non-private mechanisms ({', '.join(reference)}) in these runs")
    cells = cell_table(frame)
    rng = np.random.default_rng(seed)
    summary_rows, matrix_rows = [], []
    for eps in sorted(frame["epsilon"].unique()):
        at = cells[cells["epsilon"] == eps].set_index(["dataset", "label"])

        def grid(column: str, at: pd.DataFrame = at) -> np.ndarray:
            return np.array([[at[column].get((d, lab), np.nan) for lab in labels] for d in datasets], dtype=float)

        mean, lo, hi = grid("mean"), grid("lo"), grid("hi")
        rank = ranks(mean).mean(axis=0)
        wtl = win_tie_loss(lo, hi)
        sub = frame[(frame["epsilon"] == eps) & frame["label"].isin(labels)]
        boot_ranks, boot_medians = bootstrap_ranks(sub, datasets, labels, replicates, rng)
        fell_back = sub.groupby(["label", "dataset"])[FALLBACK_COLUMN].agg(lambda v: bool((v > 0).all()))
        for j, lab in enumerate(labels):
            column = mean[:, j]
            summary_rows.append(
                {
                    "epsilon": eps,
                    "label": lab,
                    "median": float(np.nanmedian(np.where(np.isnan(column), np.inf, column))),
                    "median_lo": float(np.quantile(boot_medians[:, j], 0.025)),
                    "median_hi": float(np.quantile(boot_medians[:, j], 0.975)),
                    "mean_rank": float(rank[j]),
                    "rank_lo": float(np.quantile(boot_ranks[:, j], 0.025)),
                    "rank_hi": float(np.quantile(boot_ranks[:, j], 0.975)),
                    "wins": int(wtl[j, :, 0].sum()),
                    "ties": int(wtl[j, :, 1].sum()),
                    "losses": int(wtl[j, :, 2].sum()),
                    "datasets": int((~np.isnan(column)).sum()),
                    "fallback_datasets": int(fell_back.get(lab, pd.Series(dtype=bool)).sum()),
                }
            )
            for o, other in enumerate(labels):
                if o != j:
                    matrix_rows.append(
                        {
                            "epsilon": eps,
                            "label": lab,
                            "other": other,
                            "wins": int(wtl[j, o, 0]),
                            "ties": int(wtl[j, o, 1]),
                            "losses": int(wtl[j, o, 2]),
                        }
                    )
    summary = pd.DataFrame(summary_rows).sort_values(["epsilon", "mean_rank"], kind="stable").reset_index(drop=True)
    matrix = pd.DataFrame(matrix_rows, columns=MATRIX_COLUMNS)
    notes += fallback_sentences(fallback_counts(frame[frame["label"].isin(labels)]))
    not_private = benchmark_datasets(loaded, datasets)
    notes += rank_notes(summary, len(labels), cells)
    if not_private:
        notes.append(
            f"Not private: {', '.join(not_private)} (bounds: benchmark, normalised by the data's own maxima) ranked "
            f"with the {len(datasets) - len(not_private)} other datasets; the tables mark them with "
            f"{NOT_PRIVATE_MARK} — rank declared-bounds runs alone for a private comparison."
        )
    return Leaderboard(cells, summary, matrix, labels, datasets, reference, notes, privacy_profile(loaded), not_private)


def benchmark_datasets(runs: Sequence[Run], datasets: Sequence[str]) -> list[str]:
    """The ranked datasets whose loader normalised them by their own data (``bounds: benchmark`` in datasets.json)."""
    flagged = {
        str(ident)
        for run in runs
        for ident, info in run.datasets.items()
        if isinstance(info, dict) and (info.get("meta") or {}).get("bounds") == "benchmark"
    }
    return [d for d in datasets if d in flagged]


def rank_notes(summary: pd.DataFrame, k: int, cells: pd.DataFrame) -> list[str]:
    """A note for every mechanism ranked at least one place away from the middle, (k + 1)/2, with neither a win nor
    a loss: its 95% intervals overlap every other's, so the rank orders the means only."""
    notes = []
    middle = (k + 1) / 2
    for row in summary.itertuples(index=False):
        if k > 1 and row.wins == 0 and row.losses == 0 and abs(row.mean_rank - middle) >= 1:
            trials = cells.loc[(cells["epsilon"] == row.epsilon) & (cells["label"] == row.label), "count"]
            notes.append(
                f"ε = {_fmt(row.epsilon)}: {row.label} has mean rank {row.mean_rank:.2f} of {k} but 0 wins and 0 "
                f"losses — its 95% intervals overlap the others' on every dataset (R ≤ {int(trials.max())} trials per "
                "cell): the rank orders the means, the intervals do not separate them; more trials would."
            )
    return notes


def privacy_profile(runs: Sequence[Run]) -> str:
    """The privacy profile the runs ran under (their config's ``privacy:``, default ``paper``): one name, or
    ``mixed (run: profile, …)`` — a ranking that mixes profiles holds mechanisms to different accountings."""
    profiles = {run.name: str(run.config.get("privacy", "paper")) for run in runs}
    if len(set(profiles.values())) == 1:
        return next(iter(profiles.values()))
    return "mixed (" + ", ".join(f"{name}: {profile}" for name, profile in profiles.items()) + ")"


def performance_profile(board: Leaderboard, epsilon: float, taus: np.ndarray) -> pd.DataFrame:
    """ρ_label(τ) at ``epsilon``: fraction of datasets with mean r ≤ τ · best mean r (columns: tau, one per label)."""
    at = board.cells[(board.cells["epsilon"] == epsilon) & board.cells["label"].isin(board.labels)]
    means = at.pivot(index="dataset", columns="label", values="mean").reindex(
        index=board.datasets, columns=board.labels
    )
    values = np.maximum(means.to_numpy(dtype=float), PROFILE_FLOOR)
    ratio = values / np.nanmin(values, axis=1, keepdims=True)
    ratio = np.where(np.isnan(ratio), np.inf, ratio)
    data = {"tau": taus}
    for j, lab in enumerate(board.labels):
        data[lab] = [(ratio[:, j] <= tau).mean() for tau in taus]
    return pd.DataFrame(data)


# ----------------------------------------------------------------------------------------------------------------
# rendering


def _fmt(value: float, digits: int = 3) -> str:
    return fmt(value, digits, MISSING)


def summary_markdown(board: Leaderboard, epsilon: float) -> str:
    """The per-ε table: mechanism, median normalised excess [95% CI], mean rank [95% CI], W/T/L, datasets."""
    rows = board.summary[board.summary["epsilon"] == epsilon]
    flagged = f" ({NOT_PRIVATE_MARK} {len(board.not_private)} not private)" if board.not_private else ""
    out = [
        f"| mechanism (ε = {_fmt(epsilon)}; privacy: {board.privacy}) | median normalised excess [95% CI] | "
        "mean rank [95% CI] | "
        "wins / ties / losses (datasets where the 95% intervals separate / overlap) | "
        f"datasets{flagged} |",
        "|---|---|---|---|---|",
    ]
    for row in rows.itertuples(index=False):
        out.append(
            f"| {row.label} | {_fmt(row.median)} [{_fmt(row.median_lo)}, {_fmt(row.median_hi)}] | "
            f"{row.mean_rank:.2f} [{row.rank_lo:.2f}, {row.rank_hi:.2f}] | {row.wins} / {row.ties} / {row.losses} | "
            f"{row.datasets} / {len(board.datasets)}{_fallback_text(row.fallback_datasets)} |"
        )
    return "\n".join(out)


def _fallback_text(datasets: int) -> str:
    """``, fallback on 27`` (datasets where every trial released the data-independent fallback), or nothing."""
    return f", fallback on {datasets}" if datasets else ""


def matrix_markdown(board: Leaderboard, epsilon: float) -> str:
    """Rows beat columns: 'W/T/L' datasets."""
    if len(board.labels) < 2:
        return f"(one mechanism, {board.labels[0]}: no pair to compare)"
    at = board.matrix[board.matrix["epsilon"] == epsilon].set_index(["label", "other"])
    out = ["| row vs column | " + " | ".join(board.labels) + " |", "|---" * (len(board.labels) + 1) + "|"]
    for lab in board.labels:
        cells = [
            "—" if lab == other else "{}/{}/{}".format(*at.loc[(lab, other), ["wins", "ties", "losses"]])
            for other in board.labels
        ]
        out.append(f"| {lab} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def plot_profiles(board: Leaderboard, path: Path, epsilons: Sequence[float] | None = None) -> list[Path]:
    """The performance profiles (:mod:`dpbench.analysis.figures.profiles`) as PNG + PDF at ``path`` (suffix
    replaced)."""
    taus = np.logspace(0, 4, 400)
    profiles = {eps: performance_profile(board, eps, taus) for eps in list(epsilons or board.epsilons)}
    figure = profiles_figure(profiles, board.labels, len(board.datasets), board.privacy)
    return save_figures(figure, path.with_suffix(""))


def write_leaderboard(board: Leaderboard, out_dir: Path) -> list[Path]:
    """leaderboard.md (per-ε tables + matrices), leaderboard_cells.csv, leaderboard_summary.csv, profile PNG/PDF."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = plot_profiles(board, out_dir / "performance_profile")
    lines = [
        f"# Leaderboard over {len(board.datasets)} datasets",
        "",
        "Normalised excess risk r = (train MSE − OLS) / (‖Y‖²/n − OLS): 0 = non-private OLS, 1 = θ = 0.",
        "",
        f"Privacy profile: {board.privacy} (strict: every mechanism at the accounting its theorem proves; "
        "paper: each mechanism's defaults, the papers' choices).",
        "",
    ]
    for eps in board.epsilons:
        lines += [
            f"## ε = {_fmt(eps)}",
            "",
            summary_markdown(board, eps),
            "",
            "Win/tie/loss (rows vs columns):",
            "",
            matrix_markdown(board, eps),
            "",
        ]
    if board.reference:
        lines += [f"Reference (not ranked): {', '.join(board.reference)}.", ""]
    lines += [f"- {note}" for note in board.notes]
    write_atomic(out_dir / "leaderboard.md", "\n".join(lines).rstrip() + "\n")
    write_atomic(out_dir / "leaderboard_cells.csv", board.cells.to_csv(index=False))
    write_atomic(out_dir / "leaderboard_summary.csv", board.summary.to_csv(index=False))
    return [
        out_dir / "leaderboard.md",
        out_dir / "leaderboard_cells.csv",
        out_dir / "leaderboard_summary.csv",
        *written,
    ]
