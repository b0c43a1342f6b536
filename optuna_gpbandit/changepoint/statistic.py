"""The CPD statistic of Algorithm 1 on a fixed set of integration points (:class:`Domain`,
:func:`cpd_statistic`)."""

from __future__ import annotations

import math
import threading
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from optuna_gpbandit.changepoint._checks import _check_int, _check_positive
from optuna_gpbandit.changepoint.settings import CPDSettings
from optuna_gpbandit.gp.kernels import Kernel
from optuna_gpbandit.gp.posterior import GPParams, GPPosterior

_GRID_POINTS_1D = 1000


def _default_n_points(d: int) -> int:
    if d == 1:
        return _GRID_POINTS_1D
    return 1 << int(math.ceil(math.log2(max(1024, 256 * d))))


@dataclass(frozen=True, eq=False, init=False)
class Domain:
    """Fixed integration points ``Z`` of the L2 distance, in encoded coordinates.

    ``Delta^2`` is estimated by ``mean_z (mu_1(z) - mu_2(z))^2`` over ``points`` (a Monte-Carlo /
    quasi-Monte-Carlo estimate of the mean under the uniform distribution of the encoded domain).
    The points never depend on a sampler seed (spec 9.3, pitfall 12).

    Attributes
    ----------
    points
        ``(M, d)`` encoded points.
    is_categorical
        ``(d,)`` mask of categorical columns (Hamming term in the kernel).
    """

    points: np.ndarray
    is_categorical: np.ndarray

    def __init__(self, points: np.ndarray, is_categorical: np.ndarray | None = None) -> None:
        # written out (not the dataclass's) so the mask may be omitted (``None``: no categorical
        # column) and still always be an array once built
        Z = np.asarray(points, dtype=float)
        if Z.ndim != 2 or Z.shape[0] == 0 or Z.shape[1] == 0 or not np.all(np.isfinite(Z)):
            raise ValueError("Domain points must be a finite, non-empty (M, d) array.")
        mask = (
            np.zeros(Z.shape[1], dtype=bool)
            if is_categorical is None
            else np.asarray(is_categorical, dtype=bool)
        )
        if mask.shape != (Z.shape[1],):
            raise ValueError(f"is_categorical must have shape ({Z.shape[1]},), got {mask.shape}.")
        Z.setflags(write=False)
        mask.setflags(write=False)
        object.__setattr__(self, "points", Z)
        object.__setattr__(self, "is_categorical", mask)

    @property
    def d(self) -> int:
        return int(self.points.shape[1])

    @classmethod
    def unit_cube(cls, d: int, n_points: int | None = None, seed: int = 0) -> Domain:
        """Points of ``[0, 1]^d``: for ``d = 1`` an evenly spaced grid (default 1000 points, as in
        the paper's experiments); else a scrambled Sobol set of a fixed ``seed`` (default
        ``max(1024, 256 d)`` rounded up to a power of two)."""
        from scipy.stats import qmc
        d = _check_int("d", d, 1)
        m = _default_n_points(d) if n_points is None else _check_int("n_points", n_points, 1)
        if d == 1:
            return cls(np.linspace(0.0, 1.0, m)[:, None])
        with warnings.catch_warnings():  # balance warning for m not a power of two
            warnings.simplefilter("ignore", UserWarning)
            Z = qmc.Sobol(d, scramble=True, seed=seed).random(m)
        return cls(Z)

    @classmethod
    def from_space(cls, space: Any, n_points: int | None = None, seed: int = 0) -> Domain:
        """Points of an :class:`~optuna_gpbandit._space.EncodedSpace`: the 1-D grid for one
        continuous column, otherwise ``space.sobol(M, seed)`` (valid values: discrete columns on
        their grid, categorical columns uniform over the choice indices)."""
        d = _check_int("space.d", space.d, 1)
        m = _default_n_points(d) if n_points is None else _check_int("n_points", n_points, 1)
        if d == 1 and bool(np.all(space.is_continuous)):
            return cls(np.linspace(0.0, 1.0, m)[:, None], np.asarray(space.is_categorical))
        return cls(space.sobol(m, seed), np.asarray(space.is_categorical))


_DOMAIN_CACHE: dict[int, Domain] = {}
_DOMAIN_LOCK = threading.Lock()


def _unit_domain(d: int) -> Domain:
    with _DOMAIN_LOCK:
        if d not in _DOMAIN_CACHE:
            _DOMAIN_CACHE[d] = Domain.unit_cube(d)
        return _DOMAIN_CACHE[d]


