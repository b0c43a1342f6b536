"""Long-term constraint stage (Shi & Eryilmaz 2022, Algorithms 2 and 3): pure functions and the
reading of Optuna's constraint formats. Expected values are computed by hand from the formulas."""

import datetime
import json
import logging
import math

import numpy as np
import optuna
import pytest
from optuna.distributions import FloatDistribution
from optuna.samplers import RandomSampler
from optuna.samplers._base import _process_constraints_after_trial
from optuna.trial import FrozenTrial, TrialState, create_trial

from optuna_gpbandit.constraints import (
    ConstraintDataError,
    LongTermConstraints,
    Psi,
    constrained_beta,
    constraint_matrix,
    constraint_vector,
    epoch_index,
    epoch_means,
    epoch_position,
    horizon_epochs,
    make_psi,
    noise_width_factor,
    noiseless_log_kappa_path,
    noiseless_penalties,
    noiseless_targets,
    noisy_kappa_path,
    noisy_penalties,
    noisy_targets,
    psi_exp,
    psi_poly,
    recover_noiseless,
    recover_noisy,
    theory_steps,
    trial_constraints,
)

DIST = {"x": FloatDistribution(0.0, 1.0)}
EXP = make_psi("exp", c=1.0)
POLY = make_psi("poly", c=1.0, n=2.0)


def _trial(number, value=1.0, g=None, named=None, state=TrialState.COMPLETE, attrs=None):
    """A FrozenTrial with ``constraints_func``-style values ``g`` and/or named values."""
    system_attrs = dict(attrs or {})
    if g is not None:
        system_attrs["constraints"] = tuple(g)
    for k, v in (named or {}).items():
        system_attrs[f"constraints:{k}"] = v
    t = create_trial(
        params={"x": 0.5}, distributions=DIST, state=state,
        value=value if state == TrialState.COMPLETE else None, system_attrs=system_attrs,
    )
    t.number = number
    return t


def _trials(rows, **kw):
    return [_trial(i, g=row, **kw) for i, row in enumerate(rows)]


# ============================================================================ psi (9.1-9.3)
def test_psi_values():
    for psi in (EXP, POLY):
        np.testing.assert_array_equal(psi([-1.0, 0.0]), [1.0, 1.0])
    assert float(psi_exp(0.5)) == pytest.approx(1.6487213, abs=1e-7)
    assert float(psi_poly(0.5)) == pytest.approx(2.25, abs=1e-12)
    assert float(psi_poly(0.5, c=2.0, n=3.0)) == pytest.approx(8.0)
    assert float(psi_exp(0.5, c=2.0)) == pytest.approx(math.e)
    grid = np.linspace(0.0, 3.0, 301)
    for psi in (EXP, POLY):
        assert np.all(np.diff(psi(grid)) > 0)


@pytest.mark.parametrize("psi", [EXP, POLY, make_psi("poly", c=0.5, n=3.5)])
def test_psi_convex_submultiplicative_at_least_one(psi):
    grid = np.linspace(-3.0, 3.0, 121)
    X, Y = np.meshgrid(grid, grid)
    assert np.all(psi(X) * psi(Y) >= psi(X + Y) - 1e-12)
    v = psi(grid)
    assert np.all(v[:-2] - 2 * v[1:-1] + v[2:] >= -1e-9)
    assert np.all(v >= 1.0)


def test_penalty_zero_exactly_when_feasible():
    g = np.array([-5.0, -1e-12, 0.0, 1e-9, 0.3, 2.0])
    for psi in (EXP, POLY):
        pen = psi.penalty(g)
        assert np.all(pen[:3] == 0.0) and np.all(pen[3:] > 0)
        np.testing.assert_allclose(np.exp(psi.log_penalty(g[3:])), pen[3:], rtol=1e-12)
    y = np.array([0.3, -2.0, 7.0])
    G = np.array([[-1.0, 0.0], [0.0, -3.0], [-0.5, -0.5]])
    # a feasible trial's target is y exactly, whatever kappa
    assert np.array_equal(noiseless_targets(y, G, np.log([7.0, 1e10]), EXP), y)


def test_log_penalty_matches_direct_formula():
    g = np.array([1e-6, 0.01, 0.5, 3.0, 30.0])
    np.testing.assert_allclose(EXP.log_penalty(g), np.log(np.expm1(g)), rtol=1e-12)
    np.testing.assert_allclose(POLY.log_penalty(g), np.log(g * (2 + g)), rtol=1e-12)  # (1+g)^2 - 1


def test_psi_in_log_form_does_not_overflow():
    g = np.array([1e4, 1e300])
    with np.errstate(all="raise"):  # no floating-point warning anywhere
        assert np.array_equal(EXP.log_psi(g), g)
        assert np.array_equal(EXP.log_penalty(g[:1]), [1e4])
        assert np.all(np.isfinite(POLY.log_penalty(g)))
    assert np.isinf(EXP(g[:1])).all()  # psi itself overflows: that is why the log form exists


