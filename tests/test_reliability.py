"""Reliability (issue 8): bad input, degenerate spaces, threads and resume in a new process.

Every sampler of the package (the three core ones, the constrained and the change-detection one)
goes through the same cases. What each case must give is a clear error, or a logged skip and a
valid suggestion: never a parameter outside its distribution, never a crashed study.
"""

from __future__ import annotations

import json
import logging
import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import optuna
import pytest
from optuna.distributions import CategoricalDistribution, FloatDistribution
from optuna.trial import TrialState, create_trial

from optuna_gpbandit import (
    AcquisitionSearch,
    ConstrainedGPUCBSampler,
    GPTSSampler,
    GPUCBCPDSampler,
    GPUCBSampler,
    IGPUCBSampler,
    LongTermConstraints,
)
from optuna_gpbandit._storage import MULTIPLIERS, STATE, read_trial_json

import distributed

SAMPLERS = {
    "GPUCBSampler": GPUCBSampler,
    "IGPUCBSampler": IGPUCBSampler,
    "GPTSSampler": GPTSSampler,
    "ConstrainedGPUCBSampler": ConstrainedGPUCBSampler,
    "GPUCBCPDSampler": GPUCBCPDSampler,
}
ALL = list(SAMPLERS)
# The constrained sampler's cases of the thread and resume tests call trial.set_constraint.
ALL_SET_CONSTRAINT = [pytest.param(n, marks=pytest.mark.needs_optuna5)
                      if n == "ConstrainedGPUCBSampler" else n for n in ALL]
REPO_ROOT = Path(__file__).resolve().parents[1]


def make(name: str, **kwargs):
    kwargs.setdefault("seed", 0)
    return SAMPLERS[name](**kwargs)


def assert_valid_params(study: optuna.Study) -> None:
    """Every parameter of every trial lies in its distribution (bounds, step, choices)."""
    for t in study.get_trials(deepcopy=False):
        for name, value in t.params.items():
            dist = t.distributions[name]
            assert dist._contains(dist.to_internal_repr(value)), (t.number, name, value, dist)


def gp_states(study: optuna.Study) -> list[dict]:
    found = (read_trial_json(t, STATE) for t in study.get_trials(deepcopy=False))
    return [s for s in found if s is not None]


def assert_finite_records(study: optuna.Study) -> None:
    states = gp_states(study)
    assert states, "no trial was chosen by the GP"
    for s in states:
        assert math.isfinite(s["mu"]) and math.isfinite(s["sigma"]), s


# ------------------------------------------------------------------------ objective values
@pytest.mark.parametrize("name", ALL)
def test_every_value_is_infinite_or_nan_then_finite(name, caplog):
    """+inf / -inf values are COMPLETE trials that the model treats as failures (with a warning);
    NaN is FAIL."""
    study = optuna.create_study(sampler=make(name, n_startup_trials=3))
    values = iter([math.inf, -math.inf, math.inf, math.nan, -math.inf] + [None] * 30)

    def objective(trial):
        x = trial.suggest_float("x", -2.0, 2.0)
        v = next(values)
        return (x - 0.5) ** 2 if v is None else v

    # The first five (failed) points lie around the optimum, so the model first takes the middle
    # for a failing region; the finite values then lead it back in: 26 trials, not 16.
    with caplog.at_level(logging.WARNING, logger="optuna_gpbandit"):
        study.optimize(objective, n_trials=26)
    states = [t.state for t in study.trials]
    assert states.count(TrialState.FAIL) == 1
    assert states.count(TrialState.COMPLETE) == 25
    assert any("non-finite" in r.getMessage() for r in caplog.records)
    assert_valid_params(study)
    assert_finite_records(study)
    # The finite values still drive the search towards x = 0.5.
    finite = [t for t in study.trials if t.state == TrialState.COMPLETE and math.isfinite(t.value)]
    assert min(abs(t.params["x"] - 0.5) for t in finite) < 0.1


