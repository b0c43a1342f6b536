"""ConstrainedGPUCBSampler and the constraint stage inside the shared pipeline."""

import math

import numpy as np
import optuna
import pytest
from optuna.distributions import FloatDistribution
from optuna.trial import TrialState, create_trial

from optuna_gpbandit import (
    AcquisitionSearch,
    ConstrainedGPUCBSampler,
    FeasibleConstraints,
    GPTSSampler,
    GPUCBSampler,
    IGPUCBSampler,
    InfoGainWidth,
    LongTermConstraints,
)
from optuna_gpbandit.constraints import NoConstraints, constrained_beta
from optuna_gpbandit._storage import MULTIPLIERS, STATE, read_trial_json
from optuna_gpbandit.report import constraint_report

DISTS = {"x": FloatDistribution(0.0, 6.0), "y": FloatDistribution(0.0, 6.0)}
G_VALUES = [0.2, 0.4, 0.3, -0.1, 0.5, 0.6, 0.0]  # S = 3: epoch means 0.3 and 1/3


def _toy_f(x, y):
    return -math.sin(x) - y


def _toy_g(x, y):
    return math.sin(x) * math.sin(y) + 0.95


def _add_history(study, g_values=G_VALUES, fmt="list", seed=0):
    rng = np.random.default_rng(seed)
    for g in g_values:
        p = {"x": float(rng.uniform(0, 6)), "y": float(rng.uniform(0, 6))}
        attrs = {"constraints": [g]} if fmt == "list" else {"constraints:c0": g}
        study.add_trial(create_trial(params=p, distributions=DISTS, value=_toy_f(**p),
                                     system_attrs=attrs))


def _next(study):
    t = study.ask()
    params = {"x": t.suggest_float("x", 0.0, 6.0), "y": t.suggest_float("y", 0.0, 6.0)}
    frozen = study.get_trials(deepcopy=False)[t.number]
    return t, params, read_trial_json(frozen, MULTIPLIERS)


def _sampler(**kw):
    """Long-term mode on raw constraint values (``scale=False``: the paper's formulas)."""
    kw.setdefault("seed", 0)
    kw.setdefault("search", AcquisitionSearch(n_candidates=128))
    stage = {k: kw.pop(k) for k in ("history",) if k in kw}
    kw.setdefault("constraints", LongTermConstraints(
        kw.pop("variant", "noiseless"), epoch_length=3, scale=False, **stage))
    return ConstrainedGPUCBSampler(**kw)


def test_multipliers_are_rebuilt_from_storage_and_written_for_the_dashboard():
    study = optuna.create_study(direction="maximize", sampler=_sampler())
    _add_history(study)
    _, _, record = _next(study)
    assert record["epoch"] == 2 and record["position"] == 1
    assert record["log_kappa"] == pytest.approx([0.3 + 1.0 / 3.0])
    assert record["kappa"] == pytest.approx([math.exp(0.3 + 1.0 / 3.0)])
    noisy = optuna.create_study(direction="maximize", sampler=_sampler(variant="noisy"))
    _add_history(noisy)
    _, _, rec = _next(noisy)
    assert rec["kappa"] == pytest.approx([0.5 * 0.3 + 0.5 * (1.0 / 3.0)])
    assert rec["noise_factor"] == pytest.approx(math.sqrt(1 + rec["kappa"][0] ** 2))


def test_fresh_samplers_and_a_reloaded_study_suggest_the_same(tmp_path):
    import shutil

    url = f"sqlite:///{tmp_path / 'c.db'}"
    study = optuna.create_study(direction="maximize", storage=url, study_name="c")
    _add_history(study)
    shutil.copy(tmp_path / "c.db", tmp_path / "copy.db")  # the same stored study, twice
    suggestions = []
    for name in ("c.db", "copy.db"):
        s = optuna.load_study(study_name="c", storage=f"sqlite:///{tmp_path / name}",
                              sampler=_sampler(seed=4))
        t, params, record = _next(s)
        suggestions.append((params, record["kappa"]))
    # The multipliers and the point are rebuilt exactly from storage.
    assert suggestions[0][1] == suggestions[1][1]
    assert suggestions[0][0] == suggestions[1][0]


