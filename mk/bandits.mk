# Private contextual bandits (specs 001 §7.3 F6–F8, 000 §7.8 E6): proposed synthetic demonstrations, regret vs T.
# Each target: one `dpbench run` (anytime curves from one run per trial at T_max), `dpbench plot` (the config's
# presets: regret vs T, and the regret grid with its log–log slopes) and `dpbench report` (report.md/.html, running
# the bandit_gap analysis — privacy gap vs 1/ε — where the config names it). Figures are copied to docs/figures/.
# Grids of spec 001 §8 (issue 16): bandit_jdp T_max = 2^20 × 20 trials; bandit_dimfree (SquareCB) d ∈ {10, 100, 1000} at
# 2^20; LDP elimination to 2^24 with eliminations (bandit_ctrl_ldp_agm). Costs and peak memory: docs/bandits.md ("Speed").
BANDIT_FIGS = docs/figures

.PHONY: reproduce-bandits reproduce-bandit-calibration reproduce-bandit-jdp reproduce-bandit-ldp reproduce-bandit-glm \
	reproduce-bandit-dimfree reproduce-bandit-gap reproduce-bandit-jdp-dims reproduce-bandit-jdp-long \
	reproduce-bandit-ldp-agm

reproduce-bandits: reproduce-bandit-jdp reproduce-bandit-ldp reproduce-bandit-dimfree reproduce-bandit-gap

# coverage pilot behind the c_b values in configs/bandits/bandit_*.yaml (disjoint seeds; ~2 min)
reproduce-bandit-calibration:
	$(PYTHON) -m dpbench.bandits.calibrate --out results/bandit_calibration

define BANDIT_RUN
	$(DPBENCH) run configs/bandits/$(1).yaml --n-jobs $(N_JOBS) --no-progress --plot
	$(DPBENCH) report results/$(1)
	mkdir -p $(BANDIT_FIGS)
	cp results/$(1)/figure_regret_grid.png $(BANDIT_FIGS)/$(1).png
	$(if $(2),cp results/$(1)/figure_privacy_gap.png $(BANDIT_FIGS)/$(1)_gap.png)
endef

reproduce-bandit-jdp:
	$(call BANDIT_RUN,bandit_jdp,gap)

reproduce-bandit-ldp:
	$(call BANDIT_RUN,bandit_ldp)

reproduce-bandit-dimfree:
	$(call BANDIT_RUN,bandit_dimfree)
	cp results/bandit_dimfree/figure_regret_vs_T.png $(BANDIT_FIGS)/bandit_dimfree.png  # curves by d overlap

reproduce-bandit-gap:
	$(call BANDIT_RUN,bandit_gap,gap)
	cp results/bandit_gap/figure_regret_vs_T.png $(BANDIT_FIGS)/bandit_gap.png  # Reg vs log T (Thm 6.3)

reproduce-bandit-glm:
	$(call BANDIT_RUN,bandit_glm)

reproduce-bandits: reproduce-bandit-glm

reproduce-bandit-jdp-dims:
	$(call BANDIT_RUN,bandit_jdp_dims)

reproduce-bandits: reproduce-bandit-jdp-dims

reproduce-bandit-jdp-long:
	$(call BANDIT_RUN,bandit_jdp_long,gap)

reproduce-bandits: reproduce-bandit-jdp-long

# LDP elimination to T = 2^24 where eliminations happen (issue 16; 001 §8): AGM calibration, ε ∈ {2, 4}, 2 trials.
# Also the issue-17 control of the claims table (reproduce-bandit-controls reuses this run).
reproduce-bandit-ldp-agm:
	$(call BANDIT_RUN,bandit_ctrl_ldp_agm)

reproduce-bandits: reproduce-bandit-ldp-agm

# Issue 17 controls (claims table of docs/bandits.md): perfect-oracle SquareCB, F8 regression error vs d, regret
# ratios with CIs, F5 coverage, G-TwoScale elimination, LDP with AGM calibration.
.PHONY: reproduce-bandit-controls
reproduce-bandit-controls: reproduce-bandit-ldp-agm
	$(DPBENCH) run configs/bandits/bandit_ctrl_dimfree.yaml --n-jobs $(N_JOBS) --no-progress
	$(DPBENCH) analyze bandit-dimfree-control results/bandit_ctrl_dimfree
	$(DPBENCH) run configs/bandits/bandit_ctrl_f8.yaml --n-jobs $(N_JOBS) --no-progress
	$(DPBENCH) analyze bandit-f8 results/bandit_ctrl_f8
	$(DPBENCH) run configs/bandits/bandit_ctrl_ratios.yaml --n-jobs $(N_JOBS) --no-progress --plot
	$(DPBENCH) report results/bandit_ctrl_ratios     # runs bandit_gap and bandit-ratios
	$(DPBENCH) run configs/bandits/bandit_ctrl_twoscale.yaml --n-jobs $(N_JOBS) --no-progress --plot
	$(DPBENCH) report results/bandit_ctrl_twoscale
	$(DPBENCH) analyze bandit-coverage -o out=results/bandit_ctrl_coverage/coverage
	mkdir -p $(BANDIT_FIGS)
	cp results/bandit_ctrl_dimfree/dimfree_control.png $(BANDIT_FIGS)/bandit_ctrl_dimfree.png
	cp results/bandit_ctrl_f8/f8.png $(BANDIT_FIGS)/bandit_ctrl_f8.png
	cp results/bandit_ctrl_ratios/figure_regret_grid.png $(BANDIT_FIGS)/bandit_ctrl_ratios.png
	cp results/bandit_ctrl_twoscale/figure_regret_grid.png $(BANDIT_FIGS)/bandit_ctrl_twoscale.png
	cp results/bandit_ctrl_coverage/coverage.png $(BANDIT_FIGS)/bandit_ctrl_coverage.png
