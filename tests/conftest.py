import optuna
import pytest

from optuna_gpbandit import GPTSSampler, GPUCBSampler, IGPUCBSampler

ALL_SAMPLERS = [GPUCBSampler, IGPUCBSampler, GPTSSampler]


@pytest.fixture(autouse=True)
def _quiet_optuna():
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    yield
