# Information-weighted regression (spec 000, "Beyond Covariance Matrix"): the spec's PROPOSED synthetic experiments
# E1–E5 and the exploratory E7 (the paper has no experiments). `make reproduce-iwr` runs everything, writes the
# median + bootstrap-CI figures (dpbench iw-plot) and the generic mean ± CI ones (dpbench plot), prints the summary
# tables and copies the figures to docs/figures/iw_*.png. Single-threaded BLAS per worker.
IWR_ENV := OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
IWR_FIG := docs/figures

.PHONY: reproduce-iwr reproduce-iwr-e1 reproduce-iwr-e2 reproduce-iwr-e3 reproduce-iwr-e4 reproduce-iwr-e5 \
	reproduce-iwr-e7 test-iwr

reproduce-iwr: reproduce-iwr-e1 reproduce-iwr-e2 reproduce-iwr-e3 reproduce-iwr-e4 reproduce-iwr-e5 reproduce-iwr-e7

reproduce-iwr-e1:
	$(DPBENCH) iw-e1 --out results/iw_e1
	mkdir -p $(IWR_FIG) && cp results/iw_e1/figure_e1.png $(IWR_FIG)/iw_e1_infomatrix.png

reproduce-iwr-e2:
	$(IWR_ENV) $(DPBENCH) run configs/info_weighted/iw_e2_central_vs_eps.yaml --n-jobs $(N_JOBS) --no-progress
	$(DPBENCH) iw-plot results/iw_e2_central_vs_eps --metric param_error_sigma --x epsilon
	$(DPBENCH) iw-plot results/iw_e2_central_vs_eps --metric l1_error --x epsilon
	$(DPBENCH) iw-report results/iw_e2_central_vs_eps --metric param_error_sigma --numerator "IWR-DP (Alg 4+5)" \
		--denominator "AdaSSP [Wang '18]"
	mkdir -p $(IWR_FIG) && cp results/iw_e2_central_vs_eps/iw_figure_param_error_sigma_epsilon.png $(IWR_FIG)/iw_e2_central.png
	cp results/iw_e2_central_vs_eps/iw_figure_l1_error_epsilon.png $(IWR_FIG)/iw_e2_central_l1.png

reproduce-iwr-e3:
	$(IWR_ENV) $(DPBENCH) run configs/info_weighted/iw_e3_rates.yaml --n-jobs $(N_JOBS) --no-progress
	$(DPBENCH) iw-plot results/iw_e3_rates --metric scaled_excess_risk --x data.n
	$(DPBENCH) iw-report results/iw_e3_rates --metric param_error_sigma --numerator IWR-DP --denominator AdaSSP \
		--by data.n --slope
	mkdir -p $(IWR_FIG) && cp results/iw_e3_rates/iw_figure_scaled_excess_risk_data_n.png $(IWR_FIG)/iw_e3_rates.png

reproduce-iwr-e4:
	$(IWR_ENV) $(DPBENCH) run configs/info_weighted/iw_e4_ldp.yaml --n-jobs $(N_JOBS) --no-progress
	$(DPBENCH) iw-plot results/iw_e4_ldp --metric l1_error --x data.n
	$(IWR_ENV) $(DPBENCH) run configs/info_weighted/iw_e4b_ldp_sgd.yaml --n-jobs $(N_JOBS) --no-progress
	$(DPBENCH) iw-report results/iw_e4_ldp --metric l1_error --numerator "IWR-LDP (Alg 2+3)" \
		--denominator "LDP-SSP (ball LS)" --by data.n
	$(DPBENCH) iw-report results/iw_e4b_ldp_sgd --metric l1_error --numerator "IWR-GLM-LDP (Alg 2+11)" \
		--denominator "IWR-LDP (Alg 2+3)"
	mkdir -p $(IWR_FIG) && cp results/iw_e4_ldp/iw_figure_l1_error_data_n.png $(IWR_FIG)/iw_e4_ldp.png

reproduce-iwr-e5:
	$(IWR_ENV) $(DPBENCH) run configs/info_weighted/iw_e5_ldp_1d.yaml --n-jobs $(N_JOBS) --no-progress
	$(DPBENCH) iw-plot results/iw_e5_ldp_1d --metric abs_error_1d --x data.n
	$(DPBENCH) iw-e5-report results/iw_e5_ldp_1d
	mkdir -p $(IWR_FIG) && cp results/iw_e5_ldp_1d/iw_figure_abs_error_1d_data_n.png $(IWR_FIG)/iw_e5_ldp_1d.png
	cp results/iw_e5_ldp_1d/iw_e5_ratio.png $(IWR_FIG)/iw_e5_ratio.png

reproduce-iwr-e7:
	$(IWR_ENV) $(DPBENCH) run configs/info_weighted/iw_e7_real.yaml --n-jobs $(N_JOBS) --no-progress
	$(DPBENCH) iw-plot results/iw_e7_real --metric excess_train_mse --x epsilon
	$(DPBENCH) iw-report results/iw_e7_real --metric excess_train_mse --numerator "IWR-DP (000)" \
		--denominator "AdaSSP [Wang '18]"
	mkdir -p $(IWR_FIG) && cp results/iw_e7_real/iw_figure_excess_train_mse_epsilon.png $(IWR_FIG)/iw_e7_real.png

test-iwr:
	$(PYTHON) -m pytest -q tests/test_info_weighted.py tests/test_info_weighted_stats.py -m "slow or not slow"

# Issue 17 controls: IWR-DP ablations (W learned / W = I / public ball) with θ* inside the ball, G-Pareto,
# d ∈ {5, 20, 50}; figure + paired ratio CIs (claims table of docs/info_weighted.md).
.PHONY: reproduce-iwr-controls
reproduce-iwr-controls:
	$(IWR_ENV) $(DPBENCH) run configs/info_weighted/iw_ctrl_ablation.yaml --n-jobs $(N_JOBS) --no-progress
	$(IWR_ENV) $(DPBENCH) run configs/info_weighted/iw_ctrl_ablation_d50.yaml --n-jobs $(N_JOBS) --no-progress
	mkdir -p $(IWR_FIG) && $(DPBENCH) analyze iw-ablation results/iw_ctrl_ablation results/iw_ctrl_ablation_d50 \
		-o out=results/iw_ctrl_ablation/iw_ablation_all
	cp results/iw_ctrl_ablation/iw_ablation_all.png $(IWR_FIG)/iw_ctrl_ablation.png
