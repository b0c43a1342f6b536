"""GPUCBCPDSampler and the change-detection history stage inside the shared pipeline."""

import math

import numpy as np
import optuna
import pytest

from optuna_gpbandit import (AcquisitionSearch, ChangeDetection, CPDSettings, GPTSSampler,
                             GPUCBCPDSampler, Restarts)
from optuna_gpbandit.changepoint import CHANGE_POINTS_KEY, ROLE_KEY


def _bump(x, center):
    return math.exp(-((x - center) ** 2) / 0.02)


def _drifting(change_at, noise=0.05):
    """A bump at 0.2 that jumps to 0.8 (and lower) at trial ``change_at``; noise seeded by
    trial number."""

    def objective(trial):
        x = trial.suggest_float("x", 0.0, 1.0)
        eps = np.random.default_rng(trial.number).normal(0.0, noise)
        if trial.number < change_at:
            return _bump(x, 0.2) + eps
        return 0.7 * _bump(x, 0.8) + eps

    return objective


def _roles(study):
    return [t.system_attrs.get(ROLE_KEY) for t in study.trials]


# The two detectors (the former detector="residual" / "avanesov"), their default settings.
DETECTORS = {"residual": ChangeDetection, "avanesov": ChangeDetection.avanesov}


def test_exploration_schedule_follows_xi_sqrt_t():
    sampler = GPUCBCPDSampler(seed=0, reset=ChangeDetection.avanesov(
        CPDSettings(threshold=math.inf)), n_startup_trials=1,
        search=AcquisitionSearch(n_candidates=64))
    study = optuna.create_study(direction="maximize", sampler=sampler)
    study.optimize(lambda t: t.suggest_float("x", 0.0, 1.0), n_trials=35)
    uniform = [t.number for t in study.trials if t.system_attrs[ROLE_KEY] == "uniform"]
    assert uniform == [0, 1, 2, 3, 6, 9, 12, 17, 22, 27, 34]
    assert sampler.change_points(study) == []


DETECTION_LIMIT = {"residual": 25, "avanesov": 100}


@pytest.fixture(scope="module", params=["residual", "avanesov"])
def drift_run(request):
    extra = {} if request.param == "residual" else {"n_startup_trials": 1}
    sampler = GPUCBCPDSampler(seed=1, search=AcquisitionSearch(n_candidates=256),
                              reset=DETECTORS[request.param](), **extra)
    study = optuna.create_study(direction="maximize", sampler=sampler)
    study.optimize(_drifting(change_at=120), n_trials=260)
    return sampler, study


def test_change_is_detected_after_it_happens_and_not_before(drift_run):
    sampler, study = drift_run
    points = sampler.change_points(study)
    assert points, "no change detected"
    limit = DETECTION_LIMIT[sampler._settings.reset.residual and "residual" or "avanesov"]
    assert 120 <= points[0] <= 120 + limit
    assert study._storage.get_study_system_attrs(study._study_id)[CHANGE_POINTS_KEY] == points


def test_after_the_reset_suggestions_concentrate_near_the_new_optimum(drift_run):
    sampler, study = drift_run
    last = [t for t in study.trials[-40:] if t.system_attrs[ROLE_KEY] == "model"]
    xs = np.array([t.params["x"] for t in last])
    assert np.median(np.abs(xs - 0.8)) < 0.05
    best = sampler.current_best_trial(study)
    assert best.number > sampler.change_points(study)[-1]
    assert abs(best.params["x"] - 0.8) < 0.1
    assert abs(study.best_trial.params["x"] - 0.2) < 0.1  # Optuna's best is stale


def test_a_fresh_sampler_replays_the_same_change_points(drift_run):
    sampler, study = drift_run
    fresh = GPUCBCPDSampler(seed=123, reset=ChangeDetection(
        settings=sampler._settings.reset.settings))
    assert fresh.change_points(study) == sampler.change_points(study)


