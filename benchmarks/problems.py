"""Test functions on the unit cube with known minima (all minimised)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

_ALPHA = np.array([1.0, 1.2, 3.0, 3.2])
_A3 = np.array([[3.0, 10, 30], [0.1, 10, 35], [3.0, 10, 30], [0.1, 10, 35]])
_P3 = 1e-4 * np.array([[3689, 1170, 2673], [4699, 4387, 7470], [1091, 8732, 5547], [381, 5743, 8828]])
_A6 = np.array(
    [[10, 3, 17, 3.5, 1.7, 8], [0.05, 10, 17, 0.1, 8, 14], [3, 3.5, 1.7, 10, 17, 8], [17, 8, 0.05, 10, 0.1, 14]]
)
_P6 = 1e-4 * np.array(
    [
        [1312, 1696, 5569, 124, 8283, 5886],
        [2329, 4135, 8307, 3736, 1004, 9991],
        [2348, 1451, 3522, 2883, 3047, 6650],
        [4047, 8828, 8732, 5743, 1091, 381],
    ]
)


def _hartmann(x: np.ndarray, A: np.ndarray, P: np.ndarray) -> float:
    return float(-np.sum(_ALPHA * np.exp(-np.sum(A * (x - P) ** 2, axis=1))))


def _branin(u: np.ndarray) -> float:
    x, y = 15 * u[0] - 5, 15 * u[1]
    return float(
        (y - 5.1 / (4 * np.pi**2) * x**2 + 5 / np.pi * x - 6) ** 2
        + 10 * (1 - 1 / (8 * np.pi)) * np.cos(x)
        + 10
    )


def _ackley(u: np.ndarray) -> float:
    z = 4 * u - 2
    return float(
        -20 * np.exp(-0.2 * np.sqrt(np.mean(z**2))) - np.exp(np.mean(np.cos(2 * np.pi * z))) + 20 + np.e
    )


@dataclass(frozen=True)
class Problem:
    name: str
    dim: int
    f: Callable[[np.ndarray], float]
    minimum: float


PROBLEMS = {
    p.name: p
    for p in [
        Problem("branin", 2, _branin, 0.397887),
        Problem("hartmann3", 3, lambda x: _hartmann(x, _A3, _P3), -3.86278),
        Problem("hartmann6", 6, lambda x: _hartmann(x, _A6, _P6), -3.32237),
        Problem("ackley5", 5, _ackley, 0.0),
    ]
}


class Diverged(RuntimeError):
    """A "training run" that failed (caught by ``study.optimize(catch=(Diverged,))``)."""


def edge_objective(failure: str = "nan") -> Callable:
    """A harder boundary: tune ``lr`` (log, 1e-5..1) and ``wd`` (0..0.1); training diverges
    beyond ``lr_max(wd) = 0.05 * 10^(10 wd)`` (a diagonal edge in ``(log lr, wd)``, from 0.05 to
    0.5), and the loss ``1 + 0.5 (log10 lr_max(wd) - log10 lr) + 2 (wd - 0.06)^2`` falls at a
    constant rate up to the edge, so the search keeps pressing against it. Minimum 1.0 at
    ``wd = 0.06``, ``lr = lr_max(0.06) = 0.199``; within 1 % of it: ``lr`` within 0.02 decades
    of the edge. Failures as in :func:`lrwd_objective`."""
    import optuna

    def objective(trial: "optuna.Trial") -> float:
        lr = trial.suggest_float("lr", 1e-5, 1.0, log=True)
        wd = trial.suggest_float("wd", 0.0, 0.1)
        log_max = math.log10(0.05) + 10.0 * wd
        if math.log10(lr) > log_max:
            if failure == "prune":
                raise optuna.TrialPruned()
            if failure == "raise":
                raise Diverged("loss diverged")
            return float("nan")
        return 1.0 + 0.5 * (log_max - math.log10(lr)) + 2.0 * (wd - 0.06) ** 2

    return objective


def lrwd_objective(failure: str = "nan") -> Callable:
    """Tune ``lr`` (log, 1e-5..1) and ``wd`` (0..0.1): the loss ``0.1 (log10 lr + 1)^2 +
    10 (wd - 0.03)^2 + 0.1`` improves as ``lr`` grows towards 0.1, and training diverges beyond
    it: a NaN loss (``"nan"``), ``optuna.TrialPruned`` (``"prune"``) or :class:`Diverged`
    (``"raise"``). Minimum 0.1 at lr = 0.1, wd = 0.03, on the edge of the failing region."""
    import optuna

    def objective(trial: "optuna.Trial") -> float:
        lr = trial.suggest_float("lr", 1e-5, 1.0, log=True)
        wd = trial.suggest_float("wd", 0.0, 0.1)
        if lr > 0.1:
            if failure == "prune":
                raise optuna.TrialPruned()
            if failure == "raise":
                raise Diverged("loss diverged")
            return float("nan")
        return 0.1 * (math.log10(lr) + 1.0) ** 2 + 10.0 * (wd - 0.03) ** 2 + 0.1

    return objective
