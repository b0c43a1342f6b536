"""Repeated points: a noisy bandit may pull its best arm again and again; a deterministic
objective (or a point whose repeats gave identical values) is not asked twice."""

import collections
import logging

import numpy as np
import optuna
import pytest

from optuna_gpbandit import GPTSSampler, GPUCBSampler, IGPUCBSampler
from optuna_gpbandit._repeats import SAME_POINT_TOL, exhausted_points, n_repeats


def test_exhausted_points_deterministic_excludes_every_evaluated_point():
    X = np.array([[0.1, 0.2], [0.1, 0.2], [0.5, 0.5], [0.5 + SAME_POINT_TOL / 10, 0.5]])
    out = exhausted_points(X, np.array([1.0, 1.0, 2.0, 2.5]), deterministic=True)
    assert sorted(set(map(tuple, out))) == sorted(set(map(tuple, X)))


def test_exhausted_points_noisy_excludes_only_identical_repeats():
    X = np.array([[0.1], [0.1], [0.5], [0.5], [0.5], [0.9]])
    y = np.array([0.3, 0.3, 1.0, 1.2, 0.8, 2.0])
    out = exhausted_points(X, y, deterministic=False)
    assert out.tolist() == [[0.1], [0.1]]  # 0.5: repeats differ (noise); 0.9: evaluated once
    # Points in one SAME_POINT_TOL cell count as one point: its repeats decide, and then every
    # row of the cell is excluded (the maximiser refuses proposals within min_distance of each).
    X2 = np.array([[0.1], [0.1 + SAME_POINT_TOL / 10]])
    assert exhausted_points(X2, np.array([1.0, 1.0]), deterministic=False).tolist() == X2.tolist()
    assert exhausted_points(X[:0], y[:0], deterministic=False).shape == (0, 1)


def test_a_configuration_repeated_with_its_value_is_done_beside_a_different_neighbour():
    # Seen on the HPO suite (AdaBoost on wine, GP-UCB): two learning rates 2.6e-4 apart in
    # encoded units, one SAME_POINT_TOL cell, gave different CV errors; the better one was then
    # asked again with the identical error 8 times in 40 trials, because the cell looked noisy.
    X = np.array([[0.80332], [0.80358], [0.80358]])
    out = exhausted_points(X, np.array([0.0446, 0.039, 0.039]), deterministic=False)
    assert out.tolist() == X.tolist()  # the cell is done: each of its configurations
    # Where the repeated configuration itself gave two values, the objective is noisy there.
    assert exhausted_points(X, np.array([0.0446, 0.039, 0.041]), deterministic=False).size == 0
    # One configuration is rows within SAME_CONFIGURATION (a decoded log-scale value encodes
    # back with a rounding): the repeat 1e-13 away with the same value settles the cell too.
    X_rounded = np.array([[0.80332], [0.80358], [0.80358 + 1e-13]])
    out = exhausted_points(X_rounded, np.array([0.0446, 0.039, 0.039]), deterministic=False)
    assert out.tolist() == X_rounded.tolist()


def test_n_repeats_counts_rows_beyond_the_first_of_each_point():
    X = np.array([[0.1], [0.1], [0.1], [0.5], [0.9], [0.9]])
    assert n_repeats(X) == 3
    assert n_repeats(X[:0]) == 0


def _noisy_arms(trial):
    i = trial.suggest_int("i", 0, 20)
    rng = np.random.default_rng(trial.number)
    return -((i - 7) / 5.0) ** 2 + 0.3 * rng.standard_normal()


@pytest.mark.parametrize("cls", [GPUCBSampler, IGPUCBSampler, GPTSSampler])
def test_a_noisy_bandit_keeps_pulling_its_best_arms(cls, caplog):
    # 21 arms, noise sd 0.3 against a gap of 0.04 to the neighbours of the best arm 7. A fixed
    # cap of 3 asks per point (the former rule) allowed at most 9 asks of arms 6-8 in 80 trials
    # and forced the rest onto worse arms: linear regret. Measured (seeds 0-2): 48-75.
    study = optuna.create_study(direction="maximize", sampler=cls(seed=0))
    with caplog.at_level(logging.INFO, logger="optuna_gpbandit"):
        study.optimize(_noisy_arms, n_trials=80)
    asks = collections.Counter(t.params["i"] for t in study.trials)
    assert sum(v for k, v in asks.items() if abs(k - 7) <= 1) >= 40
    notes = [r.getMessage() for r in caplog.records if "repeat an earlier trial" in r.getMessage()]
    # One line per study, at the first repeat, naming what to pass if the objective is not noisy
    assert len(notes) == 1 and " 1 of " in notes[0] and "deterministic_objective=True" in notes[0]
    # a configuration that gave two values is noise: the study is never taken as deterministic
    assert not [r for r in caplog.records if "treated as deterministic" in r.getMessage()]