@pytest.mark.parametrize("detector", ["residual", "avanesov"])
def test_resumed_study_suggests_what_the_uninterrupted_run_did(tmp_path, detector):
    objective = _drifting(change_at=40)

    def sampler():
        return GPUCBCPDSampler(seed=2, search=AcquisitionSearch(n_candidates=128),
                               reset=DETECTORS[detector]())

    full = optuna.create_study(direction="maximize", sampler=sampler())
    full.optimize(objective, n_trials=70)
    url = f"sqlite:///{tmp_path / 'cpd.db'}"
    part = optuna.create_study(direction="maximize", storage=url, study_name="cpd",
                               sampler=sampler())
    part.optimize(objective, n_trials=45)
    resumed = optuna.load_study(study_name="cpd", storage=url, sampler=sampler())
    resumed.optimize(objective, n_trials=25)
    assert [t.params for t in resumed.trials] == [t.params for t in full.trials]
    assert _roles(resumed) == _roles(full)
    for a, b in zip(full.trials, resumed.trials):  # roles, records, predictions
        same = {k: v for k, v in a.system_attrs.items() if k != "gpbandit:stamp"}
        assert same == {k: v for k, v in b.system_attrs.items() if k != "gpbandit:stamp"}
    points = sampler().change_points(resumed)
    assert points == sampler().change_points(full)
    assert points or detector == "avanesov"  # (Avanesov's needs more trials to detect)


def test_enqueued_trials_are_external_and_never_exploration():
    study = optuna.create_study(direction="maximize",
                                sampler=GPUCBCPDSampler(
                                    seed=0, search=AcquisitionSearch(n_candidates=64),
                                    reset=ChangeDetection.avanesov()))
    study.enqueue_trial({"x": 0.5})
    study.optimize(lambda t: t.suggest_float("x", 0.0, 1.0), n_trials=6)
    assert _roles(study)[0] == "external"
    assert _roles(study)[1:5] == ["uniform"] * 4


def test_change_detection_works_with_thompson_sampling():
    sampler = GPTSSampler(seed=0, search=AcquisitionSearch(n_candidates=128),
                          reset=ChangeDetection.avanesov())
    study = optuna.create_study(direction="maximize", sampler=sampler)
    study.optimize(_drifting(change_at=1000), n_trials=20)
    roles = _roles(study)
    assert roles.count("uniform") == 1 + math.isqrt(3 * 19) and roles.count("model") > 0
    assert sampler.current_best_trial(study).number == study.best_trial.number


def test_residual_detection_works_with_thompson_sampling():
    sampler = GPTSSampler(seed=0, search=AcquisitionSearch(n_candidates=128),
                          reset=ChangeDetection())
    study = optuna.create_study(direction="maximize", sampler=sampler)
    study.optimize(_drifting(change_at=60), n_trials=100)
    points = sampler.change_points(study)
    assert points and 60 <= points[0] <= 60 + 25
    # no exploration trials: the first trial of the study and of each new segment only
    assert _roles(study).count("uniform") == 1 + len(points)


def test_without_change_detection_the_current_best_is_the_study_best():
    from optuna_gpbandit import GPUCBSampler

    sampler = GPUCBSampler(seed=0, search=AcquisitionSearch(n_candidates=64))
    study = optuna.create_study(sampler=sampler)
    assert sampler.current_best_trial(study) is None
    study.optimize(lambda t: (t.suggest_float("x", 0, 1) - 0.3) ** 2, n_trials=8)
    assert sampler.change_points(study) == []
    assert sampler.current_best_trial(study).number == study.best_trial.number


def test_bad_change_detection_arguments():
    from optuna_gpbandit import GPUCBSampler

    with pytest.raises(ValueError, match="ChangeDetection"):
        GPUCBSampler(reset="cpd")
    for bad in ("cpd", None, Restarts()):  # the preset's reset is a change detector
        with pytest.raises(ValueError, match="reset must be a ChangeDetection instance"):
            GPUCBCPDSampler(reset=bad)
    with pytest.raises(ValueError, match="xi"):
        ChangeDetection(xi=-1.0)
    with pytest.raises(ValueError, match="xi"):
        ChangeDetection.avanesov(xi=-1.0)
    with pytest.raises(ValueError, match="settings"):
        ChangeDetection(settings={"threshold": 1.0})
