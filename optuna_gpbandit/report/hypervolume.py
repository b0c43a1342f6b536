"""Hypervolume over the trials of a multi-objective study (the sibling of ``regret_report``).

The hypervolume of a set of points is the volume they dominate up to a reference point (all
objectives oriented for minimisation); after each COMPLETE trial, that of the feasible
Pareto front so far (the trials Optuna's ``study.best_trials`` would return: feasible ones
only when the study reports constraints). It grows with every trial that extends the front.
"""

from __future__ import annotations

import math

from dataclasses import dataclass
from typing import Sequence

import numpy as np
from optuna._hypervolume import compute_hypervolume
from optuna.study import Study
from optuna.trial import FrozenTrial, TrialState

from optuna_gpbandit._history import finite_result
from optuna_gpbandit.constraints import trial_constraints
from optuna_gpbandit._history import direction_sign


@dataclass(frozen=True)
class HypervolumeReport:
    """Hypervolume after each COMPLETE trial.

    Attributes
    ----------
    numbers
        Trial numbers of the COMPLETE trials with finite values, in order.
    hypervolume
        Hypervolume of the feasible Pareto front of the trials up to each of them.
    reference_point
        The reference point, in the study's own units and directions.
    """

    numbers: np.ndarray
    hypervolume: np.ndarray
    reference_point: np.ndarray

    def summary(self) -> dict[str, float | int | None]:
        """Number of trials and the final hypervolume."""
        n = int(self.numbers.size)
        return {"n": n, "hypervolume": float(self.hypervolume[-1]) if n else None}


def _feasible(trial: FrozenTrial) -> bool:
    values = trial_constraints(trial)[1]
    try:
        return all(float(v) <= 0.0 for v in values)
    except (TypeError, ValueError):
        return False


def hypervolume_report(study: Study,
                       reference_point: Sequence[float] | None = None) -> HypervolumeReport:
    """Hypervolume of the study's feasible Pareto front after each COMPLETE trial.

    Parameters
    ----------
    study
        A study with two or more objectives.
    reference_point
        One value per objective, in the study's units, worse than every point of interest
        (above it for a minimised objective, below it for a maximised one). Default: the
        worst value of each objective over the COMPLETE trials, moved outwards by 10 % of
        its range (so the extreme points of the front count too). Compare studies only
        with one shared reference point.
    """
    if not study._is_multi_objective():
        raise ValueError("hypervolume_report needs a study with two or more objectives; "
                         "use regret_report for one objective.")
    sign = -np.array([direction_sign(d) for d in study.directions])  # losses: smaller is better
    trials = [t for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
              if finite_result(t)]
    trials.sort(key=lambda t: t.number)
    k = sign.size
    if reference_point is None:
        if not trials:
            complete = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
            if not complete:
                raise ValueError("No COMPLETE trial to derive a reference point from; pass "
                                 "reference_point.")
            never = [i for i in range(k)
                     if not any(math.isfinite(t.values[i]) for t in complete)]
            raise ValueError(
                f"None of the {len(complete)} COMPLETE trials has a finite value for every "
                "objective"
                + (f" (objective {', '.join(map(str, never))} is never finite)" if never else "")
                + ", so no reference point can be derived and no trial adds hypervolume; pass "
                "reference_point to score the study anyway.")
        L = np.array([t.values for t in trials]) * sign
        worst, best = L.max(axis=0), L.min(axis=0)
        ref = worst + 0.1 * np.maximum(worst - best, 1e-12)
    else:
        ref = np.asarray(reference_point, dtype=float)
        if ref.shape != (k,) or not np.all(np.isfinite(ref)):
            raise ValueError(f"reference_point must hold {k} finite values, got "
                             f"{reference_point!r}.")
        ref = ref * sign
    curve, front = np.zeros(len(trials)), np.empty((0, k))
    hv = 0.0
    for i, t in enumerate(trials):
        loss = np.asarray(t.values, dtype=float) * sign
        if _feasible(t) and np.all(loss < ref) and not np.any(np.all(front <= loss, axis=1)):
            front = np.vstack([front[~np.all(loss <= front, axis=1)], loss])
            hv = float(compute_hypervolume(front, ref, assume_pareto=True))
        curve[i] = hv
    return HypervolumeReport(np.array([t.number for t in trials], dtype=int), curve, ref * sign)
