"""The pending-trial default: no completed result lost, batches spread, dead trials retired,
counts logged and reported; the paper's literal rule and Verma's beta_t as options."""

import datetime
import logging
import math
import time

import numpy as np
import optuna
import pytest
from optuna.distributions import FloatDistribution
from optuna.trial import FrozenTrial, TrialState

from optuna_gpbandit import (Censoring, GPTSSampler, GPUCBSampler, Hallucinate, IGPUCBSampler,
                             IgnorePending)
from optuna_gpbandit.acquisition.beta import igp_ucb_beta, sdf_beta
from optuna_gpbandit.report import pending_counts, sampler_record

DIST = {"x": FloatDistribution(0.0, 1.0), "y": FloatDistribution(0.0, 1.0)}


def _f(x, y):
    return (x - 0.3) ** 2 + (y - 0.6) ** 2


def _suggest(trial):
    return trial.suggest_float("x", 0.0, 1.0), trial.suggest_float("y", 0.0, 1.0)


def _min_distance(P):
    D = np.sqrt(((P[:, None, :] - P[None, :, :]) ** 2).sum(-1))
    np.fill_diagonal(D, np.inf)
    return float(D.min())


def _batches(sampler, rounds, size):
    """Ask ``size``, evaluate, tell all, ``rounds`` times; the points of each batch."""
    study = optuna.create_study(sampler=sampler)
    batches = []
    for _ in range(rounds):
        trials = [study.ask() for _ in range(size)]
        P = np.array([_suggest(t) for t in trials])
        for t, p in zip(trials, P):
            study.tell(t, _f(*p))
        batches.append(P)
    return study, batches


@pytest.mark.parametrize("sampler_cls", [GPUCBSampler, IGPUCBSampler, GPTSSampler])
def test_a_batch_of_twenty_is_spread_and_beats_random_search(sampler_cls):
    study, batches = _batches(sampler_cls(seed=0), 5, 20)
    assert min(_min_distance(P) for P in batches) >= 0.02
    random, _ = _batches(optuna.samplers.RandomSampler(seed=0), 5, 20)
    assert study.best_value < random.best_value
    assert pending_counts(study)["late"] == 0


def test_the_first_batch_before_any_result_is_space_filling():
    for seed in range(10):
        study = optuna.create_study(sampler=GPUCBSampler(seed=seed))
        P = np.array([_suggest(study.ask()) for _ in range(20)])
        assert _min_distance(P) >= 0.02


def _late_study(pending):
    """30 asks, then 30 tells: the first results arrive 29 launches late."""
    study = optuna.create_study(sampler=GPUCBSampler(seed=0, pending=pending))
    trials = [study.ask() for _ in range(30)]
    points = [_suggest(t) for t in trials]
    for t, p in zip(trials, points):
        study.tell(t, _f(*p))
    study.optimize(lambda t: _f(*_suggest(t)), n_trials=1)
    return study


def test_late_results_are_used_by_default_and_discarded_by_the_paper_rule(caplog):
    for pending in (Hallucinate(), Censoring(), Censoring(window=5)):
        counts = pending_counts(_late_study(pending))
        assert counts["late"] == 0 and counts["observed"] == 30
    with caplog.at_level(logging.WARNING, logger="optuna_gpbandit"):
        study = _late_study(Censoring.paper(window=20))
        study.optimize(lambda t: _f(*_suggest(t)), n_trials=2)
    counts = pending_counts(study)
    assert counts["late"] == 9 and counts["observed"] == 23  # delays 29 .. 21 > 20
    late = [r.getMessage() for r in caplog.records if "censored" in r.getMessage()]
    assert len(late) == 1 and "9 of 30 completed result(s)" in late[0]


def _foreign_history(n=300, workers=30, seed=0):
    rng = np.random.default_rng(seed)
    base = datetime.datetime(2026, 1, 1)
    free, spans = [0.0] * workers, []
    for _ in range(n):
        w = int(np.argmin(free))
        duration = float(rng.lognormal(0.0, 0.5))
        spans.append((free[w], free[w] + duration))
        free[w] += duration
    trials = []
    for k, (start, end) in enumerate(sorted(spans)):
        x = rng.random(2)
        trials.append(FrozenTrial(
            number=k, state=TrialState.COMPLETE, value=_f(*x),
            datetime_start=base + datetime.timedelta(minutes=start),
            datetime_complete=base + datetime.timedelta(minutes=end),
            params={"x": float(x[0]), "y": float(x[1])}, distributions=DIST, user_attrs={},
            system_attrs={}, intermediate_values={}, trial_id=k))
    return trials


