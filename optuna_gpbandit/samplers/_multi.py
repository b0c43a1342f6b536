"""Multi-objective studies: one GP per objective, random scalarisations of their acquisitions.

Paria, Kandasamy & Poczos (UAI 2019): each trial draws ``lambda`` uniformly from the simplex
(from the trial's own random stream, so workers and resumed studies draw the same), builds the
sampler's own acquisition for every objective (GP-UCB's or IGP-UCB's upper bound, or a GP-TS
path draw) and maximises their scalarisation (:mod:`optuna_gpbandit.acquisition.scalarize`).
Pending and failed trials enter every objective's GP as in a single-objective study; one set
of constraint models (``constraints="auto"``) keeps the maximiser to the points they admit.
Each objective's hyperparameters are stored in the trial's ``gpbandit:state`` record
(``"objectives"``) and warm-start the next fit.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import numpy as np
from optuna.study import Study, StudyDirection
from optuna.trial import FrozenTrial

from optuna_gpbandit import _randomness, _row_effects
from optuna_gpbandit._pending import Design
from optuna_gpbandit._failures import FailedRow
from optuna_gpbandit._history import History
from optuna_gpbandit._notices import INFO, log_once
from optuna_gpbandit._model import latest_state
from optuna_gpbandit._observations import build_observations
from optuna_gpbandit._space import EncodedSpace
from optuna_gpbandit.acquisition.scalarize import Scalarized, draw_weights
from optuna_gpbandit.constraints import ConstraintModels
from optuna_gpbandit.samplers._context import (SelectionContext, any_admitted, exclusion,
                                              toward_feasibility)

if TYPE_CHECKING:
    from optuna_gpbandit.samplers._base import GPBanditSampler

_N_WARM_STARTS = 2  # best observed points per objective offered to the maximiser


def choose_multi(sampler: GPBanditSampler, study: Study, trial: FrozenTrial, space: EncodedSpace,
                 history: History, design: Design, failed: list[FailedRow],
                 feasibility: ConstraintModels | None,
                 extra: dict[str, Any]) -> tuple[np.ndarray, dict[str, Any] | None]:
    """The encoded next point of a multi-objective study and its record (``None``: a
    quasi-random point, when a GP cannot be factorised)."""
    previous = latest_state(history.all_trials, trial.number, key="objectives")
    stored = previous["objectives"] if previous is not None else []
    rng = _randomness.trial_rng(sampler._seed, trial.number, _randomness.SAMPLE)
    ctxs = []
    for i, direction in enumerate(study.directions):
        sign = -1.0 if direction == StudyDirection.MINIMIZE else 1.0
        targets = {t.number: sign * t.values[i] for t in history.completed}
        obs = build_observations(
            history.completed, space, direction, sampler._standardize, design=design,
            hallucinate=sampler._pending_mode == "hallucinate", targets=targets,
            failed=failed if sampler._failures == "impute" else None,
        )
        prev = stored[i] if isinstance(stored, list) and i < len(stored) else None
        fitted = sampler._capped_model(obs, space, trial, prev if isinstance(prev, dict) else None,
                                       what=f"the GP of objective {i}")
        if fitted is None:
            return sampler._startup_point(space, trial.number), None
        obs, model = fitted
        bonus = _row_effects.width_bonus(obs, model.posterior, sampler._censoring)
        ctxs.append(SelectionContext(study, trial, space, obs, model, rng, bonus,
                                     feasibility=feasibility))
    # The least deterministic objective decides whether evaluated points are done.
    noisiest = max(ctxs, key=lambda c: c.model.posterior.effective_noise_var
                   / c.model.posterior.params.scale)
    pending_X = exclusion(noisiest.obs, noisiest.model, space, history, failed,
                          None if feasibility is None else feasibility.infeasible)
    ctxs = [dataclasses.replace(c, pending_X=pending_X) for c in ctxs]
    weights = draw_weights(len(ctxs), _randomness.trial_rng(sampler._seed, trial.number,
                                                            _randomness.WEIGHTS))
    used = _varying_objectives(study, history)
    record: dict[str, Any]
    if feasibility is not None and not any_admitted(feasibility, space, ctxs[0]):
        x, record = toward_feasibility(feasibility, ctxs[0], sampler._n_candidates,
                                       sampler._n_local_search)
    else:
        parts, records = zip(*(sampler._acquisition(c) for c in ctxs))
        reference = np.array([float(np.min(c.obs.y[c.obs.fit_rows])) for c in ctxs])
        acq = Scalarized([parts[i] for i in used], weights[used] / weights[used].sum(),
                         sampler._scalarization, reference[used])
        warm = np.vstack([c.warm_starts()[:_N_WARM_STARTS] for c in ctxs])
        x = sampler._maximise(ctxs[0], acq, warm)
        record = {"per_objective": list(records)}
        if used.size < len(ctxs):
            record["scalarized_objectives"] = used.tolist()  # constant ones left out
    steps = [c.step_record(x) for c in ctxs]
    record.update(
        t=steps[0]["t"], weights=weights.tolist(), scalarization=sampler._scalarization,
        mu=[r["mu"] for r in steps], sigma=[r["sigma"] for r in steps],
        n_observed=steps[0]["n_observed"], n_posterior=[r["n_posterior"] for r in steps],
        refitted=[r["refitted"] for r in steps],
        objectives=[c.model.state(space) for c in ctxs],
    )
    record.update(extra)
    return x, record


def _varying_objectives(study: Study, history: History) -> np.ndarray:
    """Indices of the objectives that enter the scalarisation: all but the constant ones.

    An objective whose completed trials all gave one value (a model size the tuned
    parameters do not change) offers no trade-off, and under the Chebyshev scalarisation its
    flat term is the minimum wherever the other objectives' bounds are higher, so the
    maximiser would only explore. Such objectives are left out (logged once) while at least
    two trials completed and some objective varies; the weights are renormalised over the
    rest."""
    k = len(study.directions)
    if len(history.completed) < 2:
        return np.arange(k)
    values = np.array([t.values for t in history.completed], dtype=float)
    constant = np.all(values == values[0], axis=0)
    if not constant.any() or constant.all():
        return np.arange(k)
    log_once(study, "constant-objectives", INFO,
             "Objective(s) %s gave one value in all %d completed trials: left out of the "
             "scalarisation until they vary.", ", ".join(map(str, np.flatnonzero(constant))),
             len(history.completed))
    return np.flatnonzero(~constant)
