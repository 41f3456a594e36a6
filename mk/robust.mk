# Label-corruption track (issue 35, docs/robust.md): configs/robust/robust_corruption.yaml → results/robust_corruption
# (trials.csv, figure_*.png/.pdf). Not part of reproduce-all (not a paper's figure).

.PHONY: reproduce-robust

reproduce-robust:
	$(DPBENCH) run configs/robust/robust_corruption.yaml --n-jobs $(N_JOBS) --no-progress --plot
