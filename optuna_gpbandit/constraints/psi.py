"""The penalty shape ``psi`` of Algorithm 2 (:class:`Psi`, :func:`make_psi`), in log form."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from optuna_gpbandit.constraints._checks import _check_no_nan, _finite_float


def _log_expm1(a: np.ndarray) -> np.ndarray:
    """``log(exp(a) - 1)`` for ``a >= 0`` without overflow (``-inf`` at 0, ``inf`` at ``inf``)."""
    a = np.asarray(a, dtype=float)
    out = np.full(a.shape, -np.inf)
    pos = a > 0
    ap = a[pos]
    small = ap < 1.0
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        # log(expm1(a)) is accurate for small a; a + log1p(-exp(-a)) never overflows for large a.
        out[pos] = np.where(
            small, np.log(np.expm1(np.minimum(ap, 1.0))),
            np.where(np.isinf(ap), np.inf, ap + np.log1p(-np.exp(-ap))),
        )
    return out


@dataclass(frozen=True)
class Psi:
    """A penalty shape ``psi`` of Algorithm 2 (Assumption 2), evaluated in log form.

    ``psi(x) = 1`` for ``x <= 0`` in every kind (the user's callable is only consulted for
    ``x > 0``), so the penalty ``psi(g) - 1`` is 0 for feasible values and ``kappa`` never shrinks.
    Build with :func:`make_psi`.

    Attributes
    ----------
    kind
        ``"exp"``: ``exp(c x)`` (eq. 10); ``"poly"``: ``(1 + c x)^n`` (eq. 9); ``"custom"``.
    c
        Scale constant (choose about ``1 / typical |g|``).
    n
        Exponent of ``"poly"`` (``n > 1`` for a sublinear violation bound).
    func
        The user's callable for ``"custom"``.
    """

    kind: str
    c: float = 1.0
    n: float = 2.0
    func: Callable[[Any], Any] | None = field(default=None, compare=False)

    def _custom(self, x: np.ndarray) -> np.ndarray:
        assert self.func is not None
        try:
            with np.errstate(over="ignore"):
                v = np.asarray(self.func(x), dtype=float)
            if v.shape != x.shape:
                raise ValueError
        except Exception:  # a scalar-only function: apply it elementwise
            with np.errstate(over="ignore"):
                v = np.array([self._scalar(float(xi)) for xi in x.ravel()]).reshape(x.shape)
        return v

    def _scalar(self, x: float) -> float:
        assert self.func is not None
        try:
            return float(self.func(x))
        except OverflowError:  # e.g. math.exp(1000)
            return math.inf

    def log_psi(self, x: Any) -> np.ndarray:
        """``log psi(x)`` (0 for ``x <= 0``; ``inf`` only if a custom ``psi`` overflows).

        Raises
        ------
        ValueError
            If ``x`` contains NaN.
        """
        x = np.asarray(x, dtype=float)
        _check_no_nan(x, "psi argument")
        out = np.zeros(x.shape)
        pos = x > 0
        xp = x[pos]
        if self.kind == "exp":
            out[pos] = self.c * xp
        elif self.kind == "poly":
            out[pos] = self.n * np.log1p(self.c * xp)
        else:
            v = self._custom(xp)
            if np.isnan(v).any() or (v < 1.0).any():
                raise ValueError("The custom psi returned NaN or a value below 1 for x > 0.")
            out[pos] = np.log(v)
        return out

    def __call__(self, x: Any) -> np.ndarray:
        """``psi(x)`` (may be ``inf`` for huge ``x``; use :meth:`log_psi` to stay finite)."""
        with np.errstate(over="ignore"):
            return np.exp(self.log_psi(x))

    def log_penalty(self, x: Any) -> np.ndarray:
        """``log(psi(x) - 1)``: ``-inf`` for ``x <= 0``, finite for moderate ``x > 0``."""
        return _log_expm1(self.log_psi(x))

    def penalty(self, x: Any) -> np.ndarray:
        """``psi(x) - 1`` (0 for ``x <= 0``; may be ``inf`` for huge ``x``)."""
        with np.errstate(over="ignore"):
            return np.expm1(self.log_psi(x))

    def to_json(self) -> dict[str, Any]:
        """``{"kind", "c", "n"}`` (``"name"`` of the callable for ``"custom"``)."""
        if self.kind == "custom":
            return {"kind": "custom", "name": getattr(self.func, "__name__", repr(self.func))}
        if self.kind == "exp":
            return {"kind": "exp", "c": self.c}
        return {"kind": "poly", "c": self.c, "n": self.n}


_VALIDATION_GRID = np.concatenate([[0.0], np.logspace(-6, 3, 91)])


def make_psi(psi: str | Callable[[Any], Any] | Psi = "exp", c: float = 1.0, n: float = 2.0) -> Psi:
    """Build and validate a penalty shape.

    Parameters
    ----------
    psi
        ``"exp"`` (``exp(c x)``, the paper's experiments with ``c = 1``), ``"poly"``
        (``(1 + c x)^n``), a :class:`Psi`, or a callable ``psi(x)``. A callable is consulted only
        for ``x > 0`` (``psi = 1`` below, as Assumption 2 requires); it is called with a numpy
        array (or elementwise if that fails) and must satisfy ``psi(0) = 1`` and be non-decreasing
        with no NaN, which is checked on a grid of ``[0, 1000]``. Convexity and
        sub-multiplicativity (needed by the theory) are the user's responsibility.
    c
        Scale constant of ``"exp"`` and ``"poly"``, finite and ``> 0``.
    n
        Exponent of ``"poly"``, finite and ``>= 1``.

    Returns
    -------
    Psi

    Raises
    ------
    ValueError
        On an unknown kind, a bad ``c`` / ``n``, or a callable failing the checks.
    """
    if isinstance(psi, Psi):
        return psi
    if isinstance(psi, str):
        if psi not in ("exp", "poly"):
            raise ValueError(f"psi must be 'exp', 'poly' or a callable, got {psi!r}.")
        c = _finite_float("psi_c", c)
        if c <= 0:
            raise ValueError(f"psi_c must be > 0, got {c}.")
        if psi == "poly":
            n = _finite_float("psi_n", n)
            if n < 1:
                raise ValueError(f"psi_n must be >= 1 (> 1 for a sublinear violation), got {n}.")
            return Psi("poly", c, n)
        return Psi("exp", c)
    if not callable(psi):
        raise ValueError(f"psi must be 'exp', 'poly' or a callable, got {psi!r}.")
    candidate = Psi("custom", func=psi)
    try:
        at0 = float(candidate._custom(np.zeros(1))[0])
        values = candidate._custom(_VALIDATION_GRID.copy())
    except Exception as exc:
        raise ValueError(f"The custom psi could not be evaluated: {exc!r}.") from exc
    if not math.isclose(at0, 1.0, rel_tol=0.0, abs_tol=1e-9):
        raise ValueError(f"A custom psi must satisfy psi(0) = 1, got psi(0) = {at0!r}.")
    if np.isnan(values).any():
        raise ValueError("The custom psi returned NaN on [0, 1000].")
    running_max = np.maximum.accumulate(values)
    with np.errstate(invalid="ignore"):  # inf - inf where psi overflowed: not a decrease
        decreasing = values < running_max - 1e-12 * np.abs(running_max)
    if decreasing.any():
        raise ValueError("A custom psi must be non-decreasing on x >= 0.")
    return candidate


def psi_exp(x: Any, c: float = 1.0) -> np.ndarray:
    """``psi(x) = exp(c x)`` for ``x > 0``, 1 otherwise (eq. 10)."""
    return make_psi("exp", c=c)(x)


def psi_poly(x: Any, c: float = 1.0, n: float = 2.0) -> np.ndarray:
    """``psi(x) = (1 + c x)^n`` for ``x > 0``, 1 otherwise (eq. 9)."""
    return make_psi("poly", c=c, n=n)(x)
