"""The design of one suggestion (:class:`Design`): the completed trials the model observes
with their values, and rows for the trials whose value it has not (pending ones, late
results), with the rule that says what those rows mean to the model (:class:`RowLabels`, the
base of the pending rules of :mod:`optuna_gpbandit.pending`); and the pending stage's notices.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, ClassVar

import numpy as np
from optuna.study import Study
from optuna.trial import FrozenTrial

from optuna_gpbandit._notices import DEBUG, WARNING, log_once

if TYPE_CHECKING:
    from optuna_gpbandit.gp.posterior import GPPosterior

# condition(rows, y): the posterior on the design's rows ``rows`` (a mask; ``None``: every row)
# with labels ``y`` (built by the model stage, :func:`optuna_gpbandit._fitted_gp._posterior`)
Condition = Callable[[Any, np.ndarray], "GPPosterior"]


class RowLabels:
    """What the rows of a design mean to the model: their label, and the posterior that
    conditions on them. Here: the worst observed value as label, one posterior on every row
    as labelled. The pending rules (:class:`~optuna_gpbandit.pending.PendingRule`) build on
    it."""

    summary: ClassVar[str] = "the worst observed value as label"

    def label(self, y: np.ndarray, to_model: Callable[[float], float] | None) -> float:
        """The label of the design's rows in the model's units, given the labels ``y`` of the
        observed rows: the worst of them. ``to_model`` maps an objective value into the
        model's units (``None`` with several objectives)."""
        return float(y.min()) if y.size else 0.0

    def posterior(self, observed: np.ndarray, y: np.ndarray, X: np.ndarray,
                  condition: Condition) -> GPPosterior:
        """The model's posterior on the design (``observed``: mask of the rows with a label
        of their own, ``y`` every row's label, ``X`` the inputs): on every row as labelled."""
        return condition(None, y)


@dataclass(frozen=True)
class DesignRow:
    """A point of the design whose label is not its observed value."""

    number: int
    params: dict[str, Any]
    status: str  # "pending" (may still arrive), "stale" (RUNNING beyond the window), "late"
    in_window: bool  # counted in the nu_t sum


@dataclass(frozen=True)
class Design:
    """Observed trials (real labels) and the rows of the rule that labels them."""

    observed: list[FrozenTrial]
    observed_in_window: list[bool]
    rows: list[DesignRow]
    n_dead: int = 0  # RUNNING trials presumed dead (left out)
    n_unresolved: int = 0  # pending trials whose point is not known yet (left out)
    rule: RowLabels = field(default_factory=RowLabels)  # what the rows mean to the model
    late_after: str = ""  # late rows: their results came later than this after their start

    def counts(self) -> dict[str, int]:
        """How the study's trials enter the model: ``observed`` (completed, real value),
        ``late`` (completed, censored), ``pending`` (running or waiting, in the design),
        ``stale`` (running beyond the censoring window), ``dead`` and ``unresolved``."""
        status = [r.status for r in self.rows]
        return {
            "observed": len(self.observed),
            "late": status.count("late"),
            "pending": status.count("pending"),
            "stale": status.count("stale"),
            "dead": self.n_dead,
            "unresolved": self.n_unresolved,
        }


def report(study: Study, trial: FrozenTrial, design: Design) -> None:
    """Log once per study what the pending stage does, with the counts at that moment."""
    counts = design.counts()
    if counts["pending"] or counts["stale"]:
        log_once(study, "pending", DEBUG,
                 "Trial %d: %d running or waiting trial(s) enter the model as pending points "
                 "with %s (pending=%s()).", trial.number, counts["pending"] + counts["stale"],
                 design.rule.summary, type(design.rule).__name__)
    if counts["late"]:
        log_once(study, "late", WARNING,
                 "Trial %d: %d of %d completed result(s) arrived more than %s after their "
                 "trial started and are censored: their values are not used "
                 "(Censoring(discard_late=True), the paper's rule).", trial.number,
                 counts["late"], counts["late"] + counts["observed"], design.late_after)
    if counts["dead"]:
        log_once(study, "dead", WARNING,
                 "Trial %d: %d RUNNING trial(s) are presumed dead (stale heartbeat, or running "
                 "far longer than any completed trial; see stale_after) and are left out of the "
                 "model.", trial.number, counts["dead"])
    if counts["unresolved"]:
        log_once(study, "unresolved", DEBUG,
                 "Trial %d: %d running trial(s) have no parameters yet (asked, not yet "
                 "sampled) and are left out of the model.",
                 trial.number, counts["unresolved"])
