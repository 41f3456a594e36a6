"""The run's main process, per block. A shard's CSV body written without a DataFrame
(:func:`dpbench.engine.store.csv_body`) is byte for byte the literal path, ``pd.DataFrame(rows).to_csv(index=False)``
(:func:`~dpbench.engine.store.pandas_body`): on random blocks mixing every value kind pandas infers a dtype from, on
the cases that decide a column's dtype, and on every block of a real run. Assembly parsing the shards that share a
header line in one ``read_csv`` writes the trials.csv that one ``read_csv`` per shard writes."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpbench.config import parse_config
from dpbench.engine import core, run
from dpbench.engine.store import column_cells, csv_body, pandas_body

KINDS = ("none", "nan", "bool", "int", "float", "str")
FLOATS = (0.1, -0.0, 1e16, 1e15, 1e-5, 1e-4, 123456789.123, float("inf"), -float("inf"), 5e-324, 2.0**53 + 1)
INTS = (0, 1, -3, 2**40, 2**62, -(2**63), 2**63 - 1)
STRINGS = ("a", "", "x,y", 'q"t', "line\nbreak", "1.5", "True", "nan", "NA", " sp ", "é", "3")


def random_value(rng: random.Random, kind: str):
    """One value of ``kind``, as a Python or a NumPy scalar."""
    numpy = rng.random() < 0.5
    if kind == "none":
        return None
    if kind == "nan":
        return np.float64("nan") if numpy else float("nan")
    if kind == "bool":
        value = rng.random() < 0.5
        return np.bool_(value) if numpy else value
    if kind == "int":
        value = rng.choice((*INTS, rng.randint(-(10**6), 10**6)))
        return np.int64(value) if numpy else value
    if kind == "float":
        value = rng.choice((*FLOATS, rng.random() * 10 ** rng.randint(-30, 30), rng.gauss(0, 1)))
        return np.float64(value) if numpy else value
    return rng.choice(STRINGS)


def random_block(rng: random.Random) -> list[dict]:
    """A few rows; each column mixes one to three kinds, and a row may lack a column."""
    columns = {f"c{j}" if rng.random() < 0.9 else f"c,{j}": rng.sample(KINDS, rng.randint(1, 3)) for j in range(5)}
    return [
        {c: random_value(rng, rng.choice(kinds)) for c, kinds in columns.items() if rng.random() > 0.1}
        for _ in range(rng.randint(1, 6))
    ]


def test_random_mixed_blocks_are_written_byte_for_byte_as_pandas_writes_them():
    rng = random.Random(29)
    blocks = [block for block in (random_block(rng) for _ in range(600)) if any(block)]
    mismatched = [block for block in blocks if csv_body(block) != pandas_body(block)]
    assert len(blocks) > 500
    assert not mismatched, mismatched[:2]


@pytest.mark.parametrize(
    "rows",
    [
        [{"a": 1}, {"a": 2}],  # int64
        [{"a": 1}, {"a": None}],  # ints with None → float64: "1.0", ""
        [{"a": 1}, {"b": 2.5}],  # a key a row lacks is NaN
        [{"a": True}, {"a": None}],  # bool with None → object: "True", ""
        [{"a": True}, {"a": 3}],  # bool with int → object
        [{"a": "x"}, {"a": 0.30000000000000004}],  # str with float → object, the float's repr
        [{"a": None}, {"a": None}],  # all missing
        [{"a": 'say "hi", then\nleave'}],  # quoting
        [{"a": 1e16, "b": 1e-5, "c": np.float64(2.0) ** 0.5}],  # float formats
    ],
)
def test_the_cases_that_decide_a_columns_dtype_match_pandas(rows):
    assert csv_body(rows) == pandas_body(rows)


def test_a_value_the_shortcut_does_not_cover_goes_through_pandas():
    assert column_cells([2**64]) is None  # beyond int64: pandas picks uint64 or object
    assert column_cells([np.float32(0.1)]) is None  # float32 widens to a float64 whose repr differs
    rows = [{"a": 2**64, "b": np.float32(0.1)}, {"a": 1, "b": None}]
    assert csv_body(rows) == pandas_body(rows)


@pytest.mark.slow  # two runs of a small config (≈ 8 s); the random blocks above pin the same in the default suite
def test_every_block_of_a_real_run_is_written_as_pandas_writes_it(tmp_path, monkeypatch):
    """A run with NaN (a control without intervals), int, str and float columns: each block's body is compared with
    the literal path before it is stored, and the run's trials.csv is the one the literal path writes."""
    compared: list[bool] = []

    def both(rows):
        body = csv_body(rows)
        compared.append(body == pandas_body(rows))
        return body

    config = {
        "name": "mixed",
        "output_dir": str(tmp_path / "new"),
        "seed": 5,
        "trials": 2,
        "epsilons": [1.0],
        "data_draws": 2,
        "metrics": ["ci"],
        "datasets": [{"loader": "sphere_linear", "label": "s", "options": {"n": 300, "d": 2, "n_test": 0}}],
        "mechanisms": ["adassp_pboot", "adassp", "ols"],
    }
    monkeypatch.setattr(core, "csv_body", both)
    new_dir = run(parse_config(config), progress=False, log=lambda _: None)
    assert compared and all(compared)
    monkeypatch.setattr(core, "csv_body", pandas_body)
    old_dir = run(parse_config({**config, "output_dir": str(tmp_path / "old")}), progress=False, log=lambda _: None)
    new = _without_timing(new_dir / "trials.csv")
    assert new == _without_timing(old_dir / "trials.csv")
    cells = {cell for row in new[1:] for cell in row}
    assert {"", "0", "1", "adassp"} <= cells  # NaN, int and str cells were in the blocks (bools: the random blocks)


