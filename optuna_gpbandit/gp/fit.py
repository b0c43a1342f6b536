"""Hyperparameters by maximum a posteriori (MAP) marginal likelihood.

Free parameters are optimised in log space, ``theta = [log l_1..l_d, log scale, log noise_var]``,
with L-BFGS-B and analytic gradients:

    d log p(y | theta) / d theta_j = 0.5 * tr((alpha alpha^T - K^{-1}) dK/dtheta_j)

Priors (on standardised targets, encoded unit-cube inputs) [design choice, documented]:

* ``log l_i ~ N(log(0.25 sqrt(d)), 1)``: lengthscales of order a quarter of the distance between
  random points in the unit cube, which grows with sqrt(d). (The earlier centre 0.5 sqrt(d) let
  the fit call two of Hartmann-6's six parameters irrelevant (lengthscales 5-8) and GP-UCB stall
  in a local minimum: 6 of 20 seeds solved against 13 of 20; see docs/benchmarks.md);
* ``log scale ~ N(0, 1)``: the standardised targets have unit variance;
* ``noise_var ~ Gamma(1.1, 30)``: favours small noise (most tuning objectives are nearly
  deterministic) while allowing any level the data demand.

Each fit starts from a default point and, when given, from a warm start (the previous fit); the
better optimum wins. Any parameter can be held fixed (then it is not optimised).
"""

from __future__ import annotations

import numpy as np

from optuna_gpbandit.gp.kernels import per_dim_sq_diff, profile_and_grad
from optuna_gpbandit.gp.posterior import GPParams

MIN_NOISE_VAR = 1e-6
_BOUNDS_LOG_L = (np.log(1e-3), np.log(1e3))
_BOUNDS_LOG_SCALE = (np.log(1e-3), np.log(1e3))
_BOUNDS_LOG_NOISE = (np.log(MIN_NOISE_VAR), np.log(10.0))
_NOISE_SHAPE, _NOISE_RATE = 1.1, 30.0


def _neg_log_posterior(
    theta_free: np.ndarray,
    free: np.ndarray,
    theta_all: np.ndarray,
    D: np.ndarray,
    y: np.ndarray,
    kind: str,
    prior_mean_log_l: float,
) -> tuple[float, np.ndarray]:
    from scipy.linalg import cho_solve, cholesky
    from scipy.linalg.lapack import dpotri
    theta = theta_all.copy()
    theta[free] = theta_free
    d = D.shape[2]
    inv_l2 = np.exp(-2.0 * theta[:d])
    scale, noise = np.exp(theta[d]), np.exp(theta[d + 1])
    n = y.shape[0]

    r2 = D @ inv_l2
    kern, dk_dr2 = profile_and_grad(kind, r2)
    kern *= scale
    dk_dr2 *= scale
    K = kern.copy()
    K[np.diag_indices(n)] += noise
    try:
        L = cholesky(K, lower=True, check_finite=False)
    except np.linalg.LinAlgError:
        return 1e25, np.zeros_like(theta_free)
    alpha = cho_solve((L, True), y, check_finite=False)
    Kinv, info = dpotri(L, lower=1)  # lower triangle of K^{-1}
    if info != 0:
        return 1e25, np.zeros_like(theta_free)
    Kinv = np.tril(Kinv) + np.tril(Kinv, -1).T
    nll = 0.5 * y @ alpha + np.log(np.diag(L)).sum() + 0.5 * n * np.log(2 * np.pi)

    W = np.outer(alpha, alpha) - Kinv  # d nll/dK = -0.5 W
    # dK/dlog l_i = dk/dr2 * (-2) * D_i / l_i^2
    g_l = ((W * dk_dr2).reshape(-1) @ D.reshape(n * n, d)) * inv_l2
    g_scale = -0.5 * np.sum(W * kern)
    g_noise = -0.5 * noise * np.trace(W)
    grad = np.concatenate([g_l, [g_scale, g_noise]])

    # Negative log prior and its gradient (in log space).
    log_l = theta[:d]
    nlp = 0.5 * np.sum((log_l - prior_mean_log_l) ** 2) + 0.5 * theta[d] ** 2
    nlp += -_NOISE_SHAPE * theta[d + 1] + _NOISE_RATE * noise
    grad[:d] += log_l - prior_mean_log_l
    grad[d] += theta[d]
    grad[d + 1] += -_NOISE_SHAPE + _NOISE_RATE * noise
    return float(nll + nlp), grad[free]


