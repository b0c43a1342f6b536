"""GP-UCB-CPD (Avanesov, Algorithm 2): GP-UCB with uniform exploration and change detection."""

from __future__ import annotations

from typing import Any

from optuna.samplers import BaseSampler

from optuna_gpbandit._arguments import check_instance, forward
from optuna_gpbandit.failures import FailedTrials
from optuna_gpbandit.model import GPModel
from optuna_gpbandit.search import AcquisitionSearch
from optuna_gpbandit.pending import Hallucinate, PendingRule
from optuna_gpbandit.acquisition.beta import avanesov_beta
from optuna_gpbandit.acquisition.width import Theorem1
from optuna_gpbandit.changepoint import (
    DEFAULT_THRESHOLD_CONST_RAW,
    ChangeDetection,
    CPDSettings,
)
from optuna_gpbandit.samplers._docs import document
from optuna_gpbandit.samplers._settings import ConstraintsArg, ConstraintsFunc
from optuna_gpbandit.samplers.gp_ucb import Beta, GPUCBSampler


@document
class GPUCBCPDSampler(GPUCBSampler):
    """GP-UCB for objectives that change abruptly over the trials (non-stationary).

    Default (``reset=ChangeDetection()``, the residual test): when a trial is asked, the GP's prediction of its value
    is stored with it; when the value arrives, a CUSUM test on its standardised residual runs.
    After an abrupt change the sampler keeps landing where the old model was sure, and the
    residuals are large again and again: a handful of trials raise the alarm. The model then
    forgets the trials before the run of surprising results (they stay: they describe the new
    objective) and refits from the last hyperparameters (a warm start). False alarms come at
    rate ``alpha`` per trial while the model is calibrated; the only exploration trial is one
    uniform trial after each reset.

    ``reset=ChangeDetection.avanesov()`` is the paper's GP-UCB-CPD (Algorithm 2): about ``xi * sqrt(t)`` of
    the trials since the last reset are uniform-exploration trials, and after each one a test
    compares GP posterior means fitted on the two halves of every even-sized tail of them (their
    squared L2 distance over the search space against ``theta_n``); on an alarm the trials up
    to that one are forgotten. Its guarantees are for low-dimensional spaces (the paper's
    analysis is 1-D).

    Detected changes are logged; :meth:`change_points` lists them and
    :meth:`current_best_trial` gives the best trial since the last one (``study.best_trial``
    keeps a value from before a change). The state lives in storage (trial system attrs
    ``gpbandit:role`` and ``gpbandit:prediction``); change points are recomputed by replaying
    the stored trials (and written to the study system attr ``gpbandit:change_points`` for
    users), so resumed studies and other workers see the same resets.

    This is :class:`GPUCBSampler` with ``reset=ChangeDetection()`` and no early width by
    default, for one objective; any sampler takes ``reset=ChangeDetection(...)``.
    :meth:`paper` gives the paper's experimental settings.

    Parameters
    ----------
    reset
        A :class:`~optuna_gpbandit.ChangeDetection`: ``ChangeDetection()`` (default: the
        residual CUSUM, false alarms at ``alpha = 1e-4`` per trial;
        ``ChangeDetection(settings=ResidualTest(alpha=...))`` to change it,
        ``ChangeDetection(window=...)`` for drift) or ``ChangeDetection.avanesov()`` (the
        paper's detector; :class:`~optuna_gpbandit.CPDSettings` for its kernel and threshold).
    beta
        As for :class:`GPUCBSampler`; default ``Theorem1(early_factor=1.0)`` (the early width
        is not measured with change detection).
    <common parameters>
    <settings parameters>
    """

    _multi_objective = False  # one objective only

    def __init__(
        self,
        *,
        reset: ChangeDetection = ChangeDetection(),
        beta: Beta = Theorem1(early_factor=1.0),
        seed: int | None = None,
        independent_sampler: BaseSampler | None = None,
        n_startup_trials: int | None = None,
        deterministic_objective: bool | None = None,
        constraints_func: ConstraintsFunc | None = None,
        warn_independent_sampling: bool = True,
        model: GPModel = GPModel(),
        search: AcquisitionSearch = AcquisitionSearch(),
        pending: PendingRule = Hallucinate(),
        failures: FailedTrials = FailedTrials(),
        constraints: ConstraintsArg = "auto",
    ) -> None:
        check_instance("GPUCBCPDSampler: reset", reset, ChangeDetection,
                       "a ChangeDetection instance")
        super().__init__(**forward(GPUCBSampler, locals()))

    @classmethod
    def paper(cls, horizon: int, *, noise_var: float, d: int = 1, lengthscale: float = 0.2,
              seed: int | None = None, **kwargs: Any) -> GPUCBCPDSampler:
        """Avanesov's GP-UCB-CPD with the paper's experimental settings: fixed Matern-5/2 kernel
        (``lengthscale`` in encoded units, amplitude 1, the given ``noise_var``), raw targets,
        ``beta_t' = 0.02 t'^(d(d+1)/(5+d(d+1))) log(T)^4`` on the segment length
        (:func:`~optuna_gpbandit.acquisition.avanesov_beta`), the detector on raw targets with
        ``theta_0 = 2.6``, ``xi = sqrt(3)``, no start-up trials beyond the schedule's.
        ``horizon`` is ``T``; other keyword arguments go to the constructor."""
        settings: dict[str, Any] = dict(
            n_startup_trials=1,
            model=GPModel(kernel="matern52", lengthscale=lengthscale, kernel_scale=1.0,
                          noise_var=noise_var, standardize=False),
            beta=avanesov_beta(horizon, d=d),
            reset=ChangeDetection.avanesov(CPDSettings(
                standardize=False, threshold_const=DEFAULT_THRESHOLD_CONST_RAW)),
        )
        settings.update(kwargs)
        return cls(seed=seed, **settings)
