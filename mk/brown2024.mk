# Brown et al. (ICML 2024) iso-error experiment (spec 005 §4-addendum, docs/brown2024.md): DP-GD (ρ = 0.015) and
# AdaSSP (ε = 0.925, the paper's non-private max-norm bounds) on an n grid per p = 5 … 100, then the crossing
# n*(p) at E‖θ̃ − θ*‖₂ = 0.5 and the fitted exponent b of n* ∝ p^b. Everything under results/brown2024/.
# Measured 2026-11-29 on 2 shared cores: see docs/brown2024.md. Not part of reproduce-all.

BROWN_DIR := results/brown2024

.PHONY: reproduce-brown2024

reproduce-brown2024:
	$(DPBENCH) run configs/brown2024/brown2024_dpgd.yaml --output-dir $(BROWN_DIR) --n-jobs $(N_JOBS) --no-progress
	$(DPBENCH) run configs/brown2024/brown2024_adassp.yaml --output-dir $(BROWN_DIR) --n-jobs $(N_JOBS) --no-progress
	$(DPBENCH) analyze brown2024_iso_error $(BROWN_DIR)/brown2024_dpgd $(BROWN_DIR)/brown2024_adassp
