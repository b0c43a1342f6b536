"""Bayesmark's problems as a harness suite (``python -m benchmarks run bayesmark``): the 90
problems of ``definitions.py`` in two halves (``definitions.HALVES``: the tuning half's families,
the validation half's), 10 seeds x 40 trials, each seed its own objective (``shuffle_seed``), each
run scored against its seed's random-search pool (``benchmarks/harness/pool.py``) at 40 and 100
trials. Options: ``--models`` (only these families) and ``--skip-slow`` (no MLP on digits)."""

from __future__ import annotations

import argparse

from benchmarks.harness.suite import SKLEARN_MODEL_MODULES, Scoring, Suite, fixed_budgets

from . import definitions as D
from .problems import ALL, HALF_PROBLEMS, harness_problem

SLOW = [n for n, p in ALL.items() if p.model.startswith("MLP") and p.dataset == "digits"]
"""The problems ``--skip-slow`` leaves out: an MLP on digits, seconds per evaluation."""
DEFAULT_SAMPLERS = ("GP-UCB", "GPSampler", "TPE", "Random")


def options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--models", "--families", dest="models", nargs="+", metavar="MODEL",
                   help="only these families")
    p.add_argument("--skip-slow", action="store_true",
                   help=f"leave out the MLPs on digits ({len(SLOW)} problems, seconds per "
                   "evaluation)")


def select(args: argparse.Namespace, names: list[str]) -> list[str]:
    """``--models`` and ``--skip-slow`` applied to ``names``."""
    if getattr(args, "models", None):
        bad = [m for m in args.models if m not in D.FAMILIES]
        if bad:
            raise SystemExit(f"unknown model(s): {', '.join(bad)}; known: "
                             f"{', '.join(D.FAMILIES)}")
        names = [p for p in names if ALL[p].model in args.models]
    if getattr(args, "skip_slow", False):
        names = [p for p in names if p not in SLOW]
    return names


def _warm(tasks: list) -> None:
    """The data splits of the tasks' (problem, seed)."""
    for t in tasks:
        D.tuning_data(ALL[t.problem].dataset, t.seed)


SUITE = Suite(
    name="bayesmark", title="Bayesmark suite (unedited problem definitions): normalised scores",
    halves={h: HALF_PROBLEMS[h] for h in D.HALVES}, problem=harness_problem,
    budget=lambda name: 40, scoring=Scoring("pool", fixed_budgets(40, 100)), seeds=10,
    samplers=DEFAULT_SAMPLERS, seeded_objective=True, modules=SKLEARN_MODEL_MODULES,
    warm=_warm, options=options, select=select,
    describe=lambda name: ALL[name].description(),
    half_notes={h: ", ".join(D.HALVES[h]) for h in D.HALVES},
    notes="Bayesmark 0.0.8's scikit-learn problems, re-implemented and checked against "
          "Bayesmark itself (`benchmarks/bayesmark/README.md`). Each seed is its own objective "
          "(its own 80 % split), scored against its own random-search pool.")
