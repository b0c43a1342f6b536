"""Per-trial random streams derived from ``(seed, trial number)``.

Nothing advances between calls, so a fresh sampler with the same seed (a resumed study, another
worker process) draws exactly what an uninterrupted run would, and two workers sharing a seed
still differ because their trial numbers differ.
"""

from __future__ import annotations

import numpy as np

# Purposes keep independent streams apart for the same trial.
SAMPLE, FIT = 3, 4


def trial_rng(seed: int, number: int, purpose: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([seed, number, purpose]))
