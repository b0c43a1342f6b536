"""The trust region of the acquisition search in many dimensions (issue 47)."""

from __future__ import annotations

import numpy as np
import optuna
import pytest
from optuna.distributions import FloatDistribution

from optuna_gpbandit import (AcquisitionSearch, GPUCBSampler, Theorem1, TrustRegion,
                             sampler_record)
from optuna_gpbandit._conditional import (INACTIVE_NUMERIC, encoded_space, is_active,
                                          union_search_space)
from optuna_gpbandit._maximize import Box, maximize_acquisition
from optuna_gpbandit._space import EncodedSpace

optuna.logging.set_verbosity(optuna.logging.WARNING)


def test_the_side_doubles_after_successes_and_halves_after_failures():
    tr = TrustRegion(success_tol=3, failure_tol=4)
    start = [0.0, 1.0]  # two design points, not counted
    assert tr.side(np.array(start), 2, 20) == 0.8
    assert tr.side(np.array(start + [2.0, 3.0, 4.0]), 2, 20) == 1.6  # three improvements
    assert tr.side(np.array(start + [2.0, 3.0, 4.0, 5.0, 6.0, 7.0]), 2, 20) == 1.6  # capped
    assert tr.side(np.array(start + [0.5] * 4), 2, 20) == 0.4  # four trials without a gain
    assert tr.side(np.array(start + [0.5] * 8), 2, 20) == 0.2
    # below the smallest side it starts again
    small = TrustRegion(failure_tol=1, smallest=0.3)
    assert small.side(np.array(start + [0.5]), 2, 20) == 0.4
    assert small.side(np.array(start + [0.5, 0.5]), 2, 20) == 0.8
    # failure_tol None: the number of parameters (at least 4), TuRBO's rule
    assert TrustRegion(failure_tol=None).side(np.array(start + [0.5] * 4), 2, 20) == 0.8
    assert TrustRegion(failure_tol=None).side(np.array(start + [0.5] * 20), 2, 20) == 0.4


def test_the_box_is_centred_on_the_best_point_and_scaled_by_the_lengthscales():
    rng = np.random.default_rng(0)
    X = rng.random((12, 10))
    y = -np.sum((X - 0.4) ** 2, axis=1)
    ls = np.array([0.1] + [1.0] * 9)
    box = TrustRegion(min_dim=10).box(X, y, np.arange(12), ls, np.ones(10, bool), 12)
    centre = X[np.argmax(y)]
    assert np.all(box.lo <= centre) and np.all(centre <= box.hi)
    width = box.hi - box.lo
    assert width[0] < width[1:].min()  # the short lengthscale gets the narrow side
    # fewer numeric parameters than min_dim: no region
    assert TrustRegion(min_dim=11).box(X, y, np.arange(12), ls, np.ones(10, bool), 12) is None


def test_the_maximiser_stays_in_the_box():
    space = EncodedSpace({f"x{i}": FloatDistribution(0.0, 1.0) for i in range(12)})

    class Corner:  # an acquisition that prefers the corner (1, ..., 1)
        def values(self, X):
            return X.sum(axis=1)

        def value_grad(self, x):
            return float(x.sum()), np.ones_like(x)

    X = np.full((1, 12), 0.3)
    box = TrustRegion(min_dim=10).box(X, np.zeros(1), np.arange(1), np.ones(12),
                                      np.ones(12, bool), 1)
    x, _ = maximize_acquisition(Corner(), space, np.random.default_rng(0), box=box,
                                warm_starts=np.ones((1, 12)))
    assert np.all(x <= box.hi + 1e-12) and np.all(x >= box.lo - 1e-12)
    assert x == pytest.approx(box.hi)  # the box's own corner
    free, _ = maximize_acquisition(Corner(), space, np.random.default_rng(0))
    assert free == pytest.approx(np.ones(12))


def _sphere(trial):
    x = np.array([trial.suggest_float(f"x{i}", 0.0, 1.0) for i in range(12)])
    return float(np.sum((x - 0.35) ** 2))


def test_in_many_dimensions_each_model_trial_is_in_the_box_around_the_best_trial():
    study = optuna.create_study(sampler=GPUCBSampler(seed=0))
    study.optimize(_sphere, n_trials=24)
    model_trials = [t for t in study.trials if sampler_record(t) is not None]
    assert len(model_trials) == 24 - 13  # after the d + 1 start-up trials
    for t in model_trials:
        rec = sampler_record(t)
        earlier = [u for u in study.trials if u.number < t.number]
        best = min(earlier, key=lambda u: u.value)
        ls = np.array(rec["gp"]["lengthscales"])  # in the model's column order, rec["names"]
        half = 0.5 * rec["trust_region"] * ls / np.exp(np.mean(np.log(ls)))
        x = np.array([t.params[n] for n in rec["names"]])
        c = np.array([best.params[n] for n in rec["names"]])
        assert np.all(np.abs(x - c) <= half + 1e-9)
    off = optuna.create_study(sampler=GPUCBSampler(
        seed=0, search=AcquisitionSearch(trust_region=None)))
    off.optimize(_sphere, n_trials=16)
    assert "trust_region" not in sampler_record(off.trials[-1])
    with pytest.raises(ValueError, match="min_dim"):
        TrustRegion(min_dim=0)


