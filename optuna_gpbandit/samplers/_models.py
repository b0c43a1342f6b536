"""Observations and models of one suggestion: one GP per objective on the observed, pending
and failed rows, and what the maximiser must avoid (:class:`SelectionContext` per
objective)."""

from __future__ import annotations

import dataclasses

import numpy as np
from optuna.study import Study
from optuna.trial import FrozenTrial

from optuna_gpbandit import _randomness
from optuna_gpbandit.failures import FailedRow
from optuna_gpbandit._history import History
from optuna_gpbandit._fitted_gp import FittedGP, capped_fit, latest_state
from optuna_gpbandit._notices import INFO, log_once
from optuna_gpbandit._observations import Observations, build_observations, study_spread
from optuna_gpbandit.pending import Design
from optuna_gpbandit.reset import ResetView
from optuna_gpbandit._space import EncodedSpace
from optuna_gpbandit.constraints import ConstraintStep
from optuna_gpbandit._maximize import Box
from optuna_gpbandit.search import AcquisitionSearch
from optuna_gpbandit.samplers._context import (SelectionContext, exclusion, polishing_search,
                                               repeats_teach_nothing,
                                              log_repeats, log_ties)
from optuna_gpbandit.samplers._multi import objective_targets, stored_states
from optuna_gpbandit.samplers._settings import Settings


def _box(search: AcquisitionSearch, obs: Observations, fit: FittedGP, space: EncodedSpace,
         n_startup: int) -> Box | None:
    """The trust region of the observed rows (real observations only), if any."""
    rows = np.flatnonzero(obs.fit_rows)
    return search.box(obs.X[rows], obs.y_raw[rows], obs.numbers[rows],
                      fit.posterior.params.lengthscales, ~space.is_categorical, n_startup)


def fit_contexts(study: Study, trial: FrozenTrial, space: EncodedSpace, history: History,
                 design: Design, failed: list[FailedRow], step: ConstraintStep, view: ResetView,
                 settings: Settings, search: AcquisitionSearch, seed: int,
                 n_startup: int) -> list[SelectionContext] | None:
    """One fitted model per objective on the observations (pending and failed rows
    included), with what the maximiser must avoid; ``None``: a quasi-random point instead
    (nothing to model, or a GP that cannot be factorised). ``search``: the settings' search
    for this space (:meth:`~optuna_gpbandit.search.AcquisitionSearch.for_space`)."""
    k = len(study.directions)
    model = settings.model.for_study(k, settings.reset.objective_units)
    previous = (stored_states(history, trial, k) if k > 1
                else [latest_state(history.all_trials, trial.number)])
    fitted = []
    for i, direction in enumerate(study.directions):
        obs = build_observations(
            history.completed, space, direction, model, design=design,
            targets=objective_targets(study, history, i) if k > 1 else step.targets,
            failed=failed, failures=settings.failures,
            scale_floor=study_spread(history.all_trials, study.direction) if view.start else None,
            one_objective=k == 1)  # (a known lower bound is of the one objective)
        if k == 1 and obs.n_observed >= 2 and np.ptp(obs.y_raw) == 0.0:
            # Nothing to model (a constant objective, or a broken one): a GP would fit
            # infinite lengthscales and UCB would bounce between corners.
            log_once(study, "constant-values", INFO,
                     "Trial %d: all %d observed values are equal (%g): nothing to model; "
                     "sampling quasi-random points until they differ (logged once).",
                     trial.number, obs.n_observed, obs.sign * obs.y_raw[0])
            return None
        pair = capped_fit(obs, space, model, previous[i], seed, trial.number,
                          what="the GP" if k == 1 else f"the GP of objective {i}")
        if pair is None:
            return None
        fitted.append(pair)
    rng = _randomness.trial_rng(seed, trial.number, _randomness.SAMPLE)
    ctxs = [SelectionContext(study, trial, space, obs, fit, rng, search,
                             settings.pending.width_bonus(obs, fit.posterior),
                             step.noise_factor, step.delta_factor,
                             feasibility=step.feasibility,
                             n_unresolved=history.n_unresolved,
                             box=_box(search, obs, fit, space, n_startup))
            for obs, fit in fitted]
    # The least deterministic objective decides whether evaluated points are done.
    noisiest = max(ctxs, key=lambda c: c.gp.noise_share)
    all_done = repeats_teach_nothing(study, trial, noisiest.obs, noisiest.gp,
                                     settings.find_out_deterministic)
    avoid = exclusion(noisiest.obs, noisiest.gp, space, history, failed,
                      None if step.feasibility is None else step.feasibility.infeasible,
                      spread=settings.pending.spread, all_done=all_done)
    if k == 1:
        if not step.penalised:  # penalised targets tie by their penalty, not the objective
            log_ties(study, trial, noisiest.obs)
        if not all_done:
            log_repeats(study, trial, noisiest.obs, noisiest.gp)
        search = polishing_search(study, trial, noisiest.obs, search)
    exact = settings.find_out_deterministic and not all_done
    return [dataclasses.replace(c, excluded=avoid, search=search, repeats_exact=exact)
            for c in ctxs]
