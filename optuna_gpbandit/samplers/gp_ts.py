"""GP-TS (Chowdhury & Gopalan, ICML 2017, Algorithm 2)."""

from __future__ import annotations

from typing import Any

import numpy as np
from optuna.samplers import BaseSampler

from optuna_gpbandit._arguments import check_instance, forward
from optuna_gpbandit.failures import FailedTrials
from optuna_gpbandit.model import GPModel
from optuna_gpbandit._maximize import allowed
from optuna_gpbandit.reset import NoReset, Reset
from optuna_gpbandit.search import AcquisitionSearch
from optuna_gpbandit.pending import Hallucinate, PendingRule
from optuna_gpbandit._space import EncodedSpace
from optuna_gpbandit.acquisition.pathwise import SamplePath
from optuna_gpbandit.acquisition.thompson import thompson_choice
from optuna_gpbandit.acquisition.width import CandidateDraw, InfoGainWidth, PathDraw
from optuna_gpbandit.samplers._base import SelectionContext
from optuna_gpbandit.samplers._docs import document
from optuna_gpbandit.samplers._kernelized import KernelizedBanditSampler
from optuna_gpbandit.samplers._settings import ConstraintsArg, ConstraintsFunc

_N_TOP = 32  # best observed points included in the candidate set ...
_N_LOCAL = 8  # ... and local perturbations of the best few of them,
_N_PERTURB = 32  # this many around each,
_PERTURB_SD = (0.01, 0.05, 0.2)  # at these scales (encoded units), cycled


@document
class GPTSSampler(KernelizedBanditSampler):
    """GP Thompson sampling: draw ``f_t ~ GP(mu_{t-1}, v_t^2 k_{t-1})`` and take its argmax, with
    ``v_t = B + R sqrt(2 (gamma_{t-1} + 1 + log(2 / delta)))``.

    How the draw is made (``draw``): a function on the whole space maximised like an
    acquisition (:class:`~optuna_gpbandit.PathDraw`, the default), or the paper's joint draw on
    a finite candidate set (:class:`~optuna_gpbandit.CandidateDraw`).

    ``R`` defaults to 0 here [design choice], so ``v_t = B``: the draw's spread is the
    posterior's own (which already widens with the fitted noise), scaled by ``B``. With ``R``
    read off the fitted noise (``R=None``, IGP-UCB's default) the width grew on noiseless
    problems: early in a 6-D study the data cannot tell noise from signal, the fitted noise
    sits at its prior's mean, and ``R sqrt(2 gamma)`` grows with every trial. A draw that
    wide, maximised over the whole space, is nearly random search. On a noisy objective
    ``R=None`` was better: pass ``InfoGainWidth(R=None)`` (or a known noise level) for
    objectives known to be noisy (docs/benchmarks.md, "GP-TS's draw and candidates").

    Points of trials still pending (other workers) are never chosen while any other is left.

    ``search`` defaults to ``AcquisitionSearch(n_candidates=512)`` [design choice]: with
    ``CandidateDraw()`` it was faster than 1024, with lower cumulative regret
    (docs/benchmarks.md, "GP-TS's draw and candidates"). ``n_startup_trials`` defaults to 5,
    where its draws explored better than a longer design (docs/benchmarks.md, "Start-up
    design").

    Parameters
    ----------
    width
        ``v_t``'s constants ``B``, ``R``, ``delta``, ``gamma`` and its early factor
        (:class:`~optuna_gpbandit.InfoGainWidth`; default ``InfoGainWidth(R=0.0,
        early_factor=3.0)``). With ``pending=Censoring(theory_beta=True)`` the width is Verma
        et al.'s, with ``log(4 / delta)``.
    draw
        :class:`~optuna_gpbandit.PathDraw` (default; ``n_features`` random Fourier features)
        or :class:`~optuna_gpbandit.CandidateDraw` (the paper's finite ``D_t``).
    <common parameters>
    <settings parameters>
    <multi_objective parameters>
    """

    _multi_objective = True  # random scalarisations (samplers/_multi.py)

    def __init__(
        self,
        *,
        width: InfoGainWidth = InfoGainWidth(R=0.0, early_factor=3.0),
        draw: PathDraw | CandidateDraw = PathDraw(),
        seed: int | None = None,
        independent_sampler: BaseSampler | None = None,
        n_startup_trials: int | None = 5,
        deterministic_objective: bool | None = None,
        constraints_func: ConstraintsFunc | None = None,
        warn_independent_sampling: bool = True,
        model: GPModel = GPModel(),
        search: AcquisitionSearch = AcquisitionSearch(n_candidates=512),
        pending: PendingRule = Hallucinate(),
        failures: FailedTrials = FailedTrials(),
        reset: Reset | None = NoReset(),
        constraints: ConstraintsArg = "auto",
        scalarization: str = "chebyshev",
    ) -> None:
        super().__init__(**forward(KernelizedBanditSampler, locals()))
        self._draw: PathDraw | CandidateDraw = check_instance(
            "draw", draw, (PathDraw, CandidateDraw), "PathDraw() or CandidateDraw()")

    def _candidates(self, ctx: SelectionContext) -> np.ndarray:
        """``D_t`` of a space too large to enumerate (see the class docstring)."""
        space: EncodedSpace = ctx.space
        C = space.sobol(ctx.search.n_candidates, seed=int(ctx.rng.integers(2**31 - 1)))
        top = ctx.best_observed(_N_TOP)
        base = np.repeat(top[:_N_LOCAL], _N_PERTURB, axis=0)
        sd = np.resize(np.asarray(_PERTURB_SD), base.shape[0])[:, None]
        noise = ctx.rng.normal(0.0, 1.0, base.shape) * sd * ~space.is_categorical
        noise *= base >= 0.0  # a conditional space's inactive codes (negative) stay as they are
        return np.unique(np.vstack([C, top, space.snap(base + noise)]), axis=0)

    def _acquisition(self, ctx: SelectionContext) -> tuple[SamplePath, dict[str, Any]]:
        v, terms = self.width_t(ctx, thompson=True)
        nu = v + ctx.width_bonus
        # (a multi-objective study scalarises path draws, whichever the draw)
        path = SamplePath(ctx.gp.posterior, ctx.space, nu, ctx.rng, self._draw.n_features)
        return path, {"v": v, "nu": nu, **terms, "draw": "path"}

    def _select(self, ctx: SelectionContext) -> tuple[np.ndarray, dict[str, Any]]:
        full = ctx.space.enumerate(ctx.search.n_candidates)
        if not self._draw.on_candidates and full is None:
            path, record = self._acquisition(ctx)
            return ctx.maximise(path), record
        v, terms = self.width_t(ctx, thompson=True)
        nu = v + ctx.width_bonus
        C = full if full is not None else self._candidates(ctx)
        C = C[allowed(C, ctx.excluded, ctx.search.min_distance)]  # nor a pending trial's point
        i, draw = thompson_choice(ctx.gp.posterior, C, nu, ctx.rng)
        n_drawn = int(np.isfinite(draw).sum())
        return C[i], {"v": v, "nu": nu, **terms,
                      "n_candidates": int(C.shape[0]), "n_drawn": n_drawn}
