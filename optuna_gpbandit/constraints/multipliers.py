"""The multipliers: the epoch map, the kappa updates of Algorithms 2 and 3, their paths over
the full epochs and the recovered :class:`MultiplierState`."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from optuna_gpbandit.constraints._checks import (
    _as_matrix,
    _check_int,
    _check_max_log,
    _finite_float,
    _kappa_vector,
)
from optuna_gpbandit.constraints.penalties import noise_width_factor
from optuna_gpbandit.constraints.psi import Psi, make_psi


# ========================================================================== epoch map
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
    step: float | Sequence[float] | np.ndarray = 0.5,
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


def _steps(step: float | Sequence[float] | np.ndarray, n_updates: int) -> np.ndarray:
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

    def summary_json(self) -> dict[str, Any]:
        """A record whose size does not grow with the number of constraints: the epoch, the
        number of constraints ``m`` and the largest multiplier (with its constraint's name)."""
        record: dict[str, Any] = {
            "variant": self.variant, "epoch": self.epoch, "position": self.position,
            "n_used": self.n_used, "epoch_length": self.epoch_length, "m": self.m,
        }
        if self.m:
            j = int(np.argmax(self.kappa_array))
            record["max_kappa"] = float(self.kappa[j])
            record["max_kappa_name"] = self.names[j]
        if self.variant == "noisy":
            record["noise_factor"] = self.noise_factor
        return record

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
    return _state("noiseless", G, epoch_length, names, kappa=_tuple(np.exp(path[-1])),
                  log_kappa=_tuple(path[-1]), clipped=clipped)


def _state(variant: str, G: np.ndarray, epoch_length: int, names: Sequence[str] | None,
           **fields: Any) -> MultiplierState:
    """The :class:`MultiplierState` after ``G``: the epoch bookkeeping both variants share, plus
    the variant's own ``fields``."""
    epoch, position = epoch_position(G.shape[0], epoch_length)
    return MultiplierState(
        variant=variant,
        epoch=epoch,
        position=position,
        n_used=G.shape[0],
        epoch_length=epoch_length,
        names=_names_for(names, G.shape[1]),
        epoch_means=tuple(_tuple(r) for r in epoch_means(G, epoch_length)),
        **fields,
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
    epoch, _ = epoch_position(G.shape[0], epoch_length)
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
    return _state("noisy", G, epoch_length, names, kappa=_tuple(path[-1]), steps=_tuple(steps))


def _names_for(names: Sequence[str] | None, m: int) -> tuple[str, ...]:
    if names is None:
        return tuple(str(i) for i in range(m))
    names = tuple(names)
    if len(names) != m:
        raise ValueError(f"{len(names)} names for {m} constraints.")
    return names
