"""Input warping: the Kumaraswamy map, its derivatives, the warped kernel and posterior, the fit
and the samplers' ``input_warping`` argument."""

from __future__ import annotations

import logging

import numpy as np
import optuna
import pytest

from optuna_gpbandit import GPModel, GPTSSampler, GPUCBSampler, IGPUCBSampler
from optuna_gpbandit._fitted_gp import parse_state
from optuna_gpbandit._space import EncodedSpace
from optuna_gpbandit._storage import STATE, read_trial_json
from optuna_gpbandit.gp.fit import fit_hyperparameters
from optuna_gpbandit.gp.input_warp import EPS, warp, warp_slope, warp_with_grads
from optuna_gpbandit.gp.kernels import Kernel
from optuna_gpbandit.gp.posterior import GPParams, GPPosterior

AB = np.array([[2.5, 1.0, 0.4], [0.6, 1.0, 3.0]])  # column 1: identity (e.g. a categorical)


def _kumaraswamy_cdf(x, a, b):
    x = EPS + (1.0 - 2.0 * EPS) * x  # the documented squeeze into [EPS, 1 - EPS]
    return 1.0 - (1.0 - x**a) ** b


def test_warp_is_the_kumaraswamy_cdf_and_leaves_other_entries():
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(50, 3))
    X[0] = [0.0, 2.0, 1.0]
    X[1] = [-0.5, 0.3, -0.5]  # a conditional space's inactive code passes unchanged
    W = warp(X, AB)
    inside = (X[2:, [0, 2]])
    np.testing.assert_allclose(W[2:, [0, 2]], _kumaraswamy_cdf(inside, AB[0, [0, 2]],
                                                                AB[1, [0, 2]]), rtol=1e-12)
    np.testing.assert_array_equal(W[:, 1], X[:, 1])
    np.testing.assert_array_equal(W[1], X[1])
    assert W[0, 0] == pytest.approx(0.0, abs=1e-4) and W[0, 2] == pytest.approx(1.0, abs=1e-4)
    # monotone on each column, inside [0, 1], and the identity at a = b = 1
    grid = np.linspace(0.0, 1.0, 101)[:, None].repeat(3, 1)
    Wg = warp(grid, AB)
    assert np.all(np.diff(Wg, axis=0) >= 0) and Wg.min() >= 0 and Wg.max() <= 1
    assert warp(X, np.ones((2, 3))) is X and warp(X, None) is X


def test_warp_derivatives_match_finite_differences():
    rng = np.random.default_rng(1)
    X = rng.uniform(0.02, 0.98, size=(12, 3))
    cols = np.array([True, False, True])
    W, ga, gb = warp_with_grads(X, AB, cols)
    np.testing.assert_allclose(W, warp(X, np.where(cols, AB, 1.0)), atol=1e-14)
    h = 1e-6
    for g, row in ((ga, 0), (gb, 1)):
        up, dn = AB.copy(), AB.copy()
        up[row] *= np.exp(h)
        dn[row] *= np.exp(-h)
        fd = (warp(X, np.where(cols, up, 1.0)) - warp(X, np.where(cols, dn, 1.0))) / (2 * h)
        np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-8)
    assert np.all(ga[:, 1] == 0) and np.all(gb[:, 1] == 0)
    for x in X[:4]:
        fd = np.array([(warp((x + e)[None], AB) - warp((x - e)[None], AB))[0, i] / (2 * h)
                       for i, e in enumerate(np.eye(3) * h)])
        np.testing.assert_allclose(warp_slope(x, AB), fd, rtol=1e-5)


def test_slope_is_finite_at_the_bounds():
    s = warp_slope(np.array([0.0, 0.5, 1.0]), np.array([[0.1, 1.0, 10.0], [10.0, 1.0, 0.1]]))
    assert np.all(np.isfinite(s)) and np.all(s > 0)
    assert EPS > 0


