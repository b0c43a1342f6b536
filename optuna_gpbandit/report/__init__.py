"""Reports of a finished (or running) study: regret and information gain
(:mod:`~optuna_gpbandit.report.regret`), hypervolume of multi-objective studies
(:mod:`~optuna_gpbandit.report.hypervolume`), constraint metrics
(:mod:`~optuna_gpbandit.report.constraints`), and the sampler's per-trial records."""

from optuna_gpbandit.report.constraints import (
    ConstraintReport,
    LongTermMetrics,
    constraint_report,
    cumulative_violation,
    long_term_metrics,
    violation_curves,
)
from optuna_gpbandit.report.hypervolume import HypervolumeReport, hypervolume_report
from optuna_gpbandit.report.regret import (
    RegretReport,
    design_information_gain,
    pending_counts,
    regret_curves,
    regret_report,
    sampler_record,
)

__all__ = [
    "ConstraintReport",
    "HypervolumeReport",
    "LongTermMetrics",
    "RegretReport",
    "constraint_report",
    "cumulative_violation",
    "design_information_gain",
    "hypervolume_report",
    "long_term_metrics",
    "pending_counts",
    "regret_curves",
    "regret_report",
    "sampler_record",
    "violation_curves",
]
