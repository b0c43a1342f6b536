"""Failed trials -> rows the model learns from (``failures=FailedTrials(...)``) [design choice].

A study's failed trials say where *not* to go: a diverging learning rate, an out-of-memory
batch size. Dropping them (what Optuna's GPSampler and TPE do) leaves the acquisition's argmax
where it was, so a GP bandit asks the failing point again and again. With ``"impute"`` (the
default, ``FailedTrials(impute=True)``):

==============================================  ===============================================
trial                                           row in the model
==============================================  ===============================================
FAIL (an exception, or a NaN value)             the worst observed value
COMPLETE with ``+-inf``                         the worst observed value
PRUNED with intermediate values                 its last finite intermediate value (as TPE),
                                                clipped to the observed range
PRUNED without one                              the worst observed value
==============================================  ===============================================

"Worst observed" is the lowest oriented target of the COMPLETE trials the model sees (after
any constraint penalty), so the imputed rows never stretch the standardisation. They enter the
posterior but not the hyperparameter fit (a cliff of imputed values would shrink the
lengthscales for the whole space). ``FailedTrials(impute=False)`` is the former behaviour: such trials are left
out of the model (logged once with their count).

In both modes the points of these trials are excluded from the maximiser (as pending points
are): a point that failed is never asked again while any other point is left.

A trial's point is completed from the relative sample the sampler stored on it, so a trial
that failed before calling every ``suggest_*`` still counts; one whose point is unknown (e.g.
sampled by another sampler and failed early) is counted in the log message only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from optuna.study import Study, StudyDirection
from optuna.trial import FrozenTrial, TrialState

from optuna_gpbandit._arguments import check_bool
from optuna_gpbandit._history import History, direction_sign, finite_result
from optuna_gpbandit._notices import INFO, WARNING, log_once

# "Keeps hitting failures": this many of the last _RECENT finished trials failed.
_RECENT, _RECENT_FAILED = 20, 10


@dataclass(frozen=True)
class FailedRow:
    """A failed trial's point and its label (oriented; ``None``: the worst observed value)."""

    number: int
    params: dict[str, Any]
    value: float | None
    kind: str  # "fail", "nonfinite", "pruned" (with a value) or "pruned_empty"


@dataclass(frozen=True, kw_only=True)
class FailedTrials:
    """What the model makes of FAIL trials (an exception or a NaN value), PRUNED trials and
    values of ``+-inf``: ``failures=FailedTrials(...)``.

    In every setting their points are not asked again while any other point is left, and a
    study where most recent trials fail logs a warning once.

    Parameters
    ----------
    impute
        ``True`` (default): they enter the posterior as bad results, the worst observed value,
        or a pruned trial's last intermediate value (as TPE uses it), so the sampler learns
        where trials fail (:mod:`optuna_gpbandit._failures`). ``False``: they are left out of
        the model (Optuna's GPSampler does this; logged once with their count).
    """

    impute: bool = True

    def __post_init__(self) -> None:
        check_bool("impute", self.impute)

    def rows(self, study: Study, trial: FrozenTrial, history: History) -> list[FailedRow]:
        """The history's failed trials (:func:`failed_rows`), reported once per study
        (:func:`report`)."""
        rows = failed_rows(history, study.directions[0])  # (multi-objective trials cannot prune)
        report(study, trial, rows, self.impute)
        return rows

    def model_rows(self, rows: list[FailedRow]) -> list[FailedRow] | None:
        """The rows the model's observations take (``None``: none, ``impute=False``)."""
        return rows if self.impute else None


def _last_intermediate(trial: FrozenTrial) -> float | None:
    for step in sorted(trial.intermediate_values, reverse=True):
        value = trial.intermediate_values[step]
        if math.isfinite(value):
            return float(value)
    return None


def failed_rows(history: History, direction: StudyDirection) -> list[FailedRow]:
    """Classify the history's failed trials (see the module table)."""
    sign = direction_sign(direction)
    rows = []
    for p in history.failed:
        t = p.trial
        if t.state == TrialState.PRUNED:
            last = _last_intermediate(t)
            if last is None:
                rows.append(FailedRow(t.number, p.params, None, "pruned_empty"))
            else:
                rows.append(FailedRow(t.number, p.params, sign * last, "pruned"))
        elif t.state == TrialState.COMPLETE:
            rows.append(FailedRow(t.number, p.params, None, "nonfinite"))
        else:
            rows.append(FailedRow(t.number, p.params, None, "fail"))
    return rows


def imputed_labels(rows: list[FailedRow], y_raw: np.ndarray) -> np.ndarray:
    """Oriented labels of ``rows`` given the observed oriented targets ``y_raw`` (non-empty)."""
    lo, hi = float(np.min(y_raw)), float(np.max(y_raw))
    return np.array([lo if r.value is None else min(max(r.value, lo), hi) for r in rows])


def report(study: Study, trial: FrozenTrial, rows: list[FailedRow], impute: bool) -> None:
    """Log, once per study, what happens to failed trials, and warn once when most recent
    trials fail."""
    if not rows:
        return
    counts = {k: sum(r.kind == k for r in rows) for k in ("fail", "nonfinite", "pruned",
                                                          "pruned_empty")}
    what = (
        f"{counts['fail']} failed, {counts['nonfinite']} with a non-finite value, "
        f"{counts['pruned']} pruned with and {counts['pruned_empty']} without an intermediate "
        "value"
    )
    if counts["nonfinite"]:
        log_once(study, "failures:nonfinite", WARNING,
                 "Trial %d: %d trial(s) returned a non-finite value; they are treated as failed "
                 "trials.", trial.number, counts["nonfinite"])
    if not impute:
        log_once(study, "failures:ignore", INFO,
                 "Trial %d: %s trial(s) are left out of the model (FailedTrials(impute=False)); "
                 "their points are not asked again.", trial.number, what)
    else:
        log_once(study, "failures:impute", INFO,
                 "Trial %d: %s trial(s) enter the model as bad results (FailedTrials()); their "
                 "points are not asked again.", trial.number, what)
    finished = [
        t for t in study._get_trials(deepcopy=False, use_cache=True)
        if t.state.is_finished() and t.number < trial.number
    ][-_RECENT:]
    bad = sum(
        t.state != TrialState.COMPLETE or not finite_result(t) for t in finished
    )
    if bad >= _RECENT_FAILED:
        log_once(study, "failures:many", WARNING,
                 "Trial %d: %d of the last %d finished trials failed or were pruned (%s so far "
                 "with a known point). Check the objective for a failing region or a bug; the "
                 "model %s them.", trial.number, bad, len(finished), what,
                 "learns to avoid" if impute else "ignores")
