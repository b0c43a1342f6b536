"""Gaussian-process core: kernels, exact posterior, MAP hyperparameters, information gain."""

from optuna_gpbandit.gp.fit import fit_hyperparameters
from optuna_gpbandit.gp.information import (
    gamma_upper_bound,
    greedy_information_gain,
    information_gain,
)
from optuna_gpbandit.gp.kernels import KERNELS, Kernel
from optuna_gpbandit.gp.posterior import GPParams, GPPosterior, NumericalError

__all__ = [
    "KERNELS",
    "GPParams",
    "GPPosterior",
    "Kernel",
    "NumericalError",
    "fit_hyperparameters",
    "gamma_upper_bound",
    "greedy_information_gain",
    "information_gain",
]
