"""Values users produce (issue 47): a penalty constant for invalid settings, values near the
float limits, an infinite best value, a constant objective."""

from __future__ import annotations

import logging
import math

import numpy as np
import optuna
import pytest
from optuna.study import StudyDirection
from optuna.trial import create_trial

from optuna_gpbandit import FailedTrials, GPUCBSampler, sampler_record
from optuna_gpbandit._extreme import extreme_numbers
from optuna_gpbandit._observations import standardization

optuna.logging.set_verbosity(optuna.logging.WARNING)


def _trials(values):
    dist = optuna.distributions.FloatDistribution(0.0, 1.0)
    return [create_trial(value=v, params={"x": i / 100}, distributions={"x": dist})
            for i, v in enumerate(values)]


def _numbers(values, direction=StudyDirection.MINIMIZE, **kw):
    trials = _trials(values)
    for i, t in enumerate(trials):
        t.number = i
    return sorted(extreme_numbers(trials, direction, **kw))


def test_a_penalty_constant_is_extreme_whatever_its_size():
    valid = [0.31, 0.12, 0.55, 0.08, 0.27, 0.6]
    for P in (1e3, 1e6, 1e12, 1e300):
        values = valid[:3] + [P, P] + valid[3:] + [P]
        assert _numbers(values) == [3, 4, 8]
    # maximised: the penalty is a large negative value; a large positive one is the best
    assert _numbers([-v for v in valid] + [-1e6], StudyDirection.MAXIMIZE) == [6]
    assert _numbers(valid + [1e6], StudyDirection.MAXIMIZE) == []


def test_ordinary_spreads_and_a_few_excellent_values_are_not_extreme():
    rng = np.random.default_rng(0)
    assert _numbers(list(rng.lognormal(0.0, 1.0, 40))) == []  # a long tail, no gap
    # two excellent values far above the rest: they are not a bulk that makes the rest extreme
    assert _numbers([5.0, 4.9, 4.8, 4.7, 4.6, 4.5, 4.4, 4.3, 0.01, 0.02]) == []
    assert _numbers([1.0, 1e6, 1e6]) == []  # too few trials to tell
    # a repeated value a gap of ten times the spread above it away, with at least a quarter
    # of the trials above
    assert _numbers([0.1, 0.2, 0.3, 3.5, 3.5]) == [3, 4]
    assert _numbers([0.1, 0.2, 0.3, 2.2, 2.2]) == []  # a gap of 1.9 < 10 x 0.2
    assert _numbers([0.1, 0.2, 0.3, 3.5, 3.5], gap=20.0) == []
    # distinct values below a wide gap are measurements (a branch of large values) ...
    assert _numbers([0.1, 0.2, 0.3, 3.5, 4.0, 7.0]) == []
    assert _numbers([0.1, 0.2, 0.3, 3e5, 4e5]) == []
    # ... unless a code: a single value whose gap to the next better one is more than
    # UNUSABLE_GAP (100) times the spread above it, as a diverged run's squared error of 1.8e7
    # among 5.6e3-2.9e4 (780 times)
    assert _numbers([5573.0, 6131.0, 6184.0, 23212.0, 28874.0, 29063.0, 1.82e7]) == [6]
    assert _numbers([0.1, 0.2, 0.3, 25.0]) == [3]  # 0.2 x 100 = 20 < 24.7
    assert _numbers([0.1, 0.2, 0.3, 15.0]) == []  # 14.7 < 20: a measurement
    # ordinary losses below a near-tied top (a stump plateau; in-house DT regression, trial 11)
    # are measurements: each lies near the next better one
    stump = [0.90278, 0.71830, 0.81773, 0.82338, 0.83786, 0.79418, 0.82981, 0.78133,
             0.71799, 0.71799, 0.71799]
    assert _numbers(stump) == []


