"""The fitted constraint GPs of the feasible-point rule (:class:`ConstraintModels`: what they
admit) and the acquisitions built on them: the optimistic violation (CONFIG's step toward
feasibility) and an acquisition penalised outside the admitted points."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import cast

import numpy as np

from optuna_gpbandit._maximize import Acquisition
from optuna_gpbandit.gp.posterior import GPPosterior


@dataclass(frozen=True)
class ConstraintModels:
    """Fitted constraint GPs: ``(posterior, standardised threshold)`` per constraint."""

    models: tuple[tuple[GPPosterior, float], ...]
    width: float
    names: tuple[str, ...]
    warped: tuple[bool, ...] = ()  # per model: fitted on signed_log values

    def lower_bounds(self, X: np.ndarray) -> np.ndarray:
        """``(n, m)`` optimistic constraint values minus the threshold (standardised units);
        ``<= 0``: possibly feasible."""
        X = np.atleast_2d(X)
        out = np.empty((X.shape[0], len(self.models)))
        for j, (post, threshold) in enumerate(self.models):
            mu, var = post.mean_var(X)
            out[:, j] = mu - self.width * np.sqrt(np.maximum(var, 0.0)) - threshold
        return out

    def infeasible(self, X: np.ndarray) -> np.ndarray:
        """Mask of the rows of ``X`` that no constraint's confidence bound admits."""
        return cast(np.ndarray, (self.lower_bounds(X) > 0.0).any(axis=1))  # 2-D: an array

    def excess(self, X: np.ndarray, margin: float = 0.0) -> np.ndarray:
        """``sum_j max(0, lcb_j(x) + margin)`` for the rows of ``X``."""
        return np.maximum(self.lower_bounds(X) + margin, 0.0).sum(axis=1)

    def excess_grad(self, x: np.ndarray, margin: float = 0.0) -> tuple[float, np.ndarray]:
        """:meth:`excess` at one point, and its gradient."""
        total, grad = 0.0, np.zeros_like(np.asarray(x, dtype=float))
        for post, threshold in self.models:
            mu, var, dmu, dvar = post.mean_var_grad(x)
            sd = math.sqrt(max(var, 0.0))
            lb = mu - self.width * sd - threshold + margin
            if lb > 0.0:
                total += lb
                grad += dmu - (self.width * 0.5 / sd) * dvar if sd > 1e-12 else dmu
        return total, grad


class OptimisticViolation:
    """Acquisition ``-sum_j max(0, lcb_j(x))``: the point most likely to be feasible."""

    def __init__(self, models: ConstraintModels) -> None:
        self.models = models

    def values(self, X: np.ndarray) -> np.ndarray:
        return -self.models.excess(X)

    def value_grad(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        total, grad = self.models.excess_grad(x)
        return -total, -grad


class Penalised:
    """``acq(x) - weight * sum_j max(0, lcb_j(x) + margin)``: the acquisition, lowered outside
    the points the constraint models admit.

    The maximiser screens candidates (the inadmissible ones are excluded anyway) and then climbs
    from the best ones by L-BFGS-B; without the penalty the climb leaves the admitted set and its
    result is rejected, so the best point on a constraint's boundary is never reached. With an
    exact penalty (``weight`` above the Lagrange multiplier, in standardised units) the climb
    stops ``margin`` inside the boundary [design choice: weight 100, margin 1e-3].
    """

    def __init__(self, acq: Acquisition, models: ConstraintModels, weight: float = 100.0,
                 margin: float = 1e-3) -> None:
        self.acq, self.models = acq, models
        self.weight, self.margin = float(weight), float(margin)

    def values(self, X: np.ndarray) -> np.ndarray:
        return self.acq.values(X) - self.weight * self.models.excess(X, self.margin)

    def value_grad(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        value, grad = self.acq.value_grad(x)
        over, dover = self.models.excess_grad(x, self.margin)
        return value - self.weight * over, np.asarray(grad, dtype=float) - self.weight * dover
