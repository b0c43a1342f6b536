"""Users' objectives as a harness suite (``python -m benchmarks run users``): tuning objectives
written the way optuna-examples writes them (xgboost and lightgbm with their branches, a
scikit-learn model choice, HistGradientBoosting, an MLP with a dynamic number of layers) on
generated and bundled data (``objectives.py``), in a tuning and a validation half. Each
objective is deterministic and does not depend on the run's seed, so one random-search pool per
problem scores every seed's run (``benchmarks/harness/pool.py``), at 40 and 100 trials."""

from __future__ import annotations

from benchmarks.harness.suite import SKLEARN_MODEL_MODULES, Scoring, Suite, fixed_budgets

from .data import load, split
from .objectives import HALVES, PROBLEMS


def _warm(tasks: list) -> None:
    """The data sets (generated once per worker) and their splits."""
    for name in {t.problem for t in tasks}:
        data = PROBLEMS[name].extra["data"]
        load(data)
        split(data)

SUITE = Suite(
    name="users", title="Users' objectives (optuna-examples style): normalised scores",
    halves={h: list(HALVES[h]) for h in ("tuning", "validation")},
    problem=lambda name, seed: PROBLEMS[name], budget=lambda name: 40,
    scoring=Scoring("pool", fixed_budgets(40, 100)), seeds=5,
    samplers=("GP-UCB", "GPSampler", "TPE", "Random"),
    modules=SKLEARN_MODEL_MODULES + ("xgboost", "lightgbm"), warm=_warm,
    describe=lambda name: PROBLEMS[name].description,
    notes="Objectives as optuna-examples writes them, on generated data and scikit-learn's "
          "bundled iris and diabetes (`benchmarks/users/objectives.py`); wine, breast cancer "
          "and digits are reserved for the project's final check.")
