"""Sufficient-statistics perturbation mechanisms (OLS reference, AdaSSP)."""
