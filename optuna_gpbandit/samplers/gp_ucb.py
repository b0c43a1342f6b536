"""GP-UCB (Srinivas, Krause, Kakade & Seeger, ICML 2010)."""

from __future__ import annotations

import math
from typing import Any, Callable

from optuna.samplers import BaseSampler

from optuna_gpbandit._arguments import forward
from optuna_gpbandit.failures import FailedTrials
from optuna_gpbandit.model import GPModel
from optuna_gpbandit.reset import NoReset, Reset
from optuna_gpbandit.search import AcquisitionSearch
from optuna_gpbandit.pending import Hallucinate, PendingRule
from optuna_gpbandit.acquisition.ucb import UCB
from optuna_gpbandit.acquisition.width import BetaSchedule, Theorem1, check_beta
from optuna_gpbandit.gp.information import gamma_upper_bound
from optuna_gpbandit.samplers._base import GPBanditSampler, SelectionContext
from optuna_gpbandit.samplers._docs import document
from optuna_gpbandit.samplers._settings import ConstraintsArg, ConstraintsFunc

_GAMMA_BOUND_POINTS = 256
Beta = BetaSchedule | float | Callable[[int], float]


@document
class GPUCBSampler(GPBanditSampler):
    """GP-UCB: the next point maximises ``mu_{t-1}(x) + sqrt(beta_t) sigma_{t-1}(x)``.

    Parameters
    ----------
    beta
        The schedule ``beta_t``: a theorem's (:class:`~optuna_gpbandit.Theorem1`, the default,
        :class:`~optuna_gpbandit.Theorem2`, :class:`~optuna_gpbandit.Theorem3`), with its
        constants, a practical ``scale`` (default 0.05), an early factor (default 3.0 for
        ``t <= 15``, falling to 1 at ``t = 40``) and a factor inside the trust region of a
        continuous space (``box_factor``, default 0.4); ``Theorem1.paper()`` is the theorem's
        own width. A number is a constant ``beta_t``, a callable ``beta(t)`` a schedule of the
        round ``t`` (points in the design, pending ones included, + 1), both used as given (no
        scale, no early factor, no factor in the box).
    <common parameters>
    <settings parameters>
    <multi_objective parameters>
    """

    _multi_objective = True  # random scalarisations (samplers/_multi.py)

    def __init__(
        self,
        *,
        beta: Beta = Theorem1(),
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
        reset: Reset | None = NoReset(),
        constraints: ConstraintsArg = "auto",
        scalarization: str = "chebyshev",
    ) -> None:
        super().__init__(**forward(GPBanditSampler, locals()))
        if self._settings.pending.sets_width:
            raise ValueError(
                "pending=Censoring(theory_beta=True) sets Verma et al.'s beta_t, which has the "
                "IGP-UCB form: use IGPUCBSampler or GPTSSampler, or set theory_beta=False."
            )
        self._beta = check_beta(beta)

    def beta_t(self, ctx: SelectionContext) -> float:
        """``beta_t`` for the round in ``ctx`` before the schedule's scale and early factor."""
        t, space, beta = ctx.t, ctx.space, self._beta
        value = beta.unscaled(t, delta=beta.delta * ctx.delta_factor, d=space.d,
                              cardinality=space.cardinality,
                              n_candidates=ctx.search.n_candidates,
                              gamma_bound=lambda: self._gamma_bound(ctx))
        if not (math.isfinite(value) and value >= 0):
            raise ValueError(f"beta_t must be finite and >= 0, got {value} at t={t}.")
        return value

    def _gamma_bound(self, ctx: SelectionContext) -> float:
        post = ctx.gp.posterior
        D = ctx.space.sobol(_GAMMA_BOUND_POINTS, seed=self._seed)
        scale = post.params.scale
        return gamma_upper_bound(post.kernel(D, D) / scale, post.effective_noise_var / scale, ctx.t)

    def _acquisition(self, ctx: SelectionContext) -> tuple[UCB, dict[str, Any]]:
        early = ctx.early_factor(self._beta.early_factor)
        scale = self._beta.scale
        if ctx.box is not None and ctx.space.continuous_only:
            scale *= self._beta.box_factor
        beta = scale * early * self.beta_t(ctx)
        nu = math.sqrt(beta) + ctx.width_bonus
        return UCB(ctx.gp.posterior, nu), {"beta": beta, "nu": nu, "early_factor": early}
