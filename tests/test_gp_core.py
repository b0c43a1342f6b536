"""Unit tests of the GP core: kernels, exact posterior, information gain, MAP hyperparameters.

Reference values are taken from the specs (/work/shared/specs/gp_ucb.md section 9 and
/work/shared/specs/igp_ucb_gp_ts.md section 9); everything else is checked against independent
implementations (scipy Bessel functions, scikit-learn, np.linalg.solve, finite differences).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import gamma as gamma_fn
from scipy.special import kv
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, Matern

from optuna_gpbandit.gp import (
    GPParams,
    GPPosterior,
    Kernel,
    NumericalError,
    fit_hyperparameters,
    gamma_upper_bound,
    greedy_information_gain,
    information_gain,
)
from optuna_gpbandit.gp.fit import (
    MIN_NOISE_VAR,
    _BOUNDS_LOG_L,
    _BOUNDS_LOG_NOISE,
    _BOUNDS_LOG_SCALE,
    _neg_log_posterior,
    default_log_lengthscale,
)
from optuna_gpbandit.gp.input_warp import warp
from optuna_gpbandit.gp.kernels import per_dim_sq_diff
from optuna_gpbandit.gp.posterior import jittered_cholesky

KINDS = ["se", "matern52"]


# ---------------------------------------------------------------------------------------------
# helpers: an independent (loop-based) kernel and textbook posterior
# ---------------------------------------------------------------------------------------------
def ref_kernel(X1, X2, kind, lengthscales, scale, is_cat):
    """Kernel matrix from the documented formula, one pair at a time."""
    X1, X2 = np.atleast_2d(X1), np.atleast_2d(X2)
    ls = np.broadcast_to(np.asarray(lengthscales, dtype=float), (X1.shape[1],))
    K = np.empty((X1.shape[0], X2.shape[0]))
    for i, a in enumerate(X1):
        for j, b in enumerate(X2):
            r2 = 0.0
            for m in range(X1.shape[1]):
                if is_cat[m]:
                    r2 += float(a[m] != b[m]) / ls[m] ** 2
                else:
                    r2 += ((a[m] - b[m]) / ls[m]) ** 2
            if kind == "se":
                K[i, j] = scale * math.exp(-0.5 * r2)
            else:
                r = math.sqrt(5.0 * r2)
                K[i, j] = scale * (1.0 + r + r * r / 3.0) * math.exp(-r)
    return K


def textbook_posterior(X, y, Xc, kind, ls, scale, noise, is_cat):
    """mu = k^T (K + noise I)^{-1} y, Cov = K** - k^T (K + noise I)^{-1} k via np.linalg.solve."""
    K = ref_kernel(X, X, kind, ls, scale, is_cat) + noise * np.eye(len(X))
    Kx = ref_kernel(X, Xc, kind, ls, scale, is_cat)
    Kcc = ref_kernel(Xc, Xc, kind, ls, scale, is_cat)
    mu = Kx.T @ np.linalg.solve(K, y)
    cov = Kcc - Kx.T @ np.linalg.solve(K, Kx)
    return mu, cov


def mixed_data(rng, n, with_cat=True):
    """Inputs with two numeric columns in [0, 1] and (optionally) one categorical column 0..3."""
    cols = [rng.uniform(0, 1, n), rng.uniform(0, 1, n)]
    is_cat = [False, False]
    if with_cat:
        cols.insert(1, rng.integers(0, 4, n).astype(float))
        is_cat.insert(1, True)
    return np.column_stack(cols), np.array(is_cat)


def make_posterior(X, y, kind, ls, scale, noise, is_cat):
    return GPPosterior(X, y, GPParams(kind, np.asarray(ls, dtype=float), scale, noise), is_cat)


# ---------------------------------------------------------------------------------------------
# kernels
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("ls", [0.2, 0.7, 1.5])
def test_matern52_closed_form_equals_bessel_form(ls):
    nu = 2.5
    s = np.concatenate([np.linspace(1e-3, 3.0, 200), [5.0, 8.0]])
    k = Kernel("matern52", ls, 1.0, np.array([False]))
    got = k(np.zeros((1, 1)), s[:, None])[0]
    z = math.sqrt(2 * nu) * s / ls
    bessel = 2 ** (1 - nu) / gamma_fn(nu) * z**nu * kv(nu, z)
    np.testing.assert_allclose(got, bessel, rtol=0, atol=1e-8)


@pytest.mark.parametrize("ls", [0.2, 0.7, 1.5])
def test_se_closed_form(ls):
    s = np.linspace(0.0, 3.0, 101)
    k = Kernel("se", ls, 1.0, np.array([False]))
    got = k(np.zeros((1, 1)), s[:, None])[0]
    np.testing.assert_allclose(got, np.exp(-(s**2) / (2 * ls**2)), rtol=0, atol=1e-12)


@pytest.mark.parametrize("kind", KINDS)
def test_kernel_matches_reference_and_sklearn_ard(kind):
    rng = np.random.default_rng(1)
    X1, X2 = rng.uniform(0, 1, (15, 3)), rng.uniform(0, 1, (12, 3))
    ls, scale = np.array([0.3, 0.9, 2.0]), 1.7
    k = Kernel(kind, ls, scale, np.zeros(3, dtype=bool))
    got = k(X1, X2)
    np.testing.assert_allclose(got, ref_kernel(X1, X2, kind, ls, scale, [False] * 3), atol=1e-12)
    base = RBF(length_scale=ls) if kind == "se" else Matern(length_scale=ls, nu=2.5)
    np.testing.assert_allclose(got, (ConstantKernel(scale) * base)(X1, X2), atol=1e-12)


@pytest.mark.parametrize("kind", KINDS)
def test_kernel_categorical_hamming_term(kind):
    rng = np.random.default_rng(2)
    X, is_cat = mixed_data(rng, 25)
    ls, scale = np.array([0.4, 0.8, 1.3]), 2.5
    k = Kernel(kind, ls, scale, is_cat)
    np.testing.assert_allclose(k(X, X), ref_kernel(X, X, kind, ls, scale, is_cat), atol=1e-12)
    # Only the category (not its index distance) matters: choices 0 vs 1 and 0 vs 3 are equally
    # far apart.
    a = np.array([[0.5, 0.0, 0.5]])
    b1 = np.array([[0.5, 1.0, 0.5]])
    b3 = np.array([[0.5, 3.0, 0.5]])
    assert k(a, b1)[0, 0] == pytest.approx(k(a, b3)[0, 0], abs=1e-15)
    assert k(a, b1)[0, 0] < scale


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("with_cat", [False, True])
def test_kernel_diag_symmetry_psd(kind, with_cat):
    rng = np.random.default_rng(3)
    X, is_cat = mixed_data(rng, 50, with_cat)
    scale = 1.9
    k = Kernel(kind, rng.uniform(0.1, 1.0, X.shape[1]), scale, is_cat)
    K = k(X, X)
    np.testing.assert_allclose(np.diag(K), scale, rtol=0, atol=1e-12)
    np.testing.assert_allclose(K, K.T, atol=1e-14)
    assert np.all(K <= scale + 1e-12) and np.all(K > 0)
    assert np.linalg.eigvalsh(K).min() >= -1e-10


def test_kernel_psd_with_many_categories_and_short_lengthscales():
    rng = np.random.default_rng(4)
    n = 60
    X = np.column_stack([rng.integers(0, 7, n), rng.integers(0, 3, n), rng.uniform(0, 1, n)])
    is_cat = np.array([True, True, False])
    for kind in KINDS:
        for ls in (0.05, 0.5, 5.0):
            K = Kernel(kind, ls, 1.0, is_cat)(X, X)
            assert np.linalg.eigvalsh(K).min() >= -1e-10


def test_kernel_rejects_bad_arguments():
    with pytest.raises(ValueError):
        Kernel("rbf", 1.0, 1.0, np.array([False]))
    with pytest.raises(ValueError):
        Kernel("se", 0.0, 1.0, np.array([False]))
    with pytest.raises(ValueError):
        Kernel("se", 1.0, -1.0, np.array([False]))


# ---------------------------------------------------------------------------------------------
# posterior
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
def test_posterior_matches_sklearn(kind):
    rng = np.random.default_rng(10)
    X, Xc = rng.uniform(0, 1, (25, 3)), rng.uniform(-0.2, 1.2, (40, 3))
    y = rng.normal(size=25)
    ls, scale, noise = np.array([0.3, 0.5, 0.8]), 1.7, 0.05
    base = (
        RBF(length_scale=ls, length_scale_bounds="fixed")
        if kind == "se"
        else Matern(length_scale=ls, length_scale_bounds="fixed", nu=2.5)
    )
    gpr = GaussianProcessRegressor(
        kernel=ConstantKernel(scale, constant_value_bounds="fixed") * base,
        alpha=noise,
        optimizer=None,
        normalize_y=False,
    ).fit(X, y)
    mu_sk, std_sk = gpr.predict(Xc, return_std=True)
    _, cov_sk = gpr.predict(Xc, return_cov=True)

    post = make_posterior(X, y, kind, ls, scale, noise, np.zeros(3, dtype=bool))
    mu, var = post.mean_var(Xc)
    np.testing.assert_allclose(mu, mu_sk, rtol=0, atol=1e-8)
    np.testing.assert_allclose(var, std_sk**2, rtol=0, atol=1e-8)
    np.testing.assert_allclose(post.covariance(Xc), cov_sk, rtol=0, atol=1e-8)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("with_cat", [False, True])
def test_posterior_matches_textbook_solve(kind, with_cat):
    rng = np.random.default_rng(11)
    X, is_cat = mixed_data(rng, 30, with_cat)
    Xc, _ = mixed_data(rng, 50, with_cat)
    y = rng.normal(size=30)
    ls = rng.uniform(0.2, 1.0, X.shape[1])
    scale, noise = 1.3, 0.02
    post = make_posterior(X, y, kind, ls, scale, noise, is_cat)
    mu_ref, cov_ref = textbook_posterior(X, y, Xc, kind, ls, scale, noise, is_cat)
    mu, var = post.mean_var(Xc)
    np.testing.assert_allclose(mu, mu_ref, rtol=0, atol=1e-8)
    np.testing.assert_allclose(var, np.diag(cov_ref), rtol=0, atol=1e-8)
    cov = post.covariance(Xc)
    np.testing.assert_allclose(cov, cov_ref, rtol=0, atol=1e-8)
    # covariance() diagonal equals mean_var's variance
    np.testing.assert_allclose(np.diag(cov), var, rtol=0, atol=1e-10)
    assert np.all(var >= 0) and np.all(var <= scale + 1e-12)


def test_mean_var_chunking_consistent():
    # More candidates than one prediction block: results must not depend on the blocking.
    from optuna_gpbandit.gp import posterior as posterior_module

    rng = np.random.default_rng(12)
    X, y = rng.uniform(0, 1, (10, 2)), rng.normal(size=10)
    Xc = rng.uniform(0, 1, (posterior_module._CHUNK + 37, 2))
    post = make_posterior(X, y, "matern52", [0.3, 0.4], 1.0, 0.01, np.zeros(2, dtype=bool))
    mu, var = post.mean_var(Xc)
    mu_ref, cov_ref = textbook_posterior(X, y, Xc[-40:], "matern52", [0.3, 0.4], 1.0, 0.01, [0, 0])
    np.testing.assert_allclose(mu[-40:], mu_ref, atol=1e-8)
    np.testing.assert_allclose(var[-40:], np.diag(cov_ref), atol=1e-8)
    mu_single, var_single = post.mean_var(Xc[5])
    assert mu_single.shape == (1,)
    assert mu_single[0] == pytest.approx(mu[5], abs=1e-12)
    assert var_single[0] == pytest.approx(var[5], abs=1e-12)


@pytest.mark.parametrize("kind", KINDS)
def test_noiseless_interpolation(kind):
    # spec gp_ucb 9.2: sigma^2 = 1e-10, 5 well separated points, SE l = 0.2 on [0, 1]
    X = np.array([[0.05], [0.27], [0.5], [0.73], [0.95]])
    y = np.array([0.3, -1.2, 0.8, 2.0, -0.4])
    post = make_posterior(X, y, kind, [0.2], 1.0, 1e-10, np.array([False]))
    mu, var = post.mean_var(X)
    assert np.all(var < 1e-6)
    assert np.all(np.abs(mu - y) < 1e-4)
    # away from the data the variance is clearly positive
    _, var_mid = post.mean_var(np.array([[0.16], [0.39]]))
    assert np.all(var_mid > 1e-3)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("noise", [0.025, 0.5, 4.78])
def test_single_observation_formula(kind, noise):
    # spec gp_ucb 9.1: sigma_1^2(x_1) = s2 / (1 + s2), mu_1(x) = k(x_1, x) y_1 / (1 + s2)
    x1, y1 = np.array([[0.3, 0.6]]), np.array([1.7])
    is_cat = np.zeros(2, dtype=bool)
    post = make_posterior(x1, y1, kind, [0.25, 0.4], 1.0, noise, is_cat)
    mu, var = post.mean_var(x1)
    assert var[0] == pytest.approx(noise / (1 + noise), rel=1e-12)
    Xc = np.random.default_rng(0).uniform(0, 1, (20, 2))
    mu_c, var_c = post.mean_var(Xc)
    kx = ref_kernel(x1, Xc, kind, [0.25, 0.4], 1.0, is_cat)[0]
    np.testing.assert_allclose(mu_c, kx * y1[0] / (1 + noise), atol=1e-12)
    np.testing.assert_allclose(var_c, 1 - kx**2 / (1 + noise), atol=1e-12)


@pytest.mark.parametrize("n", [1, 2, 5, 12])
@pytest.mark.parametrize("scale", [1.0, 2.3])
def test_repeated_point_variance(n, scale):
    # spec gp_ucb 9.5: sigma_n^2(x) = 1 / (1/k(x, x) + n / noise)
    noise = 0.1
    X = np.tile([[0.4, 2.0]], (n, 1))
    is_cat = np.array([False, True])
    post = make_posterior(X, np.arange(n, dtype=float), "matern52", [0.3, 1.0], scale, noise, is_cat)
    _, var = post.mean_var(X[:1])
    assert var[0] == pytest.approx(1.0 / (1.0 / scale + n / noise), rel=1e-9)
    # and the mean is the shrunk average of the observations
    mu, _ = post.mean_var(X[:1])
    ybar = np.arange(n).mean()
    assert mu[0] == pytest.approx(scale * n * ybar / (scale * n + noise), rel=1e-9)


@pytest.mark.parametrize("kind", KINDS)
def test_variance_ignores_y_and_never_increases(kind):
    rng = np.random.default_rng(20)
    X, is_cat = mixed_data(rng, 15)
    Xc, _ = mixed_data(rng, 100)
    ls, scale, noise = [0.3, 0.7, 0.5], 1.4, 0.03
    prev = np.full(len(Xc), scale)
    for t in range(1, len(X) + 1):
        p1 = make_posterior(X[:t], rng.normal(size=t), kind, ls, scale, noise, is_cat)
        p2 = make_posterior(X[:t], 100 * rng.normal(size=t), kind, ls, scale, noise, is_cat)
        _, v1 = p1.mean_var(Xc)
        _, v2 = p2.mean_var(Xc)
        np.testing.assert_array_equal(v1, v2)
        assert np.all(v1 <= prev + 1e-12)
        prev = v1
    assert np.all(prev < scale)  # and it did decrease somewhere


def _fd_check_posterior_gradients(post, x, is_cat, h=1e-6):
    mu, var, dmu, dvar = post.mean_var_grad(x)
    m_ref, v_ref = post.mean_var(x[None, :])
    assert mu == pytest.approx(m_ref[0], abs=1e-12)
    assert var == pytest.approx(v_ref[0], abs=1e-12)
    for j in range(len(x)):
        if is_cat[j]:
            assert dmu[j] == 0.0 and dvar[j] == 0.0
            continue
        e = np.zeros_like(x)
        e[j] = h
        mp, vp = post.mean_var(np.stack([x + e, x - e]))
        assert dmu[j] == pytest.approx((mp[0] - mp[1]) / (2 * h), rel=1e-5, abs=1e-6)
        assert dvar[j] == pytest.approx((vp[0] - vp[1]) / (2 * h), rel=1e-5, abs=1e-6)


@pytest.mark.parametrize("kind", KINDS)
def test_mean_var_grad_matches_finite_differences(kind):
    rng = np.random.default_rng(30)
    X, is_cat = mixed_data(rng, 20)
    y = rng.normal(size=20)
    post = make_posterior(X, y, kind, [0.3, 0.8, 0.45], 1.2, 0.01, is_cat)
    for _ in range(8):
        x, _ = mixed_data(rng, 1)
        _fd_check_posterior_gradients(post, x[0], is_cat)


def test_mean_var_grad_numeric_only_and_outside_cube():
    rng = np.random.default_rng(31)
    X, y = rng.uniform(0, 1, (12, 3)), rng.normal(size=12)
    is_cat = np.zeros(3, dtype=bool)
    post = make_posterior(X, y, "se", [0.2, 0.5, 1.0], 0.8, 0.1, is_cat)
    for x in rng.uniform(-0.3, 1.3, (5, 3)):
        _fd_check_posterior_gradients(post, x, is_cat)


@pytest.mark.parametrize("cov_scale", [1.0, 1.7])
def test_sample_joint_moments(cov_scale):
    # spec igp_ucb 9.9: t = 5 observations, 30 candidates, 20000 draws
    rng = np.random.default_rng(40)
    X = rng.uniform(0, 1, (5, 2))
    y = rng.normal(size=5)
    Xc = rng.uniform(0, 1, (30, 2))
    post = make_posterior(X, y, "matern52", [0.3, 0.5], 1.0, 0.01, np.zeros(2, dtype=bool))
    mu, _ = post.mean_var(Xc)
    cov = post.covariance(Xc)
    n = 20000
    S = post.sample_joint(Xc, np.random.default_rng(7), n_samples=n, cov_scale=cov_scale)
    assert S.shape == (n, 30)
    se = cov_scale * np.sqrt(np.diag(cov) / n)
    assert np.all(np.abs(S.mean(0) - mu) <= 4 * se)
    target = cov_scale**2 * cov
    emp = np.cov(S, rowvar=False)
    assert np.linalg.norm(emp - target) / np.linalg.norm(target) < 0.05


def test_sample_joint_zero_scale_and_determinism():
    rng = np.random.default_rng(41)
    X, y = rng.uniform(0, 1, (6, 2)), rng.normal(size=6)
    Xc = rng.uniform(0, 1, (15, 2))
    post = make_posterior(X, y, "se", [0.3, 0.5], 1.0, 0.01, np.zeros(2, dtype=bool))
    mu, _ = post.mean_var(Xc)
    S0 = post.sample_joint(Xc, np.random.default_rng(0), n_samples=3, cov_scale=0.0)
    np.testing.assert_allclose(S0, np.tile(mu, (3, 1)), atol=1e-14)
    a = post.sample_joint(Xc, np.random.default_rng(5), n_samples=4)
    b = post.sample_joint(Xc, np.random.default_rng(5), n_samples=4)
    c = post.sample_joint(Xc, np.random.default_rng(6), n_samples=4)
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)


def test_sample_joint_duplicate_candidates():
    # A singular joint covariance (repeated candidate) must still sample; copies agree.
    rng = np.random.default_rng(42)
    X, y = rng.uniform(0, 1, (4, 1)), rng.normal(size=4)
    Xc = np.array([[0.1], [0.5], [0.5], [0.9]])
    post = make_posterior(X, y, "se", [0.2], 1.0, 0.01, np.array([False]))
    S = post.sample_joint(Xc, np.random.default_rng(1), n_samples=200)
    assert np.all(np.isfinite(S))
    assert np.max(np.abs(S[:, 1] - S[:, 2])) < 1e-2


@pytest.mark.parametrize("bad", ["X", "y", "Xinf"])
def test_posterior_rejects_non_finite(bad):
    rng = np.random.default_rng(50)
    X, y = rng.uniform(0, 1, (5, 2)), rng.normal(size=5)
    if bad == "X":
        X[2, 1] = np.nan
    elif bad == "y":
        y[3] = np.nan
    else:
        X[0, 0] = np.inf
    with pytest.raises((ValueError, NumericalError)):
        make_posterior(X, y, "se", [0.3, 0.3], 1.0, 0.01, np.zeros(2, dtype=bool))


def test_jittered_cholesky():
    # PD: no jitter
    A = np.array([[2.0, 0.5], [0.5, 1.0]])
    L, jitter = jittered_cholesky(A, 1.0)
    assert jitter == 0.0
    np.testing.assert_allclose(L @ L.T, A, atol=1e-14)
    # singular PSD: a small jitter within the documented cap
    L, jitter = jittered_cholesky(np.ones((4, 4)), 1.0)
    assert 0.0 < jitter <= 1e-4
    np.testing.assert_allclose(L @ L.T, np.ones((4, 4)) + jitter * np.eye(4), atol=1e-12)
    # indefinite beyond the cap
    with pytest.raises(NumericalError):
        jittered_cholesky(np.array([[1.0, 0.0], [0.0, -1.0]]), 1.0)


def test_duplicate_noiseless_points_use_jitter():
    X = np.array([[0.2], [0.2], [0.7]])
    post = make_posterior(X, np.array([1.0, 1.0, -1.0]), "se", [0.3], 1.0, 0.0, np.array([False]))
    assert post.jitter > 0.0
    assert post.effective_noise_var == pytest.approx(post.jitter)
    mu, var = post.mean_var(X)
    assert np.all(np.isfinite(mu)) and np.all(var < 1e-3)


def test_gpparams_json_roundtrip():
    p = GPParams("matern52", np.array([0.1, 2.0]), 1.5, 1e-4)
    q = GPParams.from_json(p.to_json())
    assert q.kernel == p.kernel and q.scale == p.scale and q.noise_var == p.noise_var
    np.testing.assert_array_equal(q.lengthscales, p.lengthscales)


# ---------------------------------------------------------------------------------------------
# information gain
# ---------------------------------------------------------------------------------------------
def _grid_kernel(kind="se", ls=0.2):
    x = np.linspace(0, 1, 200)[:, None]
    return x, Kernel(kind, ls, 1.0, np.array([False]))(x, x)


def test_information_gain_spec_reference_and_chain_rule():
    # spec gp_ucb 9.6: SE l = 0.2, 200-point grid, noise 0.025, 30 indices with repeats -> 14.3218
    x, K = _grid_kernel()
    noise = 0.025
    idx = np.random.default_rng(0).integers(0, 200, 30)
    assert len(np.unique(idx)) < len(idx)  # the reference design has repeats
    post = make_posterior(x[idx], np.zeros(30), "se", [0.2], 1.0, noise, np.array([False]))
    total = post.information_gain()
    assert total == pytest.approx(14.3218, abs=1e-4)
    assert information_gain(K[np.ix_(idx, idx)], noise) == pytest.approx(total, abs=1e-8)

    # sum of the increments 0.5 log(1 + sigma_{t-1}^2(x_t) / noise) computed from prefixes
    incs = []
    for t in range(30):
        if t == 0:
            var = 1.0
        else:
            p = make_posterior(x[idx[:t]], np.zeros(t), "se", [0.2], 1.0, noise, np.array([False]))
            var = p.mean_var(x[idx[t]])[1][0]
        incs.append(0.5 * np.log1p(var / noise))
    np.testing.assert_allclose(post.information_gain_increments(), incs, rtol=0, atol=1e-8)
    assert float(np.sum(incs)) == pytest.approx(total, abs=1e-8)
    # a repeated point adds strictly less than its first observation did
    first = {}
    for t, i in enumerate(idx):
        if i in first:
            assert incs[t] < incs[first[i]]
        else:
            first[i] = t


@pytest.mark.parametrize("kind", KINDS)
def test_information_gain_chain_rule_mixed(kind):
    rng = np.random.default_rng(60)
    X, is_cat = mixed_data(rng, 20)
    noise, ls, scale = 0.05, [0.3, 0.6, 0.5], 1.6
    post = make_posterior(X, rng.normal(size=20), kind, ls, scale, noise, is_cat)
    K = ref_kernel(X, X, kind, ls, scale, is_cat)
    sign, logdet = np.linalg.slogdet(np.eye(20) + K / noise)
    assert sign > 0
    assert post.information_gain() == pytest.approx(0.5 * logdet, abs=1e-8)
    assert information_gain(K, noise) == pytest.approx(0.5 * logdet, abs=1e-8)
    assert float(np.sum(post.information_gain_increments())) == pytest.approx(0.5 * logdet, abs=1e-8)
    # non-decreasing in t
    gains = [
        make_posterior(X[:t], np.zeros(t), kind, ls, scale, noise, is_cat).information_gain()
        for t in range(1, 21)
    ]
    assert np.all(np.diff(gains) > 0)


def test_information_gain_edge_cases():
    assert information_gain(np.zeros((0, 0)), 0.1) == 0.0
    assert information_gain(np.array([[1.0]]), 0.25) == pytest.approx(0.5 * np.log(5.0))
    with pytest.raises(ValueError):
        information_gain(np.array([[-2.0]]), 1.0)


def test_greedy_information_gain_spec_reference():
    # spec gp_ucb 9.7
    _, K = _grid_kernel()
    g = greedy_information_gain(K, 0.025, 200)
    assert g.shape == (200,)
    ref = {1: 1.857, 5: 8.773, 10: 11.441, 50: 17.051, 100: 19.706, 200: 22.508}
    for T, v in ref.items():
        assert g[T - 1] == pytest.approx(v, abs=1e-3)
    # first step is the prior variance of a point: 0.5 log(1 + 1/noise)
    assert g[0] == pytest.approx(0.5 * np.log1p(1 / 0.025), abs=1e-12)
    # spec 9.8: increasing, increments non-increasing
    inc = np.diff(np.concatenate([[0.0], g]))
    assert np.all(inc > 0)
    assert np.all(np.diff(inc) <= 1e-12)


@pytest.mark.parametrize("kind", KINDS)
def test_greedy_equals_information_gain_of_greedy_design(kind):
    # Re-run the greedy design by hand (max posterior variance, first index on ties).
    x, K = _grid_kernel(kind, 0.15)
    noise, T = 0.05, 15
    g = greedy_information_gain(K, noise, T)
    chosen = []
    for t in range(T):
        if chosen:
            p = make_posterior(x[chosen], np.zeros(t), kind, [0.15], 1.0, noise, np.array([False]))
            var = p.mean_var(x)[1]
        else:
            var = np.diag(K)
        chosen.append(int(np.argmax(var)))
        assert g[t] == pytest.approx(information_gain(K[np.ix_(chosen, chosen)], noise), abs=1e-8)


def test_gamma_upper_bound():
    _, K = _grid_kernel()
    noise = 0.025
    for T in (1, 10, 50):
        g = greedy_information_gain(K, noise, T)[-1]
        ub = gamma_upper_bound(K, noise, T)
        assert ub == pytest.approx(g / (1 - 1 / np.e), rel=1e-12)
        # any design of T points (multiset) gains at most the bound
        rng = np.random.default_rng(T)
        for _ in range(20):
            idx = rng.integers(0, 200, T)
            assert information_gain(K[np.ix_(idx, idx)], noise) <= ub
    assert gamma_upper_bound(K, noise, 0) == 0.0


# ---------------------------------------------------------------------------------------------
# hyperparameter fit
# ---------------------------------------------------------------------------------------------
def _fd_grad(f, theta, h=1e-6):
    g = np.empty_like(theta)
    for i in range(len(theta)):
        e = np.zeros_like(theta)
        e[i] = h
        g[i] = (f(theta + e) - f(theta - e)) / (2 * h)
    return g


def _nlp(theta_free, free, theta_all, X, y, is_cat, kind, m, warp_cols=None):
    """``_neg_log_posterior`` on ``theta = [log l, log scale, log noise]`` (no warp entries
    given: the identity warp, held fixed) or on the full ``theta`` with ``warp_cols``."""
    d = X.shape[1]
    if warp_cols is None:
        warp_cols = np.zeros(d, dtype=bool)
        theta_all = np.concatenate([theta_all, np.zeros(2 * d)])
        free = np.concatenate([free, np.zeros(2 * d, dtype=bool)])
    D = None if warp_cols.any() else per_dim_sq_diff(X, is_cat)
    return _neg_log_posterior(theta_free, free, theta_all, X, D, y, is_cat, kind, m, warp_cols)


def _nlp_data(seed: int, n: int):
    """A generator, ``n`` mixed rows, their categorical mask, normal targets and the prior
    centre of their dimension."""
    rng = np.random.default_rng(seed)
    X, is_cat = mixed_data(rng, n)
    y = rng.normal(size=n)
    return rng, X, is_cat, y, default_log_lengthscale(X.shape[1])


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    "free_mask", [None, [True, False, True, False, True], [False, False, False, True, False]]
)
def test_neg_log_posterior_gradient(kind, free_mask):
    rng, X, is_cat, y, m = _nlp_data(70, 18)
    d = X.shape[1]
    free = np.ones(d + 2, dtype=bool) if free_mask is None else np.array(free_mask)
    for _ in range(4):
        theta_all = np.concatenate(
            [rng.uniform(-1.5, 0.5, d), [rng.uniform(-0.5, 0.5)], [rng.uniform(-5, -1)]]
        )
        theta_free = theta_all[free]
        val, grad = _nlp(theta_free, free, theta_all, X, y, is_cat, kind, m)
        assert np.isfinite(val) and grad.shape == theta_free.shape

        def f(tf):
            return _nlp(tf, free, theta_all, X, y, is_cat, kind, m)[0]

        np.testing.assert_allclose(grad, _fd_grad(f, theta_free), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kind", KINDS)
def test_neg_log_posterior_gradient_with_input_warping(kind):
    # The warp's (log a, log b) of each numeric column are free with the other hyperparameters;
    # an inactive code (-0.5, outside [0, 1]) passes unwarped.
    rng, X, is_cat, y, m = _nlp_data(72, 16)
    X[:3, 0] = -0.5
    d = X.shape[1]
    warp_cols = ~is_cat
    free = np.concatenate([np.ones(d + 2, dtype=bool), warp_cols, warp_cols])
    for _ in range(4):
        theta_all = np.concatenate([rng.uniform(-1.5, 0.5, d), [rng.uniform(-0.5, 0.5)],
                                    [rng.uniform(-5, -1)], rng.uniform(-1.5, 1.5, 2 * d)])
        theta_free = theta_all[free]
        val, grad = _nlp(theta_free, free, theta_all, X, y, is_cat, kind, m, warp_cols)

        def f(tf):
            return _nlp(tf, free, theta_all, X, y, is_cat, kind, m, warp_cols)[0]

        np.testing.assert_allclose(grad, _fd_grad(f, theta_free), rtol=1e-5, atol=1e-5)
        # the value is the unwarped objective on the warped inputs, plus the warp's prior
        ab = np.exp(theta_all[d + 2:].reshape(2, d))
        Xw = warp(X, np.where(warp_cols, ab, 1.0))
        base = _nlp(theta_all[: d + 2], np.ones(d + 2, dtype=bool), theta_all[: d + 2], Xw, y,
                    is_cat, kind, m)[0]
        prior = 0.5 * np.sum(theta_all[d + 2:][free[d + 2:]] ** 2) / 0.75**2
        assert val == pytest.approx(base + prior, rel=1e-10)


@pytest.mark.parametrize("kind", KINDS)
def test_neg_log_posterior_value(kind):
    # -log p(y | theta) - log prior(theta), computed with the posterior's kernel (ref_kernel), so
    # the fit and the posterior agree on the kernel (including the categorical Hamming term).
    _, X, is_cat, y, m = _nlp_data(71, 15)
    d = X.shape[1]
    log_l, log_s, log_n = np.log([0.3, 0.9, 0.5]), np.log(1.4), np.log(0.02)
    theta = np.concatenate([log_l, [log_s, log_n]])
    free = np.ones(d + 2, dtype=bool)
    val, _ = _nlp(theta, free, theta, X, y, is_cat, kind, m)
    K = ref_kernel(X, X, kind, np.exp(log_l), 1.4, is_cat) + 0.02 * np.eye(15)
    _, logdet = np.linalg.slogdet(K)
    nll = 0.5 * y @ np.linalg.solve(K, y) + 0.5 * logdet + 7.5 * np.log(2 * np.pi)
    # documented priors: log l ~ N(m, 1), log scale ~ N(0, 1), noise_var ~ Gamma(1.1, rate 30)
    # (density of log noise_var proportional to noise^1.1 exp(-30 noise)); constants dropped
    nlp = 0.5 * np.sum((log_l - m) ** 2) + 0.5 * log_s**2 - 1.1 * log_n + 30 * 0.02
    assert val == pytest.approx(nll + nlp, abs=1e-9)
    # numeric-only: the likelihood part equals scikit-learn's log marginal likelihood
    Xn = X[:, ~is_cat]
    theta_n = np.concatenate([log_l[~is_cat], [log_s, log_n]])
    mn = default_log_lengthscale(2)
    val_n, _ = _nlp(theta_n, np.ones(4, dtype=bool), theta_n, Xn, y, np.zeros(2, dtype=bool),
                    kind, mn)
    ls_n = np.exp(log_l[~is_cat])
    base = (
        RBF(length_scale=ls_n, length_scale_bounds="fixed")
        if kind == "se"
        else Matern(length_scale=ls_n, length_scale_bounds="fixed", nu=2.5)
    )
    gpr = GaussianProcessRegressor(
        kernel=ConstantKernel(1.4, constant_value_bounds="fixed") * base, alpha=0.02, optimizer=None
    ).fit(Xn, y)
    nlp_n = 0.5 * np.sum((log_l[~is_cat] - mn) ** 2) + 0.5 * log_s**2 - 1.1 * log_n + 30 * 0.02
    assert val_n == pytest.approx(-gpr.log_marginal_likelihood_value_ + nlp_n, abs=1e-9)


@pytest.mark.parametrize("centre_sd", [0.5, 2.0])
def test_neg_log_posterior_shared_centre(monkeypatch, centre_sd):
    # The hierarchical centre (benchmarks' GP-UCB-centre swaps): log l ~ N(m 1, I + s^2 1 1^T),
    # the shared offset marginalised; value against the Gaussian's log density, gradient
    # against finite differences.
    from optuna_gpbandit.gp import fit

    rng, X, is_cat, y, m = _nlp_data(73, 14)
    d = X.shape[1]
    theta = np.concatenate([rng.uniform(-1.5, 0.5, d), [0.2], [-3.0]])
    free = np.ones(d + 2, dtype=bool)
    kind = "matern52"
    base, _ = _nlp(theta, free, theta, X, y, is_cat, kind, m)
    monkeypatch.setattr(fit, "_CENTRE_SD", centre_sd)
    val, grad = _nlp(theta, free, theta, X, y, is_cat, kind, m)
    r = theta[:d] - m
    cov = np.eye(d) + centre_sd**2 * np.ones((d, d))
    independent = 0.5 * r @ r
    assert val - base == pytest.approx(0.5 * r @ np.linalg.solve(cov, r) - independent, abs=1e-10)
    np.testing.assert_allclose(
        grad, _fd_grad(lambda t: _nlp(t, free, theta, X, y, is_cat, kind, m)[0], theta),
        rtol=1e-5, atol=1e-5)


def test_fit_other_centre_wins_only_with_a_better_fit(monkeypatch):
    # Smooth data (one long lengthscale direction): the centre l = 1 fits better than the short
    # default centre (0.25 sqrt(2) = 0.35) and wins; a far-off centre (l = 1e-3) never does.
    from optuna_gpbandit.gp import fit

    rng = np.random.default_rng(74)
    X = rng.random((20, 2))
    y = np.sin(1.5 * X[:, 0]) + 0.5 * X[:, 1]
    y = (y - y.mean()) / y.std()
    cat = np.zeros(2, dtype=bool)
    own = fit_hyperparameters(X, y, cat, "matern52")

    def value(p: GPParams, centre: float) -> float:
        theta = np.concatenate([np.log(p.lengthscales), [np.log(p.scale), np.log(p.noise_var)]])
        return _nlp(theta, np.ones(4, dtype=bool), theta, X, y, cat, "matern52", centre)[0]

    monkeypatch.setattr(fit, "_OTHER_CENTRES", (0.0,))
    unit = fit_hyperparameters(X, y, cat, "matern52")
    assert value(unit, 0.0) < value(own, default_log_lengthscale(2))
    assert np.all(unit.lengthscales > own.lengthscales)
    monkeypatch.setattr(fit, "_OTHER_CENTRES", (np.log(1e-3),))
    far = fit_hyperparameters(X, y, cat, "matern52")
    np.testing.assert_allclose(far.lengthscales, own.lengthscales)


def _assert_within_bounds(p: GPParams):
    tol = 1e-9
    assert np.all(np.isfinite(p.lengthscales)) and np.isfinite(p.scale) and np.isfinite(p.noise_var)
    lo, hi = np.exp(_BOUNDS_LOG_L)
    assert np.all(p.lengthscales >= lo * (1 - tol)) and np.all(p.lengthscales <= hi * (1 + tol))
    lo, hi = np.exp(_BOUNDS_LOG_SCALE)
    assert lo * (1 - tol) <= p.scale <= hi * (1 + tol)
    lo, hi = np.exp(_BOUNDS_LOG_NOISE)
    assert lo * (1 - tol) <= p.noise_var <= hi * (1 + tol)


@pytest.mark.parametrize("kind", KINDS)
def test_fit_within_bounds_and_improves_objective(kind):
    rng = np.random.default_rng(80)
    X, is_cat = mixed_data(rng, 30)
    y = np.sin(4 * X[:, 0]) + 0.5 * (X[:, 1] == 2) + 0.05 * rng.normal(size=30)
    y = (y - y.mean()) / y.std()
    p = fit_hyperparameters(X, y, is_cat, kind)
    assert p.kernel == kind and p.lengthscales.shape == (3,)
    _assert_within_bounds(p)
    d = X.shape[1]
    m = default_log_lengthscale(d)
    free = np.ones(d + 2, dtype=bool)
    theta_fit = np.concatenate([np.log(p.lengthscales), [np.log(p.scale), np.log(p.noise_var)]])
    theta_def = np.concatenate([np.full(d, m), [0.0, np.log(1e-3)]])
    f_fit = _nlp(theta_fit, free, theta_fit, X, y, is_cat, kind, m)[0]
    f_def = _nlp(theta_def, free, theta_def, X, y, is_cat, kind, m)[0]
    assert f_fit <= f_def
    # a warm start from the optimum cannot end worse
    p2 = fit_hyperparameters(X, y, is_cat, kind, warm_start=p)
    theta2 = np.concatenate([np.log(p2.lengthscales), [np.log(p2.scale), np.log(p2.noise_var)]])
    assert _nlp(theta2, free, theta2, X, y, is_cat, kind, m)[0] <= f_fit + 1e-6
    # and the fitted parameters give a usable posterior
    post = GPPosterior(X, y, p, is_cat)
    assert np.all(np.isfinite(post.mean_var(X)[0]))


def test_fit_extreme_data_stays_in_bounds():
    rng = np.random.default_rng(81)
    X = rng.uniform(0, 1, (25, 2))
    is_cat = np.zeros(2, dtype=bool)
    for y in (rng.normal(size=25) * 1e3, np.where(X[:, 0] > 0.5, 1.0, -1.0), np.zeros(25)):
        for kind in KINDS:
            _assert_within_bounds(fit_hyperparameters(X, y, is_cat, kind))


@pytest.mark.parametrize("kind", KINDS)
def test_fit_fixed_parameters_stay_fixed(kind):
    rng = np.random.default_rng(82)
    X, is_cat = mixed_data(rng, 20)
    y = rng.normal(size=20)
    ls = np.array([0.37, 1.1, 0.6])
    p = fit_hyperparameters(X, y, is_cat, kind, fixed_lengthscales=ls)
    np.testing.assert_allclose(p.lengthscales, ls, rtol=1e-12)
    p = fit_hyperparameters(X, y, is_cat, kind, fixed_scale=2.5)
    assert p.scale == pytest.approx(2.5, rel=1e-12)
    p = fit_hyperparameters(X, y, is_cat, kind, fixed_noise_var=0.0123)
    assert p.noise_var == pytest.approx(0.0123, rel=1e-12)
    p = fit_hyperparameters(X, y, is_cat, kind, fixed_lengthscales=0.4, fixed_scale=1.5)
    np.testing.assert_allclose(p.lengthscales, 0.4, rtol=1e-12)
    assert p.scale == pytest.approx(1.5, rel=1e-12)
    p = fit_hyperparameters(
        X, y, is_cat, kind, fixed_lengthscales=ls, fixed_scale=0.9, fixed_noise_var=0.02
    )
    np.testing.assert_allclose(p.lengthscales, ls, rtol=1e-12)
    assert p.scale == pytest.approx(0.9, rel=1e-12)
    assert p.noise_var == pytest.approx(0.02, rel=1e-12)


@pytest.mark.parametrize("kind", KINDS)
def test_fit_recovers_lengthscale_ordering(kind):
    rng = np.random.default_rng(83)
    X = rng.uniform(0, 1, (30, 1))
    is_cat = np.array([False])
    fitted = {}
    for name, freq in (("smooth", 2.0), ("wiggly", 25.0)):
        y = np.sin(freq * X[:, 0])
        y = (y - y.mean()) / y.std()
        fitted[name] = fit_hyperparameters(X, y, is_cat, kind).lengthscales[0]
    assert fitted["smooth"] > 3.0 * fitted["wiggly"]


def test_fit_ard_identifies_irrelevant_dimension():
    rng = np.random.default_rng(84)
    X = rng.uniform(0, 1, (40, 2))
    y = np.sin(6 * X[:, 0])
    y = (y - y.mean()) / y.std()
    p = fit_hyperparameters(X, y, np.zeros(2, dtype=bool), "matern52")
    assert p.lengthscales[1] > 2.0 * p.lengthscales[0]


def test_noise_floor_bounds_the_fitted_noise():
    # A smooth noise-free bowl, densely sampled: the fit takes the least noise it is allowed,
    # so the floor is what bounds it (1e-6 is a sd of a thousandth of the targets' spread).
    rng = np.random.default_rng(3)
    X = rng.uniform(size=(80, 3))
    y = np.sum((X - 0.4) ** 2, axis=1)
    y = (y - y.mean()) / y.std()
    cat = np.zeros(3, dtype=bool)
    default = fit_hyperparameters(X, y, cat, "matern52")
    low = fit_hyperparameters(X, y, cat, "matern52", min_noise_var=1e-10)
    assert default.noise_var >= MIN_NOISE_VAR * (1 - 1e-9)
    assert 1e-10 * (1 - 1e-9) <= low.noise_var < MIN_NOISE_VAR
