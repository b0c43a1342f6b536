"""Optimistic feasibility: the best *feasible* point, with one GP per constraint.

CONFIG (Xu, Jiang, Svetozarevic & Jones, "Constrained Efficient Global Optimization of Expensive
Black-box Functions", ICML 2023): a point is optimistically feasible when every constraint's
lower confidence bound ``mu_j(x) - width * sigma_j(x)`` is ``<= 0`` (a value ``> 0`` is a
violation, as in Optuna). The sampler's own acquisition (GP-UCB, IGP-UCB, GP-TS) is maximised
over those points; when the candidates hold none, the next point minimises the optimistic
violation ``sum_j max(0, lcb_j(x))``. The paper bounds both the cumulative regret and the
cumulative violation.

Each constraint's GP is fitted on its own standardised values, raw or warped by
:func:`signed_log` (the sign kept, large violations compressed), whichever the data find more
likely; so the units of a constraint do not matter (memory in MB or in GB gives the same
points), and the threshold 0 is standardised with them. Everything is rebuilt from the stored
trials at every call (stateless).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence, cast

import numpy as np
from optuna.study import StudyDirection
from optuna.trial import FrozenTrial, TrialState

from optuna_gpbandit.model import GPModel
from optuna_gpbandit._maximize import Acquisition
from optuna_gpbandit._fitted_gp import fit_model
from optuna_gpbandit._observations import build_observations
from optuna_gpbandit._space import EncodedSpace
from optuna_gpbandit.constraints.data import MISSING_POLICIES, SkippedTrial, constraint_matrix
from optuna_gpbandit.constraints.stage import unit_scales
from optuna_gpbandit.gp.posterior import GPPosterior, NumericalError


@dataclass(frozen=True)
class FeasibleConstraints:
    """Constraints to satisfy trial by trial (``constraints=FeasibleConstraints()``).

    Parameters
    ----------
    width
        Confidence width of the constraints' lower bounds, in posterior standard deviations
        (default 2.0 [design choice]: a point counts as possibly feasible while its constraint
        values are within two standard deviations of 0).
    names
        Constraint names to use (default: the key set most trials share).
    on_missing
        ``"skip"`` (default) or ``"raise"`` for trials whose constraint data is missing or bad.
    """

    width: float = 2.0
    names: Sequence[str] | None = None
    on_missing: str = "skip"

    def __post_init__(self) -> None:
        if isinstance(self.width, bool) or not (
            isinstance(self.width, (int, float)) and math.isfinite(self.width)
            and self.width >= 0
        ):
            raise ValueError(f"width must be a finite number >= 0, got {self.width!r}.")
        if self.on_missing not in MISSING_POLICIES:
            raise ValueError(
                f"on_missing must be one of {MISSING_POLICIES}, got {self.on_missing!r}."
            )

    def fit(self, trials: Sequence[FrozenTrial], space: EncodedSpace, model: GPModel,
            seed: int) -> tuple["ConstraintModels | None", tuple[SkippedTrial, ...]]:
        """One GP per constraint on the COMPLETE ``trials`` with constraint values (``None``
        while there are fewer than two such trials), with the settings
        :meth:`GPModel.for_constraints` derives from the sampler's ``model``, and the trials
        skipped for unusable constraint data (``on_missing="skip"``)."""
        config = model.for_constraints()
        complete = [t for t in trials if t.state == TrialState.COMPLETE]
        matrix = constraint_matrix(complete, names=self.names, on_missing=self.on_missing)
        if matrix.m == 0 or matrix.n < 2:
            return None, matrix.skipped
        numbers = matrix.numbers.tolist()
        models, warped = [], []
        for j in range(matrix.m):
            best = None
            for warp in (False, True):
                fitted = _fit_one(matrix.values[:, j], warp, list(matrix.trials), numbers,
                                  space, config, seed)
                if fitted is not None and (best is None or fitted[2] > best[2]):
                    best, chosen = fitted, warp
            if best is not None:
                models.append(best[:2])
                warped.append(chosen)
        if not models:
            return None, matrix.skipped
        return (ConstraintModels(tuple(models), float(self.width), tuple(matrix.names),
                                 tuple(warped)), matrix.skipped)


def _fit_one(g: np.ndarray, warp: bool, trials: list[FrozenTrial], numbers: list[int],
             space: EncodedSpace, config: GPModel, seed: int
             ) -> tuple[GPPosterior, float, float] | None:
    """``(posterior, standardised threshold, log likelihood of g per point)`` of one
    constraint's GP on its raw or :func:`signed_log`-warped values (``None`` if the fit
    fails). The likelihood is of the values in their own units (the warp's and the
    standardiser's Jacobians included), so the two are comparable: the better one is used
    [design choice]."""
    z = signed_log(g) if warp else g
    obs = build_observations(trials, space, StudyDirection.MAXIMIZE, config,
                             targets=dict(zip(numbers, z.tolist())))
    try:
        post = fit_model(obs, space, config, None, seed).posterior
    except NumericalError:
        return None
    # Per point: the posterior may hold a subset of the trials (max_posterior_points).
    loglik = (-0.5 * float(post.y @ post.alpha) - float(np.log(np.diag(post.L)).sum())
              - 0.5 * post.n * math.log(2 * math.pi)) / post.n - math.log(obs.scale)
    if warp:
        loglik -= float(np.log(_warp_scale(g) + np.abs(g)).mean())
    return post, -obs.shift / obs.scale, loglik


def _warp_scale(g: np.ndarray) -> float:
    """Mean ``|g|`` (overflow-safe; 1 if 0). Not the median: as trials settle near the
    boundary the median shrinks, the warp grows a kink at 0 and the GP's lengthscales
    collapse (measured: 0.01 against 0.2 in the memory benchmark's units dimension)."""
    return float(unit_scales(g[:, None])[0]) if g.size else 1.0


def signed_log(g: np.ndarray) -> np.ndarray:
    """``sign(g) log(1 + |g| / s)`` with ``s`` the mean of ``|g|``: the sign (feasibility) is
    kept, units drop out, and a few huge violations (a model 20 times over a memory budget) no
    longer flatten the GP's view of the values near the threshold."""
    return np.sign(g) * np.log1p(np.abs(g) / _warp_scale(g))


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
