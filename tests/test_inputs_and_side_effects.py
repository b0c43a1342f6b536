"""Nasty inputs and side effects (issue 14): extreme magnitudes, early argument errors, corrupt
stored state, the BLAS pool after threads, pickling."""

import copy
import logging
import math
import pickle
import warnings

import numpy as np
import optuna
import pytest
from threadpoolctl import threadpool_info

from optuna_gpbandit import (
    ChangeDetection,
    ConstrainedGPUCBSampler,
    GPModel,
    GPTSSampler,
    GPUCBCPDSampler,
    GPUCBSampler,
    IGPUCBSampler,
    InfoGainWidth,
)
from optuna_gpbandit._observations import standardization

PUBLIC = [GPUCBSampler, IGPUCBSampler, GPTSSampler, GPUCBCPDSampler, ConstrainedGPUCBSampler]


def _branin(trial):
    x = trial.suggest_float("x", -5.0, 10.0)
    y = trial.suggest_float("y", 0.0, 15.0)
    b, c = 5.1 / (4 * math.pi**2), 5 / math.pi
    return (y - b * x**2 + c * x - 6) ** 2 + 10 * (1 - 1 / (8 * math.pi)) * math.cos(x) + 10


# ----------------------------------------------------------------------- magnitudes
def test_standardization_does_not_overflow_near_the_float_limit():
    y = np.array([1.7e308, -1.7e308, 0.0, 1e308])
    shift, scale = standardization(y)
    assert math.isfinite(shift) and math.isfinite(scale) and scale > 1e307
    # the same standardised values as the data divided by 1e300
    s2, c2 = standardization(y / 1e300)
    assert shift / 1e300 == pytest.approx(s2) and scale / 1e300 == pytest.approx(c2)


@pytest.mark.parametrize("factor", [1e200, -1e200])
def test_an_objective_times_1e200_is_optimised_as_well_as_the_unscaled_one(factor):
    best = {}
    for f in (1.0, factor):
        direction = "minimize" if f > 0 else "maximize"
        study = optuna.create_study(direction=direction, sampler=GPUCBSampler(seed=0))
        study.optimize(lambda t: f * _branin(t), n_trials=30)
        best[f] = abs(study.best_value / f)
    assert best[factor] == pytest.approx(best[1.0], rel=1e-3)
    assert best[1.0] < 0.5  # minimum 0.398: the unscaled run does find it


def test_values_at_the_float_limit_do_not_raise():
    study = optuna.create_study(sampler=GPUCBSampler(seed=0, n_startup_trials=3))
    with warnings.catch_warnings():  # nor overflow on the way (the extreme-value rule did)
        warnings.simplefilter("error", RuntimeWarning)
        study.optimize(lambda t: 1.7e308 * (t.suggest_float("x", -1, 1) ** 2 - 0.5),
                       n_trials=12)
    assert all(t.state == optuna.trial.TrialState.COMPLETE for t in study.trials)
    assert abs(study.best_params["x"]) < 0.2


# ----------------------------------------------------------------------- arguments
@pytest.mark.parametrize(
    "make, name",
    [
        (lambda: GPUCBSampler(model=GPModel(refit_growth=math.inf)), "refit_growth"),
        (lambda: GPUCBSampler(model=GPModel(lengthscale=math.nan)), "lengthscale"),
        (lambda: GPUCBSampler(model=GPModel(lengthscale=math.inf)), "lengthscale"),
        (lambda: GPUCBSampler(model=GPModel(lengthscale=[0.2, -1.0])), "lengthscale"),
        (lambda: GPUCBSampler(seed=1.5), "seed"),
        (lambda: GPUCBSampler(seed=-1), "seed"),
        (lambda: GPUCBSampler(model=GPModel(noise_var=-1.0)), "noise_var"),
        (lambda: GPUCBSampler(n_startup_trials=-1), "n_startup_trials"),
        (lambda: GPUCBSampler(failures="drop"), "failures"),
        (lambda: GPUCBSampler(model=GPModel(standardize="yes")), "standardize"),
        (lambda: GPUCBSampler(independent_sampler="random"), "independent_sampler"),
        (lambda: GPTSSampler(width=InfoGainWidth(gamma=math.nan)), "gamma"),
        (lambda: IGPUCBSampler(model=GPModel(max_fit_points=1)), "max_fit_points"),
        # a flat value where a settings object goes: refused, naming the argument
        (lambda: GPUCBSampler(model={"refit_growth": 0.1}), "model must be a GPModel"),
        (lambda: GPTSSampler(width=math.nan), "width must be an InfoGainWidth"),
        (lambda: IGPUCBSampler(search=1024), "search must be an AcquisitionSearch"),
        (lambda: GPUCBSampler(pending="censor"), "pending must be"),
    ],
)
def test_bad_arguments_fail_in_the_constructor_naming_them(make, name):
    with pytest.raises(ValueError, match=name):
        make()