def test_a_study_of_thirty_workers_continues_without_censoring_anything():
    study = optuna.create_study(sampler=GPUCBSampler(seed=0))
    study.add_trials(_foreign_history())
    study.optimize(lambda t: _f(*_suggest(t)), n_trials=3)
    counts = pending_counts(study)
    assert counts["late"] == 0 and counts["observed"] == 302
    paper = optuna.create_study(sampler=GPUCBSampler(seed=0, pending=Censoring.paper()))
    paper.add_trials(_foreign_history())
    paper.optimize(lambda t: _f(*_suggest(t)), n_trials=1)
    assert pending_counts(paper)["late"] > 100  # delays rebuilt from the timestamps


def _running_trial(study, started, point):
    """A RUNNING trial of a (crashed) worker that started at ``started``."""
    study.add_trial(FrozenTrial(
        number=0, state=TrialState.RUNNING, value=None, datetime_start=started,
        datetime_complete=None, params=dict(zip("xy", point)), distributions=DIST,
        user_attrs={}, system_attrs={}, intermediate_values={}, trial_id=0))
    return study.trials[-1]


def test_a_crashed_workers_trial_leaves_the_model_after_the_age_limit(caplog):
    study = optuna.create_study(sampler=GPUCBSampler(seed=0))
    study.optimize(lambda t: _f(*_suggest(t)), n_trials=8)
    old = _running_trial(study, datetime.datetime.now() - datetime.timedelta(hours=2), (0.3, 0.6))
    _running_trial(study, datetime.datetime.now(), (0.9, 0.9))
    with caplog.at_level(logging.WARNING, logger="optuna_gpbandit"):
        study.optimize(lambda t: _f(*_suggest(t)), n_trials=2)
    counts = pending_counts(study)
    assert counts["dead"] == 1 and counts["pending"] == 1  # 2 h > max(10 x longest, 300 s)
    assert sum("presumed dead" in r.getMessage() for r in caplog.records) == 1
    point = np.array([old.params["x"], old.params["y"]])
    asked = np.array([[t.params["x"], t.params["y"]] for t in study.trials[-2:]])
    assert np.abs(asked - point).max(axis=1).min() > 1e-3  # its point is still not proposed
    never = optuna.create_study(
        sampler=GPUCBSampler(seed=0, pending=Hallucinate(stale_after=math.inf)))
    never.add_trials([t for t in study.trials if t.state == TrialState.COMPLETE][:8])
    _running_trial(never, datetime.datetime.now() - datetime.timedelta(hours=2), (0.3, 0.6))
    never.optimize(lambda t: _f(*_suggest(t)), n_trials=1)
    assert pending_counts(never)["dead"] == 0 and pending_counts(never)["pending"] == 1


def test_a_stale_heartbeat_marks_a_trial_dead(tmp_path):
    storage = optuna.storages.RDBStorage(
        f"sqlite:///{tmp_path / 'hb.db'}", heartbeat_interval=1, grace_period=1)
    study = optuna.create_study(storage=storage, sampler=GPUCBSampler(seed=0))
    study.optimize(lambda t: _f(*_suggest(t)), n_trials=6)
    crashed = study.ask()
    _suggest(crashed)
    storage.record_heartbeat(crashed._trial_id)
    t = study.ask()
    _suggest(t)
    assert sampler_record(study.trials[t.number])["pending"]["pending"] == 1
    study.tell(t, _f(*_suggest(t)))
    storage.record_heartbeat(crashed._trial_id)
    time.sleep(2.5)  # the grace period passes without a heartbeat
    t = study.ask()
    _suggest(t)
    assert sampler_record(study.trials[t.number])["pending"]["dead"] == 1


def test_pending_trials_are_logged_once_with_counts(caplog):
    study = optuna.create_study(sampler=GPUCBSampler(seed=0))
    study.optimize(lambda t: _f(*_suggest(t)), n_trials=6)
    with caplog.at_level(logging.DEBUG, logger="optuna_gpbandit"):  # bookkeeping: DEBUG
        for _ in range(4):
            _suggest(study.ask())
    msgs = [r.getMessage() for r in caplog.records if "pending points" in r.getMessage()]
    assert len(msgs) == 1 and "1 running or waiting trial(s)" in msgs[0]
    assert pending_counts(study)["pending"] == 3


