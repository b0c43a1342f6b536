"""A two-parameter study with GP-UCB from this package.

Needs ``optuna_gpbandit`` installed (see README.md, "Installation"). Until this package is in
the OptunaHub registry, ``optunahub.load_module`` fails (the registry has no
``samplers/gp_bandit``, or cannot be reached); the example then says so and uses the installed
``optuna_gpbandit``, whose classes this package re-exports.
"""

from __future__ import annotations

import sys

import optuna
import optuna_gpbandit
import optunahub


def objective(trial: optuna.Trial) -> float:
    x = trial.suggest_float("x", -5.0, 5.0)
    y = trial.suggest_float("y", -5.0, 5.0)
    return (x - 2.0) ** 2 + (y + 1.0) ** 2


try:
    module = optunahub.load_module(package="samplers/gp_bandit")
except Exception as error:  # not in the registry yet (FileNotFoundError), or no network
    print(
        "samplers/gp_bandit is not in the OptunaHub registry yet, or the registry cannot be"
        " reached: using the installed optuna_gpbandit (the same samplers). To load this package"
        " from a checkout, see its README.md, 'Loading the package from a checkout'."
        f" (optunahub.load_module: {type(error).__name__}: {error})",
        file=sys.stderr,
    )
    module = optuna_gpbandit
study = optuna.create_study(sampler=module.GPUCBSampler(seed=0))
study.optimize(objective, n_trials=30)
print(study.best_params, study.best_value)
