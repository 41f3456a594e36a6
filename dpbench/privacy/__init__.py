"""Privacy accounting by primitive — pure functions (no data, no randomness): the analytic Gaussian mechanism
(agm), Gaussian DP (gdp), Rényi DP (rdp), zCDP (zcdp), exact privacy profiles (exact), tree aggregation (tree) and the
range checks (validate). A paper's calibration built on them lives beside its mechanism
(``dpbench/mechanisms/<family>/calibration.py``)."""
