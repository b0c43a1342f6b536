"""GP-TS (Chowdhury & Gopalan, ICML 2017, Algorithm 2)."""

from __future__ import annotations

from typing import Any

import numpy as np

from optuna_gpbandit._maximize import allowed
from optuna_gpbandit._space import EncodedSpace
from optuna_gpbandit.acquisition.thompson import thompson_choice
from optuna_gpbandit.samplers._base import SelectionContext
from optuna_gpbandit.samplers._kernelized import KernelizedBanditSampler

_N_TOP = 32  # best observed points included in the candidate set ...
_N_LOCAL = 8  # ... and local perturbations of the best few of them,
_N_PERTURB = 32  # this many around each,
_PERTURB_SD = (0.01, 0.05, 0.2)  # at these scales (encoded units), cycled


class GPTSSampler(KernelizedBanditSampler):
    """GP Thompson sampling: draw ``f_t ~ GP(mu_{t-1}, v_t^2 k_{t-1})`` jointly on a candidate set
    ``D_t`` and take its argmax, with ``v_t = B + R sqrt(2 (gamma_{t-1} + 1 + log(2 / delta)))``.

    ``D_t`` is the whole space when it is discrete with at most ``n_candidates`` points, and
    otherwise ``n_candidates`` scrambled-Sobol points plus the 32 best observed points and 32
    Gaussian perturbations each (sd 0.01, 0.05 and 0.2 in encoded units) of the best 8, so the
    draw can exploit and refine in any dimension.
    Points of trials still pending (other workers) are left out of ``D_t``.
    The draw exists only on ``D_t`` (the paper's rule): there is no continuous polish. Candidates
    whose 5-sigma upper bound lies below the best 5-sigma lower bound cannot plausibly win and are
    left out of the joint draw, which costs ``O(kept^3)``; keep ``n_candidates`` at a few
    thousand at most.

    Parameters
    ----------
    B, R, delta, lam, horizon, gamma
        As for :class:`~optuna_gpbandit.IGPUCBSampler` (``log(4 / delta)`` in Verma et al.'s
        width with ``pending=Censoring(theory_beta=True)``).
    n_candidates
        Quasi-random points of ``D_t``. Default 512 [design choice]: against 1024 it was 3-4x
        faster, with lower cumulative regret on Hartmann-6 and Ackley-5 (4 seeds x 100 trials;
        simple regret better on Hartmann-6, worse on Ackley-5).
    **kwargs
        Common options of :class:`~optuna_gpbandit.samplers._base.GPBanditSampler`.
    """

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("n_candidates", 512)
        super().__init__(**kwargs)

    def _candidates(self, ctx: SelectionContext) -> np.ndarray:
        space: EncodedSpace = ctx.space
        full = space.enumerate(self._n_candidates)
        if full is not None:
            return full
        C = space.sobol(self._n_candidates, seed=int(ctx.rng.integers(2**31 - 1)))
        top = ctx.best_observed(_N_TOP)
        base = np.repeat(top[:_N_LOCAL], _N_PERTURB, axis=0)
        sd = np.resize(np.asarray(_PERTURB_SD), base.shape[0])[:, None]
        noise = ctx.rng.normal(0.0, 1.0, base.shape) * sd * ~space.is_categorical
        return np.unique(np.vstack([C, top, space.snap(base + noise)]), axis=0)

    def _select(self, ctx: SelectionContext) -> tuple[np.ndarray, dict[str, Any]]:
        v, gamma, R = self._width(ctx, thompson=True)
        nu = v + ctx.width_bonus
        C = self._candidates(ctx)
        C = C[allowed(C, ctx.pending_X)]  # a pending trial's point is not drawn again
        i, draw = thompson_choice(ctx.model.posterior, C, nu, ctx.rng)
        n_drawn = int(np.isfinite(draw).sum())
        return C[i], {"v": v, "nu": nu, "gamma": gamma, "R": R,
                      "n_candidates": int(C.shape[0]), "n_drawn": n_drawn}
