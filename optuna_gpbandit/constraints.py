"""Long-term constraints (Shi & Eryilmaz, AISTATS 2022, Algorithms 2 and 3): the constraint stage.

The problem: maximise ``f`` while every constraint holds *on average over time*,
``(1/T) sum_t g_j(x_t) <= 0``; a single trial may violate a constraint. This module turns the
stored trials of a study into what the GP of a constrained sampler needs, as pure functions of the
ordered trials (no sampler, no mutable algorithm state):

* **constraint values** of a trial, read from Optuna's two formats (:func:`trial_constraints`);
* the **constraint matrix** ``G`` (``n x m``) of an ordered list of trials, with a documented
  policy for trials whose constraint data is missing or malformed (:func:`constraint_matrix`);
* the **epoch map**: the ``k``-th counted trial (0-based) is in epoch ``k // S`` at position
  ``k % S``; only full epochs update the multipliers (:func:`epoch_means`);
* the **multipliers** after the full epochs:

  - Algorithm 2 (noiseless constraints): ``kappa_j <- kappa_j * psi(gbar_j)``, started at
    ``kappa_init = 1``, kept as ``log kappa`` and clipped at ``max_log_kappa``
    (:func:`noiseless_log_kappa_path`);
  - Algorithm 3 (noisy constraints): ``kappa_j <- max(0, kappa_j + step * gbar_j)``, started at
    ``kappa_init = 0`` (:func:`noisy_kappa_path`);

* the **penalised targets** (oriented objective ``y``, larger is better):

  - Algorithm 2: ``z = y - sum_j kappa_j (psi(g_j) - 1)`` (:func:`noiseless_targets`);
  - Algorithm 3: ``z = y - sum_j kappa_j g_j`` (:func:`noisy_targets`);

* the Algorithm 3 **noise inflation** ``sqrt(1 + sum_j kappa_j^2)`` (:func:`noise_width_factor`)
  and the IGP-UCB width of both algorithms (:func:`constrained_beta`);
* :class:`LongTermConstraints`, the configuration a sampler holds; its
  :meth:`~LongTermConstraints.prepare` maps the study's trials to a :class:`ConstraintStage`
  (GP trials, target transform, multiplier state).

Reading constraints
-------------------
Optuna stores constraint values in two ways, and :func:`trial_constraints` reads both:

* ``constraints_func`` (Optuna's samplers call
  ``optuna.samplers._base._process_constraints_after_trial``): a sequence under the system attr
  ``"constraints"`` (``None`` if the function raised). Its entries are named ``"0"``, ``"1"``, ...
* ``trial.set_constraint(name, value)`` (Optuna >= 5): one system attr ``"constraints:<name>"``
  per constraint.

The order is deterministic (the spec, section 8.2): the sequence entries in order, then the named
entries sorted by name. A named entry whose name is an index of the sequence replaces that entry,
as in ``FrozenTrial.constraints``, so the values are exactly those of ``FrozenTrial.constraints``
(only the order is fixed). A value ``> 0`` is a violation; values are never transformed (for a
long-term budget return ``cost - budget``).

Policy for unusable constraint data
-----------------------------------
The constraint names of a study are the key set most trials with constraint data share (ties: the
one seen first, in the given order), unless fixed with ``names=``, so that one odd trial (e.g. added
by hand from an older study) does not decide them. A trial is *unusable* when it has no constraint data
(``constraints_func`` raised or was not used, ``set_constraint`` was not called), when its names
differ from the study's (another number of constraints, other keys), or when a value is not a
finite real number (NaN, +-inf, a string, ...). With ``on_missing="skip"`` (default, as the spec
suggests) an unusable trial is left out of everything (epoch map, multipliers, GP) and
:class:`LongTermConstraints` logs one warning per skipped trial; with ``on_missing="raise"`` it
raises :class:`ConstraintDataError` (a ``ValueError``) naming the trial and the reason. If no trial
has constraint data, ``m = 0``: every trial is kept and the targets are the objective values.

Overflow
--------
``log kappa`` is clipped at ``max_log_kappa`` (default 50) after every update. Each penalty term is
evaluated as ``log kappa_j + log(psi(g) - 1)`` (``log(expm1(c g))`` for exp, computed stably; so
``g = 1e4`` is fine) and capped at ``max_log_penalty`` (default 100) before exponentiation, so a
term is at most ``exp(max_log_penalty)``. Algorithm 3's linear terms ``kappa_j g_j`` are capped to
``[-exp(max_log_penalty), exp(max_log_penalty)]``. Targets are therefore always finite for finite
``y``.

Never write a system attr whose key starts with ``"constraints:"``: Optuna reads it as a
constraint. Diagnostics go to ``gpbandit:multipliers`` (:data:`DIAGNOSTICS_KEY` with the package's
JSON storage), via :meth:`MultiplierState.to_json`, and must never be read back as state.
"""

from __future__ import annotations

import datetime
import math
import numbers
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

import numpy as np
from optuna.logging import get_logger
from optuna.study import StudyDirection
from optuna.trial import FrozenTrial, TrialState

from optuna_gpbandit.acquisition.beta import igp_ucb_beta

_logger = get_logger(__name__)

CONSTRAINTS_KEY = "constraints"
"""System attr of ``constraints_func`` values (a sequence, or ``None`` if the function raised)."""
CONSTRAINT_PREFIX = "constraints:"
"""Prefix of the system attrs written by ``trial.set_constraint(name, value)``."""
DIAGNOSTICS_KEY = "multipliers"
"""Key (under the package prefix ``gpbandit:``) for :meth:`MultiplierState.to_json` records."""

