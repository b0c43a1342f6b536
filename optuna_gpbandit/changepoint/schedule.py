"""The exploration schedule of GP-UCB-CPD (Algorithm 2, line 6): :func:`is_uniform_turn`."""

from __future__ import annotations

import math

from optuna_gpbandit.changepoint._checks import _check_int

SQRT3 = math.sqrt(3.0)
"""The paper's exploration multiplier ``xi``."""


def is_uniform_turn(n_uniform: int, n_history: int, xi: float = SQRT3) -> bool:
    """Whether the next trial is a uniform-exploration trial (Algorithm 2, line 6).

    The rule is ``n_uniform <= xi * sqrt(n_history)``, evaluated as
    ``n_uniform**2 <= xi**2 * n_history``: exactly in integers when ``xi**2`` is (within 1e-9) an
    integer -- e.g. ``xi = sqrt(3)``, where floating point would flip the tie
    ``n_uniform = n_history = 3`` -- otherwise in floating point with a relative tolerance of 1e-9.

    Parameters
    ----------
    n_uniform
        Number of uniform-exploration trials since the last reset (``|uniformlySampled|``). Spec
        9.4 counts COMPLETE trials with number >= the segment start (optionally RUNNING ones too).
    n_history
        Number of trials since the last reset, of every role (``|history|``), counted the same way.
    xi
        Exploration multiplier, ``>= 0``. ``xi = 0`` gives plain GP-UCB: only the first trial of a
        segment is uniform.

    Returns
    -------
    bool
        ``True`` for a uniform-exploration turn. The first turn after a reset (``n_history = 0``)
        is always uniform; with ``xi = sqrt(3)`` the first four of every segment are. A segment
        with no reset has ``1 + isqrt(3 (t - 1))`` uniform trials among its first ``t``.

    Raises
    ------
    ValueError
        If a count is negative or not an integer, ``n_uniform > n_history``, or ``xi`` is negative
        or not finite.
    """
    nu = _check_int("n_uniform", n_uniform)
    nh = _check_int("n_history", n_history)
    if nu > nh:
        raise ValueError(f"n_uniform ({nu}) cannot exceed n_history ({nh}).")
    try:
        x = float(xi)
    except (TypeError, ValueError):
        raise ValueError(f"xi must be a number, got {xi!r}.") from None
    if not math.isfinite(x) or x < 0:
        raise ValueError(f"xi must be finite and >= 0, got {xi!r}.")
    xi2 = x * x
    xi2_int = round(xi2)
    if abs(xi2 - xi2_int) <= 1e-9 * max(1.0, xi2):
        return nu * nu <= xi2_int * nh
    return nu * nu <= xi2 * nh * (1.0 + 1e-9)