@pytest.mark.parametrize("name", ALL)
def test_only_failed_and_pruned_trials_so_far(name):
    """FAIL and PRUNED trials (with intermediate values) are not observations; startup goes on."""
    study = optuna.create_study(sampler=make(name))

    def objective(trial):
        x = trial.suggest_float("x", 0.0, 1.0)
        if trial.number < 4:
            raise ValueError("objective failed")
        if trial.number < 8:
            trial.report(x, step=0)
            trial.report(x / 2, step=1)
            raise optuna.TrialPruned()
        return x

    study.optimize(objective, n_trials=20, catch=(ValueError,))
    assert [t.state for t in study.trials[:8]] == [TrialState.FAIL] * 4 + [TrialState.PRUNED] * 4
    assert all(t.state == TrialState.COMPLETE for t in study.trials[8:])
    assert_valid_params(study)
    # The GP starts only after n_startup_trials COMPLETE trials.
    first_gp = min(t.number for t in study.trials if read_trial_json(t, STATE) is not None)
    assert first_gp >= 8 + 5 - (1 if name == "GPUCBCPDSampler" else 0) - 1


@pytest.mark.parametrize("name", ALL)
def test_constant_objective_and_all_identical_trials(name, caplog):
    """A constant objective has nothing to model: space-filling points, with an info message
    (a GP would fit endless lengthscales and UCB would bounce between the corners)."""
    study = optuna.create_study(sampler=make(name))
    with caplog.at_level(logging.INFO, logger="optuna_gpbandit"):
        study.optimize(lambda t: 1.0 + 0.0 * t.suggest_float("x", 0.0, 1.0)
                       + 0.0 * t.suggest_int("k", 0, 3), n_trials=14)
    assert_valid_params(study)
    assert any("observed values are equal" in r.getMessage() for r in caplog.records)
    assert not gp_states(study)
    xs = [round(t.params["x"], 9) for t in study.trials]
    assert len(set(xs)) == 14

    study = optuna.create_study(sampler=make(name))
    for _ in range(10):
        study.enqueue_trial({"x": 0.25, "k": 2})
    study.optimize(lambda t: t.suggest_float("x", 0.0, 1.0) + t.suggest_int("k", 0, 3),
                   n_trials=20)
    assert all(t.params == {"x": 0.25, "k": 2} for t in study.trials[:10])
    assert_valid_params(study)
    assert_finite_records(study)


# ------------------------------------------------------------------------ search spaces
@pytest.mark.parametrize("name", ALL)
def test_search_space_that_changes_between_trials(name, caplog):
    """Parameters appear, disappear and change range: the intersection is modelled, the rest
    goes to the independent sampler with a logged warning, and values stay valid."""
    study = optuna.create_study(sampler=make(name, n_startup_trials=3))

    def objective(trial):
        x = trial.suggest_float("x", 0.0, 1.0)
        value = (x - 0.3) ** 2
        if trial.number % 3 == 0:
            value += trial.suggest_float("extra", -1.0, 1.0) ** 2
        high = 2.0 if trial.number >= 10 else 1.0  # y's range changes at trial 10
        value += trial.suggest_float("y", 0.0, high) / 10
        return value

    with caplog.at_level(logging.WARNING, logger="optuna_gpbandit"):
        study.optimize(objective, n_trials=20)
    assert all(t.state == TrialState.COMPLETE for t in study.trials)
    assert_valid_params(study)
    assert any("outside the relative search space" in r.getMessage() for r in caplog.records)
    assert any(t.params["y"] > 1.0 for t in study.trials[10:]) or all(
        t.distributions["y"].high == 2.0 for t in study.trials[10:]
    )


