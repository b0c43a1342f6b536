"""Reading constraint values from trials: Optuna's two storage formats, the constraint matrix
``G`` of an ordered list of trials and the policy for unusable data."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import optuna
from optuna.trial import FrozenTrial

from optuna_gpbandit.constraints._checks import _check_names
from optuna_gpbandit._storage import MULTIPLIERS, OPTUNA_CONSTRAINT_PREFIX, OPTUNA_CONSTRAINTS

# Public names of the storage attributes of constraints (see optuna_gpbandit._storage).
CONSTRAINTS_KEY = OPTUNA_CONSTRAINTS
CONSTRAINT_PREFIX = OPTUNA_CONSTRAINT_PREFIX
DIAGNOSTICS_KEY = MULTIPLIERS

# ``trial.set_constraint`` (and ``FrozenTrial.constraints``) are new in Optuna 5.0; on Optuna 4.x
# (the package admits 4.3) constraint values come from ``constraints_func`` only, and the messages
# that name ``set_constraint`` say so, with the installed version.
HAS_SET_CONSTRAINT = hasattr(optuna.trial.Trial, "set_constraint")


def set_constraint_note() -> str:
    """``""`` on Optuna >= 5.0; on 4.x a sentence for messages that mention
    ``trial.set_constraint``: it needs Optuna >= 5.0, naming the installed version."""
    if HAS_SET_CONSTRAINT:
        return ""
    return (f" (trial.set_constraint needs Optuna >= 5.0; this is Optuna {optuna.__version__}: "
            "report constraint values with constraints_func)")


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
        if trial.system_attrs.get(CONSTRAINTS_KEY, None) is not None:
            detail = "its constraints_func returned an empty sequence"
        elif CONSTRAINTS_KEY in trial.system_attrs:
            detail = "its constraints_func raised (stored None)"
        else:
            detail = ("no constraints_func values and no trial.set_constraint(...) values"
                      + set_constraint_note())
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
