"""The reset of non-stationary objectives (``reset=ChangeDetection(...)``; Optuna objects
appear only here in :mod:`optuna_gpbandit.changepoint`)."""

from __future__ import annotations

import math
import threading
import weakref
from dataclasses import dataclass, field
from typing import Any, Hashable, Sequence

from optuna.logging import get_logger
from optuna.study import StudyDirection
from optuna.trial import TrialState

from optuna_gpbandit import _randomness
from optuna_gpbandit._arguments import check_instance
from optuna_gpbandit._conditional import study_encoded_space, study_search_space
from optuna_gpbandit.changepoint._checks import _check_int
from optuna_gpbandit.changepoint.best import best_since
from optuna_gpbandit.changepoint.replayer import Replayer, TrialRecord
from optuna_gpbandit.changepoint.segment import Segment
from optuna_gpbandit.changepoint.schedule import SQRT3, is_uniform_turn
from optuna_gpbandit.changepoint.sequential import Prediction, ResidualTest
from optuna_gpbandit.changepoint.settings import CPDSettings
from optuna_gpbandit.changepoint.statistic import Domain
from optuna_gpbandit._threads import single_threaded_blas
from optuna_gpbandit._storage import CHANGE_POINTS, PREDICTION, ROLE
from optuna_gpbandit._history import direction_sign
from optuna_gpbandit.reset import Reset, ResetRecord, ResetView

# Public names of the storage attributes of change detection (see optuna_gpbandit._storage).
ROLE_KEY = ROLE
CHANGE_POINTS_KEY = CHANGE_POINTS
PREDICTION_KEY = PREDICTION

_logger = get_logger(__name__)


