"""Study history -> the trials the model sees.

* completed: COMPLETE trials that hold every parameter of the relative search space, in trial
  number order (a value of ``+-inf`` is kept and clipped later; NaN never reaches COMPLETE);
* pending: RUNNING and WAITING trials other than the one being sampled whose point is known for
  every parameter of the space. Another worker's RUNNING trial may not have called all its
  ``suggest_*`` yet, so its params are completed from the relative sample our samplers store on
  every trial they sample (:func:`write_sampled_params`, system attr ``gpbandit:params``); a
  WAITING (enqueued) trial's point is its ``fixed_params``. Pending trials whose point is not
  known yet are only counted (``n_unresolved``);
* dead: RUNNING trials presumed left behind by a crashed worker (:func:`dead_trial_ids`), kept
  out of the model (their points are still not proposed again);
* failed: FAIL and PRUNED trials, and COMPLETE trials with a non-finite value, whose point is
  known (completed like a pending trial's from the stored relative sample), for the failure
  stage (:mod:`optuna_gpbandit.failures`);
* delays: how long a finished trial took, in launches of other trials or in seconds
  (:func:`trial_delay`, for the censoring window of :mod:`optuna_gpbandit.pending`).
"""

from __future__ import annotations

import dataclasses
import datetime
import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from optuna.distributions import BaseDistribution
from optuna.storages._heartbeat import BaseHeartbeat, is_heartbeat_enabled
from optuna.study import Study, StudyDirection
from optuna.trial import FrozenTrial, TrialState

from optuna_gpbandit._storage import FINISH, PARAMS, STAMP, read_trial_json, write_trial_json

# A RUNNING trial is presumed dead after 10 x the longest finished run, and not before 5 min
# [design choice]: a crashed worker's trial is RUNNING forever, so any finite limit retires it;
# a generous one spares a slow healthy trial (a good configuration training long).
STALE_FACTOR = 10.0
STALE_MIN_SECONDS = 300.0


def direction_sign(direction: StudyDirection) -> float:
    """``+1`` for a maximised objective, ``-1`` for a minimised one: the factor that orients
    values so that larger is better (the one home of this rule)."""
    return -1.0 if direction == StudyDirection.MINIMIZE else 1.0


def finite_result(trial: FrozenTrial) -> bool:
    """Whether a trial's objective value(s) are all finite (single- or multi-objective)."""
    return trial.values is not None and all(math.isfinite(v) for v in trial.values)


@dataclass(frozen=True)
class PendingTrial:
    """A trial of another caller with its full point: RUNNING or WAITING (pending), or FAIL,
    PRUNED or COMPLETE with a non-finite value (failed)."""

    trial: FrozenTrial
    params: dict[str, Any]
    written: float  # time.time() after the sampler stored the point; -inf if unknown


@dataclass(frozen=True)
class History:
    """Trials visible to the model for one sampling call."""

    current: FrozenTrial
    completed: list[FrozenTrial]
    pending: list[PendingTrial]
    n_unresolved: int
    all_trials: list[FrozenTrial]
    failed: list[PendingTrial] = dataclasses.field(default_factory=list)
    dead: list[PendingTrial] = dataclasses.field(default_factory=list)

    def since(self, start: int) -> "History":
        """This history without the completed, pending and failed trials numbered below
        ``start`` (a model that forgot them: change points, restarts)."""
        return dataclasses.replace(
            self,
            completed=[t for t in self.completed if t.number >= start],
            pending=[p for p in self.pending if p.trial.number >= start],
            failed=[p for p in self.failed if p.trial.number >= start],
        )


def write_sampled_params(
    study: Study,
    trial: FrozenTrial,
    params: dict[str, Any],
    search_space: dict[str, BaseDistribution],
    rewrite: bool = False,
) -> float:
    """Store the relative sample of ``trial`` (internal representations) for other workers.

    Then store, as ``gpbandit:stamp``, the time at which the point was in storage: a reader whose
    stamp is later is sure to see this point. Returns that stamp. ``rewrite`` when replacing an
    earlier sample.
    """
    record = {
        "params": {n: float(search_space[n].to_internal_repr(v)) for n, v in params.items()}
    }
    write_trial_json(study, trial, PARAMS, record, rewrite=rewrite)
    stamp = time.time()
    study._storage.set_trial_system_attr(trial._trial_id, STAMP, stamp)
    return stamp


def _valid(dist: BaseDistribution, value: Any) -> bool:
    try:
        return bool(dist._contains(dist.to_internal_repr(value)))
    except (TypeError, ValueError, IndexError):
        return False


def pending_point(
    trial: FrozenTrial, search_space: dict[str, BaseDistribution], conditional: bool = False
) -> tuple[dict[str, Any], float] | None:
    """The full point of a trial in ``search_space`` and its time stamp (``-inf`` if unknown),
    or ``None``. ``conditional``: a point may lack parameters (those of other branches), but
    not all of them."""
    stamp = trial.system_attrs.get(STAMP)
    stamp = float(stamp) if isinstance(stamp, (int, float)) else -math.inf
    if trial.state == TrialState.WAITING:
        known = dict(trial.system_attrs.get("fixed_params") or {})
    else:
        known = {}
        stored = read_trial_json(trial, PARAMS)
        if isinstance(stored, dict) and isinstance(stored.get("params"), dict):
            for name, internal in stored["params"].items():
                dist = search_space.get(name)
                if dist is None:
                    continue
                try:
                    known[name] = dist.to_external_repr(internal)
                except (TypeError, ValueError, IndexError):
                    continue
    known.update(trial.params)
    point = {}
    for name, dist in search_space.items():
        if conditional and name not in known:
            continue
        if name not in known or not _valid(dist, known[name]):
            return None
        point[name] = known[name]
    return (point, stamp) if point or not conditional else None


