"""Sketch-and-solve mechanisms (LinMix, IHM)."""
