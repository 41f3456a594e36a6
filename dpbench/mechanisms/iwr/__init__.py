"""Information-weighted regression mechanisms, central and local DP (spec 000)."""
