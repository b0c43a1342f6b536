"""GP-UCB with long-term constraints (Shi & Eryilmaz, AISTATS 2022, Algorithms 2 and 3)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Sequence

from optuna_gpbandit._arguments import forward
from optuna_gpbandit.constraints import LongTermConstraints, Psi
from optuna_gpbandit.samplers._docs import document

if TYPE_CHECKING:
    from optuna.samplers import BaseSampler
    from optuna.trial import FrozenTrial

    from optuna_gpbandit._censoring import Censoring
    from optuna_gpbandit.changepoint import ChangeDetection
from optuna_gpbandit.samplers.igp_ucb import IGPUCBSampler


@document
class ConstrainedGPUCBSampler(IGPUCBSampler):
    """IGP-UCB on a penalised objective whose multipliers make the constraints hold on average.

    Maximises ``f`` subject to ``(1/T) sum_t g_j(x_t) <= 0`` for every constraint ``j`` (a
    value ``> 0`` is a violation, as in Optuna). Trials are grouped in epochs of
    ``epoch_length``; after each full epoch the multipliers ``kappa_j`` are updated from the
    epoch's mean constraint values, and the GP is fitted to

    * ``variant="noiseless"`` (Algorithm 2): ``f - sum_j kappa_j (psi(g_j) - 1)``, with
      ``kappa_j <- kappa_j * psi(mean g_j)`` (``psi = exp(c x)`` or ``(1 + c x)^n`` above 0,
      1 below; kept in log form);
    * ``variant="noisy"`` (Algorithm 3): ``f - sum_j kappa_j g_j``, with
      ``kappa_j <- max(0, kappa_j + kappa_step * mean g_j)`` and the noise level
      ``sqrt(1 + sum kappa_j^2) R`` in ``beta_t``.

    Nothing is kept in the sampler: the multipliers are rebuilt from the stored trials at every
    call (only COMPLETE trials count), so a resumed study or another worker gets the same ones.
    They are written to each sampled trial's system attr ``gpbandit:multipliers`` (and to its
    ``gpbandit:state`` record) for optuna-dashboard. ``study.best_trial`` is the best single
    feasible trial, which is not what this algorithm optimises: it targets time-averaged
    feasibility, and single trials may violate constraints.

    Constraint values come from ``trial.set_constraint(name, value)`` in the objective, or from
    ``constraints_func`` as with Optuna's own samplers. Any sampler of this package takes the same
    stage through ``constraints=LongTermConstraints(...)`` (e.g. GP-TS, the paper's remark 1).

    Further constraint settings (``names``, ``include_pruned``, ``epoch_order``,
    ``max_log_kappa``, ...) go through ``constraints=LongTermConstraints(...)``, which replaces
    the constraint arguments below.

    Parameters
    ----------
    variant
        ``"noiseless"`` (Algorithm 2, default) or ``"noisy"`` (Algorithm 3).
    epoch_length
        ``S``, trials per epoch (default 20, the paper's experiments); keep it fixed for a study.
    psi, psi_c, psi_n
        Algorithm 2's ``psi``: ``"exp"`` (default, ``exp(c x)``), ``"poly"`` (``(1 + c x)^n``) or a
        callable with ``psi(0) = 1``, non-decreasing.
    kappa_init
        Initial multipliers: 1 (Algorithm 2) or 0 (Algorithm 3) by default.
    kappa_step
        Algorithm 3's step (default 0.5, the paper's experiments) or ``"theory"``.
    history
        ``"all"`` (default): every trial re-scored with the current multipliers goes to the GP.
        ``"epoch"``: the paper's literal fresh start per epoch (much worse in our measurements).
    n_trials_hint
        The horizon ``T`` if known, for ``L = ceil(T / S)`` in ``delta / L``.
    on_missing
        Trials whose constraint values are missing, NaN/inf or differently keyed are ``"skip"``-ped
        with a logged warning (default) or ``"raise"`` an error.
    <kernelized parameters>
    <common parameters>
    """

    def __init__(
        self,
        *,
        variant: str = "noiseless",
        epoch_length: int = 20,
        psi: str | Callable[[Any], Any] | Psi | None = None,
        psi_c: float = 1.0,
        psi_n: float = 2.0,
        kappa_init: float | Sequence[float] | None = None,
        kappa_step: float | str | None = None,
        history: str = "all",
        n_trials_hint: int | None = None,
        on_missing: str = "skip",
        B: float = 0.5,
        R: float | None = None,
        delta: float = 0.1,
        lam: float | str | None = None,
        horizon: int | None = None,
        gamma: str | float | Callable[[int, int], float] = "data",
        seed: int | None = None,
        n_startup_trials: int = 5,
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
        constraints: LongTermConstraints | None = None,
        constraints_func: Callable[[FrozenTrial], Sequence[float]] | None = None,
        change_detection: ChangeDetection | None = None,
        failures: str = "impute",
    ) -> None:
        if constraints is None:
            constraints = LongTermConstraints(
                variant, epoch_length=epoch_length, psi=psi, psi_c=psi_c, psi_n=psi_n,
                kappa_init=kappa_init, kappa_step=kappa_step, history=history,
                n_trials_hint=n_trials_hint, on_missing=on_missing,
            )
        super().__init__(**forward(IGPUCBSampler, locals()))
