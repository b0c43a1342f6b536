"""History -> observations: encoded inputs and oriented, standardised targets.

Targets are oriented for maximisation (``y = -value`` for ``minimize``). Infinite values are
clipped to the finite range of the others (with a logged warning), so they count as the worst or
best seen rather than breaking the fit. With ``standardize`` the targets are shifted and scaled to
mean 0 and standard deviation 1 (scale 1 when there are fewer than two values or they are all
equal), using the observed values only.

Rows of pending trials (see :mod:`optuna_gpbandit.pending`) follow the observed ones. Their
label is what their rule says (:attr:`Observations.pending_rule`): the censored value (the lowest
observed target, or the user's lower bound of the objective if that is lower), or, for
hallucination, the posterior mean of the observed rows, filled in by the model stage.
"""

from __future__ import annotations

import math

import dataclasses
from dataclasses import dataclass

import numpy as np
from optuna.logging import get_logger
from optuna.study import StudyDirection
from optuna.trial import FrozenTrial, TrialState

from optuna_gpbandit import _warping
from optuna_gpbandit.model import GPModel
from optuna_gpbandit._design import Design, RowLabels
from optuna_gpbandit.failures import FailedRow, FailedTrials, imputed_labels
from optuna_gpbandit._space import EncodedSpace
from optuna_gpbandit._history import direction_sign

_logger = get_logger(__name__)
_LARGE = 1e150  # magnitudes beyond which the standardiser rescales first


@dataclass(frozen=True, init=False)
class Observations:
    """Data for the GP.

    Attributes
    ----------
    X
        Encoded inputs, ``(n, d)``.
    y
        Oriented and (optionally) standardised targets, ``(n,)``.
    y_raw
        Oriented targets before standardisation (infinities clipped).
    shift, scale
        ``y = (y_raw - shift) / scale``.
    numbers
        Trial numbers of the rows.
    sign
        ``y_raw = sign * value`` (-1 for ``minimize``).
    observed
        Mask of rows with an observed label; the others are pending / censored rows, which come
        after all observed rows.
    in_window
        Mask of rows whose posterior standard deviation enters the ``nu_t`` sum.
    pending_rule
        What the unobserved rows mean to the model (their pending rule): the model stage asks
        it for the posterior (:meth:`~optuna_gpbandit._design.RowLabels.posterior`).
    failure_rule
        What the imputed rows do once the GP is fitted (:class:`FailedTrials`: their extra
        noise, the regions the maximiser avoids).
    n_dropped
        Observed rows left out by :func:`limit_rows` (counted in ``t`` and in the refit
        schedule, not in the posterior).
    imputed
        Mask of observed rows whose label is imputed for a failed trial (see
        :mod:`optuna_gpbandit.failures`); they follow the real observations and are left out
        of the hyperparameter fit.
    """

    X: np.ndarray
    y: np.ndarray
    y_raw: np.ndarray
    shift: float
    scale: float
    numbers: np.ndarray
    sign: float
    observed: np.ndarray
    in_window: np.ndarray
    pending_rule: RowLabels
    n_dropped: int
    imputed: np.ndarray
    failure_rule: FailedTrials
    warp: _warping.Warp | None

    def __init__(self, X: np.ndarray, y: np.ndarray, y_raw: np.ndarray, shift: float,
                 scale: float, numbers: np.ndarray, sign: float = 1.0,
                 observed: np.ndarray | None = None, in_window: np.ndarray | None = None,
                 pending_rule: RowLabels = RowLabels(), n_dropped: int = 0,
                 imputed: np.ndarray | None = None, failure_rule: FailedTrials = FailedTrials(),
                 warp: _warping.Warp | None = None) -> None:
        # written out (not the dataclass's) so that the masks may be omitted and still always
        # be arrays once built: all rows observed, none in the window, none imputed
        n = y.shape[0]
        for name, value in (
            ("X", X), ("y", y), ("y_raw", y_raw), ("shift", shift), ("scale", scale),
            ("numbers", numbers), ("sign", sign),
            ("observed", np.ones(n, dtype=bool) if observed is None else observed),
            ("in_window", np.zeros(n, dtype=bool) if in_window is None else in_window),
            ("pending_rule", pending_rule), ("n_dropped", n_dropped),
            ("imputed", np.zeros(n, dtype=bool) if imputed is None else imputed),
            ("failure_rule", failure_rule), ("warp", warp),
        ):
            object.__setattr__(self, name, value)

    @property
    def fit_rows(self) -> np.ndarray:
        """Mask of the rows the hyperparameters are fitted on (real observations)."""
        return self.observed & ~self.imputed

    @property
    def n(self) -> int:
        """Rows of the design (observed and censored)."""
        return int(self.y.shape[0])

    @property
    def n_observed(self) -> int:
        return int(self.observed.sum())

    @property
    def n_all(self) -> int:
        """Rows before :func:`limit_rows` (observed and censored): the round index is this + 1."""
        return self.n + self.n_dropped

    @property
    def n_observed_all(self) -> int:
        return self.n_observed + self.n_dropped

    def to_objective(self, mean: float, sd: float) -> tuple[float, float]:
        """A GP mean and standard deviation in the model's units -> objective units (through
        the inverse warp, if any: the mean's image, and half the width of ``mean +- sd``'s)."""
        if self.warp is None:
            return self.sign * (mean * self.scale + self.shift), sd * self.scale
        z = self.warp.inverse(np.array([mean, mean - sd, mean + sd]))
        return self.sign * (z[0] * self.scale + self.shift), 0.5 * (z[2] - z[1]) * self.scale


