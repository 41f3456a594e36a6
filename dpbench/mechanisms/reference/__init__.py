"""Reference estimators drawn beside the private mechanisms (no privacy, no data-dependent output)."""
