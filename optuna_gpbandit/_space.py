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

Wide discrete columns (``suggest_int(.., 0, 10**12)``, a float ``step`` of ``1e-6`` over
``[0, 1e6]``) are never enumerated: valid values are addressed by their grid index
(:meth:`_Column.values_at`), and numeric discrete columns with more than :data:`RELAX_THRESHOLD`
values are *relaxed* (:attr:`EncodedSpace.is_relaxed`): the acquisition maximiser treats them as
continuous and snaps the result onto the grid.
"""

from __future__ import annotations

import math
import warnings
from decimal import Decimal
from typing import Any, Sequence, cast

import numpy as np
from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)

_MAX_ENUMERATE = 10**6
RELAX_THRESHOLD = 1000
"""Numeric discrete columns with more valid values than this are relaxed to continuous ones by
the acquisition maximiser (L-BFGS-B, then snapped onto the grid); smaller ones get a line search
over their values. Above 1000 values a linear column's grid spacing is below 0.001 encoded units,
the maximiser's same-point tolerance, so rounding the relaxed optimum moves it less than that;
and the line search's 64 values would cover under 7 % of the grid."""
# Grid indices tried, in order, for a stepped float whose value fails Optuna's test (see
# `_Column._grid`): (multiple m, offset o) -> (round(k / m) + o) * m.
_FIX_TRIES = tuple((1.0, s * j) for j in range(1, 17) for s in (1, -1)) + tuple(
    (10.0**p, o) for p in range(1, 16) for o in (0, 1, -1)
)