def test_custom_psi_validated_and_clipped_below_zero():
    cube = make_psi(lambda x: (1.0 + x) ** 3)
    assert cube.kind == "custom"
    assert float(cube(1.0)) == pytest.approx(8.0)
    raw_exp = make_psi(math.exp)  # scalar-only callable; applied elementwise
    np.testing.assert_allclose(raw_exp([-2.0, 0.0, 1.0]), [1.0, 1.0, math.e])  # psi = 1 for x <= 0
    with pytest.raises(ValueError, match="psi\\(0\\) = 1"):
        make_psi(lambda x: 2.0 + x)
    with pytest.raises(ValueError, match="non-decreasing"):
        make_psi(lambda x: 1.0 + np.sin(x) ** 2 * (x > 0))
    with pytest.raises(ValueError, match="NaN"):
        make_psi(lambda x: np.where(x > 10, np.nan, 1.0 + x))
    with pytest.raises(ValueError, match="evaluated"):
        make_psi(lambda x: undefined_name)  # noqa: F821


@pytest.mark.parametrize("kwargs", [
    {"psi": "square"}, {"psi": "exp", "c": 0.0}, {"psi": "exp", "c": -1.0},
    {"psi": "exp", "c": float("inf")}, {"psi": "poly", "n": 0.5}, {"psi": "poly", "n": float("nan")},
    {"psi": 3.0},
])
def test_make_psi_rejects_bad_parameters(kwargs):
    with pytest.raises(ValueError):
        make_psi(**kwargs)


def test_psi_rejects_nan_argument():
    with pytest.raises(ValueError, match="NaN"):
        EXP.log_psi([0.1, np.nan])


# ============================================================================ epoch map
def test_epoch_map():
    assert epoch_position(0, 3) == (0, 0)
    assert epoch_position(5, 3) == (1, 2)
    assert epoch_position(6, 3) == (2, 0)
    assert epoch_index(7, 3).tolist() == [0, 0, 0, 1, 1, 1, 2]
    G = np.arange(14, dtype=float).reshape(7, 2)
    np.testing.assert_allclose(epoch_means(G, 3), [[2.0, 3.0], [8.0, 9.0]])
    assert epoch_means(G[:2], 3).shape == (0, 2)
    assert horizon_epochs(5, 3) == 2
    assert horizon_epochs(5, 3, n_trials_hint=10) == 4
    assert horizon_epochs(50, 3, n_trials_hint=10) == 17  # past the hint: the current epoch
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError):
            epoch_position(3, bad)


# ============================================================================ Algorithm 2 (9.4, 9.5, 9.7)
def test_noiseless_update_spec_example():
    G = [[0.2, -0.1], [0.4, -0.3], [0.3, -0.2]]
    state = recover_noiseless(G, 3, EXP)
    assert state.kappa[0] == pytest.approx(math.exp(0.3)) and state.kappa[0] == pytest.approx(1.3498588)
    assert state.kappa[1] == 1.0  # a negative mean leaves kappa exactly unchanged
    assert state.log_kappa[1] == 0.0
    np.testing.assert_allclose(state.epoch_means, [[0.3, -0.2]])
    assert recover_noiseless(G, 3, POLY).kappa == pytest.approx((1.69, 1.0))
    assert (state.epoch, state.position, state.n_used) == (1, 0, 3)


def test_noiseless_two_epochs_by_hand_with_kappa_init_and_c():
    psi = make_psi("exp", c=2.0)
    G = [[1.0], [0.0], [-0.4], [0.5], [0.5], [-2.0], [9.0]]  # means 0.2, -1/3; last row partial
    state = recover_noiseless(G, 3, psi, kappa_init=0.5)
    assert state.log_kappa[0] == pytest.approx(math.log(0.5) + 2.0 * 0.2)
    assert state.kappa[0] == pytest.approx(0.5 * math.exp(0.4))
    assert (state.epoch, state.position) == (2, 1)
    poly = make_psi("poly", c=0.5, n=3.0)
    G2 = [[0.4], [0.4], [0.4], [2.0], [2.0], [2.0]]
    expected = (1 + 0.5 * 0.4) ** 3 * (1 + 0.5 * 2.0) ** 3
    assert recover_noiseless(G2, 3, poly).kappa[0] == pytest.approx(expected)


@pytest.mark.parametrize("recover", [
    lambda G: recover_noiseless(G, 3, EXP).kappa,
    lambda G: recover_noisy(G, 3, 0.5).kappa,
])
def test_partial_epochs_never_update(recover):
    rows = [[0.6], [0.3], [0.9], [0.2], [0.7], [0.5]]
    for n in range(3):
        assert recover(rows[:n]) == recover([])  # no full epoch: the initial value
    k3 = recover(rows[:3])
    assert k3 != recover([])
    assert recover(rows[:4]) == k3 and recover(rows[:5]) == k3  # 5 trials: exactly one update
    assert recover(rows[:6]) != k3  # the 6th completes the second epoch


