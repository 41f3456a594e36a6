# DP-FTRL (spec 002): proposed synthetic demonstrations E1–E4 and the exploratory real-data E5 (the paper has no
# experiments). `make reproduce-ftrl` runs everything at the spec's grids — E1 at d = 2048, N = 2^8..2^15 (002 §5.3;
# since issue 40, when its datasets.json stopped paying an O(Nd²) OLS fit per N) — see docs/ftrl.md, Speed, and
# docs/performance.md; `dpbench plot` draws each config's preset (E1: with its log–log slopes), `dpbench report` runs the
# analyses the config names (ftrl_rates: slopes vs the §4.3 exponents; ftrl_diagnostics: mean ± CI with η, clip%, τ);
# figures are copied to docs/figures/ftrl_*.png. Single-threaded BLAS per worker (oversubscription is much slower).
# E1 at d = 1024, N = 2^10..2^16 stays as the quick target `make reproduce-ftrl-e1` (≈ 1,800 CPU-s for 4 spectra).
FTRL_E1 := r2 r3 r5 exp
FTRL_E3 := e3_eps e3_eps_r2 e3_eps_r5
FTRL_E4 := e4a_clipping e4b_calibration e4c_lam e4d_public_m e4e_clipC e4f_eta
FTRL_ENV := OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1

.PHONY: reproduce-ftrl reproduce-ftrl-e1 reproduce-ftrl-e2 reproduce-ftrl-e3 reproduce-ftrl-e4 reproduce-ftrl-e5 \
	test-ftrl $(addprefix ftrl-e1-,$(FTRL_E1)) $(addprefix ftrl-,$(FTRL_E3)) $(addprefix ftrl-,$(FTRL_E4))

# longest first (E1 at d = 2048 ≈ 12 min per spectrum on 2 cores): under make -j the short E2–E5 runs then fill the
# last E1's tail
reproduce-ftrl: reproduce-ftrl-e1-d2048 reproduce-ftrl-e3 reproduce-ftrl-e2 reproduce-ftrl-e4 reproduce-ftrl-e5

$(addprefix ftrl-e1-,$(FTRL_E1)): ftrl-e1-%:
	$(FTRL_ENV) $(DPBENCH) run configs/ftrl/ftrl_e1_$*.yaml --n-jobs $(N_JOBS) --no-progress --plot
	$(DPBENCH) report results/ftrl_e1_$*
	mkdir -p docs/figures && cp results/ftrl_e1_$*/figure_excess_pop_paper_vs_data_n.png docs/figures/ftrl_e1_$*.png

reproduce-ftrl-e1: $(addprefix ftrl-e1-,$(FTRL_E1))

# E1 at the spec's grid (002 §5.3: d = 2048, N = 2^8..2^15, R = 20 draws), part of reproduce-ftrl since issue 40:
# run in full 2026-11-27, 807 / 801 / 794 / 772 CPU-s for i^-2 / i^-3 / i^-5 / e^-i (3,174 CPU-s), of which up
# to ≈ 35 CPU-s per N went to datasets.json's OLS fit and spectrum (now dataset_statistics: basic; docs/performance.md).
.PHONY: reproduce-ftrl-e1-d2048 $(addprefix ftrl-e1-d2048-,$(FTRL_E1))
$(addprefix ftrl-e1-d2048-,$(FTRL_E1)): ftrl-e1-d2048-%:
	$(FTRL_ENV) $(DPBENCH) run configs/ftrl/ftrl_e1_d2048_$*.yaml --n-jobs $(N_JOBS) --no-progress --plot
	$(DPBENCH) report results/ftrl_e1_d2048_$*
	mkdir -p docs/figures && cp results/ftrl_e1_d2048_$*/figure_excess_pop_paper_vs_data_n.png docs/figures/ftrl_e1_d2048_$*.png

reproduce-ftrl-e1-d2048: $(addprefix ftrl-e1-d2048-,$(FTRL_E1))

reproduce-ftrl-e2:
	$(FTRL_ENV) $(DPBENCH) run configs/ftrl/ftrl_e2_dim.yaml --n-jobs $(N_JOBS) --no-progress --plot
	$(DPBENCH) report results/ftrl_e2_dim
	mkdir -p docs/figures && cp results/ftrl_e2_dim/figure_excess_pop_paper_vs_data_d.png docs/figures/ftrl_e2_dim.png

$(addprefix ftrl-,$(FTRL_E3)): ftrl-%:
	$(FTRL_ENV) $(DPBENCH) run configs/ftrl/ftrl_$*.yaml --n-jobs $(N_JOBS) --no-progress --plot
	$(DPBENCH) report results/ftrl_$*
	mkdir -p docs/figures && cp results/ftrl_$*/figure_excess_pop_paper.png docs/figures/ftrl_$*.png

reproduce-ftrl-e3: $(addprefix ftrl-,$(FTRL_E3))

$(addprefix ftrl-,$(FTRL_E4)): ftrl-%:
	$(FTRL_ENV) $(DPBENCH) run configs/ftrl/ftrl_$*.yaml --n-jobs $(N_JOBS) --no-progress --plot
	$(DPBENCH) report results/ftrl_$*
	mkdir -p docs/figures && cp results/ftrl_$*/figure_excess_pop_paper*.png docs/figures/ftrl_$*.png

reproduce-ftrl-e4: $(addprefix ftrl-,$(FTRL_E4))

reproduce-ftrl-e5:
	$(FTRL_ENV) $(DPBENCH) run configs/ftrl/ftrl_e5_real.yaml --n-jobs $(N_JOBS) --no-progress --plot   # figure_test_mse and figure_train_mse (the config's plots:)
	$(DPBENCH) report results/ftrl_e5_real
	mkdir -p docs/figures && cp results/ftrl_e5_real/figure_test_mse.png docs/figures/ftrl_e5_real.png

test-ftrl:
	$(FTRL_ENV) $(PYTHON) -m pytest -q tests/mechanisms/gradient/test_dp_ftrl.py

# Issue 17 controls (claims table of docs/ftrl.md): rule η vs η grid for every spectrum; rate slopes from 5 values of
# N with the data redrawn per trial and bootstrap CIs.
FTRL_CTRL := r2 r3 r5 exp
.PHONY: reproduce-ftrl-controls
reproduce-ftrl-controls:
	for s in $(FTRL_CTRL); do \
		$(FTRL_ENV) $(DPBENCH) run configs/ftrl/ftrl_ctrl_eta_$$s.yaml --n-jobs $(N_JOBS) --no-progress || exit 1; \
		$(FTRL_ENV) $(DPBENCH) run configs/ftrl/ftrl_ctrl_slopes_$$s.yaml --n-jobs $(N_JOBS) --no-progress || exit 1; \
	done
	mkdir -p docs/figures
	$(DPBENCH) analyze ftrl-eta-grid $(addprefix results/ftrl_ctrl_eta_,$(FTRL_CTRL)) -o out=docs/figures/ftrl_ctrl_eta_grid
	$(DPBENCH) analyze ftrl-slopes $(addprefix results/ftrl_ctrl_slopes_,$(FTRL_CTRL)) \
		-o out=results/ftrl_ctrl_slopes_r2/slopes_all.csv -o figure=docs/figures/ftrl_ctrl_slopes
