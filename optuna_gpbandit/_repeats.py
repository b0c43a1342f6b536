"""Points not worth asking again, repeats and ties: what the maximiser refuses and what the
samplers say about it.

Points count as the same when they fall in one cell of a :data:`SAME_POINT_TOL` grid (encoded
units, max over columns). :func:`exhausted_points` are refused by the maximiser
(:mod:`optuna_gpbandit._maximize`) within :attr:`AcquisitionSearch.min_distance
<optuna_gpbandit.AcquisitionSearch.min_distance>`; :func:`failed_polish` decides when
:attr:`~optuna_gpbandit.AcquisitionSearch.polish_distance` stops.
"""

from __future__ import annotations

import numpy as np

SAME_POINT_TOL = 1e-3
"""Encoded units (max over columns): the grid on which repeats and ties are counted, the
distance within which two workers' points are one point, and the default
:attr:`AcquisitionSearch.min_distance`."""


SAME_CONFIGURATION = 1e-9
"""Encoded units: rows in one cell of this grid (rounded) are one configuration (the encoding
of a decoded value may differ from the value's own encoding by a rounding)."""


def exhausted_points(X: np.ndarray, y: np.ndarray, deterministic: bool,
                     tol: float = SAME_POINT_TOL) -> np.ndarray:
    """Observed points (rows of ``X`` with values ``y``) not worth evaluating again: every row
    of each such point's ``tol`` cell, so that none of them is asked again (the maximiser refuses
    proposals within :attr:`AcquisitionSearch.min_distance` of each).

    A deterministic objective: every evaluated point (a repeat teaches nothing). A noisy one:
    the points evaluated at least twice with identical values (the objective is deterministic
    there, whatever the fitted noise says); other repeats are the bandit's own choice (a noisy
    optimum merits many looks, and each look shrinks its confidence width). Points count as the
    same when they fall in one cell of a ``tol`` grid (encoded units). A configuration asked
    again with its very value is done even where another configuration in its cell gave
    another value (a rugged objective, not a noisy one: docs/benchmarks.md, "Repeated
    configurations"), unless some configuration in the cell gave two values.
    """
    if X.shape[0] == 0 or deterministic:
        return X
    cells = np.floor(X / tol)
    _, first, inverse, counts = np.unique(cells, axis=0, return_index=True,
                                          return_inverse=True, return_counts=True)
    inverse = inverse.ravel()
    same = (counts >= 2) & _equal_values(y, inverse, first.size)
    # The very same configuration asked again with the very same value: deterministic there,
    # even where a distinct configuration in its cell gave another value (a rugged objective
    # looks noisy at the cell's scale; a noisy one gives other values at one configuration).
    # One configuration: rows in one SAME_CONFIGURATION cell (a decoded log-scale value's encoding
    # may differ from the first encoding by a rounding), as found_deterministic counts them.
    p_first, p_inverse, p_counts = _configurations(X)
    p_same = _equal_values(y, p_inverse, p_first.size)
    cell_of = inverse[p_first]
    repeated = p_counts >= 2
    settled = np.zeros(first.size, dtype=bool)
    settled[cell_of[repeated & p_same]] = True
    noisy = np.zeros(first.size, dtype=bool)
    noisy[cell_of[repeated & ~p_same]] = True
    return X[((same | settled) & ~noisy)[inverse]]


def found_deterministic(X: np.ndarray, y: np.ndarray, tol: float = SAME_POINT_TOL,
                        quiet: bool = True) -> bool:
    """Whether the objective is to be taken as deterministic: some configuration was asked
    again (two rows of ``X`` within ``tol`` of each other, max over the encoded columns) and
    gave its very value, or, if the model reads the objective as ``quiet`` (its fitted noise
    small), gave any value; and no configuration asked twice (rows in one
    :data:`SAME_CONFIGURATION` cell) gave two values. While this is undecided, the samplers ask a
    repeat at the very configuration (:func:`as_repeat`).

    What a repeat buys a noisy objective (another look at a promising point) it cannot buy a
    deterministic one; from then on every evaluated point is done (:func:`exhausted_points`
    with ``deterministic=True``), as if the user had said ``deterministic_objective=True``.
    Only identical configurations can show noise: two values within ``tol`` but not at one
    configuration may be a smooth or rugged objective's (a creeping search, a step taken
    again), and on a continuous parameter a point ``tol`` away teaches the model what a
    repeat would; but a noisy objective that the model reads as noisy keeps its repeats
    until one gives its very value (on one parameter, long runs of a noisy objective put
    their trials ``tol`` apart near the optimum, and refusing them pushed the search off
    it)."""
    if X.shape[0] < 2:
        return False
    from scipy.spatial import cKDTree

    pairs = cKDTree(X).query_pairs(tol, p=np.inf, output_type="ndarray")
    if pairs.size == 0:
        return False
    a, b = y[pairs[:, 0]], y[pairs[:, 1]]
    equal = np.abs(a - b) <= 1e-12 * np.maximum(1.0, np.abs(a))  # as _equal_values
    # a configuration that gave two values is noise: pairs cover every identical pair, since
    # identical rows are within any tolerance
    configuration = _configurations(X)[1]
    identical = configuration[pairs[:, 0]] == configuration[pairs[:, 1]]
    return (quiet or bool(equal.any())) and not bool(np.any(identical & ~equal))