VARIANTS = ("noiseless", "noisy")
_FAR_FUTURE = datetime.datetime.max
_MAX_LOG = 300.0  # exp(300) ~ 1.9e130: squares and sums of a few such terms stay finite


# ==================================================================================== psi
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


def _check_no_nan(x: np.ndarray, what: str) -> None:
    if np.isnan(x).any():
        raise ValueError(f"{what} contains NaN.")


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


# ======================================================================= reading trials
class ConstraintDataError(ValueError):
    """A trial's constraint data cannot be used.

    Attributes
    ----------
    number
        The trial number.
    reason
        ``"missing"`` (no constraint data), ``"names"`` (other constraint names or another
        number of constraints than the study's) or ``"value"`` (a value that is not a finite real
        number).
    """

    def __init__(self, number: int, reason: str, message: str) -> None:
        super().__init__(message)
        self.number = number
        self.reason = reason


def trial_constraints(trial: FrozenTrial) -> tuple[tuple[str, ...], tuple[Any, ...]]:
    """A trial's constraint names and raw values in the deterministic order.

    The ``constraints_func`` sequence (names ``"0"``, ``"1"``, ...) in order, then the
    ``set_constraint`` entries sorted by name; a named entry whose name is an index of the
    sequence replaces it (as ``FrozenTrial.constraints`` does). No data gives ``((), ())``.
    Values are returned as stored (not validated; see :func:`constraint_vector`).
    """
    attrs = trial.system_attrs
    listed = attrs.get(CONSTRAINTS_KEY)
    names: list[str] = []
    values: list[Any] = []
    if isinstance(listed, (list, tuple)):
        names = [str(i) for i in range(len(listed))]
        values = list(listed)
    elif listed is not None:  # not what Optuna writes: keep it visible as a bad value
        names, values = ["0"], [listed]
    index = {name: i for i, name in enumerate(names)}
    named = sorted(
        (key[len(CONSTRAINT_PREFIX):], value)
        for key, value in attrs.items()
        if key.startswith(CONSTRAINT_PREFIX)
    )
    for name, value in named:
        if name in index:
            values[index[name]] = value
        else:
            names.append(name)
            values.append(value)
    return tuple(names), tuple(values)


def constraint_names(trial: FrozenTrial) -> tuple[str, ...]:
    """The names of a trial's constraints in the deterministic order (``()`` if none)."""
    return trial_constraints(trial)[0]


def _finite_real(value: Any) -> float | None:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        return None
    v = float(value)
    return v if math.isfinite(v) else None


def constraint_vector(trial: FrozenTrial, names: Sequence[str] | None = None) -> np.ndarray:
    """A trial's constraint values ``g(x_t)`` as a float vector.

    Parameters
    ----------
    trial
        The trial.
    names
        The expected constraint names, in column order. ``None``: the trial's own names in the
        deterministic order.

    Returns
    -------
    numpy.ndarray
        Shape ``(m,)``; ``> 0`` entries are violations.

    Raises
    ------
    ConstraintDataError
        If the trial has no constraint data (``reason="missing"``), its names differ from
        ``names`` (``"names"``), or a value is not a finite real number (``"value"``).
    """
    own, raw = trial_constraints(trial)
    number = trial.number
    if not own:
        if CONSTRAINTS_KEY in trial.system_attrs:
            detail = "its constraints_func raised (stored None)"
        else:
            detail = "no constraints_func values and no trial.set_constraint(...) values"
        raise ConstraintDataError(
            number, "missing", f"Trial {number} has no constraint values: {detail}."
        )
    if names is None:
        order = list(range(len(own)))
    else:
        names = tuple(names)
        if set(names) != set(own) or len(names) != len(own):
            raise ConstraintDataError(
                number,
                "names",
                f"Trial {number} has constraints {list(own)} but the study's constraints are "
                f"{list(names)} (another number of constraints or other keys).",
            )
        position = {name: i for i, name in enumerate(own)}
        order = [position[name] for name in names]
    out = np.empty(len(order))
    for col, i in enumerate(order):
        v = _finite_real(raw[i])
        if v is None:
            raise ConstraintDataError(
                number,
                "value",
                f"Trial {number}: constraint {own[i]!r} = {raw[i]!r} is not a finite real number.",
            )
        out[col] = v
    return out


@dataclass(frozen=True)
class SkippedTrial:
    """A trial left out for unusable constraint data (see :class:`ConstraintDataError`)."""

    number: int
    reason: str
    message: str


@dataclass(frozen=True, eq=False)
class ConstraintMatrix:
    """The constraint values of the kept trials.

    Attributes
    ----------
    trials
        Kept trials, in the given order.
    values
        ``(n, m)`` constraint values aligned with ``trials``.
    names
        Constraint names of the columns.
    skipped
        Trials left out, with the reason.
    """

    trials: tuple[FrozenTrial, ...]
    values: np.ndarray
    names: tuple[str, ...]
    skipped: tuple[SkippedTrial, ...] = ()

    @property
    def n(self) -> int:
        return int(self.values.shape[0])

    @property
    def m(self) -> int:
        return int(self.values.shape[1])

    @property
    def numbers(self) -> np.ndarray:
        return np.array([t.number for t in self.trials], dtype=int)


MISSING_POLICIES = ("skip", "raise")


def _check_names(names: Sequence[str] | None) -> tuple[str, ...] | None:
    if names is None:
        return None
    if isinstance(names, str):
        names = (names,)
    names = tuple(names)
    if not names or not all(isinstance(n, str) for n in names) or len(set(names)) != len(names):
        raise ValueError(f"names must be a non-empty sequence of distinct strings, got {names!r}.")
    return names


