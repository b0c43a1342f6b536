"""Long-term constraint metrics of the report: V_T = ||[sum_t g(x_t)]^+|| and time averages."""

import math

import numpy as np
import optuna
import pytest
from optuna.distributions import FloatDistribution
from optuna.samplers import RandomSampler
from optuna.trial import TrialState, create_trial

from optuna_gpbandit.constraints import ConstraintDataError
from optuna_gpbandit.report import (
    constraint_report,
    cumulative_violation,
    long_term_metrics,
    violation_curves,
)

DIST = {"x": FloatDistribution(-10.0, 10.0)}


def test_violation_clips_after_summing():
    v, avg = violation_curves([1.0, -1.0, -1.0])
    np.testing.assert_allclose(v, [1.0, 0.0, 0.0])  # slack cancels the earlier violation
    assert avg[-1] == 0.0  # max(0, -1) / 3, not 1/3 (the sum of clipped values)
    np.testing.assert_allclose(avg, [1.0, 0.0, 0.0])
    np.testing.assert_allclose(cumulative_violation([[-1.0], [0.5], [2.0]]), [0.0, 0.0, 1.5])


def test_violation_euclidean_norm_over_constraints():
    np.testing.assert_allclose(cumulative_violation([[3.0, 4.0]]), [5.0])
    g = [[1.0, -2.0], [1.0, 1.0], [1.0, 3.0]]
    # sums: (1, -2) -> 1; (2, -1) -> 2; (3, 2) -> sqrt(13)
    np.testing.assert_allclose(cumulative_violation(g), [1.0, 2.0, math.sqrt(13.0)])
    assert cumulative_violation(np.zeros((0, 2))).shape == (0,)
    with pytest.raises(ValueError):
        cumulative_violation([[np.nan]])


@pytest.mark.parametrize("maximize", [True, False])
def test_long_term_metrics_by_hand(maximize):
    f = np.array([2.0, 0.5, 1.5, 1.0])
    g = np.array([0.5, -1.0, 0.25, 0.5])
    f_star = 1.0
    m = long_term_metrics(f, g, f_star, maximize=maximize)
    r = (f_star - f) if maximize else (f - f_star)
    np.testing.assert_allclose(m.regret, r)  # negative entries kept: regret can be negative
    assert (m.regret < 0).any()
    np.testing.assert_allclose(m.average_regret, np.cumsum(r) / np.arange(1, 5))
    np.testing.assert_allclose(m.violation, [0.5, 0.0, 0.0, 0.25])
    np.testing.assert_allclose(m.average_violation, [0.5, 0.0, 0.0, 0.0625])
    np.testing.assert_allclose(m.average_value, np.cumsum(f) / np.arange(1, 5))
    s = m.summary()
    assert s["n"] == 4 and s["average_violation"] == pytest.approx(0.0625)
    assert s["average_regret"] == pytest.approx(np.mean(r))
    with pytest.raises(ValueError):
        long_term_metrics(f, g[:3], f_star)


def _study(direction, rows):
    study = optuna.create_study(direction=direction)
    for value, cons in rows:
        study.add_trial(create_trial(params={"x": value}, distributions=DIST, value=value,
                                     constraints=cons))
    study.add_trial(create_trial(params={"x": 0.0}, distributions=DIST, state=TrialState.FAIL))
    return study


@pytest.mark.needs_optuna5
def test_constraint_report_on_stored_values():
    rows = [(1.0, {"b": 1.0, "a": -0.5}), (3.0, {"b": -2.0, "a": 1.0}),
            (2.0, None), (0.0, {"b": 0.5, "a": 0.5})]
    study = _study("minimize", rows)
    rep = constraint_report(study, 0.5)
    assert rep.numbers.tolist() == [0, 1, 3]  # the FAIL trial and trial 2 (no constraints) are out
    assert rep.names == ("a", "b") and [s.number for s in rep.skipped] == [2]
    np.testing.assert_allclose(rep.regret, [0.5, 2.5, -0.5])
    # sums (a, b): (-0.5, 1) -> 1; (0.5, -1) -> 0.5; (1, -0.5) -> 1
    np.testing.assert_allclose(rep.violation, [1.0, 0.5, 1.0])
    np.testing.assert_allclose(rep.average_violation, [1.0, 0.25, 1 / 3])
    assert rep.summary()["n"] == 3
    with pytest.raises(ConstraintDataError, match="Trial 2"):
        constraint_report(study, 0.5, on_missing="raise")


@pytest.mark.needs_optuna5
def test_constraint_report_with_noise_free_functions():
    def objective(trial):
        x = trial.suggest_float("x", -1.0, 1.0)
        trial.set_constraint("0", x + 0.1)  # observed with an offset (noise stand-in)
        return x + 0.05

    study = optuna.create_study(direction="maximize", sampler=RandomSampler(seed=3))
    study.optimize(objective, n_trials=6)
    xs = np.array([t.params["x"] for t in study.trials])
    rep = constraint_report(study, 0.0, objective=lambda p: p["x"], constraints=lambda p: [p["x"]])
    np.testing.assert_allclose(rep.values, xs)
    np.testing.assert_allclose(rep.regret, -xs)
    np.testing.assert_allclose(rep.violation, np.maximum(np.cumsum(xs), 0.0))
    stored = constraint_report(study, 0.0)
    np.testing.assert_allclose(stored.violation, np.maximum(np.cumsum(xs + 0.1), 0.0))
    np.testing.assert_allclose(stored.values, xs + 0.05)


def test_constraint_report_rejects_multi_objective():
    study = optuna.create_study(directions=["minimize", "minimize"])
    with pytest.raises(ValueError):
        constraint_report(study, 0.0)
