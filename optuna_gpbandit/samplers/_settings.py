"""The front door: a sampler's arguments, checked once and held as the settings objects the
stages read (:class:`Settings`). Every bad value fails here, with a message naming the
argument."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from optuna.samplers import BaseSampler
from optuna.trial import FrozenTrial

from optuna_gpbandit._arguments import check_bool, check_instance, check_int
from optuna_gpbandit.failures import FailedTrials
from optuna_gpbandit.model import GPModel
from optuna_gpbandit.search import AcquisitionSearch
from optuna_gpbandit.pending import PendingRule
from optuna_gpbandit.reset import Reset, resolve_reset
from optuna_gpbandit.acquisition.scalarize import check_scalarization
from optuna_gpbandit.constraints import ConstraintRule, FeasibleConstraints, NoConstraints

ConstraintsArg = ConstraintRule | str | None
ConstraintsFunc = Callable[[FrozenTrial], Sequence[float]]


@dataclass(frozen=True)
class Settings:
    """What the stages of a suggestion read: the settings objects of the sampler's arguments
    (``model`` with ``deterministic_objective`` applied; ``constraints`` resolved with
    ``constraints_func`` into a rule, ``auto`` for GPSampler's ``"auto"``; ``reset`` a
    :class:`~optuna_gpbandit.reset.Reset`; ``find_out_deterministic``: whether the history
    decides if the objective is deterministic, ``deterministic_objective=None``)."""

    n_startup_trials: int | None
    model: GPModel
    search: AcquisitionSearch
    pending: PendingRule
    failures: FailedTrials
    reset: Reset
    constraints: ConstraintRule
    auto_constraints: bool
    constraints_func: ConstraintsFunc | None
    scalarization: str
    warn_independent_sampling: bool
    find_out_deterministic: bool


def resolve_constraints(
    constraints: ConstraintsArg, constraints_func: ConstraintsFunc | None,
) -> tuple[ConstraintRule, bool]:
    """The constraint rule of the ``constraints`` and ``constraints_func`` arguments, and
    whether it is ``"auto"`` (GPSampler's meaning: the best feasible point once trials report
    constraint values, quietly nothing before; a ``constraints_func`` asks for constraints
    explicitly; ``None`` without one: :class:`NoConstraints`). Raises ``ValueError`` naming the
    argument."""
    if not (constraints is None or (isinstance(constraints, str) and constraints == "auto")
            or isinstance(constraints, ConstraintRule)):
        raise ValueError(
            "constraints must be 'auto', None, or a FeasibleConstraints or "
            f"LongTermConstraints instance, got {constraints!r}."
        )
    if constraints_func is not None and not callable(constraints_func):
        raise ValueError("constraints_func must be callable.")
    auto = constraints == "auto" and constraints_func is None
    if constraints == "auto" or (constraints is None and constraints_func is not None):
        return FeasibleConstraints(), auto
    if constraints is None:
        return NoConstraints(), auto
    assert not isinstance(constraints, str)  # "auto" was replaced, other strings rejected
    return constraints, auto


def resolve_settings(
    *, n_startup_trials: int | None, deterministic_objective: bool | None,
    constraints_func: ConstraintsFunc | None, warn_independent_sampling: bool, model: GPModel,
    search: AcquisitionSearch, pending: PendingRule, failures: FailedTrials,
    reset: Reset | None, constraints: ConstraintsArg, scalarization: str,
    noise_floor: float | None,
) -> Settings:
    """The checked :class:`Settings` of a sampler's arguments (``noise_floor``: the sampler's
    floor of the objective model's noise where ``model`` leaves it at ``None``, if the sampler
    has one; change detection's residual test, which reads the model's predictive spread,
    keeps the model's own, :data:`~optuna_gpbandit.gp.fit.MIN_NOISE_VAR`)."""
    model = check_instance("model", model, GPModel, "a GPModel instance")
    reset = resolve_reset(reset)
    if noise_floor is not None and not reset.objective_units:
        model = model.floored(noise_floor)
    if deterministic_objective is not None and not isinstance(deterministic_objective, bool):
        raise ValueError("deterministic_objective must be True, False or None (find out from "
                         f"repeated configurations), got {deterministic_objective!r}.")
    resolved, auto = resolve_constraints(constraints, constraints_func)
    return Settings(
        n_startup_trials=(None if n_startup_trials is None
                          else check_int("n_startup_trials", n_startup_trials, 0)),
        model=model.deterministic(deterministic_objective is True),
        search=check_instance("search", search, AcquisitionSearch, "an AcquisitionSearch instance"),
        pending=check_instance("pending", pending, PendingRule,
                          "Hallucinate(), Censoring(...) or IgnorePending()"),
        failures=check_instance("failures", failures, FailedTrials, "a FailedTrials instance"),
        reset=reset,
        constraints=resolved,
        auto_constraints=auto,
        constraints_func=constraints_func,
        scalarization=check_scalarization(scalarization),
        warn_independent_sampling=check_bool("warn_independent_sampling",
                                             warn_independent_sampling),
        find_out_deterministic=deterministic_objective is None,
    )


def check_independent_sampler(sampler: Any) -> BaseSampler | None:
    """``None`` or an Optuna sampler."""
    if sampler is not None and not isinstance(sampler, BaseSampler):
        raise ValueError(f"independent_sampler must be an Optuna sampler, got {sampler!r}.")
    return sampler
