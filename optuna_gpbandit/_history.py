"""Study history -> the trials the model sees.

* observations: COMPLETE trials that hold every parameter of the relative search space, in trial
  number order (a value of ``+-inf`` is kept and clipped later, NaN never reaches COMPLETE);
* pending: RUNNING and WAITING trials other than the one being sampled (reserved for the
  delayed-feedback stage; the samplers of the core ignore them);
* FAIL and PRUNED trials are dropped.
"""

from __future__ import annotations

from dataclasses import dataclass

from optuna.study import Study
from optuna.trial import FrozenTrial, TrialState


@dataclass(frozen=True)
class History:
    """Trials visible to the model for one sampling call."""

    completed: list[FrozenTrial]
    pending: list[FrozenTrial]
    all_trials: list[FrozenTrial]


def collect_history(study: Study, names: list[str], current: FrozenTrial) -> History:
    """Split the study's trials for a relative search space with parameter ``names``."""
    trials = study._get_trials(deepcopy=False, use_cache=False)
    completed = [
        t for t in trials if t.state == TrialState.COMPLETE and all(n in t.params for n in names)
    ]
    pending = [
        t
        for t in trials
        if t.state in (TrialState.RUNNING, TrialState.WAITING) and t.number != current.number
    ]
    completed.sort(key=lambda t: t.number)
    return History(completed=completed, pending=pending, all_trials=trials)