def test_extreme_values_are_scale_free():
    values = [0.31, 0.12, 0.55, 1e4, 0.08, 1e4]
    expected = _numbers(values)
    assert expected == [3, 5]
    for scale in (1e-300, 1e-8, 1e8, 1e300):
        assert _numbers([v * scale for v in values]) == expected


@pytest.mark.parametrize("scale", [1e-300, 1e-150, 1e-8, 1.0, 1e8, 1e250])
def test_standardization_is_scale_free(scale):
    y = np.array([0.3, -1.2, 2.5, 0.7])
    shift, sd = standardization(y)
    s_shift, s_sd = standardization(y * scale)
    assert s_shift == pytest.approx(shift * scale, rel=1e-12)
    assert s_sd == pytest.approx(sd * scale, rel=1e-12)
    assert standardization(np.full(4, 3.0 * scale))[1] == 1.0  # equal values: no scale


def _penalised(trial):
    x, y = trial.suggest_float("x", 0.0, 1.0), trial.suggest_float("y", 0.0, 1.0)
    if x + y > 1.2:
        return 1e6
    return (x - 0.45) ** 2 + (y - 0.6) ** 2


def test_a_penalty_region_is_learnt_as_failures_and_said_once(caplog):
    sampler = GPUCBSampler(seed=0)
    study = optuna.create_study(sampler=sampler)
    with caplog.at_level(logging.INFO, logger="optuna_gpbandit"):
        study.optimize(_penalised, n_trials=30)
    said = [r for r in caplog.records if "far worse than the rest" in r.getMessage()]
    assert 1 <= len(said) <= 3  # once per doubling of the count
    # the penalty does not set the model's scale: the targets are standardised by the spread
    # of the valid values (below 1), not by one set by 1e6
    assert sampler_record(study.trials[-1])["y_scale"] < 1.0
    assert study.best_value < 0.01
    # after the start-up design the model rarely asks for an invalid point
    later = [t.value for t in study.trials[10:]]
    assert sum(v == 1e6 for v in later) <= 5


def test_without_the_rule_the_penalty_is_a_value():
    sampler = GPUCBSampler(seed=0, failures=FailedTrials(extreme_gap=None))
    study = optuna.create_study(sampler=sampler)
    study.optimize(_penalised, n_trials=12)
    assert sampler_record(study.trials[-1])["y_scale"] > 1e4
    with pytest.raises(ValueError, match="extreme_gap"):
        FailedTrials(extreme_gap=0.0)


def test_tiny_values_are_modelled_as_values_near_one():
    def f(scale):
        def objective(trial):
            x = trial.suggest_float("x", 0.0, 1.0)
            return scale * (x - 0.3) ** 2
        return objective

    params = []
    for scale in (1e-300, 1.0):
        study = optuna.create_study(sampler=GPUCBSampler(seed=3))
        study.optimize(f(scale), n_trials=15)
        params.append(study.best_params["x"])
    assert params[0] == pytest.approx(0.3, abs=0.01)
    assert params[0] == pytest.approx(params[1], abs=1e-3)


def test_an_infinite_best_value_is_said_once(caplog):
    def objective(trial):
        x = trial.suggest_float("x", 0.0, 1.0)
        return -math.inf if trial.number == 6 else (x - 0.5) ** 2

    study = optuna.create_study(sampler=GPUCBSampler(seed=0))
    with caplog.at_level(logging.WARNING, logger="optuna_gpbandit"):
        study.optimize(objective, n_trials=12)
    said = [r for r in caplog.records if "direction of improvement" in r.getMessage()]
    assert len(said) == 1
    assert study.best_value == -math.inf  # Optuna's own best value is untouched


def test_a_constant_objective_is_said_once(caplog):
    study = optuna.create_study(sampler=GPUCBSampler(seed=0))
    with caplog.at_level(logging.INFO, logger="optuna_gpbandit"):
        study.optimize(lambda t: 0.0 * t.suggest_float("x", 0, 1) + 1.0, n_trials=12)
    said = [r for r in caplog.records if "observed values are equal" in r.getMessage()]
    assert len(said) == 1