def test_noiseless_kappa_non_decreasing_random_histories():
    rng = np.random.default_rng(0)
    for _ in range(200):
        n, m = int(rng.integers(0, 40)), int(rng.integers(1, 4))
        G = rng.normal(scale=rng.uniform(0.1, 3.0), size=(n, m))
        psi = EXP if rng.random() < 0.5 else POLY
        path, _ = noiseless_log_kappa_path(G, int(rng.integers(1, 6)), psi)
        assert path.shape[1] == m
        assert np.all(np.diff(path, axis=0) >= 0)


def test_all_feasible_keeps_kappa_init_and_targets_equal_y():
    rng = np.random.default_rng(1)
    G = -rng.uniform(0.0, 2.0, size=(30, 2))
    G[::7] = 0.0
    for psi in (EXP, POLY):
        path, clipped = noiseless_log_kappa_path(G, 4, psi, kappa_init=1.0)
        assert np.all(path == 0.0) and not clipped
    y = rng.normal(size=30)
    assert np.array_equal(noiseless_targets(y, G, [0.0, 0.0], EXP), y)


def test_noiseless_targets_by_hand():
    y = np.array([1.0, 2.0, -0.5])
    G = np.array([[0.5, -1.0], [0.0, 0.2], [1.0, 1.0]])
    kappa = np.array([2.0, 3.0])
    pen = np.array([
        2.0 * (math.exp(0.5) - 1.0),
        3.0 * (math.exp(0.2) - 1.0),
        2.0 * (math.e - 1.0) + 3.0 * (math.e - 1.0),
    ])
    np.testing.assert_allclose(noiseless_penalties(G, np.log(kappa), EXP), pen, rtol=1e-12)
    np.testing.assert_allclose(noiseless_targets(y, G, np.log(kappa), EXP), y - pen, rtol=1e-12)
    pen_poly = np.array([2.0 * 1.25, 3.0 * 0.44, 2.0 * 3.0 + 3.0 * 3.0])
    np.testing.assert_allclose(noiseless_targets(y, G, np.log(kappa), POLY), y - pen_poly)


def test_huge_constraint_values_clip_and_stay_finite():
    G = np.full((9, 1), 1e4)
    path, clipped = noiseless_log_kappa_path(G, 3, EXP, max_log_kappa=50.0)
    assert clipped and path[-1, 0] == 50.0 and path[1, 0] == 50.0
    with np.errstate(all="raise"):
        pen = noiseless_penalties(G, path[-1], EXP, max_log_penalty=100.0)
    np.testing.assert_array_equal(pen, math.exp(100.0))  # capped: log kappa + 1e4 > 100
    z = noiseless_targets(np.zeros(9), G, path[-1], EXP)
    assert np.all(np.isfinite(z))
    # the penalty cap grows only linearly with the number of constraints
    G2 = np.array([[1e4, 1e4, -1.0]])
    assert noiseless_penalties(G2, [50.0, 50.0, 50.0], EXP)[0] == pytest.approx(2 * math.exp(100))
    state = recover_noiseless(G, 3, EXP)
    assert state.clipped and math.isfinite(state.kappa[0])
    json.dumps(state.to_json(all_means=True), allow_nan=False)


def test_huge_constraints_through_config_are_clipped():
    cfg = LongTermConstraints("noiseless", epoch_length=3, scale=False)
    stage = cfg.prepare(_trials([[1e4]] * 7))
    assert stage.state.log_kappa == (50.0,) and stage.state.clipped
    assert np.all(np.isfinite(stage.targets(np.ones(7))))


@pytest.mark.needs_optuna5
def test_clipping_and_skipped_trials_are_logged_once_per_study(caplog):
    """The constraint step of a sampler says it (the config object keeps no warn-once state:
    one instance may serve many studies)."""
    from optuna.distributions import FloatDistribution
    from optuna.trial import create_trial

    from optuna_gpbandit import ConstrainedGPUCBSampler

    rule = LongTermConstraints("noiseless", epoch_length=3, scale=False)
    for _ in range(2):  # the same rule in two studies: each study is told
        study = optuna.create_study(sampler=ConstrainedGPUCBSampler(
            seed=0, constraints=rule, n_startup_trials=2))
        for i in range(7):
            attrs = {} if i == 2 else {"constraints:g": 1e4}  # trial 2: no data, skipped
            study.add_trial(create_trial(params={"x": i / 7},
                                         distributions={"x": FloatDistribution(0, 1)},
                                         value=float(i), system_attrs=attrs))

        def objective(trial):
            trial.set_constraint("g", 1e4)
            return trial.suggest_float("x", 0, 1)

        with caplog.at_level(logging.WARNING, logger="optuna_gpbandit"):
            caplog.clear()
            study.optimize(objective, n_trials=3)
        messages = [r.getMessage() for r in caplog.records]
        assert sum("max_log_kappa" in m for m in messages) == 1
        skipped = [m for m in messages if "skipped by the long-term constraints" in m]
        assert len(skipped) == 1 and "Trial 2" in skipped[0]


