"""Information gain of a design (Srinivas et al. 2010, Sec. 5).

``I(y_A; f) = 0.5 log det(I + K_A / noise_var)``. For a fitted posterior the same number comes
from its Cholesky factor (:meth:`GPPosterior.information_gain`); the functions here work on a
kernel matrix directly, for reports and for the greedy upper bound on the maximum information gain
``gamma_T`` that the Theorem-3 beta of GP-UCB needs.
"""

from __future__ import annotations

import numpy as np

_E_FACTOR = 1.0 / (1.0 - 1.0 / np.e)


def information_gain(K: np.ndarray, noise_var: float) -> float:
    """``0.5 log det(I + K / noise_var)`` for a PSD kernel matrix ``K`` (multiset design)."""
    if K.shape[0] == 0:
        return 0.0
    sign, logdet = np.linalg.slogdet(np.eye(K.shape[0]) + K / noise_var)
    if sign <= 0:
        raise ValueError("I + K / noise_var is not positive definite.")
    return 0.5 * float(logdet)


def greedy_information_gain(K_DD: np.ndarray, noise_var: float, T: int) -> np.ndarray:
    """Information gain of the greedy experimental design on a finite domain.

    At each step the point of largest posterior variance is added (first index on ties;
    repeats allowed). Returns the running gain ``F(A_1), ..., F(A_T)``. Because the gain is
    monotone submodular, ``gamma_T <= F(A_T) / (1 - 1/e)`` (Nemhauser et al.); see
    :func:`gamma_upper_bound`.
    """
    var = np.diag(K_DD).astype(float).copy()
    m = K_DD.shape[0]
    V = np.zeros((0, m))  # rows: L^{-1}-whitened kernel columns of the chosen points
    gains = np.empty(T)
    total = 0.0
    for t in range(T):
        i = int(np.argmax(var))
        s = var[i] + noise_var
        total += 0.5 * np.log1p(var[i] / noise_var)
        gains[t] = total
        row = (K_DD[i] - V[:, i] @ V) / np.sqrt(s)
        V = np.vstack([V, row])
        var = np.maximum(var - row * row, 0.0)
    return gains


def gamma_upper_bound(K_DD: np.ndarray, noise_var: float, T: int) -> float:
    """Upper bound on the maximum information gain ``gamma_T`` on a finite domain."""
    if T <= 0:
        return 0.0
    return float(greedy_information_gain(K_DD, noise_var, T)[-1] * _E_FACTOR)
