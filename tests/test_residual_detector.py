"""The default change detector (residual CUSUM), the drift window and the paper's beta."""

import math

import numpy as np
import optuna
import pytest
from scipy import stats

from optuna_gpbandit import (AcquisitionSearch, ChangeDetection, CPDSettings, GPModel,
                             GPUCBCPDSampler, ResidualTest, Restarts, Theorem1)
from optuna_gpbandit._observations import build_observations
from optuna_gpbandit._space import EncodedSpace
from optuna_gpbandit.acquisition import avanesov_beta
from optuna_gpbandit.changepoint import (
    PREDICTION_KEY,
    Prediction,
    ResidualState,
    TrialRecord,
    average_run_length,
    cusum_threshold,
    replay,
)
from optuna_gpbandit.changepoint.sequential import MIN_FOR_SCALE, normal_quantile


def _record(number, y, mean=0.0, sd=1.0, start=0, n=100):
    return TrialRecord(number, False, np.array([0.5]), y, Prediction(mean, sd, start, n))


def _run_lengths(h, drift, clip, rng, n_runs):
    """Monte Carlo run lengths of one side of the CUSUM under N(0, 1) residuals."""
    lengths = []
    for _ in range(n_runs):
        S, t = 0.0, 0
        while True:
            t += 1
            S = max(0.0, S + min(rng.standard_normal(), clip) - drift)
            if S > h:
                lengths.append(t)
                break
    return np.array(lengths)


def test_threshold_gives_the_average_run_length_of_alpha():
    h = cusum_threshold(0.02, 1.0, 8.0)  # each side: 2 / alpha = 100 residuals
    assert average_run_length(h, 1.0, 8.0) == pytest.approx(100.0, rel=1e-6)
    runs = _run_lengths(h, 1.0, 8.0, np.random.default_rng(0), 3000)
    assert runs.mean() == pytest.approx(100.0, rel=0.06)  # s.e. of the mean ~1.8 %
    # the default: a smaller alpha asks for a higher threshold
    assert cusum_threshold(1e-4, 1.5, 8.0) > cusum_threshold(1e-3, 1.5, 8.0)


def test_calibrated_residuals_raise_alarms_at_about_rate_alpha():
    settings = ResidualTest(alpha=0.01)
    rng = np.random.default_rng(1)
    state = ResidualState(settings)
    n = 20000
    for i, z in enumerate(rng.standard_normal(n)):
        state.push(_record(i, float(z), start=state.start))
    rate = len(state.change_points) / n
    assert 0.5 * 0.01 < rate < 1.5 * 0.01


def test_a_jump_of_many_sds_fires_at_once_and_keeps_the_new_results():
    state = ResidualState()
    rng = np.random.default_rng(2)
    for i in range(50):
        assert state.push(_record(i, float(rng.standard_normal()))) is None
    assert state.push(_record(50, -20.0)) == 50  # the surprising result starts the new segment
    seg = state.segment()
    assert seg.change_points == (50,) and seg.start == 50 and seg.history_numbers == (50,)
    assert state.last_detection.trigger_number == 50


def test_a_persistent_shift_of_two_sds_fires_within_a_few_trials_at_its_start():
    state = ResidualState()
    rng = np.random.default_rng(3)
    for i in range(40):
        state.push(_record(i, float(0.5 * rng.standard_normal())))
    fired = None
    for i in range(40, 70):
        fired = state.push(_record(i, 2.5 + 0.3 * float(rng.standard_normal())))
        if fired is not None:
            break
    assert fired == 40 and i <= 45


def test_surprises_below_the_resolution_are_not_evidence():
    """A quantised objective: the GP's sd collapsed to 1e-4 where it looked, and the value moves
    by one step of 0.0025 (one validation sample); spread 0.2, resolution 0.02 -> 0.6 sd."""
    state = ResidualState()
    for i in range(30):
        y = 0.99 - 0.0025 * (i % 3 == 0)
        state.push(TrialRecord(i, False, np.array([0.5]), y,
                               Prediction(0.99, 1e-4, 0, 50, spread=0.2)))
    assert state.change_points == [] and state.n_tested == 30
    blind = ResidualState(ResidualTest(resolution=0.0))
    for i in range(3):
        blind.push(TrialRecord(i, False, np.array([0.5]), 0.9875,
                               Prediction(0.99, 1e-4, 0, 50, spread=0.2)))
    assert blind.change_points[:1] == [0]  # 25 sds: an alarm at once


