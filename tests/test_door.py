"""Errors that name the fix (samplers/_door.py): a flat argument that is now a settings field
names the settings object, its argument and the field; a settings object given to another
stage's argument names the right argument; a misspelt argument names the closest one."""

from __future__ import annotations

import re

import pytest

import optuna_gpbandit as g
from optuna_gpbandit.model import GPModel
from optuna_gpbandit.samplers._door import _hints
from optuna_gpbandit.search import AcquisitionSearch

SAMPLERS = [g.GPUCBSampler, g.IGPUCBSampler, g.GPTSSampler, g.ConstrainedGPUCBSampler,
            g.GPUCBCPDSampler]


@pytest.mark.parametrize("cls", SAMPLERS)
def test_every_samplers_hints_are_read(cls):
    # unreadable hints would switch the wrong-argument check off without a word
    assert {"model", "search", "pending", "failures"} <= set(_hints(cls))


@pytest.mark.parametrize("cls", SAMPLERS)
@pytest.mark.parametrize("flat, fix", [
    ("input_warping", "model=GPModel(input_warping=...)"),
    ("noise_var", "model=GPModel(noise_var=...)"),
    ("n_candidates", "search=AcquisitionSearch(n_candidates=...)"),
    ("extreme_gap", "failures=FailedTrials(extreme_gap=...)"),
])
def test_a_flat_argument_names_its_settings_object_and_field(cls, flat, fix):
    with pytest.raises(TypeError, match=f"unexpected keyword argument '{flat}'.*pass "
                       + re.escape(fix)):
        cls(**{flat: 1})


def test_renamed_and_replaced_arguments_name_their_new_form():
    with pytest.raises(TypeError, match=r"pass beta=Theorem1\(scale=\.\.\.\)"):
        g.GPUCBSampler(beta_scale=0.1)
    with pytest.raises(TypeError, match=r"pass reset=Restarts\(\)"):
        g.GPUCBSampler(restarts=True)
    with pytest.raises(TypeError, match="did you mean seed="):
        g.GPTSSampler(sede=1)


@pytest.mark.parametrize("cls", SAMPLERS)
@pytest.mark.parametrize("arg, value, right", [
    ("search", GPModel(), "model"),
    ("model", AcquisitionSearch(), "search"),
    ("pending", g.FailedTrials(), "failures"),
    ("failures", g.Censoring(), "pending"),
])
def test_a_settings_object_at_the_wrong_argument_names_the_right_one(cls, arg, value, right):
    kind = type(value).__name__
    with pytest.raises(ValueError, match=rf"{arg}= got {kind}\(\.\.\.\).*pass {right}={kind}"):
        cls(**{arg: value})


def test_right_arguments_still_construct():
    s = g.GPUCBSampler(seed=0, model=GPModel(input_warping=False),
                       search=AcquisitionSearch(n_candidates=256), pending=g.Censoring())
    assert isinstance(s, g.GPUCBSampler)


def test_a_subclass_forwarding_kwargs_is_not_second_guessed():
    class Forwarding(g.GPUCBSampler):
        def __init__(self, *, extra: int = 0, **kwargs):
            self.extra = extra
            super().__init__(**kwargs)

    s = Forwarding(extra=3, seed=0)
    assert s.extra == 3
    with pytest.raises(TypeError):  # the base __init__ still refuses an unknown keyword
        Forwarding(sede=1)
