"""Completed trials whose values are codes, not measurements [design choice]: the penalty
idiom (``return 1e6`` for an invalid setting) and the values of a diverged run that are orders
of magnitude off. :class:`~optuna_gpbandit.failures.FailedTrials` (``extreme_gap``) treats them
as failed trials (issue 47)."""

from __future__ import annotations

import numpy as np
from optuna.study import StudyDirection
from optuna.trial import FrozenTrial

from optuna_gpbandit._history import direction_sign

EXTREME_GAP = 10.0  # FailedTrials(extreme_gap=...)'s default [design choice]
EXTREME_MIN_SHARE = 0.25  # the values above an extreme gap are at least this share of trials
UNUSABLE_GAP = 100.0
"""A single value whose gap to the next better value is this many times the spread of all the
values above it is extreme without a repeat [design choice]: a diverged run, orders of magnitude
off the other values, is a code, not a measurement (issue 47). Measured from the cut's top
instead (a first form), ordinary losses below a near-tied stump plateau counted as extreme
(docs/benchmarks.md, "Extreme values")."""


def extreme_numbers(trials: list[FrozenTrial], direction: StudyDirection,
                    gap: float = EXTREME_GAP) -> set[int]:
    """Numbers of the COMPLETE ``trials`` whose values are extreme: below the widest cut
    between two consecutive distinct values (oriented, larger is better) ``v_k < v_{k+1}``
    with ``v_{k+1} - v_k > gap (v_max - v_{k+1})``, where the values from ``v_{k+1}`` up are
    two distinct values or more and at least :data:`EXTREME_MIN_SHARE` of the trials (a few
    excellent values are not a bulk that makes the rest extreme), and every value below the
    cut is a code, not a measurement: repeated (a penalty constant returned by two trials or
    more), or a single value far from every better one (:func:`_all_codes`). Distinct values
    below a wide gap that lie near each other (a branch of the space whose values are large)
    are measurements the model keeps.

    Scale-free: a penalty ``P`` counts once it is ``gap`` times farther from the worst valid
    value than the valid values are from each other, whatever ``P`` is."""
    if len(trials) < 4:
        return set()
    y = direction_sign(direction) * np.array([t.value for t in trials], dtype=float)
    # The rule is scale-free: scaled to at most 1 in size, values near the float limit do not
    # overflow its products and differences (which would only warn: inf compares correctly).
    finite = np.isfinite(y)
    y = y / max(float(np.max(np.abs(y[finite]))) if finite.any() else 1.0, 1e-300)
    v, counts = np.unique(y, return_counts=True)  # ascending: worst first
    above = np.cumsum(counts[::-1])[::-1]  # trials with a value >= v[i]
    cut = None
    for k in range(v.size - 2):
        spread = v[-1] - v[k + 1]
        if not (v[k + 1] - v[k] > gap * spread and above[k + 1] >= EXTREME_MIN_SHARE * len(trials)):
            continue
        if _all_codes(v, counts, k):
            cut = v[k]
    if cut is None:
        return set()
    return {t.number for t, value in zip(trials, y) if value <= cut}


def _all_codes(v: np.ndarray, counts: np.ndarray, k: int) -> bool:
    """Whether every distinct value ``v[0..k]`` (oriented, ascending) below a cut is a code:
    repeated, or a single value whose gap to the next better value exceeds
    :data:`UNUSABLE_GAP` times the spread of all values above it (``v_max - v_{j+1}``).
    Measured from each value's own neighbour, a single value far from every better one (a
    diverged run) is a code, while ordinary values below a near-tied top (a stump plateau
    0.71799, 0.7183 above losses of 0.78-0.90, each 0.01 from the next) are not."""
    for j in range(k + 1):
        if counts[j] >= 2:
            continue
        if not v[j + 1] - v[j] > UNUSABLE_GAP * (v[-1] - v[j + 1]):
            return False
    return True