@pytest.mark.parametrize("name", ALL)
def test_log_and_step_distributions_with_optimum_at_the_bounds(name):
    study = optuna.create_study(sampler=make(name))

    def objective(trial):
        lr = trial.suggest_float("lr", 1e-6, 1e-1, log=True)  # best at the lower bound
        n = trial.suggest_int("n", 8, 1024, log=True)  # best at the upper bound
        s = trial.suggest_float("s", 0.0, 0.9, step=0.3)  # grid 0, .3, .6, .9: best at 0.9
        k = trial.suggest_int("k", -5, 7, step=4)  # grid -5, -1, 3, 7: best at -5
        return math.log10(lr) - math.log2(n) - s + k / 4

    study.optimize(objective, n_trials=25)
    assert_valid_params(study)
    best = study.best_params
    assert best["s"] == pytest.approx(0.9) and best["k"] == -5
    assert best["lr"] < 1e-5 and best["n"] > 512


@pytest.mark.parametrize("name", ALL)
def test_thousands_of_categorical_choices(name):
    choices = [f"c{i:04d}" for i in range(3000)]
    study = optuna.create_study(sampler=make(name, n_startup_trials=4))

    def objective(trial):
        c = trial.suggest_categorical("c", choices)
        x = trial.suggest_float("x", 0.0, 1.0)
        return (x - 0.7) ** 2 + (0.0 if c == "c1234" else 1.0)

    study.optimize(objective, n_trials=12)
    assert_valid_params(study)
    assert_finite_records(study)


@pytest.mark.parametrize("name", ALL)
def test_fifty_dimensions(name):
    # Five start-up trials (the default's are 20 here), so the model's trials are tested.
    sampler = make(name, search=AcquisitionSearch(n_candidates=256), n_startup_trials=5)
    study = optuna.create_study(sampler=sampler)

    def objective(trial):
        xs = np.array([trial.suggest_float(f"x{i:02d}", -1.0, 1.0) for i in range(50)])
        return float(np.sum((xs - 0.2) ** 2))

    study.optimize(objective, n_trials=12)
    assert_valid_params(study)
    assert_finite_records(study)


# ------------------------------------------------------------------------ constraint values
def _constrained_study(values, name="ConstrainedGPUCBSampler", **kwargs):
    """A study whose trial ``i`` gets the constraint ``values[i]`` (dict name -> value,
    or None for no constraint at all)."""
    kwargs.setdefault("epoch_length", 3)
    sampler = make(name, n_startup_trials=3, constraints=LongTermConstraints(**kwargs))
    study = optuna.create_study(sampler=sampler)
    values = list(values)

    def objective(trial):
        x = trial.suggest_float("x", 0.0, 1.0)
        cons = values[trial.number] if trial.number < len(values) else {"g": x - 0.5}
        for key, v in (cons or {}).items():
            trial.set_constraint(key, v)
        return x

    return study, objective


@pytest.mark.needs_optuna5
@pytest.mark.parametrize("name", ALL)
def test_bad_constraint_values_are_skipped_with_a_warning(name, caplog):
    """Missing, infinite, NaN (stored by hand; Optuna itself refuses NaN) and differently keyed
    constraint values: each such trial is skipped by the constraint stage with a warning."""
    values = [{"g": 0.1}, None, {"h": 0.2}, {"g": math.inf}, {"g": -0.3}, {"g": 0.2, "h": 0.0}]
    study, objective = _constrained_study(values, name)
    study.add_trial(create_trial(params={"x": 0.3}, distributions={"x": FloatDistribution(0, 1)},
                                 value=0.3, system_attrs={"constraints": (math.nan,)}))
    with caplog.at_level(logging.WARNING, logger="optuna_gpbandit"):
        study.optimize(objective, n_trials=16)
    assert all(t.state == TrialState.COMPLETE for t in study.trials)
    assert_valid_params(study)
    messages = " ".join(r.getMessage() for r in caplog.records).lower()
    assert "skip" in messages
    multipliers = [m for m in (read_trial_json(t, MULTIPLIERS) for t in study.trials) if m]
    assert multipliers
    for m in multipliers:
        assert all(math.isfinite(v) for v in m["log_kappa"]), m