def test_trials_outside_the_rules_do_not_change_the_multipliers():
    clean = optuna.create_study(direction="maximize", sampler=_sampler())
    _add_history(clean)
    noisy = optuna.create_study(direction="maximize", sampler=_sampler())
    _add_history(noisy, G_VALUES[:3])
    p = {"x": 1.0, "y": 1.0}
    noisy.add_trial(create_trial(params=p, distributions=DISTS, state=TrialState.FAIL))
    noisy.add_trial(create_trial(params=p, distributions=DISTS, state=TrialState.PRUNED,
                                 value=0.0, system_attrs={"constraints": [50.0]}))
    noisy.add_trial(create_trial(params=p, distributions=DISTS, value=0.0,
                                 system_attrs={"constraints": None}))
    noisy.ask()  # RUNNING, never told
    _add_history(noisy, G_VALUES[3:], seed=1)
    assert _next(clean)[2]["kappa"] == pytest.approx(_next(noisy)[2]["kappa"])


def test_set_constraint_and_constraints_func_feed_the_same_multipliers():
    listed = optuna.create_study(direction="maximize", sampler=_sampler())
    _add_history(listed, fmt="list")
    named = optuna.create_study(direction="maximize", sampler=_sampler())
    _add_history(named, fmt="named")
    assert _next(listed)[2]["kappa"] == pytest.approx(_next(named)[2]["kappa"])

    study = optuna.create_study(
        direction="maximize",
        sampler=_sampler(constraints_func=lambda t: (_toy_g(t.params["x"], t.params["y"]),)),
    )
    study.optimize(lambda t: _toy_f(t.suggest_float("x", 0, 6), t.suggest_float("y", 0, 6)),
                   n_trials=8)
    for t in study.trials:
        assert t.system_attrs["constraints"] == (_toy_g(t.params["x"], t.params["y"]),)
    assert read_trial_json(study.trials[-1], MULTIPLIERS)["epoch"] == 2


@pytest.mark.needs_optuna5
def test_direction_does_not_change_suggestions():
    runs = []
    for direction, sign in (("maximize", 1.0), ("minimize", -1.0)):
        study = optuna.create_study(direction=direction, sampler=_sampler(seed=2))

        def objective(trial, sign=sign):
            x, y = trial.suggest_float("x", 0, 6), trial.suggest_float("y", 0, 6)
            trial.set_constraint("g", _toy_g(x, y))
            return sign * _toy_f(x, y)

        study.optimize(objective, n_trials=12)
        runs.append([t.params for t in study.trials])
    assert runs[0] == runs[1]


def test_without_constraint_data_it_is_igp_ucb():
    runs = []
    for cls in (ConstrainedGPUCBSampler, IGPUCBSampler):
        study = optuna.create_study(sampler=cls(seed=1,
                                                search=AcquisitionSearch(n_candidates=128)))
        study.optimize(lambda t: (t.suggest_float("x", 0, 1) - 0.3) ** 2, n_trials=10)
        runs.append([t.params for t in study.trials])
    assert runs[0] == runs[1]


def test_noisy_variant_widens_r_by_the_noise_factor():
    sampler = _sampler(variant="noisy", width=InfoGainWidth(R=0.1))
    study = optuna.create_study(direction="maximize", sampler=sampler)
    _add_history(study)
    t, _, mult = _next(study)
    record = read_trial_json(study.get_trials()[t.number], STATE)
    assert record["R"] == pytest.approx(0.1 * mult["noise_factor"])
    assert record["multipliers"] == mult
    # the sampler's width is the library's constrained_beta (one rule, Shi & Eryilmaz Alg. 3)
    L = mult["epoch"] + 1
    assert record["beta"] == pytest.approx(
        constrained_beta(record["gamma"], 0.5, 0.1, 0.1, L, kappa=mult["kappa"]), rel=1e-12)


def test_noisy_variant_with_fitted_noise_counts_the_inflation_once():
    """Algorithm 3 with ``R=None``: the GP is fitted to the penalised targets, whose noise is
    already the composite ``sqrt(1 + sum kappa^2) R``; beta is the paper's formula with that
    fitted R, not widened a second time."""
    study = optuna.create_study(direction="maximize", sampler=_sampler(variant="noisy"))
    _add_history(study)
    t, _, mult = _next(study)
    assert mult["noise_factor"] > 1.0
    record = read_trial_json(study.get_trials()[t.number], STATE)
    gp = record["gp"]
    assert record["R"] == pytest.approx(math.sqrt(gp["noise_var"] / gp["scale"]))
    L = mult["epoch"] + 1  # no n_trials_hint: L is the current epoch, 1-based
    paper = 0.5 + record["R"] * math.sqrt(2 * (record["gamma"] + 1 + math.log(2 * L / 0.1)))
    assert record["beta"] == pytest.approx(paper)
    assert record["beta"] < 0.5 + mult["noise_factor"] * record["R"] * math.sqrt(
        2 * (record["gamma"] + 1 + math.log(2 * L / 0.1)))  # the double count it replaces