def oriented_values(trials: list[FrozenTrial], direction: StudyDirection) -> np.ndarray:
    """Objective values with the sign that makes larger better, infinities clipped."""
    y = direction_sign(direction) * np.array([t.value for t in trials], dtype=float)
    finite = np.isfinite(y)
    if not finite.all():
        _logger.warning(
            "%d objective value(s) are infinite; they are clipped to the finite range for the GP.",
            int((~finite).sum()),
        )
        lo, hi = (y[finite].min(), y[finite].max()) if finite.any() else (0.0, 0.0)
        y = np.clip(np.nan_to_num(y, nan=lo, posinf=hi, neginf=lo), lo, hi)
    return y


def standardization(y_raw: np.ndarray) -> tuple[float, float]:
    """``(shift, scale)`` giving mean 0 and standard deviation 1 (scale 1 for fewer than two
    values or equal ones).

    Scale-free: values are equal when their spread is below ``1e-12`` of their largest
    magnitude, at any magnitude (values near 1e-300 are modelled as values near 1 are). Beyond
    ``1e150`` and below ``1e-150`` in magnitude the moments are taken of ``y_raw / max|y_raw|``,
    so values up to the float limit (``+-1.7e308``) overflow neither the squares nor the sum,
    and the smallest ones do not underflow.
    """
    if y_raw.size == 0:
        return 0.0, 1.0
    m = float(np.max(np.abs(y_raw)))
    if m == 0.0:
        return 0.0, 1.0
    u, unit = (y_raw / m, m) if (m > _LARGE or m < 1.0 / _LARGE) else (y_raw, 1.0)
    mean_u, sd_u = float(u.mean()), float(u.std())
    shift = mean_u * unit
    if y_raw.size < 2 or not sd_u > 1e-12 * (m / unit):
        return shift, 1.0
    return shift, sd_u * unit


def _standardize(y_raw: np.ndarray, shift: float, scale: float) -> np.ndarray:
    """``(y_raw - shift) / scale`` without overflowing the difference near the float limit."""
    if abs(shift) > _LARGE:
        return y_raw / scale - shift / scale
    return (y_raw - shift) / scale


