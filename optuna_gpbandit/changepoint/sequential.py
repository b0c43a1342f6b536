"""The default detector: a CUSUM test on the predictive residuals of every completed trial.

When a model trial is asked, the sampler stores the GP's prediction of its value (mean and
predictive standard deviation of the observation, with the segment it was made in). When the
value arrives, its standardised residual ``z = (y - mean) / sd`` is an N(0, 1) draw while the
objective has not changed and the model is calibrated; after an abrupt change the trials land
where the old model was sure, and the residuals are far off, in one direction, again and again.
The test is a two-sided CUSUM (Page 1954) on

    u_t = Phi^-1(F_nu(z_t))        (the residual as an equivalent normal quantile),
    S+_t = max(0, S+_{t-1} + min(u'_t, clip) - drift),   S-_t likewise with -u'_t,
    u'_t = (u_t - c) / s,          alarm when S+ or S- exceeds h.

* ``F_nu`` is Student's t with ``nu = n - 1`` degrees of freedom for a prediction made from
  ``n`` observations: a young model's sd is itself an estimate, so its surprises count less.
* ``c`` and ``s`` come from the segment's residuals before the current excursions, once
  there are ``MIN_FOR_SCALE``: ``c`` is the median of the latest ``CENTRE_WINDOW`` (limited to
  +-1) and ``s`` is 1.4826 times their median absolute deviation (at least 1), times
  ``sqrt((1 + rho) / (1 - rho))`` for their lag-1 autocorrelation ``rho`` (in [0, 0.8]). Where
  the sampler keeps returning to one point, the GP's error of its mean there persists from
  trial to trial: residuals are positively correlated and their sums wander further than
  independent ones (the long-run variance of an AR(1) sequence). A model that is consistently
  overconfident or biased does not raise alarms either.
* ``h`` is set from ``alpha``, the false-alarm probability per tested trial (average run length
  ``1 / alpha`` under N(0, 1) residuals, computed up to discretisation by the Markov chain of
  Brook & Evans, 1972).

On an alarm the new segment starts at the first trial of the excursion that raised it (the
last time that side of the CUSUM was 0): those results already belong to the new objective and
stay in the model.

Pure functions and a replay state (:class:`ResidualState`, the interface of
:class:`~optuna_gpbandit.changepoint.replayer.ReplayState`); Optuna objects appear only in the
stage.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from optuna_gpbandit.changepoint._checks import _check_int, _check_positive
from optuna_gpbandit.changepoint.segment import ResidualAlarm, Segment

MIN_FOR_SCALE = 10
"""Residuals of a segment needed before their robust centre and scale are used."""
MAX_AUTOCORRELATION = 0.8
"""Cap of the lag-1 autocorrelation estimate that widens the scale."""
CENTRE_WINDOW = 20
"""The centre is the median of this many latest residuals (a model's bias where the sampler
keeps returning changes slowly; an abrupt change is many sds at once)."""


def _check_alpha(alpha: float) -> float:
    try:
        a = float(alpha)
    except (TypeError, ValueError):
        raise ValueError(f"alpha must be a number in (0, 0.5), got {alpha!r}.") from None
    if not (0.0 < a < 0.5):
        raise ValueError(f"alpha must be in (0, 0.5) (false alarms per tested trial), got {alpha!r}.")
    return a


def _score_distribution(drift: float, clip: float, n_bins: int,
                        h: float) -> tuple[np.ndarray, np.ndarray]:
    """Probabilities of the increments ``clip(Z, -clip, clip) - drift`` of one side of the
    CUSUM, rounded to the grid of step ``h / n_bins``."""
    from scipy import stats
    step = h / n_bins
    lo = int(math.floor((-clip - drift) / step))
    hi = int(math.ceil((clip - drift) / step))
    steps = np.arange(lo, hi + 1)
    edges = (steps[1:] - 0.5) * step + drift  # Z in [edge_{j-1}, edge_j) -> step j
    cdf = np.concatenate([[0.0], stats.norm.cdf(edges), [1.0]])
    return steps, np.diff(cdf)


def average_run_length(h: float, drift: float, clip: float, n_bins: int = 400) -> float:
    """Average number of N(0, 1) residuals before one side of the CUSUM,
    ``S = max(0, S + clip(z) - drift)``, exceeds ``h`` (from ``S = 0``)."""
    steps, p = _score_distribution(drift, clip, n_bins, h)
    n = n_bins + 1  # states 0..n_bins (S = i * step), absorbing above n_bins
    R = np.zeros((n, n))
    rows = np.repeat(np.arange(n), steps.size)
    cols = rows + np.tile(steps, n)
    probs = np.tile(p, n)
    keep = cols <= n_bins  # above n_bins: the alarm (absorbed)
    np.add.at(R, (rows[keep], np.maximum(cols[keep], 0)), probs[keep])
    arl = np.linalg.solve(np.eye(n) - R, np.ones(n))
    return float(arl[0])


@functools.lru_cache(maxsize=32)
def cusum_threshold(alpha: float, drift: float, clip: float) -> float:
    """The ``h`` at which the two-sided CUSUM raises false alarms at rate ``alpha`` per
    N(0, 1) residual: each side's average run length is ``2 / alpha`` (the rates add)."""
    target = 2.0 / alpha
    lo, hi = 0.0, clip
    while average_run_length(hi, drift, clip) < target:
        lo, hi = hi, 2.0 * hi
        if hi > 1e4:
            raise ValueError(f"no CUSUM threshold reaches alpha={alpha!r}.")
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        if average_run_length(mid, drift, clip) < target:
            lo = mid
        else:
            hi = mid
    return hi


