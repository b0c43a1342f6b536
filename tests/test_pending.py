"""Pending trials: censoring (Verma et al. 2022), hallucination and the shared bookkeeping."""

import datetime
import json
import math

import numpy as np
import optuna
import pytest
from optuna.distributions import FloatDistribution
from optuna.trial import FrozenTrial, TrialState

from optuna_gpbandit import (AcquisitionSearch, Censoring, GPModel, GPTSSampler, GPUCBSampler,
                             Hallucinate, IGPUCBSampler, IgnorePending)
from optuna_gpbandit import _history
from optuna_gpbandit._history import trial_delay
from optuna_gpbandit.pending import PENDING_SPREAD
from optuna_gpbandit._history import collect_history
from optuna_gpbandit._observations import build_observations
from optuna_gpbandit._space import EncodedSpace
from optuna_gpbandit._storage import FINISH, PARAMS, STATE, read_trial_json
from optuna_gpbandit.gp.posterior import GPParams, GPPosterior

from conftest import ALL_SAMPLERS

SPACE = {"x": FloatDistribution(0.0, 1.0), "y": FloatDistribution(0.0, 1.0)}


def _f(x, y):
    return (x - 0.3) ** 2 + (y - 0.6) ** 2


def _suggest(trial):
    return trial.suggest_float("x", 0.0, 1.0), trial.suggest_float("y", 0.0, 1.0)


def _study(sampler, n_told=10):
    study = optuna.create_study(sampler=sampler)
    for _ in range(n_told):
        t = study.ask()
        study.tell(t, _f(*_suggest(t)))
    return study


def _ask_many(study, q):
    trials = [study.ask() for _ in range(q)]
    return trials, np.array([_suggest(t) for t in trials])


def _min_pair_distance(P):
    D = np.sqrt(((P[:, None, :] - P[None, :, :]) ** 2).sum(-1))
    np.fill_diagonal(D, np.inf)
    return float(D.min())


def _state(trial):
    return read_trial_json(trial, STATE)


def _frozen(number, state, params, value=None, start=None, complete=None, attrs=None):
    now = datetime.datetime(2026, 1, 1)
    return FrozenTrial(
        number=number, state=state, value=value,
        datetime_start=start if start is not None else now,
        datetime_complete=complete if state.is_finished() else None,
        params=params, distributions={k: SPACE[k] for k in params},
        user_attrs={}, system_attrs=attrs or {}, intermediate_values={}, trial_id=number,
    )


def _history_of(trials, current):
    completed = [t for t in trials if t.state == TrialState.COMPLETE]
    pending = [
        _history.PendingTrial(t, t.params, 0.0)
        for t in trials
        if t.state in (TrialState.RUNNING, TrialState.WAITING)
    ]
    return _history.History(current, completed, pending, 0, trials + [current])


# ------------------------------------------------------------------ label table (spec 8.1, 8.9)
def test_design_rows_follow_the_label_table():
    p = {"x": 0.1, "y": 0.2}
    fin = lambda n: {f"{FINISH}:0": str(n)}  # noqa: E731
    trials = [
        _frozen(0, TrialState.COMPLETE, p, 1.0, attrs=fin(1)),  # delay 0
        _frozen(1, TrialState.COMPLETE, p, 1.0, attrs=fin(6)),  # delay 4 > m=3: late
        _frozen(2, TrialState.RUNNING, p),  # age 10 - 2 = 8 > 3: stale
        _frozen(7, TrialState.RUNNING, p),  # age 3 <= 3: pending, in the window
        _frozen(9, TrialState.WAITING, p),  # enqueued: age 0
    ]
    current = _frozen(10, TrialState.RUNNING, {})
    history = _history_of(trials, current)
    design = Censoring(window=3, discard_late=True).rows(history)
    assert [t.number for t in design.observed] == [0]
    assert [(r.number, r.status, r.in_window) for r in design.rows] == [
        (1, "late", False), (2, "stale", False), (7, "pending", True), (9, "pending", True),
    ]
    kept = Censoring(window=3).rows(history)  # default: late results used
    assert [t.number for t in kept.observed] == [0, 1]
    assert kept.counts() == {"observed": 2, "late": 0, "pending": 2, "stale": 1, "dead": 0,
                             "unresolved": 0}
    assert design.counts()["late"] == 1
    window = Censoring.paper(window=3).rows(history)
    assert [r.in_window for r in window.rows] == [False, False, True, True]
    none = Censoring(window=3, pending_term="none").rows(history)
    assert not any(r.in_window for r in none.rows)
    ignore = IgnorePending().rows(history)
    assert [t.number for t in ignore.observed] == [0, 1] and ignore.rows == []
    hall = Hallucinate().rows(history)
    assert [t.number for t in hall.observed] == [0, 1]
    assert [r.status for r in hall.rows] == ["pending"] * 3
    assert not any(r.in_window for r in hall.rows)