def _mixed(d, trial):
    """``d`` numeric parameters of every kind (linear, log, int, stepped) and a categorical."""
    kinds = [lambda i: trial.suggest_float(f"x{i}", -2.0, 6.0),
             lambda i: trial.suggest_float(f"x{i}", 1e-4, 1.0, log=True),
             lambda i: trial.suggest_int(f"x{i}", 1, 9),
             lambda i: trial.suggest_float(f"x{i}", 0.0, 1.0, step=0.25)]
    total = sum(float(kinds[i % 4](i)) for i in range(d))
    trial.suggest_categorical("c", ["a", "b", "c"])
    return total


CENTRE = {0: 2.0, 1: 1e-2, 2: 5, 3: 0.5}  # per kind: the middle (of the log on a log scale)


def _centre_trials(study, d):
    return [t.number for t in study.trials
            if all(t.params[f"x{i}"] == pytest.approx(CENTRE[i % 4]) for i in range(d))]


def test_from_min_dim_numeric_parameters_the_design_starts_at_the_centre_once():
    study = optuna.create_study(sampler=GPUCBSampler(seed=3))
    study.optimize(lambda t: _mixed(10, t), n_trials=14)
    # Trial 0 knows no space (Optuna samples it independently); the first design point that
    # does is the centre, and no later trial repeats it.
    assert _centre_trials(study, 10) == [1]
    assert sampler_record(study.trials[1]) is None  # a start-up point


@pytest.mark.parametrize("sampler, d", [
    (GPUCBSampler(seed=3), 9),  # below min_dim (10 by default)
    (GPUCBSampler(seed=3, search=AcquisitionSearch(
        trust_region=TrustRegion(start_at_centre=False))), 10),
    (GPUCBSampler(seed=3, search=AcquisitionSearch(trust_region=None)), 10),
])
def test_no_centre_below_min_dim_or_when_switched_off(sampler, d):
    study = optuna.create_study(sampler=sampler)
    study.optimize(lambda t: _mixed(d, t), n_trials=6)
    assert _centre_trials(study, d) == []


def test_a_centre_the_user_enqueued_is_not_proposed_again():
    study = optuna.create_study(sampler=GPUCBSampler(seed=3))
    study.enqueue_trial({f"x{i}": CENTRE[i % 4] for i in range(10)} | {"c": "b"})
    study.optimize(lambda t: _mixed(10, t), n_trials=6)
    assert _centre_trials(study, 10) == [0]


def _six(trial, integer=False):
    xs = [trial.suggest_float(f"x{i}", 0.0, 1.0) for i in range(5)]
    xs.append(trial.suggest_int("k", 0, 10) / 10 if integer
              else trial.suggest_float("k", 0.0, 1.0))
    return float(np.sum((np.array(xs) - 0.3) ** 2))


@pytest.mark.parametrize("search, integer, boxed", [
    (AcquisitionSearch(), False, True),  # 6 continuous parameters: from min_dim_continuous (5)
    (AcquisitionSearch(), True, False),  # one integer among them: from min_dim (10)
    (AcquisitionSearch(trust_region=TrustRegion(min_dim_continuous=None)), False, False),
    (AcquisitionSearch(trust_region=TrustRegion(min_dim_continuous=7)), False, False),
])
def test_in_a_continuous_space_the_region_applies_from_min_dim_continuous(search, integer, boxed):
    study = optuna.create_study(sampler=GPUCBSampler(seed=2, search=search))
    study.optimize(lambda t: _six(t, integer), n_trials=10)
    assert ("trust_region" in sampler_record(study.trials[-1])) is boxed
    with pytest.raises(ValueError, match="min_dim_continuous"):
        TrustRegion(min_dim_continuous=0)


def test_start_at_centre_and_in_branches_must_be_bools():
    with pytest.raises(ValueError, match="start_at_centre"):
        TrustRegion(start_at_centre="yes")
    with pytest.raises(ValueError, match="in_branches"):
        TrustRegion(in_branches=1)