@pytest.mark.parametrize("inner", [GPUCBSampler, GPTSSampler])
def test_any_sampler_takes_the_constraint_stage(inner):
    sampler = inner(seed=0, search=AcquisitionSearch(n_candidates=128),
                    constraints=LongTermConstraints("noiseless", epoch_length=3,
                                                                scale=False))
    study = optuna.create_study(direction="maximize", sampler=sampler)
    _add_history(study)
    _, params, record = _next(study)
    assert record["kappa"] == pytest.approx([math.exp(0.3 + 1.0 / 3.0)])
    assert all(DISTS[k]._contains(v) for k, v in params.items())


def test_huge_constraint_values_give_a_valid_suggestion_and_a_warning(caplog):
    study = optuna.create_study(direction="maximize", sampler=_sampler())
    _add_history(study, [1e4] * 7)
    optuna.logging.enable_propagation()
    try:
        with caplog.at_level("WARNING"):
            _, params, record = _next(study)
    finally:
        optuna.logging.disable_propagation()
    assert record["clipped"] and record["log_kappa"] == [50.0]
    assert all(0.0 <= v <= 6.0 for v in params.values())
    assert "max_log_kappa" in caplog.text


def test_epoch_history_restarts_each_epoch_from_a_quasi_random_point():
    study = optuna.create_study(direction="maximize", sampler=_sampler(history="epoch"))
    _add_history(study, G_VALUES[:6])  # two full epochs: the next trial opens epoch 2
    t, _, record = _next(study)
    assert record is None  # no GP step: the epoch has no trial yet
    assert read_trial_json(study.get_trials()[t.number], STATE) is None


def test_bad_constraint_arguments():
    with pytest.raises(ValueError, match="LongTermConstraints"):
        GPUCBSampler(constraints={"variant": "noisy"})
    with pytest.raises(ValueError, match="callable"):
        GPUCBSampler(constraints_func=3)
    with pytest.raises(ValueError, match="variant"):
        LongTermConstraints("robust")
    with pytest.raises(ValueError, match="kappa_step"):
        LongTermConstraints("noiseless", kappa_step=0.1)
    # The rules' own fields live on their objects (no mode= any more): the long-term fields
    # are not the sampler's arguments, nor the feasible rule's width the long-term rule's.
    for old in ({"variant": "noisy"}, {"mode": "long_term"}, {"epoch_length": 5}):
        with pytest.raises(TypeError, match="unexpected keyword argument"):
            ConstrainedGPUCBSampler(**old)
    with pytest.raises(TypeError, match="unexpected keyword argument 'width'"):
        LongTermConstraints("noiseless", width=1.0)
    for bad in ("average", "long_term", None, NoConstraints()):  # a rule that reads them
        with pytest.raises(ValueError, match="constraints must be FeasibleConstraints"):
            ConstrainedGPUCBSampler(constraints=bad)
    # the other samplers take any constraint rule, the do-nothing one included (the door
    # asks for the base class, not for a list of rules)
    assert not GPUCBSampler(constraints=NoConstraints())._settings.constraints.reads_constraints
    with pytest.raises(ValueError, match="width must be"):
        FeasibleConstraints(width=-1.0)
    # the sampler's own width= is IGP-UCB's beta_t
    with pytest.raises(ValueError, match="width must be an InfoGainWidth instance"):
        ConstrainedGPUCBSampler(width=-1.0)


@pytest.mark.needs_optuna5
def test_synthetic_problem_violation_falls_and_beats_random():
    """The paper's E.1 problem, Algorithm 2 (spec 9.17, reduced): S=20, T=80, 2 seeds."""

    def objective(trial):
        x, y = trial.suggest_float("x", 0, 6), trial.suggest_float("y", 0, 6)
        trial.set_constraint("g", _toy_g(x, y))
        return _toy_f(x, y)

    cv = {}
    for name in ("alg2", "random"):
        early, late = [], []
        for seed in (0, 1):
            sampler = (ConstrainedGPUCBSampler(constraints=LongTermConstraints(), seed=seed,
                                               search=AcquisitionSearch(n_candidates=256))
                       if name == "alg2"
                       else optuna.samplers.RandomSampler(seed=seed))
            study = optuna.create_study(direction="maximize", sampler=sampler)
            study.optimize(objective, n_trials=80)
            rep = constraint_report(study, optimum=-0.253236)
            early.append(rep.average_violation[19])
            late.append(rep.average_violation[-1])
        cv[name] = (np.mean(early), np.mean(late))
    assert cv["alg2"][1] < 0.5 * cv["alg2"][0]
    assert cv["alg2"][1] < 0.5
    assert cv["alg2"][1] < cv["random"][1]