class _Column:
    """Encoding of one distribution."""

    def __init__(self, dist: BaseDistribution) -> None:
        self.dist = dist
        self.categorical = isinstance(dist, CategoricalDistribution)
        if isinstance(dist, CategoricalDistribution):  # self.categorical
            self.n_values: int | None = len(dist.choices)
            return
        if not isinstance(dist, (FloatDistribution, IntDistribution)):
            raise ValueError(f"Unsupported distribution {dist!r}.")
        self.log = bool(dist.log)
        self.step: float | None = (
            None if isinstance(dist, FloatDistribution) and dist.step is None
            else (dist.step if dist.step is not None else 1)
        )
        self.is_int = isinstance(dist, IntDistribution)
        lo, hi = float(dist.low), float(dist.high)
        self.a: float
        self.b: float
        self.a, self.b = (np.log(lo), np.log(hi)) if self.log else (lo, hi)
        # A range wider than the largest float (suggest_float(-1e308, 1e308)) is mapped in
        # halves: halving is exact, and b / 2 - a / 2 is finite for any finite a, b.
        self._c = 1.0 if math.isfinite(self.b - self.a) else 0.5
        if self.step is None:
            self.n_values = None
        elif isinstance(dist, IntDistribution):  # (self.is_int) exact for any range
            self.n_values = (dist.high - dist.low) // dist.step + 1
        else:  # Optuna moved `high` onto the grid in decimal arithmetic: count the same way
            r = (Decimal(repr(hi)) - Decimal(repr(lo))) / Decimal(repr(self.step))
            self.n_values = int(r + Decimal("1e-8")) + 1

    # typed views ----------------------------------------------------------------------------
    @property
    def _num(self) -> FloatDistribution | IntDistribution:
        """``dist`` of a numeric column (the constructor admits no other)."""
        return cast("FloatDistribution | IntDistribution", self.dist)

    @property
    def _cat(self) -> CategoricalDistribution:
        """``dist`` of a categorical column."""
        return cast(CategoricalDistribution, self.dist)

    @property
    def size(self) -> int:
        """``n_values`` of a discrete column (categorical or with a step)."""
        assert self.n_values is not None, "a continuous column has no grid"
        return self.n_values

    @property
    def _step(self) -> float:
        """``step`` of a numeric discrete column."""
        assert self.step is not None, "a continuous column has no step"
        return self.step

    # numeric helpers ------------------------------------------------------------------------
    def _to_unit(self, v: np.ndarray) -> np.ndarray:
        t = np.log(v) if self.log else v
        c = self._c
        return (t * c - self.a * c) / (self.b * c - self.a * c) if self.b > self.a \
            else np.zeros_like(t)

    def _from_unit(self, u: np.ndarray) -> np.ndarray:
        u = np.clip(u, 0.0, 1.0)
        c = self._c
        t = (self.a * c + u * (self.b * c - self.a * c)) / c
        v = np.exp(t) if self.log else t
        # the ends exactly (exp(log(1e3)) is 999.9999999999989): a user reads the bound
        lo, hi = float(self._num.low), float(self._num.high)
        return np.where(u <= 0.0, lo, np.where(u >= 1.0, hi, np.clip(v, lo, hi)))

    def _index(self, v: np.ndarray) -> np.ndarray:
        """Grid index (float) of the valid value nearest to ``v`` (numeric columns with a step)."""
        k = np.round((v - float(self._num.low)) / self._step)
        return np.clip(k, 0.0, float(self.size - 1))

    def _on_grid(self, v: np.ndarray) -> np.ndarray:
        """Optuna's ``FloatDistribution._contains`` test for a stepped float, vectorised."""
        dist = self._num
        k = (v - dist.low) / self._step
        return (np.abs(k - np.round(k)) < 1e-8) & (v >= dist.low) & (v <= dist.high)

    def _grid(self, k: np.ndarray) -> np.ndarray:
        """Valid values at the (float) grid indices ``k``, clipped to ``0 .. n_values - 1``.

        Beyond about ``1e8`` grid steps, the float nearest to ``low + k * step`` can fail Optuna's
        validity test ``|(v - low) / step - round(.)| < 1e-8`` (and Optuna would then discard the
        sampled value); such a ``k`` is replaced by the nearest index that passes (within 16, else
        a multiple of a power of ten), a move of a tiny fraction of the range.
        """
        dist, step, n = self._num, self._step, self.size
        k = np.clip(np.asarray(k, dtype=float), 0.0, float(n - 1))
        v = np.minimum(float(dist.low) + k * step, float(dist.high))
        if self.is_int:
            return v
        shape, k, v = v.shape, k.ravel(), v.ravel()
        bad = np.flatnonzero(~self._on_grid(v))
        for m, o in _FIX_TRIES:
            if not bad.size:
                break
            t = np.clip((np.round(k[bad] / m) + o) * m, 0.0, float(n - 1))
            c = np.minimum(dist.low + t * step, dist.high)
            ok = self._on_grid(c)
            v[bad[ok]] = c[ok]
            bad = bad[~ok]
        return v.reshape(shape)

    def _snap_values(self, v: np.ndarray) -> np.ndarray:
        """Nearest valid value (numeric columns with a step)."""
        return self._grid(self._index(v))

    # public -----------------------------------------------------------------------------------
    def encode(self, value: Any) -> float:
        if self.categorical:
            return float(self._cat.to_internal_repr(value))
        return float(self._to_unit(np.asarray(float(value))))

    def snap(self, u: np.ndarray) -> np.ndarray:
        """Project encoded values onto the valid set."""
        if self.categorical:
            return np.clip(np.round(u), 0, self.size - 1)
        if self.step is None:
            return np.clip(u, 0.0, 1.0)
        return self._to_unit(self._snap_values(self._from_unit(u)))

    def decode(self, u: float) -> Any:
        if self.categorical:
            return self._cat.choices[int(np.clip(np.round(u), 0, self.size - 1))]
        v = self._from_unit(np.asarray(u, dtype=float))
        dist = self._num
        if self.step is None:
            return float(min(max(float(v), dist.low), dist.high))
        if isinstance(dist, IntDistribution):  # (self.is_int) Python int arithmetic: exact
            k = min(max(int(self._index(v)), 0), self.size - 1)
            return dist.low + k * dist.step
        return float(self._grid(self._index(v)))

    def index_of(self, u: np.ndarray) -> np.ndarray:
        """Grid index (as float) of the valid value nearest to encoded ``u`` (discrete columns)."""
        if self.categorical:
            return np.clip(np.round(u), 0, self.size - 1)
        return self._index(self._from_unit(np.asarray(u, dtype=float)))

    def values_at(self, idx: np.ndarray) -> np.ndarray:
        """Encoded valid values at grid indices ``idx`` (``0 .. n_values - 1``, clipped) of a
        discrete column, without enumerating it."""
        if self.categorical:
            return np.clip(np.asarray(idx, dtype=float), 0, self.size - 1)
        return self._to_unit(self._grid(idx))

    def values(self) -> np.ndarray:
        """All encoded valid values of a discrete column (at most ``_MAX_ENUMERATE`` numeric
        ones; use :meth:`values_at` on wider columns)."""
        if self.categorical:
            return np.arange(self.size, dtype=float)
        if self.size > _MAX_ENUMERATE:
            raise ValueError(f"{self.dist!r} has {self.n_values} values: too many to enumerate.")
        return self.values_at(np.arange(self.size))

    def from_uniform(self, u: np.ndarray) -> np.ndarray:
        """Map uniform ``[0, 1)`` draws to (roughly uniform) valid encoded values."""
        if self.categorical:
            return np.minimum(np.floor(u * self.size), self.size - 1)
        if self.step is None:
            return u
        if self.log and self.is_int:
            return self.snap(u)
        return self.values_at(np.floor(u * float(self.size)))