@pytest.mark.parametrize("variant", ["noiseless", "noisy"])
def test_default_scale_makes_units_irrelevant(variant):
    """scale=True (default): the same constraints in units 300x larger (and the objective in
    units 1000x larger) give the same multipliers and penalised targets up to the objective's
    scale, where the raw penalty saturates (Algorithm 2: log kappa at its cap)."""
    rng = np.random.default_rng(0)
    G = rng.normal(0.2, 1.0, size=(11, 2))
    values = rng.normal(size=11)
    small = [_trial(i, value=float(values[i]), g=G[i]) for i in range(11)]
    large = [_trial(i, value=1000 * float(values[i]), g=300 * G[i]) for i in range(11)]
    cfg = LongTermConstraints(variant, epoch_length=3)
    a, b = cfg.prepare(small), cfg.prepare(large)
    np.testing.assert_allclose(a.state.kappa, b.state.kappa, rtol=1e-9)
    np.testing.assert_allclose(a.targets(values), b.targets(1000 * values), rtol=1e-9)
    np.testing.assert_allclose(b.scale, 300 * np.mean(np.abs(G[:3]), axis=0), rtol=1e-12)
    assert b.objective_scale == pytest.approx(1000 * np.std(values[:3]))
    raw = LongTermConstraints(variant, epoch_length=3, scale=False)
    assert not np.allclose(raw.prepare(small).state.kappa, raw.prepare(large).state.kappa)


# ============================================================================ Algorithm 3 (9.6)
def test_noisy_update_spec_example():
    G = [[0.4]] * 3 + [[-0.2]] * 3 + [[-1.0]] * 3
    path = noisy_kappa_path(G, 3, step=0.5, kappa_init=0.0)
    np.testing.assert_allclose(path[:, 0], [0.0, 0.2, 0.1, 0.0], atol=1e-15)  # decreases, projects
    assert np.all(path >= 0)
    assert recover_noisy([[-0.3], [-0.1], [-2.0]] * 4, 3, 0.5).kappa == (0.0,)


def test_noisy_update_uses_observed_epoch_mean_per_constraint():
    G = [[0.1, -1.0], [0.5, 0.2], [0.3, 0.5], [0.0, 2.0], [-0.3, 2.0], [0.0, 2.0]]
    # epoch 1 means (0.3, -0.1); epoch 2 means (-0.1, 2.0); kappa_init (1, 0.5); step 0.25
    k1 = np.maximum(0.0, np.array([1.0, 0.5]) + 0.25 * np.array([0.3, -0.1]))
    k2 = np.maximum(0.0, k1 + 0.25 * np.array([-0.1, 2.0]))
    state = recover_noisy(G, 3, 0.25, kappa_init=[1.0, 0.5])
    np.testing.assert_allclose(state.kappa, k2)
    assert state.steps == (0.25, 0.25)
    assert state.log_kappa is None
    json.dumps(state.to_json(), allow_nan=False)


def test_noisy_theory_steps():
    np.testing.assert_allclose(theory_steps(3, 0.5), [0.5, 0.5 / math.sqrt(2), 0.5 / math.sqrt(3)])
    np.testing.assert_allclose(theory_steps(2, 0.5, n_epochs=16), [0.125, 0.125])
    G = [[1.0]] * 6
    state = recover_noisy(G, 3, "theory", step0=0.5)
    assert state.kappa[0] == pytest.approx(0.5 + 0.5 / math.sqrt(2))
    hinted = recover_noisy(G, 3, "theory", step0=0.5, n_trials_hint=48)  # L = 16
    assert hinted.kappa[0] == pytest.approx(0.25)
    with pytest.raises(ValueError):
        recover_noisy(G, 3, "adaptive")


def test_noisy_targets_and_width_factor():
    y = np.array([1.0, 0.0])
    G = np.array([[0.5, -2.0], [-1.0, 1.0]])
    kappa = np.array([2.0, 0.5])
    np.testing.assert_allclose(noisy_targets(y, G, kappa), [1.0 - (1.0 - 1.0), 0.0 - (-2.0 + 0.5)])
    assert noise_width_factor([0.5]) == pytest.approx(math.sqrt(1.25))
    assert noise_width_factor([3.0, 4.0]) == pytest.approx(math.sqrt(26.0))
    assert noise_width_factor([]) == 1.0
    assert noise_width_factor([1e200, 1e200]) == pytest.approx(math.sqrt(2.0) * 1e200)
    with np.errstate(all="raise"):
        pen = noisy_penalties(np.array([[1e300, -1e300]]), [1e10, 1e10], max_log_penalty=100.0)
    assert pen[0] == 0.0  # both terms capped at +-exp(100)
    with pytest.raises(ValueError):
        noisy_targets(y, G, [-1.0, 0.0])


