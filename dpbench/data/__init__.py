"""Dataset loaders: one module per family, each registering ``load(rng, **options) -> Dataset``."""

from dpbench.data._base import Dataset, DataUnavailableError, Population, data_dir

__all__ = ["Dataset", "DataUnavailableError", "Population", "data_dir"]
