"""The objective-shapes suite as a harness suite (``python -m benchmarks run shapes``).

Its runs come in groups (``suites.py``: each group's problems, budget, seeds and samplers), so
the suite plans its own tasks (:func:`plan`): ``--set quick`` (default) or ``--set full`` picks
the group list, ``--groups`` narrows it; ``--problems``, ``--samplers`` (a group runs the named
samplers it runs by default; a sampler no group runs by default, such as a variant, runs on
every group), ``--seeds`` / ``--seed-list`` and ``--trials`` narrow or override every group's.
Scored against the result set's Random runs at each problem's budget; the report's own sections
are ``report.py``'s checks and tables.
"""

from __future__ import annotations

import argparse

from benchmarks.harness.suite import Scoring, Suite

from . import report
from .problems import ALL
from .suites import FULL, RECOMMENDED_TRIALS, SUITES, select, tasks


def options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--set", dest="shapes_set", choices=list(SUITES), default="quick",
                   help="the group list: quick (default) or full (the issue's checks)")
    p.add_argument("--groups", nargs="+", metavar="GROUP",
                   help="only these groups (" + ", ".join(g.name for g in FULL) + ")")


def plan(args: argparse.Namespace, names: list[str], samplers: list[str], seeds: list[int]
         ) -> list:
    problems = names if getattr(args, "problems", None) else None
    groups = select(getattr(args, "shapes_set", "quick"), getattr(args, "groups", None),
                    problems, getattr(args, "samplers", None), getattr(args, "seeds", None),
                    getattr(args, "trials", None))
    if not groups:
        raise SystemExit("nothing to run: no group keeps a problem and a sampler")
    return tasks(groups, getattr(args, "first_seed", 0), getattr(args, "seed_list", None))


def _budgets(problem: str, length: int) -> list[tuple[str, int]]:
    T = min(RECOMMENDED_TRIALS.get(problem, length), length)
    return [("budget", T)]


SUITE = Suite(
    name="shapes", title="Objective-shapes suite (issue 47)",
    halves={"all": [p for g in FULL for p in g.problems]},
    problem=lambda name, seed: ALL[name], budget=lambda name: RECOMMENDED_TRIALS[name],
    scoring=Scoring("random-runs", _budgets), seeds=5,
    samplers=("GP-UCB", "GP-TS", "IGP-UCB", "GPSampler", "TPE", "Random"),
    options=options, plan=plan, sections=report.sections,
    describe=lambda name: ALL[name].description,
    notes="The values and spaces users produce (`benchmarks/shapes/__init__.py`); the checks "
          "of issue 47 below.")
