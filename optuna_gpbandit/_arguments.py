"""Constructor argument checks: every bad value fails early, with a message naming it."""

from __future__ import annotations

import inspect
import math
from typing import Any

import numpy as np


def check_int(name: str, value: Any, minimum: int) -> int:
    """An integer (not a bool, not a float) ``>= minimum``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}.")
    return int(value)


def check_seed(seed: Any) -> int | None:
    """``None`` or an integer in ``[0, 2**32)``, as numpy's generators take."""
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"seed must be an integer or None, got {seed!r}.")
    if not 0 <= int(seed) < 2**32:
        raise ValueError(f"seed must lie in [0, 2**32), got {seed!r}.")
    return int(seed)


def check_number(
    name: str, value: Any, *, minimum: float = 0.0, strict: bool = False,
    upper: float | None = None,
) -> float:
    """A finite real number ``>= minimum`` (``> minimum`` if ``strict``; ``< upper`` if given)."""
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    v = float(value) if ok else math.nan
    if not (math.isfinite(v) and (v > minimum if strict else v >= minimum)) or (
        upper is not None and not v < upper
    ):
        bound = f"> {minimum:g}" if strict else f">= {minimum:g}"
        if upper is not None:
            bound += f" and < {upper:g}"
        raise ValueError(f"{name} must be a finite number {bound}, got {value!r}.")
    return v


def check_instance(name: str, value: Any, cls: type | tuple[type, ...], spelled: str) -> Any:
    """``value`` if it is an instance of ``cls`` (a settings argument's class); ``spelled``
    says in the message what it must be."""
    if not isinstance(value, cls):
        raise ValueError(f"{name} must be {spelled}, got {value!r}.")
    return value


def check_bool(name: str, value: Any) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}.")
    return bool(value)


def forward(cls: type, values: dict[str, Any]) -> dict[str, Any]:
    """The entries of ``values`` (a constructor's ``locals()``) that ``cls.__init__`` takes by
    keyword, following ``**kwargs`` up the MRO: a public sampler lists every argument in its
    own signature and hands them on to its parent with one call."""
    names: set[str] = set()
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        params = inspect.signature(init).parameters.values()
        names.update(p.name for p in params if p.kind == p.KEYWORD_ONLY)
        if not any(p.kind == p.VAR_KEYWORD for p in params):
            break
    return {name: values[name] for name in names if name in values}
