"""Information-weighted regression (spec 000): generators, E1 matrices, figures."""
