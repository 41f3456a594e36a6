# Issue 37: private confidence intervals and their measured coverage (docs/intervals.md).
.PHONY: reproduce-intervals reproduce-intervals-synthetic reproduce-intervals-real reproduce-intervals-ferrando

reproduce-intervals: reproduce-intervals-synthetic reproduce-intervals-real reproduce-intervals-ferrando

reproduce-intervals-synthetic:
	$(DPBENCH) run configs/intervals/coverage_synthetic.yaml
	$(DPBENCH) report results/intervals_coverage_synthetic

reproduce-intervals-real:
	$(DPBENCH) run configs/intervals/coverage_real.yaml
	$(DPBENCH) report results/intervals_coverage_real

reproduce-intervals-ferrando:
	$(DPBENCH) analyze ferrando_ols -o output=results/ferrando_ols
