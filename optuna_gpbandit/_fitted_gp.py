"""Observations -> GP posterior, with hyperparameter refits on a schedule.

Fitting hyperparameters is the costly step, so it runs on a schedule: at every sampling call
while the study is small, then only when the number of observations has grown by ``refit_growth``
(5 % by default) since the last fit, on at most ``max_fit_points`` observations (a seeded subset
beyond that). Between refits the last fitted values are reused. Each refit starts from the last
fit; it also starts from the prior's default point while there are at most 64 observations and
whenever the number of observations crossed a power of two.

The fitted values and the size of the data they were fitted on are written to each sampled
trial's system attrs (``gpbandit:state``), and the next call reads them back from the study: the
schedule and the warm starts depend only on the stored history, so a resumed study or another
worker process reproduces them exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
from optuna.logging import get_logger
from optuna.trial import FrozenTrial

from optuna_gpbandit import _randomness
from optuna_gpbandit._conditional import ConditionalSpace
from optuna_gpbandit.model import GPModel
from optuna_gpbandit._observations import Observations, limit_rows
from optuna_gpbandit._space import EncodedSpace
from optuna_gpbandit._storage import STATE, read_trial_json
from optuna_gpbandit.gp.fit import fit_hyperparameters
from optuna_gpbandit.gp.kernels import check_kernel_name
from optuna_gpbandit.gp.posterior import GPParams, GPPosterior, NumericalError

_logger = get_logger(__name__)


@dataclass(frozen=True)
class FittedGP:
    posterior: GPPosterior
    n_fit: int  # number of observations the hyperparameters were fitted on
    refitted: bool

    @property
    def noise_share(self) -> float:
        """The fitted noise variance as a share of the kernel scale (how noisy the model reads
        the objective)."""
        post = self.posterior
        return float(post.effective_noise_var / post.params.scale)

    def state(self, space: EncodedSpace) -> dict[str, Any]:
        return {"names": space.names, "n_fit": self.n_fit, "gp": self.posterior.params.to_json()}


def latest_state(trials: list[FrozenTrial], before_number: int,
                 key: str = "gp") -> dict[str, Any] | None:
    """The most recent model state stored on a trial numbered below ``before_number`` (a
    record holding ``key``: ``"gp"`` for one objective, ``"objectives"`` for several)."""
    for t in sorted(trials, key=lambda t: t.number, reverse=True):
        if t.number < before_number:
            state = read_trial_json(t, STATE)
            if isinstance(state, dict) and key in state:
                return state
    return None


def _needs_refit(n: int, n_fit: int, growth: float) -> bool:
    """Refit when the data shrank (e.g. a history reset) or grew by ``growth`` since the fit."""
    return n < n_fit or n - n_fit >= max(1, int(growth * n_fit))


def _restart_fit(n: int, n_fit: int | None) -> bool:
    """Also start the fit from the prior's default (not only from the last fit) while the study
    is small and whenever the data size crossed a power of two since the last fit, so a local
    optimum of the marginal likelihood is not kept forever."""
    if n_fit is None or n <= 64:
        return True
    return int(np.log2(n)) > int(np.log2(max(n_fit, 1)))


def parse_state(
    previous: dict[str, Any] | None, space: EncodedSpace
) -> tuple[GPParams, int] | None:
    """The hyperparameters and fit size of a stored state, or ``None``.

    A state of another search space is skipped; a corrupt one (e.g. edited by hand, or written
    by another version) is ignored with a warning, and the next fit starts afresh.
    """
    if previous is None or previous.get("names") != space.names:
        return None
    try:
        params = GPParams.from_json(previous["gp"])
        n_fit = previous.get("n_fit", 0)
        if isinstance(n_fit, bool) or not isinstance(n_fit, int) or n_fit < 0:
            raise ValueError(f"n_fit={n_fit!r}")
        values = np.concatenate([params.lengthscales.reshape(-1),
                                 [params.scale, params.noise_var]])
        if params.warp is not None:
            values = np.concatenate([values, params.warp.reshape(-1)])
        if (params.lengthscales.shape != (space.d,)
                or (params.warp is not None and params.warp.shape != (2, space.d))
                or not np.all(np.isfinite(values) & (values > 0))):
            raise ValueError(f"hyperparameters {previous['gp']!r}")
        check_kernel_name(params.kernel)
    except (KeyError, TypeError, ValueError) as exc:
        _logger.warning("Ignoring a corrupt stored GP state (%s); fitting afresh.", exc)
        return None
    return params, n_fit


BRANCH_PSEUDO_COUNT = 1.0
"""A branch's level is the mean of its observed targets shrunk towards the overall mean 0 by
this many pseudo-observations [design choice]."""


def branch_levels(obs: Observations, space: EncodedSpace,
                  model: GPModel) -> Callable[[np.ndarray], np.ndarray] | None:
    """The prior mean of a conditional space's GP: one level per branch, the mean of the
    branch's observed (standardised, warped) targets shrunk towards 0
    (:data:`BRANCH_PSEUDO_COUNT`); ``None`` for a plain space or ``branch_levels=False``.

    Why (issue 47): far from its observed points a GP's mean reverts to the prior mean, the
    average of all targets; in a branch whose values are all poor (a costly model class) the
    unexplored corners then looked as good as anywhere, and UCB kept paying for them. With the
    branch's level as the prior mean, its unexplored parts are expected at its level."""
    if not (model.branch_levels and isinstance(space, ConditionalSpace)):
        return None
    cond = space
    rows = obs.fit_rows
    which = cond.branch_of(obs.X[rows])
    k = len(cond.branches)
    sums = np.bincount(which, weights=obs.y[rows], minlength=k)
    levels = sums / (np.bincount(which, minlength=k) + BRANCH_PSEUDO_COUNT)

    def prior_mean(X: np.ndarray) -> np.ndarray:
        return levels[cond.branch_of(np.atleast_2d(X))]

    return prior_mean