def _check_xy(name: str, X: Any, y: Any, d: int | None) -> tuple[np.ndarray, np.ndarray]:
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    if X.ndim != 2:
        raise ValueError(f"{name}: X must be a 2-D (n, d) array, got shape {X.shape}.")
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise ValueError(
            f"{name}: y must be 1-D with one value per row of X ({X.shape[0]}), "
            f"got shape {y.shape}."
        )
    if d is not None and X.shape[1] != d:
        raise ValueError(f"{name}: X has {X.shape[1]} columns, the domain has {d}.")
    if not (np.all(np.isfinite(X)) and np.all(np.isfinite(y))):
        raise ValueError(f"{name}: X and y must be finite.")
    return X, y


def _half_alpha(
    X: np.ndarray, y: np.ndarray, params: GPParams, ridge: float, mask: np.ndarray
) -> np.ndarray:
    """Weights ``(K + lambda I)^{-1} y`` (unit-variance kernel) through :class:`GPPosterior`."""
    p = GPParams(params.kernel, params.lengthscales, params.scale, ridge * params.scale)
    return GPPosterior(X, y, p, mask).alpha


def _window_alpha(
    K: np.ndarray,
    idx: slice,
    X: np.ndarray,
    y: np.ndarray,
    params: GPParams,
    ridge: float,
    mask: np.ndarray,
) -> np.ndarray:
    """:func:`_half_alpha` of the rows ``idx`` from a precomputed Gram matrix ``K`` (the scan's
    fast path: same linear system, without rebuilding the kernel matrix for every window). Falls
    back to :class:`GPPosterior` (and its jitter) if the factorisation fails."""
    from scipy.linalg.lapack import dposv
    A = K[idx, idx].copy()
    A.flat[:: A.shape[0] + 1] += ridge * params.scale
    _, alpha, info = dposv(A, y[idx], lower=1)  # Cholesky solve (LAPACK), no wrapper overhead
    if info != 0:
        return _half_alpha(X[idx], y[idx], params, ridge, mask)
    return alpha


def _mean_sq_diff(
    K_old: np.ndarray, a_old: np.ndarray, K_new: np.ndarray, a_new: np.ndarray
) -> float:
    diff = K_old @ a_old
    diff -= K_new @ a_new
    return float(np.mean(diff * diff))


def cpd_statistic(
    X_old: np.ndarray,
    y_old: np.ndarray,
    X_new: np.ndarray,
    y_new: np.ndarray,
    *,
    ridge: float,
    params: GPParams | None = None,
    domain: Domain | None = None,
) -> float:
    """The CPD statistic ``Delta^2`` of Algorithm 1 for one window.

    ``mu_i(z) = k(z, X_i)^T (K(X_i, X_i) + ridge I)^{-1} y_i`` (the paper's GPR mean, unit-variance
    kernel, spec 2.1) for the older (``i = 1``) and the newer (``i = 2``) half; the result is
    ``mean_z (mu_1(z) - mu_2(z))^2`` over ``domain.points``.

    Parameters
    ----------
    X_old, y_old
        Older half: ``(n1, d)`` encoded inputs and ``(n1,)`` targets.
    X_new, y_new
        Newer half: ``(n2, d)`` and ``(n2,)`` (Algorithm 1 has ``n1 = n2``).
    ridge
        ``lambda > 0`` added to the unit-variance Gram matrix of each half (``cpd_ridge(n, d)``
        in the detector). Both halves must use the same ridge and the same target scaling.
    params
        Fixed kernel hyperparameters (``noise_var`` ignored); ``None``: Matern-5/2, lengthscale
        0.2, amplitude 1.
    domain
        Integration points; ``None``: :meth:`Domain.unit_cube` of the input dimension.

    Returns
    -------
    float
        ``Delta^2 >= 0``; 0 for identical halves; symmetric in the two halves.

    Raises
    ------
    ValueError
        On empty halves, mismatched shapes or dimensions, non-finite values, ``ridge <= 0``.
    """
    X_old, y_old = _check_xy("older half", X_old, y_old, None if domain is None else domain.d)
    X_new, y_new = _check_xy("newer half", X_new, y_new, X_old.shape[1])
    if X_old.shape[0] == 0 or X_new.shape[0] == 0:
        raise ValueError("Both halves must hold at least one point.")
    ridge = _check_positive("ridge", ridge)
    d = X_old.shape[1]
    dom = _unit_domain(d) if domain is None else domain
    p = CPDSettings(params=params).gp_params(d)
    kernel = Kernel(p.kernel, p.lengthscales, p.scale, dom.is_categorical)
    n1 = X_old.shape[0]
    Kz = kernel(dom.points, np.vstack([X_old, X_new]))
    a1 = _half_alpha(X_old, y_old, p, ridge, dom.is_categorical)
    a2 = _half_alpha(X_new, y_new, p, ridge, dom.is_categorical)
    return _mean_sq_diff(Kz[:, :n1], a1, Kz[:, n1:], a2)
