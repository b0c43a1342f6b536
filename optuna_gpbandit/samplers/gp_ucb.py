"""GP-UCB (Srinivas, Krause, Kakade & Seeger, ICML 2010)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Callable, Sequence

if TYPE_CHECKING:
    from optuna.samplers import BaseSampler
    from optuna.trial import FrozenTrial

    from optuna_gpbandit._pending import Censoring
    from optuna_gpbandit.changepoint import ChangeDetection
    from optuna_gpbandit.constraints import FeasibleConstraints, LongTermConstraints


from optuna_gpbandit._arguments import check_number, forward
from optuna_gpbandit.acquisition.beta import beta_theorem1, beta_theorem2, beta_theorem3
from optuna_gpbandit.acquisition.ucb import UCB
from optuna_gpbandit.gp.information import gamma_upper_bound
from optuna_gpbandit.samplers._base import GPBanditSampler, SelectionContext
from optuna_gpbandit.samplers._docs import document

_BETA_MODES = ("auto", "theorem1", "theorem2", "theorem3")
_GAMMA_BOUND_POINTS = 256


@document
class GPUCBSampler(GPBanditSampler):
    """GP-UCB: the next point maximises ``mu_{t-1}(x) + sqrt(beta_t) sigma_{t-1}(x)``.

    Parameters
    ----------
    <gp_ucb parameters>
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
        beta: str | float | Callable[[int], float] = "auto",
        beta_scale: float = 0.05,
        early_beta_factor: float = 3.0,
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
        scalarization: str = "chebyshev",
        restarts: bool = False,
        output_warping: bool = True,
        input_warping: bool = True,
    ) -> None:
        super().__init__(**forward(GPBanditSampler, locals()))
        if isinstance(beta, str) and beta not in _BETA_MODES:
            raise ValueError(f"beta must be one of {_BETA_MODES}, a number or a callable; got {beta!r}.")
        if not isinstance(beta, str) and not callable(beta):
            if not (math.isfinite(float(beta)) and float(beta) >= 0):
                raise ValueError(f"A constant beta must be finite and >= 0, got {beta!r}.")
        if not (math.isfinite(beta_scale) and beta_scale >= 0):
            raise ValueError(f"beta_scale must be finite and >= 0, got {beta_scale!r}.")
        if not 0 < delta < 1:
            raise ValueError(f"delta must lie in (0, 1), got {delta!r}.")
        for name, v in (("lipschitz_a", lipschitz_a), ("lipschitz_b", lipschitz_b), ("domain_r", domain_r)):
            if not v > 0:
                raise ValueError(f"{name} must be positive, got {v!r}.")
        if self._censoring.theory_beta:
            raise ValueError(
                "pending=Censoring(theory_beta=True) sets Verma et al.'s beta_t, which has the "
                "IGP-UCB form: use IGPUCBSampler or GPTSSampler, or set theory_beta=False."
            )
        self._beta = beta
        self._beta_scale = float(beta_scale)
        self._early_beta_factor = check_number("early_beta_factor", early_beta_factor, strict=True)
        self._delta = float(delta)
        self._a, self._b, self._r = float(lipschitz_a), float(lipschitz_b), float(domain_r)
        self._rkhs_bound = float(rkhs_bound)

    def beta_t(self, ctx: SelectionContext) -> float:
        """Unscaled ``beta_t`` for the round in ``ctx``."""
        t, space = ctx.t, ctx.space
        delta = self._delta * ctx.delta_factor
        if callable(self._beta):
            value = float(self._beta(t))
        elif not isinstance(self._beta, str):
            value = float(self._beta)
        elif self._beta in ("auto", "theorem1"):
            card = space.cardinality
            if card is None or card > self._n_candidates:
                card = self._n_candidates if card is None else min(card, self._n_candidates)
            value = beta_theorem1(t, card, delta)
        elif self._beta == "theorem2":
            value = beta_theorem2(t, space.d, delta, self._a, self._b, self._r)
        else:
            value = beta_theorem3(t, self._gamma_bound(ctx), self._rkhs_bound, delta)
        if not (math.isfinite(value) and value >= 0):
            raise ValueError(f"beta_t must be finite and >= 0, got {value} at t={t}.")
        return value

    def _gamma_bound(self, ctx: SelectionContext) -> float:
        post = ctx.model.posterior
        D = ctx.space.sobol(_GAMMA_BOUND_POINTS, seed=self._seed)
        scale = post.params.scale
        return gamma_upper_bound(post.kernel(D, D) / scale, post.effective_noise_var / scale, ctx.t)

    def _acquisition(self, ctx: SelectionContext) -> tuple[UCB, dict[str, Any]]:
        early = ctx.early_factor(self._early_beta_factor)
        beta = self._beta_scale * early * self.beta_t(ctx)
        nu = math.sqrt(beta) + ctx.width_bonus
        return UCB(ctx.model.posterior, nu), {"beta": beta, "nu": nu, "early_factor": early}
