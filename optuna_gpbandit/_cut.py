"""The history cut: which trials the model sees (``reset=``), one protocol for change detection
(:class:`~optuna_gpbandit.changepoint.ChangeDetection`) and restarts
(:class:`~optuna_gpbandit.restarts.Restarts`).

A cut keeps the trials from a trial number ``start`` on, and may instead hand the suggestion a
uniform exploration point (Avanesov's schedule). What each cut needs around the suggestion
goes through the same hooks: ``before_trial`` (a role stored when a trial starts),
``annotate`` (fields it wants in the step's record) and ``after_record`` (what it stores once
the point is taken).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from optuna_gpbandit._history import History

if TYPE_CHECKING:
    from optuna.study import Study
    from optuna.trial import FrozenTrial

    from optuna_gpbandit._space import EncodedSpace
    from optuna_gpbandit.gp.posterior import GPPosterior


@dataclass(frozen=True)
class SegmentRecord:
    """What a cut says of the suggestion, for its record (``gpbandit:state``): the segment's
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
class Cut:
    """The history the model sees after a cut: the trials from ``start`` on; ``uniform``, a
    point to take instead of the model's (an exploration trial); ``streak``, the settled trials
    since the last restart; ``record``, what the cut says of the suggestion."""

    history: History
    start: int = 0
    uniform: np.ndarray | None = None
    streak: int = 0
    record: SegmentRecord = SegmentRecord()


@runtime_checkable
class HistoryCut(Protocol):
    """What a ``reset=`` object does for a sampler (see the module docstring)."""

    @property
    def fresh_startup(self) -> bool:
        """Whether the model starts again with a start-up design after a cut."""

    @property
    def objective_units(self) -> bool:
        """Whether the model must stay in objective units (no output warping)."""

    def fresh(self) -> HistoryCut:
        """This cut for one sampler: equal settings, no cache shared with another sampler (a
        default argument is one object for every sampler built with it)."""

    def before_trial(self, study: Study, trial: FrozenTrial) -> None:
        """When a trial starts: store what the cut needs to know of it."""

    def cut(self, study: Study, trial: FrozenTrial, space: EncodedSpace, history: History,
            seed: int, sampler_name: str) -> Cut:
        """The history the model sees for ``trial``."""

    def annotate(self, cut: Cut, history: History, posterior: GPPosterior,
                 space: EncodedSpace, seed: int) -> dict[str, Any]:
        """Fields for the step's record once the model is fitted."""

    def after_record(self, study: Study, trial: FrozenTrial, record: Any) -> None:
        """Once the point is taken and its record stored."""
