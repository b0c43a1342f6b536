"""OptunaHub package of optuna_gpbandit: the samplers of the installed package, re-exported.

    import optunahub
    module = optunahub.load_local_module("samplers/gp_bandit", registry_root="hub")
    sampler = module.GPUCBSampler(seed=0)
"""

from optuna_gpbandit import (
    Censoring,
    ChangeDetection,
    ConstrainedGPUCBSampler,
    GPTSSampler,
    GPUCBCPDSampler,
    GPUCBSampler,
    IGPUCBSampler,
    LongTermConstraints,
)

__all__ = [
    "Censoring",
    "ChangeDetection",
    "ConstrainedGPUCBSampler",
    "GPTSSampler",
    "GPUCBCPDSampler",
    "GPUCBSampler",
    "IGPUCBSampler",
    "LongTermConstraints",
]