@pytest.mark.needs_optuna5
def test_nan_constraint_through_optuna_api_fails_that_trial_only():
    """``trial.set_constraint(k, nan)`` raises in Optuna itself: the trial FAILs (with Optuna's
    message) and the study goes on."""
    study, objective = _constrained_study([{"g": 0.1}, {"g": math.nan}, {"g": -0.1}])
    study.optimize(objective, n_trials=10, catch=(ValueError,))
    assert [t.state for t in study.trials[:3]] == [
        TrialState.COMPLETE, TrialState.FAIL, TrialState.COMPLETE]
    assert all(t.state == TrialState.COMPLETE for t in study.trials[3:])
    assert_valid_params(study)


@pytest.mark.needs_optuna5
def test_bad_constraint_values_raise_when_asked():
    for values in ([{"g": 0.1}, {"g": math.inf}], [{"g": 0.1}, None, {"g": 0.0}]):
        study, objective = _constrained_study(values, on_missing="raise")
        with pytest.raises(ValueError, match=r"(?i)trial 1\b.*constraint|constraint.*trial 1\b"):
            study.optimize(objective, n_trials=8)


# ------------------------------------------------------------------------ threads
def _branin(x: float, y: float) -> float:
    a, b, c = 1.0, 5.1 / (4 * math.pi**2), 5 / math.pi
    return a * (y - b * x**2 + c * x - 6) ** 2 + 10 * (1 - 1 / (8 * math.pi)) * math.cos(x) + 10


def _suggest_branin(trial, name: str) -> float:
    x = trial.suggest_float("x", -5.0, 10.0)
    y = trial.suggest_float("y", 0.0, 15.0)
    if name == "ConstrainedGPUCBSampler":
        trial.set_constraint("g", x - 8.0)
    return _branin(x, y)


def _assert_a_whole_valid_study(study: optuna.Study, n_trials: int) -> None:
    """Every trial COMPLETE with valid parameters and finite records, and no two trials pending
    at the same time at one point (sequential repeats may happen)."""
    assert len(study.trials) == n_trials
    assert all(t.state == TrialState.COMPLETE for t in study.trials)
    assert_valid_params(study)
    assert_finite_records(study)
    assert not distributed.shared_points(study.trials), distributed.check_trials(study.trials)


@pytest.mark.parametrize("name", ALL_SET_CONSTRAINT)
def test_optimize_with_four_threads(name):
    """Real threads: nothing lost, nothing invalid, no point shared by two running trials.

    Which trials are pending at each ask depends on the threads' interleaving, so on the machine
    and its load: the quality under four workers is asserted on a fixed schedule in the next test.
    Here only a bound that a working sampler cannot miss (random search's best of 32 on Branin is
    above 5.14 in 5 % of runs; a sampler stuck at one point or a corner is far above it). The
    common bound of 1.2 that stood here failed once in CI under load (GP-UCB 1.57)."""
    study = optuna.create_study(sampler=make(name, n_startup_trials=4))
    study.optimize(lambda trial: _suggest_branin(trial, name), n_trials=32, n_jobs=4)
    _assert_a_whole_valid_study(study, 32)
    assert study.best_value < 5.0


@pytest.mark.parametrize("name", ALL_SET_CONSTRAINT)
def test_four_workers_on_a_fixed_schedule_find_branins_minimum(name):
    """Four workers, simulated in a fixed order: four trials in flight, the oldest told first.
    Every ask after the first four sees three running trials with points (the pending stage).

    Branin's minimum is 0.398; random search's best of 32 is 0.48 / 1.51 / 5.14 (5th / 50th / 95th
    percentile of 20000 simulated runs). On this schedule seeds 0-19 of each sampler ended at
    0.40-0.58 (the constrained sampler 0.40-1.02; seed 0: 0.40 for all five), so rounding that
    moves a trajectory elsewhere still leaves the bound's margin."""
    study = optuna.create_study(sampler=make(name, n_startup_trials=4))
    in_flight: list[tuple[optuna.trial.Trial, float]] = []
    for _ in range(32):
        trial = study.ask()
        in_flight.append((trial, _suggest_branin(trial, name)))
        if len(in_flight) == 4:
            study.tell(*in_flight.pop(0))
    for trial, value in in_flight:
        study.tell(trial, value)
    _assert_a_whole_valid_study(study, 32)
    assert study.best_value < 1.2