def _quadratic(trial):
    return (trial.suggest_int("i", 0, 20) - 7) ** 2


def test_a_deterministic_objective_never_repeats_a_point_while_others_are_left():
    study = optuna.create_study(sampler=GPUCBSampler(seed=0, deterministic_objective=True))
    study.optimize(_quadratic, n_trials=21)
    assert len({t.params["i"] for t in study.trials}) == 21


def test_a_point_whose_repeat_gave_the_same_value_is_not_asked_again():
    # deterministic_objective=False: a noise-free objective whose fitted noise is well above
    # zero may repeat a point once, and the identical value then marks that point as done.
    study = optuna.create_study(sampler=GPUCBSampler(seed=0, deterministic_objective=False))
    study.optimize(_quadratic, n_trials=21)
    assert max(collections.Counter(t.params["i"] for t in study.trials).values()) <= 2


@pytest.mark.parametrize("cls", [GPUCBSampler, GPTSSampler])
def test_the_default_finds_out_that_an_objective_is_deterministic(cls, caplog):
    # A deterministic objective on 21 integer points: once one repeat gave its value, nothing
    # is asked twice (deterministic_objective=None): at most one repeat in 21 trials, said once.
    study = optuna.create_study(sampler=cls(seed=0))
    with caplog.at_level(logging.INFO, logger="optuna_gpbandit"):
        study.optimize(_quadratic, n_trials=21)
    counts = collections.Counter(t.params["i"] for t in study.trials)
    assert sum(v - 1 for v in counts.values()) <= 1
    said = [r for r in caplog.records if "treated as deterministic" in r.getMessage()]
    assert len(said) <= 1 and all("deterministic_objective=True" in r.getMessage() for r in said)


def test_found_deterministic_needs_a_repeat_and_no_configuration_with_two_values():
    from optuna_gpbandit._repeats import found_deterministic

    X = np.array([[0.1, 0.2], [0.5, 0.5], [0.1 + 5e-4, 0.2]])
    assert found_deterministic(X, np.array([1.0, 2.0, 1.0]))  # within 1e-3, same value
    assert found_deterministic(X, np.array([1.0, 2.0, 1.5]))  # a neighbour: no noise shown
    # ... unless the model reads the objective as noisy: then only the very value counts
    assert not found_deterministic(X, np.array([1.0, 2.0, 1.5]), quiet=False)
    assert found_deterministic(X, np.array([1.0, 2.0, 1.0]), quiet=False)
    assert not found_deterministic(X[:2], np.array([1.0, 1.0]))  # ties far apart: no repeat
    assert not found_deterministic(X, np.array([1.0, 2.0, 1.0]), tol=1e-4)
    # the same value nearby, but one configuration asked twice gave two values: noise
    Xn = np.vstack([X, X[1]])
    assert not found_deterministic(Xn, np.array([1.0, 2.0, 1.0, 2.5]))
    assert found_deterministic(Xn, np.array([1.0, 2.0, 1.0, 2.0]))
    # one configuration up to the rounding of an encoding (a decoded log-scale value)
    Xr = np.vstack([X, X[1] + 1e-12])
    assert not found_deterministic(Xr, np.array([1.0, 2.0, 1.0, 2.5]))
    assert not found_deterministic(X[:1], np.array([1.0]))


def test_as_repeat_moves_a_proposal_within_tol_onto_the_nearest_evaluated_point():
    from optuna_gpbandit._repeats import as_repeat

    X = np.array([[0.2, 0.2], [0.5, 0.5], [0.5 + 6e-4, 0.5]])
    assert as_repeat(np.array([0.5004, 0.5002]), X).tolist() == [0.5006, 0.5]  # the nearest
    assert as_repeat(np.array([0.502, 0.5]), X).tolist() == [0.502, 0.5]  # none within tol
    assert as_repeat(np.array([0.502, 0.5]), X, tol=3e-3).tolist() == [0.5006, 0.5]
    assert as_repeat(np.array([0.3, 0.3]), X[:0]).tolist() == [0.3, 0.3]


