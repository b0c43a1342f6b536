"""Optuna's own sampler conformance suites, for every sampler."""

import pytest
from optuna.testing.pytest_samplers import (
    BasicSamplerTestCase,
    MultiObjectiveSamplerTestCase,
    RelativeSamplerTestCase,
    SingleOnlySamplerTestCase,
)

from optuna_gpbandit import (AcquisitionSearch, ConstrainedGPUCBSampler, GPTSSampler,
                             GPUCBCPDSampler, GPUCBSampler, IGPUCBSampler)

SEARCH = AcquisitionSearch(n_candidates=256)


# GP-UCB, IGP-UCB and GP-TS support multi-objective studies (random scalarisations).
class _Suites(BasicSamplerTestCase, RelativeSamplerTestCase, MultiObjectiveSamplerTestCase):
    pass


# Change detection and the constrained sampler's modes are single-objective.
class _SingleOnlySuites(BasicSamplerTestCase, RelativeSamplerTestCase,
                        SingleOnlySamplerTestCase):
    pass


class TestGPUCB(_Suites):
    @pytest.fixture
    def sampler(self):
        return lambda: GPUCBSampler(n_startup_trials=1, search=SEARCH)


class TestIGPUCB(_Suites):
    @pytest.fixture
    def sampler(self):
        return lambda: IGPUCBSampler(n_startup_trials=1, search=SEARCH)


class TestGPTS(_Suites):
    @pytest.fixture
    def sampler(self):
        return lambda: GPTSSampler(n_startup_trials=1, search=SEARCH)


# n_startup_trials=0 (GPSampler and TPE accept it): the GP from the first completed trial on.
class TestGPUCBNoStartup(_Suites):
    @pytest.fixture
    def sampler(self):
        return lambda: GPUCBSampler(n_startup_trials=0, search=SEARCH)


class TestGPTSNoStartup(_Suites):
    @pytest.fixture
    def sampler(self):
        return lambda: GPTSSampler(n_startup_trials=0, search=SEARCH)


class TestConstrainedGPUCB(_SingleOnlySuites):
    @pytest.fixture
    def sampler(self):
        return lambda: ConstrainedGPUCBSampler(n_startup_trials=1, search=SEARCH)


class TestGPUCBCPD(_SingleOnlySuites):
    @pytest.fixture
    def sampler(self):
        return lambda: GPUCBCPDSampler(n_startup_trials=1, search=SEARCH)
