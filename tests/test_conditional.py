"""Conditional (define-by-run) search spaces: union space, branches, selectors, sampling."""

from __future__ import annotations

import logging
import math

import numpy as np
import optuna
import pytest
from optuna.distributions import (CategoricalDistribution, FloatDistribution,
                                  IntDistribution)
from optuna.trial import TrialState, create_trial

from optuna_gpbandit import (ConstrainedGPUCBSampler, GPTSSampler, GPUCBCPDSampler,
                             GPUCBSampler, IGPUCBSampler)
from optuna_gpbandit._conditional import (INACTIVE_NUMERIC, ConditionalSpace, encoded_space,
                                          union_search_space)
from optuna_gpbandit._space import EncodedSpace

CLF = CategoricalDistribution(["svc", "rf", "knn"])
C = FloatDistribution(1e-3, 1e3, log=True)
DEPTH = IntDistribution(1, 10)
K = IntDistribution(1, 30)
LR = FloatDistribution(1e-4, 1.0, log=True)


def _trial(params: dict, dists: dict, value: float = 0.0):
    return create_trial(params=params, distributions={n: dists[n] for n in params},
                        value=value)


def _pipeline_trials(rng: np.random.Generator, n: int = 12):
    """Trials of a pipeline: svc (C), rf (depth), knn (k), all with a shared lr."""
    dists = {"clf": CLF, "C": C, "depth": DEPTH, "k": K, "lr": LR}
    out = []
    for i in range(n):
        clf = ["svc", "rf", "knn"][i % 3]
        p = {"clf": clf, "lr": float(10 ** rng.uniform(-4, 0))}
        if clf == "svc":
            p["C"] = float(10 ** rng.uniform(-3, 3))
        elif clf == "rf":
            p["depth"] = int(rng.integers(1, 11))
        else:
            p["k"] = int(rng.integers(1, 31))
        out.append(_trial(p, dists, float(i)))
    return out


def test_union_search_space_drops_conflicts_and_single_values():
    a = _trial({"x": 0.5, "c": "svc"}, {"x": FloatDistribution(0, 1), "c": CLF})
    b = _trial({"x": 0.5, "y": 3, "s": 1},
               {"x": FloatDistribution(0, 2), "y": DEPTH, "s": IntDistribution(1, 1)})
    space = union_search_space([a, b])
    assert list(space) == ["c", "y"]  # x changed its range; s is single-valued; sorted


def test_union_equals_intersection_without_branches():
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    study.optimize(lambda t: t.suggest_float("b", 0, 1) + t.suggest_int("a", 1, 5)
                   + len(t.suggest_categorical("c", ["x", "yy"])), n_trials=6)
    trials = study.get_trials(states=(TrialState.COMPLETE,))
    inter = optuna.search_space.intersection_search_space(trials)
    assert union_search_space(trials) == inter and list(union_search_space(trials)) == ["a", "b", "c"]
    assert type(encoded_space(inter, trials)) is EncodedSpace


def test_branches_and_selectors_of_a_pipeline():
    trials = _pipeline_trials(np.random.default_rng(0))
    space = encoded_space(union_search_space(trials), trials)
    assert isinstance(space, ConditionalSpace)
    names = {b.names for b in space.branches}
    assert names == {frozenset({"clf", "lr", "C"}), frozenset({"clf", "lr", "depth"}),
                     frozenset({"clf", "lr", "k"})}
    i_clf = space.names.index("clf")
    for b in space.branches:
        assert list(b.allowed) == [i_clf]  # depth and k are in one branch each: no selectors
        (choice,) = {n for n in ("C", "depth", "k") if n in b.names}
        want = {"C": "svc", "depth": "rf", "k": "knn"}[choice]
        assert b.allowed[i_clf].tolist() == [float(CLF.to_internal_repr(want))]