def test_window_term_counts_recent_completed_trials():
    p = {"x": 0.1, "y": 0.2}
    trials = [_frozen(n, TrialState.COMPLETE, p, 1.0) for n in range(8)]
    design = Censoring(window=3, pending_term="window").rows(
        _history_of(trials, _frozen(8, TrialState.RUNNING, {})),
    )
    assert design.observed_in_window == [False] * 5 + [True] * 3


def test_seconds_mode_uses_durations_and_ages():
    t0 = datetime.datetime(2026, 1, 1, 12, 0, 0)
    s = datetime.timedelta(seconds=1)
    p = {"x": 0.1, "y": 0.2}
    trials = [
        _frozen(0, TrialState.COMPLETE, p, 1.0, start=t0, complete=t0 + 5 * s),  # 5 s <= 10
        _frozen(1, TrialState.COMPLETE, p, 1.0, start=t0, complete=t0 + 20 * s),  # late
        _frozen(2, TrialState.RUNNING, p, start=t0),  # 30 s old: stale
        _frozen(3, TrialState.RUNNING, p, start=t0 + 25 * s),  # 5 s old
    ]
    current = _frozen(4, TrialState.RUNNING, {}, start=t0 + 30 * s)
    design = Censoring(window=10, window_unit="seconds", discard_late=True).rows(
        _history_of(trials, current),
    )
    assert [t.number for t in design.observed] == [0]
    assert [(r.number, r.status, r.in_window) for r in design.rows] == [
        (1, "late", False), (2, "stale", False), (3, "pending", True),
    ]


# ------------------------------------------------------------------ delays (spec 8.10, 8.11)
def test_sequential_runs_have_delay_zero():
    study = optuna.create_study(
        sampler=GPUCBSampler(seed=0, search=AcquisitionSearch(n_candidates=64),
                             pending=Censoring.paper())
    )
    study.optimize(lambda t: _f(*_suggest(t)), n_trials=8)
    trials = study.get_trials()
    assert all(read_trial_json(t, FINISH) == t.number + 1 for t in trials)
    assert all(trial_delay(t, trials, "trials") == 0 for t in trials)


def test_ask_k_then_tell_in_order_gives_first_delay_k_minus_1_and_batch_is_never_late():
    k = 4
    study = optuna.create_study(sampler=GPUCBSampler(seed=0, pending=Censoring.paper(k - 1)))
    for _ in range(3):
        trials, P = _ask_many(study, k)
        for t, (x, y) in zip(trials, P):
            study.tell(t, _f(x, y))
    frozen = study.get_trials()
    assert [trial_delay(t, frozen, "trials") for t in frozen[:k]] == [3.0, 2.0, 1.0, 0.0]
    current = study.ask()
    history = collect_history(study, SPACE, study.get_trials()[-1])
    design = Censoring.paper(k - 1).rows(history)
    assert len(design.observed) == 3 * k and design.rows == []
    late = Censoring.paper(k - 2).rows(history)
    assert sum(r.status == "late" for r in late.rows) == 3
    kept = Censoring(window=k - 2).rows(history)  # the default keeps them
    assert len(kept.observed) == 3 * k and kept.rows == []
    study.tell(current, 0.0)


def test_delay_fallback_from_datetimes_for_trials_told_elsewhere():
    t0 = datetime.datetime(2026, 1, 1)
    s = datetime.timedelta(seconds=1)
    p = {"x": 0.1, "y": 0.2}
    first = _frozen(0, TrialState.COMPLETE, p, 1.0, start=t0, complete=t0 + 10 * s)
    others = [_frozen(n, TrialState.COMPLETE, p, 1.0, start=t0 + n * 3 * s, complete=t0 + 99 * s)
              for n in (1, 2, 3, 4)]  # started at 3, 6, 9, 12 s
    assert trial_delay(first, [first] + others, "trials") == 3.0
    assert trial_delay(first, [first] + others, "seconds") == 10.0


