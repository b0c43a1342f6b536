"""Samplers of the harness by name: ours with their defaults against Optuna's.

A name may also be a *variant* of one of ours: the sampler's name followed by a JSON object
of constructor arguments, e.g. ``'GP-TS{"B": 0.7}'`` or ``'GP-UCB{"beta_scale": 0.15}'``
(quote it in the shell). The runs carry the whole name, so a variant is scored beside the
defaults as a sampler of its own (``python -m benchmarks run --samplers ...``,
``python -m benchmarks.hpo run --samplers ...``).
"""

from __future__ import annotations

import json
from typing import Any, Callable

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
_CLASSES = {"GP-UCB": GPUCBSampler, "IGP-UCB": IGPUCBSampler, "GP-TS": GPTSSampler}


def parse_variant(name: str) -> tuple[str, dict[str, Any]] | None:
    """``(base, kwargs)`` of a variant name such as ``'GP-TS{"B": 0.7}'``; ``None`` for a name
    without arguments. Raises ``ValueError`` naming the variant if the base is not one of
    ours, the arguments are not a JSON object, or the sampler rejects them."""
    i = name.find("{")
    if i < 0:
        return None
    base, text = name[:i], name[i:]
    if base not in _CLASSES:
        raise ValueError(f"variant {name!r}: {base!r} is not one of {', '.join(_CLASSES)}")
    try:
        kwargs = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"variant {name!r}: the arguments are not JSON ({e})") from None
    if not isinstance(kwargs, dict):
        raise ValueError(f"variant {name!r}: the arguments must be a JSON object")
    if "seed" in kwargs:
        raise ValueError(f"variant {name!r}: the seed is the run's, not an argument")
    try:
        _CLASSES[base](seed=0, **kwargs)
    except (TypeError, ValueError) as e:
        raise ValueError(f"variant {name!r}: {e}") from None
    return base, kwargs


def unknown_samplers(names: list[str]) -> list[str]:
    """The names that are neither known samplers nor valid variants (with the reason)."""
    bad = []
    for n in names:
        if n in SAMPLERS:
            continue
        try:
            if parse_variant(n) is None:
                bad.append(n)
        except ValueError as e:
            bad.append(str(e))
    return bad


def make_sampler(name: str, seed: int) -> optuna.samplers.BaseSampler:
    if name not in SAMPLERS:
        parsed = parse_variant(name)
        if parsed is not None:
            return _CLASSES[parsed[0]](seed=seed, **parsed[1])
    try:
        return SAMPLERS[name](seed)
    except KeyError:
        raise KeyError(f"unknown sampler {name!r}; known: {', '.join(SAMPLERS)} (or a "
                       "variant such as 'GP-TS{\"B\": 0.7}')") from None
