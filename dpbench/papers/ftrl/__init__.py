"""DP-FTRL with designed noise covariance (spec 002): generators, public split, MLP features."""
