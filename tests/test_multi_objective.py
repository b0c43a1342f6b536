"""Multi-objective studies: random scalarisations (Paria, Kandasamy & Poczos 2019)."""

from __future__ import annotations

import numpy as np
import optuna
import pytest
from optuna.trial import TrialState

from optuna_gpbandit import (ConstrainedGPUCBSampler, GPTSSampler, GPUCBCPDSampler, GPUCBSampler,
                             IGPUCBSampler)
from optuna_gpbandit._storage import STATE, read_trial_json
from optuna_gpbandit.acquisition.scalarize import Scalarized, draw_weights
from optuna_gpbandit.changepoint import ChangeDetection
from optuna_gpbandit.constraints import LongTermConstraints, trial_constraints

OURS = [GPUCBSampler, IGPUCBSampler, GPTSSampler]


def _zdt1(trial: optuna.Trial) -> tuple[float, float]:
    x = np.array([trial.suggest_float(f"x{i}", 0.0, 1.0) for i in range(3)])
    g = 1.0 + 9.0 * x[1:].mean()
    return float(x[0]), float(g * (1.0 - np.sqrt(x[0] / g)))


def _hypervolume(study: optuna.Study, ref=(1.1, 11.0)) -> float:
    """Exact 2-D hypervolume (minimisation) of the study's Pareto front up to ``ref``."""
    pts = sorted(t.values for t in study.best_trials if t.values[0] < ref[0] and t.values[1] < ref[1])
    hv, last = 0.0, ref[1]
    for a, b in pts:
        if b < last:
            hv += (ref[0] - a) * (last - b)
            last = b
    return hv


class _Part:
    """An acquisition with known values and gradients, for the scalarisation tests."""

    def __init__(self, a: np.ndarray):
        self.a = a

    def values(self, X):
        return X @ self.a

    def value_grad(self, x):
        return float(x @ self.a), self.a.copy()


def test_scalarizations_are_the_papers_formulas():
    parts = [_Part(np.array([1.0, 0.0])), _Part(np.array([0.0, 2.0]))]
    X = np.array([[0.5, 0.1], [0.2, 0.9]])
    w = np.array([0.3, 0.7])
    z = np.array([-1.0, 0.5])
    lin = Scalarized(parts, w, "linear")
    np.testing.assert_allclose(lin.values(X), 0.3 * X[:, 0] + 0.7 * 2 * X[:, 1])
    cheb = Scalarized(parts, w, "chebyshev", z)
    expect = np.minimum(0.3 * (X[:, 0] + 1.0), 0.7 * (2 * X[:, 1] - 0.5))
    np.testing.assert_allclose(cheb.values(X), expect)
    v, g = cheb.value_grad(X[0])  # active term: the second (0.7 * (0.2 - 0.5) < 0.45)
    assert v == pytest.approx(expect[0]) and np.allclose(g, [0.0, 1.4])
    v, g = lin.value_grad(X[1])
    assert v == pytest.approx(0.3 * 0.2 + 0.7 * 1.8) and np.allclose(g, [0.3, 1.4])


def test_weights_are_uniform_on_the_simplex():
    rng = np.random.default_rng(0)
    W = np.array([draw_weights(3, rng) for _ in range(20000)])
    np.testing.assert_allclose(W.sum(axis=1), 1.0)
    assert np.all(W >= 0)
    # Dirichlet(1, 1, 1): each weight has mean 1/3 and variance 1/18.
    np.testing.assert_allclose(W.mean(axis=0), 1 / 3, atol=0.01)
    np.testing.assert_allclose(W.var(axis=0), 1 / 18, atol=0.003)
    with pytest.raises(ValueError, match="scalarization"):
        Scalarized([_Part(np.ones(2))], np.ones(1), "sum")


@pytest.mark.parametrize("cls", OURS)
def test_pareto_front_beats_random_search(cls):
    hv = {}
    for name, make in (("ours", lambda s: cls(seed=s)),
                       ("random", lambda s: optuna.samplers.RandomSampler(seed=s))):
        vals = []
        for seed in range(2):
            study = optuna.create_study(directions=["minimize", "minimize"], sampler=make(seed))
            study.optimize(_zdt1, n_trials=30)
            vals.append(_hypervolume(study))
        hv[name] = np.mean(vals)
    assert hv["ours"] > hv["random"] + 0.5, hv  # the maximum is 1.1 * 11 - 1/3 = 11.77


@pytest.mark.parametrize("scalarization", ["chebyshev", "linear"])
def test_each_trial_draws_its_own_weights_reproducibly(scalarization):
    runs = []
    for _ in range(2):
        study = optuna.create_study(directions=["minimize", "maximize"],
                                    sampler=GPUCBSampler(seed=3, scalarization=scalarization))
        study.optimize(lambda t: (t.suggest_float("x", 0, 1), t.suggest_float("y", 0, 1)),
                       n_trials=9)
        runs.append([t.params for t in study.trials])
        records = [read_trial_json(t, STATE) for t in study.trials[5:]]
        weights = [tuple(r["weights"]) for r in records]
        assert len(set(weights)) == len(weights)  # one draw per trial
        assert all(r["scalarization"] == scalarization for r in records)
        assert all(len(r["objectives"]) == 2 and len(r["mu"]) == 2 for r in records)
    assert runs[0] == runs[1]


