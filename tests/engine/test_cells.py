"""The grid pieces both kinds share (:mod:`dpbench.engine.cells`): a trial's slot is the one its kind gave it before
the pieces were shared — pinned here, so that a change of the identity (which would make every resumed run recompute)
cannot pass unnoticed."""

from __future__ import annotations

import math

import pytest

from dpbench import registry
from dpbench.config import parse_config
from dpbench.engine.cells import Cell, Entry, TrialContext, cell_slot, grid_entries

REGRESSION = {
    "name": "t", "seed": 7, "trials": 2, "epsilons": [0.5],
    "datasets": [{"loader": "sphere_linear", "options": {"n": 200, "d": 3}}],
    "mechanisms": ["adassp", {"mechanism": "ihm", "hyper": {"T": 3}}],
}  # fmt: skip
BANDIT = {
    "name": "b", "kind": "bandit", "seed": 3, "trials": 2, "T": 64, "epsilons": [1.0, math.inf],
    "environments": [{"env": "sphere", "options": {"d": 3, "n_arms": 4}}],
    "algorithms": [{"algorithm": "elim_iwr_jdp", "hyper": {"c_b": 0.5}}, "linucb"],
}  # fmt: skip
#: slots and shard names computed by the kinds' own identity code before it was shared (commit e7079c0)
PINNED = {
    "regression": (
        ["a94bcb5d89a69805a3a14b620cfe2eeb214b41e215d2fb14c0f6825a97b024eb",
         "7449867496652901330948d972007bb169827274721544209bbff78cdfc31011"],
        "d307b7537-mb4449bc4-e0.5-t0-2.csv",
    ),
    "bandit": (
        ["b00c16dbe108c63c37c553bb12903c41193af7d119521aa19b311eeff94ba4c4",
         "8d7f538b49e215e1cdcd6b7fe7b9244ad313bfd946debac6348fe60ba8e66433",
         "1cf562178f2e5c3e5378356de6efc5e385f9190a798e5289b167ced69f567198"],
        "ee1c747c6-c88b3b356-t0-1.csv",
    ),
}  # fmt: skip


@pytest.mark.parametrize(("kind", "raw"), [("regression", REGRESSION), ("bandit", BANDIT)])
def test_both_kinds_keep_the_trial_slots_they_had_before_the_pieces_were_shared(kind, raw):
    config = parse_config(raw)
    task = registry.get_kind(kind).plan(config, log=lambda *_: None).tasks[0]
    slots, shard = PINNED[kind]
    assert [trial.slot for trial in task.trials()][: len(slots)] == slots
    assert task.shard_name == shard


def test_a_task_subset_runs_exactly_the_trials_asked_for():
    task = registry.get_kind("bandit").plan(parse_config(BANDIT), log=lambda *_: None).tasks[0]
    trials = task.trials()
    wanted = [trials[0].handle, trials[-1].handle]
    parts = task.subset(wanted)
    assert sorted(t.slot for part in parts for t in part.trials()) == sorted([trials[0].slot, trials[-1].slot])


def test_the_slot_depends_on_every_value_of_the_context_and_on_epsilon():
    context = TrialContext.of(seed=1, delta=1e-5)
    base = cell_slot("bandit", {"environment": {"env": "sphere"}}, "algorithm", "linucb", {"lam": 1.0}, 1.0, context)
    assert base != cell_slot("bandit", {"environment": {"env": "sphere"}}, "algorithm", "linucb", {"lam": 1.0}, 0.5,
                             context)  # fmt: skip
    assert base != cell_slot("bandit", {"environment": {"env": "sphere"}}, "algorithm", "linucb", {"lam": 1.0}, 1.0,
                             TrialContext.of(seed=2, delta=1e-5))  # fmt: skip


def test_grid_entries_label_each_combination_and_sort_its_hyperparameters():
    entries = grid_entries("ihm", "IHM", [{"C": 0.5}, {"C": 1.0}], lambda combo: {"T": 3, **combo})
    assert [e.label for e in entries] == ["IHM (C=0.5)", "IHM (C=1.0)"]
    assert entries[0].hyper == (("C", 0.5), ("T", 3)) and entries[0].key == 'ihm{"C": 0.5, "T": 3}'
    assert Cell(entries[0], 0, 1.0).entry.as_dict("mechanism") == {"mechanism": "ihm", "label": "IHM (C=0.5)",
                                                                   "hyper": {"C": 0.5, "T": 3}}  # fmt: skip
    assert Entry("linucb", "LinUCB").as_dict("mechanism", hyper=False) == {"mechanism": "linucb", "label": "LinUCB"}


def test_both_kinds_are_built_from_the_engines_pieces():
    """docs/architecture.md: the bandit kind adds only environments, the simulator and the algorithms — its entries,
    cells, context and task are the engine's (no second plug-in system)."""
    import inspect

    from dpbench.bandits import config as bandit_config
    from dpbench.bandits import kind as bandit_kind
    from dpbench.engine import cells, regression, schema

    assert issubclass(bandit_kind.BanditTask, cells.CellTask) and issubclass(regression.Task, cells.CellTask)
    bandit = parse_config(BANDIT)
    regress = parse_config(REGRESSION)
    assert {type(e) for e in bandit.algorithms} == {type(e) for e in regress.mechanisms} == {cells.Entry}
    plan = registry.get_kind("bandit").plan(bandit, log=lambda *_: None)
    assert {type(c) for task in plan.tasks for c in task.cells} == {cells.Cell}
    assert type(plan.tasks[0].context) is cells.TrialContext
    own = {
        name
        for module in (bandit_kind, bandit_config, schema, regression)
        for name, obj in vars(module).items()
        if inspect.isclass(obj) and obj.__module__ == module.__name__
    }
    assert not own & {"Unit", "Cell", "AlgoEntry", "MechanismEntry", "BanditContext", "TrialContext"}
