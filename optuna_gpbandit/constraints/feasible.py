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
from typing import Sequence

import numpy as np
from optuna.study import Study, StudyDirection
from optuna.trial import FrozenTrial, TrialState

from optuna_gpbandit.model import GPModel
from optuna_gpbandit._fitted_gp import fit_gp
from optuna_gpbandit._observations import build_observations
from optuna_gpbandit._space import EncodedSpace
from optuna_gpbandit._history import History
from optuna_gpbandit.constraints.data import (MISSING_POLICIES, SkippedTrial, constraint_matrix,
                                           trial_constraints)
from optuna_gpbandit.constraints.models import ConstraintModels
from optuna_gpbandit.constraints.stage import unit_scales
from optuna_gpbandit.constraints.step import (ConstraintRule, ConstraintStep, log_skipped,
                                              no_constraint_data)
from optuna_gpbandit.gp.posterior import GPPosterior, NumericalError


@dataclass(frozen=True)
class FeasibleConstraints(ConstraintRule):
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

    @property
    def reads_constraints(self) -> bool:
        return True

    def step(self, *, auto: bool, study: Study, trial: FrozenTrial, space: EncodedSpace,
             history: History, start: int, model: GPModel, seed: int, sampler_name: str,
             n_startup_trials: int) -> ConstraintStep:
        """The constraint models of the completed trials from ``start`` on (:meth:`fit`),
        with their record; said once when no trial reports constraint values (unless
        ``auto``: ``constraints="auto"`` is quiet while unused)."""
        counted = [t for t in history.completed if t.number >= start]
        feasibility, skipped = self.fit(counted, space, model, seed)
        log_skipped(study, skipped, "the constraint models", sampler_name)
        step = ConstraintStep(history, feasibility=feasibility)
        if feasibility is not None or not auto:  # quiet when unused
            step.record["feasibility"] = {
                "constraints": 0 if feasibility is None else len(feasibility.models),
                "warped": 0 if feasibility is None else sum(feasibility.warped)}
        if not auto and not any(trial_constraints(t)[0] for t in counted):
            no_constraint_data(study, counted, sampler_name, n_startup_trials)
        return step

    def fit(self, trials: Sequence[FrozenTrial], space: EncodedSpace, model: GPModel,
            seed: int) -> tuple[ConstraintModels | None, tuple[SkippedTrial, ...]]:
        """One GP per constraint on the COMPLETE ``trials`` with constraint values (``None``
        while there are fewer than two such trials), with the settings
        :meth:`GPModel.for_constraints` derives from the sampler's ``model``, and the trials
        skipped for unusable constraint data (``on_missing="skip"``)."""
        settings = model.for_constraints()
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
                                  space, settings, seed)
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
             space: EncodedSpace, model: GPModel, seed: int
             ) -> tuple[GPPosterior, float, float] | None:
    """``(posterior, standardised threshold, log likelihood of g per point)`` of one
    constraint's GP on its raw or :func:`signed_log`-warped values (``None`` if the fit
    fails). The likelihood is of the values in their own units (the warp's and the
    standardiser's Jacobians included), so the two are comparable: the better one is used
    [design choice]."""
    z = signed_log(g) if warp else g
    obs = build_observations(trials, space, StudyDirection.MAXIMIZE, model,
                             targets=dict(zip(numbers, z.tolist())))
    try:
        post = fit_gp(obs, space, model, None, seed).posterior
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
    collapse (docs/benchmarks.md, "The constraint models' warp")."""
    return float(unit_scales(g[:, None])[0]) if g.size else 1.0


def signed_log(g: np.ndarray) -> np.ndarray:
    """``sign(g) log(1 + |g| / s)`` with ``s`` the mean of ``|g|``: the sign (feasibility) is
    kept, units drop out, and a few huge violations (a model 20 times over a memory budget) no
    longer flatten the GP's view of the values near the threshold."""
    return np.sign(g) * np.log1p(np.abs(g) / _warp_scale(g))
