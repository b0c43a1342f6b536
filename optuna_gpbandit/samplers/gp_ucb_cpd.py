"""GP-UCB-CPD (Avanesov, Algorithm 2): GP-UCB with uniform exploration and change detection."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Sequence

from optuna_gpbandit._arguments import forward
from optuna_gpbandit.changepoint import SQRT3, ChangeDetection, CPDSettings
from optuna_gpbandit.samplers._docs import document
from optuna_gpbandit.samplers.gp_ucb import GPUCBSampler

if TYPE_CHECKING:
    from optuna.samplers import BaseSampler
    from optuna.trial import FrozenTrial

    from optuna_gpbandit._censoring import Censoring
    from optuna_gpbandit.constraints import FeasibleConstraints, LongTermConstraints


@document
class GPUCBCPDSampler(GPUCBSampler):
    """GP-UCB for objectives that change abruptly over the trials (non-stationary).

    A trial is a uniform-exploration trial when the exploration trials since the last reset
    number at most ``xi * sqrt(trials since the last reset)``, otherwise a GP-UCB trial on the
    history since the last reset. After each exploration trial completes, the change-point test
    compares GP posterior means fitted on the two halves of every even-sized tail of the
    exploration trials (their squared L2 distance over the search space against
    ``theta_n``); when it fires, the trials up to that one are forgotten and the search starts
    over. Detected changes are logged; :meth:`change_points` lists them and
    :meth:`current_best_trial` gives the best trial since the last one (``study.best_trial``
    keeps a value from before a change).

    The state lives in storage: each trial's role is its system attr ``gpbandit:role``, and the
    change points are recomputed by replaying the stored trials (also written to the study
    system attr ``gpbandit:change_points`` for users), so resumed studies and other workers see
    the same resets. The detector's guarantees are for low-dimensional spaces (the paper's
    analysis is 1-D); in higher dimensions more exploration trials are needed per detection.

    Here ``n_startup_trials`` defaults to 1: the schedule's exploration trials (the first four of
    every segment) are the initial design. A ``change_detection`` instance replaces ``xi``,
    ``cpd_settings`` and ``count_running``.

    Parameters
    ----------
    xi
        Exploration multiplier (default ``sqrt(3)``, the paper's).
    cpd_settings
        The detector (:class:`~optuna_gpbandit.changepoint.CPDSettings`): fixed kernel,
        threshold ``theta_0 n^{-r}`` (``theta_0 = 4`` on standardised targets, ``threshold_const``
        to change it, ``threshold`` to replace it), ridge.
    count_running
        Count other workers' running trials in the exploration schedule (default ``True``).
    <gp_ucb parameters>
    <common parameters>
    """

    def __init__(
        self,
        *,
        xi: float = SQRT3,
        cpd_settings: CPDSettings | None = None,
        count_running: bool = True,
        beta: str | float | Callable[[int], float] = "auto",
        beta_scale: float = 0.05,
        delta: float = 0.1,
        lipschitz_a: float = 1.0,
        lipschitz_b: float = 1.0,
        domain_r: float = 1.0,
        rkhs_bound: float = 1.0,
        seed: int | None = None,
        n_startup_trials: int = 1,
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
    ) -> None:
        if change_detection is None:
            change_detection = ChangeDetection(
                xi=xi, settings=cpd_settings, count_running=count_running
            )
        super().__init__(**forward(GPUCBSampler, locals()))
