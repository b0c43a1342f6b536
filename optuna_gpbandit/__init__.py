"""Gaussian-process bandit samplers for Optuna.

Each suggestion runs one pipeline of stages (``samplers/_base.py``, ``GPBanditSampler._choose``):
study history (``_history``) -> reset (``reset=``: ``reset``, ``changepoint``, ``restarts``)
-> start-up design (``_startup``) -> failed rows (``failures=``, ``failures``) -> constraints
(``constraints=``, ``constraints``) -> pending rows
(``pending=``, ``pending``) -> observations (``_observations``, ``_space``) -> one GP per
objective (``model=``, ``model``, ``gp``, ``_fitted_gp``) -> what to avoid
(``samplers/_context``) -> acquisition (``acquisition``) -> maximiser (``search=``,
``search``, ``_maximize``) -> params. Each settings object lives in the public module of its
stage and carries its stage's policy through the pipeline. The storage schema is
``_storage``; ``report`` summarises finished studies. See docs/how-it-works.md.
"""

from optuna_gpbandit import report, visualization
from optuna_gpbandit.failures import FailedTrials
from optuna_gpbandit.model import GPModel
from optuna_gpbandit.search import AcquisitionSearch
from optuna_gpbandit._notices import configure_logging
from optuna_gpbandit.pending import Censoring, Hallucinate, IgnorePending, PendingRule
from optuna_gpbandit.reset import NoReset
from optuna_gpbandit.restarts import Restarts
from optuna_gpbandit.search import TrustRegion
from optuna_gpbandit.acquisition.width import (BetaSchedule, CandidateDraw, InfoGainWidth,
                                               PathDraw, Theorem1, Theorem2, Theorem3)
from optuna_gpbandit.changepoint import ChangeDetection, CPDSettings, ResidualTest
from optuna_gpbandit.constraints import (FeasibleConstraints, LongTermConstraints,
                                         NoiselessMultipliers, NoisyMultipliers)
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
    "AcquisitionSearch",
    "BetaSchedule",
    "CPDSettings",
    "CandidateDraw",
    "Censoring",
    "ChangeDetection",
    "ResidualTest",
    "ConstrainedGPUCBSampler",
    "FailedTrials",
    "GPModel",
    "Hallucinate",
    "IgnorePending",
    "InfoGainWidth",
    "NoReset",
    "NoiselessMultipliers",
    "NoisyMultipliers",
    "PathDraw",
    "PendingRule",
    "Restarts",
    "Theorem1",
    "Theorem2",
    "Theorem3",
    "TrustRegion",
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
    "visualization",
    "sampler_record",
]
