"""Optuna's own sampler conformance suites, for every sampler."""

import pytest
from optuna.testing.pytest_samplers import (
    BasicSamplerTestCase,
    RelativeSamplerTestCase,
    SingleOnlySamplerTestCase,
)

from optuna_gpbandit import GPTSSampler, GPUCBSampler, IGPUCBSampler


class _Suites(BasicSamplerTestCase, RelativeSamplerTestCase, SingleOnlySamplerTestCase):
    pass


class TestGPUCB(_Suites):
    @pytest.fixture
    def sampler(self):
        return lambda: GPUCBSampler(n_startup_trials=1, n_candidates=256)


class TestIGPUCB(_Suites):
    @pytest.fixture
    def sampler(self):
        return lambda: IGPUCBSampler(n_startup_trials=1, n_candidates=256)


class TestGPTS(_Suites):
    @pytest.fixture
    def sampler(self):
        return lambda: GPTSSampler(n_startup_trials=1, n_candidates=256)


# n_startup_trials=0 (GPSampler and TPE accept it): the GP from the first completed trial on.
class TestGPUCBNoStartup(_Suites):
    @pytest.fixture
    def sampler(self):
        return lambda: GPUCBSampler(n_startup_trials=0, n_candidates=256)


class TestGPTSNoStartup(_Suites):
    @pytest.fixture
    def sampler(self):
        return lambda: GPTSSampler(n_startup_trials=0, n_candidates=256)