def default_log_lengthscale(d: int) -> float:
    """Prior median of ``log l``: ``log(0.25 * sqrt(d))``."""
    return float(np.log(0.25 * np.sqrt(max(d, 1))))


def fit_hyperparameters(
    X: np.ndarray,
    y: np.ndarray,
    is_categorical: np.ndarray,
    kernel: str,
    *,
    fixed_lengthscales: np.ndarray | None = None,
    fixed_scale: float | None = None,
    fixed_noise_var: float | None = None,
    warm_start: GPParams | None = None,
    restart: bool = True,
    maxiter: int = 200,
    prior_dim: int | None = None,
) -> GPParams:
    """MAP estimate of the kernel hyperparameters for data ``(X, y)``.

    Parameters
    ----------
    X, y
        Encoded inputs ``(n, d)`` and standardised targets ``(n,)``.
    is_categorical
        Mask of categorical dimensions.
    kernel
        Kernel name.
    fixed_lengthscales, fixed_scale, fixed_noise_var
        Values to hold fixed instead of fitting.
    warm_start
        A previous estimate used as an additional starting point.
    restart
        Also start from the prior's default point when a warm start is given (the better optimum
        wins). ``False`` starts from the warm start only (faster; it may keep a local optimum).
    maxiter
        L-BFGS-B iteration cap per start.
    prior_dim
        The ``d`` of the lengthscale prior (default: the columns of ``X``); a conditional
        space's points vary in the columns of their branch only, so it passes the largest
        branch's.
    """
    from scipy.optimize import minimize
    n, d = X.shape
    mean_log_l = default_log_lengthscale(d if prior_dim is None else prior_dim)
    theta0 = np.concatenate([np.full(d, mean_log_l), [0.0, np.log(1e-3)]])
    free = np.ones(d + 2, dtype=bool)
    if fixed_lengthscales is not None:
        theta0[:d] = np.log(np.broadcast_to(fixed_lengthscales, (d,)))
        free[:d] = False
    if fixed_scale is not None:
        theta0[d] = np.log(fixed_scale)
        free[d] = False
    if fixed_noise_var is not None:
        theta0[d + 1] = np.log(fixed_noise_var)
        free[d + 1] = False

    def to_params(theta: np.ndarray) -> GPParams:
        return GPParams(kernel, np.exp(theta[:d]), float(np.exp(theta[d])), float(np.exp(theta[d + 1])))

    if not free.any() or n == 0:
        return to_params(theta0)

    bounds = np.array([_BOUNDS_LOG_L] * d + [_BOUNDS_LOG_SCALE, _BOUNDS_LOG_NOISE])[free]
    starts = [theta0[free]]
    if warm_start is not None and warm_start.kernel == kernel and len(warm_start.lengthscales) == d:
        w = np.concatenate(
            [np.log(warm_start.lengthscales), [np.log(warm_start.scale), np.log(warm_start.noise_var)]]
        )
        w = np.clip(w[free], bounds[:, 0], bounds[:, 1])
        starts = [theta0[free], w] if restart else [w]

    D = per_dim_sq_diff(X, is_categorical)
    best_theta, best_val = theta0[free], np.inf
    for start in starts:
        res = minimize(
            _neg_log_posterior,
            start,
            args=(free, theta0, D, y, kernel, mean_log_l),
            jac=True,
            method="L-BFGS-B",
            bounds=bounds,
            options={"maxiter": maxiter},
        )
        if np.isfinite(res.fun) and res.fun < best_val:
            best_theta, best_val = res.x, res.fun
    theta = theta0.copy()
    theta[free] = best_theta
    return to_params(theta)
