"""IGP-UCB (Chowdhury & Gopalan, ICML 2017, Algorithm 1)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Sequence

if TYPE_CHECKING:
    from optuna.samplers import BaseSampler
    from optuna.trial import FrozenTrial

    from optuna_gpbandit._pending import Censoring
    from optuna_gpbandit.changepoint import ChangeDetection
    from optuna_gpbandit.constraints import FeasibleConstraints, LongTermConstraints


from optuna_gpbandit._arguments import forward
from optuna_gpbandit.acquisition.ucb import UCB
from optuna_gpbandit.samplers._base import SelectionContext
from optuna_gpbandit.samplers._docs import document
from optuna_gpbandit.samplers._kernelized import KernelizedBanditSampler


@document
class IGPUCBSampler(KernelizedBanditSampler):
    """Improved GP-UCB: maximise ``mu_{t-1}(x) + beta_t sigma_{t-1}(x)`` with
    ``beta_t = B + R sqrt(2 (gamma_{t-1} + 1 + log(1 / delta)))``.

    Parameters
    ----------
    <kernelized parameters>
    <common parameters>
    <restarts parameters>
    <warping parameters>
    <input_warping parameters>
    <multi_objective parameters>
    """

    _multi_objective = True  # random scalarisations (samplers/_multi.py)

    def __init__(
        self,
        *,
        B: float = 0.5,
        R: float | None = None,
        delta: float = 0.1,
        lam: float | str | None = None,
        horizon: int | None = None,
        gamma: str | float | Callable[[int, int], float] = "data",
        early_beta_factor: float = 1.0,
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
        scalarization: str = "chebyshev",
        restarts: bool = False,
        output_warping: bool = True,
        input_warping: bool = True,
    ) -> None:
        super().__init__(**forward(KernelizedBanditSampler, locals()))

    def _acquisition(self, ctx: SelectionContext) -> tuple[UCB, dict[str, Any]]:
        beta, terms = self._width(ctx, thompson=False)
        nu = beta + ctx.width_bonus
        return UCB(ctx.model.posterior, nu), {"beta": beta, "nu": nu, **terms}
