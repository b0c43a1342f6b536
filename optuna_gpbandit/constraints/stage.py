"""What the long-term constraint rule (:class:`~optuna_gpbandit.constraints.long_term.
LongTermConstraints`) hands to the GP for one sampling call (:class:`ConstraintStage`); Optuna
trial directions appear here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

import numpy as np
from optuna.study import StudyDirection
from optuna.trial import FrozenTrial

from optuna_gpbandit._history import direction_sign
from optuna_gpbandit.constraints._checks import _check_y
from optuna_gpbandit.constraints.algorithms import Multipliers
from optuna_gpbandit.constraints.data import SkippedTrial
from optuna_gpbandit.constraints.multipliers import MultiplierState


@dataclass(frozen=True, eq=False)
class ConstraintStage:
    """What the constraint stage hands to the GP for one sampling call.

    Unpacks as ``trials, transform, state = stage``.

    Attributes
    ----------
    trials
        COMPLETE trials for the GP, in epoch order: every counted COMPLETE trial
        (``history="all"``) or those of the current epoch (``history="epoch"``; may be empty at
        the start of an epoch, where a sampler should draw a random point).
    constraints
        ``(len(trials), m)`` constraint values of ``trials``.
    state
        The multipliers (from all counted trials, PRUNED ones too with ``include_pruned``).
    skipped
        Trials left out for unusable constraint data.
    n_epochs
        ``L`` for ``delta / L`` (:func:`horizon_epochs`).
    scale, objective_scale
        Per-constraint scales the constraint values were divided by (``scale=True``: their
        mean absolute value over the first epoch), or ``None`` (raw values); and the scale
        :meth:`targets` divides the objective by (its standard deviation over the first epoch,
        or 1), so neither's units change the penalised targets.
    """

    trials: tuple[FrozenTrial, ...]
    constraints: np.ndarray
    state: MultiplierState
    skipped: tuple[SkippedTrial, ...]
    n_epochs: int
    multipliers: Multipliers
    max_log_penalty: float
    scale: np.ndarray | None = None
    objective_scale: float = 1.0

    def __iter__(self) -> Iterator[Any]:
        return iter((self.trials, self.targets, self.state))

    @property
    def numbers(self) -> np.ndarray:
        return np.array([t.number for t in self.trials], dtype=int)

    def penalties(self) -> np.ndarray:
        """The penalty of each GP trial under the current multipliers (``y - z``)."""
        G = self.constraints
        if G.shape[1] == 0:
            return np.zeros(G.shape[0])
        return self.multipliers.penalties(G, self.state, self.max_log_penalty)

    def targets(self, y: Any) -> np.ndarray:
        """Penalised GP targets ``z`` from ``y``, the objective values of :attr:`trials`
        oriented for maximisation (``-value`` for ``minimize``)."""
        return _check_y(y, len(self.trials)) / self.objective_scale - self.penalties()

    __call__ = targets

    def targets_from_values(self, direction: StudyDirection) -> np.ndarray:
        """:meth:`targets` of the trials' stored values, oriented by ``direction``.

        A penalty always lowers the oriented target: it raises a minimised objective.
        """
        sign = direction_sign(direction)
        values = np.array([t.value for t in self.trials], dtype=float)
        return self.targets(sign * values)

    @property
    def delta_factor(self) -> float:
        """The factor of ``delta`` in the width (the multiplier rule's ``delta_factor``)."""
        return self.multipliers.delta_factor(self.n_epochs)

    def beta(self, gamma: float, B: float, R: float, delta: float) -> float:
        """:func:`constrained_beta` with this stage's ``L`` (and ``kappa`` for Algorithm 3)."""
        return self.multipliers.beta(gamma, B, R, delta, self.n_epochs, self.state)


def unit_scales(G: np.ndarray) -> np.ndarray:
    """Per-column mean absolute value of ``G`` (1 where it is 0 or not finite, and for every
    column of a ``G`` without rows)."""
    if not G.shape[0]:
        return np.ones(G.shape[1])  # no trial counted yet (e.g. every one skipped as invalid)
    top = np.max(np.abs(G), axis=0)
    top = np.where(np.isfinite(top) & (top > 0), top, 1.0)
    scale = top * np.mean(np.abs(G) / top, axis=0)  # no overflow near 1e308
    return np.where(np.isfinite(scale) & (scale > 0), scale, 1.0)
