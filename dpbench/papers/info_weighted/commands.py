"""``dpbench iw-e1``: spec 000 §7.3 E1 (population information matrices; no data, no noise)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    @app.command("iw-e1")
    def iw_e1(
        out: Annotated[Path, typer.Option(help="output folder")] = Path("results/iw_e1"),
    ) -> None:
        """E1 of spec 000 §7.3: PoP_IW vs PoP_SSP and the W interpolation vs T (table, comparison, figure)."""
        from dpbench.papers.info_weighted.e1 import run_e1

        for kind, path in run_e1(out).items():
            typer.echo(f"wrote {kind}: {path}")

    register_plot(app)
    register_reports(app)


def register_plot(app: typer.Typer) -> None:
    @app.command("iw-plot")
    def iw_plot(
        run_dir: Annotated[Path, typer.Argument(help="results/<name> of an iw_* run")],
        metric: Annotated[str, typer.Option(help="metric column")] = "param_error_sigma",
        x: Annotated[str, typer.Option(help="x column: epsilon or data.n")] = "epsilon",
        logy: Annotated[bool, typer.Option(help="log y axis")] = True,
    ) -> None:
        """Median + bootstrap 95% band figure of an information-weighted run (spec 000 §7.2 protocol)."""
        from dpbench.papers.info_weighted.plot import iw_figure

        typer.echo(f"wrote {iw_figure(run_dir, metric, x=x, logy=logy)}")


def register_reports(app: typer.Typer) -> None:
    @app.command("iw-report")
    def iw_report(
        run_dir: Annotated[Path, typer.Argument(help="results/<name> of an iw_* run")],
        metric: Annotated[str, typer.Option(help="metric column")] = "param_error_sigma",
        numerator: Annotated[str, typer.Option(help="curve label in the numerator")] = "IWR-DP",
        denominator: Annotated[str, typer.Option(help="curve label in the denominator")] = "AdaSSP",
        by: Annotated[str, typer.Option(help="extra grouping column besides dataset and ε")] = "",
        slope: Annotated[bool, typer.Option(help="also print log-log slopes of the medians vs data.n")] = False,
    ) -> None:
        """Median table of every curve and the ratio numerator/denominator of medians (closing notes)."""
        import pandas as pd

        from dpbench.papers.info_weighted.plot import ratio_table, slope_table, summarize
        from dpbench.results import load_run

        keys = ("dataset", by, "epsilon") if by else ("dataset_id", "epsilon")
        pd.set_option("display.width", 200)
        pd.set_option("display.max_rows", 500)
        trials = load_run(run_dir).trials
        summary = summarize(trials, metric, [*keys, "label"])
        wide = summary.pivot_table(index=list(keys), columns="label", values="median", sort=False)
        typer.echo(f"median {metric}:\n{wide.to_string(float_format=lambda v: f'{v:.3g}')}")
        ratios = ratio_table(run_dir, metric, numerator, denominator, by=keys)
        ratios.to_csv(Path(run_dir) / f"iw_ratio_{metric}.csv", index=False)
        typer.echo(f"\nratio of medians {numerator} / {denominator}:\n"
                   f"{ratios.to_string(index=False, float_format=lambda v: f'{v:.3g}')}")
        if slope:
            slopes = slope_table(run_dir, metric)
            typer.echo(f"\nlog-log slope of the median {metric} vs n:\n{slopes.to_string(index=False)}")

    @app.command("iw-e5-report")
    def iw_e5_report(run_dir: Annotated[Path, typer.Argument(help="results/iw_e5_ldp_1d")]) -> None:
        """E5 normalised errors E|θ̂−θ*|·E|φ|·α√T and the SSP/Alg 1 ratio figure."""
        import pandas as pd

        from dpbench.papers.info_weighted.plot import e5_report

        pd.set_option("display.width", 200)
        pd.set_option("display.max_rows", 500)
        table, fig = e5_report(run_dir)
        table.to_csv(Path(run_dir) / "iw_e5_table.csv", index=False)
        typer.echo(table.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
        typer.echo(f"wrote {fig}")
