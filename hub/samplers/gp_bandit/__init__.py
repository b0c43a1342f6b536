"""GP bandit samplers for Optuna: the samplers of ``optuna_gpbandit`` and the settings objects
their arguments take, re-exported for OptunaHub (the package itself must be installed; see
README.md)."""

from optuna_gpbandit import AcquisitionSearch
from optuna_gpbandit import BetaSchedule
from optuna_gpbandit import CandidateDraw
from optuna_gpbandit import Censoring
from optuna_gpbandit import ChangeDetection
from optuna_gpbandit import ConstrainedGPUCBSampler
from optuna_gpbandit import CPDSettings
from optuna_gpbandit import FailedTrials
from optuna_gpbandit import FeasibleConstraints
from optuna_gpbandit import GPModel
from optuna_gpbandit import GPTSSampler
from optuna_gpbandit import GPUCBCPDSampler
from optuna_gpbandit import GPUCBSampler
from optuna_gpbandit import Hallucinate
from optuna_gpbandit import IgnorePending
from optuna_gpbandit import IGPUCBSampler
from optuna_gpbandit import InfoGainWidth
from optuna_gpbandit import LongTermConstraints
from optuna_gpbandit import NoiselessMultipliers
from optuna_gpbandit import NoisyMultipliers
from optuna_gpbandit import NoReset
from optuna_gpbandit import PathDraw
from optuna_gpbandit import PendingRule
from optuna_gpbandit import ResidualTest
from optuna_gpbandit import Restarts
from optuna_gpbandit import Theorem1
from optuna_gpbandit import Theorem2
from optuna_gpbandit import Theorem3
from optuna_gpbandit import TrustRegion


__all__ = [
    # samplers
    "ConstrainedGPUCBSampler",
    "GPTSSampler",
    "GPUCBCPDSampler",
    "GPUCBSampler",
    "IGPUCBSampler",
    # exploration widths
    "BetaSchedule",
    "InfoGainWidth",
    "Theorem1",
    "Theorem2",
    "Theorem3",
    # GP-TS draws
    "CandidateDraw",
    "PathDraw",
    # model and acquisition search
    "AcquisitionSearch",
    "GPModel",
    "TrustRegion",
    # pending trials of parallel workers
    "Censoring",
    "Hallucinate",
    "IgnorePending",
    "PendingRule",
    # failed and pruned trials
    "FailedTrials",
    # resets (which trials the model sees): none, restarts and change detection
    "ChangeDetection",
    "CPDSettings",
    "NoReset",
    "ResidualTest",
    "Restarts",
    # constraints
    "FeasibleConstraints",
    "LongTermConstraints",
    "NoiselessMultipliers",
    "NoisyMultipliers",
]
