"""Per-trial random streams derived from ``(seed, trial number)``.

Nothing advances between calls, so a fresh sampler with the same seed (a resumed study, another
worker process) draws exactly what an uninterrupted run would, and two workers sharing a seed
still differ because their trial numbers differ.
"""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np
from optuna.distributions import BaseDistribution
from optuna.samplers import RandomSampler
from optuna.study import Study
from optuna.trial import FrozenTrial

# Purposes keep independent streams apart for the same trial.
SAMPLE, FIT, INDEPENDENT, SUBSET = 3, 4, 5, 6


def trial_rng(seed: int, number: int, purpose: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([seed, number, purpose]))


class TrialSeededRandomSampler(RandomSampler):
    """Optuna's ``RandomSampler`` whose draw for a parameter depends only on
    ``(seed, trial number, parameter name)``.

    The default independent sampler: worker processes that share a seed still draw different
    first points (one ``RandomSampler(seed)`` per process would give them all the same), and a
    resumed study draws what an uninterrupted one did.
    """

    def __init__(self, seed: int) -> None:
        super().__init__(seed=seed)
        self._base_seed = int(seed)

    def reseed_rng(self) -> None:  # draws are per trial; nothing to reseed
        pass

    def sample_independent(
        self,
        study: Study,
        trial: FrozenTrial,
        param_name: str,
        param_distribution: BaseDistribution,
    ) -> Any:
        name_key = zlib.crc32(param_name.encode("utf-8"))
        seed = np.random.SeedSequence([self._base_seed, trial.number, INDEPENDENT, name_key])
        one_off = RandomSampler(seed=int(seed.generate_state(1)[0]))
        return one_off.sample_independent(study, trial, param_name, param_distribution)
