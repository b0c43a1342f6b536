"""Rates, thresholds and ridges of the detector: ``theta_n``, ``lambda_n`` and
:class:`CPDSettings`."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from optuna_gpbandit.changepoint._checks import _check_int, _check_positive
from optuna_gpbandit.changepoint.schedule import SQRT3
from optuna_gpbandit.gp.kernels import check_kernel_name
from optuna_gpbandit.gp.posterior import GPParams

DEFAULT_THRESHOLD_CONST_STANDARDIZED = 4.0
"""``theta_0`` on targets standardised with the exploration trials (spec 4.1 and 8, Table B)."""

DEFAULT_THRESHOLD_CONST_RAW = 2.6
"""``theta_0`` of the paper's experiments (raw rewards of amplitude ~1)."""

DEFAULT_LENGTHSCALE = 0.2


def kernel_smoothness(kernel: str) -> float:
    """Smoothness ``nu`` (the paper's ``alpha``) of a kernel name: 2.5 for ``"matern52"``,
    ``inf`` for ``"se"``."""
    check_kernel_name(kernel)
    return 2.5 if kernel == "matern52" else math.inf


def rate_exponent(d: int, nu: float = 2.5) -> float:
    """``r = (2 nu + d) / (2 nu + d + 1)``, the exponent of ``theta_n`` and ``rho_n`` (6/7 for
    ``nu = 5/2``, ``d = 1``; 7/8 for ``d = 2``). ``nu = inf`` gives the limit ``1`` [ours]."""
    d = _check_int("d", d, 1)
    nu = _check_positive("nu", nu, allow_inf=True)
    if math.isinf(nu):
        return 1.0
    return (2.0 * nu + d) / (2.0 * nu + d + 1.0)


def default_threshold(
    n: int,
    d: int = 1,
    *,
    nu: float = 2.5,
    threshold_const: float = DEFAULT_THRESHOLD_CONST_STANDARDIZED,
    rate: float | None = None,
) -> float:
    """Default CPD threshold ``theta_n = theta_0 * n**(-r)`` for half-windows of ``n`` points.

    The paper's 1-D experiment uses ``theta_0 = 2.6`` on raw rewards (``2.6 n^{-6/7}``); on
    targets standardised as in :func:`normalisation` the documented default is ``theta_0 = 4``
    (spec 4.1 / 8: the same false-alarm level).

    Parameters
    ----------
    n
        Half-window size, ``>= 1``.
    d
        Input dimension, ``>= 1``.
    nu
        Kernel smoothness (see :func:`kernel_smoothness`).
    threshold_const
        ``theta_0 > 0``.
    rate
        ``r``; ``None`` uses :func:`rate_exponent`.
    """
    n = _check_int("n", n, 1)
    c = _check_positive("threshold_const", threshold_const)
    r = rate_exponent(d, nu) if rate is None else _check_positive("rate", rate)
    return c * n ** (-r)


def cpd_ridge(
    n: int,
    d: int = 1,
    *,
    nu: float = 2.5,
    ridge_const: float = 1.0,
    rate: float | None = None,
) -> float:
    """Ridge of each CPD fit on ``n`` points: ``lambda_n = n * rho_n = c * n**(1 - r)``.

    (``c n^{1/7}`` for ``nu = 5/2``, ``d = 1``; ``1.3895 c`` at ``n = 10``.) The paper leaves the
    experiments' ``c`` unreported; ``c = 1`` reproduces their regret (spec 8).
    """
    n = _check_int("n", n, 1)
    c = _check_positive("ridge_const", ridge_const)
    r = rate_exponent(d, nu) if rate is None else _check_positive("rate", rate)
    return c * n ** (1.0 - r)


