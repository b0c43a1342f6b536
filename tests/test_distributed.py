"""Several worker processes share one study (issues 4 and 8).

For a journal file and PostgreSQL, and for GP-UCB and GP-TS: 4 processes x 10 trials with a
random sleep of up to 0.05 s per trial, then every trial must be COMPLETE, no worker may have
failed, no two trials pending at the same time may share a point, and the study must reload in
this process and continue with a new sampler. The worker, launcher and checker are in
``distributed.py``; the PostgreSQL server comes from the ``postgres_url`` fixture (conftest).
"""

import datetime
import time

import optuna
import pytest
from optuna.distributions import FloatDistribution
from optuna.trial import TrialState, create_trial

import distributed

pytestmark = pytest.mark.distributed

N_WORKERS = 4
N_TRIALS = 40
N_MORE = 5
SLEEP = 0.05
SEED = 0


@pytest.mark.parametrize("sampler", ["GPUCBSampler", "GPTSSampler"])
def test_workers_share_a_study(shared_storage, sampler):
    storage, name = shared_storage
    spec = {
        "sampler": sampler,
        "kwargs": {"n_startup_trials": 5, "pending": {"type": "Censoring"}},
        "seed": SEED,
    }
    # Created here, not by the workers: RDB schema creation is not safe from 4 processes at once.
    optuna.create_study(study_name=name, storage=distributed.open_storage(storage))

    start = time.perf_counter()
    workers = distributed.launch_workers(
        storage, name, spec, N_WORKERS,
        n_trials=N_TRIALS // N_WORKERS, max_total=N_TRIALS, sleep=SLEEP, timeout=600,
    )
    elapsed = time.perf_counter() - start
    report = distributed.check_study(storage, name, workers)
    print(f"\n{sampler}, {N_WORKERS} workers, {elapsed:.1f} s: {report}")
    near = distributed.shared_points(distributed.load_trials(storage, name), tol=1e-3)
    print(f"(information) concurrent pairs within 1e-3: {[(s.a, s.b) for s in near]}")
    assert not report.failed_workers, str(report)
    assert report.n_trials == N_TRIALS, str(report)
    assert not report.not_complete, str(report)
    assert report.n_overlapping_pairs > 0, "the workers never ran concurrently: " + str(report)
    assert not report.shared, str(report)

    # Reload in this process and continue with a new sampler.
    study = optuna.load_study(
        study_name=name, storage=distributed.open_storage(storage),
        sampler=distributed.build_sampler(spec),
    )
    study.optimize(distributed.Objective("branin"), n_trials=N_MORE)
    report = distributed.check_study(storage, name)
    assert report.n_trials == N_TRIALS + N_MORE, str(report)
    assert report.ok, str(report)
    assert study.best_value < 5.0  # Branin's minimum is 0.398; random search over 45 trials ~2-5


def test_checker_reports_concurrent_trials_at_one_point():
    """The checker itself: overlapping trials at one point are reported, sequential ones not."""
    t0 = datetime.datetime(2026, 1, 1)
    sec = datetime.timedelta(seconds=1)
    dists = {"x": FloatDistribution(0.0, 10.0), "lr": FloatDistribution(1e-4, 1.0, log=True)}

    def trial(start, end, x, lr, state=TrialState.COMPLETE):
        t = create_trial(params={"x": x, "lr": lr}, distributions=dists, value=0.0, state=state)
        t.datetime_start, t.datetime_complete = t0 + start * sec, t0 + end * sec
        return t

    trials = [
        trial(0, 2, 5.0, 0.01),
        trial(1, 3, 5.0, 0.01),  # overlaps trial 0 at the same point
        trial(2, 4, 5.0, 0.01),  # starts when trial 0 ends: no overlap with 0, overlaps 1
        trial(5, 6, 5.0, 0.01),  # alone
        trial(5.5, 7, 5.0 + 1e-4, 0.01),  # overlaps 3, 1e-5 apart in the unit space
    ]
    for number, t in enumerate(trials):
        t.number = number
    report = distributed.check_trials(trials)
    assert [(s.a, s.b) for s in report.shared] == [(0, 1), (1, 2)]
    assert not report.ok
    assert report.n_overlapping_pairs == 3
    assert [(s.a, s.b) for s in distributed.shared_points(trials, tol=1e-4)] == [
        (0, 1), (1, 2), (3, 4)
    ]
    assert distributed.point_distance(trials[0], trial(0, 1, 5.0, 0.1)) == pytest.approx(0.25)

    # A trial created before another completes but whose point was stored after (its stamp):
    # the completed trial was an observation to it, so a repeat of its point is sequential.
    late = trial(1, 3, 5.0, 0.01)
    late.number = 1
    late.system_attrs = {"gpbandit:stamp": (t0 + 2.5 * sec).timestamp()}
    assert distributed.shared_points([trials[0], late]) == []
    late.system_attrs = {"gpbandit:stamp": (t0 + 1.5 * sec).timestamp()}  # stored while 0 ran
    assert [(s.a, s.b) for s in distributed.shared_points([trials[0], late])] == [(0, 1)]
