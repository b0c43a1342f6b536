"""``optuna_gpbandit.visualization.plot_record``: the figure's traces are the trials' records and
values (issue 48). Needs plotly (in the test extra)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import optuna
import pytest
from optuna.trial import TrialState

from optuna_gpbandit import GPTSSampler, GPUCBSampler, sampler_record
from optuna_gpbandit.visualization import plot_record

N_STARTUP = 4


def _objective(trial: optuna.Trial) -> float:
    x = trial.suggest_float("x", -2.0, 2.0)
    y = trial.suggest_float("y", -2.0, 2.0)
    return (x - 0.5) ** 2 + (y + 0.5) ** 2 + 1.0  # minimum 1.0


def _run(sampler_cls=GPUCBSampler, n_trials: int = 9, direction: str = "minimize"):
    study = optuna.create_study(direction=direction,
                                sampler=sampler_cls(seed=0, n_startup_trials=N_STARTUP))
    sign = -1.0 if direction == "maximize" else 1.0
    study.optimize(lambda t: sign * _objective(t), n_trials=n_trials)
    return study


@pytest.fixture(scope="module")
def ucb_study():
    return _run()


def _traces(fig) -> dict:
    names = [t.name for t in fig.data]
    assert len(names) == len(set(names)), names
    return {t.name: t for t in fig.data}


def _xy(trace) -> tuple[list[int], list[float]]:
    return [int(v) for v in trace.x], [np.nan if v is None else float(v) for v in trace.y]


def test_panels_and_traces_are_the_records_and_the_values(ucb_study):
    study = ucb_study
    fig = plot_record(study)
    tr = _traces(fig)
    assert set(tr) == {"Objective Value", "Prediction (mu +- pred_sd)", "Start-up Trial",
                       "Infeasible Trial", "nu", "beta", "Best Value"}
    assert fig.layout.title.text == "Sampler Record Plot"
    assert fig.layout.xaxis3.title.text == "Trial"
    assert fig.layout.yaxis.title.text == "Objective Value"

    model = [t for t in study.trials if sampler_record(t) is not None]
    startup = [t for t in study.trials if sampler_record(t) is None]
    assert [t.number for t in startup] == list(range(N_STARTUP))
    assert len(model) == len(study.trials) - N_STARTUP
    recs = [sampler_record(t) for t in model]

    # panel 1: observed values split by record; the prediction is the record's mu +- pred_sd
    assert _xy(tr["Objective Value"]) == ([t.number for t in model], [t.value for t in model])
    assert _xy(tr["Start-up Trial"]) == ([t.number for t in startup], [t.value for t in startup])
    assert _xy(tr["Infeasible Trial"]) == ([], [])
    numbers, mu = _xy(tr["Prediction (mu +- pred_sd)"])
    assert numbers == [t.number for t in model]  # no start-up trial among the model's points
    np.testing.assert_array_equal(mu, [r["mu"] for r in recs])
    np.testing.assert_array_equal(tr["Prediction (mu +- pred_sd)"].error_y.array,
                                  [r["pred_sd"] for r in recs])
    assert all(r["pred_sd"] > r["sigma"] for r in recs)  # the band is not sigma

    # panel 2: the widths of the records
    assert _xy(tr["nu"]) == ([t.number for t in model], [r["nu"] for r in recs])
    assert _xy(tr["beta"]) == ([t.number for t in model], [r["beta"] for r in recs])

    # panel 3: best so far over every COMPLETE trial
    numbers, best = _xy(tr["Best Value"])
    assert numbers == [t.number for t in study.trials]
    np.testing.assert_allclose(best, np.minimum.accumulate([t.value for t in study.trials]))
    assert fig.layout.yaxis3.type == "linear"

    # the traces sit in their panels
    assert {tr[n].yaxis for n in ("Objective Value", "Prediction (mu +- pred_sd)")} == {"y"}
    assert {tr[n].yaxis for n in ("nu", "beta")} == {"y2"}
    assert tr["Best Value"].yaxis == "y3"


def test_simple_regret_from_optimum_on_a_log_axis(ucb_study):
    values = [t.value for t in ucb_study.trials]
    fig = plot_record(ucb_study, optimum=0.5)
    tr = _traces(fig)
    assert "Best Value" not in tr
    numbers, regret = _xy(tr["Simple Regret"])
    assert numbers == [t.number for t in ucb_study.trials]
    np.testing.assert_allclose(regret, np.minimum.accumulate(np.array(values) - 0.5))
    assert fig.layout.yaxis3.type == "log"


def test_regret_of_a_maximised_study_and_no_point_at_zero_regret():
    study = _run(direction="maximize", n_trials=7)
    values = np.array([t.value for t in study.trials])
    best = float(values.max())
    tr = _traces(plot_record(study, optimum=best))
    _, regret = _xy(tr["Simple Regret"])
    expected = np.minimum.accumulate(best - values)
    expected[expected <= 0] = np.nan  # cannot be drawn on a log axis
    np.testing.assert_allclose(regret, expected)
    assert np.isnan(regret[-1])
    _, best_so_far = _xy(_traces(plot_record(study))["Best Value"])
    np.testing.assert_allclose(best_so_far, np.maximum.accumulate(values))


def test_gp_ts_width_is_v():
    study = _run(GPTSSampler, n_trials=6)
    tr = _traces(plot_record(study))
    assert "beta" not in tr
    recs = [r for r in map(sampler_record, study.trials) if r is not None]
    assert _xy(tr["v"])[1] == [r["v"] for r in recs]
    assert _xy(tr["nu"])[1] == [r["nu"] for r in recs]


def test_failed_pruned_and_infeasible_trials():
    study = optuna.create_study(sampler=GPUCBSampler(seed=0, n_startup_trials=N_STARTUP))
    study.optimize(_objective, n_trials=N_STARTUP + 1)
    failed = study.ask()
    _objective(failed)
    study.tell(failed, state=TrialState.FAIL)
    pruned = study.ask()
    _objective(pruned)
    study.tell(pruned, state=TrialState.PRUNED)
    infeasible = study.ask()
    value = _objective(infeasible)
    study._storage.set_trial_system_attr(infeasible._trial_id, "constraints", [1.0])
    study.tell(infeasible, value - 10.0)  # the best value, but infeasible

    frozen = {t.number: t for t in study.trials}
    assert all(sampler_record(frozen[t.number]) is not None
               for t in (failed, pruned, infeasible))
    tr = _traces(plot_record(study))
    left_out = {failed.number, pruned.number}
    for name in ("Objective Value", "Start-up Trial", "Infeasible Trial",
                 "Prediction (mu +- pred_sd)", "Best Value"):
        assert not left_out & set(_xy(tr[name])[0]), name
    assert left_out <= set(_xy(tr["nu"])[0])  # their width was chosen all the same
    assert _xy(tr["Infeasible Trial"]) == ([infeasible.number], [value - 10.0])
    assert infeasible.number in _xy(tr["Prediction (mu +- pred_sd)"])[0]
    assert infeasible.number not in _xy(tr["Objective Value"])[0]
    numbers, best = _xy(tr["Best Value"])
    assert infeasible.number not in numbers  # best so far: feasible trials only
    feasible = [t.value for t in study.trials
                if t.state == TrialState.COMPLETE and t.number != infeasible.number]
    assert best[-1] == min(feasible)
    assert tr["Infeasible Trial"].showlegend


def test_multi_objective_needs_target_and_plots_that_objective():
    def two(trial):
        v = _objective(trial)
        return v, -2.0 * v

    study = optuna.create_study(directions=["minimize", "maximize"],
                                sampler=GPUCBSampler(seed=0, n_startup_trials=N_STARTUP))
    study.optimize(two, n_trials=N_STARTUP + 2)
    with pytest.raises(ValueError, match="2 objectives; pass target="):
        plot_record(study)
    with pytest.raises(ValueError, match="target must be the index of an objective, 0 to 1"):
        plot_record(study, target=2)
    fig = plot_record(study, target=1)
    tr = _traces(fig)
    model = [t for t in study.trials if sampler_record(t) is not None]
    recs = [sampler_record(t) for t in model]
    assert fig.layout.yaxis.title.text == "Objective 1"
    assert _xy(tr["Objective 1"]) == ([t.number for t in model], [t.values[1] for t in model])
    _, mu = _xy(tr["Prediction (mu +- sigma)"])  # records of several objectives hold sigma
    assert mu == [r["mu"][1] for r in recs]
    assert list(tr["Prediction (mu +- sigma)"].error_y.array) == [r["sigma"][1] for r in recs]
    assert _xy(tr["nu"])[1] == [r["per_objective"][1]["nu"] for r in recs]
    _, best = _xy(tr["Best Value"])
    np.testing.assert_allclose(best, np.maximum.accumulate([t.values[1] for t in study.trials]))


def test_clear_errors():
    with pytest.raises(ValueError, match="the study has no trials"):
        plot_record(optuna.create_study())
    other = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    other.optimize(_objective, n_trials=3)
    with pytest.raises(ValueError, match="none of the study's 3 trials has a record"):
        plot_record(other)
    startup_only = _run(n_trials=N_STARTUP)
    with pytest.raises(ValueError, match="only its start-up trials"):
        plot_record(startup_only)
    study = _run(n_trials=N_STARTUP + 1)
    with pytest.raises(ValueError, match="optimum must be a finite number"):
        plot_record(study, optimum=float("nan"))
    with pytest.raises(ValueError, match="target must be the index of an objective, 0 to 0"):
        plot_record(study, target=1)
    assert plot_record(study, target=0, target_name="loss").layout.yaxis.title.text == "loss"


def test_importing_the_package_does_not_import_plotly():
    code = ("import sys, optuna_gpbandit, optuna_gpbandit.visualization; "
            "assert not [m for m in sys.modules if m.startswith('plotly')]")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
