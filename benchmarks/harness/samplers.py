"""Samplers of the harness by name: ours with their defaults against Optuna's."""

from __future__ import annotations

from typing import Callable

import optuna

from optuna_gpbandit import GPTSSampler, GPUCBSampler, IGPUCBSampler

SAMPLERS: dict[str, Callable[[int], optuna.samplers.BaseSampler]] = {
    "GP-UCB": lambda seed: GPUCBSampler(seed=seed),
    "IGP-UCB": lambda seed: IGPUCBSampler(seed=seed),
    "GP-TS": lambda seed: GPTSSampler(seed=seed),
    "GPSampler": lambda seed: optuna.samplers.GPSampler(seed=seed),  # needs torch
    "TPE": lambda seed: optuna.samplers.TPESampler(seed=seed),
    "Random": lambda seed: optuna.samplers.RandomSampler(seed=seed),
    # without input warping (the papers' stationary kernel): the measured alternative
    "GP-UCB-stationary": lambda seed: GPUCBSampler(seed=seed, input_warping=False),
    "GP-TS-stationary": lambda seed: GPTSSampler(seed=seed, input_warping=False),
}
OURS = ["GP-UCB", "IGP-UCB", "GP-TS"]


def make_sampler(name: str, seed: int) -> optuna.samplers.BaseSampler:
    try:
        return SAMPLERS[name](seed)
    except KeyError:
        raise KeyError(f"unknown sampler {name!r}; known: {', '.join(SAMPLERS)}") from None
