"""The step's record: what each stage says of one suggestion, typed, and its stored form (the
trial's ``gpbandit:state``, read by :func:`optuna_gpbandit.report.sampler_record`, by the
next suggestion's warm start and by the restarts' replay).

Stages read each other's parts through the fields (change detection reads the point's
prediction), never through the stored JSON, whose keys are flat for users.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from optuna_gpbandit.reset import ResetRecord


@dataclass(frozen=True)
class PointRecord:
    """What the model said of the chosen point (objective units), and about itself."""

    t: int  # the round: points in the design, pending ones included, + 1
    mu: float  # posterior mean at the point
    sigma: float  # posterior sd at the point
    pred_sd: float  # sd of a new value there (noise included)
    y_scale: float  # the standardising scale of the targets
    n_warped: int  # observed values the output warp lifted
    info_gain: float  # information gain of the design
    info_gain_inc: float  # its increase by the point
    refitted: bool  # hyperparameters refitted this step
    n_observed: int  # observations (all, before the posterior cap)
    n_censored: int  # design rows without a label (pending)
    n_posterior: int  # rows in the posterior
    width_bonus: float  # the censoring width bonus
    gp_state: dict[str, Any]  # parameter names, fit size and the GP's hyperparameters

    def to_json(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
               if f.name != "gp_state"}
        out.update(self.gp_state)
        return out


@dataclass(frozen=True)
class MultiPointRecord:
    """A multi-objective step: the weights and scalarisation, and each objective's model."""

    t: int
    weights: list[float]
    scalarization: str
    mu: list[float]
    sigma: list[float]
    n_observed: int
    n_posterior: list[int]
    refitted: list[bool]
    objectives: list[dict[str, Any]]  # each objective's model state (warm starts)

    def to_json(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


@dataclass
class StepRecord:
    """The record of one suggestion by the model.

    ``acquisition`` holds the sampler's own terms (``beta``, ``nu``, ``v``, ``gamma``, ...);
    ``constraints`` the constraint stage's (``feasibility`` or ``multipliers``); ``pending``
    the pending stage's counts; ``reset`` what the reset says of the trials the model sees; ``extra`` what the reset adds once the model is fitted
    (``unexplored``)."""

    point: PointRecord | MultiPointRecord
    acquisition: dict[str, Any] = field(default_factory=dict)
    reset: ResetRecord = ResetRecord()
    constraints: dict[str, Any] = field(default_factory=dict)
    penalised: bool = False  # the model predicts penalised targets, not the objective
    pending: dict[str, int] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    trust_region: float | None = None  # the side of the trust region the point was chosen in
    rounds: int = 1  # suggestion rounds (a concurrent worker took the point: chosen again)

    def to_json(self) -> dict[str, Any]:
        """The flat JSON object stored as the trial's ``gpbandit:state``."""
        out = dict(self.acquisition)
        out.update(self.point.to_json())
        out.update(self.reset.to_json())
        if self.penalised:
            out["penalised"] = True
        out.update(self.constraints)
        out["pending"] = self.pending
        out.update(self.extra)
        if self.trust_region is not None:
            out["trust_region"] = self.trust_region
        out["rounds"] = self.rounds
        return out