# ============================================================================ beta (9.9)
def test_constrained_beta_spec_values():
    assert constrained_beta(0.0, 1.0, 0.1, 0.1, 10) == pytest.approx(1.3348185, abs=1e-7)
    assert constrained_beta(0.0, 1.0, 0.1, 0.1, 10, kappa=[0.5]) == pytest.approx(1.3968097, abs=1e-7)
    assert constrained_beta(0.0, 1.0, 0.1, 0.1, 10, kappa=[0.0]) == pytest.approx(
        1.0 + 0.1 * math.sqrt(2.0 * (1.0 + math.log(200.0)))
    )
    for bad in ({"delta": 0.0}, {"delta": 1.0}, {"n_epochs": 0}, {"gamma": -1.0}, {"R": -0.1}):
        args = {"gamma": 0.0, "B": 1.0, "R": 0.1, "delta": 0.1, "n_epochs": 10, **bad}
        with pytest.raises(ValueError):
            constrained_beta(**args)


def test_stage_beta_uses_epochs_and_kappa():
    rows = [[0.4]] * 3 + [[0.0]] * 2
    noisy = LongTermConstraints("noisy", epoch_length=3, scale=False).prepare(_trials(rows))
    assert noisy.n_epochs == 2 and noisy.state.kappa == pytest.approx((0.2,))
    assert noisy.beta(0.0, 1.0, 0.1, 0.1) == pytest.approx(constrained_beta(0.0, 1.0, 0.1, 0.1, 2, [0.2]))
    assert noisy.state.noise_factor == pytest.approx(math.sqrt(1.04))
    hinted = LongTermConstraints("noiseless", epoch_length=3, scale=False, n_trials_hint=30).prepare(_trials(rows))
    assert hinted.n_epochs == 10
    assert hinted.beta(0.0, 1.0, 0.1, 0.1) == pytest.approx(1.3348185, abs=1e-7)
    assert hinted.state.noise_factor == 1.0


# ============================================================================ reading trials
@pytest.mark.needs_optuna5
def test_trial_constraints_ordering_and_merge():
    t = _trial(0, g=[0.5, -1.0], named={"zeta": 3.0, "alpha": 2.0})
    assert trial_constraints(t) == (("0", "1", "alpha", "zeta"), (0.5, -1.0, 2.0, 3.0))
    clash = _trial(1, g=[0.5, -1.0], named={"1": 9.0})  # Optuna: the named value overwrites
    with pytest.warns(Warning):
        reference = clash.constraints
    assert trial_constraints(clash) == (("0", "1"), (0.5, 9.0))
    assert dict(zip(*trial_constraints(clash))) == reference
    assert trial_constraints(_trial(2)) == ((), ())
    assert trial_constraints(_trial(3, attrs={"constraints": None})) == ((), ())
    np.testing.assert_array_equal(constraint_vector(t, ["zeta", "0", "alpha", "1"]), [3.0, 0.5, 2.0, -1.0])


@pytest.mark.needs_optuna5
def test_set_constraint_in_objective_real_study():
    def objective(trial):
        x = trial.suggest_float("x", 0.0, 1.0)
        trial.set_constraint("mem", x - 0.5)
        trial.set_constraint("cost", 2 * x - 1.2)
        return x

    study = optuna.create_study(sampler=RandomSampler(seed=0))
    study.optimize(objective, n_trials=7)
    matrix = constraint_matrix(study.trials)
    assert matrix.names == ("cost", "mem")  # sorted by name, not insertion order
    xs = np.array([t.params["x"] for t in study.trials])
    np.testing.assert_allclose(matrix.values, np.c_[2 * xs - 1.2, xs - 0.5])
    for t, row in zip(study.trials, matrix.values):
        assert dict(zip(matrix.names, row)) == pytest.approx(t.constraints)
    stage = LongTermConstraints("noiseless", epoch_length=3, scale=False).prepare(study.trials)
    expected = np.maximum(0.0, epoch_means(matrix.values, 3)).sum(axis=0)
    np.testing.assert_allclose(stage.state.log_kappa, expected)
    assert stage.state.names == ("cost", "mem")


class _ConstraintsFuncSampler(RandomSampler):
    """Stores ``constraints_func`` values the way Optuna's samplers do."""

    def __init__(self, constraints_func, seed):
        super().__init__(seed=seed)
        self._constraints_func = constraints_func

    def after_trial(self, study, trial, state, values):
        _process_constraints_after_trial(self._constraints_func, study, trial, state)
        super().after_trial(study, trial, state, values)


def _xs_study(sampler, n, direction="minimize", storage=None):
    study = optuna.create_study(sampler=sampler, direction=direction, storage=storage)
    study.optimize(lambda t: t.suggest_float("x", 0.0, 1.0), n_trials=n)
    return study


