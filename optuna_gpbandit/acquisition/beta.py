"""Exploration schedules.

GP-UCB (Srinivas et al. 2010), index ``mu + sqrt(beta_t) sigma``; all logs natural, ``delta`` the
failure probability, ``t`` the round being chosen (``t = 1`` uses the prior):

* Theorem 1 (finite ``D``):  ``beta_t = 2 log(|D| t^2 pi^2 / (6 delta))``
* Theorem 2 (compact ``D in [0, r]^d``, derivative tail constants ``a, b``):
  ``beta_t = 2 log(2 t^2 pi^2 / (3 delta)) + 2 d log(t^2 d b r sqrt(log(4 d a / delta)))``,
  clamped at 0
* Theorem 3 (RKHS, ``||f||_k^2 <= B``):  ``beta_t = 2 B + 300 gamma_t log(t / delta)^3``

IGP-UCB and GP-TS (Chowdhury & Gopalan 2017), index ``mu + beta_t sigma`` and draw scale ``v_t``:

* ``beta_t = B + R sqrt(2 (gamma_{t-1} + 1 + log(1 / delta)))``
* ``v_t    = B + R sqrt(2 (gamma_{t-1} + 1 + log(2 / delta)))``

GP-UCB-SDF and GP-TS-SDF (Verma, Dai & Low 2022), censored targets bounded by ``B_y``:

* ``beta_t = B_f + (R + B_y) sqrt(2 (gamma_{t-1} + 1 + log(2 / delta)))`` (UCB), ``log(4 / delta)``
  for TS (``delta / 2``)

GP-UCB-CPD (Avanesov), the schedule of the paper's experiments on the segment length ``t'``:

* ``beta_t' = D t'^(d (d + 1) / (2 nu + d (d + 1))) log(T)^4`` (``D = 0.02``; ``t'^(2/7)`` for
  ``d = 1``, ``nu = 5/2``)
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np


def beta_theorem1(t: int, cardinality: int, delta: float) -> float:
    """Srinivas et al. Theorem 1 (finite domain of ``cardinality`` points; the samplers pass
    ``min(cardinality, n_candidates)``, see ``GPUCBSampler``'s ``beta``)."""
    return 2.0 * math.log(cardinality * t * t * math.pi**2 / (6.0 * delta))


def beta_theorem2(t: int, d: int, delta: float, a: float = 1.0, b: float = 1.0, r: float = 1.0) -> float:
    """Srinivas et al. Theorem 2 (compact convex domain in ``[0, r]^d``), clamped at 0."""
    first = 2.0 * math.log(2.0 * t * t * math.pi**2 / (3.0 * delta))
    second = 2.0 * d * math.log(t * t * d * b * r * math.sqrt(math.log(4.0 * d * a / delta)))
    return max(first + second, 0.0)


def beta_theorem3(t: int, gamma_t: float, rkhs_bound: float, delta: float) -> float:
    """Srinivas et al. Theorem 3 (``rkhs_bound`` bounds the *squared* RKHS norm)."""
    return 2.0 * rkhs_bound + 300.0 * gamma_t * math.log(t / delta) ** 3


def igp_ucb_beta(gamma: float, B: float, R: float, delta: float) -> float:
    """Chowdhury & Gopalan IGP-UCB width ``B + R sqrt(2 (gamma + 1 + log(1/delta)))``."""
    return B + R * math.sqrt(2.0 * (gamma + 1.0 + math.log(1.0 / delta)))


def gp_ts_scale(gamma: float, B: float, R: float, delta: float) -> float:
    """Chowdhury & Gopalan GP-TS draw scale ``B + R sqrt(2 (gamma + 1 + log(2/delta)))``."""
    return B + R * math.sqrt(2.0 * (gamma + 1.0 + math.log(2.0 / delta)))


def sdf_beta(gamma: float, B: float, R: float, B_y: float, delta: float,
             thompson: bool = False) -> float:
    """Verma et al.'s width ``B + (R + B_y) sqrt(2 (gamma + 1 + log(c / delta)))``, ``c = 2``
    (GP-UCB-SDF) or ``4`` (GP-TS-SDF)."""
    c = 4.0 if thompson else 2.0
    return B + (R + B_y) * math.sqrt(2.0 * (gamma + 1.0 + math.log(c / delta)))


EARLY_UNTIL = 15  # rounds t <= EARLY_UNTIL get the whole early factor [design choice]
EARLY_END = 40  # from here on the factor is 1; linear in between [design choice]


def early_factor(t: int, factor: float, n_pending: int = 0) -> float:
    """Factor on GP-UCB's ``beta_t`` (on the square of IGP-UCB's and GP-TS's width) in round
    ``t``: ``factor`` up to ``EARLY_UNTIL``, 1 from ``EARLY_END`` on, linear in between; 1
    while ``n_pending`` trials of other workers have no result yet.

    Why (issue 30): the hyperparameters fitted on the first 5-15 results are the least
    reliable of the run, and the run's basin is chosen then. A wider bound while the model
    is young, and the measured width once it has data, gave the real-HPO suite at 40 trials
    what a three times wider ``beta_scale`` throughout gave, without its cost on the test
    functions (docs/benchmarks.md, "Early width").
    """
    if n_pending > 0:
        # Pending points already spread a batch (hallucinated rows shrink the variance there),
        # and the two kinds of exploration compound (docs/benchmarks.md, "The early width's
        # figures"); a sequential study never has pending trials, so its trials are unchanged.
        return 1.0
    if t <= EARLY_UNTIL:
        return float(factor)
    if t >= EARLY_END:
        return 1.0
    return float(factor) + (1.0 - float(factor)) * (t - EARLY_UNTIL) / (EARLY_END - EARLY_UNTIL)


def avanesov_beta(horizon: int, d: int = 1, nu: float = 2.5,
                  D: float = 0.02) -> Callable[[int], float]:
    """Avanesov's experimental schedule, as a ``beta`` for :class:`GPUCBSampler` (use it with
    ``beta_scale=1``).

    The samplers call ``beta(t)`` with ``t`` = observations the model sees + 1, so the paper's
    segment length is ``t' = max(t - 1, 1)`` (the model sees only the current segment).

    Parameters
    ----------
    horizon
        ``T``, the planned number of trials (enters as ``log(T)^4``).
    d, nu, D
        Dimension, kernel smoothness (Matern-5/2: 2.5) and the paper's constant 0.02.
    """
    if isinstance(horizon, bool) or not isinstance(horizon, (int, np.integer)) or horizon < 2:
        raise ValueError(f"horizon must be an integer >= 2, got {horizon!r}.")
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1:
        raise ValueError(f"d must be an integer >= 1, got {d!r}.")
    if not (math.isfinite(nu) and nu > 0):
        raise ValueError(f"nu must be positive and finite, got {nu!r}.")
    if not (math.isfinite(D) and D > 0):
        raise ValueError(f"D must be positive and finite, got {D!r}.")
    exponent = d * (d + 1) / (2.0 * nu + d * (d + 1))
    log4 = math.log(horizon) ** 4

    def beta(t: int) -> float:
        return D * max(t - 1, 1) ** exponent * log4

    return beta


def theory_gamma(t_minus_1: int, d: int, kernel: str) -> float:
    """Order-of-magnitude bound on ``gamma_{t-1}`` used in the IGP-UCB/GP-TS experiments
    (constant 1): SE ``(log t')^{d+1}``, Matern-5/2 ``t'^{d(d+1)/(5+d(d+1))} log t'``; 0 for
    ``t' <= 1``."""
    if t_minus_1 <= 1:
        return 0.0
    lt = math.log(t_minus_1)
    if kernel == "se":
        return lt ** (d + 1)
    e = d * (d + 1) / (5.0 + d * (d + 1))
    return t_minus_1**e * lt




def resolve_gamma(
    gamma: str | float | Callable[[int, int], float],
    t_minus_1: int,
    d: int,
    kernel: str,
    data_gain: Callable[[], float],
) -> float:
    """``gamma_{t-1}`` for the IGP-UCB/GP-TS width.

    ``"data"``: information gain of the observed design (``data_gain()``); ``"theory"``:
    :func:`theory_gamma`; a number: that constant; a callable: ``gamma(t - 1, d)``.
    """
    if isinstance(gamma, str):
        if gamma == "data":
            return float(data_gain())
        if gamma == "theory":
            return theory_gamma(t_minus_1, d, kernel)
        raise ValueError(f"Unknown gamma mode {gamma!r}; use 'data', 'theory', a number or a callable.")
    if callable(gamma):
        value = float(gamma(t_minus_1, d))
    else:
        value = float(gamma)
    if not np.isfinite(value) or value < 0:
        raise ValueError(f"gamma must be a finite non-negative number, got {value}.")
    return value