def test_a_parameter_the_best_points_branch_lacks_is_not_bounded():
    X = np.array([[0.2, 0.3, INACTIVE_NUMERIC], [0.9, INACTIVE_NUMERIC, 0.6]])
    y = np.array([1.0, 0.0])  # the best point lacks the third parameter
    box = TrustRegion(min_dim=3, initial=0.2, branch_side=None).box(
        X, y, np.arange(2), np.ones(3), np.ones(3, bool), 0)
    assert box.lo[:2] == pytest.approx([0.1, 0.2]) and box.hi[:2] == pytest.approx([0.3, 0.4])
    assert (box.lo[2], box.hi[2]) == (0.0, 1.0)
    # a point of another branch holds the inactive code where the box bounds: admitted
    assert box.contains(np.array([[0.25, INACTIVE_NUMERIC, 0.9]]), np.ones(3, bool))[0]
    assert not box.contains(np.array([[0.5, INACTIVE_NUMERIC, 0.9]]), np.ones(3, bool))[0]


def _two_branches(trial):
    """14 numeric parameters over two branches (6 shared, 4 of each branch's own)."""
    shared = [trial.suggest_float(f"s{i}", 0.0, 1.0) for i in range(6)]
    branch = trial.suggest_categorical("branch", ["a", "b"])
    own = [trial.suggest_float(f"{branch}{i}", 0.0, 1.0) for i in range(4)]
    offset = 0.0 if branch == "a" else 0.3
    return float(np.sum((np.array(shared) - 0.35) ** 2) + np.sum((np.array(own) - 0.6) ** 2)
                 + offset)


def test_with_branches_the_design_starts_at_each_branch_centre_at_most_once():
    study = optuna.create_study(sampler=GPUCBSampler(seed=1))
    study.optimize(_two_branches, n_trials=12)
    centres = [t.params["branch"] for t in study.trials
               if all(v == pytest.approx(0.5) for k, v in t.params.items() if k != "branch")]
    assert 1 <= len(centres) == len(set(centres))
    off = optuna.create_study(sampler=GPUCBSampler(
        seed=1, search=AcquisitionSearch(trust_region=TrustRegion(in_branches=False))))
    off.optimize(_two_branches, n_trials=12)
    assert not [t for t in off.trials
                if all(v == pytest.approx(0.5) for k, v in t.params.items() if k != "branch")]


def test_with_branches_each_model_trial_is_in_the_box_on_the_parameters_it_shares():
    study = optuna.create_study(sampler=GPUCBSampler(seed=1))
    study.optimize(_two_branches, n_trials=32)
    model_trials = [t for t in study.trials if sampler_record(t) is not None]
    assert len(model_trials) >= 8
    for t in model_trials:
        rec = sampler_record(t)
        best = min((u for u in study.trials if u.number < t.number), key=lambda u: u.value)
        names = rec["names"]
        numeric = np.array([n != "branch" for n in names])
        ls = np.array(rec["gp"]["lengthscales"])[numeric]
        half = 0.5 * rec["trust_region"] * ls / np.exp(np.mean(np.log(ls)))
        for name, h in zip([n for n in names if n != "branch"], half):
            if name in t.params and name in best.params:
                assert abs(t.params[name] - best.params[name]) <= h + 1e-9
    off = optuna.create_study(sampler=GPUCBSampler(
        seed=1, search=AcquisitionSearch(trust_region=TrustRegion(in_branches=False))))
    off.optimize(_two_branches, n_trials=24)
    assert "trust_region" not in sampler_record(off.trials[-1])


def test_of_two_workers_choosing_at_once_only_the_earlier_trial_takes_the_centre():
    study = optuna.create_study(sampler=GPUCBSampler(seed=3))
    study.optimize(lambda t: _mixed(10, t), n_trials=1)
    first, second = study.ask(), study.ask()  # both running, neither has chosen yet
    study.tell(second, _mixed(10, second))  # the later one chooses first: not the centre
    study.tell(first, _mixed(10, first))
    assert _centre_trials(study, 10) == [first.number]


def _eleven(trial):
    """Ten continuous parameters and an integer: the box applies (10 numeric), the space is not
    continuous only."""
    xs = [trial.suggest_float(f"x{i}", 0.0, 1.0) for i in range(10)]
    return float(np.sum((np.array(xs) - 0.3) ** 2)) + trial.suggest_int("k", 0, 10) / 10


@pytest.mark.parametrize("objective, boxed, narrowed", [
    (lambda t: _six(t, False), True, True),  # 6 continuous parameters: box, narrower width
    (lambda t: _six(t, True), False, False),  # one integer among 6: no box
    (_eleven, True, False),  # 10 numeric and an integer: box, the width as everywhere
])
def test_gp_ucbs_beta_is_scaled_by_box_factor_in_the_box_of_a_continuous_space(
        objective, boxed, narrowed):
    history = optuna.create_study(sampler=GPUCBSampler(seed=4))
    history.optimize(objective, n_trials=13)

    def next_record(beta):
        study = optuna.create_study(sampler=GPUCBSampler(seed=4, beta=beta))
        study.add_trials(history.trials)
        study.optimize(objective, n_trials=1)
        return sampler_record(study.trials[-1])

    default, same = next_record(Theorem1()), next_record(Theorem1(box_factor=1.0))
    assert ("trust_region" in default) is boxed
    assert default["beta"] == pytest.approx(same["beta"] * (0.4 if narrowed else 1.0), rel=1e-9)
    assert Theorem1.paper().box_factor == 1.0
    with pytest.raises(ValueError, match="box_factor"):
        Theorem1(box_factor=0.0)