@pytest.mark.parametrize("kind", ["matern52", "se"])
def test_warped_kernel_is_the_kernel_of_the_warped_inputs(kind):
    rng = np.random.default_rng(2)
    X1, X2 = rng.uniform(size=(7, 3)), rng.uniform(size=(5, 3))
    X1[:, 1] = X2[:, 1] = 0.0
    cat = np.array([False, True, False])
    ls = np.array([0.3, 0.5, 0.8])
    warped = Kernel(kind, ls, 1.3, cat, AB)(X1, X2)
    plain = Kernel(kind, ls, 1.3, cat)(warp(X1, AB), warp(X2, AB))
    np.testing.assert_allclose(warped, plain, atol=1e-14)


def test_warped_posterior_gradients_match_finite_differences():
    rng = np.random.default_rng(3)
    X = rng.uniform(size=(15, 3))
    y = np.sin(6 * X[:, 0]) + X[:, 2]
    post = GPPosterior(X, y, GPParams("matern52", np.array([0.3, 0.6, 0.4]), 1.1, 1e-3, AB),
                       np.zeros(3, dtype=bool))
    for x in rng.uniform(0.05, 0.95, size=(5, 3)):
        mu, var, dmu, dvar = post.mean_var_grad(x)
        for i in range(3):
            e = np.zeros(3)
            e[i] = 1e-6
            m2, v2 = post.mean_var(np.array([x + e, x - e]))
            assert dmu[i] == pytest.approx((m2[0] - m2[1]) / 2e-6, rel=1e-5, abs=1e-7)
            assert dvar[i] == pytest.approx((v2[0] - v2[1]) / 2e-6, rel=1e-4, abs=1e-7)


def test_fit_finds_the_warp_of_a_function_that_varies_at_one_end():
    # f varies fast near x = 1 and slowly near 0: a warp with a > 1 stretches the high end.
    rng = np.random.default_rng(4)
    X = rng.uniform(size=(40, 2))
    y = np.sin(12 * X[:, 0] ** 4) + 0.2 * X[:, 1]
    y = (y - y.mean()) / y.std()
    cat = np.zeros(2, dtype=bool)
    plain = fit_hyperparameters(X, y, cat, "matern52")
    warped = fit_hyperparameters(X, y, cat, "matern52", input_warping=True)
    assert plain.warp is None and warped.warp.shape == (2, 2)
    assert warped.warp[0, 0] > 1.5  # the high end of x_0 stretched
    # the warped model predicts held-out points better
    Xt = rng.uniform(size=(200, 2))
    yt = (np.sin(12 * Xt[:, 0] ** 4) + 0.2 * Xt[:, 1] - (np.sin(12 * X[:, 0] ** 4)
          + 0.2 * X[:, 1]).mean()) / (np.sin(12 * X[:, 0] ** 4) + 0.2 * X[:, 1]).std()
    err = [np.mean((GPPosterior(X, y, p, cat).mean_var(Xt)[0] - yt) ** 2) for p in (plain, warped)]
    assert err[1] < 0.7 * err[0]


def test_fit_keeps_the_identity_where_the_evidence_is_weak():
    # a stationary function with noise: a warp cannot gain the BIC penalty, the identity is kept
    rng = np.random.default_rng(6)
    X = rng.uniform(size=(30, 2))
    y = np.sin(6 * X[:, 0]) + 0.1 * rng.normal(size=30)
    p = fit_hyperparameters(X, (y - y.mean()) / y.std(), np.zeros(2, dtype=bool), "matern52",
                            input_warping=True)
    np.testing.assert_array_equal(p.warp, np.ones((2, 2)))
    # and the fit then equals the stationary one
    q = fit_hyperparameters(X, (y - y.mean()) / y.std(), np.zeros(2, dtype=bool), "matern52")
    np.testing.assert_allclose(p.lengthscales, q.lengthscales)


