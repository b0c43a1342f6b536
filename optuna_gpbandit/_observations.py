"""History -> observations: encoded inputs and oriented, standardised targets.

Targets are oriented for maximisation (``y = -value`` for ``minimize``). Infinite values are
clipped to the finite range of the others (with a logged warning), so they count as the worst or
best seen rather than breaking the fit. With ``standardize`` the targets are shifted and scaled to
mean 0 and standard deviation 1 (scale 1 when there are fewer than two values or they are all
equal).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from optuna.logging import get_logger
from optuna.study import StudyDirection
from optuna.trial import FrozenTrial

from optuna_gpbandit._space import EncodedSpace

_logger = get_logger(__name__)


@dataclass(frozen=True)
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
    """

    X: np.ndarray
    y: np.ndarray
    y_raw: np.ndarray
    shift: float
    scale: float
    numbers: np.ndarray
    sign: float = 1.0

    @property
    def n(self) -> int:
        return int(self.y.shape[0])

    def to_objective(self, mean: float, sd: float) -> tuple[float, float]:
        """A GP mean and standard deviation in the model's units -> objective units."""
        return self.sign * (mean * self.scale + self.shift), sd * self.scale


def _sign(direction: StudyDirection) -> float:
    return -1.0 if direction == StudyDirection.MINIMIZE else 1.0


def oriented_values(trials: list[FrozenTrial], direction: StudyDirection) -> np.ndarray:
    """Objective values with the sign that makes larger better, infinities clipped."""
    y = _sign(direction) * np.array([t.value for t in trials], dtype=float)
    finite = np.isfinite(y)
    if not finite.all():
        _logger.warning(
            "%d objective value(s) are infinite; they are clipped to the finite range for the GP.",
            int((~finite).sum()),
        )
        lo, hi = (y[finite].min(), y[finite].max()) if finite.any() else (0.0, 0.0)
        y = np.clip(np.nan_to_num(y, nan=lo, posinf=hi, neginf=lo), lo, hi)
    return y


def build_observations(
    trials: list[FrozenTrial],
    space: EncodedSpace,
    direction: StudyDirection,
    standardize: bool = True,
) -> Observations:
    """Encode ``trials`` (COMPLETE, holding every parameter of ``space``)."""
    X = space.encode_many([t.params for t in trials])
    y_raw = oriented_values(trials, direction)
    shift, scale = 0.0, 1.0
    if standardize and y_raw.size:
        shift = float(y_raw.mean())
        sd = float(y_raw.std())
        scale = sd if (y_raw.size >= 2 and sd > 1e-12 * max(1.0, abs(shift))) else 1.0
    return Observations(
        X=X,
        y=(y_raw - shift) / scale,
        y_raw=y_raw,
        shift=shift,
        scale=scale,
        numbers=np.array([t.number for t in trials], dtype=int),
        sign=_sign(direction),
    )
