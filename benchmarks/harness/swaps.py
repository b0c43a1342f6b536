"""GP-UCB with one part swapped for a peer's (issue 60's swap table): what a part is worth.

* ``GP-UCB-intersection``: Optuna's ``GPSampler``'s conditional spaces: only the parameters
  every completed trial has are modelled, a branch's own ones go to the independent sampler.
* ``GP-UCB-prior1``: ``GPSampler``'s lengthscale prior centre (``l = 1``) on our model.
* ``GP-UCB-centre0.5``, ``GP-UCB-centre1``, ``GP-UCB-centre-evidence``: a lengthscale prior
  centre that follows the data (a shared offset of every ``log l_i``, or the better fit of
  the two centres).
* ``GP-UCB-prior-botorch``: BoTorch's dimension-scaled lengthscale prior (Hvarfner et al.
  2024; ``log l ~ N(sqrt(2) + log(d) / 2, 3)``) on our model.
* ``GP-UCB-logEI``: ``GPSampler``'s acquisition, the log of expected improvement over the best
  observed value (Ament et al. 2023), on our model: the same posterior, maximiser and
  start-up design, the width of UCB replaced by EI's trade-off.

Benchmark-only: nothing of the package depends on this module.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import optuna
from scipy.special import erfcx

from optuna_gpbandit import GPUCBSampler

from .peers import _intersection

_SQRT_HALF_PI = math.sqrt(math.pi / 2.0)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


def log_h(z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``log(z Phi(z) + phi(z))`` and the Mills ratio ``Phi(z) / phi(z)``, stable for very
    negative ``z`` (where ``h(z) = phi(z) (1 + z m(z))``, ``m`` through ``erfcx``)."""
    z = np.asarray(z, dtype=float)
    m = _SQRT_HALF_PI * erfcx(-z / math.sqrt(2.0))
    log_phi = -0.5 * z * z - _LOG_SQRT_2PI
    # 1 + z m(z) > 0 for every z; for z -> -inf it tends to 1 / z^2 (no cancellation worth
    # fearing at double precision down to z ~ -1e4, far below any z the search meets).
    return log_phi + np.log(np.maximum(1.0 + z * m, 1e-300)), m


