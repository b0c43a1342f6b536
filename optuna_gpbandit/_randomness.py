"""Per-trial random streams derived from ``(seed, trial number)``.

Nothing advances between calls, so a fresh sampler with the same seed (a resumed study, another
worker process) draws exactly what an uninterrupted run would, and two workers sharing a seed
still differ because their trial numbers differ.
"""

from __future__ import annotations

import functools
import zlib
from typing import Any

import numpy as np
from optuna.distributions import BaseDistribution
from optuna.samplers import RandomSampler
from optuna.study import Study
from optuna.trial import FrozenTrial

from optuna_gpbandit._space import _Column, sobol_row

# Purposes keep independent streams apart for the same trial.
SAMPLE, FIT, INDEPENDENT, SUBSET, WEIGHTS = 3, 4, 5, 6, 7
QUASI_DIMS = 32  # parameters of a trial drawn from one scrambled Sobol point; later ones: random


def fresh_seed() -> int:
    """A seed in ``[0, 2**31)`` from fresh OS entropy (for a sampler the user gave none)."""
    entropy = np.random.SeedSequence().entropy
    assert isinstance(entropy, int)  # drawn by SeedSequence itself: an int
    return int(entropy % (2**31))


def trial_rng(seed: int, number: int, purpose: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([seed, number, purpose]))


@functools.lru_cache(maxsize=256)
def sobol_unit(seed: int, number: int) -> np.ndarray:
    """Point ``number`` of the scrambled ``QUASI_DIMS``-dimensional Sobol sequence of ``seed``."""
    return sobol_row(QUASI_DIMS, number, seed)


class TrialSeededRandomSampler(RandomSampler):
    """Optuna's ``RandomSampler`` whose draw for a parameter depends only on
    ``(seed, trial number, parameter)``, quasi-random across trials.

    The default independent sampler: worker processes that share a seed still draw different
    first points (one ``RandomSampler(seed)`` per process would give them all the same), and a
    resumed study draws what an uninterrupted one did. The ``j``-th parameter a trial suggests
    takes coordinate ``j`` of the trial number's point of a scrambled Sobol sequence (up to
    ``QUASI_DIMS`` parameters, then plain random draws), so trials asked before any has
    completed, when no relative search space is known yet (a batch of ``study.ask()``, the
    first trials of parallel workers), are spread like a space-filling design instead of
    uniform draws that may nearly coincide.
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
        j = len(trial.params)
        if j < QUASI_DIMS and not param_distribution.single():
            u = np.array([sobol_unit(self._base_seed, trial.number)[j]])
            column = _Column(param_distribution)
            return column.decode(float(column.from_uniform(u)[0]))
        name_key = zlib.crc32(param_name.encode("utf-8"))
        seed = np.random.SeedSequence([self._base_seed, trial.number, INDEPENDENT, name_key])
        one_off = RandomSampler(seed=int(seed.generate_state(1)[0]))
        return one_off.sample_independent(study, trial, param_name, param_distribution)
