"""Regret and information-gain report."""

import numpy as np
import optuna
import pytest

from optuna_gpbandit import GPModel, GPUCBSampler, regret_report
from optuna_gpbandit._storage import STATE, read_trial_json
from optuna_gpbandit.gp import GPParams, information_gain
from optuna_gpbandit.gp.kernels import Kernel


def _study_with_values(direction, values):
    study = optuna.create_study(direction=direction)
    dist = optuna.distributions.FloatDistribution(0.0, 1.0)
    for i, v in enumerate(values):
        study.add_trial(optuna.trial.create_trial(params={"x": i / 10}, distributions={"x": dist}, value=v))
    study.add_trial(
        optuna.trial.create_trial(params={"x": 0.5}, distributions={"x": dist},
                                  state=optuna.trial.TrialState.FAIL)
    )
    return study


@pytest.mark.parametrize("direction,values,optimum,expected", [
    ("minimize", [3.0, 1.0, 2.0, 0.5], 0.0, [3.0, 1.0, 2.0, 0.5]),
    ("maximize", [1.0, 4.0, 2.0, 5.0], 5.0, [4.0, 1.0, 3.0, 0.0]),
])
def test_regret_curves(direction, values, optimum, expected):
    rep = regret_report(_study_with_values(direction, values), optimum)
    np.testing.assert_allclose(rep.instantaneous, expected)
    np.testing.assert_allclose(rep.cumulative, np.cumsum(expected))
    np.testing.assert_allclose(rep.average, np.cumsum(expected) / np.arange(1, 5))
    np.testing.assert_allclose(rep.simple, np.minimum.accumulate(expected))
    assert rep.numbers.tolist() == [0, 1, 2, 3]  # the FAIL trial is not counted
    assert rep.information_gain is None  # no sampler state stored, no params given
    assert rep.summary()["cumulative"] == pytest.approx(sum(expected))


def test_information_gain_with_given_params_matches_logdet():
    study = _study_with_values("minimize", [3.0, 1.0, 2.0, 0.5])
    params = GPParams("se", np.array([0.2]), 1.0, 0.025)
    rep = regret_report(study, 0.0, params=params)
    X = np.array([[0.0], [0.1], [0.2], [0.3]])
    K = Kernel("se", 0.2, 1.0, np.array([False]))(X, X)
    assert rep.total_information_gain == pytest.approx(information_gain(K, 0.025), abs=1e-10)
    for i in range(1, 5):
        assert rep.information_gain[i - 1] == pytest.approx(information_gain(K[:i, :i], 0.025))


def test_information_gain_from_sampler_state_matches_its_records():
    sampler = GPUCBSampler(seed=0, model=GPModel(lengthscale=0.2, kernel_scale=1.0,
                                                 noise_var=0.025, kernel="se"))
    study = optuna.create_study(sampler=sampler)
    study.optimize(lambda t: (t.suggest_float("x", 0, 1) - 0.3) ** 2, n_trials=12)
    rep = regret_report(study, 0.0)
    last = read_trial_json(study.trials[-1], STATE)
    assert rep.total_information_gain == pytest.approx(last["info_gain"] + last["info_gain_inc"], abs=1e-9)
    assert np.all(np.diff(rep.information_gain) > 0)


def test_multi_objective_is_rejected():
    study = optuna.create_study(directions=["minimize", "minimize"])
    with pytest.raises(ValueError):
        regret_report(study, 0.0)
