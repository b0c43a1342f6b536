"""The penalised GP targets of Algorithms 2 and 3, Algorithm 3's noise inflation and the IGP-UCB
width of both algorithms."""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from optuna_gpbandit.acquisition.beta import igp_ucb_beta
from optuna_gpbandit.constraints._checks import (
    _as_matrix,
    _check_int,
    _check_max_log,
    _check_no_nan,
    _check_y,
    _finite_float,
)
from optuna_gpbandit.constraints.psi import Psi, make_psi


def _kappa_like(kappa: Any, m: int, what: str) -> np.ndarray:
    k = np.asarray(kappa, dtype=float).reshape(-1)
    if k.shape != (m,):
        raise ValueError(f"{what} must have one value per constraint ({m}), got shape {k.shape}.")
    _check_no_nan(k, what)
    return k


def noiseless_penalties(
    G: Any, log_kappa: Any, psi: Psi | str = "exp", max_log_penalty: float = 100.0
) -> np.ndarray:
    """``sum_j kappa_j (psi(g_j) - 1)`` per row, each term capped at ``exp(max_log_penalty)``.

    Terms are evaluated as ``exp(min(log kappa_j + log(psi(g_j) - 1), max_log_penalty))``; a
    feasible value (``g <= 0``) contributes exactly 0.
    """
    G = _as_matrix(G)
    psi = make_psi(psi)
    cap = _check_max_log("max_log_penalty", max_log_penalty)
    lk = _kappa_like(log_kappa, G.shape[1], "log_kappa")
    with np.errstate(invalid="ignore"):
        log_terms = np.minimum(lk[None, :] + psi.log_penalty(G), cap)
    log_terms = np.where(np.isnan(log_terms), -np.inf, log_terms)  # -inf + inf: a zero kappa
    with np.errstate(under="ignore"):
        return np.exp(log_terms).sum(axis=1)


def noiseless_targets(
    y: Any, G: Any, log_kappa: Any, psi: Psi | str = "exp", max_log_penalty: float = 100.0
) -> np.ndarray:
    """Algorithm 2 GP targets ``z = y - sum_j kappa_j (psi(g_j) - 1)``.

    ``y`` are the objective values oriented for maximisation (``-value`` for a minimised
    objective); a feasible row keeps ``z = y`` exactly. See :func:`noiseless_penalties`.
    """
    G = _as_matrix(G)
    return _check_y(y, G.shape[0]) - noiseless_penalties(G, log_kappa, psi, max_log_penalty)


def noisy_penalties(G: Any, kappa: Any, max_log_penalty: float = 100.0) -> np.ndarray:
    """``sum_j kappa_j g_j`` per row (negative for slack), each term capped to
    ``[-exp(max_log_penalty), exp(max_log_penalty)]``."""
    G = _as_matrix(G)
    cap = math.exp(_check_max_log("max_log_penalty", max_log_penalty))
    k = _kappa_like(kappa, G.shape[1], "kappa")
    if (k < 0).any():
        raise ValueError("kappa must be >= 0.")
    with np.errstate(over="ignore", invalid="ignore"):
        terms = k[None, :] * G
    terms = np.where(np.isnan(terms), 0.0, terms)
    return np.clip(terms, -cap, cap).sum(axis=1)


def noisy_targets(y: Any, G: Any, kappa: Any, max_log_penalty: float = 100.0) -> np.ndarray:
    """Algorithm 3 GP targets ``z = y - sum_j kappa_j g_j`` (``y`` oriented for maximisation)."""
    G = _as_matrix(G)
    return _check_y(y, G.shape[0]) - noisy_penalties(G, kappa, max_log_penalty)


def noise_width_factor(kappa: Any) -> float:
    """Algorithm 3's noise inflation ``sqrt(1 + sum_j kappa_j^2)`` (computed without overflow)."""
    k = np.abs(np.asarray(kappa, dtype=float).reshape(-1))
    _check_no_nan(k, "kappa")
    v = np.concatenate([[1.0], k])
    scale = float(v.max())
    if math.isinf(scale):
        return math.inf
    return scale * math.sqrt(float(np.sum((v / scale) ** 2)))


def constrained_beta(
    gamma: float,
    B: float,
    R: float,
    delta: float,
    n_epochs: int,
    kappa: Sequence[float] | None = None,
) -> float:
    """IGP-UCB width inside the epochs.

    * Algorithm 2 (``kappa=None``): ``B + R sqrt(2 (gamma + 1 + log(L / delta)))``.
    * Algorithm 3 (``kappa`` given): ``B + sqrt(1 + sum kappa^2) R sqrt(2 (gamma + 1 +
      log(2 L / delta)))``.

    Parameters
    ----------
    gamma
        Information gain term ``gamma_{s-1}`` (``>= 0``).
    B, R
        RKHS-norm bound and sub-Gaussian noise level (``>= 0``).
    delta
        Failure probability in ``(0, 1)``.
    n_epochs
        ``L`` (:func:`horizon_epochs`).
    kappa
        Algorithm 3's current multipliers.
    """
    gamma = _finite_float("gamma", gamma)
    B, R = _finite_float("B", B), _finite_float("R", R)
    delta = _finite_float("delta", delta)
    if gamma < 0 or B < 0 or R < 0:
        raise ValueError(f"gamma, B and R must be >= 0, got {gamma}, {B}, {R}.")
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta}.")
    L = _check_int("n_epochs", n_epochs, 1)
    noisy = kappa is not None
    factor = noise_width_factor(kappa) if noisy else 1.0
    return igp_ucb_beta(gamma, B, factor * R, delta * epoch_delta_factor(L, noisy))


def epoch_delta_factor(n_epochs: int, noisy: bool) -> float:
    """The factor of ``delta`` in the width inside the epochs: ``1 / L`` (Algorithm 2) or
    ``1 / (2 L)`` (Algorithm 3, whose union bound also covers the constraint noise)."""
    return 1.0 / ((2.0 if noisy else 1.0) * n_epochs)
