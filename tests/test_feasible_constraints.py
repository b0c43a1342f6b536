"""Optimistic feasibility (FeasibleConstraints, the default constraint rule): units do not
matter, the best feasible point is found, infeasible starts move toward feasibility, and
constraint values reach the model through every route Optuna offers."""

from __future__ import annotations

import logging
import math

import numpy as np
import optuna
import pytest
from optuna.distributions import FloatDistribution
from optuna.trial import create_trial

from optuna_gpbandit import (
    AcquisitionSearch,
    ConstrainedGPUCBSampler,
    FeasibleConstraints,
    GPModel,
    GPTSSampler,
    GPUCBSampler,
    IGPUCBSampler,
    LongTermConstraints,
)
from optuna_gpbandit._space import EncodedSpace
from optuna_gpbandit.report import constraint_report, sampler_record

F_STAR = 1.0 - math.asin(0.95)  # the paper's problem (Shi & Eryilmaz E.1)


def _paper(scale=1.0, via_func=False):
    def objective(trial):
        x1, x2 = trial.suggest_float("x1", 0, 6), trial.suggest_float("x2", 0, 6)
        g = (math.sin(x1) * math.sin(x2) + 0.95) * scale
        trial.set_user_attr("g", g)
        if not via_func:
            trial.set_constraint("g", g)
        return -math.sin(x1) - x2
    return objective


def _params(study):
    return [tuple(t.params.values()) for t in study.trials]


@pytest.mark.needs_optuna5
def test_constraint_units_do_not_matter():
    """The same constraint in large units (x300, e.g. MB) gives the same first model-based
    trials and an equally good best feasible value. Later trials drift apart with
    floating-point rounding (which differs between machines), so only the start of the
    sequence is compared point by point."""
    runs, best = [], []
    for scale in (1.0, 300.0):
        study = optuna.create_study(direction="maximize", sampler=GPUCBSampler(
            seed=3, search=AcquisitionSearch(n_candidates=256)))
        study.optimize(_paper(scale), n_trials=25)
        runs.append(np.array(_params(study)))
        assert study.best_trial.user_attrs["g"] <= 0.0
        best.append(study.best_value)
    # 5 start-up trials and the first 3 GP trials: rounding differences only (~1e-15 here)
    np.testing.assert_allclose(runs[0][:8], runs[1][:8], atol=1e-4)
    for b in best:  # random search: about 1.8% of points feasible, often none in 25 trials
        assert F_STAR - b < 0.01, best
    assert abs(best[0] - best[1]) < 0.01, best


@pytest.mark.parametrize("cls", [GPUCBSampler, IGPUCBSampler, ConstrainedGPUCBSampler,
                                 GPTSSampler])
@pytest.mark.needs_optuna5
def test_paper_problem_finds_a_feasible_optimum(cls):
    """Defaults only: the best feasible trial is close to the constrained optimum (the
    long-term rule found no feasible trial at all in 2 of 3 seeds of 100 trials)."""
    study = optuna.create_study(direction="maximize",
                                sampler=cls(seed=0, search=AcquisitionSearch(n_candidates=256)))
    study.optimize(_paper(), n_trials=60)
    best = study.best_trial  # Optuna's best *feasible* trial
    assert best.user_attrs["g"] <= 0.0
    assert F_STAR - best.value < 0.2
    g = np.array([t.user_attrs["g"] for t in study.trials])
    assert (g[20:] <= 0).mean() > 0.3  # random search: about 0.018
    rec = sampler_record(study.trials[-1])
    assert rec["feasibility"]["constraints"] == 1


@pytest.mark.needs_optuna5
def test_infeasible_start_moves_toward_feasibility():
    """No point is feasible so far and no lower bound admits one: the next points minimise the
    optimistic violation (the feasible set is x > 0.9)."""
    sampler = GPUCBSampler(seed=0, search=AcquisitionSearch(n_candidates=256),
                           n_startup_trials=3)
    study = optuna.create_study(sampler=sampler)
    for x in (0.05, 0.1, 0.2, 0.3, 0.35):
        study.add_trial(create_trial(
            params={"x": x}, distributions={"x": FloatDistribution(0, 1)}, value=x,
            system_attrs={"constraints:g": 0.9 - x + 0.5 * x * x}))

    def objective(trial):
        x = trial.suggest_float("x", 0, 1)
        trial.set_constraint("g", 0.9 - x + 0.5 * x * x)
        return x

    study.optimize(objective, n_trials=1)
    rec = sampler_record(study.trials[-1])
    assert "optimistic_violation" in rec
    assert study.trials[-1].params["x"] > 0.35  # toward lower g, beyond every observed point


