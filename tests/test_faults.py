"""Load and crashes on a real shared storage (issue 8).

* Load: 8 worker processes, 200 trials of a cheap objective with a random sleep, on a journal
  file and on PostgreSQL: no lost trial, no worker exception, no two concurrently pending trials
  at one point, every trial COMPLETE.
* Crash: a worker is SIGKILLed in the middle of a trial whose point the sampler has stored. With
  Optuna's heartbeat (RDB storage) the trial becomes FAIL as soon as the grace period is over;
  without one it stays RUNNING forever, and the censoring window retires it: after ``window``
  more launches it no longer widens the confidence width. Either way the study goes on and finds
  Branin's minimum.

The helpers (worker processes, checks, local PostgreSQL) are in ``distributed.py``.
"""

from __future__ import annotations

import time

import optuna
import pytest
from optuna.trial import TrialState

import distributed
from optuna_gpbandit import Censoring, GPUCBSampler, Hallucinate
from optuna_gpbandit._storage import STATE, read_trial_json

pytestmark = pytest.mark.distributed

N_WORKERS = 8
N_TRIALS = 200
SPEC = {"sampler": "GPUCBSampler", "kwargs": {}, "seed": 0}
BRANIN_MIN = 0.397887


def test_eight_workers_two_hundred_trials(shared_storage):
    storage, name = shared_storage
    optuna.create_study(study_name=name, storage=distributed.open_storage(storage))
    start = time.perf_counter()
    workers = distributed.launch_workers(
        storage, name, SPEC, N_WORKERS, max_total=N_TRIALS, sleep=0.05, objective="quadratic3",
        timeout=900,
    )
    elapsed = time.perf_counter() - start
    report = distributed.check_study(storage, name, workers)
    print(f"\n{N_WORKERS} workers, {elapsed:.0f} s: {report}")
    assert not report.failed_workers, str(report)
    # Each worker stops once it sees N_TRIALS trials; the others' trials in flight still finish.
    assert N_TRIALS <= report.n_trials < N_TRIALS + N_WORKERS, str(report)
    assert not report.not_complete, str(report)
    assert not report.shared, str(report)
    # Proof that workers ran at the same time (so "no shared point" means something); how many
    # pairs overlap depends on the machine's load (at 400 trials, 358 on a loaded 2-core machine
    # and over 400 on an idle one), so no amount is demanded.
    assert report.n_overlapping_pairs > 0, "the workers never ran concurrently: " + str(report)
    trials = distributed.load_trials(storage, name)
    assert sorted(t.number for t in trials) == list(range(len(trials)))  # nothing lost
    # The quadratic's minimum is 0 at x = 0.3, lr = 1e-2, k = 5; the best of 200 random points
    # is ~0.036 (median; 90th percentile 0.081). Measured with censoring and 8 workers: 1e-6 to
    # 2e-2 (docs/guarantees.md), so this is a sanity check, not a quality claim.
    assert min(t.value for t in trials) < 0.1


def _warm_up(storage, name, n=8):
    """A few trials by a sampler in this process, so that the victim's trial is a GP one."""
    study = optuna.create_study(study_name=name, storage=distributed.open_storage(storage),
                                sampler=distributed.build_sampler(SPEC))
    study.optimize(distributed.Objective("branin"), n_trials=n)


def _state(trial):
    return read_trial_json(trial, STATE)


def test_killed_worker_without_heartbeat_is_retired_by_the_window_and_the_age_limit(tmp_path):
    storage, name = str(tmp_path / "study.journal"), "crash"
    _warm_up(storage, name)
    proc, victim = distributed.start_victim(storage, name, SPEC, model_trial=True)
    proc.kill()  # SIGKILL: no tell, no clean-up
    proc.wait()
    assert _state(distributed.load_trials(storage, name)[victim]) is not None  # a GP trial

    window = 20  # the default Censoring window, in launches
    study = optuna.load_study(study_name=name, storage=distributed.open_storage(storage),
                              sampler=GPUCBSampler(seed=0, pending=Censoring(window=window)))
    study.optimize(distributed.Objective("branin"), n_trials=window + 12)
    trials = study.get_trials(deepcopy=False)
    assert trials[victim].state == TrialState.RUNNING  # nobody fails it without a heartbeat
    later = [t for t in trials if t.number > victim]
    assert all(t.state == TrialState.COMPLETE for t in later)
    for t in later:
        st = _state(t)
        assert st["n_censored"] == 1  # the dead trial's point stays in the design, censored
        if t.number - victim <= window:
            assert st["width_bonus"] > 0.0  # still pending: it widens the width ...
        else:
            assert st["width_bonus"] == 0.0  # ... until the window retires it
    assert study.best_value < BRANIN_MIN + 0.05  # random search: ~1-3 after 40 trials
    # And the dead trial's point is not where the search ends up repeating.
    dead = trials[victim].params or {}
    assert all(t.params != dead for t in later)
    # Past the age limit (here 0 s) it leaves the model altogether, in the default mode too.
    study = optuna.load_study(study_name=name, storage=distributed.open_storage(storage),
                              sampler=GPUCBSampler(seed=0,
                                                   pending=Hallucinate(stale_after=0.0)))
    study.optimize(distributed.Objective("branin"), n_trials=3)
    for t in study.get_trials(deepcopy=False)[-3:]:
        assert _state(t)["pending"] == {"observed": len(later) + 8 + t.number - trials[-1].number - 1,
                                        "late": 0, "pending": 0, "stale": 0, "dead": 1,
                                        "unresolved": 0}
        assert t.params != dead


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_killed_worker_with_heartbeat_becomes_fail(backend, tmp_path, request, unique_study_name):
    if backend == "sqlite":
        storage = f"sqlite:///{tmp_path / 'study.db'}"
    else:
        storage = request.getfixturevalue("postgres_url")
    name = unique_study_name
    heartbeat = 1
    try:
        _warm_up(storage, name)
        proc, victim = distributed.start_victim(storage, name, SPEC, heartbeat=heartbeat,
                                                model_trial=True)
        proc.kill()
        proc.wait()
        time.sleep(2 * heartbeat + 1.5)  # past the grace period

        study = optuna.load_study(
            study_name=name, storage=distributed.open_storage(storage, heartbeat),
            sampler=GPUCBSampler(seed=0),
        )
        study.optimize(distributed.Objective("branin"), n_trials=24)  # fails stale trials first
        trials = study.get_trials(deepcopy=False)
        assert trials[victim].state == TrialState.FAIL
        later = [t for t in trials if t.number > victim]
        assert all(t.state == TrialState.COMPLETE for t in later)
        # A FAIL trial is not pending: nothing censored, nothing added to the width.
        assert all(_state(t)["n_censored"] == 0 and _state(t)["width_bonus"] == 0.0
                   for t in later if _state(t) is not None)
        assert study.best_value < BRANIN_MIN + 0.05
    finally:
        if backend == "postgres":
            try:
                optuna.delete_study(study_name=name, storage=storage)
            except KeyError:
                pass