def test_fit_never_warps_categorical_columns():
    rng = np.random.default_rng(5)
    X = np.column_stack([rng.uniform(size=30), rng.integers(0, 3, 30)])
    y = np.sin(8 * X[:, 0] ** 3) + (X[:, 1] == 1)
    p = fit_hyperparameters(X, (y - y.mean()) / y.std(), np.array([False, True]), "se",
                            input_warping=True)
    assert np.all(p.warp[:, 1] == 1.0)
    lo, hi = 0.1, 10.0
    assert np.all((p.warp[:, 0] >= lo * (1 - 1e-9)) & (p.warp[:, 0] <= hi * (1 + 1e-9)))


def test_params_json_roundtrip_and_corrupt_warp_is_ignored(caplog):
    p = GPParams("matern52", np.array([0.2, 0.4]), 1.5, 1e-3, np.array([[2.0, 1.0], [0.5, 1.0]]))
    q = GPParams.from_json(p.to_json())
    np.testing.assert_array_equal(q.warp, p.warp)
    assert "warp" not in GPParams("se", np.array([0.2]), 1.0, 1e-3).to_json()
    space = EncodedSpace({"x": optuna.distributions.FloatDistribution(0, 1),
                          "y": optuna.distributions.FloatDistribution(0, 1)})
    state = {"names": space.names, "n_fit": 10, "gp": p.to_json()}
    assert parse_state(state, space) is not None
    for bad in ([[2.0, 1.0]], [[2.0, -1.0], [0.5, 1.0]], [[2.0, float("nan")], [0.5, 1.0]]):
        state["gp"]["warp"] = bad
        with caplog.at_level(logging.WARNING):
            assert parse_state(state, space) is None
        assert "corrupt stored GP state" in caplog.text


def _objective(trial: optuna.Trial) -> float:
    x = trial.suggest_float("x", 1e-4, 1.0, log=True)
    c = trial.suggest_categorical("c", ["a", "b"])
    n = trial.suggest_int("n", 1, 20)
    return (np.log10(x) + 2.0) ** 2 + (c == "b") + 0.01 * n


@pytest.mark.parametrize("cls", [GPUCBSampler, GPTSSampler, IGPUCBSampler])
def test_samplers_store_the_warp_only_when_asked(cls):
    for flag in (True, False):
        study = optuna.create_study(sampler=cls(seed=0, model=GPModel(input_warping=flag)))
        study.optimize(_objective, n_trials=12)
        states = [read_trial_json(t, STATE) for t in study.trials[5:]]
        states = [s for s in states if isinstance(s, dict) and "gp" in s]
        gp = [s["gp"] for s in states]
        assert gp, "no model state stored"
        if flag:
            w = np.asarray(gp[-1]["warp"])
            c = states[-1]["names"].index("c")
            assert w.shape == (2, 3) and np.all(w[:, c] == 1.0)  # categorical: never warped
        else:
            assert all("warp" not in g for g in gp)


@pytest.mark.parametrize("bad", [1, "yes", None])
def test_input_warping_must_be_a_bool(bad):
    with pytest.raises(ValueError, match="input_warping"):
        GPModel(input_warping=bad)
    with pytest.raises(ValueError, match="model must be a GPModel instance"):
        GPUCBSampler(model=bad)


def test_a_fixed_lengthscale_is_never_warped():
    # the papers' setting (a fixed kernel) stays one argument away: no warp is fitted on top
    study = optuna.create_study(sampler=GPUCBSampler(seed=0, model=GPModel(
        kernel="se", lengthscale=0.2, kernel_scale=1.0)))
    study.optimize(_objective, n_trials=10)
    states = [read_trial_json(t, STATE) for t in study.trials[5:]]
    gp = [s["gp"] for s in states if isinstance(s, dict) and "gp" in s]
    assert gp and all("warp" not in g for g in gp)
    assert all(g["lengthscales"] == [0.2] * 3 for g in gp)