def test_branch_side_keeps_the_box_to_the_best_points_branch_once_it_has_shrunk():
    X = np.array([[0.2, 0.3, INACTIVE_NUMERIC], [0.9, INACTIVE_NUMERIC, 0.6]])
    y = np.array([1.0, 0.0])  # the best point is in the branch without the third parameter
    region = TrustRegion(min_dim=3, failure_tol=1, branch_side=0.8)
    # at the initial side the acquisition still chooses the branch
    assert region.box(X, y, np.arange(2), np.ones(3), np.ones(3, bool), 2).branch is None
    # one trial without a gain halves the side (0.4 < 0.8): the box keeps to the branch
    X3, y3 = np.vstack([X, [[0.5, 0.5, INACTIVE_NUMERIC]]]), np.append(y, -1.0)
    box = region.box(X3, y3, np.arange(3), np.ones(3), np.ones(3, bool), 2)
    assert box.side == 0.4 and box.branch.tolist() == [True, True, False]
    other = np.array([[0.2, INACTIVE_NUMERIC, 0.5]])  # of the other branch, inside the bounds
    assert not box.contains(other, np.ones(3, bool))[0]
    assert box.contains(np.array([[0.25, 0.35, INACTIVE_NUMERIC]]), np.ones(3, bool))[0]
    with pytest.raises(ValueError, match="branch_side"):
        TrustRegion(branch_side=0.0)


def _random_two_branch_study():
    """12 random trials of ``_two_branches`` and the encoded space of their branches."""
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    study.optimize(_two_branches, n_trials=12)
    return study, encoded_space(union_search_space(study.trials), study.trials)


def test_the_maximiser_stays_in_the_boxs_branch_where_the_acquisition_prefers_another():
    study, space = _random_two_branch_study()
    col = space.names.index("branch")

    class PreferB:  # larger wherever the point is in branch "b" (choice index 1)
        def values(self, X):
            return np.where(np.isclose(X[:, col], 1.0), 1.0, 0.0) - np.sum(X ** 2, axis=1) * 1e-3

        def value_grad(self, x):
            return float(self.values(x[None, :])[0]), -2e-3 * x

    X = space.encode_many([t.params for t in study.trials])
    in_a = X[np.isclose(X[:, col], 0.0)][0]
    free = Box(np.zeros(space.d), np.ones(space.d), 0.4)
    kept = Box(np.zeros(space.d), np.ones(space.d), 0.4, branch=is_active(in_a))
    rng = np.random.default_rng(0)
    assert maximize_acquisition(PreferB(), space, rng, box=free)[0][col] == 1.0
    x, _ = maximize_acquisition(PreferB(), space, rng, box=kept)
    assert x[col] == 0.0 and space.decode(x).keys() == {
        n for n in space.names if n == "branch" or n[0] in "sa"}


def test_once_the_box_has_halved_twice_each_model_trial_is_in_the_best_trials_branch():
    search = AcquisitionSearch(trust_region=TrustRegion(failure_tol=1))  # halves quickly
    # (with branch_side=None two of this study's late trials leave the best trial's branch)
    study = optuna.create_study(sampler=GPUCBSampler(seed=4, search=search))
    study.optimize(_two_branches, n_trials=24)
    kept = 0
    for t in study.trials:
        rec = sampler_record(t)
        if rec is None or rec.get("trust_region", 1.0) >= TrustRegion().branch_side:
            continue
        best = min((u for u in study.trials if u.number < t.number), key=lambda u: u.value)
        assert t.params["branch"] == best.params["branch"]
        kept += 1
    assert kept >= 3


def test_a_kept_branch_no_candidate_reaches_leaves_the_maximiser_the_other_branches():
    _, space = _random_two_branch_study()
    nowhere = np.zeros(space.d, dtype=bool)  # a branch of no point: no candidate lies in it

    class Sum:
        def values(self, X):
            return np.sum(X, axis=1)

        def value_grad(self, x):
            return float(np.sum(x)), np.ones_like(x)

    box = Box(np.zeros(space.d), np.ones(space.d), 0.2, branch=nowhere)
    x, fx = maximize_acquisition(Sum(), space, np.random.default_rng(0), n_candidates=4,
                                 box=box)
    assert np.isfinite(fx) and space.decode(x)["branch"] in ("a", "b")
