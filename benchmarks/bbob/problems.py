"""COCO's bbob functions (``cocoex``, ``pip install coco-experiment``) as harness problems.

A problem is one (function, dimension, instance) of the bbob suite: 24 noiseless functions f1-f24,
each in 2, 5, 10 and 20 dimensions, on ``[-5, 5]^d``, minimised. Its name is
``bbob-f{ff}-d{dd}-i{ii}`` (``bbob-f12-d10-i06``); Optuna sees ``x0 .. x{d-1}`` as
``suggest_float(name, -5, 5)``. ``minimum`` is the instance's optimal value ``f_opt``: cocoex 2.8's
Python ``Problem`` does not expose it, so the problem is evaluated at the optimiser that
``Problem._best_parameter("print")`` writes to a file (in a temporary directory of its own, so
that parallel workers do not share the file); this is the ``Fopt`` COCO's own logger records.

Instances. 1 and 2 are reserved for the project's final check: :func:`problem` refuses them.
The tuning half is instances 3-5, the validation half 6-8 (:data:`HALVES`, fixed before any run
was looked at); 9-15 are left for checks on instances no one has seen.
"""

from __future__ import annotations

import functools
import os
import re
import tempfile
from typing import Any

import numpy as np
import optuna

from benchmarks.harness.problems import Problem

Params = dict[str, Any]
FUNCTIONS = tuple(range(1, 25))
DIMS = (2, 5, 10, 20)
RESERVED = (1, 2)
"""Instances reserved for the project's final check: never run or tuned on."""
HALVES = {"tuning": (3, 4, 5), "validation": (6, 7, 8)}
BUDGET = {2: 40, 5: 60, 10: 100, 20: 200}
"""Trials per run by dimension: 20 d in 2-D, 12 d in 5-D, 10 d in 10-D and 20-D (the BO
literature's 10-20 d)."""
NAMES = {1: "sphere", 2: "ellipsoid", 3: "Rastrigin", 4: "Bueche-Rastrigin", 5: "linear slope",
         6: "attractive sector", 7: "step ellipsoid", 8: "Rosenbrock", 9: "Rosenbrock rotated",
         10: "ellipsoid rotated", 11: "discus", 12: "bent cigar", 13: "sharp ridge",
         14: "different powers", 15: "Rastrigin rotated", 16: "Weierstrass",
         17: "Schaffer F7", 18: "Schaffer F7 ill-cond.", 19: "Griewank-Rosenbrock",
         20: "Schwefel", 21: "Gallagher 101", 22: "Gallagher 21", 23: "Katsuura",
         24: "Lunacek bi-Rastrigin"}
GROUPS = {"separable": range(1, 6), "moderate": range(6, 10), "ill-conditioned": range(10, 15),
          "multi-modal": range(15, 20), "weakly structured": range(20, 25)}
"""COCO's five function groups."""
_NAME = re.compile(r"bbob-f(\d\d)-d(\d\d)-i(\d\d)$")


def name(f: int, d: int, i: int) -> str:
    return f"bbob-f{f:02d}-d{d:02d}-i{i:02d}"


def parse(problem_name: str) -> tuple[int, int, int] | None:
    """``(function, dimension, instance)`` of a bbob problem name, else ``None``."""
    m = _NAME.match(problem_name)
    return None if m is None else (int(m[1]), int(m[2]), int(m[3]))


def group_of(f: int) -> str:
    return next(g for g, fs in GROUPS.items() if f in fs)


def _check(f: int, d: int, i: int) -> None:
    if i in RESERVED:
        raise ValueError(f"bbob instance {i} is reserved for the project's final check; use "
                         f"instances 3-15 (tuning {HALVES['tuning']}, validation "
                         f"{HALVES['validation']})")
    if f not in FUNCTIONS or d not in DIMS or not 3 <= i <= 15:
        raise ValueError(f"no bbob problem f{f} d{d} i{i}: functions 1-24, dimensions "
                         f"{DIMS}, instances 3-15")


_SUITES: list = []


@functools.lru_cache(maxsize=None)
def _coco(f: int, d: int, i: int) -> Any:
    import cocoex

    _check(f, d, i)
    suite = cocoex.Suite("bbob", f"instances: {i}",
                         f"dimensions: {d} function_indices: {f}")
    p = suite.get_problem_by_function_dimension_instance(f, d, i)
    assert p.id_triple == (f, d, i), p
    _SUITES.append(suite)  # a problem is valid only while its suite lives
    return p


@functools.lru_cache(maxsize=None)
def optimum(f: int, d: int, i: int) -> tuple[float, np.ndarray]:
    """``(f_opt, x_opt)`` of the instance (module docstring)."""
    p = _coco(f, d, i)
    here = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        try:
            p._best_parameter("print")
            x = np.atleast_1d(np.loadtxt("._bbob_problem_best_parameter.txt"))
        finally:
            os.chdir(here)
    return float(p(x)), x


def problem(f: int, d: int, i: int) -> Problem:
    """The harness problem of bbob function ``f`` in ``d`` dimensions, instance ``i``."""
    _check(f, d, i)
    keys = [f"x{j}" for j in range(d)]

    def suggest(trial: optuna.Trial) -> Params:
        return {k: trial.suggest_float(k, -5.0, 5.0) for k in keys}

    def evaluate(params: Params) -> float:
        return float(_coco(f, d, i)(np.array([params[k] for k in keys], dtype=float)))

    fopt, xopt = optimum(f, d, i)
    return Problem(name(f, d, i), f"bbob f{f} ({NAMES[f]}), {d}-D, instance {i}", suggest,
                   evaluate, fopt, dict(zip(keys, map(float, xopt))), "synthetic", d,
                   {"bbob": (f, d, i), "budget": BUDGET[d]})


def names(half: str, dims: tuple[int, ...] = (5, 10),
          functions: tuple[int, ...] = FUNCTIONS) -> list[str]:
    """The problem names of a half (``tuning``, ``validation`` or ``all``)."""
    inst = HALVES["tuning"] + HALVES["validation"] if half == "all" else HALVES[half]
    return [name(f, d, i) for d in dims for f in functions for i in inst]