@dataclass(frozen=True, eq=False)
class CPDSettings:
    """Settings of the change-point detector (fixed for a whole study).

    Parameters
    ----------
    params
        Fixed kernel hyperparameters (kind, lengthscales, amplitude) of both CPD fits. ``None``:
        Matern-5/2, lengthscale 0.2 in every encoded dimension, amplitude 1. ``noise_var`` is
        ignored: the ridge :meth:`ridge` takes its place. Never pass fitted (changing)
        hyperparameters here: the statistic would stop being comparable with ``theta_n`` and the
        replay would stop being reproducible (spec pitfall 16).
    threshold_const
        ``theta_0`` of the default threshold ``theta_0 n^{-r}``. ``None``: 4.0 with
        ``standardize=True``, 2.6 (the paper's value) with ``standardize=False``.
    threshold
        Override of the whole threshold: a number (the same ``theta`` for every ``n``;
        ``math.inf`` never fires, the paper's "NO-Detector" baseline) or a callable ``n -> theta_n``
        (must return a positive number or ``inf``). ``None`` uses ``threshold_const``.
    ridge_const
        ``c`` in ``lambda_n = c n^{1-r}``.
    rate
        ``r``; ``None`` uses ``(2 nu + d) / (2 nu + d + 1)`` with ``nu`` from the kernel.
    standardize
        Standardise targets with the exploration trials before each scan (:func:`normalisation`).
    max_half_window
        Optional cap on the half-window ``n`` of the scan (the paper has none).
    """

    params: GPParams | None = None
    threshold_const: float | None = None
    threshold: float | Callable[[int], float] | None = None
    ridge_const: float = 1.0
    rate: float | None = None
    standardize: bool = True
    max_half_window: int | None = None

    def __post_init__(self) -> None:
        if self.params is not None:
            if not isinstance(self.params, GPParams):
                raise ValueError(f"params must be a GPParams or None, got {self.params!r}.")
            check_kernel_name(self.params.kernel)
            ls = np.asarray(self.params.lengthscales, dtype=float)
            if ls.ndim != 1 or ls.size == 0 or not np.all(np.isfinite(ls)) or np.any(ls <= 0):
                raise ValueError(
                    "params.lengthscales must be a non-empty 1-D array of positive numbers."
                )
            _check_positive("params.scale", self.params.scale)
        if self.threshold_const is not None:
            _check_positive("threshold_const", self.threshold_const)
        if self.threshold is not None and not callable(self.threshold):
            _check_positive("threshold", self.threshold, allow_inf=True)
        _check_positive("ridge_const", self.ridge_const)
        if self.rate is not None:
            _check_positive("rate", self.rate)
        if not isinstance(self.standardize, (bool, np.bool_)):
            raise ValueError(f"standardize must be a bool, got {self.standardize!r}.")
        if self.max_half_window is not None:
            _check_int("max_half_window", self.max_half_window, 1)

    @property
    def theta_0(self) -> float:
        """``theta_0`` actually used by the default threshold."""
        if self.threshold_const is not None:
            return float(self.threshold_const)
        if self.standardize:
            return DEFAULT_THRESHOLD_CONST_STANDARDIZED
        return DEFAULT_THRESHOLD_CONST_RAW

    @property
    def never_fires(self) -> bool:
        """The threshold is the constant ``inf``."""
        return (
            self.threshold is not None
            and not callable(self.threshold)
            and math.isinf(float(self.threshold))
        )

    @property
    def default_xi(self) -> float:
        """The exploration multiplier of :class:`ChangeDetection` with this detector: the
        paper's ``sqrt(3)``."""
        return SQRT3

    @property
    def tests_predictions(self) -> bool:
        """The detector tests its exploration trials, not stored predictions."""
        return False

    def gp_params(self, d: int) -> GPParams:
        """Kernel hyperparameters for ``d`` encoded dimensions (noise_var unused)."""
        d = _check_int("d", d, 1)
        if self.params is None:
            return GPParams("matern52", np.full(d, DEFAULT_LENGTHSCALE), 1.0, 1.0)
        ls = np.asarray(self.params.lengthscales, dtype=float)
        if ls.size not in (1, d):
            raise ValueError(f"params has {ls.size} lengthscales for a {d}-dimensional input.")
        ls = np.broadcast_to(ls, (d,)).copy()
        return GPParams(self.params.kernel, ls, float(self.params.scale), 1.0)

    def nu(self) -> float:
        return kernel_smoothness("matern52" if self.params is None else self.params.kernel)

    def rate_for(self, d: int) -> float:
        return rate_exponent(d, self.nu()) if self.rate is None else float(self.rate)

    def theta(self, n: int, d: int) -> float:
        """Threshold ``theta_n`` for half-windows of ``n`` points in ``d`` dimensions."""
        n = _check_int("n", n, 1)
        if self.threshold is None:
            return default_threshold(n, d, threshold_const=self.theta_0, rate=self.rate_for(d))
        if callable(self.threshold):
            value = self.threshold(n)
            return _check_positive(f"threshold({n})", value, allow_inf=True)
        return float(self.threshold)

    def ridge(self, n: int, d: int) -> float:
        """Ridge ``lambda_n = c n^{1-r}`` of each CPD fit on ``n`` points."""
        return cpd_ridge(n, d, ridge_const=self.ridge_const, rate=self.rate_for(d))
