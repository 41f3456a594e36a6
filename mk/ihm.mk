# IHM paper (spec 004): Figures 2–7, Table 2 and the speed benchmark. Figure 1 is `reproduce-figure1` (Makefile).
IHM_FIGURES := 2 3 4 5 6 7

.PHONY: reproduce-ihm-paper table2 bench-ihm $(addprefix reproduce-figure,$(IHM_FIGURES))

$(addprefix reproduce-figure,$(IHM_FIGURES)): reproduce-figure%:
	$(DPBENCH) run configs/ihm/ihm_figure$*.yaml --n-jobs $(N_JOBS) --no-progress --plot   # figure_train_mse and figure_excess (the config's plots:)

# longest first (Figs 5 and 3 ≈ 1 min each): under make -j the short runs fill the cores beside them
reproduce-ihm-paper: reproduce-figure5 reproduce-figure3 reproduce-figure4 reproduce-figure6 reproduce-figure1 \
	reproduce-figure2 reproduce-figure7 table2

table2:
	$(DPBENCH) analyze table2

bench-ihm:
	$(DPBENCH) bench --suite --output results/bench_ihm.csv
