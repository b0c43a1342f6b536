"""The history stage for samplers (:class:`ChangeDetection`; Optuna objects appear only here)."""

from __future__ import annotations

import threading
from typing import Any, Hashable, Sequence

from optuna.logging import get_logger
from optuna.study import StudyDirection
from optuna.trial import TrialState

from optuna_gpbandit.changepoint._checks import _check_int
from optuna_gpbandit.changepoint.best import best_since
from optuna_gpbandit.changepoint.replayer import Replayer, Segment, TrialRecord
from optuna_gpbandit.changepoint.schedule import SQRT3, is_uniform_turn
from optuna_gpbandit.changepoint.settings import CPDSettings
from optuna_gpbandit.changepoint.statistic import Domain
from optuna_gpbandit._threads import PicklableLock

ROLE_KEY = "gpbandit:role"
"""Trial system attr: ``"uniform"`` (exploration), ``"model"`` or ``"external"`` (enqueued)."""
CHANGE_POINTS_KEY = "gpbandit:change_points"
"""Study system attr: the detected change points (informational; the replay is the truth)."""

_logger = get_logger(__name__)


class ChangeDetection(PicklableLock):
    """GP-UCB-CPD's history stage (Avanesov, Algorithm 2), usable by every sampler.

    Each trial gets a role when it starts (system attr ``gpbandit:role``): a
    uniform-exploration trial whenever the exploration trials since the last reset number at
    most ``xi * sqrt(trials since the last reset)``, else a model trial of the host sampler.
    After every completed exploration trial the change-point test runs on every even-sized tail
    of the exploration trials since the last reset; when it fires, the history resets: the model
    no longer sees that trial nor any earlier one.

    Nothing is kept in memory that matters: change points are recomputed at every call by a
    deterministic replay of the stored, role-tagged COMPLETE trials (cached incrementally), so a
    resumed study or another worker finds the same resets. They are also written to the study
    system attr ``gpbandit:change_points`` for users (informational). In parallel runs a trial
    that finishes late can move a later change point; the replay then follows the stored facts.

    Parameters
    ----------
    xi
        Exploration multiplier (default ``sqrt(3)``, the paper's). ``0`` gives plain GP-UCB with
        one exploration trial per segment.
    settings
        The detector: :class:`CPDSettings` (fixed Matern-5/2 kernel with lengthscale 0.2 in
        encoded units, threshold ``theta_0 n^{-r}`` with ``theta_0 = 4`` on targets standardised
        by the exploration trials, ridge ``n^{1-r}``). ``CPDSettings(threshold=math.inf)``
        never fires (the paper's "no detector" baseline).
    count_running
        Count other workers' RUNNING trials of the segment (and their roles) in the schedule, so
        parallel workers do not all explore at once. No effect on sequential runs.
    n_integration_points
        Points of the fixed set on which the squared L2 distance of the two means is averaged
        (default: a 1000-point grid for one continuous parameter, else ``max(1024, 256 d)``
        scrambled-Sobol points with a fixed seed).
    """

    def __init__(
        self,
        *,
        xi: float = SQRT3,
        settings: CPDSettings | None = None,
        count_running: bool = True,
        n_integration_points: int | None = None,
    ) -> None:
        is_uniform_turn(0, 0, xi)  # validates xi
        if settings is not None and not isinstance(settings, CPDSettings):
            raise ValueError(f"settings must be a CPDSettings or None, got {settings!r}.")
        if n_integration_points is not None:
            _check_int("n_integration_points", n_integration_points, 1)
        self.xi = float(xi)
        self.settings = settings or CPDSettings()
        self.count_running = bool(count_running)
        self.n_integration_points = n_integration_points
        self._replayers: dict[tuple[str, ...], Replayer] = {}
        self._known: dict[Hashable, tuple[int, ...]] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"ChangeDetection(xi={self.xi:.4g}, settings={self.settings!r})"

    def _replayer(self, space: Any) -> Replayer:
        key = tuple(space.names)
        with self._lock:
            if key not in self._replayers:
                domain = Domain.from_space(space, self.n_integration_points)
                self._replayers[key] = Replayer(self.settings, domain)
            return self._replayers[key]

    def segment(self, study: Any, space: Any, trials: Sequence[Any]) -> Segment:
        """Replay the study's role-tagged COMPLETE trials (those holding every parameter of
        the encoded ``space``); log and store newly detected change points."""
        sign = -1.0 if study.direction == StudyDirection.MINIMIZE else 1.0
        done = [t for t in trials
                if t.state == TrialState.COMPLETE and all(n in t.params for n in space.names)]
        X = space.encode_many([t.params for t in done])  # one vectorised pass, not one per trial
        records = [
            TrialRecord(t.number, t.system_attrs.get(ROLE_KEY) == "uniform", x,
                        sign * float(t.value))
            for t, x in zip(done, X)
        ]
        key = (study._study_id, tuple(space.names))
        seg = self._replayer(space).replay(records, key=key)
        with self._lock:
            new = seg.change_points != self._known.get(key)
            self._known[key] = seg.change_points
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