def build_observations(
    trials: list[FrozenTrial],
    space: EncodedSpace,
    direction: StudyDirection,
    model: GPModel,
    *,
    design: Design | None = None,
    targets: dict[int, float] | None = None,
    failed: list[FailedRow] | None = None,
    failures: FailedTrials = FailedTrials(),
    scale_floor: float | None = None,
    one_objective: bool = True,
) -> Observations:
    """Encode the observed ``trials`` (COMPLETE, holding every parameter of ``space``) for a
    GP with the settings ``model`` (standardised targets, output warping).

    With a ``design`` (see :meth:`optuna_gpbandit.pending.PendingRule.design`) its observed
    trials replace ``trials`` and its pending rows are appended, labelled as the design's rule
    says (:meth:`~optuna_gpbandit._design.RowLabels.label`; a bound of the objective that the
    rule knows applies with ``one_objective`` only). ``targets`` (trial number -> oriented
    target) replaces the oriented objective values, e.g. by penalised ones. ``failed`` rows (see :mod:`optuna_gpbandit.failures`), those the
    ``failures`` rule models, follow the observed trials with imputed labels (none while nothing
    is observed). ``scale_floor`` bounds the
    standardising scale from below (after a change point: the spread of the whole study, so a
    young segment's few values do not set the model's amplitude). With output warping
    (:attr:`GPModel.warps_outputs`) the standardised targets are warped
    (:mod:`optuna_gpbandit._warping`), fitted on the real observations.
    """
    standardize, warp = model.standardize, model.warps_outputs
    rule = RowLabels() if design is None else design.rule
    rows = [] if design is None else design.rows
    if design is not None:
        trials = design.observed
    X = space.encode_many([t.params for t in trials] + [r.params for r in rows])
    if targets is None:
        y_raw = oriented_values(trials, direction)
    else:
        y_raw = np.array([targets[t.number] for t in trials], dtype=float)
    failed = failures.model_rows(list(failed or [])) if y_raw.size else []
    if failed:
        y_raw = np.concatenate([y_raw, imputed_labels(failed, y_raw)])
    shift, scale = standardization(y_raw[: len(trials)]) if standardize else (0.0, 1.0)
    if standardize and scale_floor is not None and math.isfinite(scale_floor):
        scale = max(scale, scale_floor)
    y = _standardize(y_raw, shift, scale)
    fitted = None
    if warp and len(trials) >= _warping.MIN_OBSERVED:
        n = len(trials)
        ref = spread_subset(X[:n], np.empty((0, X.shape[1])), _warping.reference_size(n),
                            np.random.default_rng(0), space.is_categorical)
        fitted = _warping.fit(y[:n], ref)
    if fitted is not None:
        y = fitted.forward(y)
    sign = direction_sign(direction)

    def to_model(value: float) -> float:  # an objective value in the model's units
        z = np.array([(sign * value - shift) / scale])
        return float((z if fitted is None else fitted.forward(z))[0])

    label = rule.label(y, to_model if one_objective else None) if rows else 0.0
    in_window = (
        list(design.observed_in_window) if design is not None else [False] * len(trials)
    ) + [False] * len(failed) + [r.in_window for r in rows]
    n_obs = len(trials) + len(failed)
    if failed:
        X = np.vstack([X[: len(trials)], space.encode_many([r.params for r in failed]),
                       X[len(trials):]])
    return Observations(
        X=X,
        y=np.concatenate([y, np.full(len(rows), label)]),
        y_raw=y_raw,
        shift=shift,
        scale=scale,
        numbers=np.array([t.number for t in trials] + [r.number for r in failed]
                         + [r.number for r in rows], dtype=int),
        sign=sign,
        observed=np.arange(n_obs + len(rows)) < n_obs,
        in_window=np.array(in_window, dtype=bool),
        pending_rule=rule,
        imputed=(np.arange(n_obs + len(rows)) >= len(trials)) & (np.arange(n_obs + len(rows)) < n_obs),
        failure_rule=failures,
        warp=fitted,
    )


