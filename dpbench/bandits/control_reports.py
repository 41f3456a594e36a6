"""Analyses behind the bandit rows of the claims table (issue 17), run by ``dpbench analyze NAME``.

* ``bandit-ratios RUN`` — Reg(T, ε)/Reg(T, ∞) of every private algorithm and Reg(alg, ∞)/Reg(reference) against
  every non-private reference (LinUCB), ratio of mean regrets paired by trial (same instance, contexts and reward
  coins), percentile-bootstrap 95% CI over trials, at T = 2^16 and T_max (``-o at=65536,1048576``).
* ``bandit-dimfree-control RUN`` — regret vs T of SquareCB with the private dimension-free oracles next to the
  perfect oracle with the same exploration schedule (configs/bandits/bandit_ctrl_dimfree.yaml), per d, and the
  ratio private/perfect at T_max with CIs.
* ``bandit-f8 RUN`` — spec 001 F8 regression half: median ‖θ̂ − θ*‖²_Σ vs d of the dimension-free oracles
  (configs/bandits/bandit_ctrl_f8.yaml) and the log–log slope vs d with a bootstrap CI.
* ``bandit-coverage`` — spec 001 F5: empirical coverage P_x(∀a: |f̂ − f*| ≤ b̂) and E b̂ vs the epoch size N of
  the JDP oracles at the widths the regret figures use (IWR c_b = 0.025, SSP c_b = 1) and at the theory widths
  (c_b = 1, calibrated or theory preset); uniform-action data on G-Sphere(5, 10); evaluation seeds disjoint from
  the c_b pilot of :mod:`dpbench.bandits.calibrate`.

Synthetic demonstrations/controls, not reproductions: the papers have no experiments.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from dpbench import registry
from dpbench.analysis.figures.panels import finish_grid, median_panels, panel_grid
from dpbench.analysis.figures.save import save_figures
from dpbench.analysis.stats import curve_slopes, fmt_ci, halfwidth95, paired_ratio_ci

COVERAGE_ROOT = 17_000_017  # ≠ calibrate.PILOT_ROOT: evaluation seeds disjoint from the pilot's


def read_bandit_run(run: Path) -> pd.DataFrame:
    path = Path(run) / "trials.csv"
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found (run `dpbench run` first)")
    trials = pd.read_csv(path)
    if "T" not in trials or "regret" not in trials:
        raise ValueError(f"{path} is not a bandit run (no T/regret columns)")
    trials["epsilon"] = trials["epsilon"].astype(float)
    return trials


def nearest_checkpoint(trials: pd.DataFrame, target: int) -> int:
    checkpoints = np.sort(trials["T"].unique())
    return int(checkpoints[np.argmin(np.abs(np.log(checkpoints) - math.log(target)))])


def _regret(trials: pd.DataFrame, dataset: str, label: str, eps: float, T: int) -> pd.Series:
    sel = trials[(trials["dataset_id"] == dataset) & (trials["label"] == label) & (trials["T"] == T)]
    sel = sel[np.isinf(sel["epsilon"])] if math.isinf(eps) else sel[np.isclose(sel["epsilon"], eps)]
    return sel.set_index("trial")["regret"]


def paired_mean_ratio(a: pd.Series, b: pd.Series, rng: np.random.Generator, names: tuple[str, str]) -> dict:
    """Two regret series paired by trial (their common index): each mean (under ``names``), the ratio of the means
    with its paired bootstrap 95% CI (``ratio``, ``lo``, ``hi``) and the number of paired trials."""
    joined = pd.concat([a.rename("a"), b.rename("b")], axis=1, join="inner")
    ratio, lo, hi = paired_ratio_ci(joined["a"], joined["b"], rng, stat=np.mean)
    means = {names[0]: float(joined["a"].mean()), names[1]: float(joined["b"].mean())}
    return {**means, "ratio": ratio, "lo": lo, "hi": hi, "trials": len(joined)}


def regret_ratio(
    trials: pd.DataFrame, dataset: str, num: tuple[str, float], den: tuple[str, float], T: int, rng: np.random.Generator
) -> dict:
    """Ratio of mean regrets num/den at checkpoint T, paired by trial, with its bootstrap 95% CI."""
    a = _regret(trials, dataset, *num, T)
    b = _regret(trials, dataset, *den, T)
    pair = {"numerator": f"{num[0]} @ ε={num[1]:g}", "denominator": f"{den[0]} @ ε={den[1]:g}"}
    return {"dataset_id": dataset, "T": T, **pair, **paired_mean_ratio(a, b, rng, ("mean_num", "mean_den"))}


def ratio_table(trials: pd.DataFrame, at: list[int], seed: int = 0) -> pd.DataFrame:
    """Private/non-private ratios of every private algorithm and algorithm(∞)/reference ratios."""
    rng = np.random.default_rng(seed)
    rows = []
    for dataset, part in trials.groupby("dataset_id", sort=False):
        refs = list(pd.unique(part.loc[part["privacy_model"] == "none", "label"]))
        private = [lab for lab in pd.unique(part["label"]) if lab not in refs]
        for target in at:
            T = nearest_checkpoint(part, target)
            for label in private:
                eps_values = sorted(pd.unique(part.loc[part["label"] == label, "epsilon"]))
                if math.inf not in eps_values:
                    continue
                for eps in [e for e in eps_values if math.isfinite(e)]:
                    rows.append(regret_ratio(part, dataset, (label, eps), (label, math.inf), T, rng))
                for ref in refs:
                    rows.append(regret_ratio(part, dataset, (label, math.inf), (ref, math.inf), T, rng))
    return pd.DataFrame(rows)


def _echo_table(table: pd.DataFrame, echo: Callable[[str], None]) -> None:
    shown = table.assign(
        ratio_ci=[fmt_ci(r, lo, hi, 3) for r, lo, hi in zip(table["ratio"], table["lo"], table["hi"], strict=True)]
    )
    cols = [
        c
        for c in ("dataset_id", "T", "numerator", "denominator", "mean_num", "mean_den", "ratio_ci", "trials")
        if c in shown
    ]
    with pd.option_context("display.width", 250, "display.max_columns", 20, "display.max_colwidth", 60):
        echo(shown[cols].to_string(index=False, float_format=lambda v: f"{v:.4g}"))


@registry.register_analysis(
    "bandit-ratios",
    summary="paired regret ratios with bootstrap CIs: private/non-private, alg/LinUCB; -o at=T1,T2",
)
def bandit_ratios_analysis(runs: list[Path], options: dict[str, str], echo: Callable[[str], None]) -> None:
    o = registry.analysis_options("bandit-ratios", options, {"at": [], "out": ""})
    for run in runs:
        trials = read_bandit_run(run)
        t_max = int(trials["T"].max())
        at = [int(float(v)) for v in o["at"]] or sorted({min(65536, t_max), t_max})
        table = ratio_table(trials, at)
        out = Path(o["out"] or Path(run) / "regret_ratios.csv")
        table.to_csv(out, index=False)
        echo(f"{run}: ratios of mean regret (paired by trial, bootstrap 95% CI)")
        _echo_table(table, echo)
        echo(f"wrote {out}")


# ---------------------------------------------------------------------------------------------------------------
# SquareCB vs the perfect oracle


def _schedule_of(row_label: str) -> str:
    return "ldp" if "LDP" in row_label else "jdp"


def dimfree_control_figure(trials: pd.DataFrame, title: str, caption: str):
    """Rows: JDP, LDP schedule; columns: d. Solid: private SquareCB at each ε (ε = ∞ black); dashed: perfect oracle
    with the schedule of the same ε."""
    perfect = trials[trials["mechanism"] == "squarecb_perfect_oracle"]
    private = trials[trials["mechanism"] != "squarecb_perfect_oracle"]
    ds = sorted(pd.unique(trials["data.d"]))
    rows = [("jdp", "squarecb_jdp"), ("ldp", "squarecb_ldp")]
    eps_all = sorted({e for e in pd.unique(private["epsilon"])}, key=lambda e: (math.isinf(e), e))
    colour = {e: ("black" if math.isinf(e) else f"C{i}") for i, e in enumerate(eps_all)}
    panels = panel_grid(len(rows), len(ds), 3.8 * len(ds) + 2.8, 3.1 * len(rows) + 1.0, caption)
    axes = panels.axes
    handles: dict[str, object] = {}
    for r, (schedule, mech) in enumerate(rows):
        for c, d in enumerate(ds):
            ax = axes[r, c]
            priv = private[(private["mechanism"] == mech) & (private["data.d"] == d)]
            perf = perfect[(perfect["hp.schedule"] == schedule) & (perfect["data.d"] == d)]
            for eps in eps_all:
                for sub, style, kind in (
                    (priv[_eps_mask(priv, eps)], "-", "private oracle"),
                    (perf[_eps_mask(perf, eps, "hp.schedule_epsilon")], "--", "perfect oracle"),
                ):
                    if sub.empty:
                        continue
                    agg = sub.groupby("T")["regret"].agg(["mean", "std", "count"])
                    half = halfwidth95(agg["std"].fillna(0), agg["count"])
                    (line,) = ax.plot(agg.index, agg["mean"], color=colour[eps], linestyle=style, linewidth=1.3)
                    ax.fill_between(
                        agg.index,
                        (agg["mean"] - half).clip(lower=1e-9),
                        agg["mean"] + half,
                        color=colour[eps],
                        alpha=0.12,
                        linewidth=0,
                    )
                    name = f"{kind}, ε = {'∞' if math.isinf(eps) else f'{eps:g}'}"
                    handles.setdefault(name, line)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.grid(True, alpha=0.3)
            ax.set_title(
                f"{'JDP (001 Alg 5)' if schedule == 'jdp' else 'LDP (001 Alg 6)'} schedule, d = {d}", fontsize=9
            )
            if r == len(rows) - 1:
                ax.set_xlabel("T")
            if c == 0:
                ax.set_ylabel("cumulative regret")
    return finish_grid(panels, title=title, legend=handles, legend_inches=2.5)


def _eps_mask(frame: pd.DataFrame, eps: float, column: str = "epsilon") -> pd.Series:
    if column not in frame:
        return pd.Series(False, index=frame.index)
    values = frame[column].astype(float)
    return np.isinf(values) if math.isinf(eps) else np.isclose(values, eps)


def perfect_ratio_table(trials: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Reg(private SquareCB, ε)/Reg(perfect oracle, schedule of ε) at T_max per (d, schedule, ε), paired by trial."""
    rng = np.random.default_rng(seed)
    T = int(trials["T"].max())
    last = trials[trials["T"] == T]
    rows = []
    for (d, mech), priv in last[last["mechanism"] != "squarecb_perfect_oracle"].groupby(["data.d", "mechanism"]):
        schedule = "ldp" if mech == "squarecb_ldp" else "jdp"
        perf = last[
            (last["mechanism"] == "squarecb_perfect_oracle") & (last["hp.schedule"] == schedule) & (last["data.d"] == d)
        ]
        for eps, part in priv.groupby("epsilon"):
            ref = perf[_eps_mask(perf, float(eps), "hp.schedule_epsilon")].set_index("trial")["regret"]
            if ref.empty:
                continue
            cell = {"d": int(d), "algorithm": mech, "epsilon": float(eps), "T": T}
            names = ("regret_private", "regret_perfect")
            rows.append({**cell, **paired_mean_ratio(part.set_index("trial")["regret"], ref, rng, names)})
    return pd.DataFrame(rows)


