"""Shared width of Chowdhury & Gopalan's IGP-UCB and GP-TS (ICML 2017).

Working model: prior ``GP(0, k)`` with ``k(x, x) <= 1``, noise variance ``lambda``; the width
``B + R sqrt(2 (gamma_{t-1} + 1 + log(c / delta)))`` with ``c = 1`` (IGP-UCB) or ``2`` (GP-TS)
(:class:`~optuna_gpbandit.acquisition.width.InfoGainWidth`).
"""

from __future__ import annotations

import math
from typing import Any

from optuna_gpbandit._arguments import check_instance
from optuna_gpbandit.acquisition.beta import gp_ts_scale, igp_ucb_beta, resolve_gamma
from optuna_gpbandit.acquisition.width import InfoGainWidth
from optuna_gpbandit.samplers._base import GPBanditSampler, SelectionContext


class KernelizedBanditSampler(GPBanditSampler):
    """Base of :class:`IGPUCBSampler` and :class:`GPTSSampler` (parameters documented there)."""

    def __init__(self, *, width: InfoGainWidth, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._width: InfoGainWidth = check_instance("width", width, InfoGainWidth,
                                                    "an InfoGainWidth instance")

    def _width_terms(self, ctx: SelectionContext) -> tuple[float, float, float]:
        """``(gamma_{t-1}, R, delta)`` for the current model; ``delta`` includes the constraint
        stage's ``1 / L`` (or ``1 / 2L``), and a given ``R`` its noise factor
        ``sqrt(1 + sum kappa^2)`` (a fitted one holds it already)."""
        post, w = ctx.gp.posterior, self._width
        if w.R is None:
            # The paper's experiments: lambda = R^2, R read off the fitted noise. Under
            # Algorithm 3 the GP is fitted to the penalised targets, whose noise already is the
            # composite sqrt(1 + sum kappa^2) R: no second factor.
            R = math.sqrt(post.effective_noise_var / post.params.scale)
        else:
            R = ctx.noise_factor * w.R
        gamma = resolve_gamma(w.gamma, ctx.t - 1, ctx.space.d, post.params.kernel,
                              post.information_gain)
        return gamma, R, w.delta * ctx.delta_factor

    def width_t(self, ctx: SelectionContext, thompson: bool) -> tuple[float, dict[str, Any]]:
        """``(width, terms)``: Chowdhury & Gopalan's ``beta_t`` (IGP-UCB) or ``v_t`` (GP-TS),
        times ``sqrt(early_factor)`` while the model is young, or Verma et al.'s with
        ``Censoring(theory_beta=True)`` (the paper's literal width: no early factor). ``terms``
        (``gamma``, ``R``, ``early_factor``) go into the trial's record."""
        gamma, R, delta = self._width_terms(ctx)
        B = self._width.B
        theory = self._settings.pending.theory_width(gamma, B, R, delta, thompson)
        if theory is not None:  # the pending rule's theory sets the width
            width, early = theory, 1.0
        else:
            # The early factor scales the variance the acquisition sees, as GP-UCB's scales
            # beta_t: the width (a multiple of the posterior sd) by its square root.
            early = ctx.early_factor(self._width.early_factor)
            width = (gp_ts_scale if thompson else igp_ucb_beta)(gamma, B, R, delta)
            width *= math.sqrt(early)
        return width, {"gamma": gamma, "R": R, "early_factor": early}
