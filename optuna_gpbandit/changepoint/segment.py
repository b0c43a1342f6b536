"""What a replay of the change-point rule ends in: the current segment of the study, and the
residual test's alarm record (Avanesov's test records a
:class:`~optuna_gpbandit.changepoint.detector.Detection` instead)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from optuna_gpbandit.changepoint.detector import Detection


@dataclass(frozen=True)
class ResidualAlarm:
    """An alarm of the residual test (``Segment.last_detection``; Avanesov's test gives a
    :class:`~optuna_gpbandit.changepoint.detector.Detection` there).

    Attributes
    ----------
    n_excursion
        Trials since the CUSUM was last 0 (they start the new segment).
    statistic, threshold
        ``S`` and ``h``.
    trigger_number
        The trial whose result raised the alarm.
    """

    n_excursion: int
    statistic: float
    threshold: float
    trigger_number: int


@dataclass(frozen=True)
class Segment:
    """Result of a replay.

    Attributes
    ----------
    start
        First trial number of the current segment (0 if no change was detected): trials with a
        lower number are forgotten (the triggering trial included, as in the paper).
    change_points
        Numbers of the trials whose scan fired, in order.
    uniform_numbers
        Exploration trials of the current segment (the CPD sequence ``U``), in order.
    history_numbers
        All observed trials of the current segment, in order.
    last_detection
        What raised the last change point, if any (diagnostics): Avanesov's firing window
        (:class:`Detection`) or the residual test's alarm (:class:`ResidualAlarm`).
    """

    start: int
    change_points: tuple[int, ...]
    uniform_numbers: tuple[int, ...]
    history_numbers: tuple[int, ...]
    last_detection: Detection | ResidualAlarm | None = None

    @property
    def n_uniform(self) -> int:
        """``|U|``: exploration trials since the last reset (for :func:`is_uniform_turn`)."""
        return len(self.uniform_numbers)

    @property
    def n_history(self) -> int:
        """``|history|``: observed trials since the last reset."""
        return len(self.history_numbers)
