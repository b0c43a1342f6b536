"""Optuna samplers: thin compositions of the shared pipeline."""

from optuna_gpbandit.samplers._base import GPBanditSampler
from optuna_gpbandit.samplers.constrained import ConstrainedGPUCBSampler
from optuna_gpbandit.samplers.gp_ts import GPTSSampler
from optuna_gpbandit.samplers.gp_ucb import GPUCBSampler
from optuna_gpbandit.samplers.gp_ucb_cpd import GPUCBCPDSampler
from optuna_gpbandit.samplers.igp_ucb import IGPUCBSampler

__all__ = [
    "ConstrainedGPUCBSampler",
    "GPBanditSampler",
    "GPTSSampler",
    "GPUCBCPDSampler",
    "GPUCBSampler",
    "IGPUCBSampler",
]
