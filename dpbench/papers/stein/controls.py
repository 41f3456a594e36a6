"""Controls behind the claims table of docs/stein.md (issue 17), run by ``dpbench analyze NAME``.

* ``stein-snr`` (no run needed) — the signal-to-noise ratio of Algorithms 1/2's Xᵀy release alone in the paper's
  cells, SNR = ‖n E[x y]‖ / (√(n p)·s_xy) (signal: the clean sum; noise: the norm of the summed per-user Gaussian
  noises N(0, n s_xy² I_p)). With an isotropic Σ (Gaussian diag, ±1/p) the direction Σ⁻¹(Σ ẑ_i) is off by an angle
  of order 1/SNR, so SNR < 1 means the error of ŵ stays ≈ 1 even if Σ were known exactly. E[x y] for the logistic
  GLM with soft labels: s²κ(s)·w* (Stein's lemma, κ(s) = E σ'(sZ)) for Gaussian Σ = s²I; exact enumeration of
  {±1/p}^p (p ≤ 12) or 2·10⁵ Monte-Carlo draws, averaged over 20 draws of w*, for ±1/p. Also the A8 table: the true
  ℓ2 sensitivity sup ‖x y(x) − x' y(x')‖₂ = 2p^{−1/2}e^{p^{−1/2}} of the exponential GLM on ±1/p data (‖w*‖ = 1)
  against the calibrated 2rB_y = 2.
* ``stein-ctrl RUN`` — figure (median ± bootstrap band vs ε, one panel per n) and the log–log slope of every curve vs
  ε with a stratified bootstrap CI (paper: error ∝ 1/ε², slope −2) for configs/stein/stein_ctrl_pm1_p5.yaml.

Synthetic controls of spec 003, not reproductions.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from dpbench import registry
from dpbench.analysis.figures.panels import median_panels
from dpbench.analysis.figures.save import save_figures
from dpbench.analysis.runs import load_run
from dpbench.analysis.stats import curve_slopes, fmt_ci
from dpbench.mechanisms.stein.calibration import clip_radius, stein_noise_scales
from dpbench.mechanisms.stein.families import get_family

PAPER_P = (5, 10, 20, 40)
PAPER_N = (100_000, 300_000, 700_000)
PAPER_EPS = (4.0, 10.0, 20.0)


def gauss_signal(s: float, nodes: int = 200) -> float:
    """‖E[x σ(⟨x, w*⟩)]‖ = s²κ(s), κ(s) = E σ'(sZ) (Gauss–Hermite), for x ~ N(0, s²I), ‖w*‖ = 1."""
    t, w = np.polynomial.hermite.hermgauss(nodes)
    z = math.sqrt(2.0) * s * t
    sig = 1.0 / (1.0 + np.exp(-z))
    kappa = float(np.sum(w * sig * (1.0 - sig)) / math.sqrt(math.pi))
    return s * s * kappa


def pm1_signal(p: int, rng: np.random.Generator, draws: int = 20, mc: int = 200_000) -> float:
    """E over w* ~ Unif(S^{p−1}) of ‖E_x[x (σ(⟨x, w*⟩) − ½)]‖ for x uniform on {±1/p}^p (exact for p ≤ 12)."""
    if p <= 12:
        X = np.array(list(itertools.product((-1.0, 1.0), repeat=p))) / p
    else:
        X = (2.0 * rng.integers(0, 2, size=(mc, p)) - 1.0) / p
    norms = []
    for _ in range(draws):
        g = rng.standard_normal(p)
        w = g / np.linalg.norm(g)
        y = 1.0 / (1.0 + np.exp(-(X @ w))) - 0.5
        norms.append(float(np.linalg.norm(X.T @ y / X.shape[0])))
    return float(np.mean(norms))


def xty_snr(
    n: int, p: int, epsilon: float, signal: float, r: float, calibration: str = "classical"
) -> tuple[float, float]:
    """(s_xy, SNR) of Alg 1/2's summed Xᵀy release: s_xy = σ(ε/2, δ/2, 2r) (B_y = 1), δ = n^{−1.1}, with the
    paper's ``classical`` Gaussian mechanism or the ``analytic`` one (dpbench's default); SNR = √n·signal/(√p·s_xy)."""
    s_xy = stein_noise_scales(epsilon, n**-1.1, r, 1.0, calibration).s_xy
    return s_xy, math.sqrt(n) * signal / (math.sqrt(p) * s_xy)


