"""OptunaHub package of optuna_gpbandit: the samplers of the installed package and their
settings objects, re-exported.

    import optunahub
    module = optunahub.load_local_module("samplers/gp_bandit", registry_root="hub")
    sampler = module.GPUCBSampler(seed=0, model=module.GPModel(input_warping=False))
"""

from optuna_gpbandit import (
    AcquisitionSearch,
    BetaSchedule,
    CandidateDraw,
    Censoring,
    ChangeDetection,
    ConstrainedGPUCBSampler,
    CPDSettings,
    FailedTrials,
    FeasibleConstraints,
    GPModel,
    GPTSSampler,
    GPUCBCPDSampler,
    GPUCBSampler,
    Hallucinate,
    IGPUCBSampler,
    IgnorePending,
    InfoGainWidth,
    LongTermConstraints,
    PathDraw,
    PendingRule,
    ResidualTest,
    Restarts,
    Theorem1,
    Theorem2,
    Theorem3,
)

__all__ = [
    # samplers
    "ConstrainedGPUCBSampler",
    "GPTSSampler",
    "GPUCBCPDSampler",
    "GPUCBSampler",
    "IGPUCBSampler",
    # settings objects
    "AcquisitionSearch",
    "BetaSchedule",
    "CandidateDraw",
    "Censoring",
    "ChangeDetection",
    "CPDSettings",
    "FailedTrials",
    "FeasibleConstraints",
    "GPModel",
    "Hallucinate",
    "IgnorePending",
    "InfoGainWidth",
    "LongTermConstraints",
    "PathDraw",
    "PendingRule",
    "ResidualTest",
    "Restarts",
    "Theorem1",
    "Theorem2",
    "Theorem3",
]
