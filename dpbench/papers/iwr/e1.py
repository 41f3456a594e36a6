"""E1 of spec 000 §7.3: population information matrices vs T (the quantitative version of the paper's Figure 1).

Synthetic demonstration (proposed in spec 000 §7.3), not a reproduction: the paper has no experiments.
For each generator p and privacy level α, with the paper's scaling γ = 1/(α√T), λ = 1/√T (Eq. 5), compute the
exact W_{γ,λ} (closed forms of §2.2) and report

* PoP_IW(T) = tr(Σ W²_{γ,λ})/d and the SSP heuristic PoP_SSP(T) = 1 + tr(Σ^{-1})/(d α² T) (§7.3, [DERIVED]);
* ‖W − W_{0,λ}‖/‖W‖ and ‖W − γU_{γλ}‖/‖W‖ (operator norms; the two regimes of Fig. 1 / Lemma 5.7).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from dpbench.analysis.figures.kinds import draw
from dpbench.analysis.figures.save import save_figures
from dpbench.io.atomic import write_atomic
from dpbench.mechanisms.iwr.matrix import W_gamma0, population_info_matrix

#: spec 000 §7.3 expected values: (generator, α, T) → (PoP_IW, PoP_SSP)
SPEC_TABLE = {
    ("TwoScale(5,.001,.01)", 0.01): [(0.022, 4.5e5), (1.77, 4.5e3), (6.49, 46.5), (1.73, 1.45)],
    ("TwoScale(5,.001,.01)", 0.1): [(0.022, 4.5e3), (1.27, 46.5), (1.57, 1.45), (1.06, 1.00)],
    ("TwoScale(5,.001,.01)", 1.0): [(0.022, 46.5), (0.67, 1.45), (0.99, 1.00), (1.00, 1.00)],
    ("TwoScale(5,.01,.1)", 0.01): [(0.38, 2.5e4), (5.27, 252), (1.70, 3.51), (1.08, 1.03)],
    ("TwoScale(5,.01,.1)", 0.1): [(0.32, 252), (1.37, 3.51), (1.07, 1.03), (1.01, 1.00)],
    ("Sphere(5,1,1)", 0.01): [(13.9, 501), (6.2, 6.0), (1.25, 1.05), (1.02, 1.00)],
    ("Sphere(5,1,1)", 0.1): [(2.98, 6.0), (1.22, 1.05), (1.02, 1.00), (1.00, 1.00)],
}
SPEC_T = (1e2, 1e4, 1e6, 1e8)


@dataclass(frozen=True)
class Generator:
    name: str
    d: int
    extra: dict
    cov: np.ndarray


def e1_generators(d: int = 5) -> list[Generator]:
    """G-TwoScale(5, .001, .01), (5, .01, .1), (5, 1, 1) (= uniform sphere) and G-Spike(5) (spec 000 §7.1)."""
    gens = []
    for rho, s, name in (
        (0.001, 0.01, "TwoScale(5,.001,.01)"),
        (0.01, 0.1, "TwoScale(5,.01,.1)"),
        (1.0, 1.0, "Sphere(5,1,1)"),
    ):
        r, q = (np.array([1.0]), np.array([1.0])) if rho == 1.0 else (np.array([1.0, s]), np.array([rho, 1 - rho]))
        gens.append(Generator(name, d, {"radial": (r, q), "B": 1.0}, float(q @ r**2) / d * np.eye(d)))
    p = 0.4 * 0.5 ** np.arange(d)
    gens.append(Generator("Spike(5)", d, {"basis_probs": p, "B": 1.0}, np.diag(p)))
    return gens


def e1_point(gen: Generator, alpha: float, T: float) -> dict[str, float]:
    """All E1 quantities at one (generator, α, T)."""
    lam = 1.0 / np.sqrt(T)
    gamma = 1.0 / (alpha * np.sqrt(T))
    W = population_info_matrix("dp", gen.extra, gen.d, lam, gamma)
    W0 = W_gamma0(gen.cov, lam)
    U = population_info_matrix("ldp", gen.extra, gen.d, gamma * lam)
    norm_W = np.linalg.norm(W, 2)
    return {
        "generator": gen.name,
        "alpha": alpha,
        "T": T,
        "gamma": gamma,
        "lam": lam,
        "pop_iw": float(np.trace(gen.cov @ W @ W)) / gen.d,
        "pop_ssp": 1.0 + float(np.trace(np.linalg.inv(gen.cov))) / (gen.d * alpha**2 * T),
        "rel_W_W0": float(np.linalg.norm(W - W0, 2) / norm_W),
        "rel_W_gammaU": float(np.linalg.norm(W - gamma * U, 2) / norm_W),
    }


def e1_table(alphas=(0.01, 0.1, 1.0), Ts: np.ndarray | None = None) -> pd.DataFrame:
    Ts = np.logspace(1, 8, 29) if Ts is None else Ts
    rows = [e1_point(g, a, float(T)) for g in e1_generators() for a in alphas for T in Ts]
    return pd.DataFrame(rows)


def compare_with_spec() -> pd.DataFrame:
    """Ours vs the spec's §7.3 table at T ∈ {1e2, 1e4, 1e6, 1e8}, with ratios."""
    gens = {g.name: g for g in e1_generators()}
    rows = []
    for (name, alpha), values in SPEC_TABLE.items():
        for T, (iw, ssp) in zip(SPEC_T, values, strict=True):
            ours = e1_point(gens[name], alpha, T)
            rows.append(
                {
                    "generator": name,
                    "alpha": alpha,
                    "T": T,
                    "pop_iw": ours["pop_iw"],
                    "spec_pop_iw": iw,
                    "pop_ssp": ours["pop_ssp"],
                    "spec_pop_ssp": ssp,
                    "ratio_iw": ours["pop_iw"] / iw,
                    "ratio_ssp": ours["pop_ssp"] / ssp,
                }
            )
    return pd.DataFrame(rows)


def run_e1(out_dir: Path) -> dict[str, Path]:
    """Write table.csv, spec_comparison.csv/.md and figure_e1.png/.pdf (the figure kind ``iwr_e1``) to ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    table = e1_table()
    write_atomic(out_dir / "table.csv", table.to_csv(index=False))
    comp = compare_with_spec()
    write_atomic(out_dir / "spec_comparison.csv", comp.to_csv(index=False))
    lines = ["| generator | α | T | PoP_IW ours | spec | PoP_SSP ours | spec |", "|---|---|---|---|---|---|---|"]
    for r in comp.itertuples():
        lines.append(
            f"| {r.generator} | {r.alpha:g} | {r.T:.0e} | {r.pop_iw:.3g} | {r.spec_pop_iw:g} | "
            f"{r.pop_ssp:.3g} | {r.spec_pop_ssp:g} |"
        )
    write_atomic(out_dir / "spec_comparison.md", "\n".join(lines) + "\n")
    png, _pdf = save_figures(draw("iwr_e1", table).figure, out_dir / "figure_e1")  # figures.py
    return {"table": out_dir / "table.csv", "comparison": out_dir / "spec_comparison.md", "figure": png}
