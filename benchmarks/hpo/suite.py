"""The real-HPO suite as a harness suite (``python -m benchmarks run hpo``): the 16 tasks of
``tasks.py`` (half ``tuning``: the defaults were chosen on them) and the 7 held-out tasks (half
``held-out``: no default was chosen on them), 10 seeds x 100 trials, scored against the result
set's Random runs at 40 and 100 trials."""

from __future__ import annotations

from benchmarks.harness.suite import SKLEARN_MODEL_MODULES, Scoring, Suite, fixed_budgets

from . import report
from .tasks import ALL_TASKS, DEFAULT_SAMPLERS, HELD_OUT, TASKS, folds, problem


def _warm(tasks: list) -> None:
    """The data sets and folds of the tasks."""
    for name in {t.problem for t in tasks}:
        folds(ALL_TASKS[name].dataset, ALL_TASKS[name].k)


SUITE = Suite(
    name="hpo", title="Real-HPO suite: normalised scores",
    halves={"tuning": list(TASKS), "held-out": list(HELD_OUT)},
    problem=lambda name, seed: problem(name), budget=lambda name: 100,
    scoring=Scoring("random-runs", fixed_budgets(40, 100)), seeds=10,
    samplers=tuple(DEFAULT_SAMPLERS), modules=SKLEARN_MODEL_MODULES, warm=_warm,
    sections=report.sections,
    describe=lambda name: problem(name).description + (" (held out)" if name in HELD_OUT
                                                        else ""),
    notes="In-house scikit-learn tasks (`benchmarks/hpo/__init__.py`); the held-out half's "
          "tasks were chosen on no default.")
