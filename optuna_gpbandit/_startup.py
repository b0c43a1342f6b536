"""The start-up design: how long it lasts (completed trials before the GP is used) and its
points (scrambled Sobol points indexed by trial number, branch by branch in a conditional
space, :mod:`optuna_gpbandit._conditional`), and the start-up points a rarely tried branch
gets later.
"""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np

from optuna.trial import TrialState

from optuna_gpbandit._history import History
from optuna_gpbandit._space import EncodedSpace, sobol_row

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
    span every direction (a simplex). With five start-up points, runs of the real-HPO suite's
    decision trees stayed on the plateau of one-leaf trees for all their trials; ``d + 1``
    took them off it, and ``2 d`` spent too many trials on the design (docs/benchmarks.md,
    "The start-up design's length").
    """
    if n_startup_trials is not None:
        return n_startup_trials
    return min(max(MIN_STARTUP_TRIALS, int(dim) + 1), MAX_STARTUP_TRIALS)


BRANCH_STARTUP = 3
"""Trials a branch gets from a space-filling design before the model judges it [design
choice]: fitted on one or two points of a branch (often poor ones: random points of a branch
with a narrow good region), the GP calls the whole branch poor and never returns."""
MAX_STARTUP_BRANCHES = 8
"""Above this many branches (combinatorial structures: optional parameters per layer, say) no
branch gets start-up points: 3 trials for each would spend the budget, and the GP learns the
branches through the parameters they share."""


def branch_startup_point(space: Any, history: History, number: int,
                         seed: int) -> np.ndarray | None:
    """A space-filling point (:func:`spread_point`) in the branch tried least, if fewer than
    :data:`BRANCH_STARTUP` trials of it completed, failed or are pending in ``history`` (``None``
    otherwise, in a plain space, and with more than :data:`MAX_STARTUP_BRANCHES` branches):
    parallel workers do not all pile into one rarely tried branch."""
    if not space.conditional or len(space.branches) > MAX_STARTUP_BRANCHES:
        return None
    counts = _branch_counts(space, history)
    b = int(np.argmin(counts))
    if counts[b] >= BRANCH_STARTUP:
        return None
    return spread_point(space, history, number, seed, b, int(counts[b]))


def startup_stage(space: Any, history: History, number: int, seed: int, n_startup: int,
                  fresh: bool, start: int, centre: bool = False) -> np.ndarray | None:
    """The start-up point of trial ``number``, or ``None`` once the model takes over: while
    fewer than ``n_startup`` trials completed (in the history since ``start`` only where the
    reset asks for a ``fresh`` design), then for a branch tried fewer than
    :data:`BRANCH_STARTUP` times (:func:`branch_startup_point`). With ``centre`` (where the
    trust region is in force: :meth:`~optuna_gpbandit.search.AcquisitionSearch.for_space`),
    the design's first point is the centre (:func:`centre_point`) until a
    trial of the history holds it; not while an earlier-numbered trial that may take it is
    still choosing (parallel workers: one centre, not one each)."""
    done = len(history.completed)
    if not done or (done < n_startup and (start == 0 or fresh)):
        if centre and not _earlier_unresolved(history):
            x = centre_point(space, number, seed)
            if not _holds(space, history, x):
                return x
        return startup_point(space, history, number, seed)
    return branch_startup_point(space, history, number, seed)  # (a rare branch)


def centre_point(space: EncodedSpace, number: int, seed: int) -> np.ndarray:
    """The centre of the box: each numeric column at the middle of its encoded range (the
    middle valid value of a discrete one), each categorical one as trial ``number``'s Sobol
    point has it."""
    U = space.sobol_uniform(number, seed)
    U[0, ~space.is_categorical] = 0.5
    return space.from_uniform(U)[0]


def _holds(space: EncodedSpace, history: History, x: np.ndarray) -> bool:
    """Whether a completed, pending or failed trial of ``history`` has the numeric columns of
    ``x`` (its categorical ones aside)."""
    params = _tried(history)
    if not params:
        return False
    num = ~space.is_categorical
    X = space.encode_many(params)
    return bool(np.any(np.all(np.abs(X[:, num] - x[num]) <= 1e-9, axis=1)))


def startup_point(space: Any, history: History, number: int, seed: int) -> np.ndarray:
    """Start-up point of trial ``number``: the scrambled Sobol point of ``seed``; in a branching
    space, a :func:`spread_point` in that point's branch."""
    x = space.sobol_point(number, seed)
    if not space.conditional:
        return x
    b = int(space.branch_of(x[None, :])[0])
    return spread_point(space, history, number, seed, b, int(_branch_counts(space, history)[b]))


def spread_point(space: Any, history: History, number: int, seed: int,
                 branch: int, n_tried: int) -> np.ndarray:
    """A quasi-random point of ``branch`` whose own columns follow the branch's own scrambled
    Sobol sequence: its ``k``-th point, ``k`` = ``n_tried`` (the branch's completed, pending and
    failed trials, :func:`_branch_counts`) plus the running trials numbered before this one
    whose point is not known yet (two workers choosing at the same moment take different
    points); other columns: the trial's Sobol point of the whole space.

    Quasi-random points of the whole union space do not fill a branch: each call's space may
    have other columns (the union grows as branches are seen), so the branch's columns come
    from unrelated Sobol sequences and a few start-up points of a branch can cluster (seen in
    ``benchmarks/bench_conditional.py``; docs/conditional.md)."""
    br = space.branches[branch]
    k = n_tried + _earlier_unresolved(history)
    cols = np.flatnonzero(br.active)
    key = zlib.crc32(",".join(sorted(br.names)).encode())
    U = space.sobol_uniform(number, seed)
    U[0, cols] = sobol_row(cols.size, k, np.random.default_rng([seed, key]))
    return space._project(EncodedSpace.from_uniform(space, U), np.array([branch]), U)[0]


def _earlier_unresolved(history: History) -> int:
    """Running or waiting trials numbered before the current one with no known point."""
    known = {p.trial.number for p in history.pending + history.dead}
    return sum(t.state in (TrialState.RUNNING, TrialState.WAITING) and t.number not in known
               and t.number < history.current.number for t in history.all_trials)


def _branch_counts(space: Any, history: History) -> np.ndarray:
    """Completed, pending and failed trials of ``history`` per branch of ``space`` (a failed
    point is tried too: spreading away from completed points only would propose it again)."""
    params = _tried(history)
    if not params:
        return np.zeros(len(space.branches), dtype=int)
    return np.bincount(space.branch_of(space.encode_many(params)), minlength=len(space.branches))


def _tried(history: History) -> list[dict[str, Any]]:
    """The parameters of the completed, pending and failed trials of ``history``."""
    return ([t.params for t in history.completed]
            + [p.params for p in history.pending + history.failed])
