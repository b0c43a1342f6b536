"""The configuration a sampler holds (:class:`LongTermConstraints`) and what it hands to the GP
for one sampling call (:class:`ConstraintStage`); Optuna trial states and directions appear here."""

from __future__ import annotations

import datetime
import math
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

import numpy as np
from optuna.study import StudyDirection
from optuna.trial import FrozenTrial, TrialState

from optuna_gpbandit.constraints._checks import (
    _check_int,
    _check_max_log,
    _check_names,
    _check_y,
    _finite_float,
    _kappa_vector,
)
from optuna_gpbandit.constraints.data import MISSING_POLICIES, SkippedTrial, constraint_matrix
from optuna_gpbandit.constraints.multipliers import (
    MultiplierState,
    epoch_index,
    horizon_epochs,
    recover_noiseless,
    recover_noisy,
)
from optuna_gpbandit.constraints.penalties import (
    constrained_beta,
    epoch_delta_factor,
    noiseless_penalties,
    noisy_penalties,
)
from optuna_gpbandit.constraints.psi import Psi, make_psi
from optuna_gpbandit._history import direction_sign

# The package's logger, as before the split into modules (users and tests filter on this name).

VARIANTS = ("noiseless", "noisy")
_FAR_FUTURE = datetime.datetime.max


@dataclass(frozen=True, eq=False)
class ConstraintStage:
    """What the constraint stage hands to the GP for one sampling call.

    Unpacks as ``trials, transform, state = stage``.

    Attributes
    ----------
    trials
        COMPLETE trials for the GP, in epoch order: every counted COMPLETE trial
        (``history="all"``) or those of the current epoch (``history="epoch"``; may be empty at
        the start of an epoch, where a sampler should draw a random point).
    constraints
        ``(len(trials), m)`` constraint values of ``trials``.
    state
        The multipliers (from all counted trials, PRUNED ones too with ``include_pruned``).
    skipped
        Trials left out for unusable constraint data.
    n_epochs
        ``L`` for ``delta / L`` (:func:`horizon_epochs`).
    scale, objective_scale
        Per-constraint scales the constraint values were divided by (``scale=True``: their
        mean absolute value over the first epoch), or ``None`` (raw values); and the scale
        :meth:`targets` divides the objective by (its standard deviation over the first epoch,
        or 1), so neither's units change the penalised targets.
    """

    trials: tuple[FrozenTrial, ...]
    constraints: np.ndarray
    state: MultiplierState
    skipped: tuple[SkippedTrial, ...]
    n_epochs: int
    psi: Psi | None
    max_log_penalty: float
    scale: np.ndarray | None = None
    objective_scale: float = 1.0

    def __iter__(self) -> Iterator[Any]:
        return iter((self.trials, self.targets, self.state))

    @property
    def numbers(self) -> np.ndarray:
        return np.array([t.number for t in self.trials], dtype=int)

    def penalties(self) -> np.ndarray:
        """The penalty of each GP trial under the current multipliers (``y - z``)."""
        G = self.constraints
        if G.shape[1] == 0:
            return np.zeros(G.shape[0])
        if self.state.variant == "noiseless":
            assert self.psi is not None
            return noiseless_penalties(
                G, self.state.log_kappa_array, self.psi, self.max_log_penalty
            )
        return noisy_penalties(G, self.state.kappa_array, self.max_log_penalty)

    def targets(self, y: Any) -> np.ndarray:
        """Penalised GP targets ``z`` from ``y``, the objective values of :attr:`trials`
        oriented for maximisation (``-value`` for ``minimize``)."""
        return _check_y(y, len(self.trials)) / self.objective_scale - self.penalties()

    __call__ = targets

    def targets_from_values(self, direction: StudyDirection) -> np.ndarray:
        """:meth:`targets` of the trials' stored values, oriented by ``direction``.

        A penalty always lowers the oriented target: it raises a minimised objective.
        """
        sign = direction_sign(direction)
        values = np.array([t.value for t in self.trials], dtype=float)
        return self.targets(sign * values)

    @property
    def delta_factor(self) -> float:
        """The factor of ``delta`` in the width (:func:`epoch_delta_factor`)."""
        return epoch_delta_factor(self.n_epochs, self.state.variant == "noisy")

    def beta(self, gamma: float, B: float, R: float, delta: float) -> float:
        """:func:`constrained_beta` with this stage's ``L`` (and ``kappa`` for Algorithm 3)."""
        kappa = self.state.kappa if self.state.variant == "noisy" else None
        return constrained_beta(gamma, B, R, delta, self.n_epochs, kappa)


