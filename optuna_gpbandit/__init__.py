"""Gaussian-process bandit samplers for Optuna.

Each suggestion runs one pipeline of stages (``samplers/_base.py``, ``GPBanditSampler._choose``):
study history (``_history``) -> segment (``changepoint``, ``_restarts``) -> failed rows
(``_failures``) -> constraints (``samplers/_constraint_step``, ``constraints``) -> pending rows
(``_pending``) -> observations (``_observations``, ``_space``) -> one GP per objective (``gp``,
``_model``) -> what to avoid (``_row_effects``, ``samplers/_context``) -> acquisition
(``acquisition``) -> maximiser (``_maximize``) -> params. The storage schema is ``_storage``;
``report`` summarises finished studies. See docs/how-it-works.md.
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
