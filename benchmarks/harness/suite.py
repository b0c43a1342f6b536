"""The suite object every benchmark suite is, the types it is made of, and the registry of suites.

A :class:`Suite` says what a suite is: its problems (by half), each problem's objective for a
run's seed, the trial budget, the default seeds and samplers, how a run is scored
(:class:`Scoring`; the rules are ``scoring.py``'s), what a worker imports before its first run,
the suite's own command-line options and report sections. A :class:`Task` is one run of a suite:
(problem, sampler, seed, trials). The runner (``benchmarks.harness.runner``), the command line
(``python -m benchmarks``, ``cli.py``) and the report (``report.py``) take a suite and nothing
else: a spawned worker receives the suite's *name* and imports it from :data:`SUITES`, so no
suite replaces a function of the harness. This module imports no other module of the harness
(``problems.py`` for a type alone): the others import it.

Suites: ``quick``, ``grid``, ``smoke`` (the harness's own test functions, ``quick.py``),
``hpo`` (in-house scikit-learn tasks), ``bayesmark`` (Bayesmark's definitions), ``shapes``
(objective shapes), ``bbob`` (COCO's bbob functions), ``users`` (objectives as optuna-examples
writes them).
"""

from __future__ import annotations

import argparse
import importlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

if TYPE_CHECKING:
    from .problems import Problem

SUITES: dict[str, str] = {
    "quick": "benchmarks.harness.quick:QUICK",
    "grid": "benchmarks.harness.quick:GRID",
    "smoke": "benchmarks.harness.quick:SMOKE",
    "hpo": "benchmarks.hpo.suite:SUITE",
    "bayesmark": "benchmarks.bayesmark.suite:SUITE",
    "shapes": "benchmarks.shapes.suite:SUITE",
    "bbob": "benchmarks.bbob.suite:SUITE",
    "users": "benchmarks.users.suite:SUITE",
}
"""Suite name -> ``module:attribute`` of its :class:`Suite` (imported on first use)."""

SKLEARN_MODEL_MODULES = tuple(f"sklearn.{m}" for m in (
    "tree", "ensemble", "neighbors", "neural_network", "linear_model", "svm", "multiclass",
    "metrics", "model_selection", "pipeline", "preprocessing"))
"""scikit-learn's modules the ML suites' workers import before their first run."""

SCORE_FLOOR = -100.0


@dataclass(frozen=True)
class Task:
    problem: str
    sampler: str
    seed: int
    n_trials: int

    @property
    def key(self) -> tuple[str, str, int, int]:
        return (self.problem, self.sampler, self.seed, self.n_trials)


def fixed_budgets(*budgets: int) -> Callable[[str, int], list[tuple[str, int]]]:
    """Scored budgets ``T = b`` for each ``b`` of ``budgets`` a run reaches; a run shorter
    than all of them is scored at its length."""
    def scored(problem: str, length: int) -> list[tuple[str, int]]:
        out = [(f"T = {b}", b) for b in budgets if b <= length]
        return out or [(f"T = {length}", length)]
    return scored


@dataclass(frozen=True)
class Scoring:
    """A suite's scoring rule (the rules: ``scoring.py``'s module docstring).

    ``kind``: ``random-runs``, ``pool`` or ``targets``; ``budgets(problem, run length)``: the
    (label, T) pairs a run is scored at (runs are grouped into tables by label, so one label
    may stand for a different T per problem, e.g. bbob's budget of each dimension);
    ``unit``: what the score reads as, for the report.
    """

    kind: str
    budgets: Callable[[str, int], list[tuple[str, int]]] = fixed_budgets(40, 100)
    floor: float | None = SCORE_FLOOR
    unit: str = "normalised score (100 = the best value known, 0 = random search)"

    def __post_init__(self) -> None:
        if self.kind not in ("random-runs", "pool", "targets"):
            raise ValueError(f"Scoring kind {self.kind!r}: random-runs, pool or targets")


@dataclass(frozen=True)
class Suite:
    """A benchmark suite: problems, budget, scoring, and what its runs need.

    Parameters
    ----------
    name, title:
        The registry name (``python -m benchmarks run NAME``) and a heading for reports.
    halves:
        Problem names by half (``tuning``, ``validation``; a suite without a split has one
        half, ``all``). The half ``all`` is always the union, in order.
    problem:
        ``problem(name, seed)``: the harness problem whose ``evaluate`` is the objective of a
        run of that seed (most suites ignore the seed; Bayesmark's objective depends on it).
    budget:
        ``budget(name)``: the default trials of a run of the problem.
    scoring:
        How runs are scored (the report's one format).
    seeds, samplers:
        Defaults of ``run``.
    seeded_objective:
        Whether a problem's objective depends on the run's seed (a random-search pool is then
        kept per (problem, seed), else per problem).
    modules:
        What a worker imports before its first run (so no run pays an import).
    warm:
        ``warm(tasks)``: more of a worker's start (data sets, splits), after ``modules``.
    options, select:
        The suite's own options of ``run`` / ``pool`` / ``report`` (``options(parser)``), and
        ``select(args, names)``: the problems of the chosen half those options keep.
    plan:
        ``plan(args, problems, samplers, seeds) -> tasks``: overrides the default plan (every
        problem x sampler x seed at the problem's budget or ``--trials``).
    sections:
        ``sections(data) -> lines``: the suite's own report sections (after the common ones).
    describe:
        ``describe(name)``: one line about a problem (``list``).
    notes:
        Said under the report's heading (what the suite is, where its docs are).
    half_notes:
        Said in brackets after a half's heading (e.g. its families).
    """

    name: str
    title: str
    halves: Mapping[str, Sequence[str]]
    problem: Callable[[str, int], "Problem"]
    budget: Callable[[str], int]
    scoring: "Scoring"
    seeds: int = 10
    samplers: tuple[str, ...] = ("GP-UCB", "GPSampler", "TPE", "Random")
    seeded_objective: bool = False
    modules: tuple[str, ...] = ()
    warm: Callable[[list["Task"]], None] | None = None
    options: Callable[[argparse.ArgumentParser], None] | None = None
    select: Callable[[argparse.Namespace, list[str]], list[str]] | None = None
    plan: Callable[..., list["Task"]] | None = None
    sections: Callable[[Any], list[str]] | None = None
    describe: Callable[[str], str] | None = None
    notes: str = ""
    half_notes: Mapping[str, str] = field(default_factory=dict)
    order: tuple[str, ...] = field(default=())
    """Problems in report order (default: the halves' order)."""

    def names(self, half: str = "all") -> list[str]:
        """The problem names of ``half`` (``all``: every half's, in order)."""
        if half == "all":
            out: list[str] = []
            for names in self.halves.values():
                out += [n for n in names if n not in out]
            return out
        if half not in self.halves:
            raise SystemExit(f"suite {self.name} has no half {half!r}; its halves: "
                             f"{', '.join(self.halves)} (or all)")
        return list(self.halves[half])

    def half_of(self, problem: str) -> str | None:
        return next((h for h, names in self.halves.items() if problem in names), None)

    def objective_seed(self, seed: int) -> int:
        """The seed of a run's objective: the run's seed if the objective depends on it, else 0
        (one objective, one random-search pool, for all seeds)."""
        return int(seed) if self.seeded_objective else 0


def get_suite(name: str) -> Suite:
    """The suite registered as ``name`` (imported on first use)."""
    try:
        where = SUITES[name]
    except KeyError:
        raise SystemExit(f"unknown suite {name!r}; known: {', '.join(SUITES)}") from None
    module, _, attr = where.partition(":")
    return getattr(importlib.import_module(module), attr)
