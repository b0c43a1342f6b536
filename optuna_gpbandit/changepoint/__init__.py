"""Change-point detection: the default residual CUSUM (:mod:`.sequential`) and the stage of
GP-UCB-CPD (Avanesov, "How to gamble with non-stationary X-armed bandits and have no regrets";
spec ``shared/specs/change_detection.md``).

The default detector, :class:`ResidualTest`, tests every result against the prediction the
sampler stored when the trial was asked (see :mod:`optuna_gpbandit.changepoint.sequential`).
The rest of this package is Avanesov's detector, kept as ``ChangeDetection.avanesov()``:

Pure functions on numpy arrays (Optuna objects appear only in :class:`ChangeDetection`, the stage
a sampler holds), so that any sampler can opt in and every worker (or a resumed study) recomputes
the same resets:

* :func:`is_uniform_turn` -- the exploration schedule of Algorithm 2 (line 6): the next trial is a
  uniform-exploration trial iff ``n_uniform <= xi * sqrt(n_history)``, both counted since the last
  reset (spec 9.4), compared exactly.
* :func:`cpd_statistic` -- Algorithm 1: two kernel-ridge / GP posterior means, one per half of a
  window, and the mean over the domain of their squared difference (an L2 distance under the
  uniform distribution, spec 2.3), estimated on the fixed points of a :class:`Domain`.
* :func:`default_threshold`, :func:`cpd_ridge`, :class:`CPDSettings` -- ``theta_n`` and the ridge
  ``lambda_n`` of the paper's parametrisation, with user overrides.
* :func:`scan` -- the test on every even-length tail of the exploration sequence, smallest first;
  the first firing tail stops the scan (Algorithm 2, lines 10-15).
* :func:`replay`, :class:`ReplayState`, :class:`Replayer` -- the deterministic replay of a whole
  trial history (spec 9.3): change points, current segment start, the exploration trials of the
  current segment. :class:`Replayer` caches and extends the replay incrementally; the cache only
  saves time, it never changes a result.
* :func:`best_since` -- the best trial since the last change (``study.best_trial`` is not
  segment-aware).

Parametrisation (paper section 2.1, spec 2.1). The paper's GPR with regularisation ``rho`` on
``n`` points has posterior mean ``k_x^T (K + n rho I)^{-1} y`` -- kernel ridge regression with
ridge ``lambda = n rho`` on the *unit-variance* Gram matrix. The CPD fits use
``rho_n = c n^{-r}``, i.e. ``lambda_n = c n^{1 - r}`` with ``r = (2 nu + d) / (2 nu + d + 1)``.
We obtain exactly this mean from :class:`~optuna_gpbandit.gp.GPPosterior` with
``noise_var = lambda_n * scale`` (the kernel amplitude ``scale`` cancels in the mean), so the
``noise_var`` of the caller's :class:`~optuna_gpbandit.gp.GPParams` is *not* used by the CPD (spec
pitfall 3: the CPD ridge is not the UCB noise variance). Only the means are used.
:func:`cpd_statistic` is the reference implementation through ``GPPosterior``; :func:`scan`
solves the same linear systems from one Gram matrix and one kernel matrix to the integration
points per scan (slicing them for every window, LAPACK ``posv``, falling back to ``GPPosterior``
and its jitter if a factorisation fails) -- much faster (docs/benchmarks.md, "Avanesov's
scan"); the tests check that both agree window by window.

Departures from the paper (the first two are marked [ours] in the spec, the third is ours here):

* the L2 distance is the *mean* over the domain (probability measure), not the Lebesgue integral;
* targets are standardised with the exploration trials (:func:`normalisation`, spec 9.5), with one
  ``(shift, scale)`` per scan shared by both halves of every window, so level shifts stay visible;
  the default ``theta_0`` is then 4.0 instead of the paper's 2.6 (which is kept for raw targets);
* for the squared-exponential kernel (``nu = inf``) the rate exponent is taken as its limit
  ``r = 1`` (the paper treats Matern kernels only);
* the kernel is fixed (no marginal-likelihood fit), as in the paper; the default is Matern-5/2 with
  lengthscale 0.2 in unit-cube coordinates (the paper's ``l = 1`` on ``[0, 5]``).
"""

from __future__ import annotations

from optuna_gpbandit.changepoint.best import best_since
from optuna_gpbandit.changepoint.detector import Detection, normalisation, scan, tail_windows
from optuna_gpbandit.changepoint.replayer import (
    Replayer,
    ReplayState,
    TrialRecord,
    replay,
)
from optuna_gpbandit.changepoint.schedule import SQRT3, is_uniform_turn
from optuna_gpbandit.changepoint.segment import ResidualAlarm, Segment
from optuna_gpbandit.changepoint.settings import (
    DEFAULT_LENGTHSCALE,
    DEFAULT_THRESHOLD_CONST_RAW,
    DEFAULT_THRESHOLD_CONST_STANDARDIZED,
    CPDSettings,
    cpd_ridge,
    default_threshold,
    kernel_smoothness,
    rate_exponent,
)
from optuna_gpbandit.changepoint.sequential import (
    Prediction,
    ResidualState,
    ResidualTest,
    average_run_length,
    cusum_threshold,
)
from optuna_gpbandit.changepoint.stage import (
    CHANGE_POINTS_KEY,
    PREDICTION_KEY,
    ROLE_KEY,
    ChangeDetection,
)
from optuna_gpbandit.changepoint.statistic import Domain, cpd_statistic

__all__ = [
    "CHANGE_POINTS_KEY",
    "PREDICTION_KEY",
    "DEFAULT_LENGTHSCALE",
    "DEFAULT_THRESHOLD_CONST_RAW",
    "DEFAULT_THRESHOLD_CONST_STANDARDIZED",
    "ROLE_KEY",
    "SQRT3",
    "ChangeDetection",
    "CPDSettings",
    "Detection",
    "Domain",
    "Prediction",
    "ResidualAlarm",
    "ResidualState",
    "ResidualTest",
    "ReplayState",
    "Replayer",
    "Segment",
    "TrialRecord",
    "average_run_length",
    "best_since",
    "cpd_ridge",
    "cpd_statistic",
    "cusum_threshold",
    "default_threshold",
    "is_uniform_turn",
    "kernel_smoothness",
    "normalisation",
    "rate_exponent",
    "replay",
    "scan",
    "tail_windows",
]
