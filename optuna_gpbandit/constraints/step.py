"""The constraint stage of a suggestion, as its rule runs it (:class:`ConstraintRule`): the
do-nothing rule of ``constraints=None`` here; the constraint GPs of
:class:`~optuna_gpbandit.constraints.feasible.FeasibleConstraints` (the maximiser is kept to
the points they admit), or the penalised targets and width factors of
:class:`~optuna_gpbandit.constraints.long_term.LongTermConstraints` (Shi & Eryilmaz), with
their records and notices. What the stage hands on is a :class:`ConstraintStep`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from optuna.study import Study
from optuna.trial import FrozenTrial

from optuna_gpbandit._history import History
from optuna_gpbandit._notices import WARNING, log_once
from optuna_gpbandit._space import EncodedSpace
from optuna_gpbandit._storage import OPTUNA_CONSTRAINTS
from optuna_gpbandit.constraints.data import set_constraint_note
from optuna_gpbandit.constraints.models import ConstraintModels
from optuna_gpbandit.model import GPModel


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


@dataclass(frozen=True)
class ConstraintRule:
    """A rule of the constraint stage (``constraints=``): here, none (constraint values are
    ignored: ``constraints=None``)."""

    @property
    def multi_objective(self) -> bool:
        """Whether the rule serves a study with several objectives."""
        return True

    @property
    def reads_constraints(self) -> bool:
        """Whether the rule reads the trials' constraint values (not the do-nothing rule)."""
        return False

    def step(self, *, auto: bool, study: Study, trial: FrozenTrial, space: EncodedSpace,
             history: History, start: int, model: GPModel, seed: int, sampler_name: str,
             n_startup_trials: int) -> ConstraintStep:
        """The constraint stage on the trials from ``start`` on (``auto``: the rule stands
        for ``constraints="auto"``, quiet while no trial reports constraint values)."""
        return ConstraintStep(history)


@dataclass(frozen=True)
class NoConstraints(ConstraintRule):
    """Constraint values are ignored (``constraints=None``)."""


def log_skipped(study: Study, skipped: Sequence[Any], what: str, sampler_name: str) -> None:
    """Once per study, at the first skipped trial(s)."""
    if skipped:
        log_once(study, "constraint-skipped", WARNING,
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
