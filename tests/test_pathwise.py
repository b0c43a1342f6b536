"""GP-TS's path draw: pathwise conditioning on a random-Fourier-feature prior draw."""

from __future__ import annotations

import numpy as np
import optuna
import pytest
from optuna.distributions import CategoricalDistribution, FloatDistribution

from optuna_gpbandit import CandidateDraw, GPTSSampler, PathDraw
from optuna_gpbandit._space import EncodedSpace
from optuna_gpbandit._storage import STATE, read_trial_json
from optuna_gpbandit.acquisition.pathwise import SamplePath
from optuna_gpbandit.gp.posterior import GPParams, GPPosterior

SPACE = EncodedSpace({"a": FloatDistribution(0, 1), "c": CategoricalDistribution(["x", "y", "z"]),
                      "b": FloatDistribution(0, 1)})


WARP = np.array([[2.5, 1.0, 0.6], [0.7, 1.0, 1.8]])  # (a, b) per column; categorical: none


def _posterior(kernel: str, noise: float = 0.01, warp: np.ndarray | None = None) -> GPPosterior:
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.uniform(size=8), rng.integers(0, 3, 8), rng.uniform(size=8)])
    y = np.sin(5 * X[:, 0]) + 0.3 * X[:, 1]
    return GPPosterior(X, y, GPParams(kernel, np.array([0.3, 0.7, 0.5]), 1.3, noise, warp),
                       SPACE.is_categorical)


def _queries(n: int = 6) -> np.ndarray:
    rng = np.random.default_rng(1)
    return np.column_stack([rng.uniform(size=n), rng.integers(0, 3, n), rng.uniform(size=n)])


@pytest.mark.parametrize("kernel, warp", [("matern52", None), ("se", None), ("matern52", WARP)])
def test_draws_have_the_posterior_mean_and_covariance(kernel, warp):
    post = _posterior(kernel, warp=warp)
    Q = _queries()
    mu, C = post.mean_cov(Q)
    scale = 1.5
    draws = np.array([SamplePath(post, SPACE, scale, np.random.default_rng(s), 2048).values(Q)
                      for s in range(4000)])
    # Monte Carlo error of 4000 draws: sd of a covariance entry <= scale^2 var sqrt(2 / 4000).
    assert np.abs(draws.mean(0) - mu).max() < 0.05 * scale
    assert np.abs(np.cov(draws.T) - scale**2 * C).max() < 0.1 * scale**2


def test_zero_scale_is_the_posterior_mean():
    post = _posterior("matern52")
    Q = _queries()
    path = SamplePath(post, SPACE, 0.0, np.random.default_rng(3))
    np.testing.assert_allclose(path.values(Q), post.mean_var(Q)[0], atol=1e-12)
    np.testing.assert_allclose(path.value_grad(Q[0])[0], post.mean_var(Q[:1])[0][0], atol=1e-12)


@pytest.mark.parametrize("kernel", ["matern52", "se"])
@pytest.mark.parametrize("warp", [None, WARP])
def test_gradient_matches_finite_differences(kernel, warp):
    path = SamplePath(_posterior(kernel, warp=warp), SPACE, 0.8, np.random.default_rng(5))
    x = _queries(1)[0]
    value, grad = path.value_grad(x)
    # batches take the cosines in single precision: the same function to ~1e-6
    assert value == pytest.approx(path.values(x[None, :])[0], abs=1e-5)
    for i in (0, 2):
        e = np.zeros(3)
        e[i] = 1e-6
        fd = (path.value_grad(x + e)[0] - path.value_grad(x - e)[0]) / 2e-6
        assert grad[i] == pytest.approx(fd, rel=1e-5, abs=1e-7)
    assert grad[1] == 0.0  # categorical column


def test_noise_free_draw_interpolates_the_data():
    post = _posterior("matern52", noise=1e-8)
    path = SamplePath(post, SPACE, 1.0, np.random.default_rng(2))
    np.testing.assert_allclose(path.values(post.X), post.y, atol=1e-3)


def test_bad_scale_is_an_error():
    with pytest.raises(ValueError, match="scale"):
        SamplePath(_posterior("se"), SPACE, -1.0, np.random.default_rng(0))


def _objective(trial: optuna.Trial) -> float:
    x = trial.suggest_float("x", -2, 2)
    y = trial.suggest_float("y", -2, 2)
    return (x - 0.7) ** 2 + (y + 0.4) ** 2


def test_path_draw_is_the_default_and_is_reproducible():
    runs = []
    for _ in range(2):
        study = optuna.create_study(sampler=GPTSSampler(seed=4))
        study.optimize(_objective, n_trials=12)
        runs.append([t.params for t in study.trials])
        assert read_trial_json(study.trials[-1], STATE)["draw"] == "path"
    assert runs[0] == runs[1]


def test_path_draw_beats_random_search():
    best = {}
    for name, sampler in (("ts", GPTSSampler(seed=0)), ("random", optuna.samplers.RandomSampler(0))):
        study = optuna.create_study(sampler=sampler)
        study.optimize(_objective, n_trials=25)
        best[name] = study.best_value
    assert best["ts"] < 0.1 * best["random"]


def test_candidates_draw_and_errors():
    study = optuna.create_study(sampler=GPTSSampler(seed=1, draw=CandidateDraw()))
    study.optimize(_objective, n_trials=8)
    assert "draw" not in read_trial_json(study.trials[-1], STATE)
    # draw= takes PathDraw(...) or CandidateDraw(); a name is refused, the old ones too
    for bad in ("grid", "candidates", "path", PathDraw):
        with pytest.raises(ValueError, match="draw must be PathDraw"):
            GPTSSampler(draw=bad)
    with pytest.raises(ValueError, match="n_features"):
        PathDraw(n_features=0)


def _by_category(X: np.ndarray) -> np.ndarray:
    """A prior mean constant on pieces of the space (one level per category, as per branch)."""
    return np.array([-2.0, 0.5, 1.0])[np.atleast_2d(X)[:, 1].astype(int)]


def test_a_prior_mean_is_the_gp_of_the_residuals_plus_the_mean():
    base = _posterior("matern52")
    post = GPPosterior(base.X, base.y, base.params, SPACE.is_categorical,
                       prior_mean=_by_category)
    resid = GPPosterior(base.X, base.y - _by_category(base.X), base.params,
                        SPACE.is_categorical)
    Q = _queries()
    mu, var = post.mean_var(Q)
    mu_r, var_r = resid.mean_var(Q)
    np.testing.assert_allclose(mu, mu_r + _by_category(Q), atol=1e-12)
    np.testing.assert_allclose(var, var_r, atol=1e-12)
    assert post.mean_var_grad(Q[0])[0] == pytest.approx(mu[0], abs=1e-12)
    np.testing.assert_allclose(post.mean_cov(Q)[0], mu, atol=1e-12)
    # far from the data the mean reverts to the piece's level, not to 0
    assert post.mean_var(np.array([[50.0, 0, 50.0]]))[0][0] == pytest.approx(-2.0, abs=1e-6)
    path = SamplePath(post, SPACE, 0.0, np.random.default_rng(3))
    np.testing.assert_allclose(path.values(Q), mu, atol=1e-12)
    assert path.value_grad(Q[0])[0] == pytest.approx(mu[0], abs=1e-12)
