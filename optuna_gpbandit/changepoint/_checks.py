"""Validation helpers shared by the change-point modules (integers, positive numbers)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def _check_int(name: str, value: Any, minimum: int = 0) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer, got {value!r}.")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}.")
    return int(value)


def _check_positive(name: str, value: Any, allow_inf: bool = False) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}.") from None
    if math.isnan(v) or v <= 0 or (math.isinf(v) and not allow_inf):
        what = "positive" if allow_inf else "positive and finite"
        raise ValueError(f"{name} must be {what}, got {value!r}.")
    return v
