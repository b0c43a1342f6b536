"""Drop-in use: full signatures in step with the docstrings, GPSampler's arguments with their
meaning and clear errors (the OptunaHub package: test_hub.py)."""

import inspect
import logging

import optuna
import pytest
from optuna.samplers import GPSampler

from optuna_gpbandit import (
    AcquisitionSearch,
    ChangeDetection,
    ConstrainedGPUCBSampler,
    GPModel,
    GPTSSampler,
    GPUCBCPDSampler,
    GPUCBSampler,
    IGPUCBSampler,
    sampler_record,
)
from optuna_gpbandit.gp.fit import MIN_NOISE_VAR
from optuna_gpbandit._startup import startup_count
from optuna_gpbandit.samplers._base import FINE_NOISE_FLOOR

PUBLIC = [GPUCBSampler, IGPUCBSampler, GPTSSampler, ConstrainedGPUCBSampler, GPUCBCPDSampler]
GP_DROP_IN = [GPUCBSampler, IGPUCBSampler, GPTSSampler]


def _documented(cls):
    """Names in the numpydoc Parameters section of ``cls``'s docstring."""
    doc = inspect.getdoc(cls)
    lines = doc.split("Parameters\n----------\n", 1)[1].splitlines()
    names = set()
    for line in lines:
        if line and not line[0].isspace():
            names.update(n.strip() for n in line.split(","))
    return names


def _quadratic(trial):
    return (trial.suggest_float("x", 0.0, 1.0) - 0.3) ** 2 + trial.suggest_float("y", 0.0, 1.0)


@pytest.mark.parametrize("cls", PUBLIC)
def test_signature_is_explicit_and_every_argument_is_documented(cls):
    params = inspect.signature(cls).parameters.values()
    assert not any(p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL) for p in params)
    assert all(p.kind == p.KEYWORD_ONLY for p in params)
    names = {p.name for p in params}
    documented = _documented(cls)
    assert names <= documented, sorted(names - documented)
    assert documented <= names, sorted(documented - names)  # nothing stale either
    assert "<" not in inspect.getdoc(cls).split("Parameters", 1)[1].split("\n")[0]


@pytest.mark.parametrize("cls", PUBLIC)
def test_an_unknown_argument_names_the_public_class(cls):
    with pytest.raises(TypeError, match=rf"{cls.__name__}\.__init__\(\) got an unexpected"):
        cls(no_such_argument=1)


@pytest.mark.parametrize("cls", GP_DROP_IN)
def test_every_gpsampler_argument_is_accepted(cls):
    ours = inspect.signature(cls).parameters
    theirs = [n for n in inspect.signature(GPSampler.__init__).parameters if n != "self"]
    assert set(theirs) <= set(ours)
    cls(seed=1, independent_sampler=optuna.samplers.RandomSampler(seed=1), n_startup_trials=0,
        deterministic_objective=True, constraints_func=lambda t: [0.0],
        warn_independent_sampling=False)


@pytest.mark.parametrize("cls", GP_DROP_IN)
def test_seed_makes_runs_repeat(cls):
    runs = []
    for _ in range(2):
        study = optuna.create_study(sampler=cls(seed=3, search=AcquisitionSearch(n_candidates=64)))
        study.optimize(_quadratic, n_trials=8)
        runs.append([t.params for t in study.trials])
    assert runs[0] == runs[1]


class _Counting(optuna.samplers.RandomSampler):
    calls = 0

    def sample_independent(self, study, trial, name, dist):
        type(self).calls += 1
        return super().sample_independent(study, trial, name, dist)


@pytest.mark.parametrize("cls", GP_DROP_IN)
def test_independent_sampler_draws_what_the_model_cannot(cls):
    _Counting.calls = 0
    study = optuna.create_study(sampler=cls(seed=0, independent_sampler=_Counting(seed=0)))
    study.optimize(_quadratic, n_trials=1)  # the first trial: no search space yet
    assert _Counting.calls == 2


@pytest.mark.parametrize("cls", GP_DROP_IN)
@pytest.mark.parametrize("n_startup", [0, 4])
def test_n_startup_trials_sets_when_the_model_starts(cls, n_startup):
    study = optuna.create_study(sampler=cls(seed=0, n_startup_trials=n_startup))
    study.optimize(_quadratic, n_trials=7)
    modelled = [sampler_record(t) is not None for t in study.trials]
    first = max(n_startup, 1)  # trial 0 never: no search space before a trial completes
    assert modelled == [False] * first + [True] * (7 - first)


@pytest.mark.parametrize("cls", GP_DROP_IN)
@pytest.mark.parametrize("n_params", [2, 4, 7])
def test_default_startup_design_grows_with_the_dimension(cls, n_params):
    """``n_startup_trials=None`` (the default): ``max(5, d + 1)`` start-up trials."""
    def objective(trial):
        return sum((trial.suggest_float(f"x{i}", -1, 1) - 0.1 * i) ** 2 for i in range(n_params))

    study = optuna.create_study(sampler=cls(seed=0))
    # GP-TS's default is 5 (its draws explore better than a longer design: docs/benchmarks.md)
    first = 5 if cls is GPTSSampler else max(5, n_params + 1)
    n_trials = first + 2
    study.optimize(objective, n_trials=n_trials)
    modelled = [sampler_record(t) is not None for t in study.trials]
    assert modelled == [False] * first + [True] * (n_trials - first)
    if cls is GPTSSampler:  # None gives it the rule of the others
        study = optuna.create_study(sampler=cls(seed=0, n_startup_trials=None))
        study.optimize(objective, n_trials=max(5, n_params + 1) + 1)
        assert sampler_record(study.trials[-2]) is None and sampler_record(study.trials[-1])


