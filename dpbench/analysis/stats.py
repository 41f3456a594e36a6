"""Statistics of a run's trials — one home for each: the summary of a group, the bootstrap, the log–log slope fit,
the number formatter. Pure functions of arrays and tables (no run folders, no figures, no paper knowledge).

* :func:`summarise` — THE summary: one row per group, ``centre`` = mean | median, its 95% interval normal
  (centre ± 1.96·se) | seeded percentile bootstrap | none, ``se`` and ``count``.
* :func:`halfwidth95` — the normal 95% half-width 1.96·sd/√n (the only place the formula is written).
* :func:`bootstrap` — THE bootstrap: a statistic of ``resamples`` resamples (with replacement, same size);
  :func:`percentile_interval` its 2.5/97.5% percentiles. :func:`median_ci` and :func:`paired_ratio_ci` are the two
  one-line uses the control experiments need.
* :func:`loglog_fit` — THE log–log least-squares fit b of log y = a + b·log x (slope = Σ w_j log y_j, weights
  :func:`loglog_weights`); :func:`fit_slopes` fits the curves of a :func:`summarise` table with a 95% CI (delta
  method or refitted bootstrap values); :func:`loglog_slope_ci` fits raw samples per x with a stratified bootstrap,
  :func:`curve_slopes` each curve of raw trials with it.
* :func:`fmt` — THE number formatter (``digits`` significant digits, a placeholder for NaN/∞); :func:`fmt_ci`
  "v [lo, hi]"; :func:`format_table` a fixed-width text table; :func:`summary_table` a wide "centre ± half" table.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from dpbench.analysis.runs import Run, metric_values

#: the 97.5% standard normal quantile (two-sided 95% normal intervals)
Z95 = 1.96
#: bootstrap resamples of the control experiments' intervals
RESAMPLES = 2000
STATS = ("mean", "median")
INTERVALS = ("normal", "bootstrap", "none")
#: √(π/2): asymptotic sd of the sample median over that of the mean, for normal data
MEDIAN_SE_FACTOR = math.sqrt(math.pi / 2)
Stat = Callable[..., Any]


# ----------------------------------------------------------------------------------------------------------------
# formatting


def fmt(value: Any, digits: int = 3, missing: str = "nan", trailing_zeros: bool = False) -> str:
    """``value`` with ``digits`` significant digits (``missing`` for None, NaN and ±∞); integers and booleans as
    they are, anything else as text. ``trailing_zeros`` keeps them (0.120, 1.00, 114, 1.38e+03; no bare point)."""
    if value is None:
        return missing
    if isinstance(value, (bool, np.bool_)):
        return str(value)
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        if not np.isfinite(value):
            return missing
        return f"{value:#.{digits}g}".rstrip(".").replace(".e", "e") if trailing_zeros else f"{value:.{digits}g}"
    return str(value)


def fmt_ci(value: float, lo: float, hi: float, digits: int = 2) -> str:
    """'v [lo, hi]' with ``digits`` significant digits (claims tables)."""
    return f"{fmt(float(value), digits)} [{fmt(float(lo), digits)}, {fmt(float(hi), digits)}]"


def format_table(table: pd.DataFrame) -> str:
    """Plain-text, fixed-width rendering of a (possibly multi-indexed) table; no extra dependency."""
    frame = table.reset_index() if any(name is not None for name in table.index.names) else table
    header = [str(c) for c in frame.columns]
    rows = [[str(v) for v in row] for row in frame.itertuples(index=False, name=None)]
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    numeric = [i >= (frame.shape[1] - table.shape[1]) for i in range(len(header))]

    def line(cells: Iterable[str]) -> str:
        return "  ".join(
            c.rjust(w) if num else c.ljust(w) for c, w, num in zip(cells, widths, numeric, strict=True)
        ).rstrip()

    out = [line(header), "  ".join("-" * w for w in widths)]
    out += [line(r) for r in rows]
    return "\n".join(out)


# ----------------------------------------------------------------------------------------------------------------
# intervals and the bootstrap


def halfwidth95(sd: Any, count: Any) -> Any:
    """Half-width of the normal 95% interval of a mean: 1.96·sd/√count (scalars, arrays or Series)."""
    return Z95 * sd / np.sqrt(count)


def clopper_pearson(successes: Any, trials: Any, level: float = 0.95) -> tuple[Any, Any]:
    """Exact (Clopper–Pearson) binomial interval of a proportion: [B(α/2; k, n − k + 1), B(1 − α/2; k + 1, n − k)]
    with B the beta quantile (0 at k = 0, 1 at k = n); works elementwise on arrays."""
    from scipy.stats import beta

    k, n = np.asarray(successes, dtype=float), np.asarray(trials, dtype=float)
    alpha = 1.0 - level
    with np.errstate(invalid="ignore", divide="ignore"):
        lo = np.where(k > 0, beta.ppf(alpha / 2.0, k, n - k + 1.0), 0.0)
        hi = np.where(k < n, beta.ppf(1.0 - alpha / 2.0, k + 1.0, n - k), 1.0)
    return lo, hi


def percentile_interval(samples: np.ndarray) -> tuple[float, float]:
    """The 2.5% and 97.5% percentiles of the finite ``samples`` (NaN, NaN if there are none)."""
    samples = np.asarray(samples, dtype=float)
    samples = samples[np.isfinite(samples)]
    if samples.size == 0:
        return math.nan, math.nan
    lo, hi = np.percentile(samples, [2.5, 97.5])
    return float(lo), float(hi)


def _reducer(stat: str | Stat) -> Stat:
    if callable(stat):
        return stat
    if stat not in STATS:
        raise ValueError(f"stat must be one of {', '.join(STATS)}, got {stat!r}")
    return np.median if stat == "median" else np.mean


def resample_indices(size: int, rng: np.random.Generator, resamples: int) -> np.ndarray:
    """(resamples, size) indices drawn with replacement from ``range(size)``."""
    return rng.integers(0, size, size=(resamples, size))


def bootstrap(values: np.ndarray, stat: str | Stat, rng: np.random.Generator, resamples: int) -> np.ndarray:
    """``resamples`` values of ``stat`` ("mean" | "median" | a numpy reducer taking ``axis``) on resamples (with
    replacement, same size) of ``values``."""
    values = np.asarray(values)
    return _reducer(stat)(values[resample_indices(values.size, rng, resamples)], axis=1)


def group_seed(seed: int, key: Any) -> np.random.SeedSequence:
    """Seed of one group's bootstrap: the plot seed and a stable hash of the group key (so adding a curve never
    changes another curve's band)."""
    return np.random.SeedSequence([int(seed), zlib.crc32(repr(key).encode())])


