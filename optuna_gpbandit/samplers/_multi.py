"""Multi-objective studies: one GP per objective, random scalarisations of their acquisitions.

Paria, Kandasamy & Poczos (UAI 2019): each trial draws ``lambda`` uniformly from the simplex
(from the trial's own random stream, so workers and resumed studies draw the same), builds the
sampler's own acquisition for every objective (GP-UCB's or IGP-UCB's upper bound, or a GP-TS
path draw) and maximises their scalarisation (:mod:`optuna_gpbandit.acquisition.scalarize`).
The suggestion runs the single-objective stages with ``k`` models instead of one
(:meth:`GPBanditSampler._choose`); what differs is here: each objective's targets and stored
hyperparameters, the scalarised acquisition and the record. Each objective's hyperparameters
are stored in the trial's ``gpbandit:state`` record (``"objectives"``) and warm-start the next
fit.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np
from optuna.study import Study
from optuna.trial import FrozenTrial

from optuna_gpbandit import _randomness
from optuna_gpbandit._history import History, direction_sign
from optuna_gpbandit._fitted_gp import latest_state
from optuna_gpbandit._notices import INFO, log_once
from optuna_gpbandit.constraints import ConstraintRule, NoConstraints
from optuna_gpbandit.reset import NoReset, Reset
from optuna_gpbandit.acquisition.scalarize import Scalarized, draw_weights
from optuna_gpbandit.samplers._context import SelectionContext
from optuna_gpbandit.samplers._record import MultiPointRecord

_N_WARM_STARTS = 2  # best observed points per objective offered to the maximiser


def check_objectives(study: Study, sampler_name: str, supported: bool, *,
                     reset: Reset = NoReset(),
                     constraints: ConstraintRule = NoConstraints()) -> None:
    """Raise for a multi-objective study a sampler (``supported``: whether its acquisition
    can be scalarised) or its settings (a ``reset`` or ``constraints`` rule of one objective)
    cannot serve."""
    if not study._is_multi_objective():
        return
    k = len(study.directions)
    if not supported:
        raise ValueError(
            f"{sampler_name} supports single-objective studies only; this study has "
            f"{k} objectives (GPUCBSampler, IGPUCBSampler and GPTSSampler support several)."
        )
    if not reset.multi_objective:
        raise ValueError(f"reset={type(reset).__name__}(...) supports single-objective studies "
                         f"only; this study has {k} objectives.")
    if not constraints.multi_objective:
        raise ValueError(
            f"constraints={type(constraints).__name__}(...) supports single-objective studies "
            f"only; this study has {k} objectives. constraints='auto' (the default) keeps each "
            "trial to the points the constraint models admit."
        )


def check_single_objective(study: Study) -> None:
    """Raise for a study with several objectives (reports and methods of one objective)."""
    if study._is_multi_objective():
        raise ValueError(
            "optuna_gpbandit samplers support single-objective studies only; this study has "
            f"{len(study.directions)} objectives."
        )


def objective_targets(study: Study, history: History, i: int) -> dict[int, float]:
    """Objective ``i``'s values of the completed trials, oriented for maximisation."""
    sign = direction_sign(study.directions[i])
    return {t.number: sign * t.values[i] for t in history.completed}


def stored_states(history: History, trial: FrozenTrial, k: int) -> list[dict | None]:
    """Each objective's hyperparameters from the latest record (``None`` where there is none)."""
    previous = latest_state(history.all_trials, trial.number, key="objectives")
    stored = previous["objectives"] if previous is not None else []
    return [stored[i] if isinstance(stored, list) and i < len(stored)
            and isinstance(stored[i], dict) else None for i in range(k)]


def trial_weights(seed: int, number: int, k: int) -> np.ndarray:
    """The scalarisation weights of trial ``number``: uniform on the simplex, from the trial's
    own stream (drawn also when the trial moves toward feasibility: they are recorded)."""
    return draw_weights(k, _randomness.trial_rng(seed, number, _randomness.WEIGHTS))


def scalarised_choice(
    ctxs: Sequence[SelectionContext], history: History, weights: np.ndarray, kind: str,
    acquisition: Callable[[SelectionContext], tuple[Any, dict[str, Any]]],
) -> tuple[np.ndarray, dict[str, Any]]:
    """The maximiser of a random scalarisation of the objectives' acquisitions, and its
    record."""
    study = ctxs[0].study
    used = _varying_objectives(study, history)
    parts, records = zip(*(acquisition(c) for c in ctxs))
    reference = np.array([float(np.min(c.obs.y[c.obs.fit_rows])) for c in ctxs])
    acq = Scalarized([parts[i] for i in used], weights[used] / weights[used].sum(), kind,
                     reference[used])
    warm = np.vstack([c.warm_starts()[:_N_WARM_STARTS] for c in ctxs])
    record: dict[str, Any] = {"per_objective": list(records)}
    if used.size < len(ctxs):
        record["scalarized_objectives"] = used.tolist()  # constant ones left out
    return ctxs[0].maximise(acq, warm), record


def multi_record(ctxs: Sequence[SelectionContext], x: np.ndarray, weights: np.ndarray,
                 kind: str) -> MultiPointRecord:
    """What the models say of ``x`` in a multi-objective step (per-objective lists)."""
    steps = [c.step_record(x) for c in ctxs]
    return MultiPointRecord(
        t=steps[0].t, weights=weights.tolist(), scalarization=kind,
        mu=[r.mu for r in steps], sigma=[r.sigma for r in steps],
        n_observed=steps[0].n_observed, n_posterior=[r.n_posterior for r in steps],
        refitted=[r.refitted for r in steps],
        objectives=[c.gp.state(c.space) for c in ctxs],
    )


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
