"""The model's settings (``model=GPModel(...)``): one object, read where the model is built.

The observation stage (:func:`optuna_gpbandit._observations.build_observations`: standardised
and warped targets) and the model stage (:func:`optuna_gpbandit._fitted_gp.fit_gp`,
:func:`~optuna_gpbandit._fitted_gp.capped_fit`: kernel, hyperparameters, refit schedule, posterior
cap) take this object whole, so a new model option is a field here and the code that uses it.
What depends on the study rather than on the user (output warping with several objectives or
with change detection, the deterministic noise floor, the constraint models' GP) is decided
by the methods below, not by the pipeline.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from optuna_gpbandit._arguments import check_bool, check_int, check_number
from optuna_gpbandit._space import EncodedSpace
from optuna_gpbandit.gp.fit import MIN_NOISE_VAR
from optuna_gpbandit.gp.kernels import check_kernel_name

MIN_LENGTHSCALE = 1e-6
"""Smallest fixed ``lengthscale`` accepted (unit-scaled ranges; the fit's own lower bound is
1e-3). Below about 1e-150 the kernel's scaled squared distances overflow to inf / NaN."""


@dataclass(frozen=True, kw_only=True)
class GPModel:
    """The Gaussian-process model of every sampler: kernel, hyperparameters, target
    transforms, refit schedule and size caps. Pass it as ``model=GPModel(...)``.

    Hyperparameters left at ``None`` are fitted by MAP marginal likelihood on encoded inputs
    (each parameter's range scaled to ``[0, 1]``; logarithmic ones on the log scale) and
    standardised targets.

    Parameters
    ----------
    kernel
        ``"matern52"`` (default) or ``"se"``; ARD lengthscales over the encoded parameters.
    lengthscale, kernel_scale, noise_var
        Fix these hyperparameters instead of fitting them (encoded unit-cube inputs,
        standardised targets). ``lengthscale`` may be a scalar or one value per parameter (in
        search-space order), each at least ``1e-6``; all three positive and finite. The
        sampler's ``deterministic_objective=True`` fixes ``noise_var`` at its floor
        (``noise_floor``) and cannot be combined with a ``noise_var`` here. Chowdhury &
        Gopalan's ``lambda = 1 + 2 / T`` (IGP-UCB, GP-TS) is ``noise_var=1 + 2 / T`` (times
        ``kernel_scale`` if fixed).
    noise_floor
        The least noise variance the fit may choose (standardised targets), in ``(0, 0.01]``.
        ``None`` (default): the sampler's, ``1e-10`` for the objective models of
        :class:`~optuna_gpbandit.GPUCBSampler`, :class:`~optuna_gpbandit.GPTSSampler` and
        :class:`~optuna_gpbandit.IGPUCBSampler`, and ``1e-6`` elsewhere (change detection's
        residual test, the constraint models, :class:`~optuna_gpbandit.ConstrainedGPUCBSampler`'s
        objective model). The floor bounds what the model can resolve: at ``1e-6`` (a
        standard deviation of a thousandth of the targets' spread) a run closing in on a
        smooth optimum stops seeing its own improvements; on COCO's bbob functions' validation
        instances ``1e-10`` gained GP-UCB +0.9 ± 0.3 of the fraction of targets (x 100),
        GP-TS +1.0 ± 0.3 and IGP-UCB +1.2 ± 0.3 (docs/benchmarks.md, "The noise floor",
        "GP-TS's noise floor" and "IGP-UCB's noise floor"). A noisy objective's fitted noise
        stays far above either floor.
    standardize
        Standardise the objective values before the GP (default). ``False``: the raw,
        direction-oriented values, as the papers' theory assumes (no output warping then).
    output_warping
        ``True`` (default): the poorer half of the standardised values is compressed by rank
        before the GP sees it: each is lifted to at least the normal quantile of its rank,
        with the median and the better half's spread taken from a space-filling subset of the
        trials (:mod:`optuna_gpbandit._warping`). A few configurations far worse than the
        rest (chance-level accuracy, a diverging run) then no longer set the model's
        amplitude; the better half and the order of all values are kept. Applies to
        single-objective studies without change detection (whose residual test needs the model
        in objective units); records stay in objective units and count the lifted values
        (``n_warped``). ``False``: the standardised values (the papers' model).
        Measured: docs/benchmarks.md, "Output warping".
    input_warping
        ``True`` (default): each numeric parameter may pass through a monotone Kumaraswamy warp
        ``1 - (1 - x^a)^b`` of its unit-scaled range, fitted with the other hyperparameters
        (Snoek et al. 2014; :mod:`optuna_gpbandit.gp.input_warp`) and kept only when it raises
        the log posterior by more than the BIC penalty (``0.5 log n`` per warp parameter).
        Categorical parameters are never warped, nor anything when ``lengthscale`` is fixed.
        ``False``: the stationary kernel of the papers. Measured: docs/benchmarks.md, "Input
        warping".
    branch_levels
        ``True`` (default): in a conditional (define-by-run) space the GP's prior mean is one
        level per branch, the branch's mean target shrunk towards the overall mean, so the
        unexplored parts of a branch whose values are all poor are expected at its level, not
        at the average of all trials (:func:`optuna_gpbandit._fitted_gp.branch_levels`). ``False``:
        one prior mean 0 (standardised) everywhere. No effect in a plain space.
    refit_growth, max_fit_points
        Refit the hyperparameters when the number of observations grew by this fraction since
        the last fit (default 0.05; ``0`` refits every trial), on at most this many points
        (default 256; a seeded subset beyond it). Between refits the last fit is reused.
    max_posterior_points
        At most this many trials enter the GP posterior (default 1500; ``None``: all). Beyond
        it the posterior conditions on the pending trials, the best half of the budget and,
        of the other trials, spread-out witnesses of every region evaluated and a random
        sample (what it saves and costs: docs/benchmarks.md, "The posterior cap"). The round
        index and the refit schedule still count every trial.
    """

    kernel: str = "matern52"
    lengthscale: float | Sequence[float] | None = None
    kernel_scale: float | None = None
    noise_var: float | None = None
    noise_floor: float | None = None
    standardize: bool = True
    output_warping: bool = True
    input_warping: bool = True
    branch_levels: bool = True
    refit_growth: float = 0.05
    max_fit_points: int = 256
    max_posterior_points: int | None = 1500

    def __post_init__(self) -> None:
        check_kernel_name(self.kernel)
        if self.lengthscale is not None:
            try:
                ls = np.asarray(self.lengthscale, dtype=float)
            except (TypeError, ValueError):
                ls = np.array([np.nan])
            if ls.ndim > 1 or ls.size == 0 or not np.all(np.isfinite(ls) & (ls > 0)):
                raise ValueError(
                    "lengthscale must be a positive finite number or a sequence of them (one per "
                    f"parameter), got {self.lengthscale!r}."
                )
            if np.any(ls < MIN_LENGTHSCALE):
                raise ValueError(
                    f"lengthscale must be at least {MIN_LENGTHSCALE:g}: lengthscales are in units "
                    "of each parameter's (unit-scaled) range, and far below any resolution the "
                    f"kernel's squared distances overflow; got {self.lengthscale!r}."
                )
        for name in ("kernel_scale", "noise_var", "noise_floor"):
            v = getattr(self, name)
            if v is not None:
                check_number(name, v, strict=True)
        if self.noise_floor is not None and self.noise_floor > 1e-2:
            raise ValueError("noise_floor is a variance of the standardised targets and must be "
                             f"at most 0.01 (a noisier objective's fitted noise is above it "
                             f"anyway); got {self.noise_floor!r}.")
        for name in ("standardize", "output_warping", "input_warping", "branch_levels"):
            check_bool(name, getattr(self, name))
        check_number("refit_growth", self.refit_growth)
        check_int("max_fit_points", self.max_fit_points, 2)
        if self.max_posterior_points is not None:
            check_int("max_posterior_points", self.max_posterior_points, 2)

    # ------------------------------------------------------------------ policy
    @property
    def min_noise_var(self) -> float:
        """The noise variance's floor in force: ``noise_floor``, or
        :data:`~optuna_gpbandit.gp.fit.MIN_NOISE_VAR` where no sampler set one."""
        return MIN_NOISE_VAR if self.noise_floor is None else self.noise_floor

    def floored(self, default: float) -> GPModel:
        """These settings with the sampler's floor ``default`` where ``noise_floor`` is
        ``None``."""
        if self.noise_floor is not None:
            return self
        return dataclasses.replace(self, noise_floor=default)

    def deterministic(self, deterministic_objective: bool) -> GPModel:
        """These settings for ``deterministic_objective`` (GPSampler's argument): the noise
        fixed at its floor; an error naming both arguments if ``noise_var`` is fixed too."""
        if not check_bool("deterministic_objective", deterministic_objective):
            return self
        if self.noise_var is not None:
            raise ValueError("Pass either deterministic_objective=True or "
                             "GPModel(noise_var=...), not both.")
        return dataclasses.replace(self, noise_var=self.min_noise_var)

    def for_study(self, n_objectives: int, objective_units: bool) -> GPModel:
        """The settings one suggestion uses: output warping only for one objective whose model
        is not read in objective units (change detection's residual test)."""
        if self.output_warping and (n_objectives > 1 or objective_units):
            return dataclasses.replace(self, output_warping=False)
        return self

    def for_constraints(self) -> GPModel:
        """The settings of the constraint models (feasible-point rule): this kernel, every
        hyperparameter fitted, standardised values, no warps (a constraint's sign, not its
        rank, decides)."""
        return GPModel(kernel=self.kernel, input_warping=False, output_warping=False)

    @property
    def warps_outputs(self) -> bool:
        """Output warping applies (asked for, on standardised targets)."""
        return self.output_warping and self.standardize

    @property
    def warps_inputs(self) -> bool:
        """Input warping is fitted: asked for, and the lengthscales are not fixed (a fixed
        lengthscale fixes the input geometry)."""
        return self.input_warping and self.lengthscale is None

    def lengthscales_for(self, space: EncodedSpace) -> np.ndarray | None:
        """The fixed lengthscales, one per parameter of ``space`` (``None`` if fitted)."""
        if self.lengthscale is None:
            return None
        ls = np.asarray(self.lengthscale, dtype=float)
        if ls.ndim == 1 and ls.size not in (1, space.d):
            raise ValueError(
                f"lengthscale has {ls.size} values but the search space has {space.d} "
                f"parameters ({', '.join(space.names)}); give one value per parameter in this "
                "order, or a scalar."
            )
        return np.broadcast_to(ls.reshape(-1) if ls.ndim else ls, (space.d,)).copy()