def constraint_matrix(
    trials: Sequence[FrozenTrial],
    *,
    names: Sequence[str] | None = None,
    on_missing: str = "skip",
) -> ConstraintMatrix:
    """The ``(n x m)`` constraint matrix of an ordered list of trials.

    The trials are used as given (order, states): filtering and ordering are the caller's job
    (:meth:`LongTermConstraints.prepare` keeps COMPLETE trials in trial-number order).

    Parameters
    ----------
    trials
        Ordered trials.
    names
        Constraint names (columns, in this order). ``None``: the key set most trials with
        constraint data share (ties: the first seen), in the deterministic order of
        :func:`trial_constraints`; if no trial has constraint data, ``m = 0`` and every trial is
        kept.
    on_missing
        ``"skip"``: unusable trials are left out and listed in ``skipped`` (nothing is logged
        here); ``"raise"``: the first unusable trial raises.

    Returns
    -------
    ConstraintMatrix

    Raises
    ------
    ConstraintDataError
        With ``on_missing="raise"``, for the first unusable trial.
    ValueError
        On a bad ``names`` or ``on_missing``.
    """
    if on_missing not in MISSING_POLICIES:
        raise ValueError(f"on_missing must be one of {MISSING_POLICIES}, got {on_missing!r}.")
    names = _check_names(names)
    if names is None:
        counts: dict[tuple[str, ...], int] = {}
        for t in trials:
            if own := constraint_names(t):
                counts[tuple(own)] = counts.get(tuple(own), 0) + 1
        # max() keeps the first of equal counts, and dicts keep insertion order.
        names = max(counts, key=counts.__getitem__) if counts else None
        if names is None:
            return ConstraintMatrix(tuple(trials), np.zeros((len(trials), 0)), ())
    kept: list[FrozenTrial] = []
    rows: list[np.ndarray] = []
    skipped: list[SkippedTrial] = []
    for t in trials:
        try:
            rows.append(constraint_vector(t, names))
        except ConstraintDataError as exc:
            if on_missing == "raise":
                raise ConstraintDataError(
                    exc.number,
                    exc.reason,
                    f"{exc} Fix the trial's constraints or use on_missing='skip'.",
                ) from None
            skipped.append(SkippedTrial(exc.number, exc.reason, str(exc)))
            continue
        kept.append(t)
    values = np.array(rows, dtype=float).reshape(len(rows), len(names))
    return ConstraintMatrix(tuple(kept), values, names, tuple(skipped))


# ========================================================================== epoch map
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


def epoch_position(n_used: int, epoch_length: int) -> tuple[int, int]:
    """``(epoch, position)`` (0-based) of the next trial after ``n_used`` counted trials.

    ``epoch`` is also the number of full epochs, i.e. of multiplier updates so far.
    """
    n_used = _check_int("n_used", n_used, 0)
    epoch_length = _check_int("epoch_length", epoch_length, 1)
    return divmod(n_used, epoch_length)


def epoch_index(n_used: int, epoch_length: int) -> np.ndarray:
    """Epoch (0-based) of each of ``n_used`` counted trials: ``k // epoch_length``."""
    epoch_length = _check_int("epoch_length", epoch_length, 1)
    return np.arange(_check_int("n_used", n_used, 0)) // epoch_length


def epoch_means(G: Any, epoch_length: int) -> np.ndarray:
    """Means of the constraint values over each **full** epoch, ``(n // S, m)``.

    The trailing partial epoch (``n % S`` rows) is not used: it never updates the multipliers.
    A 1-D ``G`` is one constraint.
    """
    G = _as_matrix(G)
    S = _check_int("epoch_length", epoch_length, 1)
    L = G.shape[0] // S
    return G[: L * S].reshape(L, S, G.shape[1]).mean(axis=1)


# ========================================================================= multipliers
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


def update_kappa_mult(
    log_kappa: Any, gbar: Any, psi: Psi, max_log_kappa: float = 50.0
) -> tuple[np.ndarray, bool]:
    """One Algorithm 2 update in log form: ``log kappa + log psi(gbar)``, clipped.

    Returns
    -------
    (numpy.ndarray, bool)
        The new ``log kappa`` and whether it was clipped at ``max_log_kappa``.
    """
    new = np.asarray(log_kappa, dtype=float) + psi.log_psi(gbar)
    clipped = bool((new > max_log_kappa).any())
    return np.minimum(new, max_log_kappa), clipped


def update_kappa_add(kappa: Any, gbar: Any, step: float) -> np.ndarray:
    """One Algorithm 3 update: ``max(0, kappa + step * gbar)`` (projected dual ascent)."""
    return np.maximum(0.0, np.asarray(kappa, dtype=float) + step * np.asarray(gbar, dtype=float))


def noiseless_log_kappa_path(
    G: Any,
    epoch_length: int,
    psi: Psi | str = "exp",
    kappa_init: float | Sequence[float] = 1.0,
    max_log_kappa: float = 50.0,
) -> tuple[np.ndarray, bool]:
    """``log kappa`` before the first epoch and after every full epoch (Algorithm 2).

    Parameters
    ----------
    G
        Ordered constraint matrix ``(n, m)`` (1-D: one constraint), finite.
    epoch_length
        ``S``.
    psi
        Penalty shape (:func:`make_psi`); a string uses ``c = 1`` (and ``n = 2``).
    kappa_init
        ``kappa^1 > 0``, a number or one per constraint (the paper: 1).
    max_log_kappa
        Clip of ``log kappa`` (in ``(0, 300]``).

    Returns
    -------
    (numpy.ndarray, bool)
        ``(n // S + 1, m)`` path (row ``l`` holds ``log kappa^{l+1}``; non-decreasing) and whether
        any value was clipped.
    """
    G = _as_matrix(G)
    psi = make_psi(psi)
    max_log_kappa = _check_max_log("max_log_kappa", max_log_kappa)
    start = np.log(_kappa_vector(kappa_init, G.shape[1], positive=True))
    clipped = bool((start > max_log_kappa).any())
    rows = [np.minimum(start, max_log_kappa)]
    for gbar in epoch_means(G, epoch_length):
        nxt, c = update_kappa_mult(rows[-1], gbar, psi, max_log_kappa)
        clipped |= c
        rows.append(nxt)
    return np.array(rows).reshape(len(rows), G.shape[1]), clipped


