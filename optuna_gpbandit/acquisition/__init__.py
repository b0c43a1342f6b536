"""Acquisition: exploration schedules (beta_t, v_t), UCB, and Thompson draws."""

from optuna_gpbandit.acquisition.beta import (
    avanesov_beta,
    beta_theorem1,
    beta_theorem2,
    beta_theorem3,
    gp_ts_scale,
    igp_ucb_beta,
    theory_gamma,
)
from optuna_gpbandit.acquisition.thompson import argmax_random_tie, thompson_choice
from optuna_gpbandit.acquisition.ucb import UCB

__all__ = [
    "UCB",
    "argmax_random_tie",
    "avanesov_beta",
    "beta_theorem1",
    "beta_theorem2",
    "beta_theorem3",
    "gp_ts_scale",
    "igp_ucb_beta",
    "theory_gamma",
    "thompson_choice",
]