def unit_scales(G: np.ndarray) -> np.ndarray:
    """Per-column mean absolute value of ``G`` (1 where it is 0 or not finite, and for every
    column of a ``G`` without rows)."""
    if not G.shape[0]:
        return np.ones(G.shape[1])  # no trial counted yet (e.g. every one skipped as invalid)
    top = np.max(np.abs(G), axis=0)
    top = np.where(np.isfinite(top) & (top > 0), top, 1.0)
    scale = top * np.mean(np.abs(G) / top, axis=0)  # no overflow near 1e308
    return np.where(np.isfinite(scale) & (scale > 0), scale, 1.0)


class LongTermConstraints:
    """Configuration of the long-term constraint stage (Shi & Eryilmaz 2022).

    Parameters
    ----------
    variant
        ``"noiseless"`` (Algorithm 2: multiplicative update, penalty ``psi(g) - 1``) or
        ``"noisy"`` (Algorithm 3: additive projected update, linear penalty, noise level
        ``sqrt(1 + sum kappa^2) R``).
    epoch_length
        ``S`` (default 20, the paper's experiments), or ``"sqrt"``: ``max(1, round(sqrt(T)))``
        with ``T = n_trials_hint``. Keep it fixed for a study: it defines the epochs of all
        history.
    n_trials_hint
        Horizon ``T`` if known: ``L = ceil(T / S)`` in ``delta / L`` and in
        ``kappa_step="theory"``; otherwise ``L`` is the current epoch (1-based).
    psi, psi_c, psi_n
        Algorithm 2's penalty shape (:func:`make_psi`); default ``"exp"`` with ``c = 1``.
        Not allowed with ``variant="noisy"``.
    kappa_init
        Initial multipliers (a number or one per constraint): default 1 (Algorithm 2, must be
        ``> 0``) or 0 (Algorithm 3, ``>= 0``).
    kappa_step, kappa_step0
        Algorithm 3's step ``mu``: a number ``> 0`` (default 0.5, the paper's experiments) or
        ``"theory"`` (``kappa_step0 / sqrt(L)``, see :func:`theory_steps`). Not allowed with
        ``variant="noiseless"``.
    max_log_kappa, max_log_penalty
        Overflow guards (in ``(0, 300]``): clip of ``log kappa`` (Algorithm 2; logged once) and cap
        of every penalty term at ``exp(max_log_penalty)``. Defaults 50 and 100.
    history
        ``"all"`` (default): every counted trial, re-scored with the current multipliers, goes to
        the GP. ``"epoch"`` (the paper's literal fresh IGP-UCB per epoch): only the current epoch's
        trials.
    on_missing
        ``"skip"`` (default): trials with missing / differently named / non-finite constraint
        values are left out, with one logged warning per trial; ``"raise"``:
        :class:`ConstraintDataError`.
    names
        The constraint names (columns, in this order), e.g. ``("0", "1")`` for two
        ``constraints_func`` values or ``("cost",)`` for ``trial.set_constraint("cost", v)``.
        Default: the key set most trials with constraint data share.
    include_pruned
        PRUNED trials' constraints count in the epoch map and means (never in the GP).
    epoch_order
        ``"number"`` (default): epochs follow trial numbers; ``"complete"``: completion times
        (closed epochs then never change when a low-numbered trial finishes late).
    scale
        ``True`` (default [design choice]): each constraint is divided by its mean absolute value
        and the objective by its standard deviation, both over the first epoch's trials (fixed
        once that epoch is complete, so they do not drift as the search settles near the
        boundary), before the penalty,
        so a constraint in MB or in GB gives the same multipliers and points (raw values in the
        hundreds saturate ``psi = exp``). ``False``: the paper's raw values.
    """

    def __init__(
        self,
        variant: str = "noiseless",
        *,
        epoch_length: int | str = 20,
        n_trials_hint: int | None = None,
        psi: str | Callable[[Any], Any] | Psi | None = None,
        psi_c: float = 1.0,
        psi_n: float = 2.0,
        kappa_init: float | Sequence[float] | None = None,
        kappa_step: float | str | None = None,
        kappa_step0: float = 0.5,
        max_log_kappa: float = 50.0,
        max_log_penalty: float = 100.0,
        history: str = "all",
        on_missing: str = "skip",
        names: Sequence[str] | None = None,
        include_pruned: bool = False,
        epoch_order: str = "number",
        scale: bool = True,
    ) -> None:
        if variant not in VARIANTS:
            raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}.")
        self.variant = variant
        self.n_trials_hint = (
            None if n_trials_hint is None else _check_int("n_trials_hint", n_trials_hint, 1)
        )
        if epoch_length == "sqrt":
            if self.n_trials_hint is None:
                raise ValueError("epoch_length='sqrt' needs n_trials_hint (the horizon T).")
            self.epoch_length = max(1, round(math.sqrt(self.n_trials_hint)))
        else:
            self.epoch_length = _check_int("epoch_length", epoch_length, 1)
        if variant == "noiseless":
            if kappa_step is not None:
                raise ValueError("kappa_step applies to variant='noisy' only.")
            self.psi: Psi | None = make_psi("exp" if psi is None else psi, psi_c, psi_n)
            self.kappa_step: float | str | None = None
            kappa_init = 1.0 if kappa_init is None else kappa_init
            _kappa_vector(kappa_init, 0, positive=True)
        else:
            if psi is not None:
                raise ValueError("psi applies to variant='noiseless' only (Algorithm 3 is linear).")
            self.psi = None
            kappa_step = 0.5 if kappa_step is None else kappa_step
            if isinstance(kappa_step, str):
                if kappa_step != "theory":
                    raise ValueError(
                        f"kappa_step must be a number > 0 or 'theory', got {kappa_step!r}."
                    )
            else:
                kappa_step = _finite_float("kappa_step", kappa_step)
                if kappa_step <= 0:
                    raise ValueError(f"kappa_step must be > 0, got {kappa_step}.")
            self.kappa_step = kappa_step
            kappa_init = 0.0 if kappa_init is None else kappa_init
            _kappa_vector(kappa_init, 0, positive=False)
        self.kappa_init = kappa_init
        self.kappa_step0 = _finite_float("kappa_step0", kappa_step0)
        if self.kappa_step0 <= 0:
            raise ValueError(f"kappa_step0 must be > 0, got {kappa_step0}.")
        self.max_log_kappa = _check_max_log("max_log_kappa", max_log_kappa)
        self.max_log_penalty = _check_max_log("max_log_penalty", max_log_penalty)
        if history not in ("all", "epoch"):
            raise ValueError(f"history must be 'all' or 'epoch', got {history!r}.")
        self.history = history
        if on_missing not in MISSING_POLICIES:
            raise ValueError(f"on_missing must be one of {MISSING_POLICIES}, got {on_missing!r}.")
        self.on_missing = on_missing
        self.names = _check_names(names)
        if not isinstance(include_pruned, (bool, np.bool_)):
            raise ValueError(f"include_pruned must be a bool, got {include_pruned!r}.")
        self.include_pruned = bool(include_pruned)
        if epoch_order not in ("number", "complete"):
            raise ValueError(f"epoch_order must be 'number' or 'complete', got {epoch_order!r}.")
        self.epoch_order = epoch_order
        if not isinstance(scale, (bool, np.bool_)):
            raise ValueError(f"scale must be a bool, got {scale!r}.")
        self.scale = bool(scale)

    def __repr__(self) -> str:
        return (
            f"LongTermConstraints({self.variant!r}, epoch_length={self.epoch_length}, "
            f"history={self.history!r}, on_missing={self.on_missing!r})"
        )

    def counted_trials(self, trials: Sequence[FrozenTrial]) -> list[FrozenTrial]:
        """COMPLETE trials (and PRUNED ones with ``include_pruned``) in epoch order."""
        states = [TrialState.COMPLETE] + ([TrialState.PRUNED] if self.include_pruned else [])
        counted = [t for t in trials if t.state in states]
        if self.epoch_order == "complete":
            far = _FAR_FUTURE
            counted.sort(key=lambda t: (t.datetime_complete or far, t.number))
        else:
            counted.sort(key=lambda t: t.number)
        return counted

    def prepare(self, trials: Sequence[FrozenTrial]) -> ConstraintStage:
        """Recover the multipliers from the trials and select the GP trials.

        Parameters
        ----------
        trials
            The study's trials (any states: only COMPLETE ones count, and PRUNED ones with
            ``include_pruned``, so pass the PRUNED trials too in that case; the caller may
            pre-filter, e.g. to trials holding every parameter of the search space). The input
            order does not matter: epochs follow ``epoch_order``.

        Returns
        -------
        ConstraintStage
            GP trials, their constraint values, the multiplier state and the target transform
            (``stage.targets(y)``); unpacks as ``trials, transform, state``.

        Raises
        ------
        ConstraintDataError
            With ``on_missing="raise"``, for the first unusable trial.
        ValueError
            If ``kappa_init`` has another length than the number of constraints.
        """
        matrix = constraint_matrix(
            self.counted_trials(trials), names=self.names, on_missing=self.on_missing
        )
        G, names = matrix.values, matrix.names
        scale, objective_scale = None, 1.0
        if self.scale and G.shape[1]:
            # Scales of the first epoch: they do not drift as the search settles near g = 0
            # (a mean |g| over all trials would shrink and inflate the multipliers).
            first = slice(0, self.epoch_length)
            scale = unit_scales(G[first])
            G = G / scale
            values = np.array([t.value for t in matrix.trials[first]
                               if t.state == TrialState.COMPLETE], dtype=float)
            spread = float(np.std(values)) if values.size > 1 else 0.0
            objective_scale = spread if math.isfinite(spread) and spread > 0 else 1.0
        kappa_init = self.kappa_init if G.shape[1] else 1.0
        if self.variant == "noiseless":
            assert self.psi is not None
            state = recover_noiseless(
                G, self.epoch_length, self.psi, kappa_init, self.max_log_kappa, names
            )
        else:
            assert self.kappa_step is not None
            state = recover_noisy(
                G, self.epoch_length, self.kappa_step, kappa_init if G.shape[1] else 0.0,
                self.kappa_step0, self.n_trials_hint, names,
            )
        complete = np.array([t.state == TrialState.COMPLETE for t in matrix.trials], dtype=bool)
        if self.history == "epoch":
            complete &= epoch_index(matrix.n, self.epoch_length) == state.epoch
        idx = np.flatnonzero(complete)
        return ConstraintStage(
            trials=tuple(matrix.trials[i] for i in idx),
            constraints=G[idx],
            state=state,
            skipped=matrix.skipped,
            n_epochs=horizon_epochs(matrix.n, self.epoch_length, self.n_trials_hint),
            psi=self.psi,
            max_log_penalty=self.max_log_penalty,
            scale=scale,
            objective_scale=objective_scale,
        )
