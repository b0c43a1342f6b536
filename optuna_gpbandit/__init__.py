"""Gaussian-process bandit samplers for Optuna.

Pipeline: study history (``_history``) -> observations (``_observations``, ``_space``; censored
rows of pending trials from ``_pending``) -> GP
posterior (``gp``, ``_model``) -> acquisition (``acquisition``) -> maximiser (``_maximize``) ->
params. Samplers (``samplers``) compose these parts; ``report`` summarises finished studies.
"""

from optuna_gpbandit import report
from optuna_gpbandit._notices import configure_logging
from optuna_gpbandit._pending import Censoring
from optuna_gpbandit.changepoint import ChangeDetection, CPDSettings, ResidualTest
from optuna_gpbandit.constraints import FeasibleConstraints, LongTermConstraints
from optuna_gpbandit.report import (
    ConstraintReport,
    HypervolumeReport,
    RegretReport,
    constraint_report,
    hypervolume_report,
    pending_counts,
    regret_report,
    sampler_record,
)
from optuna_gpbandit.samplers import (
    ConstrainedGPUCBSampler,
    GPTSSampler,
    GPUCBCPDSampler,
    GPUCBSampler,
    IGPUCBSampler,
)

configure_logging()

__version__ = "0.1.0"
__all__ = [
    "CPDSettings",
    "Censoring",
    "ChangeDetection",
    "ResidualTest",
    "ConstrainedGPUCBSampler",
    "ConstraintReport",
    "FeasibleConstraints",
    "LongTermConstraints",
    "constraint_report",
    "GPTSSampler",
    "GPUCBCPDSampler",
    "GPUCBSampler",
    "HypervolumeReport",
    "IGPUCBSampler",
    "RegretReport",
    "__version__",
    "hypervolume_report",
    "pending_counts",
    "regret_report",
    "report",
    "sampler_record",
]