# ------------------------------------------------------------------------ resume in a process
_RESUME_SCRIPT = textwrap.dedent(
    """
    import json, math, sys
    import optuna
    import optuna_gpbandit

    url, name, sampler_name, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    sampler = getattr(optuna_gpbandit, sampler_name)(seed=7)
    study = optuna.create_study(storage=url, study_name=name, sampler=sampler, load_if_exists=True)

    def objective(trial):
        x = trial.suggest_float("x", 1e-3, 1.0, log=True)
        k = trial.suggest_int("k", 1, 10)
        c = trial.suggest_categorical("c", ["a", "b", "c"])
        if sampler_name == "ConstrainedGPUCBSampler":
            trial.set_constraint("g", k - 6.5)
        return math.log(x) ** 2 + (k - 4) ** 2 + (0.0 if c == "b" else 1.0)

    study.optimize(objective, n_trials=n)
    print(json.dumps([t.params for t in study.trials]))
    """
)


def _run_resume_script(tmp_path: Path, url: str, study_name: str, sampler: str, n: int) -> list:
    script = tmp_path / "resume_worker.py"
    script.write_text(_RESUME_SCRIPT)
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    out = subprocess.run([sys.executable, str(script), url, study_name, sampler, str(n)],
                         capture_output=True, text=True, env=env, timeout=300, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("name", ALL_SET_CONSTRAINT)
def test_resume_in_a_new_process_repeats_the_uninterrupted_run(name, tmp_path):
    url = f"sqlite:///{tmp_path / 'study.db'}"
    full = _run_resume_script(tmp_path, url, "full", name, 22)
    _run_resume_script(tmp_path, url, "parts", name, 9)
    _run_resume_script(tmp_path, url, "parts", name, 6)
    resumed = _run_resume_script(tmp_path, url, "parts", name, 7)
    assert len(resumed) == len(full) == 22
    assert resumed == full


# ------------------------------------------------------------------------ misuse
def test_multi_objective_studies_run_or_give_a_clear_error():
    # GP-UCB takes several objectives (random scalarisations), one of them constant here.
    study = optuna.create_study(directions=["minimize", "minimize"], sampler=make("GPUCBSampler"))
    study.optimize(lambda t: (t.suggest_float("x", 0, 1), 1.0), n_trials=8)
    assert [t.state for t in study.trials] == [TrialState.COMPLETE] * 8
    assert_valid_params(study)
    study = optuna.create_study(directions=["minimize", "minimize"],
                                sampler=make("GPUCBCPDSampler"))
    with pytest.raises(ValueError, match="GPUCBCPDSampler supports single-objective"):
        study.optimize(lambda t: (t.suggest_float("x", 0, 1), 1.0), n_trials=8)


@pytest.mark.parametrize("name", ALL)
def test_trials_added_by_hand_with_foreign_distributions(name):
    """Trials added with ``add_trial`` (e.g. a warm start from an older study) that use other
    ranges for the same names do not enter the model, and sampling stays valid."""
    study = optuna.create_study(sampler=make(name))
    for x in (0.1, 0.5, 0.9):
        study.add_trial(create_trial(params={"x": x * 10}, distributions={
            "x": FloatDistribution(0.0, 10.0)}, value=x))
    study.add_trial(create_trial(params={"x": "a"}, distributions={
        "x": CategoricalDistribution(["a", "b"])}, value=0.0))
    study.optimize(lambda t: (t.suggest_float("x", 0.0, 1.0) - 0.4) ** 2, n_trials=10)
    assert_valid_params(study)
    assert all(t.state == TrialState.COMPLETE for t in study.trials)
