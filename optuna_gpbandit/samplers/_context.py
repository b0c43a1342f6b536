"""What a sampler's ``_select`` sees: the GP fitted for one objective and everything around it."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
from optuna.study import Study
from optuna.trial import FrozenTrial

from optuna_gpbandit.failures import FailedRow
from optuna_gpbandit._history import History
from optuna_gpbandit._maximize import Exclusion, near_any, union_regions
from optuna_gpbandit.search import AcquisitionSearch
from optuna_gpbandit._repeats import (POLISH_PATIENCE, as_repeat, exhausted_points, failed_polish,
                                      found_deterministic, n_repeats, tied_values)
from optuna_gpbandit._notices import DEBUG, INFO, log_once
from optuna_gpbandit.constraints.models import ConstraintModels, OptimisticViolation, Penalised
from optuna_gpbandit._fitted_gp import FittedGP
from optuna_gpbandit._observations import Observations
from optuna_gpbandit._space import EncodedSpace
from optuna_gpbandit._maximize import Box
from optuna_gpbandit.acquisition.beta import EARLY_END, early_factor
from optuna_gpbandit.samplers._record import PointRecord


@dataclass(frozen=True)
class SelectionContext:
    """Everything a sampler's ``_select`` may use: the observations and the GP fitted on
    them (``gp``; the ``model`` settings made it), the search, and what to avoid."""

    study: Study
    trial: FrozenTrial
    space: EncodedSpace
    obs: Observations
    gp: FittedGP  # the GP fitted as the model settings say
    rng: np.random.Generator
    search: AcquisitionSearch = AcquisitionSearch()
    width_bonus: float = 0.0
    noise_factor: float = 1.0
    delta_factor: float = 1.0
    # What the maximiser must not propose while anything else is left (:func:`exclusion`):
    # near pending trials, at failed, dead and exhausted points, in a failing region, and where
    # no constraint's bound admits a point.
    excluded: "np.ndarray | Exclusion | None" = None
    # Constraint models (FeasibleConstraints): the acquisition is kept to the points they admit.
    feasibility: ConstraintModels | None = None
    # Trials running or waiting elsewhere whose point is not known yet (not in the design).
    n_unresolved: int = 0
    # The trust region the maximiser stays in (AcquisitionSearch.trust_region), or None.
    box: Box | None = None
    # Whether a proposal within ``search.min_distance`` of an evaluated point asks that very
    # point (``deterministic_objective=None`` while undecided: :func:`as_repeat`).
    repeats_exact: bool = False

    @property
    def t(self) -> int:
        """Index of the round being chosen (points in the design, pending ones included, + 1)."""
        return self.obs.n_all + 1

    @property
    def n_pending(self) -> int:
        """Trials of other workers the model has no result of: design rows without a label
        (pending points; under censoring also results not used yet) and running trials whose
        point is not known yet."""
        return self.obs.n - self.obs.n_observed + self.n_unresolved

    def early_factor(self, factor: float) -> float:
        """:func:`~optuna_gpbandit.acquisition.beta.early_factor` of this round, logged once per
        study when trials of other workers turn it off."""
        n = self.n_pending
        if n and factor != 1.0 and self.t < EARLY_END:
            log_once(self.study, "early_width:pending", DEBUG,
                     "Trial %d: the early width (early_factor=%g) is off while %d trial(s) "
                     "of other workers have no result: their points already spread the search. "
                     "It applies to the asks with none pending.", self.trial.number, factor, n)
        return early_factor(self.t, factor, n)

    def best_observed(self, k: int) -> np.ndarray:
        """The ``k`` best observed points, best first (real observations only)."""
        seen = self.obs.fit_rows
        X, y = self.obs.X[seen], self.obs.y[seen]
        return X[np.argsort(-y, kind="stable")[:k]]

    def warm_starts(self) -> np.ndarray:
        """The best observed points (candidates for the maximiser); with constraint models,
        the best of those they admit."""
        k = self.search.n_warm_starts
        if self.feasibility is None:
            return self.best_observed(k)
        X = self.best_observed(self.obs.n)
        return X[~self.feasibility.infeasible(X)][:k] if len(X) else X

    def within_constraints(self, acq: Any) -> Any:
        """``acq``, penalised outside the points the constraint models admit (so that the
        maximiser's local search stops at the boundary of the admitted set)."""
        return acq if self.feasibility is None else Penalised(acq, self.feasibility)

    def maximise(self, acq: Any, warm_starts: np.ndarray | None = None) -> np.ndarray:
        """The encoded maximiser of ``acq`` within the constraints and exclusions, started
        also from ``warm_starts`` (default: :meth:`warm_starts`)."""
        x = self.search.maximise(
            self.within_constraints(acq), self.space, self.rng,
            warm_starts=self.warm_starts() if warm_starts is None else warm_starts,
            exclude=self.excluded, box=self.box)[0]
        if not self.repeats_exact:
            return x
        tol = self.search.min_distance
        repeat = as_repeat(x, self.obs.X[self.obs.fit_rows], tol)
        return repeat if not near_any(repeat[None, :], self.excluded, tol)[0] else x

    def step_record(self, x: np.ndarray) -> PointRecord:
        """What the model says of choosing ``x`` (the shared part of the step's record)."""
        obs, post = self.obs, self.gp.posterior
        mu, var = post.mean_var(x[None, :])
        mu_value, sd_value = obs.to_objective(float(mu[0]), float(np.sqrt(var[0])))
        pred_sd = obs.to_objective(float(mu[0]),
                                   float(np.sqrt(var[0] + post.effective_noise_var)))[1]
        return PointRecord(
            t=self.t,
            mu=mu_value,
            sigma=sd_value,
            pred_sd=pred_sd,
            y_scale=obs.scale,
            n_warped=0 if obs.warp is None else obs.warp.n_lifted,
            info_gain=post.information_gain(),
            info_gain_inc=float(0.5 * np.log1p(var[0] / post.effective_noise_var)),
            refitted=self.gp.refitted,
            n_observed=obs.n_observed_all,
            n_censored=obs.n - obs.n_observed,
            n_posterior=obs.n,
            width_bonus=self.width_bonus,
            gp_state=self.gp.state(self.space),
        )


QUIET_NOISE = 1e-2
"""Fitted noise variance below this share of the kernel scale [design choice]: the model
reads the objective as quiet, and under ``deterministic_objective=None`` any configuration
asked again without a second value at one configuration makes it deterministic
(:func:`~optuna_gpbandit._repeats.found_deterministic`)."""


def deterministic(gp: FittedGP) -> bool:
    """Whether the fitted noise is below 1e-4 of the kernel scale [design choice]: then a
    repeated evaluation teaches nothing and no point is asked twice."""
    return gp.noise_share < 1e-4


def repeats_teach_nothing(study: Study, trial: FrozenTrial, obs: Observations, gp: FittedGP,
                          find_out: bool) -> bool:
    """Whether no evaluated point is worth asking again: the fitted noise says the objective
    is deterministic (:func:`deterministic`), or, with ``find_out``
    (``deterministic_objective=None``), the history shows it
    (:func:`~optuna_gpbandit._repeats.found_deterministic`; said once per study)."""
    if deterministic(gp):
        return True
    rows = np.flatnonzero(obs.fit_rows)
    quiet = gp.noise_share < QUIET_NOISE
    if not (find_out and found_deterministic(obs.X[rows], obs.y_raw[rows], quiet=quiet)):
        return False
    log_once(study, "found-deterministic", INFO,
             "Trial %d: a configuration asked again showed no noise (none has given two "
             "values): the objective is treated as deterministic, and no evaluated "
             "configuration is asked again (pass deterministic_objective=True to say so from "
             "the start, or False if the objective is noisy).", trial.number)
    return True


def log_repeats(study: Study, trial: FrozenTrial, obs: Observations, gp: FittedGP) -> None:
    """Say (once per study) that trials repeat earlier points of an objective the model reads
    as noisy, and what to pass if it is not."""
    k = n_repeats(obs.X[obs.fit_rows])
    if k:
        log_once(study, "repeats", INFO,
                 "Trial %d: %d of %d evaluated trials repeat an earlier trial's configuration "
                 "(within AcquisitionSearch.min_distance) with another value: the model reads "
                 "the objective as noisy (noise sd %.3g of the objective's sd), where another "
                 "look at a promising point sharpens its estimate. If the objective is "
                 "deterministic, pass deterministic_objective=True.", trial.number, k,
                 int(obs.fit_rows.sum()),
                 float(np.sqrt(gp.noise_share)))


TIE_NOTICE = 4
"""Tied values at distinct points from which :func:`log_ties` speaks (once, at DEBUG)."""


def log_ties(study: Study, trial: FrozenTrial, obs: Observations) -> None:
    """Say (once per study, at DEBUG) that trials at distinct points
    returned values that earlier trials already gave: a plateau where the objective is flat
    (one-split trees, chance-level models, a clipped metric). A stationary GP reads a plateau
    as a smooth region and may keep sampling it (docs/benchmarks.md, the decision-tree traps);
    on a discrete metric (accuracy on a small data set) ties are expected."""
    rows = np.flatnonzero(obs.fit_rows)
    tied, points, largest, row = tied_values(obs.X[rows], obs.y_raw[rows])
    if tied >= TIE_NOTICE:
        log_once(study, "ties", DEBUG,
                 "Trial %d: %d of %d evaluated points returned a value that an earlier point "
                 "already gave (the largest group: %d points at %g). The objective is flat "
                 "there; the model reads a "
                 "plateau as a smooth region.", trial.number, tied, points, largest,
                 float(obs.sign * obs.y_raw[rows[row]]))


def exclusion(obs: Observations, gp: FittedGP, space: EncodedSpace, history: History,
              failed: list[FailedRow],
              infeasible: Callable[[np.ndarray], np.ndarray] | None = None, *,
              spread: float, all_done: bool) -> Exclusion:
    """What the maximiser must not propose while anything else is left: the neighbourhood of
    the points of trials still pending (within ``spread``: the pending rule's), the points of
    failed trials and of trials presumed dead, points not worth evaluating again
    (:func:`exhausted_points`; every evaluated point if ``all_done``: a deterministic
    objective), the regions the failed rows' rule avoids
    (:meth:`~optuna_gpbandit.failures.FailedTrials.avoided`: a failing region, where trials are
    predicted to fail), and points that no constraint's confidence bound admits
    (``infeasible``, :mod:`optuna_gpbandit.constraints.feasible`)."""
    pending = np.isin(obs.numbers, [p.trial.number for p in history.pending]) & ~obs.observed
    params, categorical = gp.posterior.params, space.is_categorical
    return Exclusion(
        np.vstack([
            space.encode_many([r.params for r in failed] + [p.params for p in history.dead]),
            exhausted_points(obs.X[obs.fit_rows], obs.y[obs.fit_rows], all_done),
        ]),
        union_regions(obs.failure_rule.avoided(obs, params, categorical), infeasible),
        apart=obs.X[pending], radius=spread,
    )


def polishing_search(study: Study, trial: FrozenTrial, obs: Observations,
                     search: AcquisitionSearch) -> AcquisitionSearch:
    """``search`` with :attr:`~AcquisitionSearch.polish_distance` as its refusal radius while
    polishing pays (:data:`POLISH_PATIENCE`), else ``search`` itself; says once per study when
    polishing stops."""
    if search.polish_distance is None:
        return search
    rows = np.flatnonzero(obs.fit_rows)
    rows = rows[np.argsort(obs.numbers[rows], kind="stable")]
    failed = failed_polish(obs.X[rows], obs.y[rows], search.min_distance)
    if failed < POLISH_PATIENCE:
        return dataclasses.replace(search, min_distance=search.polish_distance)
    log_once(study, "polish-stopped", DEBUG,
             "Trial %d: %d trials within min_distance (%g) of earlier points since the best "
             "value last improved did not improve it: polishing stops (polish_distance %g) "
             "until the best value improves again (logged once).", trial.number, failed,
             search.min_distance, search.polish_distance)
    return search


def any_admitted(feasibility: ConstraintModels, space: EncodedSpace,
                 ctx: SelectionContext) -> bool:
    """Whether some quasi-random candidate or observed point is optimistically feasible."""
    C = np.vstack([space.sobol(256, seed=int(ctx.rng.integers(2**31 - 1))),
                   ctx.obs.X[ctx.obs.fit_rows]])
    return not bool(feasibility.infeasible(C).all())


def toward_feasibility(feasibility: ConstraintModels,
                       ctx: SelectionContext) -> tuple[np.ndarray, dict[str, Any]]:
    """CONFIG's other branch: no point is optimistically feasible, so minimise the optimistic
    violation (the same for every sampler)."""
    x, value = ctx.search.maximise(OptimisticViolation(feasibility), ctx.space, ctx.rng,
                                   warm_starts=ctx.warm_starts(), exclude=ctx.excluded)
    return x, {"optimistic_violation": -float(value)}
