"""What failed rows do once the GP is fitted: the failed trials' extra noise and failing
region (the censoring width bonus of pending points is :meth:`Censoring.width_bonus
<optuna_gpbandit.pending.Censoring.width_bonus>`).

The rows themselves are built before the model (:mod:`optuna_gpbandit.pending`,
:mod:`optuna_gpbandit.failures`, :mod:`optuna_gpbandit._observations`); these functions read
them back together with the fitted hyperparameters or posterior.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import numpy as np

from optuna_gpbandit.gp.kernels import Kernel
from optuna_gpbandit.gp.posterior import GPParams, GPPosterior, NumericalError

if TYPE_CHECKING:
    from optuna_gpbandit._observations import Observations

IMPUTED_NOISE = 0.1  # extra noise of an imputed row at failure share 1/2, times the kernel scale
REGION_SHARE = 0.5  # failure share from which a failed trial's neighbourhood is avoided
NEIGHBOURS = 5  # nearest observed rows that give a failed trial's failure share


def failure_share(obs: Observations, params: GPParams, is_categorical: np.ndarray) -> np.ndarray:
    """Share of failures around each imputed row of ``obs``.

    Among its ``NEIGHBOURS`` nearest other observed rows (distances scaled by the GP's
    lengthscales), with one pseudo-observation at the study's overall failure share: near 1
    inside a failing region or on its boundary, near the overall share for a failure among good
    results (a random crash). Nearest neighbours rather than kernel weights: a smooth objective
    has lengthscales much longer than the width of its failure boundary.
    """
    seen = np.flatnonzero(obs.observed)  # observed rows come first: indices 0 .. n_obs - 1
    failed = obs.imputed[seen].astype(float)
    idx = np.flatnonzero(obs.imputed)
    closeness = Kernel(params.kernel, params.lengthscales, 1.0, is_categorical, params.warp)(
        obs.X[idx], obs.X[seen])
    closeness[np.arange(idx.size), idx] = -np.inf  # not itself
    k = min(NEIGHBOURS, seen.size - 1)
    if k < 1:
        return np.full(idx.size, failed.mean())
    near = np.argpartition(-closeness, k - 1, axis=1)[:, :k]
    return (failed[near].sum(axis=1) + failed.mean()) / (k + 1.0)


def imputed_noise(obs: Observations, params: GPParams, is_categorical: np.ndarray
                  ) -> np.ndarray | None:
    """Extra noise variance of each row [design choice]: none on real observations; on an
    imputed row, ``IMPUTED_NOISE * scale * (1 - p) / p`` for its :func:`failure_share` ``p``.

    A failure among failures gets little noise, so the mean there drops to the imputed worst
    value; a failure among good results gets much, so it only dents the mean and does not push
    the search away from a good region.
    """
    if not obs.imputed.any():
        return None
    p = failure_share(obs, params, is_categorical)
    noise = np.zeros(obs.n)
    noise[obs.imputed] = IMPUTED_NOISE * params.scale * np.minimum(
        (1.0 - p) / np.maximum(p, 1e-3), 100.0)
    return noise


def failing_region(obs: Observations, params: GPParams, is_categorical: np.ndarray,
                   share: np.ndarray | None = None) -> Callable[[np.ndarray], np.ndarray] | None:
    """``region(X) -> mask`` of points whose nearest observed point (in the GP's lengthscales)
    is a failed trial inside a failing region (:func:`failure_share` ``>= REGION_SHARE``), or
    ``None`` if there is none.

    The maximiser avoids these points: near a failing region's boundary the GP mean, which must
    be smooth, cannot drop as fast as the objective does, and without this rule UCB would probe
    just past the boundary again and again. Random failures (low share) exclude nothing but
    their own point. ``share``: :func:`failure_share` if the caller has it already.
    """
    if not obs.imputed.any():
        return None
    if share is None:
        share = failure_share(obs, params, is_categorical)
    region = np.zeros(obs.n, dtype=bool)
    region[obs.imputed] = share >= REGION_SHARE
    seen = obs.observed
    if not region[seen].any():
        return None
    kernel = Kernel(params.kernel, params.lengthscales, 1.0, is_categorical, params.warp)
    W_seen, bad = kernel.warped(obs.X[seen]), region[seen]  # warped once, not per call

    def mask(X: np.ndarray) -> np.ndarray:
        return bad[np.argmax(kernel.of_warped(kernel.warped(np.atleast_2d(X)), W_seen), axis=1)]

    return mask


FAILURE_RISK = 0.3
"""Predicted failure probability from which the maximiser avoids a point [design choice]."""


def failure_risk_region(obs: Observations, params: GPParams, is_categorical: np.ndarray,
                        share: np.ndarray | None = None
                        ) -> Callable[[np.ndarray], np.ndarray] | None:
    """``region(X) -> mask`` of points whose predicted probability of failing is at least
    ``FAILURE_RISK``, or ``None`` (fewer than two failed rows, nothing but failures, or no
    failed row among failures: :func:`failure_share` below ``REGION_SHARE`` for all, with the
    objective GP's ``params``).

    The probability is a GP on the observed rows' outcomes (1: failed, 0: completed) with its
    own MAP hyperparameters, so it learns *where* trials fail, not only which points did: along
    a boundary of a diverging region (a learning rate too large, for any weight decay) it
    extends to points never tried, with a lengthscale of its own that sharpens as failures
    and successes meet at the boundary. Random failures (a crash anywhere) give a low, flat
    prediction (their share); and while no failure has failed neighbours the classifier is
    not used at all, since a GP fitted to a few isolated 1s puts bumps around them that
    cost regret (Hartmann-3 with 10 % random crashes: GP-UCB's median regret 1e-3 with them,
    4e-6 without) [design choice:
    least-squares classification, the posterior mean of the 0/1 outcomes; cheaper than a
    probit GP and as good a boundary for a threshold]. ``share``: :func:`failure_share` if
    the caller has it already.
    """
    from optuna_gpbandit.gp.fit import fit_hyperparameters

    seen = np.flatnonzero(obs.observed)
    failed = obs.imputed[seen].astype(float)
    if failed.sum() < 2 or failed.all():
        return None
    if share is None:
        share = failure_share(obs, params, is_categorical)
    if not np.any(share >= REGION_SHARE):
        return None  # isolated failures only (random crashes)
    base, spread = float(failed.mean()), float(failed.std())
    z = (failed - base) / spread
    X = obs.X[seen]
    try:
        fitted = fit_hyperparameters(X, z, is_categorical, params.kernel)
        post = GPPosterior(X, z, fitted, is_categorical)
    except (NumericalError, ValueError):
        return None

    def mask(Xq: np.ndarray) -> np.ndarray:
        return post.mean_var(np.atleast_2d(Xq))[0] * spread + base >= FAILURE_RISK

    return mask