def test_nested_selectors_and_an_unseen_choice_stays_open():
    clf = CategoricalDistribution(["svc", "rf", "knn", "lr"])  # knn and lr never tried
    kern = CategoricalDistribution(["rbf", "linear"])
    dists = {"clf": clf, "kernel": kern, "gamma": C, "depth": DEPTH}
    trials = [_trial({"clf": "svc", "kernel": "rbf", "gamma": 1.0}, dists),
              _trial({"clf": "svc", "kernel": "linear"}, dists),
              _trial({"clf": "rf", "depth": 3}, dists),
              _trial({"clf": "svc", "kernel": "rbf", "gamma": 0.1}, dists)]
    space = encoded_space(union_search_space(trials), trials)
    by_names = {b.names: b for b in space.branches}
    rbf = by_names[frozenset({"clf", "kernel", "gamma"})]
    i_clf, i_kern = space.names.index("clf"), space.names.index("kernel")
    assert rbf.allowed[i_kern].tolist() == [0.0]  # rbf only
    assert rbf.allowed[i_clf].tolist() == [0.0, 2.0, 3.0]  # svc, or an untried choice
    rf = by_names[frozenset({"clf", "depth"})]
    assert rf.allowed[i_clf].tolist() == [1.0, 2.0, 3.0]


def test_a_shared_parameter_with_overlapping_values_is_no_selector():
    dists = {"clf": CLF, "depth": DEPTH}
    trials = [_trial({"clf": c, "depth": d}, dists)
              for c, d in [("rf", 3), ("rf", 5), ("knn", 3), ("knn", 7), ("svc", 1)]]
    trials.append(_trial({"clf": "svc"}, dists))  # svc has no depth in this trial
    space = encoded_space(union_search_space(trials), trials)
    i_depth = space.names.index("depth")
    assert all(i_depth not in b.allowed for b in space.branches)


def test_encode_decode_and_points_stay_in_their_branch():
    trials = _pipeline_trials(np.random.default_rng(1))
    space = encoded_space(union_search_space(trials), trials)
    x = space.encode({"clf": "rf", "lr": 0.01, "depth": 4})
    i = {n: space.names.index(n) for n in space.names}
    assert x[i["C"]] == INACTIVE_NUMERIC and x[i["k"]] == INACTIVE_NUMERIC
    assert space.decode(x) == {"clf": "rf", "lr": pytest.approx(0.01), "depth": 4}
    X = space.sobol(300, seed=0)
    actives = {tuple(b.active) for b in space.branches}
    for row in X:
        assert tuple(row > -0.25) in actives
        p = space.decode(row)
        assert {"svc": "C", "rf": "depth", "knn": "k"}[p["clf"]] in p
    # each branch gets a share of the candidates
    counts = np.bincount(space.branch_of(X), minlength=3)
    assert counts.min() > 60
    # snapping keeps the branch and the inactive codes; a local search moves only its columns
    noisy = X + np.random.default_rng(2).normal(0, 0.05, X.shape) * ~space.is_categorical
    S = space.snap(noisy)
    assert np.array_equal(space.branch_of(S), space.branch_of(X))
    assert np.all((S == space.inactive) | (S > -0.25))
    free = space.movable(X[0])
    assert not free[i["clf"]] and free[i["lr"]]
    assert free.sum() == 2  # lr and the branch's own parameter


def test_a_fully_discrete_conditional_space_is_enumerated_by_branch():
    dists = {"clf": CLF, "depth": IntDistribution(1, 4), "k": IntDistribution(1, 3)}
    trials = [_trial({"clf": "rf", "depth": 2}, dists), _trial({"clf": "knn", "k": 1}, dists)]
    space = encoded_space(union_search_space(trials), trials)
    # rf x 4 depths + knn x 3 ks + svc (untried: allowed in either branch) x (4 + 3)
    assert space.cardinality == 14
    P = space.enumerate(100)
    assert P.shape == (14, 3) and len({tuple(r) for r in P}) == 14
    assert space.enumerate(10) is None


def _branching(trial: optuna.Trial) -> float:
    b = trial.suggest_categorical("branch", ["a", "b", "c"])
    lr = trial.suggest_float("lr", 1e-4, 1e-1, log=True)
    shared = 0.05 * (math.log10(lr) + 2.5) ** 2
    if b == "a":
        x, y = trial.suggest_float("a_x", 0, 1), trial.suggest_float("a_y", 0, 1)
        return -0.5 + (x - 0.3) ** 2 + (y - 0.7) ** 2 + shared
    if b == "b":
        x = trial.suggest_float("b_x", -2, 2)
        n = trial.suggest_int("b_n", 1, 10)
        return -1.0 + 0.3 * (x - 1.1) ** 2 + 0.02 * (n - 7) ** 2 + shared
    return -0.3 + (trial.suggest_float("c_x", 0, 1) - 0.5) ** 2 + shared


