"""Leaf helpers for the files dpbench writes: atomic, explained writes and the source tree's provenance (imports
nothing from dpbench)."""
