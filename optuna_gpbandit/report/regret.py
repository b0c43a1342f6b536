"""Regret and information-gain report of a finished (or running) study.

Regret needs the known optimum of the objective, so this is for benchmarks and test functions:

* instantaneous regret ``r_t = |f* - f(x_t)|`` oriented by the study direction;
* cumulative regret ``R_T = sum_{t<=T} r_t``, average regret ``R_T / T``;
* simple regret ``S_T = min_{t<=T} r_t``;
* information gain of the design ``0.5 log det(I + K_T / noise)`` and its running curve (chain rule,
  Srinivas et al. Lemma 5.3), under the GP hyperparameters the sampler last stored in the study or
  under hyperparameters passed in.

Only COMPLETE trials count, in trial-number order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import optuna
from optuna.study import Study, StudyDirection
from optuna.trial import FrozenTrial, TrialState

from optuna_gpbandit._fitted_gp import latest_state
from optuna_gpbandit._storage import STATE, read_trial_json
from optuna_gpbandit._space import EncodedSpace
from optuna_gpbandit.gp.posterior import GPParams, GPPosterior


@dataclass(frozen=True)
class RegretReport:
    """Per-trial regret curves and the information gain of a study's design.

    Attributes
    ----------
    numbers
        Trial numbers of the COMPLETE trials, in order.
    instantaneous, cumulative, average, simple
        Regret curves aligned with ``numbers``.
    information_gain
        Running information gain of the design (``None`` if no GP hyperparameters are known).
    """

    numbers: np.ndarray
    instantaneous: np.ndarray
    cumulative: np.ndarray
    average: np.ndarray
    simple: np.ndarray
    information_gain: np.ndarray | None

    @property
    def total_information_gain(self) -> float | None:
        ig = self.information_gain
        return None if ig is None or ig.size == 0 else float(ig[-1])

    def summary(self) -> dict[str, float | None]:
        """Final cumulative, average and simple regret and the total information gain."""
        if self.numbers.size == 0:
            return {"n": 0, "cumulative": None, "average": None, "simple": None,
                    "information_gain": None}
        return {
            "n": int(self.numbers.size),
            "cumulative": float(self.cumulative[-1]),
            "average": float(self.average[-1]),
            "simple": float(self.simple[-1]),
            "information_gain": self.total_information_gain,
        }


def sampler_record(trial: FrozenTrial) -> dict | None:
    """The record a GP bandit sampler stored on ``trial`` when it sampled it, or ``None``.

    Keys: ``t`` (round), ``beta`` (UCB samplers) or ``v`` (GP-TS), ``mu`` and ``sigma`` (posterior
    at the chosen point, in objective units), ``info_gain`` (of the design before the point),
    ``info_gain_inc`` (of the new point), ``refitted``, ``n_fit`` and ``gp`` (hyperparameters).
    Startup and independent-sampler trials have no record.
    """
    return read_trial_json(trial, STATE)


def pending_counts(study: Study) -> dict[str, int] | None:
    """How the most recently sampled trial's model saw the study's trials, or ``None``.

    Keys (see :meth:`optuna_gpbandit.pending.Design.counts`): ``observed`` (completed
    results used), ``late`` (completed results censored: only with ``Censoring.paper()`` or
    ``discard_late=True``), ``pending`` (running or waiting trials in the model), ``stale``
    (running beyond the censoring window), ``dead`` (running trials presumed crashed, left
    out), ``unresolved`` (running trials whose point is not known yet), and ``trial``, the
    number of the trial whose record this is.
    """
    for trial in sorted(study.get_trials(deepcopy=False), key=lambda t: -t.number):
        record = sampler_record(trial)
        if record is not None and isinstance(record.get("pending"), dict):
            return {"trial": trial.number, **record["pending"]}
    return None


def regret_curves(values: np.ndarray, optimum: float, maximize: bool) -> tuple[np.ndarray, ...]:
    """``(instantaneous, cumulative, average, simple)`` regret of a sequence of values."""
    values = np.asarray(values, dtype=float)
    r = (optimum - values) if maximize else (values - optimum)
    cum = np.cumsum(r)
    avg = cum / np.arange(1, r.size + 1)
    simple = np.minimum.accumulate(r) if r.size else r
    return r, cum, avg, simple


def design_information_gain(study: Study, params: GPParams | None = None) -> np.ndarray | None:
    """Running information gain of the COMPLETE trials' points.

    ``params`` defaults to the hyperparameters stored by the sampler on the most recent trial;
    returns ``None`` if there are none (e.g. the study was not run with our samplers).
    """
    trials = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
    space_dists = {
        n: d for n, d in optuna.search_space.intersection_search_space(trials).items() if not d.single()
    }
    names = list(space_dists)
    if params is None:
        state = latest_state(study.get_trials(deepcopy=False), np.iinfo(np.int64).max)
        if state is None or state.get("names") != names:
            return None
        params = GPParams.from_json(state["gp"])
    trials = sorted((t for t in trials if all(n in t.params for n in names)), key=lambda t: t.number)
    if not trials:
        return np.zeros(0)
    space = EncodedSpace(space_dists)
    X = space.encode_many([t.params for t in trials])
    post = GPPosterior(X, np.zeros(len(trials)), params, space.is_categorical)
    return np.cumsum(post.information_gain_increments())


def regret_report(study: Study, optimum: float, params: GPParams | None = None) -> RegretReport:
    """Regret curves (given the known optimum ``optimum``) and the design's information gain.

    Parameters
    ----------
    study
        A single-objective study.
    optimum
        The best achievable objective value (a maximum for ``maximize``, a minimum otherwise).
    params
        GP hyperparameters for the information gain; default: the sampler's last stored ones.
    """
    if study._is_multi_objective():
        raise ValueError("regret_report supports single-objective studies only; use "
                         "hypervolume_report for several objectives.")
    trials = sorted(
        study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)), key=lambda t: t.number
    )
    values = np.array([t.value for t in trials], dtype=float)
    r, cum, avg, simple = regret_curves(values, optimum, study.direction == StudyDirection.MAXIMIZE)
    return RegretReport(
        numbers=np.array([t.number for t in trials], dtype=int),
        instantaneous=r,
        cumulative=cum,
        average=avg,
        simple=simple,
        information_gain=design_information_gain(study, params),
    )