def test_stale_and_young_predictions_are_not_tested():
    state = ResidualState(ResidualTest(min_history=5))
    assert state.push(_record(0, -50.0, start=3)) is None  # made in another segment
    assert state.push(_record(1, -50.0, n=4)) is None  # made from 4 observations
    assert state.push(TrialRecord(2, False, np.array([0.5]), -50.0)) is None  # no prediction
    assert state.n_tested == 0 and state.segment().history_numbers == (0, 1, 2)


def test_the_scale_follows_autocorrelated_residuals():
    """Residuals that wander together (an AR(1) with rho 0.6, unit marginal sd) widen the
    scale, so their sums do not raise alarms as often as independent ones would."""
    rng = np.random.default_rng(4)
    rho, z, zs = 0.6, 0.0, []
    for _ in range(5000):
        z = rho * z + math.sqrt(1 - rho**2) * rng.standard_normal()
        zs.append(z)
    with_scale = ResidualState(ResidualTest(alpha=1e-3, drift=1.0))
    for i, v in enumerate(zs):
        with_scale.push(_record(i, v, start=with_scale.start))
    assert with_scale._centre_scale()[1] > 1.5 or with_scale.segment().n_history < MIN_FOR_SCALE
    plain = 0
    S = [0.0, 0.0]
    h = ResidualTest(alpha=1e-3, drift=1.0).threshold
    for v in zs:  # the same test without the scale
        for k, sign in enumerate((1, -1)):
            S[k] = max(0.0, S[k] + min(sign * v, 8.0) - 1.0)
        if max(S) > h:
            plain += 1
            S = [0.0, 0.0]
    assert len(with_scale.change_points) < plain / 2


def test_normal_quantile_is_the_student_t_probability():
    assert normal_quantile(1.3, 5000) == 1.3
    assert normal_quantile(3.0, 4) == pytest.approx(stats.norm.isf(stats.t.sf(3.0, 4)))
    assert normal_quantile(-3.0, 4) == pytest.approx(-normal_quantile(3.0, 4))
    assert 0 < normal_quantile(5.0, 9) < 5.0
    assert math.isfinite(normal_quantile(-1e6, 3))


def test_replay_is_that_of_pushing_in_order():
    rng = np.random.default_rng(5)
    recs = [_record(i, float(rng.standard_normal()) - (8.0 if i >= 30 else 0.0))
            for i in range(60)]
    seg = replay(list(reversed(recs)), ResidualTest())
    assert seg.change_points == (30,)


def _drifting(change_at, noise=0.05):
    def objective(trial):
        x = trial.suggest_float("x", 0.0, 1.0)
        eps = np.random.default_rng(trial.number).normal(0.0, noise)
        if trial.number < change_at:
            return math.exp(-((x - 0.2) ** 2) / 0.02) + eps
        return 0.7 * math.exp(-((x - 0.8) ** 2) / 0.02) + eps
    return objective


def test_model_trials_store_their_prediction():
    sampler = GPUCBCPDSampler(seed=0, search=AcquisitionSearch(n_candidates=128))
    study = optuna.create_study(direction="maximize", sampler=sampler)
    study.optimize(_drifting(1000), n_trials=12)
    from optuna_gpbandit.report import sampler_record

    for t in study.trials[5:]:
        mean, sd, start, n, spread = t.system_attrs[PREDICTION_KEY]
        rec = sampler_record(t)
        assert mean == rec["mu"] and sd == rec["pred_sd"] and start == 0
        values = [u.value for u in study.trials[: t.number]]
        assert spread == pytest.approx(np.std(values))  # the model's standardising scale
        assert n == rec["n_observed"] == t.number
        assert sd > rec["sigma"]  # the observation's sd includes the noise
    assert all(PREDICTION_KEY not in t.system_attrs for t in study.trials[:5])


def test_no_false_alarm_on_a_stationary_noisy_objective_and_plain_gp_ucb_unchanged():
    from optuna_gpbandit import GPUCBSampler

    objective = _drifting(10**6)
    cpd = GPUCBCPDSampler(seed=3, search=AcquisitionSearch(n_candidates=128))
    s1 = optuna.create_study(direction="maximize", sampler=cpd)
    s1.optimize(objective, n_trials=120)
    assert cpd.change_points(s1) == []
    s2 = optuna.create_study(direction="maximize",
                             sampler=GPUCBSampler(seed=3,
                                                  search=AcquisitionSearch(n_candidates=128),
                                                  model=GPModel(output_warping=False),
                                                  beta=Theorem1(early_factor=1.0)))
    s2.optimize(objective, n_trials=120)
    # without a detection, GP-UCB-CPD's choices are those of GP-UCB on unwarped values (the
    # residual test needs the model in objective units, so change detection does not warp)
    # and without the early width (off with change detection)
    assert [t.params for t in s1.trials] == [t.params for t in s2.trials]