def _without_timing(path: Path) -> list[list[str]]:
    """trials.csv's cells without its timing columns (wall seconds differ between two runs)."""
    import csv

    rows = list(csv.reader(path.read_text().splitlines()))
    keep = [i for i, name in enumerate(rows[0]) if "seconds" not in name and "time" not in name]
    return [[row[i] for i in keep] for row in rows]


# ------------------------------------------------------------------------------------------------------------
# assembly: shards sharing a header line parsed in one read_csv (core.JOINT_PARSE) = one read_csv per shard


def test_a_joint_parse_that_per_shard_parsing_would_change_is_refused():
    """Text that a shard alone would parse as a number or a boolean, or an integral float beyond 2⁵³, sends the
    group back to per-shard parsing."""
    assert core.joint_parse_is_exact(pd.DataFrame({"a": [1, 2], "b": [0.5, np.nan], "c": ["x", None]}))
    assert not core.joint_parse_is_exact(pd.DataFrame({"c": ["x", "0.1"]}))
    assert not core.joint_parse_is_exact(pd.DataFrame({"c": ["x", "true"]}))
    assert not core.joint_parse_is_exact(pd.DataFrame({"f": [0.5, 2.0**60]}))


def test_rows_are_counted_by_lines_only_when_no_quoted_field_holds_a_line_break():
    assert core.line_rows('a,b\n1,"x, y"\n2,z\n') == 2
    assert core.line_rows('a,b\n1,"x\ny"\n') is None
    assert core.line_rows("a,b\n1,2") is None  # cut short


def reuse_tables(config: dict, tmp_path: Path, monkeypatch) -> tuple[bytes, bytes]:
    """trials.csv of one fully stored run assembled jointly, then one shard at a time (every row reused both
    times, timing columns included)."""
    run_dir = run(parse_config(config), progress=False, log=lambda _: None)
    joint = (run_dir / "trials.csv").read_bytes()
    (run_dir / "trials.csv").unlink()
    monkeypatch.setattr(core, "JOINT_PARSE", False)
    run(parse_config(config), progress=False, log=lambda _: None)
    return joint, (run_dir / "trials.csv").read_bytes()


def test_joint_and_per_shard_assembly_write_the_same_trials_csv_on_a_mixed_run(tmp_path, monkeypatch):
    """Two datasets of different d (different columns: two header groups), one labelled with a comma (quoted
    cells), three mechanisms, NaN cells, several data draws."""
    config = {
        "name": "mixed",
        "output_dir": str(tmp_path),
        "seed": 11,
        "trials": 2,
        "data_draws": 3,
        "epsilons": [1.0],
        "metrics": ["ci"],
        "datasets": [
            {"loader": "sphere_linear", "label": "n=300, d=2", "options": {"n": 300, "d": 2, "n_test": 0}},
            {"loader": "sphere_linear", "label": "d3", "options": {"n": 200, "d": 3, "n_test": 0}},
        ],
        "mechanisms": ["adassp_pboot", "adassp", "ols"],
    }
    groups: list[bool] = []
    group_part = core.group_part
    monkeypatch.setattr(core, "group_part", lambda *a: groups.append((part := group_part(*a)) is not None) or part)
    joint, literal = reuse_tables(config, tmp_path, monkeypatch)
    assert joint == literal
    assert groups == [True, True]  # one joint parse per header group
    assert b'"n=300, d=2"' in joint and b",," in joint