def _posterior(obs: Observations, params: GPParams, space: EncodedSpace,
               prior_mean: Callable[[np.ndarray], np.ndarray] | None = None) -> GPPosterior:
    """The posterior on the whole design, as the rows' rule conditions it
    (:meth:`~optuna_gpbandit._design.RowLabels.posterior`; hallucinated labels are the
    observed-data mean).

    Imputed labels of failed trials carry the extra noise their rule gives them
    (:meth:`~optuna_gpbandit.failures.FailedTrials.noise`).
    """
    noise = obs.failure_rule.noise(obs, params, space.is_categorical)

    def condition(rows: np.ndarray | None, y: np.ndarray) -> GPPosterior:
        if rows is None:
            return GPPosterior(obs.X, y, params, space.is_categorical, noise, prior_mean)
        return GPPosterior(obs.X[rows], y, params, space.is_categorical,
                           None if noise is None else noise[rows], prior_mean)

    return obs.pending_rule.posterior(obs.observed, obs.y, obs.X, condition)


def fit_gp(
    obs: Observations,
    space: EncodedSpace,
    model: GPModel,
    previous: dict[str, Any] | None,
    seed: int,
) -> FittedGP:
    """Posterior for ``obs``: refit or reuse hyperparameters according to the schedule.

    Hyperparameters are fitted on the real observations only (censored and imputed labels
    would inflate the noise and shrink the lengthscales); the posterior conditions on every row.
    """
    noise = model.noise_var
    mean = branch_levels(obs, space, model)
    n = obs.n_observed_all  # the refit schedule follows all observations
    fixed_l = model.lengthscales_for(space)
    if fixed_l is not None and model.kernel_scale is not None and noise is not None:
        params = GPParams(model.kernel, fixed_l.copy(), model.kernel_scale, noise)
        return FittedGP(_posterior(obs, params, space, mean), n, False)

    parsed = parse_state(previous, space)
    prev_params, prev_n_fit = parsed if parsed is not None else (None, 0)
    if (
        prev_params is None
        or prev_params.kernel != model.kernel
        or (prev_params.warp is not None) != model.warps_inputs
        or _needs_refit(n, prev_n_fit, model.refit_growth)
    ):
        X, y = obs.X[obs.fit_rows], obs.y[obs.fit_rows]
        if mean is not None:
            y = y - mean(X)
        if X.shape[0] > model.max_fit_points:
            rng = _randomness.trial_rng(seed, n, _randomness.FIT)
            idx = np.sort(rng.choice(X.shape[0], model.max_fit_points, replace=False))
            X, y = X[idx], y[idx]
        params = fit_hyperparameters(
            X, y, space.is_categorical, model.kernel,
            fixed_lengthscales=fixed_l, fixed_scale=model.kernel_scale,
            fixed_noise_var=noise, warm_start=prev_params,
            restart=_restart_fit(n, None if parsed is None else prev_n_fit),
            prior_dim=space.prior_dim, input_warping=model.warps_inputs,
            min_noise_var=model.min_noise_var,
        )
        n_fit, refitted = n, True
    else:  # reuse the last fit; fixed values always win over stored ones
        params = GPParams(
            model.kernel,
            prev_params.lengthscales if fixed_l is None else fixed_l.copy(),
            prev_params.scale if model.kernel_scale is None else model.kernel_scale,
            prev_params.noise_var if noise is None else noise,
            prev_params.warp,
        )
        n_fit, refitted = prev_n_fit, False
    return FittedGP(_posterior(obs, params, space, mean), n_fit, refitted)


def capped_fit(obs: Observations, space: EncodedSpace, model: GPModel,
               previous: dict[str, Any] | None, seed: int, number: int,
               what: str = "the GP") -> tuple[Observations, FittedGP] | None:
    """``obs`` cut to ``model.max_posterior_points`` rows
    (:func:`~optuna_gpbandit._observations.limit_rows`, the subset drawn from trial
    ``number``'s stream) and the GP fitted on them (:func:`fit_gp`); ``None`` (logged,
    naming ``what`` and the trial) when the GP cannot be factorised: the caller then samples
    a quasi-random point."""
    rng = _randomness.trial_rng(seed, number, _randomness.SUBSET)
    obs = limit_rows(obs, model.max_posterior_points, rng, space.is_categorical)
    try:
        return obs, fit_gp(obs, space, model, previous, seed)
    except NumericalError:
        _logger.warning("Trial %d: %s could not be factorised; sampling a quasi-random "
                        "point.", number, what)
        return None
