# Leaderboard (docs/leaderboard.md): the 30 offline IHM datasets × 13 mechanisms (+ IWR-DP, + diffprivlib at 20 trials)
# × 7 ε under privacy: strict, and the control that measures what strict moved (LinMix in its code variant, privacy:
# paper). diffprivlib_lr needs .[peers]. Measured time: docs/leaderboard.md. Not part of reproduce-all.

LB_BOARD := results/leaderboard/board
LB_RUNS := results/leaderboard results/leaderboard_iwr results/leaderboard_diffprivlib

.PHONY: reproduce-leaderboard tukey-fallback

reproduce-leaderboard:
	$(DPBENCH) run configs/leaderboard/leaderboard.yaml --n-jobs $(N_JOBS) --no-progress
	$(DPBENCH) run configs/leaderboard/leaderboard_iwr.yaml --n-jobs $(N_JOBS) --no-progress
	$(DPBENCH) run configs/leaderboard/leaderboard_diffprivlib.yaml --n-jobs $(N_JOBS) --no-progress
	$(DPBENCH) run configs/leaderboard/leaderboard_linmix_paper.yaml --n-jobs $(N_JOBS) --no-progress
	$(DPBENCH) leaderboard $(LB_RUNS) --out $(LB_BOARD)
	$(DPBENCH) leaderboard $(LB_RUNS) results/leaderboard_linmix_paper --out $(LB_BOARD)_with_control
	mkdir -p docs/figures && cp $(LB_BOARD)/performance_profile.png docs/figures/leaderboard_profile.png

# TukeyEM's fallback rate vs n per d (docs/leaderboard.md, "When TukeyEM stops falling back"): 11,200 trials, ≈ 200 CPU-s
tukey-fallback:
	$(DPBENCH) run configs/leaderboard/tukey_fallback.yaml --n-jobs $(N_JOBS) --no-progress
	$(PYTHON) scripts/tukey_fallback.py results/tukey_fallback
	mkdir -p docs/figures && cp results/tukey_fallback/fallback.png docs/figures/tukey_fallback.png
