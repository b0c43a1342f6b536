"""Restarts (``reset=Restarts()``): when the model restarts, what it then sees, and bad input."""

from __future__ import annotations

import datetime
import json
import logging

import numpy as np
import optuna
import pytest
from optuna.distributions import FloatDistribution
from optuna.study import StudyDirection
from optuna.trial import TrialState, create_trial

from optuna_gpbandit import GPTSSampler, GPUCBSampler, IGPUCBSampler, Restarts
from optuna_gpbandit.restarts import (CERTAIN_SD, MIN_GAIN, RESTART_PATIENCE, UNEXPLORED_KEY,
                                       UNEXPLORED_SD, replay, restart_points, unexplored)
from optuna_gpbandit._storage import STATE

_DIST = {"x": FloatDistribution(0.0, 1.0)}
# In 2-D the data soon cover the domain, which holds restarts back (tested below); these
# settings open that gate (unexplored_sd=0), so the sampler tests see restarts within 60-80 trials.
_OPEN = Restarts(unexplored_sd=0.0)
_T0 = datetime.datetime(2026, 1, 1)


def _trial(number: int, value: float, sd: float | None, state: TrialState = TrialState.COMPLETE,
           unexplored: float = 0.9):
    attrs = {}
    if sd is not None:  # a model trial: its record holds the posterior sd at its point
        attrs[f"{STATE}:0"] = json.dumps(
            {"sigma": 2.0 * sd, "y_scale": 2.0, UNEXPLORED_KEY: unexplored})
    t = create_trial(params={"x": 0.5}, distributions=_DIST, system_attrs=attrs, state=state,
                     value=value if state == TrialState.COMPLETE else None)
    t.number = number
    t.datetime_start = _T0 + datetime.timedelta(seconds=number)  # a sequential study
    t.datetime_complete = t.datetime_start + datetime.timedelta(seconds=0.5)
    return t


def _settled_run(n: int, first_certain: int, values=None, unexplored: float = 0.9) -> list:
    """Trials 0..n-1 (minimised): five start-up trials, then model trials whose posterior sd is
    above the threshold before ``first_certain`` and below it from there on."""
    values = values if values is not None else [10.0 - min(i, 8) for i in range(n)]
    return [_trial(i, values[i], None if i < 5 else (CERTAIN_SD / 2 if i >= first_certain
                                                    else 3 * CERTAIN_SD),
                   unexplored=unexplored) for i in range(n)]


def test_restart_after_patience_settled_trials_without_gain():
    # Values improve until trial 8, then stay at 2: trials 9.. gain nothing; certain from 9 on.
    trials = _settled_run(40, first_certain=9)
    starts = restart_points(trials, StudyDirection.MINIMIZE)
    first = 9 + RESTART_PATIENCE  # trials 9 .. 9 + P - 1 settled: the next one starts anew
    assert starts[0] == first
    # Within the new segment the count starts from scratch: its first trial sets its best, and
    # the next settled ones (no gain, certain) restart it again after PATIENCE more.
    assert starts[1] == first + 1 + RESTART_PATIENCE
    # Order of the input does not matter (trials are replayed by number).
    assert restart_points(trials[::-1], StudyDirection.MINIMIZE) == starts


def test_no_restart_while_uncertain_or_improving():
    assert restart_points(_settled_run(40, first_certain=10**6), StudyDirection.MINIMIZE) == []
    # Certain throughout but every trial improves by more than MIN_GAIN of the range.
    values = [100.0 - i for i in range(40)]
    assert restart_points(_settled_run(40, 5, values), StudyDirection.MINIMIZE) == []
    # The same values maximised: trial 0 stays the best, so the settled streak runs from the
    # first model trial (5) on.
    assert restart_points(_settled_run(40, 5, values), StudyDirection.MAXIMIZE)[0] == 5 + RESTART_PATIENCE


def test_no_restart_where_the_data_cover_the_domain():
    # Settled, but the model is sure of most of the domain: its certainty is earned.
    covered = _settled_run(40, first_certain=9, unexplored=UNEXPLORED_SD * 0.9)
    assert restart_points(covered, StudyDirection.MINIMIZE) == []
    assert replay(covered, StudyDirection.MINIMIZE).streak == 31  # trials 9..39 settled
    # A trial without the measure cannot complete a streak; the next one that has it does.
    trials = _settled_run(40, first_certain=9)
    trials[9 + RESTART_PATIENCE - 1] = _trial(9 + RESTART_PATIENCE - 1, 2.0, CERTAIN_SD / 2,
                                              unexplored=float("nan"))
    assert restart_points(trials, StudyDirection.MINIMIZE)[0] == 10 + RESTART_PATIENCE


