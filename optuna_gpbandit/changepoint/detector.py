"""The detector: the test on every even-length tail of the exploration sequence
(:func:`scan`) and the target normalisation of one scan."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterator, Sequence

import numpy as np

from optuna_gpbandit.changepoint._checks import _check_int, _check_positive
from optuna_gpbandit.changepoint.settings import CPDSettings
from optuna_gpbandit.changepoint.statistic import Domain, _check_xy, _unit_domain, _window_alpha
from optuna_gpbandit.gp.kernels import Kernel

_MIN_SEGMENT_FOR_SCALE = 5


def tail_windows(
    n_uniform: int, max_half_window: int | None = None
) -> Iterator[tuple[int, slice, slice]]:
    """The windows tested after the ``n_uniform``-th exploration point, in the scan's order.

    Yields ``(n, older, newer)`` for ``n = 1 .. floor(n_uniform / 2)`` (capped at
    ``max_half_window``): the tail of the last ``2n`` points, split at its middle, the older half
    first (``U[-2n:-n]`` and ``U[-n:]`` as index slices of ``U``).
    """
    m = _check_int("n_uniform", n_uniform)
    n_max = m // 2
    if max_half_window is not None:
        n_max = min(n_max, _check_int("max_half_window", max_half_window, 1))
    for n in range(1, n_max + 1):
        yield n, slice(m - 2 * n, m - n), slice(m - n, m)


@dataclass(frozen=True)
class Detection:
    """A firing window of :func:`scan`.

    Attributes
    ----------
    half_window
        ``n``: the window is the last ``2n`` exploration points.
    statistic
        ``Delta^2`` of that window (in standardised units if the scan standardised).
    threshold
        ``theta_n`` it exceeded.
    trigger_index
        Index in the exploration sequence of the point whose scan fired (its last point). The
        paper discards it too: the new exploration sequence starts at ``trigger_index + 1``.
    """

    half_window: int
    statistic: float
    threshold: float
    trigger_index: int


def scan(
    X_u: np.ndarray,
    y_u: np.ndarray,
    settings: CPDSettings | None = None,
    domain: Domain | None = None,
    *,
    shift: float = 0.0,
    scale: float = 1.0,
) -> Detection | None:
    """Test every even-length tail of the exploration sequence, smallest first (Algorithm 2,
    lines 10-15); return the first firing window or ``None``.

    Parameters
    ----------
    X_u, y_u
        The exploration (uniform) points since the last reset, in time order, ``(m, d)`` and
        ``(m,)``, targets oriented for maximisation (the test is sign-invariant).
    settings
        Detector settings (``None``: defaults).
    domain
        Integration points; ``None``: :meth:`Domain.unit_cube`.
    shift, scale
        The targets are ``(y_u - shift) / scale`` for every window (see :func:`normalisation`;
        the same constants for both halves, so a level shift stays visible).

    Returns
    -------
    Detection or None
    """
    s = CPDSettings() if settings is None else settings
    X_u, y_u = _check_xy("scan", X_u, y_u, None if domain is None else domain.d)
    shift = float(shift)
    if not math.isfinite(shift):
        raise ValueError(f"shift must be finite, got {shift!r}.")
    scale = _check_positive("scale", scale)
    m = X_u.shape[0]
    if m < 2 or s.never_fires:
        return None
    d = X_u.shape[1]
    dom = _unit_domain(d) if domain is None else domain
    p = s.gp_params(d)
    windows = list(tail_windows(m, s.max_half_window))
    lo = m - 2 * windows[-1][0]  # the longest tail tested
    y_t = (y_u[lo:] - shift) / scale
    X_t = X_u[lo:]
    kernel = Kernel(p.kernel, p.lengthscales, p.scale, dom.is_categorical)
    KzT = kernel(X_t, dom.points)  # (tail, M): one kernel evaluation per scan
    K_t = kernel(X_t, X_t)  # Gram matrix of the tail, sliced by every window
    for n, older, newer in windows:
        o = slice(older.start - lo, older.stop - lo)
        w = slice(newer.start - lo, newer.stop - lo)
        ridge = s.ridge(n, d)
        a1 = _window_alpha(K_t, o, X_t, y_t, p, ridge, dom.is_categorical)
        a2 = _window_alpha(K_t, w, X_t, y_t, p, ridge, dom.is_categorical)
        diff = a1 @ KzT[o]
        diff -= a2 @ KzT[w]
        stat = float(np.mean(diff * diff))
        theta = s.theta(n, d)
        if stat > theta:
            return Detection(n, stat, theta, m - 1)
    return None


def normalisation(
    y_segment_uniform: np.ndarray | Sequence[float],
    y_all_uniform: np.ndarray | Sequence[float],
    min_segment: int = _MIN_SEGMENT_FOR_SCALE,
) -> tuple[float, float]:
    """Shift and scale of the targets for one scan (spec 9.5).

    Mean and standard deviation (``ddof=1``) of the exploration targets of the current segment if
    there are at least ``min_segment`` of them, else of all exploration targets of the study (if
    at least two), else ``(0, 1)``. A scale below 1e-12 is replaced by 1. Exploration targets are
    an unbiased sample of the current function over the domain; UCB targets are not.
    """
    seg = np.asarray(y_segment_uniform, dtype=float).ravel()
    allu = np.asarray(y_all_uniform, dtype=float).ravel()
    min_segment = _check_int("min_segment", min_segment, 2)
    if not (np.all(np.isfinite(seg)) and np.all(np.isfinite(allu))):
        raise ValueError("normalisation: targets must be finite.")
    if seg.size >= min_segment:
        ref = seg
    elif allu.size >= 2:
        ref = allu
    else:
        return 0.0, 1.0
    a = float(np.mean(ref))
    sd = float(np.std(ref, ddof=1))
    return a, (sd if sd >= 1e-12 else 1.0)
