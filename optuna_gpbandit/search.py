"""How the acquisition is maximised (``search=AcquisitionSearch(...)``): candidates, local
polish, warm starts, refusal radius, and the trust region the maximiser stays in where the space
is large (:class:`TrustRegion`). The maximiser itself is :mod:`optuna_gpbandit._maximize`.

Trust region (TuRBO, Eriksson et al. 2019), replayed from the stored trials. In many dimensions
a few dozen trials cannot cover the space, and a global acquisition's maximiser lands where the
model knows least: on the faces and corners of the box (issue 47). The region keeps each
suggestion within a box around the best observed point, of side ``L`` scaled per parameter by
the fitted lengthscales (long where the objective is flat); ``L`` doubles after
``success_tol`` consecutive improvements and halves after ``failure_tol`` consecutive trials
without one, and starts again at ``initial`` once it falls below ``smallest``. The size is
replayed from the completed trials in number order at every call (stateless: a resumed study
or another worker gets the same box). In a space with branches, once ``L`` is below
``branch_side`` the box also keeps to the best trial's branch.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from optuna_gpbandit._arguments import check_bool, check_int, check_number
from optuna_gpbandit._conditional import is_active
from optuna_gpbandit._maximize import (Acquisition, Box, Exclusion, maximize_acquisition)
from optuna_gpbandit._repeats import SAME_POINT_TOL
from optuna_gpbandit._space import EncodedSpace


@dataclass(frozen=True, kw_only=True)
class TrustRegion:
    """The trust region of :class:`~optuna_gpbandit.AcquisitionSearch` (``trust_region=``).

    Parameters
    ----------
    min_dim
        Numeric parameters from which the region applies (default 10): below it the whole
        space is searched.
    min_dim_continuous
        In a space of continuous parameters only (floats without a step, no integer,
        stepped or categorical parameter, no branches), the region applies from
        ``min(min_dim, min_dim_continuous)`` parameters (default 5; ``None``: ``min_dim``
        in every space). On COCO's bbob functions in 5-D the box gained +1.3 ± 0.5 of the
        fraction of targets (x 100) on the tuning instances and +1.9 ± 0.6 on the validation
        ones; on the hyperparameter spaces of the users' objectives and Bayesmark (integers,
        categoricals) the same rule from 5 parameters lost (-7.7 ± 6.3 on the users'
        validation half), so there ``min_dim`` stays (docs/benchmarks.md, "The trust region
        in five continuous dimensions").
    initial, smallest, largest
        The side ``L`` (in units of the encoded cube, scaled per parameter by its lengthscale
        over their geometric mean) at the start, below which it starts again, and at most
        (defaults 0.8, 0.5^7, 1.6: TuRBO's).
    success_tol, failure_tol
        Consecutive improvements that double ``L`` (default 3) and consecutive trials without
        one that halve it (default 4; ``None``: the number of numeric parameters, at least 4,
        TuRBO's rule).
    in_branches
        Whether the region also applies in a space with branches (a define-by-run objective;
        default ``True``): ``min_dim`` then counts the numeric parameters of all branches,
        and the box bounds the parameters the best trial's branch has, the others' ranges
        whole. In xgboost's space (14 parameters over three boosters, 10 numeric) the
        global acquisition put 55 % of the model-chosen coordinates on a bound of their
        range (TPE 6 %, the box 31 %), and TPE found better boosters (docs/benchmarks.md,
        "The trust region in spaces with branches"). ``False``: the whole space wherever
        the space has branches (the version before).
    start_at_centre
        Where the region applies, the start-up design's first point is the centre of the box
        (default ``True``): every numeric parameter at the midpoint of its range (of its
        logarithm on a log scale; the middle valid value of a discrete one), the categorical
        ones as the design draws them (with branches: the centre of the branch the draw
        picks, so at most one centre per branch). In many dimensions every quasi-random point
        is far from any interior optimum (each coordinate is off by a third of the range on
        average); the centre is the one point near all of them. ``False``: the quasi-random
        design only (the version before).
    branch_side
        In a space with branches, the side ``L`` below which the box also keeps to the best
        trial's branch (its selectors fixed: the Hamming trust region of radius 0 of
        CASMOPOLITAN, Wan et al. 2021), until the box grows back or starts again; ``None``:
        the acquisition chooses the branch in every box. Default 0.3: with the default sides
        (0.8, halved to 0.4, 0.2, ...) from the second halving on, after 8 trials without a
        gain. The acquisition weighs a branch by its width too, and a branch of many
        parameters (xgboost's ``dart``, 14) keeps a wide one: once the search has settled,
        it drew the trials away from a better branch of few (``gblinear``, 5), whose narrow
        dip GP-UCB then missed. Kept to the branch from the second halving, GP-UCB gained
        +16.1 ± 6.2 on the xgboost problems of the users' validation half (+1.1 ± 4.0 on the
        tuning half's, 20 seeds); from the first (``0.8``) it lost on the tuning half
        (-6.7 ± 4.3): switching between ``gbtree`` and ``dart`` pays (docs/benchmarks.md,
        "The box keeps to the best branch").
    """

    min_dim: int = 10
    min_dim_continuous: int | None = 5
    initial: float = 0.8
    smallest: float = 0.5 ** 7
    largest: float = 1.6
    success_tol: int = 3
    failure_tol: int | None = 4
    in_branches: bool = True
    start_at_centre: bool = True
    branch_side: float | None = 0.3

    def __post_init__(self) -> None:
        check_int("min_dim", self.min_dim, 1)
        if self.min_dim_continuous is not None:
            check_int("min_dim_continuous", self.min_dim_continuous, 1)
        for name in ("initial", "smallest", "largest"):
            check_number(name, getattr(self, name), strict=True)
        check_int("success_tol", self.success_tol, 1)
        if self.failure_tol is not None:
            check_int("failure_tol", self.failure_tol, 1)
        check_bool("in_branches", self.in_branches)
        check_bool("start_at_centre", self.start_at_centre)
        if self.branch_side is not None:
            check_number("branch_side", self.branch_side, strict=True)

    def applies(self, numeric: np.ndarray) -> bool:
        """Whether the region applies to a space whose numeric columns are ``numeric``."""
        return int(np.sum(numeric)) >= self.min_dim

    def side(self, y: np.ndarray, n_startup: int, d: int) -> float:
        """``L`` after the trials of oriented values ``y`` (trial-number order; the first
        ``n_startup`` are the design, not counted)."""
        fail_tol = self.failure_tol or max(4, d)
        L, succ, fail = self.initial, 0, 0
        if y.size == 0:
            return L
        k0 = min(max(n_startup, 1), y.size)
        best, lo, hi = float(np.max(y[:k0])), float(np.min(y[:k0])), float(np.max(y[:k0]))
        for v in y[k0:]:
            lo, hi = min(lo, float(v)), max(hi, float(v))
            if v > best + 1e-3 * (hi - lo):
                succ, fail = succ + 1, 0
            else:
                succ, fail = 0, fail + 1
            best = max(best, float(v))
            if succ >= self.success_tol:
                L, succ = min(2.0 * L, self.largest), 0
            elif fail >= fail_tol:
                L, fail = L / 2.0, 0
                if L < self.smallest:
                    L = self.initial
        return L

    def box(self, X: np.ndarray, y: np.ndarray, numbers: np.ndarray, lengthscales: np.ndarray,
            numeric: np.ndarray, n_startup: int) -> Box | None:
        """The box of the observed points ``X`` with oriented values ``y`` and trial
        ``numbers`` (``None`` below ``min_dim`` numeric parameters or with no observation)."""
        if not self.applies(numeric) or y.size == 0:
            return None
        d = int(numeric.sum())
        order = np.argsort(numbers, kind="stable")
        L = self.side(y[order], n_startup, d)
        centre = X[int(np.argmax(y))]
        w = np.ones(X.shape[1])
        ls = np.asarray(lengthscales, dtype=float)[numeric]
        w[numeric] = ls / math.exp(float(np.mean(np.log(ls))))
        half = 0.5 * L * w
        # A parameter the best point's branch does not have (its inactive code) is not
        # bounded: the best point says nothing about it.
        branch = is_active(centre)
        bounded = numeric & branch
        lo = np.where(bounded, np.clip(centre - half, 0.0, 1.0), 0.0)
        hi = np.where(bounded, np.clip(centre + half, 0.0, 1.0), 1.0)
        keep = self.branch_side is not None and L < self.branch_side
        return Box(lo, hi, L, branch if keep else None)


@dataclass(frozen=True, kw_only=True)
class AcquisitionSearch:
    """How the acquisition's maximiser searches: ``search=AcquisitionSearch(...)``.

    Parameters
    ----------
    n_candidates
        Quasi-random candidates scored before local polishing (default 1024; 512 for
        :class:`~optuna_gpbandit.GPTSSampler`), and the enumeration limit: a fully discrete
        space with at most this many points is searched exhaustively. GP-UCB's theorem-1
        ``beta_t`` counts ``|D|`` as this number in a continuous space.
    n_local_search
        Best distinct candidates polished by L-BFGS-B on the continuous parameters and line
        searches over the discrete ones (default 5).
    n_warm_starts
        Best observed points added to the candidates (default 3; with constraint models, the
        best they admit).
    trust_region
        Local exploration where the space is large: a :class:`TrustRegion` around the best
        trial (default ``TrustRegion()``: from 10 numeric parameters on, from 5 where all are
        continuous), or ``None``: the whole space always.
    min_distance
        A proposal closer than this to a failed point, to any point of a deterministic
        objective, or to a point whose repeats gave identical values counts as asking it again
        and is refused while anything else is left (max over the parameters, in units of each
        parameter's range, logarithmic ones on the log scale; default ``1e-3``, in ``(0,
        0.5]``). ``1e-5`` lets the optimum of a smooth deterministic function be polished,
        but on the real tuning tasks GP-UCB then crept along a flat valley of a CV loss in
        steps of a few 1e-4, each trial next to the last (docs/benchmarks.md, "The refusal
        radius"). ``polish_distance=1e-5`` polishes without creeping.
    polish_distance
        The refusal radius used instead of ``min_distance`` while polishing pays, or ``None``
        (default): ``min_distance`` always. Polishing pays until three trials
        (``_repeats.POLISH_PATIENCE``) that lay within ``min_distance`` of an earlier point
        have failed to improve the best value since it last improved; it resumes when the best
        value improves again. Single-objective studies only; in ``(0, min_distance]``.
        ``1e-5`` polishes Branin and loses nothing on the real tuning tasks, but gains nothing
        on Bayesmark's problems beyond its error, hence not the default (docs/benchmarks.md,
        "The refusal radius").
    """

    n_candidates: int = 1024
    n_local_search: int = 5
    n_warm_starts: int = 3
    trust_region: TrustRegion | None = TrustRegion()
    min_distance: float = SAME_POINT_TOL
    polish_distance: float | None = None

    def __post_init__(self) -> None:
        check_int("n_candidates", self.n_candidates, 1)
        check_int("n_local_search", self.n_local_search, 0)
        check_int("n_warm_starts", self.n_warm_starts, 0)
        check_number("min_distance", self.min_distance, strict=True)
        if self.min_distance > 0.5:
            raise ValueError("min_distance is in units of each parameter's range and must be at "
                             f"most 0.5; got {self.min_distance!r}.")
        if self.polish_distance is not None:
            check_number("polish_distance", self.polish_distance, strict=True)
            if self.polish_distance > self.min_distance:
                raise ValueError("polish_distance must be at most min_distance "
                                 f"({self.min_distance!r}); got {self.polish_distance!r}.")

    def for_space(self, space: EncodedSpace) -> AcquisitionSearch:
        """These settings for one suggestion in ``space``: the trust region only where it is
        in force (``min_dim`` numeric parameters or more, ``min_dim_continuous`` in a space of
        continuous parameters only; with branches only ``in_branches``), the one place that
        decides both the box the maximiser stays in and the centre start."""
        region = self.trust_region
        if region is None:
            return self
        if (region.min_dim_continuous is not None and region.min_dim_continuous < region.min_dim
                and space.continuous_only):
            region = dataclasses.replace(region, min_dim=region.min_dim_continuous)
        if (region.in_branches or not space.conditional) and region.applies(~space.is_categorical):
            return self if region is self.trust_region else dataclasses.replace(
                self, trust_region=region)
        return dataclasses.replace(self, trust_region=None)

    @property
    def starts_at_centre(self) -> bool:
        """Whether the start-up design's first point is the centre of the box (a trust region
        in force with ``start_at_centre``; see :meth:`for_space`)."""
        return self.trust_region is not None and self.trust_region.start_at_centre

    def box(self, X: np.ndarray, y: np.ndarray, numbers: np.ndarray, lengthscales: np.ndarray,
            numeric: np.ndarray, n_startup: int) -> Box | None:
        """The box the maximiser stays in (:meth:`TrustRegion.box`), or ``None`` without a
        trust region."""
        if self.trust_region is None:
            return None
        return self.trust_region.box(X, y, numbers, lengthscales, numeric, n_startup)

    def maximise(self, acq: Acquisition, space: EncodedSpace, rng: np.random.Generator, *,
                 warm_starts: np.ndarray | None = None,
                 exclude: np.ndarray | Exclusion | None = None,
                 box: Box | None = None) -> tuple[np.ndarray, float]:
        """:func:`maximize_acquisition` with these settings."""
        return maximize_acquisition(acq, space, rng, n_candidates=self.n_candidates,
                                    n_local_search=self.n_local_search,
                                    warm_starts=warm_starts, exclude=exclude,
                                    tol=self.min_distance, box=box)
