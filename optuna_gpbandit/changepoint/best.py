"""The best trial since the last change (``study.best_trial`` is not segment-aware)."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from optuna_gpbandit.changepoint._checks import _check_int


def best_since(
    numbers: Sequence[int] | np.ndarray,
    values: Sequence[float] | np.ndarray,
    start: int,
    direction: str = "maximize",
) -> int | None:
    """Number of the best trial with ``number >= start`` (the current segment).

    Parameters
    ----------
    numbers
        Trial numbers of the observed trials.
    values
        Their objective values (as stored, not oriented). NaN values are ignored.
    start
        Segment start (:attr:`Segment.start`).
    direction
        ``"maximize"`` or ``"minimize"``.

    Returns
    -------
    int or None
        The trial number of the best value (the lowest number among ties), or ``None`` if the
        segment has no observed trial yet.
    """
    num = np.asarray(numbers)
    val = np.asarray(values, dtype=float)
    if num.ndim != 1 or val.ndim != 1 or num.shape != val.shape:
        raise ValueError("numbers and values must be 1-D arrays of the same length.")
    if num.size and not np.issubdtype(num.dtype, np.integer):
        raise ValueError("numbers must be integers.")
    start = _check_int("start", start)
    if direction not in ("maximize", "minimize"):
        raise ValueError(f"direction must be 'maximize' or 'minimize', got {direction!r}.")
    ok = (num >= start) & ~np.isnan(val)
    if not ok.any():
        return None
    oriented = np.where(ok, val if direction == "maximize" else -val, -np.inf)
    best = np.max(oriented[ok])
    cand = num[ok & (oriented == best)]
    return int(cand.min())