def noisy_kappa_path(
    G: Any,
    epoch_length: int,
    step: float | Sequence[float] = 0.5,
    kappa_init: float | Sequence[float] = 0.0,
) -> np.ndarray:
    """``kappa`` before the first epoch and after every full epoch (Algorithm 3).

    Parameters
    ----------
    G
        Ordered (observed, noisy) constraint matrix ``(n, m)`` (1-D: one constraint), finite.
    epoch_length
        ``S``.
    step
        ``mu`` (``> 0``): a number, or one per update (at least ``n // S`` values; see
        :func:`theory_steps`).
    kappa_init
        ``kappa^1 >= 0``, a number or one per constraint (the paper: 0).

    Returns
    -------
    numpy.ndarray
        ``(n // S + 1, m)``, row ``l`` holds ``kappa^{l+1}`` (never negative).
    """
    G = _as_matrix(G)
    means = epoch_means(G, epoch_length)
    steps = _steps(step, means.shape[0])
    rows = [_kappa_vector(kappa_init, G.shape[1], positive=False)]
    for gbar, s in zip(means, steps):
        rows.append(update_kappa_add(rows[-1], gbar, s))
    return np.array(rows).reshape(len(rows), G.shape[1])


def _steps(step: float | Sequence[float], n_updates: int) -> np.ndarray:
    s = np.atleast_1d(np.asarray(step, dtype=float))
    if s.ndim != 1 or (s.size != 1 and s.size < n_updates):
        raise ValueError(f"step must be a number or at least {n_updates} values, got {step!r}.")
    if not np.isfinite(s).all() or (s <= 0).any():
        raise ValueError(f"step must be finite and > 0, got {step!r}.")
    return np.full(n_updates, s[0]) if s.size == 1 else s[:n_updates]


def theory_steps(
    n_updates: int, step0: float = 0.5, n_epochs: int | None = None
) -> np.ndarray:
    """Algorithm 3 steps for ``kappa_step="theory"`` (``mu = O(1 / sqrt(L))``).

    With a known number of epochs ``L`` (``n_epochs``, from the horizon): the constant
    ``step0 / sqrt(L)``. Unknown horizon [impl]: the update at the end of epoch ``l`` (1-based)
    uses ``step0 / sqrt(l)``, i.e. ``L`` is the current epoch count, so past updates never change.
    """
    n_updates = _check_int("n_updates", n_updates, 0)
    step0 = _finite_float("kappa_step0", step0)
    if step0 <= 0:
        raise ValueError(f"kappa_step0 must be > 0, got {step0}.")
    if n_epochs is not None:
        return np.full(n_updates, step0 / math.sqrt(_check_int("n_epochs", n_epochs, 1)))
    return step0 / np.sqrt(np.arange(1, n_updates + 1))


