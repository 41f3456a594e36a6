"""Gradient-based mechanisms (DP-GD, DP-FTRL and its baselines)."""
