# Every paper in one command (issues 16, 40): `make reproduce-all` runs every run of the five papers' reproduce
# targets as ONE global list, longest first (scripts/reproduce_schedule.py reads the runs from make's own database and
# their CPU seconds from benchmarks/reproduce_costs.csv, and writes $(WALLTIME)/schedule.mk), REPRODUCE_JOBS runs at a
# time, each on N_JOBS workers: a slot freed by any paper's run takes the next longest run of any paper, so no paper
# waits for its slowest run while a core idles, and the short runs fill the tail. Results do not depend on the order
# (every trial is seeded by its coordinates). Each dpbench command is timed (scripts/timed_run.py →
# $(WALLTIME)/runs.csv: paper, target, start, end, wall and CPU seconds); `walltime-table` writes papers.csv (per
# paper: CPU seconds and wall span from its first start to its last end, and the whole run), figures.csv (per figure,
# from each run's meta.json) and families.csv. Start from a clean results/ (`make clean`): a finished run folder is
# resumed, not recomputed, and would time as ≈ 0 s. `make reproduce-all-in-turn` is the old schedule (papers one
# after another), kept to compare.
# `make bench-all` times the same configs without keeping their results (`dpbench bench --suite --papers all`): CPU
# and wall seconds per figure, fit seconds per mechanism, written to results/bench_all/record.json and compared with
# the committed record benchmarks/record.json (ratios printed; a report, never a test; docs/performance.md).
REPRODUCE_PAPERS := ihm-paper stein ftrl iwr bandits
REPRODUCE_JOBS ?= 2
# papers whose runs never run two at once (none by default): a DP-FTRL E1 worker peaks at ≈ 3.0 GB (docs/ftrl.md),
# so two E1 runs × N_JOBS = 2 workers need ≈ 12 GB; on a machine under 16 GB: make reproduce-all REPRODUCE_SERIAL=ftrl
# (its runs are chained by order-only prerequisites; another paper's run fills the other slot, ≤ 3.0 GB per worker)
REPRODUCE_SERIAL ?=
WALLTIME := results/walltime
TIMED = $(PYTHON) scripts/timed_run.py $(WALLTIME)/runs.csv

.PHONY: reproduce-all reproduce-all-in-turn bench-all walltime-table

reproduce-all:
	mkdir -p $(WALLTIME) && rm -f $(WALLTIME)/runs.csv
	$(PYTHON) scripts/reproduce_schedule.py makefile --papers "$(REPRODUCE_PAPERS)" --serial "$(REPRODUCE_SERIAL)" \
		--out $(WALLTIME)/schedule.mk
	$(MAKE) --no-print-directory -f Makefile -f $(WALLTIME)/schedule.mk -j$(REPRODUCE_JOBS) --output-sync=target \
		DPBENCH='$(TIMED) $$(REPRODUCE_PAPER) $$@ -- $(DPBENCH)' reproduce-all-runs
	$(MAKE) --no-print-directory walltime-table

reproduce-all-in-turn:
	mkdir -p $(WALLTIME) && rm -f $(WALLTIME)/runs.csv
	@set -e; for paper in $(REPRODUCE_PAPERS); do \
		case " $(REPRODUCE_SERIAL) " in *" $$paper "*) jobs=1;; *) jobs=$(REPRODUCE_JOBS);; esac; \
		$(MAKE) --no-print-directory -j$$jobs --output-sync=target \
			DPBENCH='$(TIMED) '$$paper' $$@ -- $(DPBENCH)' reproduce-$$paper; \
	done
	$(MAKE) --no-print-directory walltime-table

walltime-table:  ## per-figure wall time of every finished run → figures.csv; per paper from runs.csv → papers.csv
	$(PYTHON) scripts/walltime_table.py results $(WALLTIME)/figures.csv

bench-all:
	OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 $(DPBENCH) bench --suite --papers all \
		--suite-jobs $(N_JOBS) --no-mechanism-table --suite-output results/bench_all --record benchmarks/record.json