# ------------------------------------------------------------------ posterior (spec 8.2-8.5)
def _obs_and_posteriors(hallucinate=False, lower_bound=None):
    study = _study(GPUCBSampler(seed=1, pending=IgnorePending()), n_told=8)
    for x, y in ((0.5, 0.5), (0.31, 0.58), (0.9, 0.1)):  # the first becomes the current trial
        study.enqueue_trial({"x": x, "y": y})
    current = study.ask()
    history = collect_history(study, SPACE, study.get_trials()[current.number])
    space = EncodedSpace(SPACE)
    rule = Hallucinate() if hallucinate else Censoring(lower_bound=lower_bound)
    assert not (hallucinate and lower_bound is not None)
    design = rule.rows(history)  # the design carries the rule (its labels, lower_bound)
    obs = build_observations(history.completed, space, study.direction,
                             GPModel(output_warping=False), design=design)
    params = GPParams("matern52", np.array([0.3, 0.3]), 1.0, 0.05)
    seen = obs.observed
    post_c = GPPosterior(obs.X[seen], obs.y[seen], params, space.is_categorical)
    return study, current, space, obs, params, post_c


def test_censored_rows_get_the_worst_observed_label_or_the_lower_bound():
    _, _, _, obs, _, _ = _obs_and_posteriors()
    assert obs.n_observed == 8 and obs.n == 10
    assert np.all(obs.y[~obs.observed] == obs.y[obs.observed].min())
    assert obs.in_window.tolist() == [False] * 8 + [True, True]
    # minimise: the known worst value is the largest; 5.0 is far worse than any observed value
    _, _, _, obs_lb, _, _ = _obs_and_posteriors(lower_bound=5.0)
    expected = (-5.0 - obs_lb.shift) / obs_lb.scale
    assert np.allclose(obs_lb.y[~obs_lb.observed], expected)
    assert expected < obs_lb.y[obs_lb.observed].min()
    # a "bound" better than observed values does not lift the label above the worst observed
    _, _, _, obs_hi, _, _ = _obs_and_posteriors(lower_bound=-1.0)
    assert np.all(obs_hi.y[~obs_hi.observed] == obs_hi.y[obs_hi.observed].min())


def test_censoring_variance_ignores_labels_and_shrinks_at_pending_points():
    _, _, space, obs, params, post_c = _obs_and_posteriors()
    post = GPPosterior(obs.X, obs.y, params, space.is_categorical)
    other = GPPosterior(obs.X, np.random.default_rng(0).normal(size=obs.n), params,
                        space.is_categorical)
    test = np.random.default_rng(1).uniform(size=(50, 2))
    assert np.allclose(post.mean_var(test)[1], other.mean_var(test)[1], atol=1e-10)
    Xp = obs.X[~obs.observed]
    var_c, var = post_c.mean_var(Xp)[1], post.mean_var(Xp)[1]
    assert np.all(var < var_c)
    assert np.all(var <= params.scale * params.noise_var / (params.scale + params.noise_var) + 1e-12)


def test_one_pending_point_closed_form():
    """mu_SDF(x_p) = mu_c + s2_c / (s2_c + lam) * (label - mu_c) (spec 2.4 with label c)."""
    _, _, space, obs, params, post_c = _obs_and_posteriors()
    keep = np.r_[np.flatnonzero(obs.observed), np.flatnonzero(~obs.observed)[0]]
    X, y = obs.X[keep], obs.y[keep]
    post = GPPosterior(X, y, params, space.is_categorical)
    xp = X[-1:]
    mu_c, var_c = post_c.mean_var(xp)
    expected = mu_c + var_c / (var_c + params.noise_var) * (y[-1] - mu_c)
    assert np.allclose(post.mean_var(xp)[0], expected, atol=1e-10)
    assert post.mean_var(xp)[0][0] < mu_c[0]


def test_hallucination_keeps_the_completed_mean_and_the_censored_variance():
    from optuna_gpbandit._fitted_gp import _posterior

    _, _, space, obs, params, post_c = _obs_and_posteriors(hallucinate=True)
    assert isinstance(obs.pending_rule, Hallucinate)
    post = _posterior(obs, params, space)
    _, _, _, obs_cens, _, _ = _obs_and_posteriors()
    post_cens = GPPosterior(obs_cens.X, obs_cens.y, params, space.is_categorical)
    test = np.random.default_rng(2).uniform(size=(50, 2))
    assert np.allclose(post.mean_var(test)[0], post_c.mean_var(test)[0], atol=1e-8)
    assert np.allclose(post.mean_var(test)[1], post_cens.mean_var(test)[1], atol=1e-10)