@pytest.mark.needs_optuna5
def test_constraints_func_real_study_and_same_history_both_formats(tmp_path):
    def cons(trial):
        x = trial.params["x"]
        return (x - 0.3, 0.1 - x)

    storage = f"sqlite:///{tmp_path / 'c.db'}"
    study = _xs_study(_ConstraintsFuncSampler(cons, seed=1), 8, storage=storage)
    study = optuna.load_study(study_name=study.study_name, storage=storage)  # tuples come back as lists
    xs = np.array([t.params["x"] for t in study.trials])
    matrix = constraint_matrix(study.trials)
    assert matrix.names == ("0", "1")
    np.testing.assert_allclose(matrix.values, np.c_[xs - 0.3, 0.1 - xs])
    # the same history through set_constraint keys
    named = optuna.create_study()
    for x in xs:
        named.add_trial(create_trial(params={"x": x}, distributions=DIST, value=x,
                                     constraints={"0": x - 0.3, "1": 0.1 - x}))
    for variant in ("noiseless", "noisy"):
        cfg = LongTermConstraints(variant, epoch_length=3, scale=False)
        a, b = cfg.prepare(study.trials).state, cfg.prepare(named.trials).state
        assert a.kappa == pytest.approx(b.kappa) and a.epoch == b.epoch == 2


# ============================================================================ policy
@pytest.mark.parametrize("bad, reason", [
    (lambda n: _trial(n), "missing"),
    (lambda n: _trial(n, attrs={"constraints": None}), "missing"),  # constraints_func raised
    (lambda n: _trial(n, g=[0.1]), "names"),  # wrong length
    (lambda n: _trial(n, g=[0.1, 0.2, 0.3]), "names"),
    (lambda n: _trial(n, named={"a": 0.1, "b": 0.2}), "names"),  # differently keyed
    (lambda n: _trial(n, g=[0.1, float("nan")]), "value"),
    (lambda n: _trial(n, g=[float("inf"), 0.0]), "value"),
    (lambda n: _trial(n, g=["0.1", 0.0]), "value"),
    (lambda n: _trial(n, attrs={"constraints": 0.5}), "names"),  # not a sequence
])
def test_unusable_trials_skip_or_raise(bad, reason):
    good = [[0.3, -0.1], [0.6, 0.2], [0.0, 0.4], [0.9, -0.5], [0.3, 0.3], [0.0, 0.0]]
    trials = [_trial(i, g=row) for i, row in enumerate(good[:2])]
    trials.append(bad(2))
    trials += [_trial(i + 3, g=row) for i, row in enumerate(good[2:])]
    clean = [_trial(i, g=row) for i, row in enumerate(good)]

    cfg = LongTermConstraints("noiseless", epoch_length=3, scale=False)
    stage = cfg.prepare(trials)
    assert [s.number for s in stage.skipped] == [2] and stage.skipped[0].reason == reason
    assert 2 not in stage.numbers.tolist() and len(stage.trials) == 6
    ref = LongTermConstraints("noiseless", epoch_length=3, scale=False).prepare(clean).state
    assert stage.state.kappa == pytest.approx(ref.kappa) and stage.state.epoch == ref.epoch == 2
    assert "Trial 2" in stage.skipped[0].message

    with pytest.raises(ConstraintDataError, match="Trial 2") as info:
        LongTermConstraints("noisy", epoch_length=3, scale=False, on_missing="raise").prepare(trials)
    assert info.value.reason == reason and info.value.number == 2
    assert isinstance(info.value, ValueError)


def test_first_trial_without_data_is_skipped_once_others_have_data():
    trials = [_trial(0), _trial(1, g=[0.5]), _trial(2, g=[0.1])]
    matrix = constraint_matrix(trials)
    assert matrix.names == ("0",) and matrix.numbers.tolist() == [1, 2]
    assert [s.number for s in matrix.skipped] == [0]
    fixed = constraint_matrix(trials, names=["0"])
    assert fixed.numbers.tolist() == [1, 2]
    with pytest.raises(ValueError):
        constraint_matrix(trials, names=[])
    with pytest.raises(ValueError):
        constraint_matrix(trials, on_missing="ignore")


def test_unconstrained_study_m0():
    trials = [_trial(i, value=float(i)) for i in range(5)]
    stage = LongTermConstraints("noiseless", epoch_length=2, scale=False).prepare(trials)
    assert stage.constraints.shape == (5, 0) and stage.state.kappa == () and not stage.skipped
    y = np.array([0.0, 1.0, 2.0, 3.0, 4.0])
    assert np.array_equal(stage.targets(y), y)
    assert (stage.state.epoch, stage.state.position) == (2, 1)
    epoch_mode = LongTermConstraints("noisy", epoch_length=2, scale=False, history="epoch").prepare(trials)
    assert epoch_mode.numbers.tolist() == [4]  # still restarts every S trials


