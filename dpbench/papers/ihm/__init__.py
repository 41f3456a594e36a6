"""Lev et al., IHM vs AdaSSP/LinMix (spec 004): Table 2 analysis."""
