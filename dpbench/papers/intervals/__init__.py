"""Private confidence intervals for regression coefficients and their measured coverage (issue 37; spec 005)."""