@pytest.mark.parametrize("sampler_cls", [GPUCBSampler, IGPUCBSampler, GPTSSampler])
def test_branch_parameters_come_from_the_model(sampler_cls, caplog):
    study = optuna.create_study(sampler=sampler_cls(seed=0, n_startup_trials=6))
    for t in [{"branch": "a", "lr": 0.01, "a_x": 0.9, "a_y": 0.1},
              {"branch": "b", "lr": 0.01, "b_x": -1.5, "b_n": 2},
              {"branch": "c", "lr": 0.01, "c_x": 0.9}]:
        study.enqueue_trial(t)
    with caplog.at_level(logging.WARNING, logger="optuna_gpbandit"):
        study.optimize(_branching, n_trials=30)
    assert not [r for r in caplog.records if "outside the relative search space" in r.message]
    later = study.trials[10:]
    # every later trial's own parameters were the relative sample's
    for t in later:
        stored = t.system_attrs
        assert any(k.startswith("gpbandit:params") for k in stored)
    assert study.best_value < -0.9  # random search's median best over 30 trials: about -0.84


def test_branch_model_beats_random_search():
    """Over 3 seeds, GP-UCB's best after 40 trials beats every random-search run's best."""
    ours, rand = [], []
    for seed in range(3):
        for sampler, out in ((GPUCBSampler(seed=seed), ours),
                             (optuna.samplers.RandomSampler(seed=seed), rand)):
            study = optuna.create_study(sampler=sampler)
            study.optimize(_branching, n_trials=40)
            out.append(study.best_value)
    assert np.median(ours) < min(rand)


@pytest.mark.parametrize("case", ["constraints", "failures", "pending", "multi", "cpd", "storage"])
def test_conditional_spaces_compose(case, tmp_path):
    """Each stage with a branching objective: runs, and branch parameters are modelled."""
    kw = dict(seed=1, n_startup_trials=5, warn_independent_sampling=True)
    directions = ["minimize"]
    storage = None
    objective = _branching
    if case == "constraints":
        sampler = ConstrainedGPUCBSampler(
            constraints_func=lambda t: [t.params["lr"] - 0.05], **kw)
    elif case == "cpd":
        from optuna_gpbandit import ChangeDetection
        sampler = GPUCBCPDSampler(reset=ChangeDetection(), **kw)
    else:
        sampler = GPUCBSampler(**kw)
    if case == "failures":
        def objective(trial):
            v = _branching(trial)
            if trial.params.get("branch") == "c" and trial.params.get("c_x", 0) > 0.7:
                raise ValueError("diverged")
            return v
    if case == "multi":
        directions = ["minimize", "minimize"]

        def objective(trial):
            return _branching(trial), trial.params["lr"]
    if case == "storage":
        storage = f"sqlite:///{tmp_path / 's.db'}"
    study = optuna.create_study(sampler=sampler, directions=directions, storage=storage,
                                study_name="s")
    study.optimize(objective, n_trials=12, catch=(ValueError,))
    if case == "pending":  # other workers' trials still running, in two branches
        for params in ({"branch": "b", "lr": 0.01, "b_x": 1.0, "b_n": 7},
                       {"branch": "a", "lr": 0.01, "a_x": 0.3, "a_y": 0.7}):
            t = study.ask()
            for name, value in params.items():
                dist = {"branch": CategoricalDistribution(["a", "b", "c"]),
                        "lr": FloatDistribution(1e-4, 1e-1, log=True),
                        "a_x": FloatDistribution(0, 1), "a_y": FloatDistribution(0, 1),
                        "b_x": FloatDistribution(-2, 2), "b_n": IntDistribution(1, 10)}[name]
                t._cached_frozen_trial.params[name] = value
                study._storage.set_trial_param(t._trial_id, name, dist.to_internal_repr(value),
                                               dist)
    if case == "storage":  # resumed by a new sampler object in a new study handle
        study = optuna.load_study(study_name="s", storage=storage,
                                  sampler=GPUCBSampler(**kw))
    study.optimize(objective, n_trials=8, catch=(ValueError,))
    done = [t for t in study.trials if t.state == TrialState.COMPLETE]
    assert len(done) >= 12
    last = study.trials[-1]
    own = {"a": ("a_x", "a_y"), "b": ("b_x", "b_n"), "c": ("c_x",)}[last.params["branch"]]
    assert all(n in last.params for n in own)
    assert last.system_attrs.get("gpbandit:state:0") or last.system_attrs.get("gpbandit:state")