class LogEI:
    """``log EI(x)`` over ``best`` on a GP posterior (larger is better), batched values and
    value + gradient at one point, as :class:`optuna_gpbandit.acquisition.ucb.UCB`."""

    def __init__(self, posterior: Any, best: float) -> None:
        self.posterior = posterior
        self.best = float(best)

    def values(self, X: np.ndarray) -> np.ndarray:
        mu, var = self.posterior.mean_var(X)
        sd = np.sqrt(np.maximum(var, 1e-24))
        lh, _ = log_h((mu - self.best) / sd)
        return np.log(sd) + lh

    def value_grad(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        mu, var, dmu, dvar = self.posterior.mean_var_grad(x)
        sd = math.sqrt(max(var, 1e-24))
        z = (mu - self.best) / sd
        lh, m = log_h(np.array([z]))
        r = 1.0 / max(1.0 + z * float(m[0]), 1e-300)  # phi(z) / h(z)
        dsd = 0.5 * dvar / sd
        grad = (dmu * float(m[0]) + dsd) * r / sd
        return math.log(sd) + float(lh[0]), grad


@contextlib.contextmanager
def _fit_swapped(name: str, value: Any) -> Iterator[None]:
    """``optuna_gpbandit.gp.fit.<name>`` replaced by ``value`` for the block: process-wide, so
    one study per process (the harness's runs), not studies in threads of one process."""
    from optuna_gpbandit.gp import fit

    original = getattr(fit, name)
    setattr(fit, name, value)
    try:
        yield
    finally:
        setattr(fit, name, original)


class IntersectionGPUCB(GPUCBSampler):
    """GP-UCB modelling only the parameters every completed trial has, as Optuna's
    ``GPSampler`` does; a branch's own parameters go to the independent sampler."""

    def infer_relative_search_space(self, study: optuna.Study, trial: Any) -> dict[str, Any]:
        return _intersection(study)


class LogEIGPUCB(GPUCBSampler):
    """Our GP, start-up design and maximiser with ``GPSampler``'s acquisition (log EI over the
    best observed value, in the model's units)."""

    def _acquisition(self, ctx: Any) -> tuple[LogEI, dict[str, Any]]:
        rows = ctx.obs.fit_rows
        y = ctx.obs.y[rows]
        best = float(np.max(y)) if y.size else 0.0
        return LogEI(ctx.gp.posterior, best), {"best": best}


class UnitPriorGPUCB(GPUCBSampler):
    """GP-UCB whose lengthscale prior is centred on ``l = 1`` in every dimension, as the prior
    of ``GPSampler`` (``-(0.1 / rho + 0.1 rho)`` on ``rho = 1 / l^2``, largest at ``l = 1``),
    instead of ours on ``0.25 sqrt(d)``; the prior's width and everything else are ours. The
    centre is swapped in the fit's module for the duration of one ``sample_relative``: one
    study per process (the harness's runs), not studies in threads of one process."""

    def sample_relative(self, study: optuna.Study, trial: Any,
                        search_space: dict[str, Any]) -> dict[str, Any]:
        with _fit_swapped("default_log_lengthscale", lambda d: 0.0):
            return super().sample_relative(study, trial, search_space)


class BoTorchPriorGPUCB(GPUCBSampler):
    """GP-UCB under BoTorch's lengthscale prior (``SingleTaskGP``'s default in BoTorch 0.18,
    Hvarfner et al. 2024, "Vanilla Bayesian optimization performs great in high dimensions"):
    ``log l ~ N(sqrt(2) + log(d) / 2, sqrt(3)^2)`` on unit-scaled inputs, a median of about
    ``4 sqrt(d)`` against our ``0.25 sqrt(d)``, and a wider spread. Swapped in the fit's module
    for one ``sample_relative``, as :class:`UnitPriorGPUCB`."""

    def sample_relative(self, study: optuna.Study, trial: Any,
                        search_space: dict[str, Any]) -> dict[str, Any]:
        centre = lambda d: math.sqrt(2.0) + 0.5 * math.log(max(d, 1))  # noqa: E731
        with _fit_swapped("default_log_lengthscale", centre), \
                _fit_swapped("_PRIOR_SD", math.sqrt(3.0)):
            return super().sample_relative(study, trial, search_space)


class SharedCentreGPUCB(GPUCBSampler):
    """GP-UCB whose lengthscale prior learns its centre from the data: every ``log l_i`` shares
    an offset ``c ~ N(0, centre_sd^2)`` from our centre ``log(0.25 sqrt(d))`` (a hierarchical
    prior, marginalised in the fit), so the lengthscales together can move to ``GPSampler``'s
    ``l = 1`` (or anywhere) when the data say so, while each keeps its own ``N(0, 1)`` spread.
    Swapped in the fit's module for one ``sample_relative``, as :class:`UnitPriorGPUCB`."""

    def __init__(self, *, centre_sd: float = 0.5, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._centre_sd = float(centre_sd)

    def sample_relative(self, study: optuna.Study, trial: Any,
                        search_space: dict[str, Any]) -> dict[str, Any]:
        with _fit_swapped("_CENTRE_SD", self._centre_sd):
            return super().sample_relative(study, trial, search_space)


class EvidenceCentreGPUCB(GPUCBSampler):
    """GP-UCB whose lengthscale prior centre is chosen at each fit between ours
    (``0.25 sqrt(d)``) and ``GPSampler``'s (``l = 1``) by the log posterior each fit reaches
    (the same prior width, so the two values compare). Swapped in the fit's module for one
    ``sample_relative``, as :class:`UnitPriorGPUCB`."""

    def sample_relative(self, study: optuna.Study, trial: Any,
                        search_space: dict[str, Any]) -> dict[str, Any]:
        with _fit_swapped("_OTHER_CENTRES", (0.0,)):
            return super().sample_relative(study, trial, search_space)