def test_unexplored_is_one_without_data_and_small_where_data_are_dense():
    from optuna_gpbandit._space import EncodedSpace
    from optuna_gpbandit.gp.posterior import GPParams, GPPosterior

    space = EncodedSpace({"x": FloatDistribution(0.0, 1.0)})
    params = GPParams("matern52", np.array([0.2]), 1.5, 1e-6)
    far = GPPosterior(np.array([[0.0]]), np.array([0.0]), params, np.array([False]))
    dense = GPPosterior(np.linspace(0, 1, 41)[:, None], np.zeros(41), params, np.array([False]))
    # One observation at 0: var(x) = s - k(x, 0)^2 / (s + noise), k = s * Matern-5/2(|x| / l).
    x = space.sobol(256, seed=0)[:, 0]
    r = np.sqrt(5.0) * x / 0.2
    corr = (1.0 + r + r**2 / 3.0) * np.exp(-r)
    expected = np.mean(np.sqrt(1.0 - corr**2 * 1.5 / (1.5 + 1e-6)))
    assert unexplored(far, space, 0) == pytest.approx(expected, rel=1e-6)
    assert unexplored(dense, space, 0) < 0.01


def test_an_improvement_below_min_gain_counts_as_none_and_breaks_nothing():
    values = [10.0 - min(i, 8) for i in range(40)]
    for i in range(9, 40):  # tiny steady gains: 1e-2 of MIN_GAIN x range each
        values[i] = values[i - 1] - 1e-2 * MIN_GAIN * 8
    assert restart_points(_settled_run(40, 9, values), StudyDirection.MINIMIZE)[0] == 9 + RESTART_PATIENCE


def test_an_uncertain_choice_or_a_trial_without_record_resets_the_streak():
    trials = _settled_run(40, first_certain=9)
    trials[15] = _trial(15, 2.0, None)  # an enqueued / external trial: no model record
    assert restart_points(trials, StudyDirection.MINIMIZE)[0] == 16 + RESTART_PATIENCE
    trials = _settled_run(40, first_certain=9)
    trials[15] = _trial(15, 2.0, 3 * CERTAIN_SD)  # a look elsewhere
    assert restart_points(trials, StudyDirection.MINIMIZE)[0] == 16 + RESTART_PATIENCE


def test_results_replay_in_the_order_they_came_in():
    # Trial 12 (settled) completes late, at 19.7 s: the settled results in order are 9-11,
    # 13-19, the tenth is trial 19's, so the new segment starts with trial 20 (in number order
    # it would have been 19); trial 12, completing after the restart, is in neither.
    trials = _settled_run(40, first_certain=9)
    trials[12].datetime_complete = _T0 + datetime.timedelta(seconds=19.7)
    assert restart_points(trials, StudyDirection.MINIMIZE)[0] == 20
    # The restart stays where it was made when later results of early trials come in.
    early = [t for t in trials if t.datetime_complete <= _T0 + datetime.timedelta(seconds=19.6)]
    assert restart_points(early, StudyDirection.MINIMIZE) == [20]
    # A trial chosen before the restart that completes after it is not part of the new segment.
    trials = _settled_run(40, first_certain=9)
    trials[17].datetime_complete = _T0 + datetime.timedelta(seconds=30.5)
    # settled results in order: 9-16, 18, 19 (the tenth, at 19.5 s): new segment from 20;
    # trial 17, completing at 30.5 s, belongs to neither count.
    starts = restart_points(trials, StudyDirection.MINIMIZE)
    assert starts[0] == 20 and starts[1] == 20 + 1 + RESTART_PATIENCE
    # No trial started after the restart yet: the segment begins with the next number.
    assert restart_points(_settled_run(9 + RESTART_PATIENCE, 9), StudyDirection.MINIMIZE) == [
        9 + RESTART_PATIENCE]


def test_failed_trials_are_skipped():
    trials = _settled_run(40, first_certain=9)
    trials[15] = _trial(15, 0.0, None, state=TrialState.FAIL)  # not counted at all
    assert restart_points(trials, StudyDirection.MINIMIZE)[0] == 10 + RESTART_PATIENCE


def _flat_with_bump(trial: optuna.Trial) -> float:
    x = trial.suggest_float("x", 0.0, 1.0)
    y = trial.suggest_float("y", 0.0, 1.0)
    return float((x - 0.3) ** 2 + (y - 0.6) ** 2)


