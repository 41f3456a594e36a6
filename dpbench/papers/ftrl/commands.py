"""``dpbench ftrl-report RUN``: the numbers behind the DP-FTRL figures (spec 002 §4.3, §5.4).

* Runs over N (``data.n`` varies, E1): least-squares log–log slope of the mean excess vs N per curve and ε, printed
  next to the §4.3 Table 1 exponents (−a for excess = Õ(N^{−a}); the theory is an upper bound, so the check is
  one-sided: slope ≤ −a + 0.1).
* Other runs (E2–E5): per curve and x value, mean ± 1.96·std/√R of the metric with the mean η and clip fraction.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import pandas as pd
import typer

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
    from dpbench.results import aggregate, fitted_slope

    keys = [c for c in ("data.spectrum", "data.r", "label", "mechanism", "epsilon") if c in trials]
    agg = aggregate(trials, metric, x="data.n", by=keys)
    slopes = fitted_slope(agg, x="data.n", by=keys, xmin=nmin)
    rows = []
    for rec in slopes.to_dict("records"):
        family = FAMILY.get(rec.get("mechanism", ""))
        spectrum = rec.get("data.spectrum", "poly")
        r = rec.get("data.r")
        if family is None:
            continue
        a = rate_exponent(family, spectrum, r)
        rows.append({
            "spectrum": spectrum if spectrum == "exp" else f"poly r={r:g}",
            "label": rec["label"],
            "epsilon": "∞" if family == "nonprivate" else f"{rec['epsilon']:g}",
            "slope": round(rec["slope"], 3),
            "theory -a": round(-a, 3),
            "one-sided ok (slope ≤ -a+0.1)": bool(rec["slope"] <= -a + 0.1),
            "points": rec["points"],
        })
    table = pd.DataFrame(rows)
    return table.drop_duplicates(subset=["spectrum", "label", "epsilon"]) if len(table) else table


def eps_table(trials: pd.DataFrame, metric: str, x: str = "epsilon") -> pd.DataFrame:
    """mean ± ci95 of ``metric`` with the mean η and clip% per (dataset, label, x)."""
    from dpbench.results import aggregate

    keys = [c for c in ("dataset_id", "label") if c in trials and c != x]
    agg = aggregate(trials, metric, x=x, by=keys)
    extra = {}
    for column, name in (("info.eta", "eta"), ("info.clip_frac", "clip%"), ("info.tau", "tau")):
        if column in trials:
            extra[name] = trials.groupby([*keys, x])[column].mean()
    out = agg.set_index([*keys, x])
    out = pd.DataFrame({
        f"{metric} ± ci95": [f"{m:.3g} ± {c:.2g}" for m, c in zip(out["mean"], out["ci95"], strict=True)],
        "R": out["count"].astype(int),
    }, index=out.index)
    for name, series in extra.items():
        values = series.reindex(out.index)
        out[name] = [f"{v * 100:.1f}" if name == "clip%" else f"{v:.4g}" for v in values]
    return out.reset_index()


def register(app: typer.Typer) -> None:
    @app.command(name="ftrl-report")
    def ftrl_report(
        path: Annotated[Path, typer.Argument(help="a DP-FTRL run folder (results/ftrl_*)")],
        metric: Annotated[str, typer.Option(help="metric column")] = "excess_pop_paper",
        nmin: Annotated[float | None, typer.Option(help="fit slopes on N ≥ nmin only")] = None,
        x: Annotated[str, typer.Option(help="x column of the table (non-E1 runs)")] = "epsilon",
    ) -> None:
        """Print fitted rate slopes vs the spec's exponents (E1) or the mean ± CI table (other runs)."""
        from dpbench.results import format_table, load_run

        try:
            run = load_run(path)
        except (FileNotFoundError, ValueError) as err:
            typer.echo(f"error: {err}", err=True)
            raise typer.Exit(code=2) from None
        trials = run.trials
        if metric not in trials:
            typer.echo(f"error: metric {metric!r} not in {path}/trials.csv", err=True)
            raise typer.Exit(code=2)
        typer.echo(f"# {run.name}: {run.title}")
        if "data.n" in trials and trials["data.n"].nunique() > 1:
            table = slope_table(trials, metric, nmin)
            typer.echo(f"fitted log–log slopes of mean {metric} vs N" + (f" (N ≥ {nmin:g})" if nmin else ""))
        else:
            table = eps_table(trials, metric, x)
        with pd.option_context("display.width", 200):
            typer.echo(format_table(table) if len(table) else "(no rows)")
        if "info.privacy_certified" in trials:
            bad = trials[trials["info.privacy_certified"].astype(str) == "False"]["label"].unique()
            if len(bad):
                typer.echo(f"NOT certified (paper constant under replace-one): {', '.join(map(str, bad))}")