def as_repeat(x: np.ndarray, X: np.ndarray, tol: float = SAME_POINT_TOL) -> np.ndarray:
    """``x``, or the row of ``X`` nearest to it if one lies within ``tol`` (max over the encoded
    columns): a proposal that would ask a configuration again asks that very configuration.

    Under ``deterministic_objective=None`` a repeat is what tells a deterministic objective
    from a noisy one (:func:`found_deterministic`), and only an identical configuration tells
    it for sure: a point ``tol`` away gives another value on a rugged deterministic objective
    too (bbob's Weierstrass and Katsuura functions at ``1e-3``), which left the question open
    for a second repeat and a third. Asked at the very configuration, the first repeat settles
    it: its very value (deterministic: nothing is asked again) or another one (noisy: the
    bandit keeps its repeats, each another look at the same point). The move is at most
    ``tol``, below what the model resolves."""
    if X.shape[0] == 0:
        return x
    d = np.max(np.abs(X - x), axis=1)
    j = int(np.argmin(d))
    return X[j].copy() if d[j] < tol else x


POLISH_PATIENCE = 3
"""Failed polishing trials (within ``min_distance`` of an earlier point, no improvement) since
the best value last improved after which :attr:`AcquisitionSearch.polish_distance` stops."""


def failed_polish(X: np.ndarray, y: np.ndarray, tol: float) -> int:
    """Trials after the last improvement of the best value (rows of ``X`` in trial order, values
    ``y``, larger is better) that lay within ``tol`` (max over columns) of an earlier row: tries
    to polish the optimum that did not pay."""
    if y.size == 0:
        return 0
    before = np.concatenate([[-np.inf], np.maximum.accumulate(y)[:-1]])
    last = int(np.flatnonzero(y > before)[-1])
    return sum(bool(np.any(np.max(np.abs(X[:i] - X[i]), axis=1) < tol))
               for i in range(last + 1, y.size))


def _configurations(X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct configurations among the rows of ``X`` (one :data:`SAME_CONFIGURATION` grid
    cell each, rounded): the first row of each, each row's configuration and each's count."""
    first, inverse, counts = np.unique(np.round(X / SAME_CONFIGURATION), axis=0,
                                       return_index=True, return_inverse=True,
                                       return_counts=True)[1:]
    return first, inverse.ravel(), counts


def _equal_values(y: np.ndarray, group: np.ndarray, n: int) -> np.ndarray:
    """Per group (``group[i]`` of row ``i``, ``0 .. n-1``): whether all its values are equal."""
    lo = np.full(n, np.inf)
    hi = np.full(n, -np.inf)
    np.minimum.at(lo, group, y)
    np.maximum.at(hi, group, y)
    return hi - lo <= 1e-12 * np.maximum(1.0, np.abs(hi))


def _first_rows(X: np.ndarray, tol: float) -> np.ndarray:
    """Sorted indices of the first row of each distinct point of ``X`` (``tol`` grid cell)."""
    return np.sort(np.unique(np.floor(X / tol), axis=0, return_index=True)[1])


def n_repeats(X: np.ndarray, tol: float = SAME_POINT_TOL) -> int:
    """Rows of ``X`` that repeat an earlier row's point (same ``tol`` grid cell)."""
    if X.shape[0] == 0:
        return 0
    return int(X.shape[0] - _first_rows(X, tol).size)


def tied_values(X: np.ndarray, y: np.ndarray,
                tol: float = SAME_POINT_TOL) -> tuple[int, int, int, int]:
    """Ties of the values ``y`` at distinct points of ``X`` (``tol`` grid cells; a repeated
    point counts once, with its first value): ``(tied, points, largest, row)``, the points
    whose value an earlier distinct point already gave, the distinct points, the size of the
    largest group of equal values and a row of ``X`` in it."""
    if X.shape[0] == 0:
        return 0, 0, 0, 0
    first = _first_rows(X, tol)
    _, inverse, counts = np.unique(y[first], return_inverse=True, return_counts=True)
    g = int(np.argmax(counts))
    row = int(first[np.flatnonzero(inverse.ravel() == g)[0]])
    return int(first.size - counts.size), int(first.size), int(counts[g]), row