@pytest.mark.parametrize("cls", [GPUCBSampler, IGPUCBSampler, GPTSSampler])
def test_sampler_restarts_and_the_model_sees_only_the_new_segment(cls, caplog):
    # In 2-D the data soon cover the domain, which holds restarts back (tested above); with
    # that gate open (_OPEN) the plumbing is seen within 70 trials.
    study = optuna.create_study(sampler=cls(seed=0, reset=_OPEN))
    with caplog.at_level(logging.INFO, logger="optuna_gpbandit"):
        study.optimize(_flat_with_bump, n_trials=70)
    starts = restart_points(study.trials, study.direction, _OPEN)
    assert starts, "a 2-D quadratic settles within 70 trials"
    s = starts[0]
    last = json.loads(study.trials[s - 1].system_attrs[f"{STATE}:0"])
    assert 0.0 <= last[UNEXPLORED_KEY] <= 1.0  # measured by the trial completing the streak
    for t in study.trials[s:s + 5]:  # a fresh start-up design: no model record
        assert f"{STATE}:0" not in t.system_attrs
    rec = json.loads(study.trials[s + 5].system_attrs[f"{STATE}:0"])
    assert rec["restart_start"] == s and rec["n_observed"] == 5
    assert sum(f"restart 1 at trial {s}" in r.getMessage() for r in caplog.records) == 1
    # The study keeps its best trial (from before the restart, or better).
    assert study.best_value <= min(t.value for t in study.trials[:s])
    # Stateless: a fresh sampler object on the stored trials finds the same restarts.
    assert restart_points(study.get_trials(deepcopy=True), study.direction, _OPEN) == starts


def test_default_never_restarts():
    study = optuna.create_study(sampler=GPUCBSampler(seed=0))
    study.optimize(_flat_with_bump, n_trials=40)
    records = [json.loads(t.system_attrs[f"{STATE}:0"]) for t in study.trials
               if f"{STATE}:0" in t.system_attrs]
    assert records and all("restart_start" not in r for r in records)
    assert records[-1]["n_observed"] == 39  # every earlier trial


def test_bad_arguments_name_the_argument():
    # reset= takes None, Restarts() or ChangeDetection(...) (one of them: restarts and change
    # detection cannot both be asked for); the old flag spelling is refused too.
    for bad in ("yes", True, 1.0, Restarts):  # (the class, not an instance, too)
        with pytest.raises(ValueError, match=r"reset must be None, Restarts\(\) or "):
            GPUCBSampler(reset=bad)  # type: ignore[arg-type]
    for name, value in (("patience", 0), ("certain_sd", -1.0), ("min_gain", float("nan")),
                        ("unexplored_sd", "0.5")):
        with pytest.raises(ValueError, match=name):
            Restarts(**{name: value})
    study = optuna.create_study(directions=["minimize", "minimize"],
                                sampler=GPUCBSampler(reset=Restarts(), seed=0))
    with pytest.raises(ValueError, match=r"reset=Restarts\(\.\.\.\) supports single-objective"):
        study.optimize(lambda t: (t.suggest_float("x", 0, 1), 1.0), n_trials=7)


def test_restart_points_ignore_non_finite_values():
    trials = _settled_run(40, first_certain=9)
    trials[12] = _trial(12, float("inf"), CERTAIN_SD / 2)
    # Skipped like a failed trial (an infinite value is no "gain" to compare with).
    assert restart_points(trials, StudyDirection.MINIMIZE)[0] == 10 + RESTART_PATIENCE


def test_a_resumed_study_restarts_as_the_uninterrupted_one():
    whole = optuna.create_study(sampler=GPUCBSampler(seed=3, reset=_OPEN))
    whole.optimize(_flat_with_bump, n_trials=60)
    assert restart_points(whole.trials, whole.direction, _OPEN)
    part = optuna.create_study(sampler=GPUCBSampler(seed=3, reset=_OPEN))
    part.optimize(_flat_with_bump, n_trials=35)
    part.sampler = GPUCBSampler(seed=3, reset=_OPEN)  # a new process: nothing in memory
    part.optimize(_flat_with_bump, n_trials=25)
    assert [t.params for t in part.trials] == [t.params for t in whole.trials]


def test_restarts_with_parallel_workers():
    # Pending trials of the old segment leave the model with it; nothing breaks, no trial lost.
    study = optuna.create_study(sampler=GPUCBSampler(seed=0, reset=_OPEN))
    study.optimize(_flat_with_bump, n_trials=80, n_jobs=3)
    assert len(study.trials) == 80
    assert all(t.state == TrialState.COMPLETE for t in study.trials)
    starts = restart_points(study.trials, study.direction, _OPEN)
    assert starts
    # Every model trial chose in a segment the final replay knows. (A worker starved between
    # creating its trial and choosing may choose after a restart at a later trial number: its
    # record then names that later start, and the model forgets its result, as any older one.)
    named = set()
    for t in study.trials:
        rec = t.system_attrs.get(f"{STATE}:0")
        if rec is not None and "restart_start" in json.loads(rec):
            named.add(json.loads(rec)["restart_start"])
    assert named and named <= set(starts)
