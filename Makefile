PYTHON ?= python
DPBENCH ?= dpbench
N_JOBS ?= 2

# every paper: `make reproduce-all` (mk/all.mk)

.PHONY: install test test-all lint reproduce-figure1 clean

install:
	$(PYTHON) -m pip install -e ".[test]"

test:
	$(PYTHON) -m pytest -q

test-all:
	$(PYTHON) -m pytest -q -m "slow or not slow"

lint:
	ruff check dpbench tests scripts
	ruff format --check dpbench tests scripts

reproduce-figure1:
	$(DPBENCH) run configs/ihm_vs_adassp.yaml --n-jobs $(N_JOBS) --no-progress
	$(DPBENCH) plot results/ihm_vs_adassp   # the config's figures: figure_train_mse and figure_excess (.png, .pdf)

# per-paper targets live in mk/*.mk (one fragment per experiment family)
-include mk/*.mk

clean:
	rm -rf results/*/ .pytest_cache
