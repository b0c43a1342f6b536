"""What a user reads at the default verbosity: each kind of line at most once per study, no
line about the package's bookkeeping, and no false line with several workers."""

from __future__ import annotations

import collections
import logging

import optuna
import pytest

from optuna_gpbandit import GPTSSampler, GPUCBSampler


def _quick_start_like(trial):
    # deterministic, a log-scaled float and a categorical, with ties (a quantised score)
    c = trial.suggest_float("C", 1e-4, 1e2, log=True)
    solver = trial.suggest_categorical("solver", ["lbfgs", "liblinear"])
    return round(abs(__import__("math").log10(c) + 0.7) + (solver == "lbfgs") * 0.05, 2)


@pytest.mark.parametrize("cls", [GPUCBSampler, GPTSSampler])
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_each_kind_of_line_is_said_once_and_none_is_bookkeeping(cls, n_jobs, caplog):
    study = optuna.create_study(sampler=cls(seed=0))
    with caplog.at_level(logging.INFO, logger="optuna_gpbandit"):
        study.optimize(_quick_start_like, n_trials=30, n_jobs=n_jobs)
    own = [r for r in caplog.records if r.name.startswith("optuna_gpbandit")]
    kinds = collections.Counter(r.msg for r in own)  # the format string: one per kind
    assert all(n == 1 for n in kinds.values()), kinds
    text = " ".join(r.getMessage() for r in own)
    for bookkeeping in ("pending points", "no known point", "not sampled by", "early width",
                        "earlier point already gave", "one-split", "chance-level"):
        assert bookkeeping not in text
    if n_jobs > 1:
        return  # two workers may each repeat a point before either result says "deterministic"
    # a deterministic objective: at most one configuration asked twice
    repeats = collections.Counter(tuple(sorted(t.params.items())) for t in study.trials)
    assert sum(v - 1 for v in repeats.values()) <= 1
