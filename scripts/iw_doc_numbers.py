"""The numbers quoted in docs/info_weighted.md (claims table and Results) from finished E2–E7 runs, with 95% CIs.

Reads only ``RESULTS/iw_e*/trials.csv`` (runs nothing, writes nothing) and prints, per experiment:

* ratios of medians num/den per cell with a paired percentile bootstrap (pairs = (data_draw, trial), resampled
  jointly; 2,000 resamples; a fresh ``default_rng(SEED)`` per cell, so a number does not depend on the order of
  the cells) — :func:`dpbench.analysis.stats.paired_ratio_ci`;
* medians (or means) with a percentile bootstrap CI — :func:`dpbench.analysis.stats.median_ci`;
* log–log slopes of the median vs n with the bootstrap resampling whole *data draws* within each n (a cluster
  version of ``dpbench analyze iwr-slopes``, which resamples single fits and gives the slopes the docs quote;
  printed as a check);
* E4: IWR-LDP's predicted λ-bias λ/(a+λ)·E|<φ,θ*>| next to its median L1 error; E5: Alg 1's normalised error and
  mean error / Lemma 3.1 over the unsaturated cells (both mean errors ≤ 0.3, as in ``iw_e5_ratio.png``).

Usage: PYTHONPATH=. python scripts/iw_doc_numbers.py [RESULTS_DIR]   (default results)
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from dpbench.analysis.runs import load_run
from dpbench.analysis.stats import RESAMPLES, fmt_ci, loglog_slope, median_ci, paired_ratio_ci
from dpbench.papers.iwr.generators import c_d

SEED = 0
SATURATION = 0.3  # E5: a mean error above this is "saturated" (dpbench.papers.iwr.analyses)
PAIR = ["data_draw", "trial"]
Stat = Callable[[np.ndarray], float]


def load(results: Path, name: str) -> pd.DataFrame:
    """trials.csv of one run; runs with a single data draw get ``data_draw = 0``."""
    trials = load_run(results / name).trials
    if "data_draw" not in trials:
        trials = trials.assign(data_draw=0)
    return trials


def ratios(
    trials: pd.DataFrame, num: str, den: str, by: Sequence[str], metric: str, *, stat: Stat = np.median
) -> pd.DataFrame:
    """stat(metric | num) / stat(metric | den) per ``by`` cell, paired by (data_draw, trial), with a bootstrap CI."""
    rows = []
    for cell, part in trials.groupby(list(by), sort=True):
        a = part[part["label"] == num].set_index(PAIR)[metric].rename("a")
        b = part[part["label"] == den].set_index(PAIR)[metric].rename("b")
        joined = pd.concat([a, b], axis=1, join="inner")
        ratio, lo, hi = paired_ratio_ci(joined["a"], joined["b"], np.random.default_rng(SEED), stat=stat)
        rows.append({**dict(zip(by, cell, strict=True)), "ratio": fmt_ci(ratio, lo, hi), "pairs": len(joined)})
    return pd.DataFrame(rows)


def medians(trials: pd.DataFrame, labels: Sequence[str], by: Sequence[str], metric: str) -> pd.DataFrame:
    """Median of ``metric`` with a percentile bootstrap CI per ``by`` cell and label."""
    rows = []
    part = trials[trials["label"].isin(labels)]
    for cell, group in part.groupby([*by, "label"], sort=True):
        med, lo, hi = median_ci(group[metric], np.random.default_rng(SEED))
        rows.append(
            {**dict(zip([*by, "label"], cell, strict=True)), "median": fmt_ci(med, lo, hi, 3), "fits": len(group)}
        )
    return pd.DataFrame(rows)


def mean_ci(values: pd.Series) -> str:
    """Mean with a percentile bootstrap CI."""
    v = values.to_numpy(dtype=float)
    rng = np.random.default_rng(SEED)
    boot = v[rng.integers(0, v.size, size=(RESAMPLES, v.size))].mean(axis=1)
    return fmt_ci(float(v.mean()), *np.quantile(boot, [0.025, 0.975]), 3)


def cluster_slope(trials: pd.DataFrame, label: str, metric: str, by: Sequence[str]) -> pd.DataFrame:
    """Slope of log median(metric) vs log n per ``by`` cell; bootstrap resamples data draws within each n."""
    rows = []
    part = trials[trials["label"] == label]
    for cell, group in part.groupby(list(by), sort=True):
        per_n = {
            float(n): [g[metric].to_numpy() for _, g in gn.groupby("data_draw")] for n, gn in group.groupby("data.n")
        }
        xs = sorted(per_n)
        slope = loglog_slope(xs, [np.median(np.concatenate(per_n[x])) for x in xs])
        rng = np.random.default_rng(SEED)
        boot = np.empty(RESAMPLES)
        for r in range(RESAMPLES):
            ys = []
            for x in xs:
                draws = per_n[x]
                pick = rng.integers(0, len(draws), len(draws))
                ys.append(np.median(np.concatenate([draws[i] for i in pick])))
            boot[r] = loglog_slope(xs, ys)
        lo, hi = np.quantile(boot, [0.025, 0.975])
        rows.append(
            {
                **dict(zip(by, cell, strict=True)),
                "label": label,
                "slope (draws resampled)": fmt_ci(slope, lo, hi, 3),
                "n values": len(xs),
            }
        )
    return pd.DataFrame(rows)


def show(title: str, table: pd.DataFrame) -> None:
    with pd.option_context("display.width", 400, "display.max_rows", 500, "display.max_columns", 30):
        print(f"\n## {title}\n{table.to_string(index=False)}")


def e2(results: Path) -> None:
    t = load(results, "iw_e2_central_vs_eps")
    cell = ["dataset", "data.n", "epsilon"]
    iwr = "IWR-DP (Alg 4+5)"
    for den in ("AdaSSP [Wang '18]", "SSP-ball"):
        r = ratios(t, iwr, den, cell, "param_error_sigma")
        show(f"E2 {iwr} / {den}", r.pivot(index=["dataset", "data.n"], columns="epsilon", values="ratio").reset_index())
    for num in ("IWR-DP-ERM (Alg 13+14)", "DP-SGD improper (Alg 16)", "oracle: p known (Alg 10)"):
        r = ratios(t, num, iwr, cell, "param_error_sigma")
        show(f"E2 {num} / {iwr}", r.pivot(index=["dataset", "data.n"], columns="epsilon", values="ratio").reset_index())
    show(
        "E2 medians",
        medians(t, [iwr, "SSP-ball", "AdaSSP [Wang '18]", "θ = 0", "OLS (non-private)"], cell, "param_error_sigma"),
    )


def e3(results: Path) -> None:
    t = load(results, "iw_e3_rates")
    for label in ("IWR-DP", "AdaSSP", "SSP-ball", "OLS (non-private)"):
        show(f"E3 slope {label}", cluster_slope(t, label, "param_error_sigma", ["dataset", "epsilon"]))
    cell = ["dataset", "epsilon", "data.n"]
    show("E3 IWR-DP / AdaSSP", ratios(t, "IWR-DP", "AdaSSP", cell, "param_error_sigma"))
    show(
        "E3 medians of ‖θ̂−θ*‖²_Σ·n/d", medians(t[t["epsilon"] == 0.1], ["IWR-DP", "AdaSSP"], cell, "scaled_excess_risk")
    )


def e4(results: Path) -> None:
    t = load(results, "iw_e4_ldp")
    cell = ["dataset", "data.n", "epsilon"]
    show("E4 medians L1", medians(t, sorted(set(t["label"])), cell, "l1_error"))
    show("E4 IWR-LDP / LDP-SSP", ratios(t, "IWR-LDP (Alg 2+3)", "LDP-SSP (ball LS)", cell, "l1_error"))
    for label in ("IWR-LDP (Alg 2+3)", "LDP-SSP (ball LS)", "oracle: p known (Alg 9, l2-ball)"):
        show(f"E4 slope {label}", cluster_slope(t, label, "l1_error", ["dataset", "epsilon"]))
    # λ-bias of IWR-LDP (isotropic p, ‖θ*‖ = 1): population target (a/(a+λ))θ*, a = E‖φ‖/d, so the L1 bias is
    # λ/(a+λ)·E|<φ,θ*>|; E|<φ,θ*>| = c_d·E‖φ‖ is the L1 error of θ̂ = 0.
    iwr = t[t["label"] == "IWR-LDP (Alg 2+3)"]
    zero = t[t["label"] == "θ = 0"].groupby(cell)["l1_error"].median().rename("l1_zero")
    lam = iwr.groupby(cell)["info.lam"].median().rename("lam")
    bias = pd.concat([lam, zero], axis=1).reset_index()
    d = bias["dataset"].map(t.groupby("dataset")["data.d"].first()).astype(int)
    bias["a"] = [z / c_d(k) / k for z, k in zip(bias["l1_zero"], d, strict=True)]
    bias["bias_pred"] = bias["lam"] / (bias["a"] + bias["lam"]) * bias["l1_zero"]
    measured = medians(iwr, ["IWR-LDP (Alg 2+3)"], cell, "l1_error")
    bias = bias.merge(measured[[*cell, "median"]].rename(columns={"median": "measured median"}), on=cell)
    show("E4 IWR-LDP λ-bias (predicted vs measured median L1)", bias)


def e4b(results: Path) -> None:
    t = load(results, "iw_e4b_ldp_sgd")
    show(
        "E4b IWR-GLM-LDP / IWR-LDP",
        ratios(t, "IWR-GLM-LDP (Alg 2+11)", "IWR-LDP (Alg 2+3)", ["dataset", "epsilon"], "l1_error"),
    )


def e5(results: Path) -> None:
    t = load(results, "iw_e5_ldp_1d")
    cell = ["data.rho", "data.s", "data.n", "epsilon"]
    alg1, ssp = "Alg 1 (sign(φ)y, |φ|)", "Laplace SSP (φy, φ²)"
    med = ratios(t, ssp, alg1, cell, "abs_error_1d")
    mean = ratios(t, ssp, alg1, cell, "abs_error_1d", stat=np.mean)
    table = med.rename(columns={"ratio": "SSP/Alg1 medians"}).assign(**{"SSP/Alg1 means": mean["ratio"]})
    e_abs = t["data.rho"] + (1 - t["data.rho"]) * t["data.s"]
    e_sq = t["data.rho"] + (1 - t["data.rho"]) * t["data.s"] ** 2
    t = t.assign(
        E_abs=e_abs, ratio_pred=e_abs / e_sq, normalised=t["abs_error_1d"] * e_abs * t["epsilon"] * np.sqrt(t["data.n"])
    )
    g = t[t["label"] == alg1].groupby(cell)
    table["E|φ|/Eφ²"] = g["ratio_pred"].first().round(3).to_numpy()
    table["Alg1 mean err"] = g["abs_error_1d"].apply(mean_ci).to_numpy()
    table["Alg1 median err"] = [fmt_ci(*median_ci(v, np.random.default_rng(SEED)), 3) for _, v in g["abs_error_1d"]]
    table["Alg1 normalised (mean)"] = g["normalised"].mean().round(2).to_numpy()
    theory = 0.8 * np.sqrt((2 * (4 / g["epsilon"].first()) ** 2 + 1) / g["data.n"].first()) / g["E_abs"].first()
    table["Alg1 mean / theory"] = (g["abs_error_1d"].mean() / theory).round(3).to_numpy()
    means = t.groupby([*cell, "label"])["abs_error_1d"].mean().unstack("label")
    table["saturated"] = ((means[alg1] > SATURATION) | (means[ssp] > SATURATION)).to_numpy()
    show("E5 (SSP/Alg 1 paired ratios; Alg 1 error)", table)
    ok = table[~table["saturated"]]
    print(
        f"unsaturated cells (both mean errors ≤ {SATURATION:g}, as in iw_e5_ratio.png): {len(ok)} of {len(table)}; "
        f"Alg 1 normalised error {ok['Alg1 normalised (mean)'].min():.2f}–{ok['Alg1 normalised (mean)'].max():.2f}, "
        f"mean / theory {ok['Alg1 mean / theory'].min():.3f}–{ok['Alg1 mean / theory'].max():.3f}"
    )


def e7(results: Path) -> None:
    t = load(results, "iw_e7_real")
    cell = ["dataset", "epsilon"]
    for num, den in (("IWR-DP (000)", "AdaSSP [Wang '18]"), ("IHM (004), T=3", "IWR-DP (000)")):
        r = ratios(t, num, den, cell, "excess_train_mse")
        show(f"E7 {num} / {den}", r.pivot(index="dataset", columns="epsilon", values="ratio").reset_index())


def main(argv: Sequence[str]) -> None:
    results = Path(argv[0]) if argv else Path("results")
    for section in (e2, e3, e4, e4b, e5, e7):
        section(results)


if __name__ == "__main__":
    main(sys.argv[1:])
