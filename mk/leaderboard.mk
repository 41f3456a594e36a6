# Leaderboard (docs/leaderboard.md): the 30 offline IHM datasets × 13 mechanisms (+ IWR-DP, + diffprivlib at 20 trials)
# × 7 ε under privacy: strict, and the control that measures what strict moved (LinMix in its code variant, privacy:
# paper). Measured time: docs/leaderboard.md. Not part of reproduce-all.
# diffprivlib_lr is an optional peer (the `peers` extra; diffprivlib 0.6.6 does not import with scikit-learn ≥ 1.9):
# its run uses PEERS_PYTHON (default: PYTHON), e.g. `make reproduce-leaderboard PEERS_PYTHON=/path/venv-peers/bin/python`;
# where diffprivlib does not import there, the run is skipped with a message and the boards rank the others.

LB_BOARD := results/leaderboard/board
LB_DIFFPRIVLIB := results/leaderboard_diffprivlib
PEERS_PYTHON ?= $(PYTHON)

.PHONY: reproduce-leaderboard tukey-fallback

reproduce-leaderboard:
	$(DPBENCH) run configs/leaderboard/leaderboard.yaml --n-jobs $(N_JOBS) --no-progress
	$(DPBENCH) run configs/leaderboard/leaderboard_iwr.yaml --n-jobs $(N_JOBS) --no-progress
	$(DPBENCH) run configs/leaderboard/leaderboard_linmix_paper.yaml --n-jobs $(N_JOBS) --no-progress
	@runs="results/leaderboard results/leaderboard_iwr"; \
	if $(PEERS_PYTHON) -c "import diffprivlib" 2>/dev/null; then \
	  echo "$(PEERS_PYTHON) -m dpbench run configs/leaderboard/leaderboard_diffprivlib.yaml"; \
	  $(PEERS_PYTHON) -m dpbench run configs/leaderboard/leaderboard_diffprivlib.yaml --n-jobs $(N_JOBS) --no-progress \
	    || exit 1; \
	  runs="$$runs $(LB_DIFFPRIVLIB)"; \
	else \
	  echo "diffprivlib does not import with $(PEERS_PYTHON): its leaderboard run is skipped (pip install -e '.[peers]'" \
	    "in a venv with scikit-learn < 1.9 and pass PEERS_PYTHON=that-venv/bin/python)"; \
	fi; \
	set -x; \
	$(DPBENCH) leaderboard $$runs --out $(LB_BOARD) && \
	$(DPBENCH) leaderboard $$runs results/leaderboard_linmix_paper --out $(LB_BOARD)_with_control
	mkdir -p docs/figures && cp $(LB_BOARD)/performance_profile.png docs/figures/leaderboard_profile.png

# TukeyEM's fallback rate vs n per d (docs/leaderboard.md, "When TukeyEM stops falling back"): 11,200 trials, ≈ 200 CPU-s
tukey-fallback:
	$(DPBENCH) run configs/leaderboard/tukey_fallback.yaml --n-jobs $(N_JOBS) --no-progress
	$(PYTHON) scripts/tukey_fallback.py results/tukey_fallback
	mkdir -p docs/figures && cp results/tukey_fallback/fallback.png docs/figures/tukey_fallback.png
