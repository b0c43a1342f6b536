"""Input warping: a monotone map of each numeric parameter fitted with the GP.

Snoek, Swersky, Zemel & Adams (ICML 2014), "Input warping for Bayesian optimization of
non-stationary functions": each numeric column ``x`` in ``[0, 1]`` passes through the CDF of a
Kumaraswamy distribution before the stationary kernel sees it,

    w(x) = 1 - (1 - x^a)^b,        a, b > 0,

so one lengthscale can be short in one part of a parameter's range and long in another (a
learning rate that matters only near its low end, a loss that drops off a cliff below a few
neighbours). ``a = b = 1`` is the identity. ``x`` is first squeezed into ``[EPS, 1 - EPS]`` so
that the map and its derivatives are finite at the bounds. Values outside ``[0, 1]`` (a
conditional space's inactive code) and categorical columns pass unchanged.

The warp's parameters live in ``GPParams.warp`` as an array ``(2, d)`` of ``(a, b)`` per column
(ones on columns that are not warped) and are fitted with the other hyperparameters
(:func:`optuna_gpbandit.gp.fit.fit_hyperparameters`).
"""

from __future__ import annotations

import numpy as np

EPS = 1e-6
"""The squeeze ``x -> EPS + (1 - 2 EPS) x`` keeps ``x^(a-1)`` and ``log(1 - x^a)`` finite."""


def _squeezed(
    X: np.ndarray, warp_ab: np.ndarray, cols: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The entries of ``X`` that are warped (in a column of ``cols`` and inside ``[0, 1]``):
    their mask, their values squeezed into ``[EPS, 1 - EPS]``, and their ``a`` and ``b``."""
    on = cols[None, :] & (X >= 0.0) & (X <= 1.0)
    a, b = warp_ab
    return (on, EPS + (1.0 - 2.0 * EPS) * X[on], np.broadcast_to(a, X.shape)[on],
            np.broadcast_to(b, X.shape)[on])


def _warped_columns(warp_ab: np.ndarray) -> np.ndarray:
    """Mask of the columns the warp changes (``a != 1`` or ``b != 1``)."""
    return (warp_ab[0] != 1.0) | (warp_ab[1] != 1.0)


def warp(X: np.ndarray, warp_ab: np.ndarray | None) -> np.ndarray:
    """The rows of ``X`` with each warped column mapped through its Kumaraswamy CDF.

    ``warp_ab`` is ``(2, d)`` (``None``: the identity). Columns with ``a = b = 1`` are copied.
    """
    if warp_ab is None:
        return X
    cols = _warped_columns(warp_ab)
    if not cols.any():
        return X
    X = np.array(X, dtype=float)
    on, x, aa, bb = _squeezed(X, warp_ab, cols)
    X[on] = 1.0 - (1.0 - x**aa) ** bb
    return X


def warp_with_grads(
    X: np.ndarray, warp_ab: np.ndarray, cols: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``warp(X)`` and its derivatives in ``log a`` and ``log b`` (each ``(n, d)``, zero outside
    the warped entries); ``cols`` marks the warped columns."""
    Xw = np.array(X, dtype=float)
    ga = np.zeros_like(Xw)
    gb = np.zeros_like(Xw)
    on, x, aa, bb = _squeezed(Xw, warp_ab, cols)
    p = x**aa
    q = 1.0 - p
    qb = q**bb
    Xw[on] = 1.0 - qb
    # dw/da = b q^(b-1) p log x;  dw/db = -q^b log q; times a or b for the log parameters.
    ga[on] = aa * bb * (qb / q) * p * np.log(x)
    gb[on] = -bb * qb * np.log(q)
    return Xw, ga, gb


def warp_slope(x: np.ndarray, warp_ab: np.ndarray | None) -> np.ndarray:
    """``dw/dx`` at one encoded point ``x`` (shape ``(d,)``; 1 where nothing is warped)."""
    slope = np.ones_like(np.asarray(x, dtype=float))
    if warp_ab is None:
        return slope
    on, xs, aa, bb = _squeezed(x[None, :], warp_ab, _warped_columns(warp_ab))
    p = xs**aa
    slope[on[0]] = (1.0 - 2.0 * EPS) * aa * bb * (p / xs) * (1.0 - p) ** (bb - 1.0)
    return slope