def test_startup_count():
    assert [startup_count(None, d) for d in (1, 4, 5, 7, 12, 19, 50)] == [5, 5, 6, 8, 13, 20, 20]
    assert [startup_count(n, 12) for n in (0, 3, 20)] == [0, 3, 20]  # an explicit number is kept
    with pytest.raises(ValueError, match="n_startup_trials"):
        GPUCBSampler(n_startup_trials=2.5)


@pytest.mark.parametrize("cls", GP_DROP_IN)
def test_deterministic_objective_fixes_the_noise_at_its_floor(cls):
    fitted = optuna.create_study(sampler=cls(seed=0))
    fitted.optimize(lambda t: _quadratic(t) + 0.05 * (t.number % 3), n_trials=10)
    fixed = optuna.create_study(sampler=cls(seed=0, deterministic_objective=True))
    fixed.optimize(lambda t: _quadratic(t) + 0.05 * (t.number % 3), n_trials=10)
    fixed_noise = sampler_record(fixed.trials[-1])["gp"]["noise_var"]
    assert fixed_noise == pytest.approx(FINE_NOISE_FLOOR, rel=1e-9, abs=0)  # the sampler's floor
    assert sampler_record(fitted.trials[-1])["gp"]["noise_var"] > 10 * MIN_NOISE_VAR
    own = optuna.create_study(sampler=cls(seed=0, deterministic_objective=True,
                                          model=GPModel(noise_floor=1e-8)))
    own.optimize(lambda t: _quadratic(t) + 0.05 * (t.number % 3), n_trials=7)
    own_noise = sampler_record(own.trials[-1])["gp"]["noise_var"]
    assert own_noise == pytest.approx(1e-8, rel=1e-9, abs=0)
    with pytest.raises(ValueError, match="deterministic_objective"):
        cls(deterministic_objective=True, model=GPModel(noise_var=0.1))
    with pytest.raises(ValueError, match="deterministic_objective"):
        cls(deterministic_objective="yes")


@pytest.mark.parametrize("cls", GP_DROP_IN)
def test_constraints_func_values_are_stored_and_used(cls):
    study = optuna.create_study(sampler=cls(seed=0, constraints_func=lambda t: [t.params["x"] - 0.5]))
    study.optimize(_quadratic, n_trials=8)
    stored = [t.system_attrs.get("constraints") for t in study.trials]
    assert [list(c) for c in stored] == [[t.params["x"] - 0.5] for t in study.trials]  # as Optuna's
    assert sampler_record(study.trials[-1])["feasibility"]["constraints"] == 1  # one GP each


@pytest.mark.parametrize("cls", GP_DROP_IN)
@pytest.mark.parametrize("warn", [True, False])
def test_warn_independent_sampling(cls, warn, caplog):
    def objective(trial):
        x = trial.suggest_float("x", 0.0, 1.0)
        if trial.number >= 6:
            trial.suggest_float("late", 0.0, 1.0)  # not in the relative search space
        return x

    study = optuna.create_study(sampler=cls(seed=0, warn_independent_sampling=warn))
    with caplog.at_level(logging.WARNING):
        study.optimize(objective, n_trials=7)
    warned = any("outside the relative search space" in r.getMessage() for r in caplog.records)
    assert warned == warn


def test_warn_independent_sampling_waits_for_the_default_startup(caplog):
    """Seven parameters: eight start-up trials, so a new parameter at trial 6 is no warning,
    at trial 9 it is."""
    def objective(trial, late_from):
        xs = [trial.suggest_float(f"x{i}", 0.0, 1.0) for i in range(7)]
        if trial.number >= late_from:
            trial.suggest_float("late", 0.0, 1.0)  # not in the relative search space
        return sum(xs)

    for late_from, warned in ((6, False), (9, True)):
        caplog.clear()
        study = optuna.create_study(sampler=GPUCBSampler(seed=0))
        with caplog.at_level(logging.WARNING):
            study.optimize(lambda t: objective(t, late_from), n_trials=late_from + 1)
        msgs = [r.getMessage() for r in caplog.records
                if "outside the relative search space" in r.getMessage()]
        assert bool(msgs) == warned, (late_from, msgs)


def test_constrained_sampler_without_constraint_data_warns_once(caplog):
    study = optuna.create_study(sampler=ConstrainedGPUCBSampler(seed=0))
    with caplog.at_level(logging.WARNING, logger="optuna_gpbandit"):
        study.optimize(_quadratic, n_trials=9)
    msgs = [r.getMessage() for r in caplog.records if "constraint values" in r.getMessage()]
    assert len(msgs) == 1 and msgs[0].startswith("ConstrainedGPUCBSampler: none of the")


def test_noise_floor_argument():
    for bad in (0.0, -1e-8, 0.1, float("nan")):
        with pytest.raises(ValueError, match="noise_floor"):
            GPModel(noise_floor=bad)
    # change detection's residual test reads the predictive spread: the old floor there
    assert GPUCBSampler(reset=ChangeDetection())._settings.model.min_noise_var == MIN_NOISE_VAR
    for cls in (GPUCBSampler, GPTSSampler, IGPUCBSampler):
        assert cls()._settings.model.min_noise_var == FINE_NOISE_FLOOR == 1e-10
    # the constrained sampler's objective model keeps the old floor (measured unconstrained only)
    assert ConstrainedGPUCBSampler()._settings.model.min_noise_var == MIN_NOISE_VAR
    assert GPUCBSampler(model=GPModel(noise_floor=1e-7))._settings.model.min_noise_var == 1e-7