def test_a_rarely_tried_branch_gets_space_filling_points_first():
    from optuna_gpbandit._startup import BRANCH_STARTUP, branch_startup_point
    from optuna_gpbandit._history import History
    rng = np.random.default_rng(3)
    trials = _pipeline_trials(rng, 9)  # 3 per branch
    svc = [t for t in trials if t.params["clf"] == "svc"]
    trials = [t for t in trials if t.params["clf"] != "svc"] + svc[:BRANCH_STARTUP - 1]
    space = encoded_space(union_search_space(trials), trials)

    def history(ts):
        return History(ts[0], ts, [], 0, ts)

    # From no svc trial on, each start-up point joins the history: the svc branch's own
    # columns (C and lr) are stratified (the first 4 points of a Sobol sequence lie in distinct
    # quarters of each column), not clustered.
    dists = {"clf": CLF, "C": C, "depth": DEPTH, "k": K, "lr": LR}
    others = [t for t in trials if t.params["clf"] != "svc"]
    seen = []
    for n in range(20, 20 + BRANCH_STARTUP):
        x = branch_startup_point(space, history(others + seen), n, 0)
        params = space.decode(x)
        assert params["clf"] == "svc" and "C" in params and "depth" not in params
        seen.append(_trial(params, dists))
    for name in ("C", "lr"):
        quarters = {int(space.encode(t.params)[space.names.index(name)] * 4) for t in seen}
        assert len(quarters) == BRANCH_STARTUP
    # Two workers choosing at the same moment (neither point stored yet): the later trial
    # counts the earlier running one and takes the next point of the sequence.
    from optuna.trial import TrialState
    first, second = create_trial(state=TrialState.RUNNING), create_trial(state=TrialState.RUNNING)
    first.number, second.number = 30, 31
    alone = History(first, others, [], 1, others + [first, second])
    crowded = History(second, others, [], 1, others + [first, second])
    a = branch_startup_point(space, alone, 30, 0)
    b = branch_startup_point(space, crowded, 31, 0)
    assert space.decode(a)["C"] != space.decode(b)["C"]
    full = trials + svc[BRANCH_STARTUP - 1:BRANCH_STARTUP]
    assert branch_startup_point(space, history(full), 20, 0) is None
    plain = EncodedSpace({"lr": LR})
    assert branch_startup_point(plain, history(trials), 20, 0) is None


def test_a_name_with_different_distributions_in_two_branches_is_left_out(caplog):
    """``x`` has another range in each branch (Optuna refuses another kind): one encoding
    cannot serve both, so ``x`` goes to the independent sampler (with the warning); the rest of
    each branch is modelled."""
    def objective(trial):
        b = trial.suggest_categorical("b", ["f", "i"])
        y = trial.suggest_float("y", 0, 1)
        x = trial.suggest_float("x", 0, 1) if b == "f" else trial.suggest_float("x", 0, 10)
        return (y - 0.3) ** 2 + (x / 10 if b == "i" else x)

    study = optuna.create_study(sampler=GPUCBSampler(seed=0, n_startup_trials=4))
    with caplog.at_level(logging.WARNING, logger="optuna_gpbandit"):
        study.optimize(objective, n_trials=14)
    trials = study.get_trials(states=(TrialState.COMPLETE,))
    assert len(trials) == 14
    assert list(union_search_space(trials)) == ["b", "y"]
    assert any("'x' is outside the relative search space" in r.message for r in caplog.records)


def test_threads_share_a_branching_study():
    study = optuna.create_study(sampler=GPTSSampler(seed=0, n_startup_trials=5))
    study.optimize(_branching, n_trials=24, n_jobs=3)
    done = study.get_trials(states=(TrialState.COMPLETE,))
    assert len(done) == 24
    for t in done:  # every trial holds exactly its branch's parameters
        own = {"a": {"a_x", "a_y"}, "b": {"b_x", "b_n"}, "c": {"c_x"}}[t.params["branch"]]
        assert set(t.params) == {"branch", "lr"} | own


