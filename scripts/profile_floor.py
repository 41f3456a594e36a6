"""Where the CPU of a config goes (issue 40): run a slice of it in this process with one BLAS thread under cProfile
and split its CPU into import, data generation, mechanism fits, descriptions (datasets.json statistics), metrics and
the engine's own overhead, then print the heaviest functions.

Usage: python scripts/profile_floor.py CONFIG [YAML_OVERRIDES] [--top K]

YAML_OVERRIDES replace top-level fields of the config (e.g. ``'{data_draws: 2, trials: 1}'``); a ``grid`` key
replaces every dataset's grid (``'{grid: {n: [8192]}}'``). Measurements, not tests: state the load (``uptime``).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

start_cpu = time.process_time()
from threadpoolctl import threadpool_limits  # noqa: E402

from dpbench.config import load_config  # noqa: E402
from dpbench.engine import run  # noqa: E402

IMPORT_CPU = time.process_time() - start_cpu

#: category → the functions (file suffix, name) whose cumulative time is that category; the first match of a call
#: path counts (a description's Gram is a description's, a fit's lazy Gram the mechanism's)
CATEGORIES: dict[str, tuple[tuple[str, str], ...]] = {
    "data": (("engine/regression.py", "prepare_dataset"), ("bandits/kind.py", "make_instance")),
    "mechanism": (("registry.py", "checked"), ("bandits/kind.py", "run_task")),
    "descriptions": (("engine/regression.py", "description"), ("bandits/kind.py", "describe_environments")),
    "metrics": (("engine/regression.py", "metric_columns"),),
}


def sliced_config(path: Path, overrides: dict[str, Any], folder: Path) -> Path:
    """The config with ``overrides`` applied (``grid`` to every dataset), written under ``folder``."""
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    grid = overrides.pop("grid", None)
    for entry in raw.get("datasets", []) if grid is not None else []:
        entry["grid"] = grid
    raw.update(overrides, output_dir=str(folder))
    out = folder / path.name
    out.write_text(yaml.safe_dump(raw, allow_unicode=True))
    return out


def category_seconds(stats: pstats.Stats) -> dict[str, float]:
    """Cumulative seconds of each category's functions (a function listed twice on one path is counted once)."""
    table = stats.stats  # type: ignore[attr-defined]
    out = {}
    for name, functions in CATEGORIES.items():
        out[name] = sum(
            entry[3]
            for (file, _line, func), entry in table.items()
            if any(file.endswith(suffix) and func == wanted for suffix, wanted in functions)
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", type=Path)
    parser.add_argument("overrides", nargs="?", default="{}")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        config = load_config(sliced_config(args.config, yaml.safe_load(args.overrides) or {}, Path(tmp)))
        profile = cProfile.Profile(time.process_time)
        with threadpool_limits(limits=1):
            profile.enable()
            run(config, n_jobs=1, fresh=True, progress=False, log=lambda _m: None)
            profile.disable()
    stats = pstats.Stats(profile)
    total = stats.total_tt  # type: ignore[attr-defined]
    parts = category_seconds(stats)
    parts["engine"] = total - sum(parts.values())
    line = "  ".join(f"{name} {seconds:.2f}" for name, seconds in parts.items())
    print(f"{args.config.stem} {args.overrides}: import {IMPORT_CPU:.2f}  {line}  (run {total:.2f} CPU-s)")
    stats.sort_stats("tottime").print_stats(args.top)


if __name__ == "__main__":
    main()