@dataclass
class _Caches:
    """A detector's caches for one study: its replayers (one per search space) and the change
    points it has logged. They save time and repeated log lines, and never change a result."""

    replayers: dict[tuple[str, ...], Replayer] = field(default_factory=dict)
    known: dict[Hashable, tuple[int, ...]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


_CACHES: weakref.WeakKeyDictionary[Any, dict[ChangeDetection, _Caches]] = (
    weakref.WeakKeyDictionary())
_LOCK = threading.Lock()


@dataclass(frozen=True, kw_only=True)
class ChangeDetection(Reset):
    """Change detection for objectives that change over the trials: ``reset=ChangeDetection()``
    for any sampler (:class:`~optuna_gpbandit.GPUCBCPDSampler` sets it by default). A detected
    change resets the history the model sees. Single-objective studies only.

    Two detectors (``settings``):

    * :class:`ResidualTest` (default): every model trial stores the GP's prediction of its value
      when it is asked (system attr ``gpbandit:prediction``); when the value arrives, a CUSUM on
      its standardised residual runs (false alarms at rate ``alpha`` per trial). On an alarm the
      model forgets the trials before the excursion that raised it; the trials of the excursion
      (results of the new objective) stay.
    * :class:`CPDSettings` (Avanesov's GP-UCB-CPD, Algorithm 2; :meth:`avanesov`): about
      ``xi sqrt(t)`` trials since the last reset are uniform-exploration trials, and after each
      the change-point test compares GP means fitted on the two halves of every even-sized tail
      of them; on an alarm the model forgets that trial and every earlier one.

    Each trial gets a role when it starts (system attr ``gpbandit:role``): a
    uniform-exploration trial whenever the exploration trials since the last reset number at
    most ``xi * sqrt(trials since the last reset)``, else a model trial of the host sampler.

    Nothing is kept in memory that matters: change points are recomputed at every call by a
    deterministic replay of the stored COMPLETE trials with their roles and predictions (cached
    incrementally), so a resumed study or another worker finds the same resets. They are also
    written to the study system attr ``gpbandit:change_points`` for users (informational). In
    parallel runs a trial that finishes late can move a later change point; the replay then
    follows the stored facts, and a prediction made in an older segment is not tested.

    Parameters
    ----------
    settings
        :class:`ResidualTest` (default ``ResidualTest()``: ``alpha = 1e-4``) or
        :class:`CPDSettings` (Avanesov's test: fixed Matern-5/2 kernel with lengthscale 0.2 in
        encoded units, threshold ``theta_0 n^{-r}`` with ``theta_0 = 4`` on targets standardised
        by the exploration trials, ridge ``n^{1-r}``; ``CPDSettings(threshold=math.inf)`` never
        fires, the paper's "no detector" baseline).
    xi
        Exploration multiplier; ``None`` (default): ``sqrt(3)`` (the paper's) with
        :class:`CPDSettings`, ``0`` with :class:`ResidualTest` (the first trial asked in each
        segment is uniform, no other: the residual test needs no exploration trials).
    count_running
        Count other workers' RUNNING trials of the segment (and their roles) in the schedule, so
        parallel workers do not all explore at once. No effect on sequential runs.
    window
        Drift mode: the model sees at most the latest ``window`` trials (by trial number; a
        sliding window, SW-GP-UCB of Zhou & Shroff 2021) besides the detector's resets. For
        objectives that drift gradually; ``None`` (default): no window.
    n_integration_points
        Avanesov's test only: points of the fixed set on which the squared L2 distance of the two
        means is averaged (default: a 1000-point grid for one continuous parameter, else
        ``max(1024, 256 d)`` scrambled-Sobol points with a fixed seed).
    """

    settings: ResidualTest | CPDSettings = ResidualTest()
    xi: float | None = None
    count_running: bool = True
    window: int | None = None
    n_integration_points: int | None = None

    def __post_init__(self) -> None:
        if self.settings is None:  # the spelling of the default before it was written out
            object.__setattr__(self, "settings", ResidualTest())
        check_instance("settings", self.settings, (ResidualTest, CPDSettings),
                       "a ResidualTest, a CPDSettings or None")
        xi = self.settings.default_xi if self.xi is None else self.xi
        is_uniform_turn(0, 0, xi)  # validates xi
        if self.n_integration_points is not None:
            _check_int("n_integration_points", self.n_integration_points, 1)
        if self.window is not None:
            object.__setattr__(self, "window", _check_int("window", self.window, 2))
        object.__setattr__(self, "xi", float(xi))
        object.__setattr__(self, "count_running", bool(self.count_running))

    @classmethod
    def avanesov(cls, settings: CPDSettings | None = None, *, xi: float = SQRT3,
                 count_running: bool = True,
                 n_integration_points: int | None = None) -> ChangeDetection:
        """Avanesov's GP-UCB-CPD detector (Algorithm 2): uniform exploration trials and the
        two-sample test of their GP means (``settings``: :class:`CPDSettings`)."""
        if settings is not None:
            check_instance("settings", settings, CPDSettings, "a CPDSettings or None")
        return cls(settings=settings or CPDSettings(), xi=xi, count_running=count_running,
                   n_integration_points=n_integration_points)

    @property
    def residual(self) -> bool:
        """Whether the detector is the residual test (else Avanesov's)."""
        return self.settings.tests_predictions

    def store_prediction(self, study: Any, trial: Any, mean: float, sd: float, start: int,
                         n_history: int, spread: float) -> None:
        """Write the model's prediction of ``trial``'s value (objective units) for the test."""
        if self.residual:
            study._storage.set_trial_system_attr(
                trial._trial_id, PREDICTION_KEY,
                [float(mean), float(sd), int(start), int(n_history), float(spread)])

    # ---------------------------------------------------------------- the reset
    @property
    def objective_units(self) -> bool:
        """The residual test compares predictions and values in objective units."""
        return True

    @property
    def multi_objective(self) -> bool:
        return False

    def before_trial(self, study: Any, trial: Any) -> None:
        """Store the trial's role (``gpbandit:role``): uniform exploration or model trial, by
        the schedule, or ``"external"`` for an enqueued trial."""
        with single_threaded_blas():
            role = self._role(study, trial)
        study._storage.set_trial_system_attr(trial._trial_id, ROLE_KEY, role)

    def _role(self, study: Any, trial: Any) -> str:
        if "fixed_params" in trial.system_attrs:  # enqueued: never counted as uniform
            return "external"
        trials = study._get_trials(deepcopy=False, use_cache=False)
        search_space = study_search_space(study)
        if search_space:
            seg = self.segment(study, study_encoded_space(study, search_space), trials)
        else:
            seg = Segment(0, (), (), ())
        return "uniform" if self.is_exploration_turn(seg, trials, trial.number) else "model"

    def view(self, study: Any, trial: Any, space: Any, history: Any, seed: int,
             sampler_name: str) -> ResetView:
        """The history after the last change point (and within the ``window``), or, for a
        uniform exploration trial, a uniformly drawn point."""
        role = study._storage.get_trial_system_attrs(trial._trial_id).get(ROLE_KEY)
        if role == "uniform":
            rng = _randomness.trial_rng(seed, trial.number, _randomness.SAMPLE)
            return ResetView(history, 0,
                             uniform=space.from_uniform(rng.random((1, space.d)))[0])
        seg = self.segment(study, space, history.all_trials)
        start, window_start = seg.start, None
        if self.window is not None:  # drift: only the latest ``window`` trials
            start = window_start = max(start, trial.number - self.window)
        return ResetView(history.since(start), start,
                         record=ResetRecord(segment_start=seg.start,
                                            change_points=tuple(seg.change_points),
                                            window_start=window_start))

    def after_record(self, study: Any, trial: Any, record: Any) -> None:
        """Store the model's prediction of the trial's value for the residual test (not for a
        penalised target, which is not the objective)."""
        if not record.penalised:
            point = record.point
            self.store_prediction(study, trial, point.mu, point.pred_sd,
                                  record.reset.segment_start or 0, point.n_observed,
                                  point.y_scale)

    def current_segment(self, study: Any) -> tuple[int, tuple[int, ...], list[Any]]:
        """The first trial of the study's current segment, the change points and the trials
        (``0`` and none before any trial has parameters)."""
        trials = study._get_trials(deepcopy=False, use_cache=False)
        search_space = study_search_space(study) if trials else {}
        if not search_space:
            return 0, (), trials
        with single_threaded_blas():
            seg = self.segment(study, study_encoded_space(study, search_space), trials)
        return seg.start, tuple(seg.change_points), trials

    def _caches(self, study: Any) -> _Caches:
        """What this detector caches for ``study`` (kept beside the study, not on these
        settings: one settings object may serve many samplers and studies)."""
        with _LOCK:
            per_study = _CACHES.setdefault(study, {})
            if self not in per_study:
                per_study[self] = _Caches()
            return per_study[self]

    def _replayer(self, study: Any, space: Any) -> Replayer:
        key = tuple(space.names)
        caches = self._caches(study)
        with caches.lock:
            if key not in caches.replayers:
                domain = Domain.from_space(space, self.n_integration_points)
                caches.replayers[key] = Replayer(self.settings, domain)
            return caches.replayers[key]

    def segment(self, study: Any, space: Any, trials: Sequence[Any]) -> Segment:
        """Replay the study's role-tagged COMPLETE trials (those holding every parameter of
        the encoded ``space``); log and store newly detected change points."""
        sign = direction_sign(study.direction)
        done = [t for t in trials
                if t.state == TrialState.COMPLETE and space.holds(t.params)]
        X = space.encode_many([t.params for t in done])  # one vectorised pass, not one per trial
        records = [
            TrialRecord(t.number, t.system_attrs.get(ROLE_KEY) == "uniform", x,
                        sign * float(t.value),
                        _prediction(t, sign) if self.residual else None)
            for t, x in zip(done, X)
        ]
        key = (study._study_id, tuple(space.names))
        seg = self._replayer(study, space).replay(records, key=key)
        caches = self._caches(study)
        with caches.lock:
            new = seg.change_points != caches.known.get(key)
            caches.known[key] = seg.change_points
        if new and seg.change_points:
            _logger.info(
                "Change detected at trial %d (change points so far: %s); the model now sees "
                "trials from %d on.", seg.change_points[-1], list(seg.change_points), seg.start,
            )
            study._storage.set_study_system_attr(
                study._study_id, CHANGE_POINTS_KEY, list(seg.change_points)
            )
        return seg

    def is_exploration_turn(self, seg: Segment, trials: Sequence[Any], current: int) -> bool:
        """The schedule for trial number ``current`` given the segment (and running trials)."""
        n_uniform, n_history = seg.n_uniform, seg.n_history
        if self.count_running:
            for t in trials:
                if t.state == TrialState.RUNNING and t.number != current and t.number >= seg.start:
                    n_history += 1
                    n_uniform += t.system_attrs.get(ROLE_KEY) == "uniform"
        assert self.xi is not None  # resolved in __post_init__
        return is_uniform_turn(n_uniform, n_history, self.xi)

    def current_best_trial(self, study: Any, space: Any, trials: Sequence[Any]) -> Any | None:
        """The best COMPLETE trial since the last change (``None`` if there is none yet)."""
        seg = self.segment(study, space, trials)
        done = [t for t in trials if t.state == TrialState.COMPLETE and t.number >= seg.start]
        if not done:
            return None
        number = best_since(
            [t.number for t in done], [t.value for t in done], seg.start,
            "minimize" if study.direction == StudyDirection.MINIMIZE else "maximize",
        )
        return None if number is None else next(t for t in done if t.number == number)


def _prediction(trial: Any, sign: float) -> Prediction | None:
    """The stored prediction of a trial (oriented like its target), or ``None``."""
    value = trial.system_attrs.get(PREDICTION_KEY)
    try:
        mean, sd, start, n, spread = value
        p = Prediction(sign * float(mean), float(sd), int(start), int(n), float(spread))
    except (TypeError, ValueError):
        return None
    ok = all(math.isfinite(v) for v in (p.mean, p.sd, p.spread)) and p.sd > 0 <= p.spread
    return p if ok else None
