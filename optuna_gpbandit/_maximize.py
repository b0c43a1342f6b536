"""Acquisition maximiser over an encoded search space.

1. A fully discrete space with at most ``n_candidates`` points is searched exhaustively.
2. Otherwise: scrambled-Sobol candidates (valid values on discrete columns) plus warm starts
   (e.g. the best observed points) are scored in one batch; the best ``n_local_search`` distinct
   ones are polished by alternating L-BFGS-B on the continuous columns (analytic gradient) with a
   line search over the valid values of each discrete column, until neither improves. Wide
   numeric discrete columns (``space.is_relaxed``, more than
   :data:`~optuna_gpbandit._space.RELAX_THRESHOLD` values) join the continuous ones in L-BFGS-B
   (continuous relaxation); the result is snapped onto the grid and scored again.

Ties among candidates are broken uniformly with the trial's random stream. Points within ``tol``
(max over columns, encoded units; :attr:`AcquisitionSearch.min_distance`) of an ``exclude`` row
(failed points, points not worth evaluating again) and near the points of trials still pending
are never returned while anything else is left: two workers never evaluate one point at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Protocol

import numpy as np

from optuna_gpbandit._conditional import is_active
from optuna_gpbandit._repeats import SAME_POINT_TOL
from optuna_gpbandit._space import RELAX_THRESHOLD, EncodedSpace
from optuna_gpbandit.acquisition.thompson import argmax_random_tie

_MAX_LINE_VALUES = 64
_MAX_ROUNDS = 4


class Acquisition(Protocol):
    def values(self, X: np.ndarray) -> np.ndarray: ...

    def value_grad(self, x: np.ndarray) -> tuple[float, np.ndarray]: ...


_EDGE = 1e-12  # encoded units: a value this far outside the box still counts as inside


@dataclass(frozen=True)
class Box:
    """Bounds of the encoded numeric columns (categorical columns are unbounded: ``0, 1``)."""

    lo: np.ndarray
    hi: np.ndarray
    side: float  # the replayed L
    branch: np.ndarray | None = None  # the active columns of the branch points keep to, or None

    def admits(self, i: int | np.ndarray, values: np.ndarray) -> np.ndarray:
        """Mask of ``values`` of column(s) ``i`` inside the box (up to rounding); a column's
        inactive code is admitted, as the point's branch does not have the parameter."""
        return ~is_active(values) | (
            (values >= self.lo[i] - _EDGE) & (values <= self.hi[i] + _EDGE))

    def contains(self, X: np.ndarray, numeric: np.ndarray) -> np.ndarray:
        """Mask of the rows of ``X`` whose ``numeric`` columns are all inside the box (and
        that lie in its ``branch``, if it keeps to one)."""
        X = np.atleast_2d(X)
        cols = np.flatnonzero(numeric)
        inside = np.all(self.admits(cols, X[:, cols]), axis=1)
        if self.branch is not None:
            inside &= np.all(is_active(X) == self.branch[None, :], axis=1)
        return inside


def _line_values(space: EncodedSpace, i: int, current: float) -> np.ndarray:
    """Valid values of discrete column ``i`` to try: all of them, or a spread plus neighbours.

    Columns with at most :data:`RELAX_THRESHOLD` values (and categorical ones) are enumerated;
    wider ones are addressed by grid index: the 9 indices around ``current`` and a spread
    uniform in encoded units (so log-scaled columns are spread over their decades). Returns at
    most ``_MAX_LINE_VALUES`` sorted, distinct encoded values.
    """
    col = space.columns[i]
    n = col.size
    near: np.ndarray
    spread: np.ndarray
    if col.categorical or n <= RELAX_THRESHOLD:
        vals = space.column_values(i)
        if vals.size <= _MAX_LINE_VALUES:
            return vals
        j = int(np.argmin(np.abs(vals - current)))
        near = np.arange(max(j - 4, 0), min(j + 5, vals.size))
        spread = np.linspace(0, vals.size - 1, _MAX_LINE_VALUES - near.size).round().astype(int)
        return vals[np.unique(np.concatenate([near, spread]))]
    k = float(col.index_of(np.asarray(current)))
    near = np.arange(max(k - 4, 0), min(k + 5, n), dtype=float)
    spread = col.index_of(np.linspace(0.0, 1.0, _MAX_LINE_VALUES - near.size))
    return np.unique(space.column_values_at(i, np.unique(np.concatenate([near, spread]))))