@registry.register_analysis(
    "bandit-dimfree-control",
    summary="SquareCB vs the perfect oracle with the same schedule (figure + ratio CIs)",
)
def dimfree_control_analysis(runs: list[Path], options: dict[str, str], echo: Callable[[str], None]) -> None:
    o = registry.analysis_options("bandit-dimfree-control", options, {"out": "", "caption": ""})
    run = Path(runs[0])
    trials = pd.concat([read_bandit_run(r) for r in runs], ignore_index=True)
    table = perfect_ratio_table(trials)
    stem = Path(o["out"] or run / "dimfree_control")
    table.to_csv(f"{stem}_ratios.csv", index=False)
    with pd.option_context("display.width", 250, "display.max_columns", 20):
        echo(
            table.assign(
                ratio=[fmt_ci(r, lo, hi, 3) for r, lo, hi in zip(table["ratio"], table["lo"], table["hi"], strict=True)]
            )
            .drop(columns=["lo", "hi"])
            .to_string(index=False, float_format=lambda v: f"{v:.4g}")
        )
    fig = dimfree_control_figure(
        trials,
        "SquareCB with the private dimension-free oracles vs a perfect oracle "
        "(θ̂ = θ*) with the same exploration schedule",
        o["caption"],
    )
    for path in save_figures(fig, stem):
        echo(f"wrote {path}")


