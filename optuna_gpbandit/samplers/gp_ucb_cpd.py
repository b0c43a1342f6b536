"""GP-UCB-CPD (Avanesov, Algorithm 2): GP-UCB with uniform exploration and change detection."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Sequence

from optuna_gpbandit._arguments import forward
from optuna_gpbandit.acquisition.beta import avanesov_beta
from optuna_gpbandit.changepoint import (
    DEFAULT_THRESHOLD_CONST_RAW,
    ChangeDetection,
    CPDSettings,
    ResidualTest,
)
from optuna_gpbandit.samplers._docs import document
from optuna_gpbandit.samplers.gp_ucb import GPUCBSampler

if TYPE_CHECKING:
    from optuna.samplers import BaseSampler
    from optuna.trial import FrozenTrial

    from optuna_gpbandit._pending import Censoring
    from optuna_gpbandit.constraints import FeasibleConstraints, LongTermConstraints


@document
class GPUCBCPDSampler(GPUCBSampler):
    """GP-UCB for objectives that change abruptly over the trials (non-stationary).

    Default (``detector="residual"``): when a trial is asked, the GP's prediction of its value
    is stored with it; when the value arrives, a CUSUM test on its standardised residual runs.
    After an abrupt change the sampler keeps landing where the old model was sure, and the
    residuals are large again and again: a handful of trials raise the alarm. The model then
    forgets the trials before the run of surprising results (they stay: they describe the new
    objective) and refits from the last hyperparameters (a warm start). False alarms come at
    rate ``alpha`` per trial while the model is calibrated; the only exploration trial is one
    uniform trial after each reset.

    ``detector="avanesov"`` is the paper's GP-UCB-CPD (Algorithm 2): about ``xi * sqrt(t)`` of
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

    A ``change_detection`` instance replaces ``detector``, ``alpha``, ``xi``, ``cpd_settings``,
    ``count_running`` and ``window``.

    Parameters
    ----------
    detector
        ``"residual"`` (default) or ``"avanesov"`` (the paper's algorithm).
    alpha
        Residual detector: false-alarm probability per tested trial (default ``1e-4``; see
        :class:`~optuna_gpbandit.changepoint.ResidualTest`).
    xi
        Exploration multiplier: ``None`` (default) is ``sqrt(3)`` (the paper's) for
        ``"avanesov"`` and 0 for ``"residual"`` (one uniform trial after each reset, none else).
    cpd_settings
        Avanesov's detector (:class:`~optuna_gpbandit.changepoint.CPDSettings`): fixed kernel,
        threshold ``theta_0 n^{-r}`` (``theta_0 = 4`` on standardised targets,
        ``threshold_const`` to change it, ``threshold`` to replace it), ridge.
    count_running
        Count other workers' running trials in the exploration schedule (default ``True``).
    window
        Drift mode: the model sees only the latest ``window`` trials (a sliding window), for
        objectives that drift gradually rather than jump; the detector still runs. ``None``
        (default): no window.
    <gp_ucb parameters>
    <common parameters>
    <input_warping parameters>
    """

    _multi_objective = False  # one objective only

    def __init__(
        self,
        *,
        detector: str = "residual",
        alpha: float = 1e-4,
        xi: float | None = None,
        cpd_settings: CPDSettings | None = None,
        count_running: bool = True,
        window: int | None = None,
        beta: str | float | Callable[[int], float] = "auto",
        beta_scale: float = 0.05,
        early_beta_factor: float = 1.0,
        delta: float = 0.1,
        lipschitz_a: float = 1.0,
        lipschitz_b: float = 1.0,
        domain_r: float = 1.0,
        rkhs_bound: float = 1.0,
        seed: int | None = None,
        n_startup_trials: int | None = None,
        independent_sampler: BaseSampler | None = None,
        deterministic_objective: bool = False,
        kernel: str = "matern52",
        lengthscale: float | Sequence[float] | None = None,
        kernel_scale: float | None = None,
        noise_var: float | None = None,
        standardize: bool = True,
        n_candidates: int = 1024,
        n_local_search: int = 5,
        refit_growth: float = 0.05,
        max_fit_points: int = 256,
        max_posterior_points: int | None = 1500,
        warn_independent_sampling: bool = True,
        pending: str | Censoring = "hallucinate",
        stale_after: float | None = None,
        constraints: FeasibleConstraints | LongTermConstraints | str | None = "auto",
        constraints_func: Callable[[FrozenTrial], Sequence[float]] | None = None,
        change_detection: ChangeDetection | None = None,
        failures: str = "impute",
        input_warping: bool = True,
    ) -> None:
        if change_detection is None:
            if detector == "residual":
                if cpd_settings is not None:
                    raise ValueError(
                        "cpd_settings configures detector='avanesov'; with detector='residual' "
                        "set alpha instead."
                    )
                settings = ResidualTest(alpha=alpha)
            elif detector == "avanesov":
                if alpha != 1e-4:
                    raise ValueError(
                        "alpha configures detector='residual'; with detector='avanesov' use "
                        "cpd_settings=CPDSettings(threshold_const=...)."
                    )
                settings = cpd_settings or CPDSettings()
            else:
                raise ValueError(
                    f"detector must be 'residual' or 'avanesov', got {detector!r}."
                )
            change_detection = ChangeDetection(
                settings=settings, xi=xi, count_running=count_running, window=window
            )
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
        settings = dict(
            detector="avanesov", n_startup_trials=1, kernel="matern52",
            lengthscale=lengthscale, kernel_scale=1.0, noise_var=noise_var, standardize=False,
            beta=avanesov_beta(horizon, d=d), beta_scale=1.0,
            cpd_settings=CPDSettings(standardize=False,
                                     threshold_const=DEFAULT_THRESHOLD_CONST_RAW),
        )
        settings.update(kwargs)
        return cls(seed=seed, **settings)
