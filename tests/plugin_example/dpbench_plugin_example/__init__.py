"""A tiny package outside dpbench that contributes a mechanism (see docs/library.md)."""
