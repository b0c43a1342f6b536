"""A two-parameter study with GP-UCB from this package.

Needs ``optuna_gpbandit`` installed (see README.md, "Installation").
"""

from __future__ import annotations

import optuna
import optunahub


def objective(trial: optuna.Trial) -> float:
    x = trial.suggest_float("x", -5.0, 5.0)
    y = trial.suggest_float("y", -5.0, 5.0)
    return (x - 2.0) ** 2 + (y + 1.0) ** 2


module = optunahub.load_module(package="samplers/gp_bandit")
study = optuna.create_study(sampler=module.GPUCBSampler(seed=0))
study.optimize(objective, n_trials=30)
print(study.best_params, study.best_value)
