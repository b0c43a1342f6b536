"""The long-term constraint rule (:class:`LongTermConstraints`, Shi & Eryilmaz, AISTATS 2022):
the study's trials -> the multipliers, the penalised targets of the GP and the width factors
(:meth:`LongTermConstraints.step`), with their record and notices."""

from __future__ import annotations

import dataclasses
import datetime
import math
from dataclasses import dataclass
from typing import Any, Sequence, cast

import numpy as np
from optuna.study import Study
from optuna.trial import FrozenTrial, TrialState

from optuna_gpbandit._arguments import check_instance
from optuna_gpbandit._history import History
from optuna_gpbandit._notices import WARNING, log_once
from optuna_gpbandit._observations import oriented_values
from optuna_gpbandit._space import EncodedSpace
from optuna_gpbandit._storage import MULTIPLIERS, write_trial_json
from optuna_gpbandit.constraints._checks import _check_int, _check_max_log, _check_names
from optuna_gpbandit.constraints.algorithms import (Multipliers, NoiselessMultipliers,
                                                    NoisyMultipliers)
from optuna_gpbandit.constraints.data import MISSING_POLICIES, constraint_matrix
from optuna_gpbandit.constraints.multipliers import epoch_index, horizon_epochs
from optuna_gpbandit.constraints.psi import Psi
from optuna_gpbandit.constraints.stage import ConstraintStage, unit_scales
from optuna_gpbandit.constraints.step import (ConstraintRule, ConstraintStep, log_skipped,
                                              no_constraint_data)
from optuna_gpbandit.model import GPModel

_RULES: dict[str, type[NoiselessMultipliers] | type[NoisyMultipliers]] = {
    "noiseless": NoiselessMultipliers, "noisy": NoisyMultipliers}
VARIANTS = tuple(_RULES)
_FAR_FUTURE = datetime.datetime.max
FULL_MULTIPLIER_RECORD = 20
"""Up to this many constraints, every trial's records hold all multipliers."""


def _from_variant(variant: str, fields: dict[str, Any]) -> Multipliers:
    """The multiplier rule of the earlier spelling ``LongTermConstraints(variant, **fields)``
    (a field left at ``None`` means its default)."""
    if variant not in _RULES:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}.")
    rule = _RULES[variant]
    own = {f.name for f in dataclasses.fields(rule)}
    for name, value in fields.items():
        if name in own:
            continue
        other = next((v for v, r in _RULES.items()
                      if name in {f.name for f in dataclasses.fields(r)}), None)
        if other is None:
            raise TypeError(f"LongTermConstraints.__init__() got an unexpected keyword argument "
                            f"{name!r}")
        if value is not None:
            raise ValueError(f"{name} applies to variant={other!r} only "
                             f"(LongTermConstraints(multipliers={_RULES[other].__name__}("
                             f"{name}=...))).")
    return rule(**{k: v for k, v in fields.items() if k in own and v is not None})