# ============================================================================ config / stage
def test_ignored_states_and_include_pruned():
    clean_rows = [[0.5], [0.1], [0.3], [0.9], [0.2], [0.4], [0.7]]
    clean = _trials(clean_rows)
    noisy = list(clean)
    noisy.insert(2, _trial(100, state=TrialState.FAIL, g=[5.0]))
    noisy.insert(4, _trial(101, state=TrialState.RUNNING))
    noisy.insert(5, _trial(102, state=TrialState.PRUNED, g=[6.0]))
    noisy.insert(6, _trial(103, state=TrialState.WAITING))
    # COMPLETE with constraints=None (constraints_func raised): skipped
    noisy.append(_trial(104, attrs={"constraints": None}))
    noisy.reverse()  # the input order does not matter: epochs follow trial numbers
    for variant in ("noiseless", "noisy"):
        cfg = LongTermConstraints(variant, epoch_length=3, scale=False)
        a, b = cfg.prepare(clean), cfg.prepare(noisy)
        assert a.state.kappa == b.state.kappa and a.state.epoch == b.state.epoch == 2
        assert b.numbers.tolist() == list(range(7))
    # include_pruned: trial 102 (number order: after 0..6) joins the epoch means, not the GP
    with_pruned = LongTermConstraints("noiseless", epoch_length=3, scale=False, include_pruned=True).prepare(noisy)
    assert with_pruned.numbers.tolist() == list(range(7))
    assert with_pruned.state.n_used == 8 and (with_pruned.state.epoch, with_pruned.state.position) == (2, 2)
    np.testing.assert_allclose(with_pruned.state.epoch_means, [[0.3], [0.5]])  # 102 is the 8th
    early = [_trial(0, g=[0.0]), _trial(1, g=[0.0]), _trial(2, state=TrialState.PRUNED, g=[3.0])]
    st = LongTermConstraints("noiseless", epoch_length=3, scale=False, include_pruned=True).prepare(early)
    np.testing.assert_allclose(st.state.epoch_means, [[1.0]])
    assert st.numbers.tolist() == [0, 1]
    assert LongTermConstraints("noiseless", epoch_length=3, scale=False).prepare(early).state.epoch == 0


def test_history_epoch_keeps_current_epoch_only():
    trials = _trials([[0.1]] * 8)
    cfg = LongTermConstraints("noiseless", epoch_length=3, scale=False, history="epoch")
    assert cfg.prepare(trials).numbers.tolist() == [6, 7]
    assert cfg.prepare(trials[:6]).numbers.tolist() == []  # start of an epoch: nothing
    stage = cfg.prepare(trials[:6])
    assert stage.constraints.shape == (0, 1) and stage.targets(np.zeros(0)).shape == (0,)
    all_mode = LongTermConstraints("noiseless", epoch_length=3, scale=False).prepare(trials)
    assert all_mode.numbers.tolist() == list(range(8))


def test_epoch_order_complete():
    t0 = datetime.datetime(2024, 1, 1)

    def frozen(number, minutes, g):
        return FrozenTrial(
            number=number, state=TrialState.COMPLETE, value=0.0, values=None,
            datetime_start=t0, datetime_complete=t0 + datetime.timedelta(minutes=minutes),
            params={"x": 0.5}, distributions=DIST, user_attrs={},
            system_attrs={"constraints": [g]}, intermediate_values={}, trial_id=number,
        )

    trials = [frozen(0, 1, 1.0), frozen(1, 9, 0.0), frozen(2, 2, 1.0), frozen(3, 3, 1.0)]
    by_number = LongTermConstraints("noiseless", epoch_length=3, scale=False).prepare(trials)
    by_complete = LongTermConstraints("noiseless", epoch_length=3, scale=False, epoch_order="complete").prepare(trials)
    np.testing.assert_allclose(by_number.state.epoch_means, [[2 / 3]])
    np.testing.assert_allclose(by_complete.state.epoch_means, [[1.0]])
    assert by_complete.numbers.tolist() == [0, 2, 3, 1]


@pytest.mark.needs_optuna5
@pytest.mark.parametrize("direction", ["minimize", "maximize"])
def test_direction_handling(direction):
    f = np.array([0.2, 0.8, 0.5, 0.9])
    g = [[-0.5], [0.6], [0.0], [1.0]]
    sign = 1.0 if direction == "maximize" else -1.0
    study = optuna.create_study(direction=direction)
    for fi, gi in zip(f, g):
        study.add_trial(create_trial(params={"x": fi}, distributions=DIST, value=sign * fi,
                                     constraints={"0": gi[0]}))
    cfg = LongTermConstraints("noiseless", epoch_length=3, scale=False)
    stage = cfg.prepare(study.trials)
    z = stage.targets_from_values(study.direction)
    # the same oriented targets for both directions: f minus the penalty
    gbar = (-0.5 + 0.6 + 0.0) / 3  # the first epoch's mean; the 4th trial is in the partial epoch
    kappa = math.exp(max(gbar, 0.0))
    expected = f - kappa * np.array([0.0, math.exp(0.6) - 1, 0.0, math.e - 1])
    np.testing.assert_allclose(z, expected, rtol=1e-12)
    np.testing.assert_allclose(stage.targets(f), expected, rtol=1e-12)
    # in objective units: a penalty raises a minimised value and lowers a maximised one
    penalised_value = sign * z
    assert np.all((penalised_value - sign * f) * sign <= 0)
    assert (penalised_value[3] > sign * f[3]) == (direction == "minimize")


