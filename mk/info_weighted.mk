# Information-weighted regression (spec 000, "Beyond Covariance Matrix"): the spec's PROPOSED synthetic experiments
# E1–E5 and the exploratory E7 (the paper has no experiments). `make reproduce-iwr` runs everything; `dpbench plot`
# draws each config's presets (median + bootstrap 95% CI, log–log, privacy models marked), `dpbench report` runs the
# analyses the config names (iwr_ratio: medians and their ratio; iwr_e5: E5's normalised errors and ratio figure), and
# the figures are copied to docs/figures/iw_*.png. Single-threaded BLAS per worker; numpy's huge-page advice kept
# (NUMPY_MADVISE_HUGEPAGE=1: E4's 10⁷-row arrays cost 159 CPU-s with it, 199 without — dpbench/engine/pages.py).
IWR_ENV := OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 NUMPY_MADVISE_HUGEPAGE=1
IWR_FIG := docs/figures

.PHONY: reproduce-iwr reproduce-iwr-e1 reproduce-iwr-e2 reproduce-iwr-e3 reproduce-iwr-e4 reproduce-iwr-e5 \
	reproduce-iwr-e4b reproduce-iwr-e7 test-iwr

# longest first (E4 ≈ 2 min), E4b its own target: under make -j the short runs fill the cores beside it
reproduce-iwr: reproduce-iwr-e4 reproduce-iwr-e2 reproduce-iwr-e3 reproduce-iwr-e4b reproduce-iwr-e5 reproduce-iwr-e1 \
	reproduce-iwr-e7

define IWR_RUN
	$(IWR_ENV) $(DPBENCH) run configs/info_weighted/$(1).yaml --n-jobs $(N_JOBS) --no-progress --plot
	$(DPBENCH) report results/$(1)
endef

reproduce-iwr-e1:
	$(DPBENCH) analyze iwr_e1 -o out=results/iwr_e1
	mkdir -p $(IWR_FIG) && cp results/iw_e1/figure_e1.png $(IWR_FIG)/iw_e1_infomatrix.png

reproduce-iwr-e2:
	$(call IWR_RUN,iw_e2_central_vs_eps)
	mkdir -p $(IWR_FIG) && cp results/iw_e2_central_vs_eps/figure_param_error_sigma.png $(IWR_FIG)/iw_e2_central.png
	cp results/iw_e2_central_vs_eps/figure_l1_error.png $(IWR_FIG)/iw_e2_central_l1.png

reproduce-iwr-e3:
	$(call IWR_RUN,iw_e3_rates)
	mkdir -p $(IWR_FIG) && cp results/iw_e3_rates/figure_scaled_excess_risk.png $(IWR_FIG)/iw_e3_rates.png
	cp results/iw_e3_rates/figure_param_error_sigma.png $(IWR_FIG)/iw_e3_slopes.png

reproduce-iwr-e4:
	$(call IWR_RUN,iw_e4_ldp)
	mkdir -p $(IWR_FIG) && cp results/iw_e4_ldp/figure_l1_error_vs_data_n.png $(IWR_FIG)/iw_e4_ldp.png

reproduce-iwr-e4b:
	$(call IWR_RUN,iw_e4b_ldp_sgd)

reproduce-iwr-e5:
	$(call IWR_RUN,iw_e5_ldp_1d)
	mkdir -p $(IWR_FIG) && cp results/iw_e5_ldp_1d/figure_abs_error_1d_vs_data_n.png $(IWR_FIG)/iw_e5_ldp_1d.png
	cp results/iw_e5_ldp_1d/iw_e5_ratio.png $(IWR_FIG)/iw_e5_ratio.png

reproduce-iwr-e7:
	$(call IWR_RUN,iw_e7_real)
	mkdir -p $(IWR_FIG) && cp results/iw_e7_real/figure_excess_train_mse.png $(IWR_FIG)/iw_e7_real.png

test-iwr:
	$(PYTHON) -m pytest -q tests/mechanisms/iwr/test_iwr.py tests/mechanisms/iwr/test_iwr_stats.py -m "slow or not slow"

# Issue 17 controls: IWR-DP ablations (W learned / W = I / public ball) with θ* inside the ball, G-Pareto,
# d ∈ {5, 20, 50}; figure + paired ratio CIs (claims table of docs/info_weighted.md).
.PHONY: reproduce-iwr-controls
reproduce-iwr-controls:
	$(IWR_ENV) $(DPBENCH) run configs/info_weighted/iw_ctrl_ablation.yaml --n-jobs $(N_JOBS) --no-progress
	$(IWR_ENV) $(DPBENCH) run configs/info_weighted/iw_ctrl_ablation_d50.yaml --n-jobs $(N_JOBS) --no-progress
	mkdir -p $(IWR_FIG) && $(DPBENCH) analyze iwr-ablation results/iw_ctrl_ablation results/iw_ctrl_ablation_d50 \
		-o out=results/iw_ctrl_ablation/iw_ablation_all
	cp results/iw_ctrl_ablation/iw_ablation_all.png $(IWR_FIG)/iw_ctrl_ablation.png
