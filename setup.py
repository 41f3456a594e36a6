"""Build hook (the metadata lives in pyproject.toml): the vendored data ships inside the wheel.

``datasets/`` (≈ 31 MB, provenance in datasets/README.md) is copied to ``dpbench/_datasets/`` of the built package,
where :func:`dpbench.data._base.data_dir` finds it when dpbench is installed from a wheel, ``pip install .`` or a git
URL. An editable install (``pip install -e .``) reads ``datasets/`` of the clone instead, so nothing is copied.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

VENDORED = Path(__file__).resolve().parent / "datasets"


class BuildPyWithData(build_py):
    """``build_py`` + a copy of ``datasets/`` into ``<build_lib>/dpbench/_datasets``."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False) or not VENDORED.is_dir():
            return
        shutil.copytree(VENDORED, Path(self.build_lib) / "dpbench" / "_datasets", dirs_exist_ok=True)


setup(cmdclass={"build_py": BuildPyWithData})
