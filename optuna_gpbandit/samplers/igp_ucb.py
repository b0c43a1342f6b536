"""IGP-UCB (Chowdhury & Gopalan, ICML 2017, Algorithm 1)."""

from __future__ import annotations

from typing import Any

from optuna.samplers import BaseSampler

from optuna_gpbandit._arguments import forward
from optuna_gpbandit.failures import FailedTrials
from optuna_gpbandit.model import GPModel
from optuna_gpbandit.reset import NoReset, Reset
from optuna_gpbandit.search import AcquisitionSearch
from optuna_gpbandit.pending import Hallucinate, PendingRule
from optuna_gpbandit.acquisition.ucb import UCB
from optuna_gpbandit.acquisition.width import InfoGainWidth
from optuna_gpbandit.samplers._base import SelectionContext
from optuna_gpbandit.samplers._docs import document
from optuna_gpbandit.samplers._kernelized import KernelizedBanditSampler
from optuna_gpbandit.samplers._settings import ConstraintsArg, ConstraintsFunc


@document
class IGPUCBSampler(KernelizedBanditSampler):
    """Improved GP-UCB: maximise ``mu_{t-1}(x) + beta_t sigma_{t-1}(x)`` with
    ``beta_t = B + R sqrt(2 (gamma_{t-1} + 1 + log(1 / delta)))``.

    Parameters
    ----------
    width
        ``beta_t``'s constants ``B``, ``R``, ``delta``, ``gamma`` and its early factor
        (:class:`~optuna_gpbandit.InfoGainWidth`; default ``InfoGainWidth()``: ``B = 0.5``,
        ``R`` read off the fitted noise, no early factor). The paper's ``lambda = 1 + 2 / T``
        is ``model=GPModel(noise_var=1 + 2 / T)``. With ``pending=Censoring(theory_beta=True)``
        the width is Verma et al.'s ``B + (R + B_y) sqrt(2 (gamma_{t-1} + 1 + log(2 /
        delta)))``.
    <common parameters>
    <settings parameters>
    <multi_objective parameters>
    """

    _multi_objective = True  # random scalarisations (samplers/_multi.py)

    def __init__(
        self,
        *,
        width: InfoGainWidth = InfoGainWidth(),
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
        super().__init__(**forward(KernelizedBanditSampler, locals()))

    def _acquisition(self, ctx: SelectionContext) -> tuple[UCB, dict[str, Any]]:
        beta, terms = self.width_t(ctx, thompson=False)
        nu = beta + ctx.width_bonus
        return UCB(ctx.gp.posterior, nu), {"beta": beta, "nu": nu, **terms}
