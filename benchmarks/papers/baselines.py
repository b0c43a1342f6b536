"""Benchmark-only baseline strategies of the two papers, as Optuna samplers.

Srinivas et al. (2010, Fig. 5) compare GP-UCB with EI, MPI (probability of improvement), a
mean-only and a variance-only rule; Chowdhury & Gopalan (2017, Figs. 1-3) with GP-EI and GP-PI.
Neither paper gives formulas or parameters for them; the standard forms are used
(``gp_ucb.md`` section 6, ``igp_ucb_gp_ts.md`` section 6). Every rule is maximised over the
search space exactly as our GP-UCB is (the sampler's ``search=AcquisitionSearch(...)``:
exhaustive on a discrete space of at most ``n_candidates`` points, otherwise Sobol candidates +
L-BFGS-B polish), on the same GP posterior (same ``model=GPModel(...)``: kernel,
hyperparameters, ``standardize``), so only the acquisition differs.

With ``z = (mu - tau - xi) / sigma``:

* EI:        ``(mu - tau - xi) Phi(z) + sigma phi(z)``          (default ``xi = 0``)
* PI / MPI:  ``Phi(z)``                                          (default ``xi = 0.01``)
* mean only: ``mu``            (GP-UCB with beta = 0, pure exploitation)
* var only:  ``sigma^2``       (greedy experimental design, ignores the observed values)

The incumbent ``tau`` is the largest posterior mean at an observed point (``incumbent="mean"``,
robust to noise) or the largest observed target (``incumbent="observed"``). ``mu``, ``sigma``,
``tau`` and ``xi`` are in the GP's units: raw (direction-oriented) objective values with
``GPModel(standardize=False)``, standardised ones otherwise.

These samplers live in ``benchmarks/papers`` and are not part of the package.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import log_ndtr, ndtr

from optuna_gpbandit.gp.posterior import GPPosterior
from optuna_gpbandit.samplers._base import GPBanditSampler, SelectionContext

_SD_FLOOR = 1e-12
_LOG_2PI_HALF = 0.5 * np.log(2.0 * np.pi)


def _pdf(z: np.ndarray) -> np.ndarray:
    return np.exp(-0.5 * z * z - _LOG_2PI_HALF)


# --------------------------------------------------------------------------- closed forms
def expected_improvement(mu, sigma, tau: float, xi: float = 0.0) -> np.ndarray:
    """``E[max(f - tau - xi, 0)]`` for ``f ~ N(mu, sigma^2)``; ``max(mu - tau - xi, 0)`` where
    ``sigma`` is (numerically) zero."""
    mu = np.asarray(mu, dtype=float)
    sigma = np.asarray(sigma, dtype=float)
    gap = mu - tau - xi
    safe = np.maximum(sigma, _SD_FLOOR)
    z = gap / safe
    ei = gap * ndtr(z) + safe * _pdf(z)
    return np.where(sigma > _SD_FLOOR, np.maximum(ei, 0.0), np.maximum(gap, 0.0))


def probability_of_improvement(mu, sigma, tau: float, xi: float = 0.01) -> np.ndarray:
    """``P(f > tau + xi)`` for ``f ~ N(mu, sigma^2)``; a 0/1 step where ``sigma`` is zero."""
    mu = np.asarray(mu, dtype=float)
    sigma = np.asarray(sigma, dtype=float)
    gap = mu - tau - xi
    z = gap / np.maximum(sigma, _SD_FLOOR)
    return np.where(sigma > _SD_FLOOR, ndtr(z), (gap > 0).astype(float))


# --------------------------------------------------------------------------- acquisitions
class _PosteriorAcquisition:
    """``values(X)`` (batched) and ``value_grad(x)`` as the maximiser
    (:meth:`~optuna_gpbandit.AcquisitionSearch.maximise`) expects."""

    def __init__(self, posterior: GPPosterior) -> None:
        self.posterior = posterior

    def _score(self, mu, sd):  # pragma: no cover - abstract
        raise NotImplementedError

    def _score_grad(self, mu: float, sd: float) -> tuple[float, float, float]:
        """Score and its partial derivatives in ``mu`` and ``sd`` at one point."""
        raise NotImplementedError

    def values(self, X: np.ndarray) -> np.ndarray:
        mu, var = self.posterior.mean_var(X)
        return self._score(mu, np.sqrt(var))

    def value_grad(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        mu, var, dmu, dvar = self.posterior.mean_var_grad(x)
        sd = float(np.sqrt(var))
        value, d_mu, d_sd = self._score_grad(mu, sd)
        dsd = dvar / (2.0 * sd) if sd > _SD_FLOOR else np.zeros_like(dvar)
        return value, d_mu * dmu + d_sd * dsd


class ExpectedImprovementAcq(_PosteriorAcquisition):
    def __init__(self, posterior: GPPosterior, tau: float, xi: float) -> None:
        super().__init__(posterior)
        self.tau, self.xi = float(tau), float(xi)

    def _score(self, mu, sd):
        return expected_improvement(mu, sd, self.tau, self.xi)

    def _score_grad(self, mu, sd):
        if sd <= _SD_FLOOR:
            gap = mu - self.tau - self.xi
            return max(gap, 0.0), float(gap > 0), 0.0
        z = (mu - self.tau - self.xi) / sd
        return float(self._score(mu, sd)), float(ndtr(z)), float(_pdf(z))


class ProbabilityOfImprovementAcq(_PosteriorAcquisition):
    """Maximises ``log Phi(z)`` (same argmax as ``Phi(z)``, no underflow far below ``tau``)."""

    def __init__(self, posterior: GPPosterior, tau: float, xi: float) -> None:
        super().__init__(posterior)
        self.tau, self.xi = float(tau), float(xi)

    def _score(self, mu, sd):
        gap = np.asarray(mu, dtype=float) - self.tau - self.xi
        sd = np.asarray(sd, dtype=float)
        z = gap / np.maximum(sd, _SD_FLOOR)
        step = np.where(gap > 0, 0.0, -1e300)
        return np.where(sd > _SD_FLOOR, log_ndtr(z), step)

    def _score_grad(self, mu, sd):
        if sd <= _SD_FLOOR:
            return float(self._score(mu, sd)), 0.0, 0.0
        z = (mu - self.tau - self.xi) / sd
        logp = float(log_ndtr(z))
        ratio = float(np.exp(-0.5 * z * z - _LOG_2PI_HALF - logp))  # phi(z) / Phi(z)
        return logp, ratio / sd, -ratio * z / sd


class MeanAcq(_PosteriorAcquisition):
    def _score(self, mu, sd):
        return np.asarray(mu, dtype=float)

    def _score_grad(self, mu, sd):
        return float(mu), 1.0, 0.0


class VarianceAcq(_PosteriorAcquisition):
    def _score(self, mu, sd):
        return np.asarray(sd, dtype=float) ** 2

    def _score_grad(self, mu, sd):
        return float(sd * sd), 0.0, 2.0 * sd


# --------------------------------------------------------------------------- samplers
class _BaselineSampler(GPBanditSampler):
    """Maximise a posterior acquisition with the package's maximiser (``ctx.search``)."""

    def _acquisition(self, ctx: SelectionContext) -> tuple[_PosteriorAcquisition, dict[str, Any]]:
        raise NotImplementedError

    def _select(self, ctx: SelectionContext) -> tuple[np.ndarray, dict[str, Any]]:
        acq, record = self._acquisition(ctx)
        x, value = ctx.search.maximise(acq, ctx.space, ctx.rng, warm_starts=ctx.warm_starts())
        record["acq"] = float(value)
        return x, record