def _best_rounding(acq: Acquisition, space: EncodedSpace, x: np.ndarray) -> np.ndarray:
    """``x`` snapped onto the grid, each relaxed discrete column then moved to whichever of
    its grid neighbours (one step down, none, one step up) scores best: plain rounding of a
    relaxed optimum that sits on an edge (e.g. a constraint boundary between two integers)
    can land one step on the wrong side."""
    x = space.snap(x)
    for i in np.flatnonzero(space.is_relaxed & ~space.is_continuous & space.movable(x)):
        col = space.columns[i]
        idx = col.index_of(x[i])
        X = np.repeat(x[None, :], 3, axis=0)
        X[:, i] = col.values_at(np.array([idx - 1, idx, idx + 1]))
        x = X[int(np.argmax(acq.values(X)))].copy()
    return x


def _local_search(acq: Acquisition, space: EncodedSpace, x0: np.ndarray, f0: float,
                  box: Box | None = None) -> tuple[np.ndarray, float]:
    from scipy.optimize import minimize
    x, fx = x0.copy(), f0
    free = space.movable(x0)  # in a conditional space: the columns of x0's branch
    cont = np.flatnonzero(space.is_relaxed & free)  # continuous and relaxed wide discrete ones
    disc = np.flatnonzero(~space.is_relaxed & free)
    rounded = bool(np.any(space.is_relaxed & ~space.is_continuous & free))
    for _ in range(_MAX_ROUNDS):
        improved = False
        if cont.size:

            def neg(z: np.ndarray) -> tuple[float, np.ndarray]:
                xx = x.copy()
                xx[cont] = z
                v, g = acq.value_grad(xx)
                return -v, -g[cont]

            lo, hi = ((np.zeros(cont.size), np.ones(cont.size)) if box is None
                      else (box.lo[cont], box.hi[cont]))
            res = minimize(neg, np.clip(x[cont], lo, hi), jac=True, method="L-BFGS-B",
                           bounds=list(zip(lo, hi)), options={"maxiter": 100})
            if np.all(np.isfinite(res.x)) and -res.fun > fx + 1e-12 * (1 + abs(fx)):
                xn = x.copy()
                xn[cont] = np.clip(res.x, lo, hi)
                if rounded:  # the relaxed optimum, rounded onto the grid, must still improve
                    xn = _best_rounding(acq, space, xn)
                fn = float(acq.values(xn[None, :])[0])
                if not rounded or fn > fx + 1e-12 * (1 + abs(fx)):
                    x, fx = xn, fn
                    improved = True
        for i in disc:
            vals = space.admissible_values(int(i), x, _line_values(space, int(i), x[i]))
            if box is not None and not space.is_categorical[i]:
                vals = vals[box.admits(int(i), vals)]
            if not vals.size:
                continue
            X = np.repeat(x[None, :], vals.size, axis=0)
            X[:, i] = vals
            scores = acq.values(X)
            j = int(np.argmax(scores))
            if scores[j] > fx + 1e-12 * (1 + abs(fx)):
                x, fx = X[j].copy(), float(scores[j])
                improved = True
        if not improved or disc.size == 0:
            break
    return x, fx


_BRANCH_DRAWS = 16  # at most this many times n_candidates drawn to find those of a branch


def _box_candidates(space: EncodedSpace, box: Box, n: int, seed: int) -> np.ndarray:
    """``n`` quasi-random candidates in ``box``; where it keeps to a branch, the first ``n``
    of a longer sequence that lie in the branch (the local searches keep each start's branch,
    so the candidates decide it), as many as the box admits of ``_BRANCH_DRAWS * n``, or, if
    none does (a rare branch, few candidates), the ``n`` of every branch."""
    if box.branch is None:
        return space.sobol(n, seed=seed, lo=box.lo, hi=box.hi)
    m = n
    while True:
        C = space.sobol(m, seed=seed, lo=box.lo, hi=box.hi)
        inside = C[box.contains(C, ~space.is_categorical)]
        if inside.shape[0] >= n or m >= _BRANCH_DRAWS * n:
            return inside[:n] if inside.size else C[:n]
        m *= 2


