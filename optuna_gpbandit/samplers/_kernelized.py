"""Shared settings of Chowdhury & Gopalan's IGP-UCB and GP-TS (ICML 2017).

Working model: prior ``GP(0, k)`` with ``k(x, x) <= 1``, noise variance ``lambda``; the width
``B + R sqrt(2 (gamma_{t-1} + 1 + log(c / delta)))`` with ``c = 1`` (IGP-UCB) or ``2`` (GP-TS).
"""

from __future__ import annotations

import math
from typing import Any, Callable

from optuna_gpbandit._arguments import check_number
from optuna_gpbandit._model import FittedModel, fit_model
from optuna_gpbandit._observations import Observations
from optuna_gpbandit._space import EncodedSpace
from optuna_gpbandit.acquisition.beta import gp_ts_scale, igp_ucb_beta, resolve_gamma, sdf_beta
from optuna_gpbandit.samplers._base import GPBanditSampler, SelectionContext

_DEFAULT_HORIZON = 100


class KernelizedBanditSampler(GPBanditSampler):
    """Base of :class:`IGPUCBSampler` and :class:`GPTSSampler` (parameters documented there)."""

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
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if not (math.isfinite(B) and B >= 0):
            raise ValueError(f"B must be finite and >= 0, got {B!r}.")
        if R is not None and not (math.isfinite(R) and R >= 0):
            raise ValueError(f"R must be finite and >= 0 (or None), got {R!r}.")
        if not 0 < delta < 1:
            raise ValueError(f"delta must lie in (0, 1), got {delta!r}.")
        if horizon is not None and (not isinstance(horizon, int) or horizon < 1):
            raise ValueError(f"horizon must be a positive integer, got {horizon!r}.")
        if isinstance(gamma, str) and gamma not in ("data", "theory"):
            raise ValueError(f"gamma must be 'data', 'theory', a number or a callable; got {gamma!r}.")
        if not isinstance(gamma, str) and not callable(gamma):
            gamma = check_number("gamma", gamma)
        self._lam = self._resolve_lambda(lam, horizon or _DEFAULT_HORIZON)
        if self._lam is not None and self._gp_config.noise_var is not None:
            other = "deterministic_objective=True" if self._deterministic else "noise_var"
            raise ValueError(f"Pass either lam or {other}, not both.")
        self._B, self._R, self._delta, self._gamma = float(B), R, float(delta), gamma
        self._early_beta_factor = check_number("early_beta_factor", early_beta_factor, strict=True)

    @staticmethod
    def _resolve_lambda(lam: float | str | None, horizon: int) -> float | None:
        if lam is None:
            return None
        if lam == "theory":
            return 1.0 + 2.0 / horizon
        if isinstance(lam, str):
            raise ValueError(f"lam must be None, 'theory' or a positive number; got {lam!r}.")
        value = float(lam)
        if not (math.isfinite(value) and value > 0):
            raise ValueError(f"lam must be a positive finite number, got {lam!r}.")
        return max(value, 1e-6)

    def _fit(self, obs: Observations, space: EncodedSpace, previous: dict | None) -> FittedModel:
        noise = None if self._lam is None else self._lam * (self._gp_config.kernel_scale or 1.0)
        return fit_model(obs, space, self._gp_config, previous, self._seed, noise_var=noise)

    def _width_terms(self, ctx: SelectionContext) -> tuple[float, float, float]:
        """``(gamma_{t-1}, R, delta)`` for the current model; ``delta`` includes the constraint
        stage's ``1 / L`` (or ``1 / 2L``), and a given ``R`` its noise factor
        ``sqrt(1 + sum kappa^2)`` (a fitted one holds it already)."""
        post = ctx.model.posterior
        if self._R is None:
            # The paper's experiments: lambda = R^2, R read off the fitted noise. Under
            # Algorithm 3 the GP is fitted to the penalised targets, whose noise already is the
            # composite sqrt(1 + sum kappa^2) R: no second factor.
            R = math.sqrt(post.effective_noise_var / post.params.scale)
        else:
            R = ctx.noise_factor * self._R
        gamma = resolve_gamma(
            self._gamma, ctx.t - 1, ctx.space.d, post.params.kernel, post.information_gain
        )
        return gamma, R, self._delta * ctx.delta_factor

    def _width(self, ctx: SelectionContext, thompson: bool) -> tuple[float, dict[str, float]]:
        """``(width, terms)``: Chowdhury & Gopalan's ``beta_t`` (IGP-UCB) or ``v_t`` (GP-TS),
        times ``sqrt(early_factor)`` while the model is young, or Verma et al.'s with
        ``Censoring(theory_beta=True)`` (the paper's literal width: no early factor). ``terms``
        (``gamma``, ``R``, ``early_factor``) go into the trial's record."""
        gamma, R, delta = self._width_terms(ctx)
        cfg = self._censoring
        if self._pending_mode == "censor" and cfg.theory_beta:
            width, early = sdf_beta(gamma, self._B, R, cfg.width, delta, thompson), 1.0
        else:
            # The early factor scales the variance the acquisition sees, as GP-UCB's scales
            # beta_t: the width (a multiple of the posterior sd) by its square root.
            early = ctx.early_factor(self._early_beta_factor)
            width = (gp_ts_scale if thompson else igp_ucb_beta)(gamma, self._B, R, delta)
            width *= math.sqrt(early)
        return width, {"gamma": gamma, "R": R, "early_factor": early}