def test_zero_startup_trials_is_accepted():
    study = optuna.create_study(sampler=GPUCBSampler(seed=0, n_startup_trials=0))
    study.optimize(_branin, n_trials=8)
    # the GP from the second trial on (the first one defines the search space)
    assert sum("gpbandit:state:0" in t.system_attrs for t in study.trials) == 7


def test_a_lengthscale_list_of_the_wrong_length_says_so():
    study = optuna.create_study(sampler=GPUCBSampler(
        seed=0, model=GPModel(lengthscale=[0.1, 0.2, 0.3])))
    with pytest.raises(ValueError, match="lengthscale has 3 values but the search space has 2"):
        study.optimize(_branin, n_trials=8)


def test_a_corrupt_stored_state_is_ignored_with_a_warning(caplog):
    import json

    from optuna_gpbandit._storage import STATE, read_trial_json

    study = optuna.create_study(sampler=GPUCBSampler(seed=0))
    study.optimize(_branin, n_trials=7)
    copy_ = optuna.create_study(sampler=GPUCBSampler(seed=0))
    for t in study.trials:
        state = read_trial_json(t, STATE)
        if state is not None:
            state["n_fit"] = "abc"
            attrs = {k: v for k, v in t.system_attrs.items() if not k.startswith("gpbandit:state")}
            attrs["gpbandit:state:0"] = json.dumps(state)
            t = optuna.trial.create_trial(params=t.params, distributions=t.distributions,
                                          value=t.value, system_attrs=attrs)
        copy_.add_trial(t)
    with caplog.at_level(logging.WARNING, logger="optuna_gpbandit"):
        copy_.optimize(_branin, n_trials=1)
    assert any("corrupt stored GP state" in r.getMessage() for r in caplog.records)
    assert copy_.trials[-1].state == optuna.trial.TrialState.COMPLETE


# ----------------------------------------------------------------------- side effects
def _blas_threads():
    return sorted((i["internal_api"], i["num_threads"]) for i in threadpool_info()
                  if i["user_api"] == "blas")


def test_the_blas_pool_is_left_as_it_was_after_threads():
    from threadpoolctl import threadpool_limits

    if not _blas_threads():
        pytest.skip("no BLAS library loaded")
    with threadpool_limits(limits=2, user_api="blas"):  # the user's setting
        before = _blas_threads()
        assert all(n == 2 for _, n in before)
        study = optuna.create_study(sampler=GPUCBSampler(seed=0, n_startup_trials=2))
        study.optimize(_branin, n_trials=24, n_jobs=4)
        assert _blas_threads() == before


@pytest.mark.parametrize("cls", PUBLIC + ["cd"])
def test_every_sampler_survives_pickle_and_deepcopy_after_use(cls):
    sampler = GPUCBSampler(seed=0, reset=ChangeDetection()) if cls == "cd" else cls(seed=0)
    study = optuna.create_study(sampler=sampler)
    study.optimize(_branin, n_trials=8)
    for clone in (pickle.loads(pickle.dumps(sampler)), copy.deepcopy(sampler)):
        other = optuna.create_study(sampler=clone)
        for t in study.trials:
            other.add_trial(t)
        other.optimize(_branin, n_trials=1)
        assert other.trials[-1].state == optuna.trial.TrialState.COMPLETE