def test_verma_beta_formula_and_its_use():
    assert sdf_beta(2.0, 0.5, 0.1, 1.0, 0.1) == pytest.approx(
        0.5 + 1.1 * math.sqrt(2 * (3.0 + math.log(20.0))))
    assert sdf_beta(2.0, 0.5, 0.1, 1.0, 0.1, thompson=True) == pytest.approx(
        0.5 + 1.1 * math.sqrt(2 * (3.0 + math.log(40.0))))
    assert sdf_beta(2.0, 0.5, 0.1, 0.0, 0.2) == pytest.approx(igp_ucb_beta(2.0, 0.5, 0.1, 0.1))
    cfg = Censoring(theory_beta=True, width=0.5)
    study = optuna.create_study(sampler=IGPUCBSampler(seed=0, pending=cfg))
    study.optimize(lambda t: _f(*_suggest(t)), n_trials=7)
    _suggest(study.ask())
    t = study.ask()
    _suggest(t)
    rec = sampler_record(study.trials[t.number])
    assert rec["beta"] == pytest.approx(sdf_beta(rec["gamma"], 0.5, rec["R"], 0.5, 0.1))
    assert rec["nu"] == pytest.approx(rec["beta"] + rec["width_bonus"]) and rec["width_bonus"] > 0
    # GP-TS: Verma et al.'s literal width, without GP-TS's default early factor (3).
    study = optuna.create_study(sampler=GPTSSampler(seed=0, pending=cfg))
    study.optimize(lambda t: _f(*_suggest(t)), n_trials=7)
    rec = sampler_record(study.trials[-1])
    assert rec["early_factor"] == 1.0
    assert rec["v"] == pytest.approx(sdf_beta(rec["gamma"], 0.5, rec["R"], 0.5, 0.1, thompson=True))
    with pytest.raises(ValueError, match="theory_beta"):
        GPUCBSampler(pending=cfg)


@pytest.mark.parametrize("value", [-1.0, float("nan"), "1h", True])
def test_bad_stale_after_is_refused(value):
    # stale_after is a field of every pending rule (pending=Hallucinate(stale_after=...))
    for rule in (Hallucinate, Censoring, IgnorePending):
        with pytest.raises(ValueError, match="stale_after"):
            rule(stale_after=value)


def test_bad_censoring_flags_are_refused():
    with pytest.raises(ValueError, match="discard_late"):
        Censoring(discard_late="yes")
    with pytest.raises(ValueError, match="theory_beta"):
        Censoring(theory_beta=1)


_SCRIPT = """
import optuna, optuna_gpbandit as og
optuna.logging.set_verbosity(optuna.logging.{level})
def f(t):
    x = t.suggest_float("x", 0, 1)
    if t.number == 2:
        raise ValueError("a failed trial")
    return x ** 2
s = optuna.create_study(sampler=og.GPUCBSampler(seed=0))
s.optimize(f, n_trials=8, catch=(ValueError,))
"""


@pytest.mark.parametrize("level", ["INFO", "WARNING"])
def test_notices_show_like_optunas_own_lines_and_obey_its_verbosity(level):
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _SCRIPT.format(level=level)],
                         capture_output=True, text=True, timeout=600)  # a hang guard
    assert out.returncode == 0, out.stderr
    lines = [l for l in out.stderr.splitlines() if "enter the model as bad results" in l]
    if level == "INFO":
        assert len(lines) == 1 and lines[0].startswith("[I ")  # Optuna's format, once
    else:
        assert lines == []


def test_a_notice_said_once_per_study_is_said_again_for_a_new_study(caplog):
    """log_once remembers per live storage object: a new study is told again, even one whose
    storage lands at the address of a freed one (keyed by id(), such a study's notices were
    dropped as said already: flaky notices in a loop of in-memory studies)."""
    import gc

    from optuna_gpbandit import _notices

    said = []
    for _ in range(30):  # freed storages' addresses get reused within a few iterations
        study = optuna.create_study()
        said.append(_notices.log_once(study, "k", logging.WARNING, "once per study"))
        assert not _notices.log_once(study, "k", logging.WARNING, "once per study")
        del study
        gc.collect()
    assert all(said)