def maximize_acquisition(
    acq: Acquisition,
    space: EncodedSpace,
    rng: np.random.Generator,
    *,
    n_candidates: int = 1024,
    n_local_search: int = 5,
    warm_starts: np.ndarray | None = None,
    exclude: np.ndarray | Exclusion | None = None,
    tol: float = SAME_POINT_TOL,
    box: Box | None = None,
) -> tuple[np.ndarray, float]:
    """Return the encoded maximiser of ``acq`` over ``space`` and its value.

    ``exclude``: encoded points (e.g. of pending trials) that the result must stay ``tol`` away
    from (max over columns); ignored if every candidate is that close to one of them. ``box``:
    a trust region (:mod:`optuna_gpbandit.search`) the candidates, warm starts and
    local searches stay in (a fully enumerated space ignores it).
    """
    full = space.enumerate(n_candidates)
    if full is not None:
        scores = _masked(acq.values(full), full, exclude, tol)
        i = argmax_random_tie(scores, rng)
        return full[i], float(scores[i])

    seed = int(rng.integers(2**31 - 1))
    C = (space.sobol(n_candidates, seed=seed) if box is None
         else _box_candidates(space, box, n_candidates, seed))
    if warm_starts is not None and len(warm_starts):
        W = space.snap(warm_starts)
        if box is not None:
            W = W[box.contains(W, ~space.is_categorical)]
        C = np.vstack([C, W])
    scores = _masked(acq.values(C), C, exclude, tol)
    i_best = argmax_random_tie(scores, rng)
    best_x, best_f = C[i_best], float(scores[i_best])

    order = np.argsort(-scores, kind="stable")
    starts: list[int] = [i_best]
    for j in order:
        if len(starts) >= n_local_search:
            break
        if all(np.any(C[j] != C[s]) for s in starts):
            starts.append(int(j))
    for j in starts[: max(n_local_search, 0)]:
        x, fx = _local_search(acq, space, C[j], float(scores[j]), box)
        x = space.snap(x)
        if fx > best_f and not near_any(x[None, :], exclude, tol)[0]:
            best_x, best_f = x, fx
    return space.snap(best_x), best_f


class Exclusion:
    """Points to keep away from: ``points`` by ``tol`` (as :func:`near_any`), ``apart`` by
    ``radius`` (at least ``tol``), and a region to avoid.

    Parameters
    ----------
    points
        Encoded points (e.g. of failed trials).
    region
        ``region(X) -> mask`` of rows inside a region to avoid (e.g. where trials fail), or
        ``None``.
    apart, radius
        Encoded points (of pending trials) and the distance (max over columns) to keep from
        them; :meth:`relax` halves ``radius`` while it would leave nothing.
    """

    def __init__(self, points: np.ndarray, region: Callable[[np.ndarray], np.ndarray] | None,
                 apart: np.ndarray | None = None, radius: float = 0.0):
        self.points, self.region = points, region
        self.apart = points[:0] if apart is None else apart
        self.radius = float(radius)

    def __len__(self) -> int:  # "anything to exclude?"
        return len(self.points) + len(self.apart) + (self.region is not None)

    def mask(self, X: np.ndarray, tol: float) -> np.ndarray:
        near = near_any(X, self.points, tol) | near_any(X, self.apart, max(tol, self.radius))
        return near if self.region is None else near | self.region(X)

    def relax(self, X: np.ndarray, tol: float) -> None:
        """Halve ``radius`` (down to ``tol``) while it leaves none of the rows of ``X``."""
        while self.radius > tol and len(self.apart) and self.mask(X, tol).all():
            self.radius /= 2.0


def union_regions(
    *regions: Callable[[np.ndarray], np.ndarray] | None,
) -> Callable[[np.ndarray], np.ndarray] | None:
    """One ``region(X) -> mask`` for every given region (``None`` entries skipped)."""
    given = [r for r in regions if r is not None]
    if len(given) <= 1:
        return given[0] if given else None
    return lambda X: np.logical_or.reduce([r(X) for r in given])


def near_any(
    X: np.ndarray, points: np.ndarray | Exclusion | None, tol: float = SAME_POINT_TOL
) -> np.ndarray:
    """Mask of the rows of ``X`` within ``tol`` (max over columns) of some row of ``points``
    (or, for an :class:`Exclusion`, also inside its region)."""
    if isinstance(points, Exclusion):
        return points.mask(X, tol)
    if points is None or len(points) == 0:
        return np.zeros(X.shape[0], dtype=bool)
    near = np.zeros(X.shape[0], dtype=bool)
    for p in np.atleast_2d(points):  # few pending points: a loop keeps memory at O(n d)
        near |= np.max(np.abs(X - p), axis=1) < tol
    return near


def allowed(X: np.ndarray, exclude: np.ndarray | Exclusion | None,
            tol: float = SAME_POINT_TOL) -> np.ndarray:
    """Mask of the rows of ``X`` at least ``tol`` away from every ``exclude`` row; all rows if
    that would leave none."""
    if isinstance(exclude, Exclusion):
        exclude.relax(X, tol)
    near = near_any(X, exclude, tol)
    return ~near if near.any() and not near.all() else np.ones(X.shape[0], dtype=bool)


def _masked(scores: np.ndarray, X: np.ndarray, exclude: np.ndarray | Exclusion | None,
            tol: float) -> np.ndarray:
    """``scores`` with the rows :func:`allowed` leaves out at ``-inf``."""
    return np.where(allowed(X, exclude, tol), scores, -np.inf)