def horizon_epochs(n_used: int, epoch_length: int, n_trials_hint: int | None = None) -> int:
    """``L`` for ``delta / L``: ``ceil(T / S)`` with a horizon ``T``, else the current epoch
    (1-based); never below the current epoch."""
    epoch, _ = epoch_position(n_used, epoch_length)
    if n_trials_hint is None:
        return epoch + 1
    T = _check_int("n_trials_hint", n_trials_hint, 1)
    return max(-(-T // epoch_length), epoch + 1)


@dataclass(frozen=True)
class MultiplierState:
    """Multipliers recovered from the ordered constraint matrix, JSON-serialisable.

    Attributes
    ----------
    variant
        ``"noiseless"`` (Algorithm 2) or ``"noisy"`` (Algorithm 3).
    epoch
        Epoch (0-based) of the next trial, = number of full epochs = number of updates.
    position
        Position (0-based) of the next trial within its epoch.
    n_used
        Counted trials (rows of the constraint matrix).
    epoch_length
        ``S``.
    names
        Constraint names.
    kappa
        Current multipliers (``exp(log_kappa)`` for Algorithm 2).
    log_kappa
        Current ``log kappa`` (Algorithm 2; ``None`` for Algorithm 3).
    epoch_means
        Constraint means of the full epochs, oldest first (the values used by the updates).
    steps
        Algorithm 3 steps used by the updates (``None`` for Algorithm 2).
    clipped
        Whether ``log kappa`` reached ``max_log_kappa`` (Algorithm 2).
    """

    variant: str
    epoch: int
    position: int
    n_used: int
    epoch_length: int
    names: tuple[str, ...]
    kappa: tuple[float, ...]
    log_kappa: tuple[float, ...] | None = None
    epoch_means: tuple[tuple[float, ...], ...] = ()
    steps: tuple[float, ...] | None = None
    clipped: bool = False

    @property
    def m(self) -> int:
        return len(self.names)

    @property
    def kappa_array(self) -> np.ndarray:
        return np.array(self.kappa, dtype=float)

    @property
    def log_kappa_array(self) -> np.ndarray:
        """``log kappa`` (``-inf`` for zero multipliers of Algorithm 3)."""
        if self.log_kappa is not None:
            return np.array(self.log_kappa, dtype=float)
        with np.errstate(divide="ignore"):
            return np.log(self.kappa_array)

    @property
    def noise_factor(self) -> float:
        """The factor on ``R``: ``sqrt(1 + sum kappa^2)`` (Algorithm 3), 1 (Algorithm 2)."""
        return noise_width_factor(self.kappa) if self.variant == "noisy" else 1.0

    def to_json(self, all_means: bool = False) -> dict[str, Any]:
        """A JSON-serialisable record (strict JSON: no NaN / inf).

        ``all_means=False`` keeps only the last epoch mean (``gbar``), so the per-trial record
        does not grow with the study.
        """
        record: dict[str, Any] = {
            "variant": self.variant,
            "epoch": self.epoch,
            "position": self.position,
            "n_used": self.n_used,
            "epoch_length": self.epoch_length,
            "names": list(self.names),
            "kappa": list(self.kappa),
        }
        if self.log_kappa is not None:
            record["log_kappa"] = list(self.log_kappa)
            record["clipped"] = self.clipped
        if self.variant == "noisy":
            record["noise_factor"] = self.noise_factor
            record["step"] = self.steps[-1] if self.steps else None
        if all_means:
            record["epoch_means"] = [list(row) for row in self.epoch_means]
        else:
            record["gbar"] = list(self.epoch_means[-1]) if self.epoch_means else None
        return record


def _tuple(a: np.ndarray) -> tuple[float, ...]:
    return tuple(float(v) for v in a)


def recover_noiseless(
    G: Any,
    epoch_length: int,
    psi: Psi | str = "exp",
    kappa_init: float | Sequence[float] = 1.0,
    max_log_kappa: float = 50.0,
    names: Sequence[str] | None = None,
) -> MultiplierState:
    """Algorithm 2 multipliers after the full epochs of ``G``.

    See :func:`noiseless_log_kappa_path`; ``names`` label the columns (default ``"0"``, ...).
    """
    G = _as_matrix(G)
    path, clipped = noiseless_log_kappa_path(G, epoch_length, psi, kappa_init, max_log_kappa)
    epoch, position = epoch_position(G.shape[0], epoch_length)
    return MultiplierState(
        variant="noiseless",
        epoch=epoch,
        position=position,
        n_used=G.shape[0],
        epoch_length=epoch_length,
        names=_names_for(names, G.shape[1]),
        kappa=_tuple(np.exp(path[-1])),
        log_kappa=_tuple(path[-1]),
        epoch_means=tuple(_tuple(r) for r in epoch_means(G, epoch_length)),
        clipped=clipped,
    )


def recover_noisy(
    G: Any,
    epoch_length: int,
    step: float | Sequence[float] | str = 0.5,
    kappa_init: float | Sequence[float] = 0.0,
    step0: float = 0.5,
    n_trials_hint: int | None = None,
    names: Sequence[str] | None = None,
) -> MultiplierState:
    """Algorithm 3 multipliers after the full epochs of ``G`` (see :func:`noisy_kappa_path`).

    ``step="theory"`` uses :func:`theory_steps` with ``step0`` and ``L = ceil(T / S)`` when
    ``n_trials_hint = T`` is given.
    """
    G = _as_matrix(G)
    epoch, position = epoch_position(G.shape[0], epoch_length)
    if isinstance(step, str):
        if step != "theory":
            raise ValueError(f"kappa_step must be a number or 'theory', got {step!r}.")
        L = None
        if n_trials_hint is not None:
            L = -(-_check_int("n_trials_hint", n_trials_hint, 1) // epoch_length)
        steps = theory_steps(epoch, step0, L)
    else:
        steps = _steps(step, epoch)
    path = noisy_kappa_path(G, epoch_length, steps if epoch else 1.0, kappa_init)
    return MultiplierState(
        variant="noisy",
        epoch=epoch,
        position=position,
        n_used=G.shape[0],
        epoch_length=epoch_length,
        names=_names_for(names, G.shape[1]),
        kappa=_tuple(path[-1]),
        epoch_means=tuple(_tuple(r) for r in epoch_means(G, epoch_length)),
        steps=_tuple(steps),
    )


def _names_for(names: Sequence[str] | None, m: int) -> tuple[str, ...]:
    if names is None:
        return tuple(str(i) for i in range(m))
    names = tuple(names)
    if len(names) != m:
        raise ValueError(f"{len(names)} names for {m} constraints.")
    return names


# ============================================================================== targets
def _check_y(y: Any, n: int) -> np.ndarray:
    y = np.asarray(y, dtype=float)
    if y.shape != (n,):
        raise ValueError(f"y must have shape ({n},) like the constraint rows, got {y.shape}.")
    _check_no_nan(y, "y")
    return y


def _kappa_like(kappa: Any, m: int, what: str) -> np.ndarray:
    k = np.asarray(kappa, dtype=float).reshape(-1)
    if k.shape != (m,):
        raise ValueError(f"{what} must have one value per constraint ({m}), got shape {k.shape}.")
    _check_no_nan(k, what)
    return k


def noiseless_penalties(
    G: Any, log_kappa: Any, psi: Psi | str = "exp", max_log_penalty: float = 100.0
) -> np.ndarray:
    """``sum_j kappa_j (psi(g_j) - 1)`` per row, each term capped at ``exp(max_log_penalty)``.

    Terms are evaluated as ``exp(min(log kappa_j + log(psi(g_j) - 1), max_log_penalty))``; a
    feasible value (``g <= 0``) contributes exactly 0.
    """
    G = _as_matrix(G)
    psi = make_psi(psi)
    cap = _check_max_log("max_log_penalty", max_log_penalty)
    lk = _kappa_like(log_kappa, G.shape[1], "log_kappa")
    with np.errstate(invalid="ignore"):
        log_terms = np.minimum(lk[None, :] + psi.log_penalty(G), cap)
    log_terms = np.where(np.isnan(log_terms), -np.inf, log_terms)  # -inf + inf: a zero kappa
    with np.errstate(under="ignore"):
        return np.exp(log_terms).sum(axis=1)


def noiseless_targets(
    y: Any, G: Any, log_kappa: Any, psi: Psi | str = "exp", max_log_penalty: float = 100.0
) -> np.ndarray:
    """Algorithm 2 GP targets ``z = y - sum_j kappa_j (psi(g_j) - 1)``.

    ``y`` are the objective values oriented for maximisation (``-value`` for a minimised
    objective); a feasible row keeps ``z = y`` exactly. See :func:`noiseless_penalties`.
    """
    G = _as_matrix(G)
    return _check_y(y, G.shape[0]) - noiseless_penalties(G, log_kappa, psi, max_log_penalty)


def noisy_penalties(G: Any, kappa: Any, max_log_penalty: float = 100.0) -> np.ndarray:
    """``sum_j kappa_j g_j`` per row (negative for slack), each term capped to
    ``[-exp(max_log_penalty), exp(max_log_penalty)]``."""
    G = _as_matrix(G)
    cap = math.exp(_check_max_log("max_log_penalty", max_log_penalty))
    k = _kappa_like(kappa, G.shape[1], "kappa")
    if (k < 0).any():
        raise ValueError("kappa must be >= 0.")
    with np.errstate(over="ignore", invalid="ignore"):
        terms = k[None, :] * G
    terms = np.where(np.isnan(terms), 0.0, terms)
    return np.clip(terms, -cap, cap).sum(axis=1)


def noisy_targets(y: Any, G: Any, kappa: Any, max_log_penalty: float = 100.0) -> np.ndarray:
    """Algorithm 3 GP targets ``z = y - sum_j kappa_j g_j`` (``y`` oriented for maximisation)."""
    G = _as_matrix(G)
    return _check_y(y, G.shape[0]) - noisy_penalties(G, kappa, max_log_penalty)


def noise_width_factor(kappa: Any) -> float:
    """Algorithm 3's noise inflation ``sqrt(1 + sum_j kappa_j^2)`` (computed without overflow)."""
    k = np.abs(np.asarray(kappa, dtype=float).reshape(-1))
    _check_no_nan(k, "kappa")
    v = np.concatenate([[1.0], k])
    scale = float(v.max())
    if math.isinf(scale):
        return math.inf
    return scale * math.sqrt(float(np.sum((v / scale) ** 2)))


def constrained_beta(
    gamma: float,
    B: float,
    R: float,
    delta: float,
    n_epochs: int,
    kappa: Sequence[float] | None = None,
) -> float:
    """IGP-UCB width inside the epochs.

    * Algorithm 2 (``kappa=None``): ``B + R sqrt(2 (gamma + 1 + log(L / delta)))``.
    * Algorithm 3 (``kappa`` given): ``B + sqrt(1 + sum kappa^2) R sqrt(2 (gamma + 1 +
      log(2 L / delta)))``.

    Parameters
    ----------
    gamma
        Information gain term ``gamma_{s-1}`` (``>= 0``).
    B, R
        RKHS-norm bound and sub-Gaussian noise level (``>= 0``).
    delta
        Failure probability in ``(0, 1)``.
    n_epochs
        ``L`` (:func:`horizon_epochs`).
    kappa
        Algorithm 3's current multipliers.
    """
    gamma = _finite_float("gamma", gamma)
    B, R = _finite_float("B", B), _finite_float("R", R)
    delta = _finite_float("delta", delta)
    if gamma < 0 or B < 0 or R < 0:
        raise ValueError(f"gamma, B and R must be >= 0, got {gamma}, {B}, {R}.")
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta}.")
    L = _check_int("n_epochs", n_epochs, 1)
    if kappa is None:
        return igp_ucb_beta(gamma, B, R, delta / L)
    return igp_ucb_beta(gamma, B, noise_width_factor(kappa) * R, delta / (2 * L))


# ================================================================= configuration object
@dataclass(frozen=True, eq=False)
class ConstraintStage:
    """What the constraint stage hands to the GP for one sampling call.

    Unpacks as ``trials, transform, state = stage``.

    Attributes
    ----------
    trials
        COMPLETE trials for the GP, in epoch order: every counted COMPLETE trial
        (``history="all"``) or those of the current epoch (``history="epoch"``; may be empty at
        the start of an epoch, where a sampler should draw a random point).
    constraints
        ``(len(trials), m)`` constraint values of ``trials``.
    state
        The multipliers (from all counted trials, PRUNED ones too with ``include_pruned``).
    skipped
        Trials left out for unusable constraint data.
    n_epochs
        ``L`` for ``delta / L`` (:func:`horizon_epochs`).
    """

    trials: tuple[FrozenTrial, ...]
    constraints: np.ndarray
    state: MultiplierState
    skipped: tuple[SkippedTrial, ...]
    n_epochs: int
    psi: Psi | None
    max_log_penalty: float

    def __iter__(self) -> Iterator[Any]:
        return iter((self.trials, self.targets, self.state))

    @property
    def numbers(self) -> np.ndarray:
        return np.array([t.number for t in self.trials], dtype=int)

    def penalties(self) -> np.ndarray:
        """The penalty of each GP trial under the current multipliers (``y - z``)."""
        G = self.constraints
        if G.shape[1] == 0:
            return np.zeros(G.shape[0])
        if self.state.variant == "noiseless":
            assert self.psi is not None
            return noiseless_penalties(
                G, self.state.log_kappa_array, self.psi, self.max_log_penalty
            )
        return noisy_penalties(G, self.state.kappa_array, self.max_log_penalty)

    def targets(self, y: Any) -> np.ndarray:
        """Penalised GP targets ``z`` from ``y``, the objective values of :attr:`trials`
        oriented for maximisation (``-value`` for ``minimize``)."""
        return _check_y(y, len(self.trials)) - self.penalties()

    __call__ = targets

    def targets_from_values(self, direction: StudyDirection) -> np.ndarray:
        """:meth:`targets` of the trials' stored values, oriented by ``direction``.

        A penalty always lowers the oriented target: it raises a minimised objective.
        """
        sign = -1.0 if direction == StudyDirection.MINIMIZE else 1.0
        values = np.array([t.value for t in self.trials], dtype=float)
        return self.targets(sign * values)

    def beta(self, gamma: float, B: float, R: float, delta: float) -> float:
        """:func:`constrained_beta` with this stage's ``L`` (and ``kappa`` for Algorithm 3)."""
        kappa = self.state.kappa if self.state.variant == "noisy" else None
        return constrained_beta(gamma, B, R, delta, self.n_epochs, kappa)


class LongTermConstraints:
    """Configuration of the long-term constraint stage (Shi & Eryilmaz 2022).

    Parameters
    ----------
    variant
        ``"noiseless"`` (Algorithm 2: multiplicative update, penalty ``psi(g) - 1``) or
        ``"noisy"`` (Algorithm 3: additive projected update, linear penalty, noise level
        ``sqrt(1 + sum kappa^2) R``).
    epoch_length
        ``S`` (default 20, the paper's experiments), or ``"sqrt"``: ``max(1, round(sqrt(T)))``
        with ``T = n_trials_hint``. Keep it fixed for a study: it defines the epochs of all
        history.
    n_trials_hint
        Horizon ``T`` if known: ``L = ceil(T / S)`` in ``delta / L`` and in
        ``kappa_step="theory"``; otherwise ``L`` is the current epoch (1-based).
    psi, psi_c, psi_n
        Algorithm 2's penalty shape (:func:`make_psi`); default ``"exp"`` with ``c = 1``.
        Not allowed with ``variant="noisy"``.
    kappa_init
        Initial multipliers (a number or one per constraint): default 1 (Algorithm 2, must be
        ``> 0``) or 0 (Algorithm 3, ``>= 0``).
    kappa_step, kappa_step0
        Algorithm 3's step ``mu``: a number ``> 0`` (default 0.5, the paper's experiments) or
        ``"theory"`` (``kappa_step0 / sqrt(L)``, see :func:`theory_steps`). Not allowed with
        ``variant="noiseless"``.
    max_log_kappa, max_log_penalty
        Overflow guards (in ``(0, 300]``): clip of ``log kappa`` (Algorithm 2; logged once) and cap
        of every penalty term at ``exp(max_log_penalty)``. Defaults 50 and 100.
    history
        ``"all"`` (default): every counted trial, re-scored with the current multipliers, goes to
        the GP. ``"epoch"`` (the paper's literal fresh IGP-UCB per epoch): only the current epoch's
        trials.
    on_missing
        ``"skip"`` (default): trials with missing / differently named / non-finite constraint
        values are left out, with one logged warning per trial; ``"raise"``:
        :class:`ConstraintDataError`.
    names
        The constraint names (columns, in this order), e.g. ``("0", "1")`` for two
        ``constraints_func`` values or ``("cost",)`` for ``trial.set_constraint("cost", v)``.
        Default: the key set most trials with constraint data share.
    include_pruned
        PRUNED trials' constraints count in the epoch map and means (never in the GP).
    epoch_order
        ``"number"`` (default): epochs follow trial numbers; ``"complete"``: completion times
        (closed epochs then never change when a low-numbered trial finishes late).
    """

    def __init__(
        self,
        variant: str = "noiseless",
        *,
        epoch_length: int | str = 20,
        n_trials_hint: int | None = None,
        psi: str | Callable[[Any], Any] | Psi | None = None,
        psi_c: float = 1.0,
        psi_n: float = 2.0,
        kappa_init: float | Sequence[float] | None = None,
        kappa_step: float | str | None = None,
        kappa_step0: float = 0.5,
        max_log_kappa: float = 50.0,
        max_log_penalty: float = 100.0,
        history: str = "all",
        on_missing: str = "skip",
        names: Sequence[str] | None = None,
        include_pruned: bool = False,
        epoch_order: str = "number",
    ) -> None:
        if variant not in VARIANTS:
            raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}.")
        self.variant = variant
        self.n_trials_hint = (
            None if n_trials_hint is None else _check_int("n_trials_hint", n_trials_hint, 1)
        )
        if epoch_length == "sqrt":
            if self.n_trials_hint is None:
                raise ValueError("epoch_length='sqrt' needs n_trials_hint (the horizon T).")
            self.epoch_length = max(1, round(math.sqrt(self.n_trials_hint)))
        else:
            self.epoch_length = _check_int("epoch_length", epoch_length, 1)
        if variant == "noiseless":
            if kappa_step is not None:
                raise ValueError("kappa_step applies to variant='noisy' only.")
            self.psi: Psi | None = make_psi("exp" if psi is None else psi, psi_c, psi_n)
            self.kappa_step: float | str | None = None
            kappa_init = 1.0 if kappa_init is None else kappa_init
            _kappa_vector(kappa_init, 0, positive=True)
        else:
            if psi is not None:
                raise ValueError("psi applies to variant='noiseless' only (Algorithm 3 is linear).")
            self.psi = None
            kappa_step = 0.5 if kappa_step is None else kappa_step
            if isinstance(kappa_step, str):
                if kappa_step != "theory":
                    raise ValueError(
                        f"kappa_step must be a number > 0 or 'theory', got {kappa_step!r}."
                    )
            else:
                kappa_step = _finite_float("kappa_step", kappa_step)
                if kappa_step <= 0:
                    raise ValueError(f"kappa_step must be > 0, got {kappa_step}.")
            self.kappa_step = kappa_step
            kappa_init = 0.0 if kappa_init is None else kappa_init
            _kappa_vector(kappa_init, 0, positive=False)
        self.kappa_init = kappa_init
        self.kappa_step0 = _finite_float("kappa_step0", kappa_step0)
        if self.kappa_step0 <= 0:
            raise ValueError(f"kappa_step0 must be > 0, got {kappa_step0}.")
        self.max_log_kappa = _check_max_log("max_log_kappa", max_log_kappa)
        self.max_log_penalty = _check_max_log("max_log_penalty", max_log_penalty)
        if history not in ("all", "epoch"):
            raise ValueError(f"history must be 'all' or 'epoch', got {history!r}.")
        self.history = history
        if on_missing not in MISSING_POLICIES:
            raise ValueError(f"on_missing must be one of {MISSING_POLICIES}, got {on_missing!r}.")
        self.on_missing = on_missing
        self.names = _check_names(names)
        if not isinstance(include_pruned, (bool, np.bool_)):
            raise ValueError(f"include_pruned must be a bool, got {include_pruned!r}.")
        self.include_pruned = bool(include_pruned)
        if epoch_order not in ("number", "complete"):
            raise ValueError(f"epoch_order must be 'number' or 'complete', got {epoch_order!r}.")
        self.epoch_order = epoch_order
        self._warned_skipped: set[int] = set()
        self._warned_clip = False

    def __repr__(self) -> str:
        return (
            f"LongTermConstraints({self.variant!r}, epoch_length={self.epoch_length}, "
            f"history={self.history!r}, on_missing={self.on_missing!r})"
        )

    def counted_trials(self, trials: Sequence[FrozenTrial]) -> list[FrozenTrial]:
        """COMPLETE trials (and PRUNED ones with ``include_pruned``) in epoch order."""
        states = [TrialState.COMPLETE] + ([TrialState.PRUNED] if self.include_pruned else [])
        counted = [t for t in trials if t.state in states]
        if self.epoch_order == "complete":
            far = _FAR_FUTURE
            counted.sort(key=lambda t: (t.datetime_complete or far, t.number))
        else:
            counted.sort(key=lambda t: t.number)
        return counted

    def prepare(self, trials: Sequence[FrozenTrial]) -> ConstraintStage:
        """Recover the multipliers from the trials and select the GP trials.

        Parameters
        ----------
        trials
            The study's trials (any states: only COMPLETE ones count, and PRUNED ones with
            ``include_pruned``, so pass the PRUNED trials too in that case; the caller may
            pre-filter, e.g. to trials holding every parameter of the search space). The input
            order does not matter: epochs follow ``epoch_order``.

        Returns
        -------
        ConstraintStage
            GP trials, their constraint values, the multiplier state and the target transform
            (``stage.targets(y)``); unpacks as ``trials, transform, state``.

        Raises
        ------
        ConstraintDataError
            With ``on_missing="raise"``, for the first unusable trial.
        ValueError
            If ``kappa_init`` has another length than the number of constraints.
        """
        matrix = constraint_matrix(
            self.counted_trials(trials), names=self.names, on_missing=self.on_missing
        )
        self._warn_skipped(matrix.skipped)
        G, names = matrix.values, matrix.names
        kappa_init = self.kappa_init if G.shape[1] else 1.0
        if self.variant == "noiseless":
            assert self.psi is not None
            state = recover_noiseless(
                G, self.epoch_length, self.psi, kappa_init, self.max_log_kappa, names
            )
            if state.clipped and not self._warned_clip:
                self._warned_clip = True
                _logger.warning(
                    "log kappa reached max_log_kappa=%g (constraint means far above 0 for psi's "
                    "scale); it is clipped. Consider psi='poly' or a smaller psi_c.",
                    self.max_log_kappa,
                )
        else:
            state = recover_noisy(
                G, self.epoch_length, self.kappa_step, kappa_init if G.shape[1] else 0.0,
                self.kappa_step0, self.n_trials_hint, names,
            )
        complete = np.array([t.state == TrialState.COMPLETE for t in matrix.trials], dtype=bool)
        if self.history == "epoch":
            complete &= epoch_index(matrix.n, self.epoch_length) == state.epoch
        idx = np.flatnonzero(complete)
        return ConstraintStage(
            trials=tuple(matrix.trials[i] for i in idx),
            constraints=G[idx],
            state=state,
            skipped=matrix.skipped,
            n_epochs=horizon_epochs(matrix.n, self.epoch_length, self.n_trials_hint),
            psi=self.psi,
            max_log_penalty=self.max_log_penalty,
        )

    def _warn_skipped(self, skipped: Sequence[SkippedTrial]) -> None:
        new = [s for s in skipped if s.number not in self._warned_skipped]
        if not new:
            return
        self._warned_skipped.update(s.number for s in new)
        _logger.warning(
            "%d trial(s) skipped by the long-term constraints (unusable constraint data; "
            "on_missing='skip'), %d in total: %s",
            len(new), len(skipped), "; ".join(s.message for s in new[:5])
            + (" ..." if len(new) > 5 else ""),
        )