def test_stage_unpacks_and_state_serialises():
    trials = _trials([[0.2, -0.1], [0.4, -0.3], [0.3, -0.2], [1.0, 1.0]])
    stage = LongTermConstraints("noiseless", epoch_length=3, scale=False, psi="poly", psi_n=3).prepare(trials)
    gp_trials, transform, state = stage
    assert [t.number for t in gp_trials] == [0, 1, 2, 3]
    assert state.kappa == pytest.approx(((1.3) ** 3, 1.0))
    y = np.arange(4.0)
    np.testing.assert_allclose(transform(y), y - stage.penalties())
    np.testing.assert_allclose(stage.penalties()[3], 1.3**3 * (2**3 - 1) + 1.0 * (2**3 - 1))
    record = json.loads(json.dumps(state.to_json(), allow_nan=False))
    assert record["epoch"] == 1 and record["position"] == 1 and record["gbar"] == pytest.approx([0.3, -0.2])
    assert record["kappa"] == pytest.approx([1.3**3, 1.0]) and record["variant"] == "noiseless"
    with pytest.raises(ValueError):
        stage.targets(np.zeros(3))
    with pytest.raises(ValueError):
        stage.targets([0.0, np.nan, 0.0, 0.0])


def test_kappa_init_per_constraint():
    trials = _trials([[0.3, 0.3]] * 3)
    stage = LongTermConstraints("noiseless", epoch_length=3, scale=False, kappa_init=[2.0, 0.5]).prepare(trials)
    assert stage.state.kappa == pytest.approx((2.0 * math.exp(0.3), 0.5 * math.exp(0.3)))
    with pytest.raises(ValueError, match="one value per constraint"):
        LongTermConstraints("noiseless", epoch_length=3, scale=False, kappa_init=[1.0, 1.0, 1.0]).prepare(trials)


@pytest.mark.parametrize("kwargs", [
    {"variant": "hard"},
    {"epoch_length": 0}, {"epoch_length": 2.5}, {"epoch_length": "sqrt"}, {"epoch_length": "log"},
    {"n_trials_hint": 0},
    {"kappa_init": 0.0}, {"kappa_init": -1.0}, {"kappa_init": float("nan")}, {"kappa_init": [1.0, 0.0]},
    {"variant": "noisy", "kappa_init": -0.1}, {"variant": "noisy", "kappa_init": float("inf")},
    {"kappa_step": 0.5},  # noiseless has no step
    {"variant": "noisy", "psi": "exp"},  # noisy has no psi
    {"variant": "noisy", "kappa_step": 0.0}, {"variant": "noisy", "kappa_step": "fast"},
    {"variant": "noisy", "kappa_step0": -1.0},
    {"psi": "exp", "psi_c": 0.0}, {"psi": "poly", "psi_n": 0.9},
    {"max_log_kappa": 0.0}, {"max_log_kappa": 1000.0}, {"max_log_penalty": float("inf")},
    {"history": "last"}, {"on_missing": "warn"}, {"names": [1, 2]}, {"names": ["a", "a"]},
    {"include_pruned": "yes"}, {"epoch_order": "start"},
])
def test_config_rejects_bad_parameters(kwargs):
    with pytest.raises(ValueError):
        LongTermConstraints(**kwargs)


def test_config_sqrt_epoch_length_and_defaults():
    assert LongTermConstraints(epoch_length="sqrt", n_trials_hint=100).epoch_length == 10
    assert LongTermConstraints(epoch_length="sqrt", n_trials_hint=2).epoch_length == 1
    noisy = LongTermConstraints("noisy")
    assert noisy.kappa_init == 0.0 and noisy.kappa_step == 0.5 and noisy.psi is None
    noiseless = LongTermConstraints()
    assert noiseless.kappa_init == 1.0 and noiseless.psi == Psi("exp", 1.0) and noiseless.epoch_length == 20


def test_unit_scales_values_and_no_warning_without_rows():
    """Mean |g| per column (1 where it is 0 or not finite); a G without rows (no counted trial
    yet) gives 1 for every column and no 'Mean of empty slice' warning."""
    import warnings

    from optuna_gpbandit.constraints.stage import unit_scales

    G = np.array([[1.0, 0.0, -2.0], [-3.0, 0.0, 4.0]])
    assert np.allclose(unit_scales(G), [2.0, 1.0, 3.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.array_equal(unit_scales(np.empty((0, 2))), [1.0, 1.0])
