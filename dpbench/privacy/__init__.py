"""Pure privacy calibration and accounting functions (no data, no randomness)."""
