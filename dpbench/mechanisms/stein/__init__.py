"""Stein GLM estimators under local DP with public data (spec 003)."""
