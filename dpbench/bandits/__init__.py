"""Contextual-bandit simulator and private bandit algorithms."""
