# dpbench as a library / at scale (docs/library.md)

.PHONY: bench-backends test-library

bench-backends:  ## loky vs Dask wall/CPU time on the Figure 1 config, 2 workers each, 50 trials; CSVs must match
	bash scripts/bench_backends.sh 50

test-library:  ## estimators, plug-ins, Dask backend, reports
	$(PYTHON) -m pytest -q tests/test_estimators.py tests/test_plugins.py tests/engine/test_dask_backend.py tests/analysis/test_report.py
