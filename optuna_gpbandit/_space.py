"""Optuna distributions <-> encoded vectors.

One column per parameter:

* float (linear): ``(v - low) / (high - low)`` in ``[0, 1]``, continuous;
* float (log) and int (log): the same on ``log v``;
* float with ``step`` and int (linear or log): the same map, restricted to the valid grid of values
  (a *discrete* column: decoding rounds to the nearest valid value);
* categorical: the index of the choice (``0 .. n-1``). The kernel gives categorical columns a
  Hamming term instead of a distance (see :mod:`optuna_gpbandit.gp.kernels`): choices are
  unordered, and one column per parameter keeps the dimension (and the fit) small even with
  thousands of choices, where one-hot would add a column per choice.

Decoded values are always valid for their distribution (clipped to the bounds, snapped to the
step, Python ``int``/``float`` or the original choice object).
"""

from __future__ import annotations

import warnings
from typing import Any, Sequence

import numpy as np
from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)
from scipy.stats import qmc

_MAX_ENUMERATE = 10**6


class _Column:
    """Encoding of one distribution."""

    def __init__(self, dist: BaseDistribution) -> None:
        self.dist = dist
        self.categorical = isinstance(dist, CategoricalDistribution)
        if self.categorical:
            self.n_values: int | None = len(dist.choices)
            return
        if not isinstance(dist, (FloatDistribution, IntDistribution)):
            raise ValueError(f"Unsupported distribution {dist!r}.")
        self.log = bool(dist.log)
        self.step = None if isinstance(dist, FloatDistribution) and dist.step is None else (
            dist.step if dist.step is not None else 1
        )
        self.is_int = isinstance(dist, IntDistribution)
        lo, hi = float(dist.low), float(dist.high)
        self.a, self.b = (np.log(lo), np.log(hi)) if self.log else (lo, hi)
        if self.step is None:
            self.n_values = None
        else:
            self.n_values = int(np.floor((hi - lo) / self.step + 1e-8)) + 1

    # numeric helpers ------------------------------------------------------------------------
    def _to_unit(self, v: np.ndarray) -> np.ndarray:
        t = np.log(v) if self.log else v
        return (t - self.a) / (self.b - self.a) if self.b > self.a else np.zeros_like(t)

    def _from_unit(self, u: np.ndarray) -> np.ndarray:
        t = self.a + np.clip(u, 0.0, 1.0) * (self.b - self.a)
        v = np.exp(t) if self.log else t
        return np.clip(v, self.dist.low, self.dist.high)

    def _snap_values(self, v: np.ndarray) -> np.ndarray:
        """Nearest valid value (numeric columns with a step)."""
        low = float(self.dist.low)
        k = np.clip(np.round((v - low) / self.step), 0, self.n_values - 1)
        return low + k * self.step

    # public -----------------------------------------------------------------------------------
    def encode(self, value: Any) -> float:
        if self.categorical:
            return float(self.dist.to_internal_repr(value))
        return float(self._to_unit(np.asarray(float(value))))

    def snap(self, u: np.ndarray) -> np.ndarray:
        """Project encoded values onto the valid set."""
        if self.categorical:
            return np.clip(np.round(u), 0, self.n_values - 1)
        if self.step is None:
            return np.clip(u, 0.0, 1.0)
        return self._to_unit(self._snap_values(self._from_unit(u)))

    def decode(self, u: float) -> Any:
        if self.categorical:
            return self.dist.choices[int(np.clip(np.round(u), 0, self.n_values - 1))]
        v = float(self._from_unit(np.asarray(u)))
        if self.step is not None:
            v = float(self._snap_values(np.asarray(v)))
        if self.is_int:
            return int(round(v))
        return float(min(max(v, self.dist.low), self.dist.high))

    def values(self) -> np.ndarray:
        """All encoded valid values of a discrete column."""
        if self.categorical:
            return np.arange(self.n_values, dtype=float)
        low = float(self.dist.low)
        return self._to_unit(low + np.arange(self.n_values) * self.step)

    def from_uniform(self, u: np.ndarray) -> np.ndarray:
        """Map uniform ``[0, 1)`` draws to (roughly uniform) valid encoded values."""
        if self.categorical:
            return np.minimum(np.floor(u * self.n_values), self.n_values - 1)
        if self.step is None:
            return u
        if self.log and self.is_int:
            return self.snap(u)
        k = np.minimum(np.floor(u * self.n_values), self.n_values - 1)
        return self._to_unit(float(self.dist.low) + k * self.step)


