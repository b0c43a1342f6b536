"""Restarts (``reset=Restarts()``): which trials the model sees once it has settled on a
(possibly local) optimum.

A run has settled when, for ``RESTART_PATIENCE`` consecutive completed trials, the model was
certain of its choice (a model trial whose posterior sd at the chosen point was below
``CERTAIN_SD``, standardised units) and gained nothing from it (no result beat the segment's
best by more than ``MIN_GAIN`` of the segment's value range), while it is still unsure of much
of the domain (mean posterior sd over quasi-random points at least ``UNEXPLORED_SD`` of the
prior's, recorded as ``unexplored`` by the trial that completes the streak). Where the data
cover the domain, as in 2-3 dimensions after a few dozen trials, the model's certainty is
earned and a restart would only repeat the search. The model then
starts again: it sees only the trials from the next one on (a fresh start-up design, then the
sampler's own rule), as TuRBO restarts its trust region (Eriksson et al. 2019). The study's
best trial is kept (it is the study's); only the model forgets.

Why (issue 18, ``benchmarks/bench_stuck.py``): in the Hartmann-6 runs that end in a local
minimum, the model is confidently wrong about the global basin, which its first dozen trials
missed (docs/benchmarks.md, "Restarts"); neither a wider confidence bound nor a lengthscale cap
makes it look, fresh data does. Restarts cost: every one spends a start-up
design and a climb, so they are off by default.

Everything is replayed from the stored trials (values, completion times and the
``gpbandit:state`` records of the model trials), in the order the results came in: resumed and
distributed studies agree, and a late result never moves a restart already made.
"""

from __future__ import annotations

import dataclasses
import datetime
import math
from typing import Any

import numpy as np
from optuna.study import Study, StudyDirection
from optuna.trial import FrozenTrial, TrialState

from optuna_gpbandit._arguments import check_int, check_number
from optuna_gpbandit._history import History, direction_sign
from optuna_gpbandit._notices import DEBUG, INFO, log_once
from optuna_gpbandit._space import EncodedSpace
from optuna_gpbandit._storage import STATE, read_trial_json
from optuna_gpbandit.reset import Reset, ResetRecord, ResetView
from optuna_gpbandit.gp.posterior import GPPosterior

RESTART_PATIENCE = 10  # consecutive settled trials [design choice]
CERTAIN_SD = 0.04  # posterior sd at the chosen point, standardised units [design choice]
MIN_GAIN = 1e-3  # an improvement smaller than this fraction of the value range is none
UNEXPLORED_SD = 0.5  # mean posterior sd over the domain / prior sd [design choice]
UNEXPLORED_KEY = "unexplored"
_UNEXPLORED_POINTS = 256


def _number(rec: dict, key: str) -> float | None:
    v = rec.get(key)
    return float(v) if isinstance(v, (int, float)) and math.isfinite(v) else None


def _certain(rec: dict | None, certain_sd: float) -> bool:
    """Whether ``rec`` (a model trial's record) has the posterior sd at its point below
    ``certain_sd`` (standardised)."""
    if not isinstance(rec, dict):
        return False
    sigma, scale = _number(rec, "sigma"), _number(rec, "y_scale")
    return sigma is not None and scale is not None and scale > 0 and sigma / scale < certain_sd


@dataclasses.dataclass(frozen=True, kw_only=True)
class Restarts(Reset):
    """Restarts of the model once it has settled: ``reset=Restarts()``.

    Once the model has been certain of its choices for ``patience`` consecutive trials
    (posterior sd at the chosen point below ``certain_sd`` of the objective's sd), none of them
    improved the best value by more than ``min_gain`` of the value range, and much of the
    domain is still unexplored (mean posterior sd over quasi-random points at least
    ``unexplored_sd`` of the prior's), the model forgets the trials so far and starts again
    with a fresh start-up design (each restart logged; the study's best trial is kept;
    :mod:`optuna_gpbandit.restarts`). A run captured by a local optimum in 5 or more
    dimensions gets another chance, at the price of a start-up design and a climb per
    restart; where the data cover the domain (a few dimensions and 100 trials) it does not
    restart (docs/benchmarks.md, "Restarts"). Single-objective studies only.

    Parameters
    ----------
    patience
        Consecutive settled trials before a restart (default 10).
    certain_sd
        Posterior sd at the chosen point, in standardised units, below which the model was
        certain of its choice (default 0.04).
    min_gain
        An improvement smaller than this fraction of the segment's value range is none
        (default 1e-3).
    unexplored_sd
        The coverage gate: mean posterior sd over the domain, as a fraction of the prior sd,
        from which much of the domain counts as unexplored (default 0.5).
    """

    patience: int = RESTART_PATIENCE
    certain_sd: float = CERTAIN_SD
    min_gain: float = MIN_GAIN
    unexplored_sd: float = UNEXPLORED_SD

    def __post_init__(self) -> None:
        check_int("patience", self.patience, 1)
        for name in ("certain_sd", "min_gain", "unexplored_sd"):
            check_number(name, getattr(self, name))

    @property
    def fresh_startup(self) -> bool:
        return True

    @property
    def multi_objective(self) -> bool:
        return False

    def view(self, study: Study, trial: FrozenTrial, space: EncodedSpace, history: History,
             seed: int, sampler_name: str) -> ResetView:
        """The history since the study's last restart (logged once per restart)."""
        replayed = replay(history.all_trials, study.direction, self)
        if not replayed.starts:
            return ResetView(history, 0, streak=replayed.streak)
        start = replayed.start
        # the first restart at INFO, the later ones at DEBUG: one line of this kind per study
        log_once(study, f"restart-{start}", INFO if len(replayed.starts) == 1 else DEBUG,
                 "%s: restart %d at trial %d: the model was certain of its last %d choices, "
                 "none improved the best value and much of the domain is unexplored; it now "
                 "sees trials %d on (a fresh start-up design first). The study's best trial is "
                 "kept; later restarts are logged at DEBUG.", sampler_name,
                 len(replayed.starts), start, self.patience, start)
        return ResetView(history.since(start), start, streak=replayed.streak,
                         record=ResetRecord(restart_start=start, restarts=len(replayed.starts)))

    def annotate(self, view: ResetView, history: History, posterior: GPPosterior,
                 space: EncodedSpace, seed: int) -> dict[str, Any]:
        """While this trial may complete a settled streak: how much of the domain the model
        has not seen (``unexplored``)."""
        if view.streak + len(history.pending) >= self.patience - 1:
            return {UNEXPLORED_KEY: unexplored(posterior, space, seed)}
        return {}