def _near_pairs(u: np.ndarray) -> tuple[int, int]:
    """(trials within 1e-3 of an earlier one, such pairs that are not one configuration)."""
    pairs = [abs(u[i] - u[j]) for i in range(len(u)) for j in range(i)
             if abs(u[i] - u[j]) < SAME_POINT_TOL]
    near = sum(any(abs(u[i] - u[j]) < SAME_POINT_TOL for j in range(i)) for i in range(len(u)))
    return near, sum(d > 1e-9 for d in pairs)


@pytest.mark.parametrize("seed", [0, 1])
def test_a_rugged_deterministic_objective_asks_one_configuration_again_at_most(seed, caplog):
    """A function that varies at the scale of min_distance reads as noise to the model; the
    first repeat, asked at the very configuration, gives its very value and settles it (asked
    1e-3 apart instead, such repeats went on: 2-9 of 40 trials)."""
    def rugged(trial):
        x = trial.suggest_float("x", 0.0, 1.0)
        return (x - 0.5) ** 2 + 0.05 * np.sin(2000 * x)

    study = optuna.create_study(sampler=GPUCBSampler(seed=seed))
    with caplog.at_level(logging.INFO, logger="optuna_gpbandit"):
        study.optimize(rugged, n_trials=40)
    near, apart = _near_pairs(np.array([t.params["x"] for t in study.trials]))
    assert near <= 1 and apart == 0


@pytest.mark.parametrize("seed", [0, 1])
def test_a_noisy_objective_takes_its_repeats_at_the_very_configuration(seed, caplog):
    """On a log-scaled parameter (the encoding of a decoded value rounds): the first repeat
    gives another value, the objective stays noisy, and each later repeat is another look at
    one configuration, not a point 1e-3 away."""
    rng = np.random.default_rng(seed)

    def noisy(trial):
        x = trial.suggest_float("x", 1e-3, 10.0, log=True)
        return (np.log10(x) - 0.3) ** 2 + rng.normal(0.0, 0.3)

    study = optuna.create_study(sampler=GPUCBSampler(seed=seed))
    with caplog.at_level(logging.INFO, logger="optuna_gpbandit"):
        study.optimize(noisy, n_trials=40)
    x = np.array([t.params["x"] for t in study.trials])
    near, apart = _near_pairs(np.log(x / 1e-3) / np.log(10.0 / 1e-3))
    assert near >= 2 and apart == 0
    assert not [r for r in caplog.records if "treated as deterministic" in r.getMessage()]


@pytest.mark.parametrize("bad", ["yes", 1, 0.0])
def test_deterministic_objective_must_be_a_bool_or_none(bad):
    with pytest.raises(ValueError, match="deterministic_objective must be True, False or None"):
        GPUCBSampler(deterministic_objective=bad)


def test_tied_values_count_distinct_points_whose_value_an_earlier_point_gave():
    from optuna_gpbandit._repeats import tied_values

    X = np.array([[0.1], [0.2], [0.2], [0.3], [0.4], [0.5], [0.6]])
    y = np.array([5.0, 1.0, 9.0, 1.0, 1.0, 5.0, 2.0])  # row 2 repeats row 1's point
    tied, points, largest, row = tied_values(X, y)
    assert (tied, points, largest) == (3, 6, 3)  # 1.0 at 0.2, 0.3, 0.4; 5.0 at 0.1, 0.5
    assert y[row] == 1.0
    assert tied_values(X[:0], y[:0]) == (0, 0, 0, 0)


def test_a_plateau_of_ties_is_said_once_at_debug_in_objective_units(caplog):
    from optuna_gpbandit._observations import Observations
    from optuna_gpbandit.samplers._context import TIE_NOTICE, log_ties

    study = optuna.create_study(direction="minimize")
    trial = optuna.trial.create_trial(value=0.0, params={}, distributions={})

    def said(n_tied):
        X = np.linspace(0, 1, 12)[:, None]
        y_raw = -np.arange(12.0)  # minimising: y_raw = -value
        y_raw[1:1 + n_tied + 1] = -3.5  # n_tied + 1 points share the value 3.5
        obs = Observations(X=X, y=y_raw, y_raw=y_raw, shift=0.0, scale=1.0,
                           numbers=np.arange(12), sign=-1.0)
        caplog.clear()
        with caplog.at_level(logging.DEBUG, logger="optuna_gpbandit"):
            log_ties(study, trial, obs)
        return [r.getMessage() for r in caplog.records if "earlier point" in r.getMessage()]

    assert TIE_NOTICE == 4
    assert said(3) == []
    first = said(4)
    assert len(first) == 1
    assert "4 of 12 evaluated points" in first[0] and "5 points at 3.5" in first[0]
    assert said(8) == []  # once per study
    assert all(r.levelno == logging.DEBUG for r in caplog.records)  # bookkeeping, not advice