def test_lower_bounds_with_zero_width_separate_feasible_from_infeasible():
    """At observed points far from the threshold, the constraint GP's lower bound (width 0:
    the posterior mean) is <= 0 exactly where the observed constraint value is <= 0, in the
    constraint's own units though the GP works on standardised values."""
    space = EncodedSpace({"x": FloatDistribution(0, 1)})
    xs = np.linspace(0, 1, 12)
    study = optuna.create_study()
    for x in xs:
        study.add_trial(create_trial(
            params={"x": float(x)}, distributions={"x": FloatDistribution(0, 1)}, value=0.0,
            system_attrs={"constraints:g": float(400 * (x - 0.5))}))
    trials = study.trials
    models, skipped = FeasibleConstraints(width=0.0).fit(trials, space,
                                                         GPModel(kernel="matern52"), 0)
    assert skipped == ()
    lb = models.lower_bounds(xs[:, None])[:, 0]
    far = np.abs(xs - 0.5) > 0.1
    assert np.array_equal(lb[far] <= 0, (xs[far] - 0.5) <= 0)
    wide, _ = FeasibleConstraints(width=3.0).fit(trials, space, GPModel(kernel="matern52"),
                                                 0)
    assert (wide.lower_bounds(xs[:, None])[:, 0] <= lb + 1e-12).all()


@pytest.mark.needs_optuna5
def test_every_route_of_constraint_values_is_used():
    """``trial.set_constraint`` (constraints='auto'), ``constraints_func`` and an explicit
    FeasibleConstraints feed the model; constraints=None ignores the values."""
    for kw, via_func in [({}, False), ({"constraints_func": lambda t: (t.user_attrs["g"],)},
                                       True),
                         ({"constraints": FeasibleConstraints(width=1.0)}, False)]:
        study = optuna.create_study(direction="maximize",
                                    sampler=GPUCBSampler(
                                        seed=1, search=AcquisitionSearch(n_candidates=128),
                                        **kw))
        study.optimize(_paper(via_func=via_func), n_trials=8)
        assert sampler_record(study.trials[-1])["feasibility"]["constraints"] == 1, kw
    study = optuna.create_study(direction="maximize",
                                sampler=GPUCBSampler(
                                    seed=1, search=AcquisitionSearch(n_candidates=128),
                                    constraints=None))
    study.optimize(_paper(), n_trials=8)
    assert "feasibility" not in sampler_record(study.trials[-1])


def test_auto_is_quiet_without_constraint_data_but_explicit_rules_warn(caplog):
    def objective(trial):
        return trial.suggest_float("x", 0, 1) ** 2

    with caplog.at_level(logging.WARNING, logger="optuna_gpbandit"):
        optuna.create_study(sampler=GPUCBSampler(seed=0)).optimize(objective, n_trials=8)
    assert not [r for r in caplog.records if "reports constraint values" in r.getMessage()]
    with caplog.at_level(logging.WARNING, logger="optuna_gpbandit"):
        optuna.create_study(sampler=GPUCBSampler(
            seed=0, constraints=FeasibleConstraints())).optimize(objective, n_trials=8)
    assert len([r for r in caplog.records if "reports constraint values" in r.getMessage()]) == 1


def test_unusable_constraint_values_are_skipped_with_a_warning(caplog):
    study = optuna.create_study(sampler=GPUCBSampler(seed=0, n_startup_trials=3))
    dist = {"x": FloatDistribution(0, 1)}
    for i, x in enumerate((0.1, 0.4, 0.7, 0.9)):
        attrs = {"constraints:g": x - 0.5} if i != 2 else {"constraints:g": math.inf}
        study.add_trial(create_trial(params={"x": x}, distributions=dist, value=x,
                                     system_attrs=attrs))
    with caplog.at_level(logging.WARNING, logger="optuna_gpbandit"):
        study.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=1)
    assert any("1 trial(s) skipped by the constraint models" in r.getMessage()
               for r in caplog.records)