class _ImprovementSampler(_BaselineSampler):
    def __init__(self, *, xi: float, incumbent: str = "mean", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if incumbent not in ("mean", "observed"):
            raise ValueError(f"incumbent must be 'mean' or 'observed', got {incumbent!r}.")
        if not np.isfinite(xi):
            raise ValueError(f"xi must be finite, got {xi!r}.")
        self._xi, self._incumbent = float(xi), incumbent

    def incumbent(self, ctx: SelectionContext) -> float:
        seen = ctx.obs.observed
        if not seen.any():  # no observation yet: the prior mean
            return 0.0
        if self._incumbent == "observed":
            return float(np.max(ctx.obs.y[seen]))
        return float(np.max(ctx.gp.posterior.mean_var(ctx.obs.X[seen])[0]))


class EISampler(_ImprovementSampler):
    """Expected improvement (Mockus et al. 1978). ``xi`` default 0."""

    def __init__(self, *, xi: float = 0.0, incumbent: str = "mean", **kwargs: Any) -> None:
        super().__init__(xi=xi, incumbent=incumbent, **kwargs)

    def _acquisition(self, ctx):
        tau = self.incumbent(ctx)
        acq = ExpectedImprovementAcq(ctx.gp.posterior, tau, self._xi)
        return acq, {"tau": tau, "xi": self._xi}


class PISampler(_ImprovementSampler):
    """Probability of improvement / MPI (Kushner 1964, Mockus 1989). ``xi`` default 0.01: with
    ``xi = 0`` and ``tau`` the best posterior mean PI nearly collapses to the mean-only rule."""

    def __init__(self, *, xi: float = 0.01, incumbent: str = "mean", **kwargs: Any) -> None:
        super().__init__(xi=xi, incumbent=incumbent, **kwargs)

    def _acquisition(self, ctx):
        tau = self.incumbent(ctx)
        acq = ProbabilityOfImprovementAcq(ctx.gp.posterior, tau, self._xi)
        return acq, {"tau": tau, "xi": self._xi}


class MeanOnlySampler(_BaselineSampler):
    """Pure exploitation: argmax of the posterior mean."""

    def _acquisition(self, ctx):
        return MeanAcq(ctx.gp.posterior), {}


class VarianceOnlySampler(_BaselineSampler):
    """Pure exploration: argmax of the posterior variance (Srinivas et al., eq. 4)."""

    def _acquisition(self, ctx):
        return VarianceAcq(ctx.gp.posterior), {}
