"""Analyses of the DP-FTRL paper (spec 002) run by ``dpbench analyze NAME RUN`` / ``dpbench report RUN``.

* ``ftrl_rates`` — runs over N (E1): the least-squares log–log slope of the mean excess vs N per curve and ε, next
  to the §4.3 Table 1 exponents (−a for excess = Õ(N^{−a}); the theory is an upper bound, so the check is
  one-sided: slope ≤ −a + 0.1).
* ``ftrl_diagnostics`` — other runs (E2–E5): per curve and x value, mean ± 1.96·std/√R of the metric with the mean
  step size η, clip percentage and noise multiplier τ the mechanisms report.

The figures themselves are generic presets (``plot:`` in configs/ftrl/*.yaml).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd

from dpbench import registry
from dpbench.analysis.runs import load_run
from dpbench.analysis.stats import fit_slopes, format_table, summarise_metric
from dpbench.io.atomic import write_atomic

#: §4.3 Table 1 exponents a (excess = Õ(N^{−a})) by method family
FAMILY = {
    "sgd_avg_nonprivate": "nonprivate",
    "dp_ftrl_identity": "identity",
    "dp_ftrl_sigma_public": "designed",
    "dp_ftrl_sigma_oracle": "designed",
}


def rate_exponent(family: str, spectrum: str, r: float | None) -> float:
    """a with excess = Õ(N^{−a}) at constant ε (spec 002 §4.3)."""
    if spectrum == "exp":
        return {"nonprivate": 1.0, "identity": 0.5, "designed": 2.0 / 3.0}[family]
    if family == "nonprivate":
        return r / (1 + r)
    if family == "identity":
        return r / (1 + 2 * r)
    return min(r / (3 + r), 2 * r / (1 + 3 * r))


def slope_table(trials: pd.DataFrame, metric: str, nmin: float | None = None) -> pd.DataFrame:
    """Fitted slopes of log mean(metric) vs log N per (spectrum, r, label, ε) with the theory exponent."""
    keys = [c for c in ("data.spectrum", "data.r", "label", "mechanism", "epsilon") if c in trials]
    slopes = fit_slopes(summarise_metric(trials, metric, [*keys, "data.n"]), "data.n", keys, xmin=nmin)
    rows = []
    for rec in slopes.to_dict("records"):
        family = FAMILY.get(rec.get("mechanism", ""))
        spectrum = rec.get("data.spectrum", "poly")
        r = rec.get("data.r")
        if family is None:
            continue
        a = rate_exponent(family, spectrum, r)
        rows.append(
            {
                "spectrum": spectrum if spectrum == "exp" else f"poly r={r:g}",
                "label": rec["label"],
                "epsilon": "∞" if family == "nonprivate" else f"{rec['epsilon']:g}",
                "slope": round(rec["slope"], 3),
                "theory -a": round(-a, 3),
                "one-sided ok (slope ≤ -a+0.1)": bool(rec["slope"] <= -a + 0.1),
                "points": rec["points"],
            }
        )
    table = pd.DataFrame(rows)
    return table.drop_duplicates(subset=["spectrum", "label", "epsilon"]) if len(table) else table


def diagnostics_table(trials: pd.DataFrame, metric: str, x: str = "epsilon") -> pd.DataFrame:
    """mean ± ci95 of ``metric`` with the mean η, clip% and τ per (dataset, label, x)."""
    keys = [c for c in ("dataset_id", "label") if c in trials and c != x]
    points = summarise_metric(trials, metric, [*keys, x])
    extra = {}
    for column, name in (("info.eta", "eta"), ("info.clip_frac", "clip%"), ("info.tau", "tau")):
        if column in trials:
            extra[name] = trials.groupby([*keys, x])[column].mean()
    out = points.set_index([*keys, x])
    out = pd.DataFrame(
        {
            f"{metric} ± ci95": [f"{m:.3g} ± {h - m:.2g}" for m, h in zip(out["centre"], out["hi"], strict=True)],
            "R": out["count"].astype(int),
        },
        index=out.index,
    )
    for name, series in extra.items():
        values = series.reindex(out.index)
        out[name] = [f"{v * 100:.1f}" if name == "clip%" else f"{v:.4g}" for v in values]
    return out.reset_index()


def _certification_note(trials: pd.DataFrame) -> str:
    if "info.privacy_certified" not in trials:
        return ""
    bad = trials[trials["info.privacy_certified"].astype(str) == "False"]["label"].unique()
    return f"NOT certified (paper constant under replace-one): {', '.join(map(str, bad))}" if len(bad) else ""


def _write(table: pd.DataFrame, path: Path, echo: Callable[[str], None]) -> Path:
    write_atomic(path, table.to_csv(index=False))
    echo(format_table(table) if len(table) else "(no rows)")
    echo(f"wrote {path}")
    return path


@registry.register_analysis(
    "ftrl_rates",
    summary="spec 002 §4.3: fitted log–log slopes of the excess vs N next to Table 1's exponents "
    "(E1 runs); -o metric=excess_pop_paper nmin=4096",
)
def ftrl_rates(runs: list[Path], options: dict[str, str], echo: Callable[[str], None]) -> list[Path]:
    o = registry.analysis_options("ftrl_rates", options, {"metric": "excess_pop_paper", "nmin": None})
    written = []
    for run_dir in runs:
        run = load_run(run_dir)
        if o["metric"] not in run.trials or "data.n" not in run.trials or run.trials["data.n"].nunique() < 2:
            raise ValueError(f"ftrl_rates: {run.path} must sweep data.n and record {o['metric']!r}")
        echo(
            f"# {run.name}: fitted log–log slopes of mean {o['metric']} vs N"
            + (f" (N ≥ {o['nmin']:g})" if o["nmin"] else "")
        )
        written.append(_write(slope_table(run.trials, o["metric"], o["nmin"]), run.path / "ftrl_rates.csv", echo))
        if note := _certification_note(run.trials):
            echo(note)
    return written


@registry.register_analysis(
    "ftrl_diagnostics",
    summary="DP-FTRL mean ± 95% CI per curve and x with the mechanisms' η, clip% and τ; "
    "-o metric=excess_pop_paper x=epsilon",
)
def ftrl_diagnostics(runs: list[Path], options: dict[str, str], echo: Callable[[str], None]) -> list[Path]:
    o = registry.analysis_options("ftrl_diagnostics", options, {"metric": "excess_pop_paper", "x": "epsilon"})
    written = []
    for run_dir in runs:
        run = load_run(run_dir)
        for column in (o["metric"], o["x"]):
            if column not in run.trials:
                raise ValueError(f"ftrl_diagnostics: {column!r} is not a column of {run.path / 'trials.csv'}")
        echo(f"# {run.name}: {run.title}")
        table = diagnostics_table(run.trials, o["metric"], o["x"])
        written.append(_write(table, run.path / "ftrl_diagnostics.csv", echo))
        if note := _certification_note(run.trials):
            echo(note)
    return written
