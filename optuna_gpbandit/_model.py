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
from typing import Any, Sequence

import numpy as np
from optuna.trial import FrozenTrial

from optuna_gpbandit import _randomness
from optuna_gpbandit._observations import Observations
from optuna_gpbandit._space import EncodedSpace
from optuna_gpbandit._storage import read_trial_json
from optuna_gpbandit.gp.fit import fit_hyperparameters
from optuna_gpbandit.gp.kernels import check_kernel_name
from optuna_gpbandit.gp.posterior import GPParams, GPPosterior

STATE_KEY = "state"


@dataclass(frozen=True)
class GPConfig:
    """GP model settings shared by every sampler (see the samplers' docstrings)."""

    kernel: str = "matern52"
    lengthscale: float | Sequence[float] | None = None
    kernel_scale: float | None = None
    noise_var: float | None = None
    refit_growth: float = 0.05
    max_fit_points: int = 256

    def __post_init__(self) -> None:
        check_kernel_name(self.kernel)
        if self.lengthscale is not None and np.any(np.asarray(self.lengthscale, dtype=float) <= 0):
            raise ValueError("lengthscale must be positive.")
        for name in ("kernel_scale", "noise_var"):
            v = getattr(self, name)
            if v is not None and not (np.isfinite(v) and v > 0):
                raise ValueError(f"{name} must be a positive finite number, got {v}.")
        if not (self.refit_growth >= 0):
            raise ValueError("refit_growth must be >= 0.")
        if self.max_fit_points < 2:
            raise ValueError("max_fit_points must be >= 2.")

    @property
    def fits_anything(self) -> bool:
        return self.lengthscale is None or self.kernel_scale is None or self.noise_var is None


@dataclass(frozen=True)
class FittedModel:
    posterior: GPPosterior
    n_fit: int  # number of observations the hyperparameters were fitted on
    refitted: bool

    def state(self, space: EncodedSpace) -> dict[str, Any]:
        return {"names": space.names, "n_fit": self.n_fit, "gp": self.posterior.params.to_json()}


def latest_state(trials: list[FrozenTrial], before_number: int) -> dict[str, Any] | None:
    """The most recent model state stored on a trial numbered below ``before_number``."""
    for t in sorted(trials, key=lambda t: t.number, reverse=True):
        if t.number < before_number:
            state = read_trial_json(t, STATE_KEY)
            if isinstance(state, dict) and "gp" in state:
                return state
    return None


def _needs_refit(n: int, n_fit: int, growth: float) -> bool:
    """Refit when the data shrank (e.g. a history reset) or grew by ``growth`` since the fit."""
    return n < n_fit or n - n_fit >= max(1, int(growth * n_fit))


def _restart_fit(n: int, previous: dict[str, Any] | None) -> bool:
    """Also start the fit from the prior's default (not only from the last fit) while the study
    is small and whenever the data size crossed a power of two since the last fit, so a local
    optimum of the marginal likelihood is not kept forever."""
    if previous is None or n <= 64:
        return True
    n_fit = max(int(previous.get("n_fit", 1)), 1)
    return int(np.log2(n)) > int(np.log2(n_fit))


def _posterior(obs: Observations, params: GPParams, space: EncodedSpace) -> GPPosterior:
    """The posterior on the whole design; hallucinated labels are the observed-data mean."""
    y = obs.y
    if obs.hallucinate:
        seen = obs.observed
        base = GPPosterior(obs.X[seen], obs.y[seen], params, space.is_categorical)
        y = obs.y.copy()
        y[~seen] = base.mean_var(obs.X[~seen])[0]
    return GPPosterior(obs.X, y, params, space.is_categorical)


def fit_model(
    obs: Observations,
    space: EncodedSpace,
    config: GPConfig,
    previous: dict[str, Any] | None,
    seed: int,
    noise_var: float | None = None,
) -> FittedModel:
    """Posterior for ``obs``: refit or reuse hyperparameters according to the schedule.

    Hyperparameters are fitted on the observed rows only (censored labels would inflate the
    noise and shrink the lengthscales); the posterior conditions on every row.
    ``noise_var`` overrides ``config.noise_var`` (IGP-UCB/GP-TS with a fixed lambda).
    """
    noise = config.noise_var if noise_var is None else noise_var
    n = obs.n_observed_all  # the refit schedule follows all observations
    fixed_l = None if config.lengthscale is None else np.broadcast_to(
        np.asarray(config.lengthscale, dtype=float), (space.d,)
    )
    if fixed_l is not None and config.kernel_scale is not None and noise is not None:
        params = GPParams(config.kernel, fixed_l.copy(), config.kernel_scale, noise)
        return FittedModel(_posterior(obs, params, space), n, False)

    prev_params, prev_n_fit = None, 0
    if previous is not None and previous.get("names") == space.names:
        try:
            prev_params = GPParams.from_json(previous["gp"])
            prev_n_fit = int(previous.get("n_fit", 0))
        except (KeyError, TypeError, ValueError):
            prev_params = None
    if (
        prev_params is None
        or prev_params.kernel != config.kernel
        or _needs_refit(n, prev_n_fit, config.refit_growth)
    ):
        X, y = obs.X[obs.observed], obs.y[obs.observed]
        if X.shape[0] > config.max_fit_points:
            rng = _randomness.trial_rng(seed, n, _randomness.FIT)
            idx = np.sort(rng.choice(X.shape[0], config.max_fit_points, replace=False))
            X, y = X[idx], y[idx]
        params = fit_hyperparameters(
            X, y, space.is_categorical, config.kernel,
            fixed_lengthscales=fixed_l, fixed_scale=config.kernel_scale,
            fixed_noise_var=noise, warm_start=prev_params,
            restart=_restart_fit(n, previous),
        )
        n_fit, refitted = n, True
    else:  # reuse the last fit; fixed values always win over stored ones
        params = GPParams(
            config.kernel,
            prev_params.lengthscales if fixed_l is None else fixed_l.copy(),
            prev_params.scale if config.kernel_scale is None else config.kernel_scale,
            prev_params.noise_var if noise is None else noise,
        )
        n_fit, refitted = prev_n_fit, False
    return FittedModel(_posterior(obs, params, space), n_fit, refitted)
