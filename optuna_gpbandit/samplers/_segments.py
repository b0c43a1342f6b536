"""The change-detection side of a sampler: exploration roles, segments, current best."""

from __future__ import annotations

from typing import Any

import numpy as np
from optuna.study import Study
from optuna.trial import FrozenTrial, TrialState

from optuna_gpbandit import _randomness
from optuna_gpbandit._conditional import study_encoded_space
from optuna_gpbandit._history import History
from optuna_gpbandit._space import EncodedSpace
from optuna_gpbandit._threads import single_threaded_blas
from optuna_gpbandit.changepoint import ROLE_KEY, ChangeDetection, Segment
from optuna_gpbandit._history import direction_sign


class SegmentsMixin:
    """Methods of :class:`GPBanditSampler` that read the ``change_detection`` stage."""

    _change_detection: ChangeDetection | None

    def before_trial(self, study: Study, trial: FrozenTrial) -> None:
        self._independent_sampler.before_trial(study, trial)
        if self._change_detection is not None:
            with single_threaded_blas():
                role = self._role(study, trial)
            study._storage.set_trial_system_attr(trial._trial_id, ROLE_KEY, role)

    def _segment_history(
        self, study: Study, trial: FrozenTrial, space: EncodedSpace, history: History,
        extra: dict[str, Any],
    ) -> tuple[History, int, np.ndarray | None]:
        """The history after the last change point, its start, and the point of a uniform
        exploration trial (``None`` for a model trial); the segment goes into ``extra``."""
        role = study._storage.get_trial_system_attrs(trial._trial_id).get(ROLE_KEY)
        if role == "uniform":
            rng = _randomness.trial_rng(self._seed, trial.number, _randomness.SAMPLE)
            return history, 0, space.from_uniform(rng.random((1, space.d)))[0]
        cd = self._change_detection
        seg = cd.segment(study, space, history.all_trials)
        start = seg.start
        if cd.window is not None:  # drift: only the latest ``window`` trials
            start = max(start, trial.number - cd.window)
            extra["window_start"] = start
        history = history.since(start)
        extra.update(segment_start=seg.start, change_points=list(seg.change_points))
        return history, start, None

    def _role(self, study: Study, trial: FrozenTrial) -> str:
        """Uniform exploration or model trial, by the change-detection schedule."""
        if "fixed_params" in trial.system_attrs:  # enqueued: never counted as uniform
            return "external"
        cd = self._change_detection
        trials = study._get_trials(deepcopy=False, use_cache=False)
        search_space = self.infer_relative_search_space(study, trial)
        if search_space:
            seg = cd.segment(study, study_encoded_space(study, search_space), trials)
        else:
            seg = Segment(0, (), (), ())
        return "uniform" if cd.is_exploration_turn(seg, trials, trial.number) else "model"

    def _current_segment(self, study: Study) -> tuple[Segment | None, list[FrozenTrial]]:
        trials = study._get_trials(deepcopy=False, use_cache=False)
        search_space = self.infer_relative_search_space(study, trials[0]) if trials else {}
        if self._change_detection is None or not search_space:
            return None, trials
        with single_threaded_blas():
            return (self._change_detection.segment(
                study, study_encoded_space(study, search_space), trials), trials)

    def change_points(self, study: Study) -> list[int]:
        """Trial numbers at which a change was detected (empty without ``change_detection``).

        The model sees only trials after the last one.
        """
        seg, _ = self._current_segment(study)
        return [] if seg is None else list(seg.change_points)

    def current_best_trial(self, study: Study) -> FrozenTrial | None:
        """The best COMPLETE trial since the last detected change (``None`` if none yet).

        ``study.best_trial`` keeps a value observed before a change, under the old objective;
        with ``change_detection`` use this instead. Without it, this is the best trial of the
        study.
        """
        self._check_single_objective(study)
        seg, trials = self._current_segment(study)
        start = 0 if seg is None else seg.start
        done = [t for t in trials if t.state == TrialState.COMPLETE and t.number >= start]
        if not done:
            return None
        sign = direction_sign(study.direction)
        return max(done, key=lambda t: (sign * t.value, -t.number))

