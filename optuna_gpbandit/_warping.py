"""Output warping: the poor half of the targets, compressed by rank.

Tuning losses have long poor tails: a log loss that blows up for a 1-neighbour classifier, the
chance-level error of an SVM whose ``gamma`` is off, a diverging network, Branin's corners. A GP
on the raw values spends its amplitude on those few points: it models a cliff next to them and
a flat, deep plateau where they cluster, and the differences between good configurations, which
decide the optimum, become small against the fitted amplitude.

The warp [design choice, after Google Vizier's half-rank warping] leaves the better half of the
(oriented, larger-is-better) standardised targets as it is and lifts each value ``z`` of the
poorer half to at least the normal quantile of its rank:
``w = max(z, m + s * Phi^-1(F(z)))``, with ``m`` the median, ``F`` the mid-rank empirical
distribution function, and ``s`` the root mean square distance of the better half from ``m``
(at least :data:`SPREAD_FLOOR` times that of all values). So a poor tail is pulled up to where
a normal sample with the good values' spread would put it, the order of all values is kept
(ties stay tied), and a poor half no longer-tailed than that is left as it is: smooth
objectives whose long tail is the good one (Hartmann) keep their values.

``m``, ``s`` and ``F`` come from a space-filling subset of the observations (farthest points,
:func:`reference_size` of them), not from all: a run that exploits puts most of its trials near
its best point, the median of all trials then lies among them, and the whole explored domain
would be lifted to near the optimum, an invitation to explore it again (docs/benchmarks.md,
"Output warping's reference subset").

The warped targets are standardised again. :class:`Warp` maps further values (imputed labels of
failed trials, a censoring bound) forward and model values back (records), piecewise linearly
through the observed pairs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MIN_OBSERVED = 5  # fewer real observations: no warping (no halves to speak of)
MAX_REFERENCE = 64  # at most this many observations set the warp's statistics
SPREAD_FLOOR = 0.5
"""The spread the poor half is matched to is at least this fraction of the root mean square
distance of all reference values from their median [design choice]: where most good values
are nearly equal (a plateau of equal CV errors at the top), the better half's own spread would
be about 0 and every poor value would be lifted to the median."""


@dataclass(frozen=True)
class Warp:
    """A fitted warp: knots ``z`` (standardised targets, increasing) -> ``w`` (warped and
    standardised again); identity-shaped (slope ``1 / sd``) above the median."""

    z: np.ndarray
    w: np.ndarray
    median: float
    mean: float
    sd: float
    tail_slope: float  # slope below the lowest knot (the poor half's mean compression)
    n_lifted: int  # observed values the warp lifted

    def forward(self, z: np.ndarray) -> np.ndarray:
        """Standardised targets -> the model's units."""
        z = np.asarray(z, dtype=float)
        lifted = np.interp(z, self.z, self.w)
        below = z < self.z[0]
        lifted[below] = self.w[0] + (z[below] - self.z[0]) * self.tail_slope
        above = z >= self.median
        lifted[above] = z[above]
        return (lifted - self.mean) / self.sd

    def inverse(self, w: np.ndarray) -> np.ndarray:
        """The model's units -> standardised targets (the inverse of :meth:`forward`)."""
        u = np.asarray(w, dtype=float) * self.sd + self.mean
        out = np.interp(u, self.w, self.z)
        below = u < self.w[0]
        out[below] = self.z[0] + (u[below] - self.w[0]) / self.tail_slope
        above = u >= self.median
        out[above] = u[above]
        return out


def reference_size(n: int) -> int:
    """How many space-filling observations the warp's statistics come from (of ``n``)."""
    return int(min(n, max(MIN_OBSERVED, min(MAX_REFERENCE, n // 3))))


def fit(z: np.ndarray, reference: np.ndarray | None = None) -> Warp | None:
    """The warp of the standardised observed targets ``z`` (larger is better), or ``None`` when
    it would change nothing or cannot be estimated (fewer than :data:`MIN_OBSERVED` values,
    equal values).

    ``reference``: indices of the observations the median, the spread and the ranks come from
    (a space-filling subset, :func:`reference_size`; default all). A run that exploits puts most
    of its trials near the best point: the median of all trials then lies among them, their
    spread is tiny, and the whole explored domain would be lifted to near the optimum (an
    invitation to explore it again); the space-filling subset keeps the statistics those of the
    objective over the explored domain."""
    from scipy.special import ndtri

    z = np.asarray(z, dtype=float)
    if z.size < MIN_OBSERVED:
        return None
    r = z if reference is None else z[np.asarray(reference)]
    med = float(np.median(r))
    good = r[r >= med]
    spread = max(float(np.sqrt(np.mean((good - med) ** 2))),
                 SPREAD_FLOOR * float(np.sqrt(np.mean((r - med) ** 2))))
    if not spread > 0:
        return None
    keys, counts = np.unique(r, return_counts=True)
    cdf = (np.cumsum(counts) - 0.5 * counts) / r.size  # mid-rank ECDF at the reference values
    lo = float(keys[0])
    # Ranks at most 1/2 below the median: an observation outside the reference just below a
    # median shared by many reference values would interpolate a rank above 1/2 there.
    q = np.minimum(np.interp(z, keys, cdf), 0.5)
    w = np.where(z < med, np.maximum(z, med + spread * ndtri(q)), z)
    w_lo = max(lo, med + spread * float(ndtri(cdf[0]))) if lo < med else lo
    slope = float(min(max((med - w_lo) / (med - lo), 1e-6), 1.0)) if med > lo else 1.0
    below = z < lo  # beyond the reference's lowest value: on linearly from it
    w[below] = w_lo + (z[below] - lo) * slope
    n_lifted = int(np.sum(w > z))
    if n_lifted == 0:
        return None
    knots_z, first = np.unique(z, return_index=True)  # ties share their warped value
    mean, sd = float(w.mean()), float(w.std())
    if not sd > 0:
        return None
    return Warp(z=knots_z, w=w[first], median=med, mean=mean, sd=sd, tail_slope=slope,
                n_lifted=n_lifted)
