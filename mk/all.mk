# Every paper in one command (issue 16): `make reproduce-all` runs the five papers' reproduce targets one after the
# other (each run on N_JOBS workers) and writes results/walltime/papers.csv (wall seconds per paper, measured here)
# and results/walltime/figures.csv (wall seconds per figure, from each run's meta.json). Start from a clean
# results/ (`make clean`): a finished run folder is resumed, not recomputed, and would time as ≈ 0 s.
# `make bench-all` times the same configs without keeping their results (`dpbench bench --suite --papers all`): CPU
# and wall seconds per figure, fit seconds per mechanism, written to results/bench_all/record.json and compared with
# the committed record benchmarks/record.json (ratios printed; a report, never a test; docs/performance.md).
# Within a paper, REPRODUCE_JOBS figure targets run at once (make -j; each run on N_JOBS workers): the single-process
# phases of a figure (start-up, assembly, plot, report) then overlap with another figure's trials instead of leaving
# a core idle. Results do not depend on it (every trial is seeded by its coordinates).
REPRODUCE_PAPERS := ihm-paper stein ftrl iwr bandits
REPRODUCE_JOBS ?= 2
# papers whose figures run one at a time (none by default): a DP-FTRL E1 worker peaked at ≈ 4.6 GB before its
# stores became allocation-free; it now peaks at ≈ 3.0 GB (N = 2¹⁶, d = 1024, docs/ftrl.md), so two E1 figures ×
# N_JOBS = 2 workers fit in 24 GB (≈ 12 GB). On a smaller machine: make reproduce-all REPRODUCE_SERIAL=ftrl
REPRODUCE_SERIAL ?=
WALLTIME := results/walltime

.PHONY: reproduce-all bench-all walltime-table

reproduce-all:
	mkdir -p $(WALLTIME) && echo "paper,wall_s" > $(WALLTIME)/papers.csv
	@set -e; for paper in $(REPRODUCE_PAPERS); do \
		start=$$(date +%s.%N); \
		case " $(REPRODUCE_SERIAL) " in *" $$paper "*) jobs=1;; *) jobs=$(REPRODUCE_JOBS);; esac; \
		$(MAKE) --no-print-directory -j$$jobs --output-sync=target reproduce-$$paper; \
		echo "$$paper,$$(echo "$$(date +%s.%N) - $$start" | bc)" >> $(WALLTIME)/papers.csv; \
	done
	$(MAKE) --no-print-directory walltime-table

walltime-table:  ## per-figure wall time of every finished run in results/ → results/walltime/figures.csv
	$(PYTHON) scripts/walltime_table.py results $(WALLTIME)/figures.csv

bench-all:
	OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 $(DPBENCH) bench --suite --papers all \
		--suite-jobs $(N_JOBS) --no-mechanism-table --suite-output results/bench_all --record benchmarks/record.json
