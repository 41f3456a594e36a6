# Wang (UAI 2018) UCI experiment (docs/wang2018.md, spec 005 §2a): 28 data sets × 10 folds × 5 repetitions × 7
# methods × 10 ε, one run folder results/wang2018 (trials.csv), the per-data-set figure and the summary analysis
# (wang2018_summary.md/.csv/.png). `dpbench report results/wang2018` also works but is slow here (its per-dataset
# sections run over the 280 fold datasets: > 6 min under load, docs/wang2018.md).

.PHONY: reproduce-wang2018

reproduce-wang2018:
	$(DPBENCH) run configs/wang2018/wang2018_uci.yaml --n-jobs $(N_JOBS) --no-progress
	$(DPBENCH) plot results/wang2018
	$(DPBENCH) analyze wang2018_summary results/wang2018