def sobol_row(d: int, index: int, seed: int | np.random.Generator) -> np.ndarray:
    """Point number ``index`` of the ``d``-dimensional scrambled Sobol sequence of ``seed``
    (an int or a generator), in the unit cube (shape ``(d,)``)."""
    from scipy.stats import qmc
    sobol = qmc.Sobol(d, scramble=True, seed=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # single points: not a power of two
        if index > 0:
            sobol.fast_forward(index)
        return sobol.random(1)[0]


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
        self.n_values: list[int | None] = [c.n_values for c in self.columns]
        """Number of valid values per column (``None`` for continuous ones)."""
        self.is_relaxed = self.is_continuous | np.array(
            [not c.categorical and (c.n_values or 0) > RELAX_THRESHOLD for c in self.columns],
            dtype=bool,
        )
        """Columns the maximiser treats as continuous: continuous ones and numeric discrete ones
        with more than :data:`RELAX_THRESHOLD` values (optimised relaxed, then snapped)."""

    conditional = False
    """Whether points lie in branches (:class:`~optuna_gpbandit._conditional.ConditionalSpace`)."""

    @property
    def continuous_only(self) -> bool:
        """Whether every parameter is a continuous float (no step, no integer or categorical
        parameter) and the space has no branches: where the trust region applies from
        ``TrustRegion.min_dim_continuous`` and GP-UCB's ``box_factor`` acts."""
        return not self.conditional and bool(np.all(self.is_continuous))

    @property
    def prior_dim(self) -> int:
        """The dimension the lengthscale prior scales with: the columns a point varies in."""
        return self.d

    def holds(self, params: dict[str, Any]) -> bool:
        """Whether a trial's ``params`` give it a point here (all parameters, in a plain space)."""
        return all(n in params for n in self.names)

    def movable(self, x: np.ndarray) -> np.ndarray:
        """Mask of the columns a local search from ``x`` may change (all, in a plain space)."""
        return np.ones(self.d, dtype=bool)

    def admissible_values(self, i: int, x: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Of discrete column ``i``'s ``values``, those a point moved from ``x`` may take."""
        return values

    @property
    def cardinality(self) -> int | None:
        """Number of points of a fully discrete space (``None`` if any column is continuous);
        an exact Python ``int`` however large."""
        if self.is_continuous.any():
            return None
        return math.prod(int(c.size) for c in self.columns)

    def encode(self, params: dict[str, Any]) -> np.ndarray:
        return np.array([c.encode(params[n]) for n, c in zip(self.names, self.columns)])

    def encode_many(self, params_list: Sequence[dict[str, Any]]) -> np.ndarray:
        X = np.zeros((len(params_list), self.d))
        for i, (n, c) in enumerate(zip(self.names, self.columns)):
            if c.categorical:
                X[:, i] = [c._cat.to_internal_repr(p[n]) for p in params_list]
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
        """All encoded valid values of discrete column ``i`` (small columns only)."""
        return self.columns[i].values()

    def column_values_at(self, i: int, idx: np.ndarray) -> np.ndarray:
        """Encoded valid values at grid indices ``idx`` of discrete column ``i``."""
        return self.columns[i].values_at(idx)

    def sobol(self, n: int, seed: int, lo: np.ndarray | None = None,
              hi: np.ndarray | None = None) -> np.ndarray:
        """``n`` scrambled-Sobol points mapped to valid encoded values; with ``lo`` and ``hi``
        (per column, in ``[0, 1]``) the uniform draws are taken in that box first."""
        from scipy.stats import qmc
        with warnings.catch_warnings():  # balance warning for n not a power of two
            warnings.simplefilter("ignore", UserWarning)
            U = qmc.Sobol(self.d, scramble=True, seed=seed).random(n)
        if lo is not None and hi is not None:
            U = lo + (hi - lo) * U
        return self.from_uniform(U)

    def sobol_uniform(self, index: int, seed: int) -> np.ndarray:
        """Point number ``index`` of the ``d``-dimensional scrambled Sobol sequence of ``seed``,
        in the unit cube (shape ``(1, d)``)."""
        return sobol_row(self.d, index, seed)[None, :]

    def sobol_point(self, index: int, seed: int) -> np.ndarray:
        """Point number ``index`` of the scrambled Sobol sequence of ``seed`` (valid values)."""
        return self.from_uniform(self.sobol_uniform(index, seed))[0]

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