def spread_subset(X: np.ndarray, kept: np.ndarray, k: int, rng: np.random.Generator,
                  is_categorical: np.ndarray | None = None) -> np.ndarray:
    """Indices of ``k`` rows of ``X`` that cover where ``X`` lies: greedy farthest-point
    selection (each pick is the row farthest from ``kept`` and the rows already picked; max
    over columns, categorical columns 0 / 1), ties and the start drawn with ``rng``.

    A uniform sample of a sampler's history follows its density: after thousands of trials
    near the optimum, the few early trials that showed where the objective is bad are mostly
    left out, the posterior there reverts to the mean of the (mostly good) data, and UCB goes
    back to those regions. Farthest points keep a witness of every region ever evaluated.
    """
    from scipy.spatial import cKDTree
    n = X.shape[0]
    if k >= n:
        return np.arange(n)
    cat = np.zeros(X.shape[1], bool) if is_categorical is None else np.asarray(is_categorical)
    num = ~cat

    def dist(p: np.ndarray) -> np.ndarray:  # (n,) distances of X's rows to the point p
        d = np.abs(X[:, num] - p[num]).max(axis=1, initial=0.0)
        if cat.any():
            d = np.maximum(d, np.any(X[:, cat] != p[cat], axis=1))
        return d

    jitter = rng.uniform(0.0, 1e-9, n)  # random tie-break among equally far rows
    if kept.shape[0]:
        # Chebyshev distance to the nearest kept row. Numeric columns lie in [0, 1], so
        # clipping at 1 makes any categorical index difference count as exactly 1.
        d = np.minimum(cKDTree(kept).query(X, p=np.inf)[0], 1.0)
    else:
        d = np.full(n, np.inf)
    picked = np.empty(k, dtype=int)
    for i in range(k):
        j = int(np.argmax(d + jitter)) if np.isfinite(d).any() else int(rng.integers(n))
        picked[i] = j
        d = np.minimum(d, dist(X[j]))
        d[j] = -np.inf
    return picked


def limit_rows(obs: Observations, cap: int | None, rng: np.random.Generator,
               is_categorical: np.ndarray | None = None) -> Observations:
    """At most ``cap`` rows for the posterior (subset of data) [design choice].

    The exact posterior costs ``O(n^2)`` per candidate and ``O(n^3)`` per factorisation; beyond a
    few thousand trials that is seconds per suggestion. Kept: every censored / pending row and
    every row of the ``nu_t`` window (the parallel logic needs them), the best half of the
    remaining budget of observed rows (where the maximiser looks), and of the other observed
    rows half a spread-out subset (:func:`spread_subset`: a witness of every region evaluated
    so far) and half a uniform sample (the density: on a noisy objective the best rows are
    the lucky draws, and the others near them correct the mean), drawn from the trial's own
    stream so the choice is reproducible. Row order (observed first) is preserved; standardisation is left
    as computed on all observed values.
    """
    if cap is None or obs.n <= cap:
        return obs
    # censored rows, rows in the nu_t sum, imputed rows of failed trials
    always = ~obs.observed | obs.in_window | obs.imputed
    seen = np.flatnonzero(~always)
    unseen = np.flatnonzero(always)
    budget = max(cap - unseen.size, min(cap, seen.size) // 2, 2)
    if budget >= seen.size:
        return obs
    n_best = budget // 2
    order = np.argsort(-obs.y[seen], kind="stable")
    best = seen[order[:n_best]]
    rest = seen[order[n_best:]]
    kept = np.concatenate([best, unseen])
    n_spread = (budget - n_best) // 2
    spread = spread_subset(obs.X[rest], obs.X[kept], n_spread, rng, is_categorical)
    others = np.setdiff1d(np.arange(rest.size), spread)
    sampled = np.concatenate([rest[spread], rest[rng.choice(others, budget - n_best - n_spread,
                                                            replace=False)]])
    keep = np.sort(np.concatenate([kept, sampled]))  # observed rows stay first
    return dataclasses.replace(
        obs,
        X=obs.X[keep],
        y=obs.y[keep],
        numbers=obs.numbers[keep],
        observed=obs.observed[keep],
        in_window=obs.in_window[keep],
        imputed=obs.imputed[keep],
        n_dropped=obs.n_dropped + int(seen.size - budget),
    )


def study_spread(trials: list[FrozenTrial], direction: StudyDirection) -> float | None:
    """Standardising scale of every completed trial of the study (before and after change
    points): the objective's amplitude, still true after a change [design choice]. ``None``
    with fewer than two completed trials."""
    done = [t for t in trials if t.state == TrialState.COMPLETE and t.value is not None]
    if len(done) < 2:
        return None
    y = oriented_values(done, direction)
    return standardization(y[np.isfinite(y)])[1]