class EncodedSpace:
    """The encoding of a relative search space.

    Parameters
    ----------
    search_space
        Parameter name -> Optuna distribution (single-valued ones should be removed first).
    """

    def __init__(self, search_space: dict[str, BaseDistribution]) -> None:
        self.search_space = dict(search_space)
        self.names = list(search_space)
        self.columns = [_Column(search_space[n]) for n in self.names]
        self.d = len(self.columns)
        self.is_categorical = np.array([c.categorical for c in self.columns], dtype=bool)
        self.is_continuous = np.array([c.n_values is None for c in self.columns], dtype=bool)

    @property
    def cardinality(self) -> int | None:
        """Number of points of a fully discrete space (``None`` if any column is continuous)."""
        if self.is_continuous.any():
            return None
        return int(np.prod([float(c.n_values) for c in self.columns])) if self.d else 1

    def encode(self, params: dict[str, Any]) -> np.ndarray:
        return np.array([c.encode(params[n]) for n, c in zip(self.names, self.columns)])

    def encode_many(self, params_list: Sequence[dict[str, Any]]) -> np.ndarray:
        X = np.zeros((len(params_list), self.d))
        for i, (n, c) in enumerate(zip(self.names, self.columns)):
            if c.categorical:
                X[:, i] = [c.dist.to_internal_repr(p[n]) for p in params_list]
            elif params_list:
                X[:, i] = c._to_unit(np.array([float(p[n]) for p in params_list]))
        return X

    def decode(self, x: np.ndarray) -> dict[str, Any]:
        return {n: c.decode(x[i]) for i, (n, c) in enumerate(zip(self.names, self.columns))}

    def snap(self, X: np.ndarray) -> np.ndarray:
        X = np.array(X, dtype=float, copy=True)
        for i, c in enumerate(self.columns):
            X[..., i] = c.snap(X[..., i])
        return X

    def column_values(self, i: int) -> np.ndarray:
        return self.columns[i].values()

    def sobol(self, n: int, seed: int) -> np.ndarray:
        """``n`` scrambled-Sobol points mapped to valid encoded values."""
        with warnings.catch_warnings():  # balance warning for n not a power of two
            warnings.simplefilter("ignore", UserWarning)
            U = qmc.Sobol(self.d, scramble=True, seed=seed).random(n)
        return self.from_uniform(U)

    def sobol_point(self, index: int, seed: int) -> np.ndarray:
        """Point number ``index`` of the scrambled Sobol sequence of ``seed`` (valid values)."""
        sobol = qmc.Sobol(self.d, scramble=True, seed=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            if index > 0:
                sobol.fast_forward(index)
            return self.from_uniform(sobol.random(1))[0]

    def from_uniform(self, U: np.ndarray) -> np.ndarray:
        X = np.empty_like(U)
        for i, c in enumerate(self.columns):
            X[:, i] = c.from_uniform(U[:, i])
        return X

    def enumerate(self, max_points: int) -> np.ndarray | None:
        """All points of a fully discrete space, or ``None`` if there are more than
        ``max_points`` (or any column is continuous)."""
        card = self.cardinality
        if card is None or card > min(max_points, _MAX_ENUMERATE):
            return None
        grids = np.meshgrid(*[c.values() for c in self.columns], indexing="ij")
        return np.stack([g.ravel() for g in grids], axis=1)