@dataclasses.dataclass(frozen=True)
class Replayed:
    """The replayed restarts: ``starts``, the trial numbers at which the model restarted (the
    first trial each new segment holds), and ``streak``, the settled trials since (certain of
    the choice, no gain)."""

    starts: tuple[int, ...]
    streak: int

    @property
    def start(self) -> int:
        """First trial number of the current segment (0 before any restart)."""
        return self.starts[-1] if self.starts else 0


def _first_created_after(trials: list[FrozenTrial], moment: datetime.datetime) -> int:
    """The number of the first trial started after ``moment``; the next number if none yet."""
    later = [t.number for t in trials if t.datetime_start is not None and t.datetime_start > moment]
    return min(later) if later else max(t.number for t in trials) + 1


def replay(trials: list[FrozenTrial], direction: StudyDirection,
           settings: Restarts | None = None) -> Replayed:
    """The restarts of a study from its ``trials`` (any order; only COMPLETE ones with finite
    values count) under ``settings`` (default ``Restarts()``).

    Results are replayed in the order they came in (completion time, then number), so a late
    result of an early trial never moves a restart already made: a restart at the completion
    of trial k keeps the trials started after it (the first new segment's number is that of
    the first trial started later; in a sequential study, k + 1).
    """
    cfg = Restarts() if settings is None else settings
    sign = direction_sign(direction)
    done = sorted((t for t in trials if t.state == TrialState.COMPLETE and t.value is not None
                   and math.isfinite(t.value) and t.datetime_complete is not None),
                  key=lambda t: (t.datetime_complete, t.number))
    starts: list[int] = []
    streak, best, lo, hi = 0, -math.inf, math.inf, -math.inf
    for t in done:
        assert t.value is not None and t.datetime_complete is not None  # as filtered above
        if starts and t.number < starts[-1]:
            continue  # chosen by the model before the restart
        v = sign * float(t.value)
        lo, hi = min(lo, v), max(hi, v)
        gained = v > best + cfg.min_gain * (hi - lo)
        best = max(best, v)
        rec = None if gained else read_trial_json(t, STATE)  # a gain ends the streak
        streak = streak + 1 if _certain(rec, cfg.certain_sd) else 0
        unexplored = _number(rec, UNEXPLORED_KEY) if isinstance(rec, dict) else None
        if (streak >= cfg.patience and unexplored is not None
                and unexplored >= cfg.unexplored_sd):
            starts.append(_first_created_after(trials, t.datetime_complete))
            streak, best, lo, hi = 0, -math.inf, math.inf, -math.inf
    return Replayed(tuple(starts), streak)


def restart_points(trials: list[FrozenTrial], direction: StudyDirection,
                   settings: Restarts | None = None) -> list[int]:
    """Trial numbers at which the model restarted (see :func:`replay`)."""
    return list(replay(trials, direction, settings).starts)


def unexplored(posterior: GPPosterior, space: EncodedSpace, seed: int) -> float:
    """Mean posterior sd over 256 quasi-random points of the domain, as a fraction of the
    prior sd: 1 where the model has seen nothing, near 0 where the data cover the domain."""
    _, var = posterior.mean_var(space.sobol(_UNEXPLORED_POINTS, seed=seed))
    return float(np.mean(np.sqrt(np.maximum(var, 0.0) / posterior.params.scale)))
