"""The constraint stage of a suggestion: the constraint GPs of :class:`FeasibleConstraints`
(the maximiser is kept to the points they admit), or the penalised targets and width factors
of :class:`LongTermConstraints` (Shi & Eryilmaz), with their records and notices."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from optuna.study import Study
from optuna.trial import FrozenTrial

from optuna_gpbandit.model import GPModel
from optuna_gpbandit._history import History
from optuna_gpbandit._notices import WARNING, log_once
from optuna_gpbandit._observations import oriented_values
from optuna_gpbandit._space import EncodedSpace
from optuna_gpbandit._storage import MULTIPLIERS, OPTUNA_CONSTRAINTS, write_trial_json
from optuna_gpbandit.constraints import (ConstraintModels,
                                         FeasibleConstraints, LongTermConstraints,
                                         trial_constraints)
from optuna_gpbandit.constraints.data import set_constraint_note

# Up to this many constraints, every trial's records hold all multipliers.
FULL_MULTIPLIER_RECORD = 20


@dataclass
class ConstraintStep:
    """What the constraint stage hands on: the trials the model sees, their targets (``None``:
    the objective's own values), the width factors of the long-term rule and the constraint
    models of the feasible rule."""

    history: History
    targets: dict[int, float] | None = None
    noise_factor: float = 1.0
    delta_factor: float = 1.0
    feasibility: ConstraintModels | None = None
    startup: bool = False  # a fresh epoch of history="epoch": a start-up point
    penalised: bool = False  # the targets are penalised (the model does not predict values)
    record: dict[str, Any] = field(default_factory=dict)


def resolve_constraints(
    constraints: FeasibleConstraints | LongTermConstraints | str | None,
    constraints_func: Callable[[FrozenTrial], Sequence[float]] | None,
) -> tuple[FeasibleConstraints | LongTermConstraints | None, bool]:
    """The constraint rule of the ``constraints`` and ``constraints_func`` arguments, and
    whether it is ``"auto"`` (GPSampler's meaning: the best feasible point once trials report
    constraint values, quietly nothing before; a ``constraints_func`` asks for constraints
    explicitly). Raises ``ValueError`` naming the argument."""
    if not (constraints is None or (isinstance(constraints, str) and constraints == "auto")
            or isinstance(constraints, (LongTermConstraints, FeasibleConstraints))):
        raise ValueError(
            "constraints must be 'auto', None, or a FeasibleConstraints or "
            f"LongTermConstraints instance, got {constraints!r}."
        )
    if constraints_func is not None and not callable(constraints_func):
        raise ValueError("constraints_func must be callable.")
    auto = constraints == "auto" and constraints_func is None
    if constraints == "auto" or (constraints is None and constraints_func is not None):
        constraints = FeasibleConstraints()
    assert not isinstance(constraints, str)  # "auto" was replaced, other strings rejected
    return constraints, auto


def _log_skipped(study: Study, skipped: Sequence[Any], what: str, sampler_name: str) -> None:
    """Once per study at 1, 2, 4, 8, ... skipped trials: the counts without a flood."""
    if skipped:
        log_once(study, f"constraint-skipped-{len(skipped).bit_length()}", WARNING,
                 "%s: %d trial(s) skipped by %s (unusable constraint data; "
                 "on_missing='skip'): %s", sampler_name, len(skipped), what,
                 "; ".join(k.message for k in skipped[:5]) + (" ..." if len(skipped) > 5 else ""))


def no_constraint_data(study: Study, trials: Sequence[FrozenTrial], sampler_name: str,
                       n_startup_trials: int) -> None:
    """Warn once that constraints were asked for but no trial reports any."""
    if len(trials) >= max(n_startup_trials, 1):
        n_empty = sum(1 for t in trials if t.system_attrs.get(OPTUNA_CONSTRAINTS) in ([], ()))
        log_once(study, "no-constraints", WARNING,
                 "%s: none of the %d completed trials reports constraint values "
                 "(trial.set_constraint(name, value) or constraints_func)%s; the "
                 "constraint stage does nothing until one does.%s",
                 sampler_name, len(trials),
                 f"; constraints_func returned an empty sequence for {n_empty} of them"
                 if n_empty else "", set_constraint_note())


def constraint_step(
    constraints: FeasibleConstraints | LongTermConstraints | None, *, auto: bool, study: Study,
    trial: FrozenTrial, space: EncodedSpace, history: History, start: int, model: GPModel,
    seed: int, sampler_name: str, n_startup_trials: int,
) -> ConstraintStep:
    """The constraint stage on the trials from ``start`` on (``auto``: constraints='auto',
    quiet while no trial reports constraint values)."""
    if isinstance(constraints, FeasibleConstraints):
        return _feasible(constraints, auto, study, [t for t in history.completed
                                                    if t.number >= start],
                         space, history, model, seed, sampler_name, n_startup_trials)
    if constraints is None:
        return ConstraintStep(history)
    return _long_term(constraints, study, trial, space, history, start, sampler_name,
                      n_startup_trials)


def _feasible(constraints: FeasibleConstraints, auto: bool, study: Study,
              counted: list[FrozenTrial], space: EncodedSpace, history: History,
              model: GPModel, seed: int, sampler_name: str,
              n_startup_trials: int) -> ConstraintStep:
    feasibility, skipped = constraints.fit(counted, space, model, seed)
    _log_skipped(study, skipped, "the constraint models", sampler_name)
    step = ConstraintStep(history, feasibility=feasibility)
    if feasibility is not None or not auto:  # quiet when unused
        step.record["feasibility"] = {
            "constraints": 0 if feasibility is None else len(feasibility.models),
            "warped": 0 if feasibility is None else sum(feasibility.warped)}
    if not auto and not any(trial_constraints(t)[0] for t in counted):
        no_constraint_data(study, counted, sampler_name, n_startup_trials)
    return step


def _long_term(constraints: LongTermConstraints, study: Study, trial: FrozenTrial,
               space: EncodedSpace, history: History, start: int, sampler_name: str,
               n_startup_trials: int) -> ConstraintStep:
    stage = constraints.prepare([
        t for t in history.all_trials
        if t.number >= start and all(n in t.params for n in space.names)
    ])
    _log_skipped(study, stage.skipped, "the long-term constraints", sampler_name)
    if stage.state.clipped:
        log_once(study, "long-term-clipped", WARNING,
                 "%s: log kappa reached max_log_kappa=%g (constraint means far above 0 for "
                 "psi's scale); it is clipped. Consider psi='poly' or a smaller psi_c.",
                 sampler_name, constraints.max_log_kappa)
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
