"""Stein GLM under LDP (spec 003): generators, real datasets, metrics, claim table."""