def test_many_branches_get_no_startup_points():
    from optuna_gpbandit._startup import MAX_STARTUP_BRANCHES, branch_startup_point
    from optuna_gpbandit._history import History
    n = MAX_STARTUP_BRANCHES + 1
    dists = {f"p{i}": FloatDistribution(0, 1) for i in range(n)}
    dists["k"] = IntDistribution(0, n - 1)
    trials = [_trial({"k": i, f"p{i}": 0.5}, dists) for i in range(n)]
    space = encoded_space(union_search_space(trials), trials)
    assert len(space.branches) == n
    assert branch_startup_point(space, History(trials[0], trials, [], 0, trials), 30, 0) is None
    few = trials[:MAX_STARTUP_BRANCHES]
    space = encoded_space(union_search_space(few), few)
    assert branch_startup_point(space, History(few[0], few, [], 0, few), 30, 0) is not None


def test_the_default_startup_follows_the_largest_branch_not_the_union():
    """Branch "wide" has 6 floats, "narrow" 1, both a shared lr: the union has 9 columns, a
    point varies in at most 8 (the selector, lr and 6 floats), so the default start-up is 9
    trials (the union's would be 10). No model trial before it, and the next one is a model
    trial (each branch has had 3 or more of the quasi-random points by then, which depend on
    the seed only)."""
    from optuna_gpbandit import sampler_record
    from optuna_gpbandit._conditional import study_encoded_space, study_search_space
    from optuna_gpbandit._startup import startup_count

    def objective(trial):
        lr = trial.suggest_float("lr", 1e-3, 1.0, log=True)
        if trial.suggest_categorical("kind", ["wide", "narrow"]) == "wide":
            return sum((trial.suggest_float(f"w{i}", 0, 1) - 0.3) ** 2 for i in range(6)) + lr
        return (trial.suggest_float("n0", 0, 1) - 0.5) ** 2 + lr

    study = optuna.create_study(sampler=GPUCBSampler(seed=0))
    study.optimize(objective, n_trials=16)
    space = study_encoded_space(study, study_search_space(study))
    assert space.d == 9 and space.prior_dim == 8
    n_startup = startup_count(None, space.prior_dim)
    assert n_startup == 9
    modelled = [sampler_record(t) is not None for t in study.trials]
    assert not any(modelled[:n_startup]) and modelled[n_startup]


def test_each_branch_level_is_its_targets_mean_shrunk_by_one_pseudo_observation():
    """``_fitted_gp.branch_levels``: the prior mean of a conditional space is, per branch, the sum
    of the branch's fitted targets over their count plus ``BRANCH_PSEUDO_COUNT`` (1); failed
    (imputed) rows do not count, and ``branch_levels=False`` or a plain space give none."""
    from optuna_gpbandit import GPModel
    from optuna_gpbandit._conditional import study_encoded_space, study_search_space
    from optuna_gpbandit._fitted_gp import BRANCH_PSEUDO_COUNT, branch_levels
    from optuna_gpbandit._observations import Observations

    def objective(trial):
        if trial.suggest_categorical("kind", ["a", "b", "c"]) == "a":
            return trial.suggest_float("xa", 0, 1)
        return trial.suggest_float("xb", 0, 1)

    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=3))
    study.optimize(objective, n_trials=12)
    space = study_encoded_space(study, study_search_space(study))
    X = space.encode_many([t.params for t in study.trials])
    rng = np.random.default_rng(0)
    y = rng.normal(size=len(X))
    imputed = np.zeros(len(X), dtype=bool)
    imputed[-2:] = True  # failed rows follow the real ones
    obs = Observations(X=X, y=y, y_raw=y, shift=0.0, scale=1.0, numbers=np.arange(len(X)),
                       imputed=imputed)
    prior_mean = branch_levels(obs, space, GPModel())
    which = space.branch_of(X)
    assert BRANCH_PSEUDO_COUNT == 1
    for b in range(len(space.branches)):
        real = (which == b) & ~imputed
        expected = y[real].sum() / (real.sum() + 1)
        assert np.allclose(prior_mean(X[which == b]), expected)
    assert branch_levels(obs, space, GPModel(branch_levels=False)) is None
