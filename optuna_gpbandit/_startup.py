"""How long the start-up design lasts: completed trials before the GP is used.

The points themselves (scrambled Sobol points, branch by branch in a conditional space) come
from :mod:`optuna_gpbandit._conditional`.
"""

from __future__ import annotations

MIN_STARTUP_TRIALS = 5
"""The default's floor: spaces of up to 4 parameters get five start-up trials [design choice]."""
MAX_STARTUP_TRIALS = 20
"""The default's cap: a 50-parameter space still gets the model from trial 21 on [design
choice; not measured beyond 10 parameters]."""


def startup_count(n_startup_trials: int | None, dim: int) -> int:
    """Completed trials before the GP is used: ``n_startup_trials``, or with ``None`` (the
    default) ``d + 1`` within ``[MIN_STARTUP_TRIALS, MAX_STARTUP_TRIALS]``, ``d = dim`` the
    number of parameters a point varies in (the largest branch's in a conditional space).

    Why (issue 30): a GP with one lengthscale per parameter, fitted on five points in 7-10
    dimensions, cannot tell which parameters matter, and ``d + 1`` points are the fewest that
    span every direction (a simplex). With five start-up points, 3 of 20 GP-UCB runs of the
    real-HPO suite's decision trees stayed on the plateau of one-leaf trees for all 40 trials;
    ``d + 1`` took them off it, and ``2 d`` spent too many trials on the design
    (docs/benchmarks.md, "Start-up design").
    """
    if n_startup_trials is not None:
        return n_startup_trials
    return min(max(MIN_STARTUP_TRIALS, int(dim) + 1), MAX_STARTUP_TRIALS)