# ------------------------------------------------------------------ samplers (spec 8.6-8.8)
@pytest.mark.parametrize("sampler_cls", ALL_SAMPLERS)
def test_without_pending_trials_censoring_equals_the_plain_sampler(sampler_cls):
    runs = []
    for pending in (Censoring(), IgnorePending(), Hallucinate()):
        study = optuna.create_study(sampler=sampler_cls(
            seed=3, pending=pending, search=AcquisitionSearch(n_candidates=128)))
        study.optimize(lambda t: _f(*_suggest(t)), n_trials=12)
        runs.append([t.params for t in study.trials])
    assert runs[0] == runs[1] == runs[2]


@pytest.mark.parametrize("sampler_cls", ALL_SAMPLERS)
def test_asks_without_tells_give_distinct_points_unless_ignored(sampler_cls):
    default = _study(sampler_cls(seed=0), n_told=12)  # hallucinate, points kept apart
    _, P = _ask_many(default, 5)
    assert _min_pair_distance(P) >= PENDING_SPREAD
    censored = _study(sampler_cls(seed=0, pending=Censoring()), n_told=12)
    _, P = _ask_many(censored, 5)
    assert _min_pair_distance(P) > 0.05
    if sampler_cls is not GPTSSampler:  # a UCB maximiser repeats its point
        ignored = _study(sampler_cls(seed=0, pending=IgnorePending()), n_told=12)
        _, Q = _ask_many(ignored, 3)
        assert _min_pair_distance(Q) < 1e-3


@pytest.mark.parametrize("sampler_cls", [GPUCBSampler, IGPUCBSampler, GPTSSampler])
def test_nu_is_the_width_plus_b_y_times_pending_sigmas(sampler_cls):
    study = _study(sampler_cls(seed=0, model=GPModel(noise_var=0.05),
                               pending=Censoring(width=2.0)), n_told=8)
    trials, _ = _ask_many(study, 3)
    frozen = {t.number: t for t in study.get_trials()}
    first, last = _state(frozen[trials[0].number]), _state(frozen[trials[-1].number])
    assert first["width_bonus"] == 0.0 and first["n_censored"] == 0
    assert last["n_censored"] == 2
    base = math.sqrt(last["beta"]) if sampler_cls is GPUCBSampler else last.get("beta", last.get("v"))
    assert last["nu"] == pytest.approx(base + last["width_bonus"])
    # recompute the sum of sigmas at the two pending points from the stored hyperparameters
    history = collect_history(study, SPACE, frozen[trials[-1].number])
    history = _history.History(  # as seen then: the last trial's own point was not yet there
        history.current, history.completed, history.pending, 0, history.all_trials)
    space = EncodedSpace(SPACE)
    design = Censoring(width=2.0).rows(history)
    obs = build_observations(history.completed, space, study.direction,
                             GPModel(output_warping=False), design=design)
    post = GPPosterior(obs.X, obs.y, GPParams.from_json(last["gp"]), space.is_categorical)
    sd = np.sqrt(post.mean_var(obs.X[obs.in_window])[1])
    assert last["width_bonus"] == pytest.approx(2.0 * sd.sum(), rel=1e-9)
    assert last["width_bonus"] > 0


def test_pending_point_is_avoided_and_its_variance_recorded():
    study = _study(GPUCBSampler(seed=0), n_told=10)
    (t1, t2), P = _ask_many(study, 2)
    assert np.max(np.abs(P[0] - P[1])) >= PENDING_SPREAD  # the documented distance
    assert _state(study.get_trials()[t2.number])["n_censored"] == 1


def test_stale_running_trial_leaves_the_window():
    sampler = GPUCBSampler(seed=0, model=GPModel(noise_var=0.05), pending=Censoring(window=3))
    study = _study(sampler, n_told=8)
    zombie, _ = _ask_many(study, 1)  # never told: a crashed worker
    for _ in range(3):
        t = study.ask()
        study.tell(t, _f(*_suggest(t)))
    t = study.ask()
    _suggest(t)
    record = _state(study.get_trials()[t.number])
    assert record["n_censored"] == 1 and record["width_bonus"] == 0.0  # age 4 > 3
    study.tell(t, 0.0)
    sampler2 = GPUCBSampler(seed=0, model=GPModel(noise_var=0.05), pending=Censoring(window=10))
    study.sampler = sampler2
    t = study.ask()
    _suggest(t)
    assert _state(study.get_trials()[t.number])["width_bonus"] > 0.0  # age 5 <= 10