def test_after_a_detection_the_model_is_standardised_with_the_study_spread():
    dists = {"x": optuna.distributions.FloatDistribution(0, 1)}
    space = EncodedSpace(dists)
    trials = [optuna.trial.create_trial(params={"x": 0.1 * i}, value=1.0 + 0.01 * i,
                                        distributions=dists)
              for i in range(5)]
    model = GPModel(output_warping=False)  # standardised, not warped
    plain = build_observations(trials, space, optuna.study.StudyDirection.MAXIMIZE, model)
    floored = build_observations(trials, space, optuna.study.StudyDirection.MAXIMIZE, model,
                                 scale_floor=2.0)
    assert plain.scale == pytest.approx(np.std([1.0 + 0.01 * i for i in range(5)]))
    assert floored.scale == 2.0 and floored.shift == plain.shift


def test_drift_window_limits_what_the_model_sees():
    sampler = GPUCBCPDSampler(seed=0, search=AcquisitionSearch(n_candidates=64),
                              reset=ChangeDetection(window=10))
    study = optuna.create_study(direction="maximize", sampler=sampler)
    study.optimize(_drifting(10**6), n_trials=30)
    from optuna_gpbandit.report import sampler_record

    last = sampler_record(study.trials[-1])
    assert last["window_start"] == 29 - 10 and last["n_observed"] == 10
    assert last["segment_start"] == 0  # the detector's segment is not the window


def test_avanesov_beta_is_the_papers_schedule():
    beta = avanesov_beta(900)
    assert beta(11) == pytest.approx(0.02 * 10 ** (2 / 7) * math.log(900) ** 4)
    assert beta(1) == beta(2)  # t' >= 1
    assert avanesov_beta(900, d=2)(11) == pytest.approx(
        0.02 * 10 ** (6 / 11) * math.log(900) ** 4)
    sampler = GPUCBCPDSampler.paper(900, noise_var=0.0025, seed=0)
    cd = sampler._settings.reset
    assert isinstance(cd.settings, CPDSettings) and not cd.residual
    assert cd.xi == pytest.approx(math.sqrt(3)) and cd.settings.threshold_const == 2.6
    assert sampler._beta.value(11) == pytest.approx(beta(11))


@pytest.mark.parametrize("make, match", [
    # the detector is the type of ChangeDetection's settings (was detector="cusum")
    (lambda: ChangeDetection(settings="cusum"), "settings must be a ResidualTest, a CPDSettings"),
    (lambda: GPUCBCPDSampler(reset=ChangeDetection(settings="cusum")), "settings"),
    # the sampler takes a ChangeDetection only
    (lambda: GPUCBCPDSampler(reset="residual"), "reset must be a ChangeDetection"),
    (lambda: GPUCBCPDSampler(reset=Restarts()), "reset must be a ChangeDetection"),
    # a detector's settings are its own (was cpd_settings with the residual detector, alpha
    # with Avanesov's): Avanesov's detector refuses the residual test's settings
    (lambda: ChangeDetection.avanesov(ResidualTest()), "settings must be a CPDSettings"),
    (lambda: ChangeDetection.avanesov(ResidualTest(alpha=0.01)), "settings must be a CPDSettings"),
    (lambda: ResidualTest(alpha=0.0), "alpha"),
    (lambda: ResidualTest(alpha=0.7), "alpha"),
    (lambda: GPUCBCPDSampler(reset=ChangeDetection(settings=ResidualTest(alpha=0.7))), "alpha"),
    (lambda: ChangeDetection(window=1), "window"),
    (lambda: GPUCBCPDSampler(reset=ChangeDetection(window=1)), "window"),
])
def test_bad_arguments_name_themselves(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_bad_residual_settings():
    with pytest.raises(ValueError, match="clip"):
        ResidualTest(drift=2.0, clip=1.5)
    with pytest.raises(ValueError, match="min_history"):
        ResidualTest(min_history=0)
    with pytest.raises(ValueError, match="settings"):
        ChangeDetection.avanesov(ResidualTest())
    assert ChangeDetection().xi == 0.0 and ChangeDetection.avanesov().xi == pytest.approx(
        math.sqrt(3))
