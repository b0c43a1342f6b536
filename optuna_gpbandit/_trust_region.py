"""Local exploration where the space is large: a trust region around the best trial (TuRBO,
Eriksson et al. 2019), replayed from the stored trials.

In many dimensions a few dozen trials cannot cover the space, and a global acquisition's
maximiser lands where the model knows least: on the faces and corners of the box (in a 30-D
study, GP-TS's chosen points had 20-40 % of their coordinates on a bound and its best trial
was a start-up point; issue 47). The region keeps each suggestion within a box around the best
observed point, of side ``L`` scaled per parameter by the fitted lengthscales (long where the
objective is flat); ``L`` doubles after ``success_tol`` consecutive improvements and halves
after ``failure_tol`` consecutive trials without one, and starts again at ``initial`` once it
falls below ``smallest``. The size is replayed from the completed trials in number order at
every call (stateless: a resumed study or another worker gets the same box).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from optuna_gpbandit._arguments import check_bool, check_int, check_number
from optuna_gpbandit._space import EncodedSpace


_EDGE = 1e-12  # encoded units: a value this far outside the box still counts as inside


@dataclass(frozen=True)
class Box:
    """Bounds of the encoded numeric columns (categorical columns are unbounded: ``0, 1``)."""

    lo: np.ndarray
    hi: np.ndarray
    side: float  # the replayed L

    def admits(self, i: int | np.ndarray, values: np.ndarray) -> np.ndarray:
        """Mask of ``values`` of column(s) ``i`` inside the box (up to rounding)."""
        return (values >= self.lo[i] - _EDGE) & (values <= self.hi[i] + _EDGE)

    def contains(self, X: np.ndarray, numeric: np.ndarray) -> np.ndarray:
        """Mask of the rows of ``X`` whose ``numeric`` columns are all inside the box."""
        X = np.atleast_2d(X)
        cols = np.flatnonzero(numeric)
        return np.all(self.admits(cols, X[:, cols]), axis=1)


@dataclass(frozen=True, kw_only=True)
class TrustRegion:
    """The trust region of :class:`~optuna_gpbandit.AcquisitionSearch` (``trust_region=``).

    Parameters
    ----------
    min_dim
        Numeric parameters from which the region applies (default 10): below it the whole
        space is searched.
    initial, smallest, largest
        The side ``L`` (in units of the encoded cube, scaled per parameter by its lengthscale
        over their geometric mean) at the start, below which it starts again, and at most
        (defaults 0.8, 0.5^7, 1.6: TuRBO's).
    success_tol, failure_tol
        Consecutive improvements that double ``L`` (default 3) and consecutive trials without
        one that halve it (default 4; ``None``: the number of numeric parameters, at least 4,
        TuRBO's rule).
    start_at_centre
        Where the region applies, the start-up design's first point is the centre of the box
        (default ``True``): every numeric parameter at the midpoint of its range (of its
        logarithm on a log scale; the middle valid value of a discrete one), the categorical
        ones as the design draws them. In many dimensions every quasi-random point is far from
        any interior optimum (each coordinate is off by a third of the range on average); the
        centre is the one point near all of them. ``False``: the quasi-random design only (the
        version before).
    """

    min_dim: int = 10
    initial: float = 0.8
    smallest: float = 0.5 ** 7
    largest: float = 1.6
    success_tol: int = 3
    failure_tol: int | None = 4
    start_at_centre: bool = True

    def __post_init__(self) -> None:
        check_int("min_dim", self.min_dim, 1)
        for name in ("initial", "smallest", "largest"):
            check_number(name, getattr(self, name), strict=True)
        check_int("success_tol", self.success_tol, 1)
        if self.failure_tol is not None:
            check_int("failure_tol", self.failure_tol, 1)
        check_bool("start_at_centre", self.start_at_centre)

    def applies(self, numeric: np.ndarray) -> bool:
        """Whether the region applies to a space whose numeric columns are ``numeric``."""
        return int(np.sum(numeric)) >= self.min_dim

    def side(self, y: np.ndarray, n_startup: int, d: int) -> float:
        """``L`` after the trials of oriented values ``y`` (trial-number order; the first
        ``n_startup`` are the design, not counted)."""
        fail_tol = self.failure_tol or max(4, d)
        L, succ, fail = self.initial, 0, 0
        if y.size == 0:
            return L
        k0 = min(max(n_startup, 1), y.size)
        best, lo, hi = float(np.max(y[:k0])), float(np.min(y[:k0])), float(np.max(y[:k0]))
        for v in y[k0:]:
            lo, hi = min(lo, float(v)), max(hi, float(v))
            if v > best + 1e-3 * (hi - lo):
                succ, fail = succ + 1, 0
            else:
                succ, fail = 0, fail + 1
            best = max(best, float(v))
            if succ >= self.success_tol:
                L, succ = min(2.0 * L, self.largest), 0
            elif fail >= fail_tol:
                L, fail = L / 2.0, 0
                if L < self.smallest:
                    L = self.initial
        return L

    def box(self, X: np.ndarray, y: np.ndarray, numbers: np.ndarray, lengthscales: np.ndarray,
            numeric: np.ndarray, n_startup: int) -> Box | None:
        """The box of the observed points ``X`` with oriented values ``y`` and trial
        ``numbers`` (``None`` below ``min_dim`` numeric parameters or with no observation)."""
        if not self.applies(numeric) or y.size == 0:
            return None
        d = int(numeric.sum())
        order = np.argsort(numbers, kind="stable")
        L = self.side(y[order], n_startup, d)
        centre = X[int(np.argmax(y))]
        w = np.ones(X.shape[1])
        ls = np.asarray(lengthscales, dtype=float)[numeric]
        w[numeric] = ls / math.exp(float(np.mean(np.log(ls))))
        half = 0.5 * L * w
        lo = np.where(numeric, np.clip(centre - half, 0.0, 1.0), 0.0)
        hi = np.where(numeric, np.clip(centre + half, 0.0, 1.0), 1.0)
        return Box(lo, hi, L)


def in_force(region: TrustRegion | None, space: EncodedSpace) -> TrustRegion | None:
    """``region`` if it applies to ``space`` (``min_dim`` numeric parameters or more, no
    branches), else ``None``: the one place that decides both the box the maximiser stays in
    and the centre start."""
    if region is None or space.conditional or not region.applies(~space.is_categorical):
        return None
    return region