def snr_table(seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for p in PAPER_P:
        pm1 = pm1_signal(p, rng)
        for n, eps in itertools.product(PAPER_N, PAPER_EPS):
            for label, signal, r in (
                ("Gaussian diag, s = 1 (best case)", gauss_signal(1.0), clip_radius(p, 1.0, n)),
                ("Gaussian diag, s = 0.5 (median)", gauss_signal(0.5), clip_radius(p, 0.25, n)),
                ("±1/p (r = 1, ℓ1)", pm1, 1.0),
            ):
                for calibration in ("classical", "analytic"):
                    s_xy, snr = xty_snr(n, p, eps, signal, r, calibration)
                    rows.append(
                        {
                            "calibration": calibration,
                            "covariates": label,
                            "p": p,
                            "n": n,
                            "epsilon": eps,
                            "signal ‖E xy‖": signal,
                            "r": r,
                            "s_xy": s_xy,
                            "SNR": snr,
                        }
                    )
    return pd.DataFrame(rows)


def a8_table() -> pd.DataFrame:
    """Exponential GLM on ±1/p data: y = e^{⟨x,w*⟩} ≤ e^{p^{-1/2}} (> 1), yet sup‖xy − x'y'‖₂ ≤ 2p^{-1/2}e^{p^{-1/2}}
    < 2 = the calibrated 2rB_y."""
    fam = get_family("exponential")
    rows = []
    for p in PAPER_P:
        y_max = math.exp(1.0 / math.sqrt(p))
        rows.append(
            {
                "p": p,
                "max y = e^{1/√p}": y_max,
                "true ℓ2 sensitivity 2p^{-1/2}e^{1/√p}": 2 * y_max / math.sqrt(p),
                "calibrated 2·r·B_y (r = 1, B_y = 1)": 2.0 * fam.y_bound(1.0),
            }
        )
    return pd.DataFrame(rows)


@registry.register_analysis(
    "stein-snr",
    needs_runs=False,
    summary="spec 003: SNR of the Xᵀy release in the paper's cells + the A8 sensitivity table (issue 17); -o out=STEM",
)
def stein_snr_analysis(runs: list[Path], options: dict[str, str], echo: Callable[[str], None]) -> None:
    o = registry.analysis_options("stein-snr", options, {"out": "results/stein_ctrl_snr/snr"})
    table = snr_table()
    stem = Path(o["out"])
    stem.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(f"{stem}.csv", index=False)
    wide = table.pivot_table(index=["calibration", "covariates", "p", "n"], columns="epsilon", values="SNR", sort=False)
    with pd.option_context("display.width", 250, "display.max_rows", 200):
        echo(
            "SNR of Σ_i ẑ_i = ‖n E[xy]‖/(√(np)·s_xy) (logistic GLM, δ = n^-1.1; the paper's classical calibration"
            " and dpbench's analytic default):"
        )
        echo(wide.to_string(float_format=lambda v: f"{v:.2f}"))
        echo("\nA8: exponential GLM on ±1/p data (‖w*‖ = 1):")
        echo(a8_table().to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    echo(f"wrote {stem}.csv")


@registry.register_analysis(
    "stein-ctrl",
    summary="Stein control figure (median vs ε per n) + slopes vs ε with bootstrap CIs (issue 17)",
)
def stein_ctrl_analysis(runs: list[Path], options: dict[str, str], echo: Callable[[str], None]) -> None:
    o = registry.analysis_options("stein-ctrl", options, {"metric": "stein_err2", "out": "", "caption": ""})
    run = load_run(runs[0])
    trials = run.trials
    metric = o["metric"]
    rows = []
    for (n, label), groups, (slope, lo, hi) in curve_slopes(
        trials, ["data.n", "label"], "epsilon", metric, np.random.default_rng(0)
    ):
        meds = {f"median ε={e:g}": float(np.median(v)) for e, v in groups.items()}
        rows.append({"n": int(n), "label": label, **meds, "slope vs ε": fmt_ci(slope, lo, hi, 3)})
    table = pd.DataFrame(rows)
    stem = Path(o["out"] or run.path / f"stein_ctrl_{metric}")
    table.to_csv(f"{stem}.csv", index=False)
    with pd.option_context("display.width", 300, "display.max_columns", 30, "display.max_colwidth", 50):
        echo(table.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    refs = tuple(lab for lab in pd.unique(trials["label"]) if "non-private" in lab)
    fig = median_panels(
        trials,
        metric,
        "epsilon",
        rows="dataset",
        cols="data.n",
        reference_labels=refs,
        title=run.title,
        caption=o["caption"] or run.caption,
        xlabel="ε",
        ylabel=f"median {metric}",
    )
    for path in save_figures(fig, stem):
        echo(f"wrote {path}")
