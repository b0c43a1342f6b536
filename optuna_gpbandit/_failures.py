"""Failed trials -> rows the model learns from (``failures=``) [design choice].

A study's failed trials say where *not* to go: a diverging learning rate, an out-of-memory
batch size. Dropping them (what Optuna's GPSampler and TPE do) leaves the acquisition's argmax
where it was, so a GP bandit asks the failing point again and again. With ``"impute"`` (the
default):

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
lengthscales for the whole space). ``"ignore"`` is the former behaviour: such trials are left
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
from typing import TYPE_CHECKING, Any, Callable

import numpy as np
from optuna.study import Study, StudyDirection
from optuna.trial import FrozenTrial, TrialState

from optuna_gpbandit._history import History, finite_result
from optuna_gpbandit._notices import INFO, WARNING, log_once
from optuna_gpbandit.gp.kernels import Kernel
from optuna_gpbandit.gp.posterior import GPParams

if TYPE_CHECKING:
    from optuna_gpbandit._observations import Observations

FAILURE_MODES = ("impute", "ignore")
IMPUTED_NOISE = 0.1  # extra noise of an imputed row at failure share 1/2, times the kernel scale
REGION_SHARE = 0.5  # failure share from which a failed trial's neighbourhood is avoided
NEIGHBOURS = 5  # nearest observed rows that give a failed trial's failure share
# "Keeps hitting failures": this many of the last _RECENT finished trials failed.
_RECENT, _RECENT_FAILED = 20, 10


@dataclass(frozen=True)
class FailedRow:
    """A failed trial's point and its label (oriented; ``None``: the worst observed value)."""

    number: int
    params: dict[str, Any]
    value: float | None
    kind: str  # "fail", "nonfinite", "pruned" (with a value) or "pruned_empty"


def check_failures(mode: str) -> str:
    """Validate the ``failures=`` argument."""
    if mode not in FAILURE_MODES:
        raise ValueError(f"failures must be one of {FAILURE_MODES}, got {mode!r}.")
    return mode


def _last_intermediate(trial: FrozenTrial) -> float | None:
    for step in sorted(trial.intermediate_values, reverse=True):
        value = trial.intermediate_values[step]
        if math.isfinite(value):
            return float(value)
    return None


def failed_rows(history: History, direction: StudyDirection) -> list[FailedRow]:
    """Classify the history's failed trials (see the module table)."""
    sign = -1.0 if direction == StudyDirection.MINIMIZE else 1.0
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


def report(study: Study, trial: FrozenTrial, rows: list[FailedRow], mode: str) -> None:
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
    if mode == "ignore":
        log_once(study, "failures:ignore", INFO,
                 "Trial %d: %s trial(s) are left out of the model (failures='ignore'); their "
                 "points are not asked again.", trial.number, what)
    else:
        log_once(study, "failures:impute", INFO,
                 "Trial %d: %s trial(s) enter the model as bad results (failures='impute'); their "
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
                 "ignores" if mode == "ignore" else "learns to avoid")


def failure_share(obs: Observations, params: GPParams, is_categorical: np.ndarray) -> np.ndarray:
    """Share of failures around each imputed row of ``obs``.

    Among its ``NEIGHBOURS`` nearest other observed rows (distances scaled by the GP's
    lengthscales), with one pseudo-observation at the study's overall failure share: near 1
    inside a failing region or on its boundary, near the overall share for a failure among good
    results (a random crash). Nearest neighbours rather than kernel weights: a smooth objective
    has lengthscales much longer than the width of its failure boundary.
    """
    seen = np.flatnonzero(obs.observed)  # observed rows come first: indices 0 .. n_obs - 1
    failed = obs.imputed[seen].astype(float)
    idx = np.flatnonzero(obs.imputed)
    closeness = Kernel(params.kernel, params.lengthscales, 1.0, is_categorical)(
        obs.X[idx], obs.X[seen])
    closeness[np.arange(idx.size), idx] = -np.inf  # not itself
    k = min(NEIGHBOURS, seen.size - 1)
    if k < 1:
        return np.full(idx.size, failed.mean())
    near = np.argpartition(-closeness, k - 1, axis=1)[:, :k]
    return (failed[near].sum(axis=1) + failed.mean()) / (k + 1.0)


def imputed_noise(obs: Observations, params: GPParams, is_categorical: np.ndarray
                  ) -> np.ndarray | None:
    """Extra noise variance of each row [design choice]: none on real observations; on an
    imputed row, ``IMPUTED_NOISE * scale * (1 - p) / p`` for its :func:`failure_share` ``p``.

    A failure among failures gets little noise, so the mean there drops to the imputed worst
    value; a failure among good results gets much, so it only dents the mean and does not push
    the search away from a good region.
    """
    if not obs.imputed.any():
        return None
    p = failure_share(obs, params, is_categorical)
    noise = np.zeros(obs.n)
    noise[obs.imputed] = IMPUTED_NOISE * params.scale * np.minimum(
        (1.0 - p) / np.maximum(p, 1e-3), 100.0)
    return noise


def failing_region(obs: Observations, params: GPParams, is_categorical: np.ndarray
                   ) -> Callable[[np.ndarray], np.ndarray] | None:
    """``region(X) -> mask`` of points whose nearest observed point (in the GP's lengthscales)
    is a failed trial inside a failing region (:func:`failure_share` ``>= REGION_SHARE``), or
    ``None`` if there is none.

    The maximiser avoids these points: near a failing region's boundary the GP mean, which must
    be smooth, cannot drop as fast as the objective does, and without this rule UCB would probe
    just past the boundary again and again. Random failures (low share) exclude nothing but
    their own point.
    """
    if not obs.imputed.any():
        return None
    region = np.zeros(obs.n, dtype=bool)
    region[obs.imputed] = failure_share(obs, params, is_categorical) >= REGION_SHARE
    seen = obs.observed
    if not region[seen].any():
        return None
    kernel = Kernel(params.kernel, params.lengthscales, 1.0, is_categorical)
    X_seen, bad = obs.X[seen], region[seen]

    def mask(X: np.ndarray) -> np.ndarray:
        return bad[np.argmax(kernel(np.atleast_2d(X), X_seen), axis=1)]

    return mask