def _finite(values: Sequence[float] | np.ndarray) -> np.ndarray:
    v = np.asarray(values, dtype=float)
    return v[np.isfinite(v)]


def median_ci(
    values: Sequence[float] | np.ndarray, rng: np.random.Generator, resamples: int = RESAMPLES
) -> tuple[float, float, float]:
    """(median, lo, hi): the median of the finite values and its percentile-bootstrap 95% CI (NaN CI if < 2)."""
    v = _finite(values)
    if v.size == 0:
        return math.nan, math.nan, math.nan
    if v.size < 2:
        return float(v[0]), math.nan, math.nan
    return (float(np.median(v)), *percentile_interval(bootstrap(v, "median", rng, resamples)))


def paired_ratio_ci(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    rng: np.random.Generator,
    *,
    stat: Stat = np.median,
    resamples: int = RESAMPLES,
) -> tuple[float, float, float]:
    """(ratio, lo, hi) of stat(a)/stat(b) for paired samples a_i, b_i (same data draw and noise seed: common
    random numbers), the pairs resampled jointly; pairs with a non-finite member are dropped."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"paired samples must have the same shape, got {a.shape} and {b.shape}")
    ok = np.isfinite(a) & np.isfinite(b)
    a, b = a[ok], b[ok]
    if a.size == 0:
        return math.nan, math.nan, math.nan
    ratio = float(stat(a) / stat(b))
    if a.size < 2:
        return ratio, math.nan, math.nan
    idx = resample_indices(a.size, rng, resamples)
    return (ratio, *percentile_interval(stat(a[idx], axis=1) / stat(b[idx], axis=1)))


# ----------------------------------------------------------------------------------------------------------------
# the summary of a group


def summarise(
    frame: pd.DataFrame,
    value: str,
    keys: Sequence[str],
    stat: str = "mean",
    interval: str = "normal",
    resamples: int = 1000,
    seed: int = 0,
) -> pd.DataFrame:
    """One row per group of ``keys``: ``centre`` (mean or median of ``value``), its 95% interval ``lo``/``hi``,
    ``se`` and ``count`` (non-NaN values); groups keep their order of first appearance.

    * ``interval="normal"``: centre ± 1.96·se, se = sd/√R for the mean and √(π/2)·sd/√R for the median (its
      asymptotic standard error for normal data); sd with ddof = 0, as in the IHM paper's code.
    * ``interval="bootstrap"``: the 2.5% and 97.5% percentiles of ``resamples`` bootstrap values of the statistic,
      drawn from :func:`group_seed` (``seed``, group key) — deterministic. The bootstrap values are kept in the
      ``boot`` column (arrays) for :func:`fit_slopes`.
    * ``interval="none"``: lo = hi = centre.
    """
    reduce = _reducer(stat)
    if interval not in INTERVALS:
        raise ValueError(f"interval must be one of {', '.join(INTERVALS)}, got {interval!r}")
    keys = list(keys)
    rows = []
    clean = frame[np.isfinite(frame[value].to_numpy(dtype=float))]
    for key, group in clean.groupby(keys, sort=False, dropna=False):
        values = group[value].to_numpy(dtype=float)
        key = key if isinstance(key, tuple) else (key,)
        centre = float(reduce(values))
        sd = float(np.std(values))
        se = sd / math.sqrt(values.size) * (MEDIAN_SE_FACTOR if stat == "median" else 1.0)
        boot = None
        if interval == "bootstrap" and values.size > 1:
            boot = bootstrap(values, stat, np.random.default_rng(group_seed(seed, key)), resamples)
            lo, hi = percentile_interval(boot)
        elif interval == "normal":
            lo, hi = centre - Z95 * se, centre + Z95 * se
        else:
            lo = hi = centre
        rows.append(
            {
                **dict(zip(keys, key, strict=True)),
                "centre": centre,
                "lo": lo,
                "hi": hi,
                "se": se,
                "count": int(values.size),
                "boot": boot,
            }
        )
    columns = [*keys, "centre", "lo", "hi", "se", "count", "boot"]
    return pd.DataFrame(rows, columns=columns)


def summarise_metric(
    run: Run | pd.DataFrame, metric: str, keys: Sequence[str], datasets: Mapping[str, Any] | None = None, **options: Any
) -> pd.DataFrame:
    """:func:`summarise` (``options``: stat, interval, ...) of a metric of a run's trials (``excess`` computed
    from ``datasets``, by default the run's datasets.json, see :func:`dpbench.analysis.runs.metric_values`);
    ``attrs["nan_dropped"]`` counts the trials with a NaN metric."""
    trials = run.trials if isinstance(run, Run) else run
    if datasets is None and isinstance(run, Run):
        datasets = run.datasets
    missing = [c for c in keys if c not in trials]
    if missing:
        raise ValueError(f"column(s) {missing} not in the trials; columns: {', '.join(trials.columns)}")
    frame = trials[list(keys)].assign(_value=metric_values(trials, metric, datasets).to_numpy())
    points = summarise(frame, "_value", keys, **options)
    points.attrs["metric"] = metric
    points.attrs["nan_dropped"] = int(frame["_value"].isna().sum())
    return points


def summary_table(
    run: Run | pd.DataFrame, metric: str, x: str = "epsilon", by: Sequence[str] = ("dataset", "label"), digits: int = 3
) -> pd.DataFrame:
    """Wide table: one row per ``by`` key (dataset × label), one column per ``x`` value, cells "mean ± half-width"
    of the normal 95% interval."""
    by = list(by)
    points = summarise_metric(run, metric, [*by, x])
    points["cell"] = [
        f"{fmt(m, digits)} ± {fmt(h - m, max(1, digits - 1))}"
        for m, h in zip(points["centre"], points["hi"], strict=True)
    ]
    wide = points.pivot(index=by, columns=x, values="cell")
    wide = wide.reindex(points.drop_duplicates(by).set_index(by).index)
    wide.columns = [f"{x}={fmt(v, 4)}" if isinstance(v, (int, float, np.number)) else f"{x}={v}" for v in wide.columns]
    wide.columns.name = None
    return wide.fillna("")


# ----------------------------------------------------------------------------------------------------------------
# log–log slopes


def loglog_weights(xs: np.ndarray) -> np.ndarray:
    """w with slope = Σ w_j log y_j for the least-squares line of log y on log x: w_j = (u_j − ū)/Σ(u − ū)²."""
    u = np.log(xs)
    centred = u - u.mean()
    return centred / float(centred @ centred)


def loglog_fit(xs: Sequence[float] | np.ndarray, ys: Sequence[float] | np.ndarray) -> tuple[float, float]:
    """(b, a) of the least-squares line log y = a + b·log x over the points with x > 0 and finite y > 0;
    (NaN, NaN) with fewer than two distinct such x. E.g. b ≈ −1 for y ∝ 1/ε, −2 for 1/ε²."""
    xs, ys = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
    ok = np.isfinite(xs) & np.isfinite(ys) & (xs > 0) & (ys > 0)
    xs, ys = xs[ok], ys[ok]
    if len(np.unique(xs)) < 2:
        return math.nan, math.nan
    log_y = np.log(ys)
    slope = float(loglog_weights(xs) @ log_y)
    return slope, float(np.mean(log_y) - slope * np.mean(np.log(xs)))


def loglog_slope(xs: Sequence[float] | np.ndarray, ys: Sequence[float] | np.ndarray) -> float:
    """The slope b of :func:`loglog_fit`."""
    return loglog_fit(xs, ys)[0]


def loglog_slope_ci(
    groups: dict[float, Sequence[float]], rng: np.random.Generator, *, stat: Stat = np.mean, resamples: int = RESAMPLES
) -> tuple[float, float, float]:
    """(slope, lo, hi): slope of log stat(values) vs log x over the keys x of ``groups``, with a stratified
    percentile bootstrap (each x's values resampled independently)."""
    xs = sorted(groups)
    vals = [_finite(groups[x]) for x in xs]
    slope = loglog_slope(xs, [stat(v) if v.size else math.nan for v in vals])
    boot = np.empty(resamples)
    for r in range(resamples):
        boot[r] = loglog_slope(xs, [stat(v[rng.integers(0, v.size, v.size)]) if v.size else math.nan for v in vals])
    return (slope, *percentile_interval(boot))


def curve_slopes(
    trials: pd.DataFrame, by: Sequence[str], x: str, metric: str, rng: np.random.Generator, *, stat: Stat = np.median
) -> Iterator[tuple[Any, dict[float, np.ndarray], tuple[float, float, float]]]:
    """Per curve of raw trials (the groups of ``by``, in order of appearance): (its key, its values of ``metric`` at
    each x = float(``x``), :func:`loglog_slope_ci` of stat(values) vs x). ``rng`` is drawn curve after curve."""
    for key, part in trials.groupby(list(by), sort=False):
        groups = {float(value): g[metric].to_numpy() for value, g in part.groupby(x)}
        yield key, groups, loglog_slope_ci(groups, rng, stat=stat)


def fit_slopes(
    points: pd.DataFrame,
    x: str,
    by: Sequence[str],
    xmin: float | None = None,
    xmax: float | None = None,
) -> pd.DataFrame:
    """:func:`loglog_fit` of log(centre) = a + b·log(x) per curve (``by``) of a :func:`summarise` table, with a
    95% CI.

    Points with x or centre ≤ 0, or outside [xmin, xmax], are left out. The CI covers the noise of the points (not
    a misfit of the power law): with bootstrap intervals, the 2.5/97.5% percentiles of the slopes refitted on the
    bootstrap values (resamples with a non-positive value dropped); with normal ones, b ± 1.96·√(Σ w_j² (se_j /
    centre_j)²) (delta method, independent points). Columns: ``by``..., ``slope``, ``lo``, ``hi``, ``intercept``,
    ``points``, ``x_min``, ``x_max``.
    """
    by = list(by)
    rows = []
    groups = points.groupby(by, sort=False, dropna=False) if by else [((), points)]
    for key, curve in groups:
        xs, ys = curve[x].to_numpy(dtype=float), curve["centre"].to_numpy(dtype=float)
        keep = np.isfinite(xs) & np.isfinite(ys) & (xs > 0) & (ys > 0)
        if xmin is not None:
            keep &= xs >= xmin
        if xmax is not None:
            keep &= xs <= xmax
        key = key if isinstance(key, tuple) else (key,)
        slope, intercept = loglog_fit(xs[keep], ys[keep])
        row = {
            **dict(zip(by, key, strict=True)),
            "slope": slope,
            "lo": math.nan,
            "hi": math.nan,
            "intercept": intercept,
            "points": int(keep.sum()),
            "x_min": math.nan,
            "x_max": math.nan,
        }
        if np.isfinite(slope):
            part, xs, ys = curve[keep], xs[keep], ys[keep]
            row.update(x_min=float(xs.min()), x_max=float(xs.max()))
            w = loglog_weights(xs)
            boots = list(part["boot"]) if "boot" in part else []
            if (part["count"] < 2).any():
                pass  # a point from one trial has no noise estimate: no interval
            elif boots and all(b is not None for b in boots):
                stack = np.vstack(boots)  # points × resamples
                valid = (stack > 0).all(axis=0)
                if valid.any():
                    row["lo"], row["hi"] = percentile_interval(w @ np.log(stack[:, valid]))
            else:
                half = Z95 * math.sqrt(float(w**2 @ (part["se"].to_numpy(dtype=float) / ys) ** 2))
                row["lo"], row["hi"] = slope - half, slope + half
        rows.append(row)
    return pd.DataFrame(rows, columns=[*by, "slope", "lo", "hi", "intercept", "points", "x_min", "x_max"])


def fallback_counts(trials: pd.DataFrame, dataset: str = "dataset") -> pd.DataFrame:
    """Per (label, ε) with at least one fallback (column ``info.fallback`` = 1, see
    :data:`dpbench.contract.FALLBACK_INFO`): ``trials``, ``fallbacks`` (trials that released the mechanism's
    data-independent fallback), ``datasets`` and ``all_datasets`` (datasets where every trial fell back)."""
    from dpbench.contract import FALLBACK_INFO

    column = f"info.{FALLBACK_INFO}"
    columns = ["label", "epsilon", "trials", "fallbacks", "datasets", "all_datasets"]
    if column not in trials or "label" not in trials or "epsilon" not in trials:
        return pd.DataFrame(columns=columns)
    flags = trials.assign(_fell=pd.to_numeric(trials[column], errors="coerce").fillna(0) > 0)
    per_dataset = flags.groupby(["label", "epsilon", dataset], sort=False)["_fell"].agg(["size", "sum", "all"])
    table = per_dataset.groupby(level=["label", "epsilon"], sort=False).agg(
        trials=("size", "sum"), fallbacks=("sum", "sum"), datasets=("size", "size"), all_datasets=("all", "sum")
    )
    table = table.reset_index()
    return table[table["fallbacks"] > 0][columns].reset_index(drop=True)


def fallback_sentences(counts: pd.DataFrame) -> list[str]:
    """``tukey_em at ε = 1: the data-independent fallback (info.fallback, e.g. θ̂ = 0 after a failed PTR test) in
    812 of 900 trials — in every trial on 27 of 30 datasets``, one per row of :func:`fallback_counts`."""
    return [
        f"{row.label} at ε = {fmt(row.epsilon)}: the data-independent fallback (info.fallback, e.g. θ̂ = 0 after a "
        f"failed PTR test) in {int(row.fallbacks)} of {int(row.trials)} trials — in every trial on "
        f"{int(row.all_datasets)} of {int(row.datasets)} datasets"
        for row in counts.itertuples(index=False)
    ]
