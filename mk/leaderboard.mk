# Leaderboard (docs/leaderboard.md): the 30 offline IHM datasets × 8 mechanisms (+ IWR-DP) × 7 ε under
# privacy: strict, and the control that measures what strict moved (LinMix in its code variant, privacy: paper).
# Measured 2026-11-27 on 2 shared cores: 17.0 + 1.8 + 0.4 min (1,091 + 86 + 19 CPU-s); diffprivlib_lr needs .[peers].
# Not part of reproduce-all (not a paper's figure).

LB_BOARD := results/leaderboard/board

.PHONY: reproduce-leaderboard

reproduce-leaderboard:
	$(DPBENCH) run configs/leaderboard/leaderboard.yaml --n-jobs $(N_JOBS) --no-progress
	$(DPBENCH) run configs/leaderboard/leaderboard_iwr.yaml --n-jobs $(N_JOBS) --no-progress
	$(DPBENCH) run configs/leaderboard/leaderboard_linmix_paper.yaml --n-jobs $(N_JOBS) --no-progress
	$(DPBENCH) leaderboard results/leaderboard results/leaderboard_iwr --out $(LB_BOARD)
	$(DPBENCH) leaderboard results/leaderboard results/leaderboard_iwr results/leaderboard_linmix_paper \
		--out $(LB_BOARD)_with_control
	mkdir -p docs/figures && cp $(LB_BOARD)/performance_profile.png docs/figures/leaderboard_profile.png

# TukeyEM's fallback rate vs n per d (docs/leaderboard.md, "When TukeyEM stops falling back"): 11,200 trials, ≈ 200 CPU-s
.PHONY: tukey-fallback
tukey-fallback:
	$(DPBENCH) run configs/leaderboard/tukey_fallback.yaml --n-jobs $(N_JOBS) --no-progress
	$(PYTHON) scripts/tukey_fallback.py results/tukey_fallback
	mkdir -p docs/figures && cp results/tukey_fallback/fallback.png docs/figures/tukey_fallback.png