def test_hyperparameters_are_stored_per_objective_and_reused():
    study = optuna.create_study(directions=["minimize", "minimize"],
                                sampler=GPUCBSampler(seed=0))
    study.optimize(_zdt1, n_trials=46)  # beyond 40 observations a refit waits for 5 % growth
    records = [read_trial_json(t, STATE) for t in study.trials[5:]]
    assert any(not any(r["refitted"]) for r in records)  # stored state reused between refits
    last = records[-1]["objectives"]
    assert last[0]["gp"]["lengthscales"] != last[1]["gp"]["lengthscales"]


def test_failed_and_pending_trials_are_handled_per_objective():
    study = optuna.create_study(directions=["minimize", "minimize"],
                                sampler=IGPUCBSampler(seed=1))
    study.optimize(_zdt1, n_trials=8)
    failed = study.ask()
    _zdt1(failed)
    study.tell(failed, state=TrialState.FAIL)
    running = study.ask()
    _zdt1(running)  # left RUNNING: another worker's trial
    nxt = study.ask()
    _zdt1(nxt)
    gap = lambda a, b: max(abs(a.params[k] - b.params[k]) for k in a.params)
    assert gap(nxt, running) > 1e-3 and gap(nxt, failed) > 1e-3
    assert read_trial_json(study.trials[-1], STATE)["pending"]["pending"] == 1


@pytest.mark.needs_optuna5
def test_constraints_keep_the_front_feasible():
    def objective(trial):
        x, y = trial.suggest_float("x", 0, 1), trial.suggest_float("y", 0, 1)
        trial.set_constraint("c", 0.4 - x - y)  # feasible: x + y >= 0.4
        return x, y

    study = optuna.create_study(directions=["minimize", "minimize"],
                                sampler=GPUCBSampler(seed=0))
    study.optimize(objective, n_trials=30)
    ok = lambda t: trial_constraints(t)[1][0] <= 0
    assert np.mean([ok(t) for t in study.trials[10:]]) >= 0.7
    assert all(ok(t) for t in study.best_trials)  # Optuna's front: feasible trials only


def test_unsupported_combinations_are_errors_naming_the_argument():
    two = dict(directions=["minimize", "minimize"])
    obj = lambda t: (t.suggest_float("x", 0, 1), t.suggest_float("y", 0, 1))
    for sampler, match in (
        (GPUCBCPDSampler(seed=0), "GPUCBCPDSampler supports single-objective"),
        (ConstrainedGPUCBSampler(seed=0), "ConstrainedGPUCBSampler supports single-objective"),
        (GPUCBSampler(seed=0, reset=ChangeDetection()), r"reset=ChangeDetection\(\.\.\.\)"),
        (GPUCBSampler(seed=0, constraints=LongTermConstraints()), "LongTermConstraints"),
    ):
        study = optuna.create_study(sampler=sampler, **two)
        with pytest.raises(ValueError, match=match):
            study.optimize(obj, n_trials=1)
    with pytest.raises(ValueError, match="scalarization"):
        GPTSSampler(scalarization="pbi")


def test_plot_pareto_front_works():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from optuna.visualization.matplotlib import plot_pareto_front

    study = optuna.create_study(directions=["minimize", "minimize"],
                                sampler=GPTSSampler(seed=0))
    study.optimize(_zdt1, n_trials=12)
    assert plot_pareto_front(study) is not None


def test_hypervolume_report_matches_the_exact_2d_volume():
    from optuna_gpbandit import hypervolume_report

    study = optuna.create_study(directions=["minimize", "maximize"])
    for a, b in [(0.5, 0.5), (0.2, 0.1), (0.8, 0.9), (0.6, 0.4), (0.1, 0.05)]:
        study.enqueue_trial({"a": a, "b": b})
    study.optimize(lambda t: (t.suggest_float("a", 0, 1), t.suggest_float("b", 0, 1)),
                   n_trials=5)
    rep = hypervolume_report(study, reference_point=[1.0, 0.0])
    # minimise a, maximise b: in loss units (a, -b) with reference (1, 0)
    steps = [0.5 * 0.5, 0.25 + 0.8 * 0.1 - 0.5 * 0.1, None, None, None]
    assert rep.hypervolume[0] == pytest.approx(steps[0])
    assert rep.hypervolume[1] == pytest.approx(steps[1])
    # (0.8, 0.9) adds 0.2 * 0.4 above b = 0.5; (0.6, 0.4) is dominated by (0.5, 0.5)
    assert rep.hypervolume[2] == pytest.approx(steps[1] + 0.2 * 0.4)
    assert rep.hypervolume[3] == pytest.approx(rep.hypervolume[2])
    # (0.1, 0.05) is not dominated (a lower than 0.2): it adds 0.1 * 0.05 below b = 0.1
    assert rep.hypervolume[4] == pytest.approx(rep.hypervolume[3] + 0.1 * 0.05)
    assert np.all(np.diff(rep.hypervolume) >= 0)
    assert rep.summary() == {"n": 5, "hypervolume": pytest.approx(rep.hypervolume[-1])}
    auto = hypervolume_report(study)
    np.testing.assert_allclose(auto.reference_point, [0.8 + 0.07, 0.05 - 0.085])
    with pytest.raises(ValueError, match="reference_point"):
        hypervolume_report(study, reference_point=[1.0])
    with pytest.raises(ValueError, match="regret_report"):
        hypervolume_report(optuna.create_study())
