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
from typing import Any, Callable, Protocol

import numpy as np
from optuna.study import Study, StudyDirection
from optuna.trial import FrozenTrial, TrialState

from optuna_gpbandit._arguments import check_bool, check_number
from optuna_gpbandit._history import History, PendingTrial, direction_sign, finite_result
from optuna_gpbandit._extreme import EXTREME_GAP, extreme_numbers
from optuna_gpbandit._maximize import union_regions
from optuna_gpbandit._notices import INFO, WARNING, log_once
from optuna_gpbandit.gp.kernels import Kernel
from optuna_gpbandit.gp.posterior import GPParams, GPPosterior, NumericalError

# "Keeps hitting failures": this many of the last _RECENT finished trials failed.
_RECENT, _RECENT_FAILED = 20, 10
class Observations(Protocol):
    """What the failed rows' effects read of the model's observations
    (:class:`optuna_gpbandit._observations.Observations`, built downstream of this stage)."""

    @property
    def X(self) -> np.ndarray: ...  # noqa: N802 (the observations' name)

    @property
    def observed(self) -> np.ndarray: ...

    @property
    def imputed(self) -> np.ndarray: ...

    @property
    def n(self) -> int: ...


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

    def model_rows(self, rows: list[FailedRow]) -> list[FailedRow]:
        """The rows the model's observations take (none with ``impute=False``)."""
        return rows if self.impute else []

    def noise(self, obs: Observations, params: GPParams,
              is_categorical: np.ndarray) -> np.ndarray | None:
        """Extra noise variance of the observations' rows once the GP's hyperparameters
        ``params`` are known (:func:`imputed_noise`; ``None``: no imputed row)."""
        return imputed_noise(obs, params, is_categorical)

    def avoided(self, obs: Observations, params: GPParams,
                is_categorical: np.ndarray) -> Callable[[np.ndarray], np.ndarray] | None:
        """``region(X) -> mask`` of the points the maximiser avoids for the failed rows: a
        failing region (:func:`failing_region`) and where trials are predicted to fail
        (:func:`failure_risk_region`); ``None`` if neither."""
        if not obs.imputed.any():
            return None
        share = failure_share(obs, params, is_categorical)
        return union_regions(failing_region(obs, params, is_categorical, share),
                             failure_risk_region(obs, params, is_categorical, share))


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
    parts = [(counts["fail"], "failed"),
             (counts["nonfinite"] + counts["best_inf"], "with a non-finite value"),
             (counts["extreme"], "with an extreme value"),
             (counts["pruned"], "pruned with an intermediate value"),
             (counts["pruned_empty"], "pruned without one")]
    what = ", ".join(f"{n} {kind}" for n, kind in parts if n)  # only the kinds there are
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
        log_once(study, "failures:extreme", INFO,
                 "Trial %d: %d completed trial(s) have values far worse than the rest (more "
                 "than FailedTrials(extreme_gap=...) times the spread of the better values "
                 "below them, e.g. a penalty such as `return 1e6`); the model treats them as "
                 "failed trials. If they are real measurements, pass "
                 "failures=FailedTrials(extreme_gap=None).", trial.number, counts["extreme"])
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


# ---------------------------------------------- what failed rows do once the GP is fitted
IMPUTED_NOISE = 0.1  # extra noise of an imputed row at failure share 1/2, times the kernel scale
REGION_SHARE = 0.5  # failure share from which a failed trial's neighbourhood is avoided
NEIGHBOURS = 5  # nearest observed rows that give a failed trial's failure share


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
    closeness = Kernel(params.kernel, params.lengthscales, 1.0, is_categorical, params.warp)(
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


def failing_region(obs: Observations, params: GPParams, is_categorical: np.ndarray,
                   share: np.ndarray | None = None) -> Callable[[np.ndarray], np.ndarray] | None:
    """``region(X) -> mask`` of points whose nearest observed point (in the GP's lengthscales)
    is a failed trial inside a failing region (:func:`failure_share` ``>= REGION_SHARE``), or
    ``None`` if there is none.

    The maximiser avoids these points: near a failing region's boundary the GP mean, which must
    be smooth, cannot drop as fast as the objective does, and without this rule UCB would probe
    just past the boundary again and again. Random failures (low share) exclude nothing but
    their own point. ``share``: :func:`failure_share` if the caller has it already.
    """
    if not obs.imputed.any():
        return None
    if share is None:
        share = failure_share(obs, params, is_categorical)
    region = np.zeros(obs.n, dtype=bool)
    region[obs.imputed] = share >= REGION_SHARE
    seen = obs.observed
    if not region[seen].any():
        return None
    kernel = Kernel(params.kernel, params.lengthscales, 1.0, is_categorical, params.warp)
    W_seen, bad = kernel.warped(obs.X[seen]), region[seen]  # warped once, not per call

    def mask(X: np.ndarray) -> np.ndarray:
        return bad[np.argmax(kernel.of_warped(kernel.warped(np.atleast_2d(X)), W_seen), axis=1)]

    return mask


FAILURE_RISK = 0.3
"""Predicted failure probability from which the maximiser avoids a point [design choice]."""


def failure_risk_region(obs: Observations, params: GPParams, is_categorical: np.ndarray,
                        share: np.ndarray | None = None
                        ) -> Callable[[np.ndarray], np.ndarray] | None:
    """``region(X) -> mask`` of points whose predicted probability of failing is at least
    ``FAILURE_RISK``, or ``None`` (fewer than two failed rows, nothing but failures, or no
    failed row among failures: :func:`failure_share` below ``REGION_SHARE`` for all, with the
    objective GP's ``params``).

    The probability is a GP on the observed rows' outcomes (1: failed, 0: completed) with its
    own MAP hyperparameters, so it learns *where* trials fail, not only which points did: along
    a boundary of a diverging region (a learning rate too large, for any weight decay) it
    extends to points never tried, with a lengthscale of its own that sharpens as failures
    and successes meet at the boundary. Random failures (a crash anywhere) give a low, flat
    prediction (their share); and while no failure has failed neighbours the classifier is
    not used at all, since a GP fitted to a few isolated 1s puts bumps around them that
    cost regret (docs/benchmarks.md, "The failure classifier") [design choice:
    least-squares classification, the posterior mean of the 0/1 outcomes; cheaper than a
    probit GP and as good a boundary for a threshold]. ``share``: :func:`failure_share` if
    the caller has it already.
    """
    from optuna_gpbandit.gp.fit import fit_hyperparameters

    seen = np.flatnonzero(obs.observed)
    failed = obs.imputed[seen].astype(float)
    if failed.sum() < 2 or failed.all():
        return None
    if share is None:
        share = failure_share(obs, params, is_categorical)
    if not np.any(share >= REGION_SHARE):
        return None  # isolated failures only (random crashes)
    base, spread = float(failed.mean()), float(failed.std())
    z = (failed - base) / spread
    X = obs.X[seen]
    try:
        fitted = fit_hyperparameters(X, z, is_categorical, params.kernel)
        post = GPPosterior(X, z, fitted, is_categorical)
    except (NumericalError, ValueError):
        return None

    def mask(Xq: np.ndarray) -> np.ndarray:
        return post.mean_var(np.atleast_2d(Xq))[0] * spread + base >= FAILURE_RISK

    return mask