def test_importing_the_package_defers_scipy_to_first_use():
    """``import optuna_gpbandit`` costs little more than ``import optuna`` (issue 28): SciPy's
    linalg, optimize, stats and spatial (0.1-0.3 s each) load when a sampler first needs them."""
    import subprocess
    import sys

    code = ("import sys, optuna_gpbandit; "
            "print(sorted({m.split('.')[0] + '.' + m.split('.')[1] for m in sys.modules "
            "if m.startswith('scipy.')}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=600, check=True)
    assert out.stdout.strip() == "[]", out.stdout


# ------------------------------------------------ bad inputs of a sweep on 353ed2e (issue 33)
def test_a_range_wider_than_the_largest_float_is_searched():
    """``suggest_float(-1e308, 1e308)``: the width overflows a float; the start-up design
    still spreads over the range (it asked x = 1e308 every time) and the GP, beside a second
    parameter, neither fails nor loses the optimum."""
    def objective(trial):
        x = trial.suggest_float("x", -1e308, 1e308)
        return (x / 1e308 - 0.3) ** 2 + trial.suggest_float("y", 0.0, 1.0) ** 2

    study = optuna.create_study(sampler=GPUCBSampler(seed=0))
    study.optimize(objective, n_trials=15)
    xs = [t.params["x"] / 1e308 for t in study.trials]
    assert all(t.state == optuna.trial.TrialState.COMPLETE for t in study.trials)
    assert len({round(x, 6) for x in xs[:5]}) == 5 and max(xs[:5]) - min(xs[:5]) > 0.5
    assert abs(study.best_params["x"] / 1e308 - 0.3) < 0.1  # random: ~0.2 after 15 trials


def test_decoded_bounds_are_the_bounds_themselves():
    """A log-scaled parameter at its upper end is 1000.0, not exp(log(1000)) =
    999.9999999999989 (what a user reads in the log)."""
    from optuna.distributions import FloatDistribution

    from optuna_gpbandit._space import EncodedSpace

    space = EncodedSpace({"C": FloatDistribution(1e-2, 1e3, log=True),
                          "x": FloatDistribution(0.1, 0.7)})
    assert space.decode(np.array([1.0, 1.0])) == {"C": 1e3, "x": 0.7}
    assert space.decode(np.array([0.0, 0.0])) == {"C": 1e-2, "x": 0.1}


@pytest.mark.parametrize("cls", [GPUCBSampler, GPTSSampler])
def test_tiny_fixed_lengthscales_fail_in_the_constructor(cls):
    with pytest.raises(ValueError, match="lengthscale must be at least"):
        cls(model=GPModel(lengthscale=1e-300, noise_var=1e-300))
    with pytest.raises(ValueError, match="lengthscale must be at least"):
        cls(model=GPModel(lengthscale=[0.2, 1e-9]))
    # the smallest accepted; a tiny noise is fine
    cls(model=GPModel(lengthscale=1e-6, noise_var=1e-300))


def test_a_constant_objective_does_not_stall_the_other(caplog):
    """Two objectives, the second constant (a size the parameters do not change): the first
    is still optimised (the Chebyshev term of a flat objective was the minimum everywhere, so
    the maximiser only explored: closest 0.014 after 40 trials, as random search)."""
    def objective(trial):
        x, y = trial.suggest_float("x", 0, 1), trial.suggest_float("y", 0, 1)
        return (x - 0.3) ** 2 + (y - 0.7) ** 2, 5.0

    study = optuna.create_study(directions=["minimize", "minimize"],
                                sampler=GPUCBSampler(seed=0))
    with caplog.at_level(logging.INFO, logger="optuna_gpbandit"):
        study.optimize(objective, n_trials=30)
    assert min(t.values[0] for t in study.trials) < 1e-3  # 8e-7 after 40 trials, seed 0
    assert any("left out of the scalarisation" in r.getMessage() for r in caplog.records)


def test_hypervolume_report_names_an_objective_that_is_never_finite():
    from optuna_gpbandit import hypervolume_report

    study = optuna.create_study(directions=["minimize", "minimize"])
    study.optimize(lambda t: (t.suggest_float("x", 0, 1), math.inf), n_trials=4)
    with pytest.raises(ValueError, match=r"objective 1 is never finite.*reference_point"):
        hypervolume_report(study)
    report = hypervolume_report(study, reference_point=[2.0, 2.0])
    assert report.numbers.size == 0  # no trial with finite values adds hypervolume


def test_an_empty_constraints_func_result_is_named_as_such(caplog):
    study = optuna.create_study(sampler=GPUCBSampler(seed=0, constraints_func=lambda t: []))
    with caplog.at_level(logging.WARNING, logger="optuna_gpbandit"):
        study.optimize(lambda t: t.suggest_float("x", 0, 1) ** 2, n_trials=7)
    text = " ".join(r.getMessage() for r in caplog.records)
    assert "returned an empty sequence for" in text and "raised" not in text


def test_the_first_suggestion_of_a_process_runs_on_one_blas_thread():
    """SciPy loads on first use; its BLAS must still be limited from the first suggestion on
    (it was not: a fresh process's first suggestions ran multi-threaded and a study resumed in
    a new process drifted from the uninterrupted run by rounding)."""
    import subprocess
    import sys

    code = ("from threadpoolctl import threadpool_info\n"
            "from optuna_gpbandit._threads import single_threaded_blas\n"
            "with single_threaded_blas():\n"
            "    import scipy.linalg\n"
            "    print(max(i['num_threads'] for i in threadpool_info() "
            "if i['user_api'] == 'blas'))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=600, check=True)
    assert out.stdout.strip() == "1", out.stdout