class _Peak:
    """An acquisition with its maximum at ``x = 0.5`` (one continuous column)."""

    def values(self, X):
        return -((np.asarray(X)[:, 0] - 0.5) ** 2)

    def value_grad(self, x):
        return float(-((x[0] - 0.5) ** 2)), np.array([-2.0 * (x[0] - 0.5)])


@pytest.mark.parametrize("min_distance", [1e-3, 1e-5])
def test_min_distance_is_the_radius_refused_around_an_exhausted_point(min_distance):
    from optuna.distributions import FloatDistribution

    from optuna_gpbandit.search import AcquisitionSearch
    from optuna_gpbandit._repeats import exhausted_points
    from optuna_gpbandit._space import EncodedSpace

    space = EncodedSpace({"x": FloatDistribution(0.0, 1.0)})
    X = np.array([[0.5003]])  # evaluated 3e-4 from the acquisition's maximum
    done = exhausted_points(X, np.array([1.0]), deterministic=True)
    x, _ = AcquisitionSearch(min_distance=min_distance).maximise(
        _Peak(), space, np.random.default_rng(0), exclude=done)
    assert abs(x[0] - 0.5003) >= min_distance  # never the exhausted point itself ...
    # ... and, with a radius below the distance, the maximum next to it is not refused.
    assert (abs(x[0] - 0.5) < 1e-4) == (min_distance < 3e-4)


@pytest.mark.parametrize("bad", [0.0, -1e-3, 0.6, float("nan"), True])
def test_min_distance_out_of_range_is_an_error_naming_it(bad):
    from optuna_gpbandit.search import AcquisitionSearch

    with pytest.raises(ValueError, match="min_distance"):
        AcquisitionSearch(min_distance=bad)


@pytest.mark.parametrize("bad", [0.0, -1e-5, 2e-3, float("nan"), True])
def test_polish_distance_out_of_range_is_an_error_naming_it(bad):
    from optuna_gpbandit.search import AcquisitionSearch

    with pytest.raises(ValueError, match="polish_distance"):
        AcquisitionSearch(polish_distance=bad)  # above min_distance (1e-3) included


def test_failed_polish_counts_near_repeats_since_the_last_improvement():
    from optuna_gpbandit._repeats import failed_polish

    X = np.array([[0.1], [0.5], [0.5002], [0.9], [0.5004], [0.1001]])
    y = np.array([0.0, 1.0, 0.9, 0.2, 0.95, 0.5])  # the best (1.0) comes at row 1
    assert failed_polish(X, y, 1e-3) == 3  # rows 2, 4 and 5 lie near earlier rows; 3 does not
    assert failed_polish(X, y, 5e-5) == 0  # none within 5e-5
    y2 = y.copy()
    y2[4] = 1.5  # row 4 improves: only row 5 counts after it
    assert failed_polish(X, y2, 1e-3) == 1
    y3 = y.copy()
    y3[2] = 1.0  # a tie with the best is no improvement
    assert failed_polish(X, y3, 1e-3) == 3
    assert failed_polish(X[:0], y[:0], 1e-3) == 0


def test_polishing_stops_after_patience_failed_tries_and_says_so(caplog):
    import optuna

    import optuna_gpbandit as g
    from optuna_gpbandit.search import AcquisitionSearch
    from optuna_gpbandit._repeats import POLISH_PATIENCE

    # Trials enqueued next to the best point, each worse: polishing does not pay.
    study = optuna.create_study(sampler=g.GPUCBSampler(
        seed=0, deterministic_objective=True, search=AcquisitionSearch(polish_distance=1e-5)))
    for x in [0.1, 0.9, 0.5] + [0.5 + 2e-4 * (k + 1) for k in range(POLISH_PATIENCE)]:
        study.enqueue_trial({"x": x})
    n = 3 + POLISH_PATIENCE
    with caplog.at_level("DEBUG", logger="optuna_gpbandit"):
        study.optimize(lambda t: abs(t.suggest_float("x", 0.0, 1.0) - 0.5), n_trials=n + 1)
    assert "polishing stops" in caplog.text
    xs = np.array([t.params["x"] for t in study.trials])
    assert np.min(np.abs(xs[:n] - xs[n])) >= 1e-3  # min_distance again
