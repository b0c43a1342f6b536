"""Which trials the model sees (``reset=``): one base class, :class:`Reset`, for the do-nothing
default (:class:`NoReset`), change detection
(:class:`~optuna_gpbandit.changepoint.ChangeDetection`) and restarts
(:class:`~optuna_gpbandit.restarts.Restarts`).

The samplers' default is :class:`NoReset` (``reset=None``, its earlier spelling, is mapped to
it once, at the door: :func:`resolve_reset`). A reset keeps the trials from a trial number ``start`` on (:class:`ResetView`), and may instead
hand the suggestion a uniform exploration point (Avanesov's schedule). What each reset needs
around the suggestion goes through the same hooks, which do nothing here: ``before_trial`` (a
role stored when a trial starts), ``annotate`` (fields it wants in the step's record) and
``after_record`` (what it stores once the point is taken). A reset is a frozen settings object:
what it caches for a study lives beside the study, never on the object.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from optuna_gpbandit._history import History

if TYPE_CHECKING:
    from optuna.study import Study
    from optuna.trial import FrozenTrial

    from optuna_gpbandit._space import EncodedSpace
    from optuna_gpbandit.gp.posterior import GPPosterior


@dataclass(frozen=True)
class ResetRecord:
    """What a reset says of the suggestion, for its record (``gpbandit:state``): the segment's
    first trial and change points (change detection), the window's start (drift), the
    restart's first trial and the number of restarts."""

    segment_start: int | None = None
    change_points: tuple[int, ...] | None = None
    window_start: int | None = None
    restart_start: int | None = None
    restarts: int | None = None

    def to_json(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
               if getattr(self, f.name) is not None}
        if "change_points" in out:
            out["change_points"] = list(out["change_points"])
        return out


@dataclass(frozen=True)
class ResetView:
    """The history the model sees after the reset: the trials from ``start`` on; ``uniform``,
    a point to take instead of the model's (an exploration trial); ``streak``, the settled
    trials since the last restart; ``record``, what the reset says of the suggestion."""

    history: History
    start: int = 0
    uniform: np.ndarray | None = None
    streak: int = 0
    record: ResetRecord = ResetRecord()


@dataclass(frozen=True)
class Reset:
    """What a ``reset=`` object does for a sampler; every hook does nothing here (see the
    module docstring). Subclasses override the hooks their rule needs."""

    @property
    def fresh_startup(self) -> bool:
        """Whether the model starts again with a start-up design after a reset."""
        return False

    @property
    def objective_units(self) -> bool:
        """Whether the model must stay in objective units (no output warping)."""
        return False

    @property
    def multi_objective(self) -> bool:
        """Whether the rule serves a study with several objectives."""
        return True

    def before_trial(self, study: Study, trial: FrozenTrial) -> None:
        """When a trial starts: store what the reset needs to know of it."""

    def view(self, study: Study, trial: FrozenTrial, space: EncodedSpace, history: History,
             seed: int, sampler_name: str) -> ResetView:
        """The history the model sees for ``trial``: all of it."""
        return ResetView(history)

    def annotate(self, view: ResetView, history: History, posterior: GPPosterior,
                 space: EncodedSpace, seed: int) -> dict[str, Any]:
        """Fields for the step's record once the model is fitted."""
        return {}

    def after_record(self, study: Study, trial: FrozenTrial, record: Any) -> None:
        """Once the point is taken and its record stored."""

    def current_segment(self, study: Study) -> tuple[int, tuple[int, ...], list[FrozenTrial]]:
        """The first trial the model sees in the study's current segment, the change points
        before it, and the study's trials (for the samplers' ``change_points`` and
        ``current_best_trial``): ``0`` and none here."""
        return 0, (), study._get_trials(deepcopy=False, use_cache=False)


@dataclass(frozen=True)
class NoReset(Reset):
    """The model sees every trial of the study: ``reset=NoReset()``, the samplers' default
    (``reset=None``, its spelling before this class, means the same)."""


EARLIER_SPELLINGS: tuple[tuple[object, Reset], ...] = ((None, NoReset()),)
"""Values the ``reset`` argument took before its do-nothing object, each with the reset it
means."""


def resolve_reset(reset: Reset | None) -> Reset:
    """The ``reset`` argument as a :class:`Reset` (``None``, its spelling before
    :class:`NoReset`, is ``NoReset()``); ``ValueError`` for anything else."""
    if isinstance(reset, Reset):  # (the class itself is not an instance)
        return reset
    for spelling, meant in EARLIER_SPELLINGS:
        if reset is spelling:
            return meant
    raise ValueError("reset must be None, Restarts() or ChangeDetection(...) (or NoReset(), "
                     f"the same as None), got {reset!r}.")
