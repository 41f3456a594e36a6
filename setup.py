"""Build hook (the metadata lives in pyproject.toml): the vendored data and the configs ship inside the wheel.

``datasets/`` (≈ 31 MB, provenance in datasets/README.md) is copied to ``dpbench/_datasets/`` of the built package,
where :func:`dpbench.data._base.data_dir` finds it when dpbench is installed from a wheel, ``pip install .`` or a git
URL; ``configs/`` likewise to ``dpbench/_configs/`` (``dpbench list configs``, ``dpbench run ihm_vs_adassp``:
:func:`dpbench.commands._common.shipped_configs_folder`). An editable install (``pip install -e .``) reads both
folders of the clone instead, so nothing is copied.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
#: folder of the clone → its copy inside the package
SHIPPED = {"datasets": "_datasets", "configs": "_configs"}


class BuildPyWithData(build_py):
    """``build_py`` + a copy of ``datasets/`` and ``configs/`` into ``<build_lib>/dpbench/_datasets``, ``_configs``."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        for source, target in SHIPPED.items():
            if (ROOT / source).is_dir():
                shutil.copytree(ROOT / source, Path(self.build_lib) / "dpbench" / target, dirs_exist_ok=True)


setup(cmdclass={"build_py": BuildPyWithData})
