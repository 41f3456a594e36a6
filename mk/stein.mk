# Stein-lemma NLDP GLM estimators (Wang, Hu, Zhang, Gaboardi, Xu, JMLR 2023; spec 003): Figures 1–18.
# Spec grids (§6.3–6.4, issue 16): error-vs-n figures n ∈ {1,…,7}·10⁵, p ∈ {10, 20, 40}, ε ∈ {4, 5, 10, 15, 20};
# (a) panels p ∈ {5,…,60} × n ∈ {1,3,5,7}·10⁵; (b,c) panels m ∈ {100,…,3000}; Figs 15/16 at §6.3's n/m/ε grids;
# Fig 17 ε ∈ {4,…,20} × n ∈ {1,3,5,7}·10⁵; Fig 18 n ∈ {1,…,7}·10⁵. Every point: `data_draws` independent data draws
# × 1 noise trial (every trial redraws the data); the draw counts per figure and the wall time are in
# docs/deviations.md ("Full grids") and the README. Figs 15/16 run one config per dataset (ε ranges differ); Figs
# 17/18 one config per panel (mechanisms differ).
# `make reproduce-stein` runs everything; `make reproduce-stein_fig01` etc. one figure. `dpbench plot` draws each
# config's preset (medians with bootstrap CIs; Fig 17 with log–log slopes); PNGs land in results/<name>/ and are
# copied to docs/figures/<name>.png.
STEIN_RUNS := $(basename $(notdir $(wildcard configs/stein/stein_fig*.yaml)))

.PHONY: reproduce-stein $(addprefix reproduce-,$(STEIN_RUNS)) test-stein

$(addprefix reproduce-,$(STEIN_RUNS)): reproduce-%:
	$(DPBENCH) run configs/stein/$*.yaml --n-jobs $(N_JOBS) --no-progress --plot
	mkdir -p docs/figures && cp results/$*/figure_*.png docs/figures/$*.png

reproduce-stein: $(addprefix reproduce-,$(STEIN_RUNS))

test-stein:
	$(PYTHON) -m pytest -q tests/mechanisms/stein/test_stein.py

.PHONY: reproduce-stein-table66
reproduce-stein-table66:
	$(DPBENCH) run configs/stein/stein_table66.yaml --n-jobs $(N_JOBS) --no-progress
	$(DPBENCH) report results/stein_table66   # runs the stein_table66 analysis → table66.md

reproduce-stein: reproduce-stein-table66

# Issue 17 controls (claims table of docs/stein.md): the literal Alg 2 at p = 5 on ±1/p data (n straddling n*) with
# the ℓ2-sensitivity ablation and the exact-covariance control; Fig 17 (a, c, d) at p = 5; literal Alg 1 with Gaussian
# covariates at n = 10⁶ … 10¹² ≫ n* (data-free exact Wishart sums, stein_ctrl_gauss_nbig); the Xᵀy SNR and A8 tables.
STEIN_CTRL := stein_ctrl_fig17a_p5 stein_ctrl_fig17c_p5 stein_ctrl_fig17d_p5
.PHONY: reproduce-stein-controls
reproduce-stein-controls:
	$(DPBENCH) run configs/stein/stein_ctrl_pm1_p5.yaml --n-jobs $(N_JOBS) --no-progress
	$(DPBENCH) analyze stein-ctrl results/stein_ctrl_pm1_p5
	$(DPBENCH) analyze stein-ctrl results/stein_ctrl_pm1_p5 -o metric=stein_errinf
	for c in $(STEIN_CTRL); do \
		$(DPBENCH) run configs/stein/$$c.yaml --n-jobs $(N_JOBS) --no-progress || exit 1; \
		$(DPBENCH) plot results/$$c || exit 1; \
	done
	$(DPBENCH) run configs/stein/stein_ctrl_gauss_nbig.yaml --n-jobs $(N_JOBS) --no-progress --plot
	$(DPBENCH) analyze stein-snr -o out=results/stein_ctrl_snr/snr
	mkdir -p docs/figures && cp results/stein_ctrl_pm1_p5/stein_ctrl_stein_err2.png docs/figures/stein_ctrl_pm1_p5.png
	for c in $(STEIN_CTRL); do cp results/$$c/figure_stein_err*.png docs/figures/$$c.png; done
	cp results/stein_ctrl_gauss_nbig/figure_err_vs_n.png docs/figures/stein_ctrl_gauss_nbig.png
	cp results/stein_ctrl_gauss_nbig/figure_err_vs_eps.png docs/figures/stein_ctrl_gauss_nbig_eps.png
