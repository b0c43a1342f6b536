"""Baseline strategies of the paper reproductions (``benchmarks/papers/baselines.py``) and the
arm-recording run loop (``benchmarks/papers/harness.py``)."""

from __future__ import annotations

import importlib.util
import math
import pathlib
import sys

import numpy as np
import optuna
import pytest
from optuna.distributions import FloatDistribution
from optuna.trial import TrialState, create_trial

from optuna_gpbandit import AcquisitionSearch, GPModel, IgnorePending
from optuna_gpbandit.gp.posterior import GPParams, GPPosterior

_PAPERS = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "papers"


def _load(name: str):
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, _PAPERS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


bl = _load("baselines")


def _Phi(z: float) -> float:
    return 0.5 * (1.0 + math.erf(z / math.sqrt(2.0)))


def _phi(z: float) -> float:
    return math.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)


# ------------------------------------------------------------------ closed forms
def test_expected_improvement_reference_values():
    # E[max(f - tau - xi, 0)], f ~ N(mu, sd^2): (mu - tau - xi) Phi(z) + sd phi(z)
    ei = bl.expected_improvement
    assert ei(1.0, 1.0, 0.0, 0.0) == pytest.approx(1.0833154705876864, abs=1e-12)  # Phi(1) + phi(1)
    assert ei(0.0, 2.0, 0.0, 0.0) == pytest.approx(0.7978845608028654, abs=1e-12)  # 2 phi(0)
    mu, sd, tau, xi = -1.0, 0.5, 0.0, 0.1
    z = (mu - tau - xi) / sd
    expected = (mu - tau - xi) * _Phi(z) + sd * _phi(z)
    assert bl.expected_improvement(mu, sd, tau, xi) == pytest.approx(expected, rel=1e-10)
    assert expected == pytest.approx(0.0024435, abs=1e-6)
    # zero sd: the improvement itself
    np.testing.assert_allclose(ei([0.3, 0.0], [0.0, 0.0], 0.1, 0.0), [0.2, 0.0])


def test_expected_improvement_matches_monte_carlo():
    rng = np.random.default_rng(0)
    mu, sd, tau, xi = 0.2, 0.7, 0.5, 0.05
    draws = mu + sd * rng.standard_normal(400_000)
    mc = np.maximum(draws - tau - xi, 0.0).mean()
    assert bl.expected_improvement(mu, sd, tau, xi) == pytest.approx(mc, rel=0.01)


def test_probability_of_improvement_reference_values():
    pi = bl.probability_of_improvement
    assert pi(1.0, 1.0, 0.0, 0.0) == pytest.approx(0.8413447460685429, abs=1e-12)  # Phi(1)
    assert pi(0.0, 1.0, 0.0, 0.01) == pytest.approx(_Phi(-0.01), abs=1e-12)
    assert pi(0.0, 0.5, 0.3, 0.0) == pytest.approx(_Phi(-0.6), abs=1e-12)
    np.testing.assert_array_equal(pi([0.5, 0.0], [0.0, 0.0], 0.1, 0.01), [1.0, 0.0])


def test_improvement_monotonicity():
    mu = np.linspace(-3, 3, 61)
    ei = bl.expected_improvement(mu, 0.4, 0.5, 0.0)
    pi = bl.probability_of_improvement(mu, 0.4, 0.5, 0.01)
    assert np.all(ei >= 0) and np.all(np.diff(ei) > 0) and np.all(np.diff(pi) >= 0)
    sds = np.linspace(0.01, 3, 50)
    assert np.all(np.diff(bl.expected_improvement(0.0, sds, 0.5, 0.0)) > 0)


# ------------------------------------------------------------------ gradients
def _posterior() -> GPPosterior:
    rng = np.random.default_rng(3)
    X = rng.uniform(size=(12, 2))
    y = np.sin(4 * X[:, 0]) + X[:, 1]
    return GPPosterior(X, y, GPParams("se", np.array([0.3, 0.3]), 1.0, 0.01), np.zeros(2, bool))


@pytest.mark.parametrize("make", [
    lambda p: bl.ExpectedImprovementAcq(p, tau=1.0, xi=0.0),
    lambda p: bl.ProbabilityOfImprovementAcq(p, tau=1.0, xi=0.01),
    lambda p: bl.MeanAcq(p),
    lambda p: bl.VarianceAcq(p),
], ids=["EI", "PI", "mean", "var"])
def test_value_grad_matches_values_and_finite_differences(make):
    acq = make(_posterior())
    for x in np.random.default_rng(5).uniform(0.05, 0.95, size=(5, 2)):
        value, grad = acq.value_grad(x)
        assert value == pytest.approx(float(acq.values(x[None, :])[0]), rel=1e-9, abs=1e-12)
        h = 1e-6
        fd = [(acq.values((x + h * e)[None, :])[0] - acq.values((x - h * e)[None, :])[0]) / (2 * h)
              for e in np.eye(2)]
        np.testing.assert_allclose(grad, fd, rtol=1e-4, atol=1e-7)


