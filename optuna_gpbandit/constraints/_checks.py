"""Validation helpers shared by the constraint modules (numbers, integers, matrices, names)."""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

_MAX_LOG = 300.0  # exp(300) ~ 1.9e130: squares and sums of a few such terms stay finite


def _check_no_nan(x: np.ndarray, what: str) -> None:
    if np.isnan(x).any():
        raise ValueError(f"{what} contains NaN.")


def _check_int(name: str, value: Any, minimum: int) -> int:
    is_int = isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
    if not is_int or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}.")
    return int(value)


def _finite_float(name: str, value: Any) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}.") from None
    if isinstance(value, (bool, np.bool_)) or not math.isfinite(v):
        raise ValueError(f"{name} must be a finite number, got {value!r}.")
    return v


def _as_matrix(G: Any) -> np.ndarray:
    G = np.asarray(G, dtype=float)
    if G.ndim == 1:
        G = G[:, None]
    if G.ndim != 2:
        raise ValueError(f"The constraint matrix must be 2-D (n x m), got shape {G.shape}.")
    if not np.isfinite(G).all():
        raise ValueError("The constraint matrix contains NaN or infinite values.")
    return G


def _kappa_vector(kappa_init: float | Sequence[float], m: int, positive: bool) -> np.ndarray:
    k = np.atleast_1d(np.asarray(kappa_init, dtype=float))
    if k.ndim != 1 or (m > 0 and k.size not in (1, m)):
        raise ValueError(
            f"kappa_init must be a number or one value per constraint ({m}), got {kappa_init!r}."
        )
    if not np.isfinite(k).all() or ((k <= 0).any() if positive else (k < 0).any()):
        bound = "> 0 (log kappa)" if positive else ">= 0"
        raise ValueError(f"kappa_init must be finite and {bound}, got {kappa_init!r}.")
    return np.broadcast_to(k, (m,)).copy() if k.size == 1 else k.copy()


def _check_max_log(name: str, value: Any) -> float:
    v = _finite_float(name, value)
    if not 0 < v <= _MAX_LOG:
        raise ValueError(f"{name} must be in (0, {_MAX_LOG:g}], got {value!r}.")
    return v


def _check_names(names: Sequence[str] | None) -> tuple[str, ...] | None:
    if names is None:
        return None
    if isinstance(names, str):
        names = (names,)
    names = tuple(names)
    if not names or not all(isinstance(n, str) for n in names) or len(set(names)) != len(names):
        raise ValueError(f"names must be a non-empty sequence of distinct strings, got {names!r}.")
    return names


def _check_y(y: Any, n: int) -> np.ndarray:
    y = np.asarray(y, dtype=float)
    if y.shape != (n,):
        raise ValueError(f"y must have shape ({n},) like the constraint rows, got {y.shape}.")
    _check_no_nan(y, "y")
    return y
