"""Shi & Eryilmaz's two multiplier rules as settings objects (``LongTermConstraints(
multipliers=...)``): how the multipliers are recovered from the epochs' constraint means, how
they penalise the targets, and what they do to the width. :class:`NoiselessMultipliers` is
Algorithm 2, :class:`NoisyMultipliers` Algorithm 3; each validates its own fields."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Sequence, cast

import numpy as np

from optuna_gpbandit.constraints._checks import _check_max_log, _finite_float, _kappa_vector
from optuna_gpbandit.constraints.multipliers import (MultiplierState, recover_noiseless,
                                                     recover_noisy)
from optuna_gpbandit.constraints.penalties import (constrained_beta, epoch_delta_factor,
                                                   noiseless_penalties, noisy_penalties)
from optuna_gpbandit.constraints.psi import Psi, make_psi


def _kappa(kappa_init: float | Sequence[float]) -> float | tuple[float, ...]:
    """``kappa_init`` as stored: a number, or a tuple (settings are frozen and hashable)."""
    if isinstance(kappa_init, Sequence) or isinstance(kappa_init, np.ndarray):
        return tuple(float(k) for k in kappa_init)
    return kappa_init


@dataclass(frozen=True, kw_only=True)
class NoiselessMultipliers:
    """Algorithm 2 (noiseless constraints): the multiplicative update ``kappa_j <- kappa_j
    psi(gbar_j)`` after each full epoch and the penalty ``kappa_j (psi(g_j) - 1)``;
    ``LongTermConstraints()`` by default, ``LongTermConstraints("noiseless", ...)`` before.

    Parameters
    ----------
    psi, psi_c, psi_n
        The penalty shape (:func:`~optuna_gpbandit.constraints.make_psi`): ``"exp"`` (default,
        ``exp(c x)``), ``"poly"`` (``(1 + c x)^n``), a :class:`~optuna_gpbandit.constraints.Psi`
        or a callable; ``c = psi_c`` (default 1), ``n = psi_n`` (default 2).
    kappa_init
        Initial multipliers, ``> 0`` (a number or one per constraint; default 1).
    max_log_kappa
        Clip of ``log kappa`` after every update, in ``(0, 300]`` (default 50; logged once
        when reached).
    """

    psi: str | Callable[[Any], Any] | Psi = "exp"
    psi_c: float = 1.0
    psi_n: float = 2.0
    kappa_init: float | Sequence[float] = 1.0
    max_log_kappa: float = 50.0
    variant: ClassVar[str] = "noiseless"

    def __post_init__(self) -> None:
        object.__setattr__(self, "psi", make_psi(self.psi, self.psi_c, self.psi_n))
        _kappa_vector(self.kappa_init, 0, positive=True)
        object.__setattr__(self, "kappa_init", _kappa(self.kappa_init))
        object.__setattr__(self, "max_log_kappa",
                           _check_max_log("max_log_kappa", self.max_log_kappa))

    @property
    def shape(self) -> Psi:
        """The penalty shape (``psi`` as :func:`make_psi` made it)."""
        return cast(Psi, self.psi)

    def recover(self, G: np.ndarray, epoch_length: int, n_trials_hint: int | None,
                names: Sequence[str]) -> MultiplierState:
        """The multipliers after the full epochs of ``G`` (:func:`recover_noiseless`)."""
        return recover_noiseless(G, epoch_length, self.shape,
                                 self.kappa_init if G.shape[1] else 1.0, self.max_log_kappa,
                                 names)

    def penalties(self, G: np.ndarray, state: MultiplierState,
                  max_log_penalty: float) -> np.ndarray:
        """``sum_j kappa_j (psi(g_j) - 1)`` per row of ``G``."""
        return noiseless_penalties(G, state.log_kappa_array, self.shape, max_log_penalty)

    def delta_factor(self, n_epochs: int) -> float:
        """The factor of ``delta`` in the width: ``1 / L``."""
        return epoch_delta_factor(n_epochs, False)

    def beta(self, gamma: float, B: float, R: float, delta: float, n_epochs: int,
             state: MultiplierState) -> float:
        """IGP-UCB's width with ``delta / L`` (:func:`constrained_beta`)."""
        return constrained_beta(gamma, B, R, delta, n_epochs, None)


@dataclass(frozen=True, kw_only=True)
class NoisyMultipliers:
    """Algorithm 3 (noisy constraints): the additive projected update ``kappa_j <- max(0,
    kappa_j + step gbar_j)``, the linear penalty ``kappa_j g_j`` and the noise level
    ``sqrt(1 + sum kappa_j^2) R`` in the width; ``LongTermConstraints("noisy", ...)`` before.

    Parameters
    ----------
    kappa_step, kappa_step0
        The step ``mu``: a number ``> 0`` (default 0.5, the paper's experiments) or
        ``"theory"`` (``kappa_step0 / sqrt(L)``, :func:`~optuna_gpbandit.constraints.theory_steps`;
        ``kappa_step0`` default 0.5).
    kappa_init
        Initial multipliers, ``>= 0`` (a number or one per constraint; default 0).
    """

    kappa_step: float | str = 0.5
    kappa_step0: float = 0.5
    kappa_init: float | Sequence[float] = 0.0
    variant: ClassVar[str] = "noisy"

    def __post_init__(self) -> None:
        if isinstance(self.kappa_step, str):
            if self.kappa_step != "theory":
                raise ValueError(
                    f"kappa_step must be a number > 0 or 'theory', got {self.kappa_step!r}.")
        else:
            step = _finite_float("kappa_step", self.kappa_step)
            if step <= 0:
                raise ValueError(f"kappa_step must be > 0, got {step}.")
            object.__setattr__(self, "kappa_step", step)
        _kappa_vector(self.kappa_init, 0, positive=False)
        object.__setattr__(self, "kappa_init", _kappa(self.kappa_init))
        step0 = _finite_float("kappa_step0", self.kappa_step0)
        if step0 <= 0:
            raise ValueError(f"kappa_step0 must be > 0, got {self.kappa_step0}.")
        object.__setattr__(self, "kappa_step0", step0)

    def recover(self, G: np.ndarray, epoch_length: int, n_trials_hint: int | None,
                names: Sequence[str]) -> MultiplierState:
        """The multipliers after the full epochs of ``G`` (:func:`recover_noisy`)."""
        return recover_noisy(G, epoch_length, self.kappa_step,
                             self.kappa_init if G.shape[1] else 0.0, self.kappa_step0,
                             n_trials_hint, names)

    def penalties(self, G: np.ndarray, state: MultiplierState,
                  max_log_penalty: float) -> np.ndarray:
        """``sum_j kappa_j g_j`` per row of ``G``."""
        return noisy_penalties(G, state.kappa_array, max_log_penalty)

    def delta_factor(self, n_epochs: int) -> float:
        """The factor of ``delta`` in the width: ``1 / (2 L)``."""
        return epoch_delta_factor(n_epochs, True)

    def beta(self, gamma: float, B: float, R: float, delta: float, n_epochs: int,
             state: MultiplierState) -> float:
        """IGP-UCB's width with ``delta / 2L`` and the noise level inflated by ``kappa``
        (:func:`constrained_beta`)."""
        return constrained_beta(gamma, B, R, delta, n_epochs, state.kappa)


Multipliers = NoiselessMultipliers | NoisyMultipliers
"""A multiplier rule of :class:`~optuna_gpbandit.LongTermConstraints`."""