@dataclass(frozen=True)
class ResidualTest:
    """Settings of the sequential residual detector (the default of :class:`ChangeDetection`).

    Parameters
    ----------
    alpha
        False-alarm probability per tested trial: on an unchanged objective with a calibrated
        model, an alarm comes on average once in ``1 / alpha`` trials (default ``1e-4``).
    drift
        CUSUM reference value ``k`` in units of the predictive sd (default 1.5: a shift of the
        residuals' mean by 3 sd is detected fastest).
    clip
        Residuals count at most this many sds (default 8). With the defaults (``h`` = 2.70) one
        residual beyond ``h + drift`` = 4.2 sd (after the Student-t correction) raises an alarm
        on its own; a ``clip`` below that asks for more than one.
    min_history
        A trial is tested only if its prediction was made from at least this many observations
        of its segment (default 5).
    resolution
        Surprises below this fraction of the objective's standard deviation (the spread of the
        values the model was fitted on) are not evidence of a change (default 0.02): the
        predictive sd is taken as at least ``sqrt(sd^2 + (resolution * spread)^2)``. A
        deterministic or quantised objective (an accuracy on a fixed validation set) makes the
        GP's sd collapse where it has looked, and one validation sample more or less would
        otherwise be a "change" of many sds.
    """

    alpha: float = 1e-4
    drift: float = 1.5
    clip: float = 8.0
    min_history: int = 5
    resolution: float = 0.02

    def __post_init__(self) -> None:
        _check_alpha(self.alpha)
        _check_positive("drift", self.drift)
        _check_positive("clip", self.clip)
        if self.clip <= self.drift:
            raise ValueError(f"clip ({self.clip}) must exceed drift ({self.drift}).")
        _check_int("min_history", self.min_history, 1)
        if not (math.isfinite(self.resolution) and self.resolution >= 0):
            raise ValueError(f"resolution must be finite and >= 0, got {self.resolution!r}.")

    @property
    def threshold(self) -> float:
        """``h`` for ``alpha`` (:func:`cusum_threshold`)."""
        return cusum_threshold(float(self.alpha), float(self.drift), float(self.clip))

    @property
    def never_fires(self) -> bool:
        return False

    @property
    def default_xi(self) -> float:
        """The exploration multiplier of :class:`ChangeDetection` with this detector: 0, one
        uniform trial after each reset (the residual test needs no exploration trials)."""
        return 0.0

    @property
    def tests_predictions(self) -> bool:
        """The detector tests the predictions stored when the trials were asked."""
        return True


@dataclass(frozen=True)
class Prediction:
    """What the sampler predicted for a trial when it was asked (its ``gpbandit:prediction``).

    Attributes
    ----------
    mean, sd
        Predictive mean (oriented like the replay's targets: larger is better) and sd of the
        observation.
    segment_start
        The segment the model was fitted on (a prediction from an older segment is not tested).
    n_history
        Observations of that segment the model saw.
    spread
        Standard deviation of the values the model was fitted on (its standardising scale; 0 if
        unknown), for :attr:`ResidualTest.resolution`.
    """

    mean: float
    sd: float
    segment_start: int
    n_history: int
    spread: float = 0.0


