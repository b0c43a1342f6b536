"""Constraints: the two rules of the constraint stage, from Optuna's constraint values.

* **Feasible points** (the default, :class:`FeasibleConstraints`; Xu et al., ICML 2023,
  CONFIG): one GP per constraint, the acquisition kept to the points whose constraint lower
  confidence bounds are ``<= 0`` (:mod:`~optuna_gpbandit.constraints.feasible`).
* **Long-term constraints** (:class:`LongTermConstraints`; Shi & Eryilmaz, AISTATS 2022,
  Algorithms 2 and 3), described below.

Long-term constraints. The problem: maximise ``f`` while every constraint holds *on average over time*,
``(1/T) sum_t g_j(x_t) <= 0``; a single trial may violate a constraint. This package turns the
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
* :class:`LongTermConstraints`, the rule a sampler holds; its
  :meth:`~LongTermConstraints.prepare` maps the study's trials to a :class:`ConstraintStage`
  (GP trials, target transform, multiplier state).

Modules (one concern each; everything public is re-exported here):

* :mod:`~optuna_gpbandit.constraints.step` -- the stage each rule runs (:class:`ConstraintRule`,
  :class:`ConstraintStep`; :class:`NoConstraints` for ``constraints=None``);
* :mod:`~optuna_gpbandit.constraints.feasible` -- the feasible-point rule
  (:class:`FeasibleConstraints`); :mod:`~optuna_gpbandit.constraints.models` -- its constraint
  GPs (:class:`ConstraintModels`);
* :mod:`~optuna_gpbandit.constraints.psi` -- the penalty shape ``psi`` of Algorithm 2;
* :mod:`~optuna_gpbandit.constraints.data` -- reading constraint values from trials, the
  constraint matrix and the policy for unusable data;
* :mod:`~optuna_gpbandit.constraints.multipliers` -- the epoch map, the multiplier updates and
  the recovered :class:`MultiplierState`;
* :mod:`~optuna_gpbandit.constraints.penalties` -- the penalised targets, the noise inflation and
  the IGP-UCB width;
* :mod:`~optuna_gpbandit.constraints.long_term` -- the long-term rule
  (:class:`LongTermConstraints`) with its multiplier rules
  (:mod:`~optuna_gpbandit.constraints.algorithms`: :class:`NoiselessMultipliers`,
  Algorithm 2, and :class:`NoisyMultipliers`, Algorithm 3), and
  :mod:`~optuna_gpbandit.constraints.stage` -- what it hands the GP (:class:`ConstraintStage`).

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
the stage lists it in ``ConstraintStage.skipped`` (the sampler's constraint step logs the count
once per study at 1, 2, 4, ... skipped trials); with ``on_missing="raise"`` it
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
constraint. Diagnostics go to ``gpbandit:multipliers`` (:data:`DIAGNOSTICS_KEY`, chunked JSON:
see :mod:`optuna_gpbandit._storage`), via :meth:`MultiplierState.to_json`, and must never be read
back as state.
"""

from __future__ import annotations

from optuna_gpbandit.constraints.data import (
    CONSTRAINT_PREFIX,
    CONSTRAINTS_KEY,
    DIAGNOSTICS_KEY,
    MISSING_POLICIES,
    ConstraintDataError,
    ConstraintMatrix,
    SkippedTrial,
    constraint_matrix,
    constraint_names,
    constraint_vector,
    trial_constraints,
)
from optuna_gpbandit.constraints.algorithms import NoiselessMultipliers, NoisyMultipliers
from optuna_gpbandit.constraints.feasible import FeasibleConstraints
from optuna_gpbandit.constraints.long_term import VARIANTS, LongTermConstraints
from optuna_gpbandit.constraints.models import ConstraintModels, OptimisticViolation
from optuna_gpbandit.constraints.multipliers import (
    MultiplierState,
    epoch_index,
    epoch_means,
    epoch_position,
    horizon_epochs,
    noiseless_log_kappa_path,
    noisy_kappa_path,
    recover_noiseless,
    recover_noisy,
    theory_steps,
    update_kappa_add,
    update_kappa_mult,
)
from optuna_gpbandit.constraints.penalties import (
    constrained_beta,
    epoch_delta_factor,
    noise_width_factor,
    noiseless_penalties,
    noiseless_targets,
    noisy_penalties,
    noisy_targets,
)
from optuna_gpbandit.constraints.psi import (
    Psi,
    make_psi,
    psi_exp,
    psi_poly,
)
from optuna_gpbandit.constraints.stage import ConstraintStage
from optuna_gpbandit.constraints.step import (ConstraintRule, ConstraintStep,
                                              NoConstraints)

__all__ = [
    "ConstraintModels",
    "ConstraintRule",
    "ConstraintStep",
    "FeasibleConstraints",
    "NoConstraints",
    "NoiselessMultipliers",
    "NoisyMultipliers",
    "OptimisticViolation",
    "CONSTRAINTS_KEY",
    "CONSTRAINT_PREFIX",
    "DIAGNOSTICS_KEY",
    "MISSING_POLICIES",
    "VARIANTS",
    "ConstraintDataError",
    "ConstraintMatrix",
    "ConstraintStage",
    "LongTermConstraints",
    "MultiplierState",
    "Psi",
    "SkippedTrial",
    "constrained_beta",
    "epoch_delta_factor",
    "constraint_matrix",
    "constraint_names",
    "constraint_vector",
    "epoch_index",
    "epoch_means",
    "epoch_position",
    "horizon_epochs",
    "make_psi",
    "noise_width_factor",
    "noiseless_log_kappa_path",
    "noiseless_penalties",
    "noiseless_targets",
    "noisy_kappa_path",
    "noisy_penalties",
    "noisy_targets",
    "psi_exp",
    "psi_poly",
    "recover_noiseless",
    "recover_noisy",
    "theory_steps",
    "trial_constraints",
    "update_kappa_add",
    "update_kappa_mult",
]
