"""GP-TS (Chowdhury & Gopalan, ICML 2017, Algorithm 2)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Sequence

if TYPE_CHECKING:
    from optuna.samplers import BaseSampler
    from optuna.trial import FrozenTrial

    from optuna_gpbandit._pending import Censoring
    from optuna_gpbandit.changepoint import ChangeDetection
    from optuna_gpbandit.constraints import FeasibleConstraints, LongTermConstraints

import numpy as np

from optuna_gpbandit._arguments import check_int, forward
from optuna_gpbandit._maximize import allowed
from optuna_gpbandit._space import EncodedSpace
from optuna_gpbandit.acquisition.pathwise import DEFAULT_FEATURES, SamplePath
from optuna_gpbandit.acquisition.thompson import thompson_choice
from optuna_gpbandit.samplers._base import SelectionContext
from optuna_gpbandit.samplers._docs import document
from optuna_gpbandit.samplers._kernelized import KernelizedBanditSampler

_DRAWS = ("path", "candidates")
_N_TOP = 32  # best observed points included in the candidate set ...
_N_LOCAL = 8  # ... and local perturbations of the best few of them,
_N_PERTURB = 32  # this many around each,
_PERTURB_SD = (0.01, 0.05, 0.2)  # at these scales (encoded units), cycled


@document
class GPTSSampler(KernelizedBanditSampler):
    """GP Thompson sampling: draw ``f_t ~ GP(mu_{t-1}, v_t^2 k_{t-1})`` and take its argmax, with
    ``v_t = B + R sqrt(2 (gamma_{t-1} + 1 + log(2 / delta)))``.

    How the draw is made (``draw``):

    * ``"path"`` (default) [design choice]: ``f_t`` is a function on the whole space, a prior
      draw from ``n_features`` random Fourier features corrected by the data (pathwise
      conditioning, :class:`~optuna_gpbandit.acquisition.pathwise.SamplePath`), and its
      argmax is found like an acquisition's: quasi-random candidates and the best observed
      points, polished by L-BFGS-B and discrete line searches. The paper's rule with ``D_t``
      the whole space; the prior part is approximate (variance error ``O(1/sqrt(M))``), the
      data correction exact. A fully discrete space with at most ``n_candidates`` points is
      drawn jointly and exactly instead.
    * ``"candidates"``: the paper's finite ``D_t``, drawn jointly. ``D_t`` is the whole space
      when it is discrete with at most ``n_candidates`` points, and otherwise
      ``n_candidates`` scrambled-Sobol points plus the 32 best observed points and 32
      Gaussian perturbations each (sd 0.01, 0.05 and 0.2 in encoded units) of the best 8.
      There is no continuous polish. Candidates whose 5-sigma upper bound lies below the best
      5-sigma lower bound cannot plausibly win and are left out of the joint draw, which
      costs ``O(kept^3)``; keep ``n_candidates`` at a few thousand at most. In 4-6
      dimensions this finite set is too coarse: median simple regret 0.152 on Hartmann-6 and
      2.04 on Levy-4 against the path draw's (docs/benchmarks.md).

    ``R`` defaults to 0 here [design choice], so ``v_t = B``: the draw's spread is the
    posterior's own (which already widens with the fitted noise), scaled by ``B``. With ``R``
    read off the fitted noise (``R=None``, IGP-UCB's default) the width grew to ``v_t`` = 3
    on noiseless problems: early in a 6-D study the data cannot tell noise from signal, the
    fitted noise sits at its prior's mean (0.037 of the variance), and ``R sqrt(2 gamma)``
    grows with every trial. A draw that wide, maximised over the whole space, is nearly
    random search (median simple regret 0.76 on Hartmann-6 and 2.7 on Ackley-5, 10 seeds x
    100 trials, against 0.119 and 0.049 with ``R=0`` in the quick suite). On Hartmann-3
    with noise sd 0.2, ``R=None`` was better (0.0049 against 0.0142; GP-UCB 0.0124): pass
    ``R=None`` (or a known noise level) for objectives known to be noisy.

    Points of trials still pending (other workers) are never chosen while any other is left.

    ``n_candidates`` defaults to 512 [design choice]: with ``draw="candidates"`` it was 3-4x
    faster than 1024, with lower cumulative regret on Hartmann-6 and Ackley-5 (4 seeds x 100
    trials; simple regret better on Hartmann-6, worse on Ackley-5).

    Parameters
    ----------
    <kernelized parameters>
    <common parameters>
    <restarts parameters>
    <warping parameters>
    <input_warping parameters>
    <multi_objective parameters>
    draw
        ``"path"`` (default): a draw on the whole space, maximised like an acquisition;
        ``"candidates"``: the paper's joint draw on a finite candidate set (see above).
    n_features
        Random Fourier features of the path draw's prior part (default 1024).
    """

    _multi_objective = True  # random scalarisations (samplers/_multi.py)

    def __init__(
        self,
        *,
        B: float = 0.5,
        R: float | None = 0.0,
        delta: float = 0.1,
        lam: float | str | None = None,
        horizon: int | None = None,
        gamma: str | float | Callable[[int, int], float] = "data",
        early_beta_factor: float = 3.0,
        seed: int | None = None,
        n_startup_trials: int | None = 5,
        independent_sampler: BaseSampler | None = None,
        deterministic_objective: bool = False,
        kernel: str = "matern52",
        lengthscale: float | Sequence[float] | None = None,
        kernel_scale: float | None = None,
        noise_var: float | None = None,
        standardize: bool = True,
        n_candidates: int = 512,
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
        draw: str = "path",
        n_features: int = DEFAULT_FEATURES,
    ) -> None:
        super().__init__(**forward(KernelizedBanditSampler, locals()))
        if draw not in _DRAWS:
            raise ValueError(f"draw must be one of {_DRAWS}, got {draw!r}.")
        self._draw = draw
        self._n_features = check_int("n_features", n_features, 1)

    def _candidates(self, ctx: SelectionContext) -> np.ndarray:
        """``D_t`` of a space too large to enumerate (see the class docstring)."""
        space: EncodedSpace = ctx.space
        C = space.sobol(self._n_candidates, seed=int(ctx.rng.integers(2**31 - 1)))
        top = ctx.best_observed(_N_TOP)
        base = np.repeat(top[:_N_LOCAL], _N_PERTURB, axis=0)
        sd = np.resize(np.asarray(_PERTURB_SD), base.shape[0])[:, None]
        noise = ctx.rng.normal(0.0, 1.0, base.shape) * sd * ~space.is_categorical
        noise *= base >= 0.0  # a conditional space's inactive codes (negative) stay as they are
        return np.unique(np.vstack([C, top, space.snap(base + noise)]), axis=0)

    def _acquisition(self, ctx: SelectionContext) -> tuple[SamplePath, dict[str, Any]]:
        v, terms = self._width(ctx, thompson=True)
        nu = v + ctx.width_bonus
        path = SamplePath(ctx.model.posterior, ctx.space, nu, ctx.rng, self._n_features)
        return path, {"v": v, "nu": nu, **terms, "draw": "path"}

    def _select(self, ctx: SelectionContext) -> tuple[np.ndarray, dict[str, Any]]:
        full = ctx.space.enumerate(self._n_candidates)
        if self._draw == "path" and full is None:
            path, record = self._acquisition(ctx)
            return self._maximise(ctx, path), record
        v, terms = self._width(ctx, thompson=True)
        nu = v + ctx.width_bonus
        C = full if full is not None else self._candidates(ctx)
        C = C[allowed(C, ctx.excluded)]  # a pending trial's point is not drawn again
        i, draw = thompson_choice(ctx.model.posterior, C, nu, ctx.rng)
        n_drawn = int(np.isfinite(draw).sum())
        return C[i], {"v": v, "nu": nu, **terms,
                      "n_candidates": int(C.shape[0]), "n_drawn": n_drawn}
