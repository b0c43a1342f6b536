"""Exploration widths as settings objects: GP-UCB's ``beta`` schedules (Srinivas et al.,
Theorems 1-3) and IGP-UCB's / GP-TS's ``width`` (Chowdhury & Gopalan).

Each object holds a theorem's constants and the two practical factors our defaults add (a
scale and an early factor); ``.paper()`` gives the theorem's literal width. The formulas are
those of :mod:`optuna_gpbandit.acquisition.beta`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from optuna_gpbandit._arguments import check_int, check_number
from optuna_gpbandit.acquisition.beta import beta_theorem1, beta_theorem2, beta_theorem3
from optuna_gpbandit.acquisition.pathwise import DEFAULT_FEATURES


def _check_delta(delta: float) -> None:
    if not (isinstance(delta, (int, float)) and not isinstance(delta, bool) and 0 < delta < 1):
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}.")


@dataclass(frozen=True, kw_only=True)
class BetaSchedule:
    """A theorem's ``beta_t`` for :class:`~optuna_gpbandit.GPUCBSampler`, times ``scale``,
    times an early factor while the model is young (base of :class:`Theorem1`,
    :class:`Theorem2`, :class:`Theorem3`).

    Parameters
    ----------
    delta
        Failure probability of the theorem (default 0.1). Under long-term constraints it is
        divided by the number of epochs.
    scale
        Factor on ``beta_t``. ``1.0`` is the theory; the paper's experiments used ``0.2``
        ("divided by 5"). Default ``0.05`` [design choice], chosen on Hartmann-3/6
        (docs/benchmarks.md, "GP-UCB's scale").
    early_factor
        Factor on ``beta_t`` while the model is young: the whole factor for ``t <= 15``,
        falling linearly to 1 at ``t = 40`` and 1 from there on (``t``: points in the design,
        pending ones included, + 1; after a restart or a change point it counts the new
        segment). Default ``3.0`` [design choice]; ``1.0``: off (the default of
        :class:`~optuna_gpbandit.GPUCBCPDSampler`, not measured with change detection). The
        hyperparameters fitted on the first results are the least reliable of a run and its
        basin is chosen then: the early width raised the mean normalised score on the real-HPO
        suite. The factor is 1 while trials of other workers have no result: their points
        already spread the batch, and the two compounded (docs/benchmarks.md, "The early
        width's figures").
    box_factor
        Factor on ``beta_t`` (on top of ``scale``) where the trust region applies
        (:class:`~optuna_gpbandit.TrustRegion`) in a space of continuous parameters only
        (floats without a step, no integer or categorical parameter, no branches). Default
        ``0.4`` [design choice]: the box keeps the search local, and a narrower width inside
        it (``0.05 x 0.4 = 0.02``) reached more of COCO's targets; in hyperparameter spaces
        (integers, categoricals: plateaus) it lost, in the box (xgboost's space) and out of it
        (Bayesmark), so there the width stays (docs/benchmarks.md, "The width inside the
        trust region"). ``1.0``: the same width everywhere.
    """

    delta: float = 0.1
    scale: float = 0.05
    early_factor: float = 3.0
    box_factor: float = 0.4

    def __post_init__(self) -> None:
        _check_delta(self.delta)
        check_number("scale", self.scale)
        check_number("early_factor", self.early_factor, strict=True)
        check_number("box_factor", self.box_factor, strict=True)

    @classmethod
    def paper(cls, **kwargs: float) -> BetaSchedule:
        """The theorem's own ``beta_t``: ``scale=1``, no early factor, the same width in the
        trust region (other constants as given)."""
        kwargs.setdefault("scale", 1.0)
        kwargs.setdefault("early_factor", 1.0)
        kwargs.setdefault("box_factor", 1.0)
        return cls(**kwargs)

    def unscaled(self, t: int, *, delta: float, d: int, cardinality: int | None,
                 n_candidates: int, gamma_bound: Callable[[], float]) -> float:
        """``beta_t`` of the theorem (before ``scale`` and the early factor) for round ``t``
        with failure probability ``delta``, ``d`` parameters, a fully discrete space of
        ``cardinality`` points (``None``: continuous), ``n_candidates`` scored per step and
        ``gamma_bound()``, a bound on the information gain ``gamma_t``."""
        raise NotImplementedError


@dataclass(frozen=True, kw_only=True)
class Theorem1(BetaSchedule):
    """Theorem 1 (finite ``D``): ``beta_t = 2 log(|D| t^2 pi^2 / (6 delta))``, the default.

    In the paper ``|D|`` is the cardinality of the finite decision set. Here ``|D| =
    min(cardinality, n_candidates)`` for a fully discrete search space and ``n_candidates``
    otherwise (the points the maximiser scores per step, the discretisation of a continuous
    space) [design choice: a discrete space of 10^6 points would add ``2 log(10^6 / 1024)`` =
    13.8 to ``beta_t`` for points the maximiser never scores at once].

    Parameters
    ----------
    delta, scale, early_factor, box_factor
        See :class:`BetaSchedule`.
    """

    def unscaled(self, t: int, *, delta: float, d: int, cardinality: int | None,
                 n_candidates: int, gamma_bound: Callable[[], float]) -> float:
        card = n_candidates if cardinality is None else min(cardinality, n_candidates)
        return beta_theorem1(t, card, delta)


@dataclass(frozen=True, kw_only=True)
class Theorem2(BetaSchedule):
    """Theorem 2 (compact ``D = [0, r]^d``): ``beta_t = 2 log(2 t^2 pi^2 / (3 delta)) + 2 d
    log(t^2 d b r sqrt(log(4 d a / delta)))`` for ``d`` parameters encoded to the unit cube.

    Parameters
    ----------
    a, b
        The derivative tail constants: ``P(sup |df / dx_j| > L) <= a exp(-(L / b)^2)``
        (default 1.0 each).
    r
        Side of the domain ``[0, r]^d`` (default 1.0: the encoded unit cube).
    delta, scale, early_factor, box_factor
        See :class:`BetaSchedule`.
    """

    a: float = 1.0
    b: float = 1.0
    r: float = 1.0

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in ("a", "b", "r"):
            check_number(name, getattr(self, name), strict=True)

    def unscaled(self, t: int, *, delta: float, d: int, cardinality: int | None,
                 n_candidates: int, gamma_bound: Callable[[], float]) -> float:
        return beta_theorem2(t, d, delta, self.a, self.b, self.r)


@dataclass(frozen=True, kw_only=True)
class Theorem3(BetaSchedule):
    """Theorem 3 (``f`` in the kernel's RKHS): ``beta_t = 2 B + 300 gamma_t log(t /
    delta)^3``, with ``gamma_t`` bounded by the greedy information gain of 256 quasi-random
    points (an upper bound up to a factor ``1 / (1 - 1/e)``).

    Parameters
    ----------
    rkhs_bound
        ``B``, the bound on ``||f||_k^2`` (default 1.0).
    delta, scale, early_factor, box_factor
        See :class:`BetaSchedule`.
    """

    rkhs_bound: float = 1.0

    def __post_init__(self) -> None:
        super().__post_init__()
        check_number("rkhs_bound", self.rkhs_bound)

    def unscaled(self, t: int, *, delta: float, d: int, cardinality: int | None,
                 n_candidates: int, gamma_bound: Callable[[], float]) -> float:
        return beta_theorem3(t, gamma_bound(), self.rkhs_bound, delta)


@dataclass(frozen=True, kw_only=True)
class GivenBeta(BetaSchedule):
    """GP-UCB's ``beta`` given as a number (a constant ``beta_t``) or a callable ``beta(t)``:
    used as given, no scale, no early factor and no factor in the trust region (what
    :class:`~optuna_gpbandit.GPUCBSampler` makes of ``beta=0.5`` or ``beta=lambda t: ...``).

    Parameters
    ----------
    value
        The constant ``beta_t``, or the callable ``beta(t)`` of the round ``t``.
    """

    value: float | Callable[[int], float]
    scale: float = 1.0
    early_factor: float = 1.0
    box_factor: float = 1.0

    def unscaled(self, t: int, *, delta: float, d: int, cardinality: int | None,
                 n_candidates: int, gamma_bound: Callable[[], float]) -> float:
        return float(self.value(t)) if callable(self.value) else self.value


def check_beta(beta: object) -> BetaSchedule:
    """A :class:`BetaSchedule`, or a finite constant ``>= 0`` or a callable ``beta(t)`` as a
    :class:`GivenBeta` (used as given)."""
    if isinstance(beta, BetaSchedule):
        return beta
    if callable(beta):
        return GivenBeta(value=beta)
    if isinstance(beta, bool) or not isinstance(beta, (int, float)) or not (
            math.isfinite(beta) and beta >= 0):
        raise ValueError("beta must be a schedule (Theorem1(), Theorem2(), Theorem3()), a "
                         f"finite constant >= 0 or a callable beta(t); got {beta!r}.")
    return GivenBeta(value=float(beta))


GAMMA_MODES = ("data", "theory")


@dataclass(frozen=True, kw_only=True)
class InfoGainWidth:
    """Chowdhury & Gopalan's width for :class:`~optuna_gpbandit.IGPUCBSampler` (``beta_t``)
    and :class:`~optuna_gpbandit.GPTSSampler` (``v_t``): ``B + R sqrt(2 (gamma_{t-1} + 1 +
    log(c / delta)))`` with ``c = 1`` (IGP-UCB) or ``2`` (GP-TS), times the square root of an
    early factor while the model is young.

    Parameters
    ----------
    B
        Bound on the RKHS norm of the objective (default 0.5 [design choice]; the paper's
        experiments use 1 on functions drawn from the kernel).
    R
        Sub-Gaussian noise level. ``None`` (IGP-UCB's default): read off the fitted noise
        (``sqrt(noise_var / kernel scale)``), the paper's experiments' ``lambda = R^2``.
        GP-TS's default is 0 [design choice], so ``v_t = B``: the draw's spread is the
        posterior's own (which already widens with the fitted noise); pass ``R=None`` (or a
        known noise level) for objectives known to be noisy.
    delta
        Failure probability (default 0.1).
    gamma
        ``gamma_{t-1}``: ``"data"`` (default): the information gain of the observed design;
        ``"theory"``: the order-of-magnitude bound of the paper's experiments (SE:
        ``(log t)^{d+1}``, Matern-5/2: ``t^{d(d+1)/(5+d(d+1))} log t``); a number; or a
        callable ``gamma(t - 1, d)``.
    early_factor
        Factor on the variance the acquisition sees while the model is young, as GP-UCB's
        (see :class:`BetaSchedule`): the width is multiplied by its square root. Default 1.0
        (off) for IGP-UCB, 3.0 for GP-TS [design choice: the real-HPO suite; docs/benchmarks.md,
        "The early width's figures"]. Not applied to Verma et al.'s width
        (``Censoring(theory_beta=True)``).
    """

    B: float = 0.5
    R: float | None = None
    delta: float = 0.1
    gamma: str | float | Callable[[int, int], float] = "data"
    early_factor: float = 1.0

    def __post_init__(self) -> None:
        if not (isinstance(self.B, (int, float)) and math.isfinite(self.B) and self.B >= 0):
            raise ValueError(f"B must be finite and >= 0, got {self.B!r}.")
        if self.R is not None and not (isinstance(self.R, (int, float))
                                       and math.isfinite(self.R) and self.R >= 0):
            raise ValueError(f"R must be finite and >= 0 (or None), got {self.R!r}.")
        _check_delta(self.delta)
        if isinstance(self.gamma, str) and self.gamma not in GAMMA_MODES:
            raise ValueError(
                f"gamma must be 'data', 'theory', a number or a callable; got {self.gamma!r}.")
        if not isinstance(self.gamma, str) and not callable(self.gamma):
            check_number("gamma", self.gamma)
        check_number("early_factor", self.early_factor, strict=True)

    @classmethod
    def paper(cls, **kwargs: float) -> InfoGainWidth:
        """The paper's width: no early factor (``R``, ``B`` and the rest as given)."""
        kwargs.setdefault("early_factor", 1.0)
        return cls(**kwargs)


@dataclass(frozen=True, kw_only=True)
class PathDraw:
    """GP-TS's default draw [design choice]: ``f_t`` is a function on the whole space, a prior
    draw from ``n_features`` random Fourier features corrected by the data (pathwise
    conditioning, :class:`~optuna_gpbandit.acquisition.pathwise.SamplePath`), and its argmax
    is found like an acquisition's (quasi-random candidates and the best observed points,
    polished by L-BFGS-B and discrete line searches). The paper's rule with ``D_t`` the whole
    space; the prior part is approximate (variance error ``O(1/sqrt(M))``), the data
    correction exact. A fully discrete space with at most ``n_candidates`` points is drawn
    jointly and exactly instead.

    Parameters
    ----------
    n_features
        Random Fourier features of the prior part (default 1024).
    """

    n_features: int = DEFAULT_FEATURES

    def __post_init__(self) -> None:
        check_int("n_features", self.n_features, 1)

    @property
    def on_candidates(self) -> bool:
        """Whether the draw is a joint draw on a finite candidate set (else a path, maximised
        like an acquisition, where the space is too large to enumerate)."""
        return False


@dataclass(frozen=True, kw_only=True)
class CandidateDraw:
    """The paper's finite ``D_t``, drawn jointly: the whole space when it is discrete with at
    most ``n_candidates`` points, otherwise ``n_candidates`` scrambled-Sobol points plus the 32
    best observed points and 32 Gaussian perturbations each (sd 0.01, 0.05 and 0.2 in encoded
    units) of the best 8. No continuous polish. Candidates whose 5-sigma upper bound lies
    below the best 5-sigma lower bound are left out of the joint draw, which costs
    ``O(kept^3)``: keep ``n_candidates`` at a few thousand at most. In 4-6 dimensions this
    finite set is too coarse: the path draw found better points (docs/benchmarks.md, "GP-TS's
    draw and candidates")."""

    @property
    def n_features(self) -> int:
        """Random Fourier features of a path draw, where one is needed all the same (a
        multi-objective study scalarises path draws)."""
        return DEFAULT_FEATURES

    @property
    def on_candidates(self) -> bool:
        return True