# ------------------------------------------------------------------ samplers
_DIST = FloatDistribution(0.0, 1.0, step=0.01)
_GRID = np.round(np.arange(101) * 0.01, 10)
_X_OBS = np.array([0.05, 0.3, 0.35, 0.6, 0.62, 0.85])
_Y_OBS = np.array([0.5, 0.0, 0.9, -0.9, 0.7, -0.9])
# Data chosen so that the argmaxes of mu, sd, EI (both incumbents) and PI all differ.
_NOISE, _L = 0.1, 0.15


def _numpy_posterior() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Independent posterior (plain solves) on the grid and at the observed points."""
    k = lambda a, b: np.exp(-0.5 * (a[:, None] - b[None, :]) ** 2 / _L**2)  # noqa: E731
    A = k(_X_OBS, _X_OBS) + _NOISE * np.eye(_X_OBS.size)
    Ks = k(_X_OBS, _GRID)
    mu = Ks.T @ np.linalg.solve(A, _Y_OBS)
    var = 1.0 - np.sum(Ks * np.linalg.solve(A, Ks), axis=0)
    mu_obs = k(_X_OBS, _X_OBS).T @ np.linalg.solve(A, _Y_OBS)
    return mu, np.sqrt(np.maximum(var, 0.0)), mu_obs


def _suggest(sampler_cls, direction="maximize", **kwargs) -> float:
    sampler = sampler_cls(seed=0, model=GPModel(kernel="se", lengthscale=_L, kernel_scale=1.0,
                                                noise_var=_NOISE, standardize=False),
                          search=AcquisitionSearch(n_candidates=101), n_startup_trials=1, **kwargs)
    study = optuna.create_study(direction=direction, sampler=sampler)
    sign = 1.0 if direction == "maximize" else -1.0
    for x, y in zip(_X_OBS, _Y_OBS):
        study.add_trial(create_trial(params={"x": float(x)}, distributions={"x": _DIST},
                                     value=sign * float(y)))
    return study.ask({"x": _DIST}).params["x"]


def _ei_ref(mu: np.ndarray, sd: np.ndarray, tau: float) -> np.ndarray:
    return np.array([(m - tau) * _Phi((m - tau) / s) + s * _phi((m - tau) / s)
                     for m, s in zip(mu, sd)])


def _unique_argmax(score: np.ndarray) -> float:
    order = np.argsort(-score)
    assert score[order[0]] - score[order[1]] > 1e-6 * (1 + abs(score[order[0]]))
    return float(_GRID[order[0]])


@pytest.mark.parametrize("direction", ["maximize", "minimize"])
def test_mean_only_picks_argmax_of_posterior_mean(direction):
    mu, _, _ = _numpy_posterior()
    assert _suggest(bl.MeanOnlySampler, direction) == pytest.approx(_unique_argmax(mu))


def test_variance_only_picks_argmax_of_posterior_sd():
    mu, sd, _ = _numpy_posterior()
    expected = _unique_argmax(sd)
    assert _suggest(bl.VarianceOnlySampler) == pytest.approx(expected)
    assert expected != pytest.approx(_unique_argmax(mu))  # the two rules differ on this data


def test_ei_and_pi_pick_argmax_of_closed_forms():
    mu, sd, mu_obs = _numpy_posterior()
    tau = float(mu_obs.max())
    ei = _ei_ref(mu, sd, tau)
    pi = np.array([_Phi((m - tau - 0.05) / s) for m, s in zip(mu, sd)])
    choices = {_unique_argmax(ei), _unique_argmax(pi), _unique_argmax(mu), _unique_argmax(sd)}
    assert len(choices) == 4  # the data separates the four rules
    assert _suggest(bl.EISampler, xi=0.0) == pytest.approx(_unique_argmax(ei))
    assert _suggest(bl.PISampler, xi=0.05) == pytest.approx(_unique_argmax(pi))


def test_incumbent_modes():
    with pytest.raises(ValueError):
        bl.EISampler(incumbent="best")
    mu, sd, mu_obs = _numpy_posterior()
    tau = float(_Y_OBS.max())  # "observed": the best observed target
    ei = _ei_ref(mu, sd, tau)
    ei_mean = _ei_ref(mu, sd, float(mu_obs.max()))
    assert _unique_argmax(ei) != _unique_argmax(ei_mean)  # the data separates the incumbents
    assert _suggest(bl.EISampler, incumbent="observed") == pytest.approx(_unique_argmax(ei))


# ------------------------------------------------------------------ run loop
@pytest.fixture
def created_studies(monkeypatch):
    """(the quietened harness module, a list that collects every study the harness creates)."""
    harness = _load("harness")
    harness.quiet()
    studies = []
    real = optuna.create_study
    monkeypatch.setattr(harness.optuna, "create_study",
                        lambda **kw: studies.append(real(**kw)) or studies[-1])
    return harness, studies


def test_run_bandit_trials_hold_arms_only(created_studies):
    harness, studies = created_studies
    arms = np.array([[0.2], [0.7]])
    sampler = bl.VarianceOnlySampler(
        seed=0, model=GPModel(kernel="se", lengthscale=0.2, kernel_scale=1.0, noise_var=0.01,
                              standardize=False),
        pending=IgnorePending())
    f = np.array([0.0, 1.0])
    played = harness.run_bandit(sampler, {"x": FloatDistribution(0.0, 1.0)}, arms, f, 0.0, 5,
                                noise_seed=0, record_arm=True)
    trials = studies[0].get_trials(deepcopy=False)
    proposals = [t for t in trials if t.state == TrialState.FAIL]
    complete = [t for t in trials if t.state == TrialState.COMPLETE]
    assert len(proposals) == 5 and len(complete) == 5
    for proposal, arm_trial, i in zip(proposals, complete, played):
        nearest = int(np.argmin(np.abs(arms[:, 0] - proposal.params["x"])))
        assert i == nearest and arm_trial.params["x"] == arms[i, 0] and arm_trial.value == f[i]


# ------------------------------------------------------------------ scripts
def _scripts():
    return _load("srinivas_synthetic"), _load("chowdhury_synthetic"), _load("chowdhury_benchmarks")


def test_default_presets_are_the_papers_sizes():
    srinivas, chowdhury, benchmarks = _scripts()
    assert srinivas.PRESETS["default"] == (1000, 30)  # Srinivas et al.: T = 1000, 30 draws
    assert chowdhury.PRESETS["default"][1] == 25  # Chowdhury & Gopalan: 25 trials
    assert benchmarks.PRESETS["default"][1] == 25
    for module in (srinivas, chowdhury, benchmarks):
        quick, reduced, default = (module.PRESETS[k] for k in ("quick", "reduced", "default"))
        assert quick[0] * quick[1] < reduced[0] * reduced[1] <= default[0] * default[1]


def test_command_line_modes_and_output_names():
    import argparse

    harness = _load("harness")
    presets = {"quick": (10, 2), "reduced": (50, 3), "default": (100, 30)}

    def parse(*argv):
        ap = argparse.ArgumentParser()
        harness.add_common_args(ap, presets)
        args = ap.parse_args(list(argv))
        return harness.resolve_mode(args), harness.output_name("stem", args)

    assert parse() == (("default", 100, 30), "stem")
    assert parse("--full") == (("default", 100, 30), "stem")
    assert parse("--reduced") == (("reduced", 50, 3), "stem_reduced")
    assert parse("--quick", "--T", "7") == (("quick", 7, 2), "stem_quick_T7")
    assert parse("--draws", "5") == (("default", 100, 5), "stem_d5")
    with pytest.raises(SystemExit):
        parse("--quick", "--reduced")


def test_srinivas_proposals_are_grid_points(created_studies):
    srinivas, _, _ = _scripts()
    harness, studies = created_studies
    grid, f = srinivas.draw_function(0)
    for method in srinivas.METHODS:
        regret = srinivas.run_one(harness.Task("gp-samples", method, 0, 4))
        assert regret.shape == (4,) and np.all(regret >= 0) and np.all(regret <= np.ptp(f))
    for study in studies:  # the stepped float is the 1000-point grid itself: nothing is snapped
        xs = np.array([t.params["x"] for t in study.get_trials(deepcopy=False)])
        assert np.min(np.abs(xs[:, None] - grid[None, :]), axis=1).max() < 1e-9


def test_chowdhury_problems_and_smoke_runs():
    _, chowdhury, benchmarks = _scripts()
    harness = _load("harness")
    harness.quiet()
    for kind, kernel in chowdhury.EXPERIMENTS.values():
        p = chowdhury.make_problem(kind, kernel, 0)
        assert p["arms"].shape == (100, 1) and p["B"] > 0
        assert p["R"] ** 2 == pytest.approx(0.01 * np.ptp(p["f"]))  # R^2 = 1 % of the range
    for method in chowdhury.METHOD_NAMES:
        regret = chowdhury.run_one(harness.Task("E1 RKHS, SE", method, 0, 3))
        assert regret.shape == (3,) and np.all(regret >= 0)
    for name, (d, _) in benchmarks.EXPERIMENTS.items():
        p = benchmarks.make_problem(name, 0)
        assert p["arms"].shape == (100 * d, d)
        assert p["f"].mean() == pytest.approx(0.0, abs=1e-9) and p["f"].std() == pytest.approx(1.0)
        regret = benchmarks.run_one(harness.Task(name, "IGP-UCB", 0, 3))
        assert regret.shape == (3,) and np.all(regret >= 0)