@pytest.mark.needs_optuna5
def test_report_shows_best_feasible_share_and_violation_side_by_side():
    study = optuna.create_study(direction="maximize", sampler=GPUCBSampler(seed=0))
    study.optimize(_paper(), n_trials=30)
    rep = constraint_report(study)
    g = rep.constraints[:, 0]
    feasible = g <= 0
    assert np.array_equal(rep.feasible, feasible)
    first = int(np.argmax(feasible))
    assert np.isnan(rep.best_feasible[:first]).all()
    expected = np.maximum.accumulate(np.where(feasible, rep.values, -np.inf))
    np.testing.assert_array_equal(rep.best_feasible[first:], expected[first:])
    assert rep.best_feasible[-1] == study.best_value
    np.testing.assert_allclose(rep.feasible_share, np.cumsum(feasible) / np.arange(1, 31))
    summary = rep.summary()
    assert summary["best_feasible"] == study.best_value
    assert summary["feasible_share"] == pytest.approx(feasible.mean())
    assert np.isnan(rep.regret).all()  # no optimum given: no regret
    with_opt = constraint_report(study, F_STAR)
    assert with_opt.summary()["best_feasible_gap"] == pytest.approx(F_STAR - study.best_value)


def test_bad_arguments_name_the_argument():
    with pytest.raises(ValueError, match="width"):
        FeasibleConstraints(width=math.nan)
    with pytest.raises(ValueError, match="on_missing"):
        FeasibleConstraints(on_missing="drop")
    with pytest.raises(ValueError, match="constraints must be"):
        GPUCBSampler(constraints="feasible")


@pytest.mark.parametrize("make", [
    lambda: ConstrainedGPUCBSampler(seed=0, search=AcquisitionSearch(n_candidates=128)),
    lambda: ConstrainedGPUCBSampler(constraints=LongTermConstraints("noisy", epoch_length=3),
                                    seed=0, search=AcquisitionSearch(n_candidates=128)),
    lambda: ConstrainedGPUCBSampler(constraints=LongTermConstraints("noiseless", epoch_length=3),
                                    seed=0, search=AcquisitionSearch(n_candidates=128)),
])
@pytest.mark.needs_optuna5
def test_constraint_values_near_the_float_limit(make):
    """Values up to 1e300 (the noisy variant used to raise 'UCB width must be finite'): valid
    suggestions, finite records, the feasible side found."""
    def objective(trial):
        x = trial.suggest_float("x", 0, 1)
        trial.set_constraint("g", (x - 0.5) * 1e300)
        return x

    study = optuna.create_study(direction="maximize", sampler=make())
    study.optimize(objective, n_trials=15)
    assert all(0 <= t.params["x"] <= 1 for t in study.trials)
    assert study.best_trial.params["x"] <= 0.5
    rec = sampler_record(study.trials[-1])
    assert rec is not None and math.isfinite(rec["mu"])


def test_the_likelier_of_raw_and_warped_values_is_used():
    """A constraint exponential in its parameter over three decades (a model's size against
    the log of its width) is fitted on signed-log values; one linear in it, on raw values.
    Both choices leave the sign of every observed value where it was (width 0)."""
    space = EncodedSpace({"x": FloatDistribution(0, 1)})
    xs = np.linspace(0, 1, 15)
    for shape, expect_warp in ((lambda x: 10 ** (3 * x) - 30.0, True),
                               (lambda x: x - 0.5, False)):
        study = optuna.create_study()
        for x in xs:
            study.add_trial(create_trial(
                params={"x": float(x)}, distributions={"x": FloatDistribution(0, 1)},
                value=0.0, system_attrs={"constraints:g": float(shape(x))}))
        models, _ = FeasibleConstraints(width=0.0).fit(study.trials, space,
                                                       GPModel(kernel="matern52"), 0)
        assert models.warped == (expect_warp,)
        g = np.array([shape(x) for x in xs])
        far = np.abs(g) > 0.05 * np.abs(g).max()
        lb = models.lower_bounds(xs[:, None])[:, 0]
        assert np.array_equal(lb[far] <= 0, g[far] <= 0)


@pytest.mark.needs_optuna5
def test_skipped_constraint_data_is_logged_with_counts_but_not_every_trial(caplog):
    """Constraints reported on only some trials: one warning at 1, 2, 4, 8 ... skipped
    trials, not one per trial."""
    def objective(trial):
        x = trial.suggest_float("x", 0, 1)
        if trial.number % 2 == 0:
            trial.set_constraint("g", x - 0.5)
        return x

    with caplog.at_level(logging.WARNING, logger="optuna_gpbandit"):
        optuna.create_study(sampler=GPUCBSampler(
            seed=0, search=AcquisitionSearch(n_candidates=128))).optimize(
            objective, n_trials=30)
    counts = [int(r.getMessage().split(": ")[1].split()[0]) for r in caplog.records
              if "skipped by the constraint models" in r.getMessage()]
    assert counts and len(counts) <= 5
    assert all(c.bit_length() != d.bit_length() for c, d in zip(counts, counts[1:]))