class ResidualState:
    """The residual CUSUM fed one observed trial at a time, in trial-number order.

    Same interface as :class:`~optuna_gpbandit.changepoint.replayer.ReplayState`: ``push``
    returns the new segment start when the test fires, ``segment()`` the current state.
    """

    def __init__(self, settings: ResidualTest | None = None, domain: object = None) -> None:
        self.settings = ResidualTest() if settings is None else settings
        self.domain = domain  # unused; kept for the shared interface
        self.start = 0
        self.change_points: list[int] = []
        self.last_detection: ResidualAlarm | None = None
        self.last_number = -1
        self.n_tested = 0
        self._history: list[int] = []
        self._uniform: list[int] = []
        self._reset_test()

    def _reset_test(self) -> None:
        self._u: list[float] = []  # residuals tested in this segment (normal quantiles)
        self._S = [0.0, 0.0]  # S+, S-
        self._excursion: list[list[int]] = [[], []]  # trial numbers since each side was 0
        self._n_excursion = [0, 0]  # tested residuals since each side was 0

    def _centre_scale(self) -> tuple[float, float]:
        """Centre and scale from the residuals before the current excursions."""
        u = np.asarray(self._u[: len(self._u) - max(self._n_excursion)])
        if u.size < MIN_FOR_SCALE:
            return 0.0, 1.0
        c = float(np.median(u[-CENTRE_WINDOW:]))
        dev = u - np.median(u)
        s = 1.482602218505602 * float(np.median(np.abs(dev)))
        v = np.clip(dev, -3.0, 3.0)
        v = v - v.mean()
        denom = float(v @ v)
        rho = float(v[1:] @ v[:-1]) / denom if denom > 0 else 0.0
        rho = min(MAX_AUTOCORRELATION, max(0.0, rho))
        return min(1.0, max(-1.0, c)), max(1.0, s) * math.sqrt((1.0 + rho) / (1.0 - rho))

    def push(self, record: Any) -> int | None:
        """Process the next observed trial (a ``TrialRecord``); return the new segment start
        if the test fired."""
        if record.number <= self.last_number:
            raise ValueError(
                "Records must be pushed in increasing trial number "
                f"({record.number} after {self.last_number})."
            )
        self.last_number = record.number
        if not math.isfinite(record.y):
            return None
        self._history.append(record.number)
        if record.uniform:
            self._uniform.append(record.number)
        p = record.prediction
        st = self.settings
        if p is None or p.segment_start != self.start or p.n_history < st.min_history:
            for side in (0, 1):
                if self._S[side] > 0:
                    self._excursion[side].append(record.number)
            return None
        sd = math.hypot(p.sd, st.resolution * p.spread)
        u = normal_quantile((record.y - p.mean) / sd, p.n_history - 1)
        self.n_tested += 1
        c, scale = self._centre_scale()
        self._u.append(u)
        v = (u - c) / scale
        fired = None
        for side, sign in ((0, 1.0), (1, -1.0)):
            self._S[side] = max(0.0, self._S[side] + min(sign * v, st.clip) - st.drift)
            if self._S[side] <= 0.0:
                self._excursion[side] = []
                self._n_excursion[side] = 0
                continue
            self._excursion[side].append(record.number)
            self._n_excursion[side] += 1
            if self._S[side] > st.threshold and fired is None:
                fired = side
        if fired is None:
            return None
        excursion = self._excursion[fired]
        self.change_points.append(record.number)
        self.last_detection = ResidualAlarm(len(excursion), self._S[fired], st.threshold,
                                        record.number)
        self.start = excursion[0]
        self._history = [n for n in self._history if n >= self.start]
        self._uniform = [n for n in self._uniform if n >= self.start]
        self._reset_test()
        return self.start

    def segment(self) -> Segment:
        """Snapshot of the current state."""
        return Segment(self.start, tuple(self.change_points), tuple(self._uniform),
                       tuple(self._history), self.last_detection)

    def copy(self) -> ResidualState:
        new = ResidualState.__new__(ResidualState)
        new.__dict__.update(self.__dict__)
        for name in ("change_points", "_history", "_uniform", "_u", "_S", "_n_excursion"):
            setattr(new, name, list(getattr(self, name)))
        new._excursion = [list(e) for e in self._excursion]
        return new


def normal_quantile(z: float, nu: int) -> float:
    """The N(0, 1) quantile of the probability of ``z`` under Student's t with ``nu`` degrees
    of freedom (``z`` itself for ``nu`` above 1000); tails beyond 1e-300 are capped."""
    from scipy import stats
    if nu > 1000:
        return float(z)
    tail = max(float(stats.t.sf(abs(z), max(nu, 1))), 1e-300)
    return math.copysign(float(stats.norm.isf(tail)), z)