@dataclass(frozen=True, init=False)
class LongTermConstraints(ConstraintRule):
    """The long-term constraint rule (Shi & Eryilmaz 2022): the constraints hold on average
    over the trials (``constraints=LongTermConstraints(...)``).

    Parameters
    ----------
    multipliers
        How the multipliers are updated and penalise the targets:
        :class:`~optuna_gpbandit.NoiselessMultipliers` (default; Algorithm 2: multiplicative
        update, penalty ``psi(g) - 1``) or :class:`~optuna_gpbandit.NoisyMultipliers`
        (Algorithm 3: additive projected update, linear penalty, noise level ``sqrt(1 + sum
        kappa^2) R``), each with its own fields (``psi``, ``kappa_step``, ``kappa_init``, ...).
    variant
        The earlier spelling of ``multipliers``, still accepted: ``"noiseless"`` or
        ``"noisy"``, with that rule's fields as keyword arguments
        (``LongTermConstraints("noisy", kappa_step=0.3)`` is
        ``LongTermConstraints(multipliers=NoisyMultipliers(kappa_step=0.3))``); a field of the
        other rule is an error naming it.
    epoch_length
        ``S`` (default 20, the paper's experiments), or ``"sqrt"``: ``max(1, round(sqrt(T)))``
        with ``T = n_trials_hint``. Keep it fixed for a study: it defines the epochs of all
        history. The multipliers change only when an epoch closes: a study of ``S`` trials or
        fewer never moves them, and one of ``2 S`` moves them once; for a short study pass a
        smaller ``S``, or ``"sqrt"`` with its ``n_trials_hint``.
    n_trials_hint
        Horizon ``T`` if known: ``L = ceil(T / S)`` in ``delta / L`` and in
        ``kappa_step="theory"``; otherwise ``L`` is the current epoch (1-based).
    max_log_penalty
        Overflow guard (in ``(0, 300]``, default 100): every penalty term is capped at
        ``exp(max_log_penalty)``.
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
        boundary), before the penalty, so a constraint in MB or in GB gives the same
        multipliers and points (raw values in the hundreds saturate ``psi = exp``).
        ``False``: the paper's raw values.
    """

    multipliers: Multipliers
    epoch_length: int
    n_trials_hint: int | None
    max_log_penalty: float
    history: str
    on_missing: str
    names: tuple[str, ...] | None
    include_pruned: bool
    epoch_order: str
    scale: bool

    def __init__(
        self,
        variant: str | None = None,
        *,
        multipliers: Multipliers | None = None,
        epoch_length: int | str = 20,
        n_trials_hint: int | None = None,
        max_log_penalty: float = 100.0,
        history: str = "all",
        on_missing: str = "skip",
        names: Sequence[str] | None = None,
        include_pruned: bool = False,
        epoch_order: str = "number",
        scale: bool = True,
        **variant_fields: Any,
    ) -> None:
        if multipliers is None:
            multipliers = _from_variant("noiseless" if variant is None else variant,
                                        variant_fields)
        elif variant is not None or variant_fields:
            raise ValueError("Pass multipliers=NoiselessMultipliers(...) or "
                             "NoisyMultipliers(...), or the earlier variant and its fields, "
                             "not both.")
        else:
            check_instance("multipliers", multipliers, (NoiselessMultipliers, NoisyMultipliers),
                           "NoiselessMultipliers(...) or NoisyMultipliers(...)")
        hint = None if n_trials_hint is None else _check_int("n_trials_hint", n_trials_hint, 1)
        if epoch_length == "sqrt":
            if hint is None:
                raise ValueError("epoch_length='sqrt' needs n_trials_hint (the horizon T).")
            epoch_length = max(1, round(math.sqrt(hint)))
        else:
            epoch_length = _check_int("epoch_length", epoch_length, 1)
        if history not in ("all", "epoch"):
            raise ValueError(f"history must be 'all' or 'epoch', got {history!r}.")
        if on_missing not in MISSING_POLICIES:
            raise ValueError(f"on_missing must be one of {MISSING_POLICIES}, got {on_missing!r}.")
        if not isinstance(include_pruned, (bool, np.bool_)):
            raise ValueError(f"include_pruned must be a bool, got {include_pruned!r}.")
        if epoch_order not in ("number", "complete"):
            raise ValueError(f"epoch_order must be 'number' or 'complete', got {epoch_order!r}.")
        if not isinstance(scale, (bool, np.bool_)):
            raise ValueError(f"scale must be a bool, got {scale!r}.")
        for name, value in (
            ("multipliers", multipliers), ("epoch_length", epoch_length), ("n_trials_hint", hint),
            ("max_log_penalty", _check_max_log("max_log_penalty", max_log_penalty)),
            ("history", history), ("on_missing", on_missing), ("names", _check_names(names)),
            ("include_pruned", bool(include_pruned)), ("epoch_order", epoch_order),
            ("scale", bool(scale)),
        ):
            object.__setattr__(self, name, value)

    # ------------------------------------------------- the multiplier rule's fields (read)
    @property
    def variant(self) -> str:
        """``"noiseless"`` (Algorithm 2) or ``"noisy"`` (Algorithm 3)."""
        return self.multipliers.variant

    @property
    def psi(self) -> Psi | None:
        """Algorithm 2's penalty shape (``None`` for Algorithm 3)."""
        return cast("Psi | None", getattr(self.multipliers, "psi", None))

    @property
    def kappa_init(self) -> float | tuple[float, ...]:
        return self.multipliers.kappa_init  # type: ignore[return-value]

    @property
    def kappa_step(self) -> float | str | None:
        """Algorithm 3's step (``None`` for Algorithm 2)."""
        return getattr(self.multipliers, "kappa_step", None)

    @property
    def max_log_kappa(self) -> float | None:
        """Algorithm 2's clip of ``log kappa`` (``None`` for Algorithm 3)."""
        return getattr(self.multipliers, "max_log_kappa", None)

    @property
    def multi_objective(self) -> bool:
        return False

    @property
    def reads_constraints(self) -> bool:
        return True

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
        state = self.multipliers.recover(G, self.epoch_length, self.n_trials_hint, names)
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
            multipliers=self.multipliers,
            max_log_penalty=self.max_log_penalty,
            scale=scale,
            objective_scale=objective_scale,
        )

    def step(self, *, auto: bool, study: Study, trial: FrozenTrial, space: EncodedSpace,
             history: History, start: int, model: GPModel, seed: int, sampler_name: str,
             n_startup_trials: int) -> ConstraintStep:
        """The penalised targets of the trials from ``start`` on that hold every parameter of
        ``space`` (:meth:`prepare`), the width factors, and the multipliers' record (also
        written to the trial, ``gpbandit:multipliers``)."""
        stage = self.prepare([
            t for t in history.all_trials
            if t.number >= start and all(n in t.params for n in space.names)
        ])
        log_skipped(study, stage.skipped, "the long-term constraints", sampler_name)
        if stage.state.clipped:
            log_once(study, "long-term-clipped", WARNING,
                     "%s: log kappa reached max_log_kappa=%g (constraint means far above 0 for "
                     "psi's scale); it is clipped. Consider psi='poly' or a smaller psi_c.",
                     sampler_name, self.max_log_kappa)
        if not stage.trials:  # history="epoch" at the start of an epoch: a fresh start
            return ConstraintStep(history, startup=True)
        step = ConstraintStep(dataclasses.replace(history, completed=list(stage.trials)),
                              penalised=True)
        y = oriented_values(step.history.completed, study.direction)
        step.targets = dict(zip(stage.numbers.tolist(), stage.targets(y).tolist()))
        if stage.state.m:  # no constraint data yet: the plain sampler on f
            # the width of constrained_beta: the sampler's R times noise_factor, delta times this
            step.noise_factor = stage.state.noise_factor
            step.delta_factor = stage.delta_factor
        else:
            no_constraint_data(study, stage.trials, sampler_name, n_startup_trials)
        full = stage.state.to_json()
        small = stage.state.m <= FULL_MULTIPLIER_RECORD
        step.record["multipliers"] = full if small else stage.state.summary_json()
        # Multipliers change only between epochs: with many constraints, the first trial of an
        # epoch holds them all, the others a summary (nothing here is read back).
        write_trial_json(study, trial, MULTIPLIERS,
                         full if small or stage.state.position == 0 else step.record["multipliers"])
        return step
