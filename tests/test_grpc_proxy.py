"""A study shared through Optuna's gRPC storage proxy (issue 61, "Beyond one database").

The test starts the proxy itself (``run_grpc_proxy_server`` over an SQLite file, in a process of
its own on a free localhost port), creates the study once, then runs 4 worker processes of
``GPUCBSampler(deterministic_objective=True)`` through ``GrpcStorageProxy``: every trial must be
COMPLETE with a unique number, no two trials at one point (a deterministic objective is never
asked twice), every ``gpbandit:`` record on the trials intact, and what the proxy serves equal to
what the database holds. The workers, launcher and checks are those of ``distributed.py``.
"""

from __future__ import annotations

import copy
import importlib.util
import itertools
import time

import optuna
import pytest

import distributed
from optuna_gpbandit import GPUCBSampler
from optuna_gpbandit._storage import PARAMS, STAMP, STATE

N_WORKERS = 4
TRIALS_PER_WORKER = 10
SPEC = {"sampler": "GPUCBSampler", "kwargs": {"deterministic_objective": True}, "seed": 0}
SAME = 1e-6  # unit-scaled distance under which two points are one (distributed.point_distance)


def _missing_grpc() -> str | None:
    missing = [pkg for pkg, module in (("grpcio", "grpc"), ("protobuf", "google.protobuf"))
               if importlib.util.find_spec(module.split(".")[0]) is None
               or importlib.util.find_spec(module) is None]
    if missing:
        return (f"Optuna's gRPC storage proxy needs {' and '.join(missing)} "
                "(pip install -e '.[test]')")
    return None


@pytest.mark.distributed
@pytest.mark.filterwarnings("ignore::optuna.exceptions.ExperimentalWarning")  # the gRPC proxy
def test_four_workers_share_a_study_through_the_grpc_proxy(tmp_path):
    reason = _missing_grpc()
    if reason:
        pytest.skip(reason)
    url, name = f"sqlite:///{tmp_path / 'study.db'}", "grpc-shared"
    with distributed.GrpcProxy(url) as proxy:
        # Created once, before the workers start (they load it).
        optuna.create_study(study_name=name, storage=distributed.open_storage(proxy.storage))
        start = time.perf_counter()
        workers = distributed.launch_workers(
            proxy.storage, name, SPEC, N_WORKERS, n_trials=TRIALS_PER_WORKER, sleep=0.1,
            objective="quadratic3", timeout=900,
        )
        elapsed = time.perf_counter() - start
        report = distributed.check_study(proxy.storage, name, workers)
        served = distributed.load_trials(proxy.storage, name)
    print(f"\n{N_WORKERS} workers through the gRPC proxy, {elapsed:.1f} s: {report}")
    assert not report.failed_workers, str(report)
    assert report.n_trials == N_WORKERS * TRIALS_PER_WORKER, str(report)
    assert not report.not_complete, str(report)
    assert sorted(t.number for t in served) == list(range(len(served)))  # unique, none lost
    # Proof that the workers ran at the same time; how much they overlap depends on the machine.
    assert report.n_overlapping_pairs > 0, "the workers never ran concurrently: " + str(report)
    assert not report.shared, str(report)
    # Deterministic objective: no point is worth asking twice, concurrently or not.
    repeats = [(a.number, b.number, a.params) for a, b in itertools.combinations(served, 2)
               if distributed.point_distance(a, b) <= SAME]
    assert not repeats, repeats

    # Every record intact, as the proxy serves it and in the database behind it.
    stored = distributed.load_trials(url, name)
    for source, trials in (("served", served), ("stored", stored)):
        problems = [p for t in trials for p in distributed.record_problems(t)]
        assert not problems, f"{source}:\n" + "\n".join(problems)
    # The records checked are there: model trials with their point, as the sampler writes them.
    assert sum(STATE + ":0" in t.system_attrs for t in served) > 0
    assert all(PARAMS + ":0" in t.system_attrs for t in served if STATE + ":0" in t.system_attrs)

    # What the proxy served is what the database holds.
    def content(trials):
        return [(t.number, t.state, t.values, t.params, t.system_attrs) for t in trials]

    assert content(served) == content(stored)


def test_record_problems_reports_each_kind_of_broken_record(tmp_path):
    """The record check itself: intact records pass, each kind of damage is reported."""
    study = optuna.create_study(storage=f"sqlite:///{tmp_path / 'study.db'}",
                                sampler=GPUCBSampler(seed=0))
    study.optimize(lambda t: (t.suggest_float("x", -5.0, 5.0) - 1.0) ** 2
                   + t.suggest_int("k", 0, 4), n_trials=7)
    assert [p for t in study.trials for p in distributed.record_problems(t)] == []
    # The last trial's model record in three chunks, as a record of over 4090 characters is
    # stored.
    trial = copy.deepcopy(study.trials[-1])
    text = trial.system_attrs[STATE + ":0"]
    trial.system_attrs = {**trial.system_attrs, STATE + ":0": text[:100],
                          STATE + ":1": text[100:200], STATE + ":2": text[200:]}
    assert distributed.record_problems(trial) == []

    def damaged(change):
        t = copy.deepcopy(trial)
        attrs = dict(t.system_attrs)
        change(attrs)
        t.system_attrs = attrs
        return distributed.record_problems(t)

    def cut(key):
        return lambda a: a.update({key: a[key][: len(a[key]) // 2]})

    where = f"trial {trial.number}"
    assert any(STATE in p and "JSON" in p for p in damaged(cut(STATE + ":1")))
    assert any(STATE in p and "JSON" in p for p in damaged(lambda a: a.pop(STATE + ":2")))
    assert any(STATE in p and "chunk 0" in p for p in damaged(lambda a: a.pop(STATE + ":0")))
    assert any(STATE in p and "chunk 1" in p for p in damaged(lambda a: a.pop(STATE + ":1")))
    assert any(STATE in p and "dict" in p
               for p in damaged(lambda a: a.update({STATE + ":0": "[1, 2]", STATE + ":1": ""})))
    assert any(PARAMS in p and "JSON" in p for p in damaged(cut(PARAMS + ":0")))
    other = '{"params": {"x": 0.123, "k": 2.0}}'
    assert any(PARAMS in p and "x=0.123" in p
               for p in damaged(lambda a: a.update({PARAMS + ":0": other})))
    assert any(STAMP in p for p in damaged(lambda a: a.pop(STAMP)))
    assert any(STAMP in p for p in damaged(lambda a: a.update({STAMP: "soon"})))
    assert any("unknown" in p for p in damaged(lambda a: a.update({"gpbandit:stat:0": "{}"})))
    lost = damaged(lambda a: a.pop(PARAMS + ":0"))
    assert lost and all(p.startswith(where) for p in lost)