# ---------------------------------------------------------------------------------------------------------------
# F8 regression half


@registry.register_analysis(
    "bandit-f8",
    summary="spec 001 F8: median ‖θ̂−θ*‖²_Σ vs d of the dimension-free oracles + slope-vs-d CIs",
)
def bandit_f8_analysis(runs: list[Path], options: dict[str, str], echo: Callable[[str], None]) -> None:
    from dpbench.analysis.runs import load_run

    o = registry.analysis_options("bandit-f8", options, {"out": "", "caption": "", "metric": "param_error_sigma"})
    run = load_run(runs[0])
    trials = run.trials
    metric = o["metric"]
    rows = []
    for (label, eps), groups, (slope, lo, hi) in curve_slopes(
        trials, ["label", "epsilon"], "data.d", metric, np.random.default_rng(0)
    ):
        medians = {int(d): float(np.median(v)) for d, v in groups.items()}
        rows.append(
            {
                "label": label,
                "epsilon": float(eps),
                **{f"median_d{d}": m for d, m in medians.items()},
                "slope_vs_d": slope,
                "lo": lo,
                "hi": hi,
            }
        )
    table = pd.DataFrame(rows)
    stem = Path(o["out"] or run.path / "f8")
    table.to_csv(f"{stem}_slopes.csv", index=False)
    with pd.option_context("display.width", 250, "display.max_columns", 20):
        echo(table.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    fig = median_panels(
        trials.assign(panel="G-PowerLaw regression"),
        metric,
        "data.d",
        rows="panel",
        cols="epsilon",
        reference_labels=("θ = 0",),
        title=run.title,
        caption=o["caption"] or run.caption,
        xlabel="d",
        ylabel="median ‖θ̂ − θ*‖²_Σ",
    )
    for path in save_figures(fig, stem):
        echo(f"wrote {path}")


# ---------------------------------------------------------------------------------------------------------------
# F5 coverage


#: (name, oracle, preset, c_b): the widths of the regret figures and the theory widths
COVERAGE_VARIANTS = (
    ("IWR-DP, calibrated, c_b = 0.025 (used)", "iwr", "calibrated", 0.025),
    ("IWR-DP, calibrated, c_b = 1", "iwr", "calibrated", 1.0),
    ("IWR-DP, theory preset, c_b = 1", "iwr", "theory", 1.0),
    ("SSP-OLS, c_b = 1 (used)", "ssp", "calibrated", 1.0),
)


def coverage_table(
    sizes: list[int],
    epsilons: list[float],
    seeds: int,
    *,
    d: int = 5,
    n_arms: int = 10,
    delta: float = 1e-5,
    fail_prob: float = 2.0**-20,
    n_eval: int = 2000,
) -> pd.DataFrame:
    """Per (variant, seed, N, ε): coverage P_x(∀a: |f̂ − f*| ≤ b̂) on n_eval fresh contexts and mean width E b̂."""
    from dpbench.bandits.envs import get_env
    from dpbench.bandits.oracles import iwr_dp_fit, ssp_ols_fit
    from dpbench.bandits.simulator import DataLedger, EpochData

    info = get_env("sphere")
    rows = []
    for seed in range(seeds):
        env = info.make(np.random.default_rng([COVERAGE_ROOT, seed, 0]), d=d, n_arms=n_arms)
        for N in sizes:
            drng = np.random.default_rng([COVERAGE_ROOT, seed, 1, N])
            Phi = env.contexts(drng, N)
            chosen = Phi[np.arange(N), drng.integers(env.n_arms, size=N)]
            y = env.reward(env.mean(chosen[:, None, :])[:, 0], drng.random(N))
            Phi_eval = env.contexts(drng, n_eval)
            truth = env.mean(Phi_eval)
            for e_idx, eps in enumerate(epsilons):
                for v_idx, (name, oracle, preset, c_b) in enumerate(COVERAGE_VARIANTS):
                    rng = np.random.default_rng([COVERAGE_ROOT, seed, 2, N, e_idx, v_idx])
                    data = EpochData(chosen, y, 0, DataLedger(N))
                    if oracle == "iwr":
                        est = iwr_dp_fit(
                            data, eps, delta, rng, d_A=env.d_A, fail_prob=fail_prob, preset=preset, c_b=c_b
                        )
                    else:
                        est = ssp_ols_fit(data, eps, delta, rng, fail_prob=fail_prob, local=False, c_b=c_b)
                    f, b = est.predict(Phi_eval)
                    err = np.abs(f - truth)
                    rows.append(
                        {
                            "variant": name,
                            "seed": seed,
                            "N": N,
                            "epsilon": eps,
                            "coverage": float(np.all(err <= b, axis=1).mean()),
                            "mean_width": float(b.mean()),
                            "informative_share": float((b < est.cap).mean()),
                            "max_error": float(err.max()),
                        }
                    )
    return pd.DataFrame(rows)


def coverage_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Mean coverage over seeds with a normal 95% CI, and the mean width, per (variant, ε, N)."""
    g = table.groupby(["variant", "epsilon", "N"], sort=False)
    out = g.agg(
        coverage=("coverage", "mean"),
        sd=("coverage", "std"),
        seeds=("coverage", "size"),
        mean_width=("mean_width", "mean"),
        informative_share=("informative_share", "mean"),
    ).reset_index()
    out["ci95"] = halfwidth95(out["sd"].fillna(0), out["seeds"])
    return out.drop(columns="sd")


def coverage_figure(summary: pd.DataFrame, title: str, caption: str):
    eps_values = sorted(pd.unique(summary["epsilon"]), key=lambda e: (math.isinf(e), e))
    variants = list(pd.unique(summary["variant"]))
    panels = panel_grid(2, len(eps_values), 4.0 * len(eps_values) + 3.0, 6.6, caption)
    axes = panels.axes
    handles = {}
    for c, eps in enumerate(eps_values):
        for v, name in enumerate(variants):
            part = summary[(summary["variant"] == name) & (summary["epsilon"] == eps)].sort_values("N")
            (line,) = axes[0, c].plot(part["N"], part["coverage"], marker="o", markersize=3, color=f"C{v}")
            axes[0, c].fill_between(
                part["N"],
                (part["coverage"] - part["ci95"]).clip(0, 1),
                (part["coverage"] + part["ci95"]).clip(0, 1),
                color=f"C{v}",
                alpha=0.15,
            )
            axes[1, c].plot(part["N"], part["mean_width"], marker="o", markersize=3, color=f"C{v}")
            handles.setdefault(name, line)
        axes[0, c].axhline(0.95, color="grey", linestyle=":", linewidth=1)
        axes[0, c].set_title(f"ε = {'∞ (σ = 0)' if math.isinf(eps) else f'{eps:g}'}", fontsize=9)
        axes[0, c].set_ylim(min(0.9, float(summary["coverage"].min()) - 0.02), 1.005)
        axes[1, c].set_yscale("log")
        for r in (0, 1):
            axes[r, c].set_xscale("log", base=2)
            axes[r, c].grid(True, alpha=0.3)
        axes[1, c].set_xlabel("epoch size N")
    axes[0, 0].set_ylabel("coverage P_x(∀a: |f̂−f*| ≤ b̂)")
    axes[1, 0].set_ylabel("mean width E b̂ (capped at 2)")
    return finish_grid(panels, title=title, legend=handles, legend_inches=2.7)


@registry.register_analysis(
    "bandit-coverage",
    needs_runs=False,
    summary="spec 001 F5: coverage and mean width of the JDP confidence widths vs N; -o seeds= max_log2= out=STEM",
)
def bandit_coverage_analysis(runs: list[Path], options: dict[str, str], echo: Callable[[str], None]) -> None:
    o = registry.analysis_options(
        "bandit-coverage", options, {"seeds": 20, "max_log2": 17, "out": "results/bandit_ctrl_coverage/coverage"}
    )
    seeds, max_log2 = o["seeds"], o["max_log2"]
    sizes = [2**k for k in range(8, max_log2 + 1)]
    epsilons = [0.5, 1.0, math.inf]
    table = coverage_table(sizes, epsilons, seeds)
    summary = coverage_summary(table)
    stem = Path(o["out"])
    stem.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(f"{stem}_trials.csv", index=False)
    summary.to_csv(f"{stem}_summary.csv", index=False)
    with pd.option_context("display.width", 250, "display.max_rows", 500):
        echo(summary.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    caption = (
        f"Spec 001 F5, synthetic, not a reproduction. G-Sphere(d = 5, |A| = 10), one epoch of N uniform-action "
        f"rounds; coverage on 2000 fresh contexts, mean over {seeds} seeds (disjoint from the c_b pilot) ± 1.96·"
        "sd/√seeds; δ = 1e-5, paper calibration, failure probability 2^-20. c_b = 0.025 is the multiplier the "
        "JDP regret figures use (bandit_jdp*.yaml); c_b = 1 with the theory preset is the paper's width."
    )
    fig = coverage_figure(summary, "Confidence-width coverage of the JDP elimination oracles (spec 001 F5)", caption)
    for path in save_figures(fig, stem):
        echo(f"wrote {path}")