def seconds_between(a: datetime.datetime | None, b: datetime.datetime | None) -> float | None:
    """Seconds from ``a`` to ``b`` (``None`` if either is unknown)."""
    if a is None or b is None:
        return None
    return (b - a).total_seconds()


def start_times(trials: list[FrozenTrial]) -> np.ndarray:
    """Start times (POSIX seconds) indexed by trial number; ``inf`` if unknown."""
    starts = np.full(max((t.number for t in trials), default=-1) + 1, np.inf)
    for t in trials:
        if t.datetime_start is not None:
            starts[t.number] = t.datetime_start.timestamp()
    return starts


def trial_delay(
    trial: FrozenTrial, all_trials: list[FrozenTrial], unit: str, starts: np.ndarray | None = None
) -> float:
    """Delay of a finished trial: launches of other trials while it ran (``unit="trials"``;
    the count the pending rule stored when it finished, ``gpbandit:finish``, if any), or its
    duration (``"seconds"``).

    ``starts`` (:func:`start_times` of ``all_trials``) saves recomputing it per trial.
    """
    if unit == "seconds":
        return seconds_between(trial.datetime_start, trial.datetime_complete) or 0.0
    n = read_trial_json(trial, FINISH)
    if isinstance(n, int):
        return float(max(n - trial.number - 1, 0))
    end = trial.datetime_complete
    if end is None:
        return 0.0
    if starts is None:
        starts = start_times(all_trials)
    return float(np.count_nonzero(starts[trial.number + 1 :] <= end.timestamp()))



def _duration(t: FrozenTrial) -> float | None:
    if t.datetime_start is None or t.datetime_complete is None:
        return None
    return (t.datetime_complete - t.datetime_start).total_seconds()


def dead_trial_ids(
    study: Study, trials: list[FrozenTrial], current: FrozenTrial, stale_after: float | None
) -> set[int]:
    """Numbers of RUNNING trials presumed dead (their worker crashed).

    Those running for more than ``stale_after`` seconds, by default (``None``) ``STALE_FACTOR``
    times the longest run of a finished trial and at least ``STALE_MIN_SECONDS`` (no limit
    before a trial with known times has finished; ``math.inf``: never), measured at the start
    of ``current`` (workers' clocks must agree); and, with Optuna's heartbeat
    (``RDBStorage(heartbeat_interval=...)``), those whose heartbeat is older than the grace
    period, which ``optuna.storages.fail_stale_trials`` would fail.
    """
    running = [t for t in trials if t.state == TrialState.RUNNING and t.number != current.number]
    if not running:
        return set()
    dead: set[int] = set()
    storage = study._storage
    # (is_heartbeat_enabled tests isinstance(storage, BaseHeartbeat) too: here for the type)
    if isinstance(storage, BaseHeartbeat) and is_heartbeat_enabled(storage):
        stale = set(storage._get_stale_trial_ids(study._study_id))
        dead = {t.number for t in running if t._trial_id in stale}
    if stale_after is None:
        runs = [d for d in map(_duration, trials) if d is not None]
        if not runs:
            return dead
        stale_after = max(STALE_FACTOR * max(runs), STALE_MIN_SECONDS)
    now = current.datetime_start or datetime.datetime.now()
    return dead | {
        t.number for t in running
        if t.datetime_start is not None
        and (now - t.datetime_start).total_seconds() > stale_after
    }


def collect_history(
    study: Study,
    search_space: dict[str, BaseDistribution],
    current: FrozenTrial,
    stale_after: float | None = None,
    conditional: bool = False,
) -> History:
    """Split the study's trials for the relative ``search_space`` (``stale_after``: see
    :func:`dead_trial_ids`; ``conditional``: trials may use some of its parameters only, see
    :mod:`optuna_gpbandit._conditional`)."""
    trials = study._get_trials(deepcopy=False, use_cache=False)
    dead_ids = dead_trial_ids(study, trials, current, stale_after)
    dead: list[PendingTrial] = []
    names = list(search_space)
    completed: list[FrozenTrial] = []
    pending: list[PendingTrial] = []
    failed: list[PendingTrial] = []
    n_unresolved = 0
    for t in sorted(trials, key=lambda t: t.number):
        if t.number == current.number:
            continue
        if t.state == TrialState.COMPLETE and finite_result(t):
            if (any if conditional else all)(n in t.params for n in names):
                completed.append(t)
        elif t.state in (TrialState.COMPLETE, TrialState.FAIL, TrialState.PRUNED):
            found = pending_point(t, search_space, conditional)
            if found is not None:
                failed.append(PendingTrial(t, found[0], found[1]))
        elif t.state in (TrialState.RUNNING, TrialState.WAITING):
            found = pending_point(t, search_space, conditional)
            if found is None:
                n_unresolved += t.number not in dead_ids
            elif t.number in dead_ids:
                dead.append(PendingTrial(t, found[0], found[1]))
            else:
                pending.append(PendingTrial(t, found[0], found[1]))
    return History(current, completed, pending, n_unresolved, trials, failed, dead)