def test_incomplete_running_trials_are_counted_not_used():
    study = _study(GPUCBSampler(seed=0), n_told=6)
    other = study.ask()  # created, nothing suggested, no point stored yet
    current = study.ask()
    history = collect_history(study, SPACE, study.get_trials()[current.number])
    assert history.n_unresolved == 1 and history.pending == []
    assert all(p.trial.number != current.number for p in history.pending)
    other.suggest_float("x", 0.0, 1.0)  # half its params: still resolved from the stored sample
    history = collect_history(study, SPACE, study.get_trials()[current.number])
    assert [p.trial.number for p in history.pending] == [other.number]
    assert history.pending[0].params["x"] == study.get_trials()[other.number].params["x"]


def test_concurrent_worker_storing_the_same_point_first_makes_us_choose_again(monkeypatch):
    """Simulate the race: another trial, unresolved at our read, stores our point before us."""
    study = _study(GPUCBSampler(seed=0), n_told=10)
    rival = study.ask()
    real_write = _history.write_sampled_params
    calls = []

    def racing_write(study_, trial, params, search_space, rewrite=False):
        stamp = real_write(study_, trial, params, search_space, rewrite=rewrite)
        if not calls:  # the rival stored the very same point a moment before us
            rival_id = study_.get_trials(deepcopy=False)[rival.number]._trial_id
            study_._storage.set_trial_system_attr(
                rival_id, "gpbandit:params:0", json.dumps({"params": params}))
            study_._storage.set_trial_system_attr(rival_id, "gpbandit:stamp", stamp - 1.0)
        calls.append(params)
        return stamp

    monkeypatch.setattr("optuna_gpbandit.samplers._base.write_sampled_params", racing_write)
    t = study.ask()
    x = _suggest(t)
    assert len(calls) == 2 and _state(study.get_trials()[t.number])["rounds"] == 2
    rival_params = study.get_trials()[rival.number]
    assert np.linalg.norm(np.array(x) - np.array([calls[0]["x"], calls[0]["y"]])) > 1e-3
    # the rival's (simulated) point was used as pending in the second round
    assert _state(study.get_trials()[t.number])["n_censored"] == 1
    assert rival_params.state == TrialState.RUNNING


def test_same_seed_and_same_ask_tell_sequence_reproduce():
    def run():
        study = _study(GPTSSampler(seed=5), n_told=8)
        trials, P = _ask_many(study, 3)
        study.tell(trials[1], 0.5)
        _, Q = _ask_many(study, 2)
        return np.vstack([P, Q])

    assert np.array_equal(run(), run())


def test_workers_sharing_a_seed_get_distinct_first_points():
    study = optuna.create_study()
    a, b = GPUCBSampler(seed=7), GPUCBSampler(seed=7)  # two processes, same seed
    t0, t1 = study.ask(), study.ask()
    v0 = a.sample_independent(study, t0, "x", SPACE["x"])
    v1 = b.sample_independent(study, t1, "x", SPACE["x"])
    assert v0 != v1
    assert v0 == GPUCBSampler(seed=7).sample_independent(study, t0, "x", SPACE["x"])


def test_sampled_params_are_stored_for_other_workers():
    study = _study(GPUCBSampler(seed=0), n_told=6)
    t = study.ask()
    x, y = _suggest(t)
    frozen = study.get_trials()[t.number]
    assert read_trial_json(frozen, PARAMS)["params"] == {"x": x, "y": y}
    assert frozen.system_attrs["gpbandit:stamp"] > 0


def test_bad_pending_arguments():
    # pending= takes a rule object; a name (the old spelling, or an unknown one) is refused
    for bad in ("fantasize", "censor", Censoring):
        with pytest.raises(ValueError, match=r"pending must be Hallucinate\(\), Censoring"):
            GPUCBSampler(pending=bad)
    with pytest.raises(ValueError, match="window_unit"):
        Censoring(window_unit="hours")
    with pytest.raises(ValueError, match="integer"):
        Censoring(window=2.5)
    with pytest.raises(ValueError, match="window must be"):
        Censoring(window=-1)
    with pytest.raises(ValueError, match="width"):
        Censoring(width=float("nan"))
    with pytest.raises(ValueError, match="pending_term"):
        Censoring(pending_term="all")
    with pytest.raises(ValueError, match="lower_bound"):
        Censoring(lower_bound=float("inf"))
    Censoring(window=2.5, window_unit="seconds")  # fractional seconds are fine
