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

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from optuna.study import Study, StudyDirection
from optuna.trial import FrozenTrial, TrialState

from optuna_gpbandit._arguments import check_bool, check_number
from optuna_gpbandit._history import History, PendingTrial, direction_sign, finite_result
from optuna_gpbandit._notices import INFO, WARNING, log_once

# "Keeps hitting failures": this many of the last _RECENT finished trials failed.
_RECENT, _RECENT_FAILED = 20, 10
EXTREME_GAP = 10.0  # FailedTrials(extreme_gap=...)'s default [design choice]
EXTREME_MIN_SHARE = 0.25  # the values above an extreme gap are at least this share of trials
UNUSABLE_GAP = 100.0
"""A single value whose gap to the next better value is this many times the spread of all the
values above it is extreme without a repeat [design choice]: a diverged run (an MLP's squared
error of 1.8e7 among values of 5.6e3-2.9e4, 780 times their range) is a code, not a measurement
(issue 47). Measured from the cut's top instead (a first form), ordinary losses below a near-tied
stump plateau counted as extreme and cost 36 points on one in-house task."""


@dataclass(frozen=True)
class FailedRow:
    """A failed trial's point and its label (oriented; ``None``: the worst observed value)."""

    number: int
    params: dict[str, Any]
    value: float | None
    kind: str  # "fail", "nonfinite", "best_inf", "extreme", "pruned" (with a value), "pruned_empty"


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
        where trials fail (:mod:`optuna_gpbandit.failures`). ``False``: they are left out of
        the model (Optuna's GPSampler does this; logged once with their count).
    extreme_gap
        Completed trials whose values lie far below the rest count as failed too [design
        choice]: the penalty idiom (``return 1e6`` for an invalid setting) and values of a
        diverged run that are orders of magnitude off. Such a value is *extreme* when the gap
        from it to the next better value exceeds ``extreme_gap`` (default 10) times the spread
        of the values above that one, and those better values are at least a quarter of the
        trials and two distinct values (:func:`extreme_numbers`). A model of the values
        themselves would spend its amplitude on the penalty: standardised by a spread the
        penalty sets, the valid region's values differed by a millionth of the scale and the
        model saw them as flat (issue 47). Single-objective studies; logged once with the
        count. ``None``: off (every finite value is modelled as it is).
    """

    impute: bool = True
    extreme_gap: float | None = EXTREME_GAP

    def __post_init__(self) -> None:
        check_bool("impute", self.impute)
        if self.extreme_gap is not None:
            check_number("extreme_gap", self.extreme_gap, strict=True)

    def rows(self, study: Study, trial: FrozenTrial,
             history: History) -> tuple[History, list[FailedRow]]:
        """The history without the trials of extreme values (:func:`extreme_numbers`; one
        objective) and its failed trials, these included (:func:`failed_rows`), reported once
        per study (:func:`report`)."""
        if self.extreme_gap is not None and len(study.directions) == 1:
            extreme = extreme_numbers(history.completed, study.direction, self.extreme_gap)
            if extreme:
                history = dataclasses.replace(
                    history,
                    completed=[t for t in history.completed if t.number not in extreme],
                    failed=history.failed + [PendingTrial(t, t.params, -math.inf)
                                             for t in history.completed if t.number in extreme])
        rows = failed_rows(history, study.directions[0])  # (multi-objective trials cannot prune)
        report(study, trial, rows, self.impute)
        return history, rows

    def model_rows(self, rows: list[FailedRow]) -> list[FailedRow] | None:
        """The rows the model's observations take (``None``: none, ``impute=False``)."""
        return rows if self.impute else None


def extreme_numbers(trials: list[FrozenTrial], direction: StudyDirection,
                    gap: float = EXTREME_GAP) -> set[int]:
    """Numbers of the COMPLETE ``trials`` whose values are extreme: below the widest cut
    between two consecutive distinct values (oriented, larger is better) ``v_k < v_{k+1}``
    with ``v_{k+1} - v_k > gap (v_max - v_{k+1})``, where the values from ``v_{k+1}`` up are
    two distinct values or more and at least :data:`EXTREME_MIN_SHARE` of the trials (a few
    excellent values are not a bulk that makes the rest extreme), and every value below the
    cut is a code, not a measurement: repeated (a penalty constant returned by two trials or
    more), or a single value far from every better one (:func:`_all_codes`). Distinct values
    below a wide gap that lie near each other (a branch of the space whose values are large)
    are measurements the model keeps.

    Scale-free: a penalty ``P`` counts once it is ``gap`` times farther from the worst valid
    value than the valid values are from each other, whatever ``P`` is."""
    if len(trials) < 4:
        return set()
    y = direction_sign(direction) * np.array([t.value for t in trials], dtype=float)
    # The rule is scale-free: scaled to at most 1 in size, values near the float limit do not
    # overflow its products and differences (which would only warn: inf compares correctly).
    finite = np.isfinite(y)
    y = y / max(float(np.max(np.abs(y[finite]))) if finite.any() else 1.0, 1e-300)
    v, counts = np.unique(y, return_counts=True)  # ascending: worst first
    above = np.cumsum(counts[::-1])[::-1]  # trials with a value >= v[i]
    cut = None
    for k in range(v.size - 2):
        spread = v[-1] - v[k + 1]
        if not (v[k + 1] - v[k] > gap * spread and above[k + 1] >= EXTREME_MIN_SHARE * len(trials)):
            continue
        if _all_codes(v, counts, k):
            cut = v[k]
    if cut is None:
        return set()
    return {t.number for t, value in zip(trials, y) if value <= cut}


def _all_codes(v: np.ndarray, counts: np.ndarray, k: int) -> bool:
    """Whether every distinct value ``v[0..k]`` (oriented, ascending) below a cut is a code:
    repeated, or a single value whose gap to the next better value exceeds
    :data:`UNUSABLE_GAP` times the spread of all values above it (``v_max - v_{j+1}``).
    Measured from each value's own neighbour, a single value far from every better one (a
    diverged run) is a code, while ordinary values below a near-tied top (a stump plateau
    0.71799, 0.7183 above losses of 0.78-0.90, each 0.01 from the next) are not."""
    for j in range(k + 1):
        if counts[j] >= 2:
            continue
        if not v[j + 1] - v[j] > UNUSABLE_GAP * (v[-1] - v[j + 1]):
            return False
    return True


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
            kind = "extreme" if finite_result(t) else "nonfinite"
            if kind == "nonfinite" and t.values is not None and any(
                    sign * v == math.inf for v in t.values):
                kind = "best_inf"  # -inf when minimising: Optuna's best value
            rows.append(FailedRow(t.number, p.params, None, kind))
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
    counts = {k: sum(r.kind == k for r in rows)
              for k in ("fail", "nonfinite", "best_inf", "extreme", "pruned", "pruned_empty")}
    what = (
        f"{counts['fail']} failed, {counts['nonfinite'] + counts['best_inf']} with a non-finite "
        f"value, {counts['extreme']} with an extreme value, {counts['pruned']} pruned with and "
        f"{counts['pruned_empty']} without an intermediate value"
    )
    if counts["nonfinite"]:
        log_once(study, "failures:nonfinite", WARNING,
                 "Trial %d: %d trial(s) returned a non-finite value; they are treated as failed "
                 "trials.", trial.number, counts["nonfinite"])
    if counts["best_inf"]:
        log_once(study, "failures:best_inf", WARNING,
                 "Trial %d: %d trial(s) returned an infinite value in the direction of "
                 "improvement (-inf when minimising, +inf when maximising). Optuna takes it as "
                 "the study's best value; the model treats it as a failed trial (a value it "
                 "cannot use). Check the objective.", trial.number, counts["best_inf"])
    if counts["extreme"]:
        log_once(study, f"failures:extreme-{counts['extreme'].bit_length()}", INFO,
                 "Trial %d: %d completed trial(s) have values far worse than the rest (more "
                 "than FailedTrials(extreme_gap=...) times the spread of the better values "
                 "below them, e.g. a penalty such as `return 1e6`); the model treats them as "
                 "failed trials.", trial.number, counts["extreme"])
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
