"""Benchmark problems of the harness: all offline, numpy / scikit-learn, minimised.

Every problem defines its Optuna search space (``suggest``, define-by-run) and its objective
(``evaluate``, a function of the suggested params only, deterministic). ``minimum`` is the known
global minimum, ``optimum`` a point reaching it; for the two scikit-learn tasks both are ``None``
and the report measures regret from the best value found over all runs of the result set.

The continuous test functions live on the unit cube (``x0 .. x{d-1}`` in ``[0, 1]``), rescaled
to their usual domains inside the function. Branin, Hartmann-3/6 and Ackley-5 are the functions
of ``benchmarks/problems.py``, with minima refined to full float
precision (L-BFGS-B + Nelder-Mead from the published minimisers; the rounded constants of
``problems.py`` would give negative regrets of ~1e-6). The grids (``GRIDS``: Branin and
Hartmann-3 on at most 512 points, ints and a categorical) take their minimum from enumerating
every point.
"""

from __future__ import annotations

import functools
import math
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import optuna

from benchmarks.problems import PROBLEMS as _CUBE

Params = dict[str, Any]


@dataclass(frozen=True)
class Problem:
    name: str
    description: str
    suggest: Callable[[optuna.Trial], Params]
    evaluate: Callable[[Params], float]
    minimum: float | None  # None: unknown (regret from the best value over all runs)
    optimum: Params | None = None  # a point where evaluate(optimum) == minimum
    kind: str = "synthetic"  # "synthetic" or "ml"
    dim: int = 0
    extra: dict = field(default_factory=dict)


# --------------------------------------------------------------------------- unit-cube functions
def _levy(u: np.ndarray) -> float:
    """Levy on [-10, 10]^d; minimum 0 at x = (1, ..., 1), i.e. u = 0.55."""
    w = 1.0 + (20.0 * u - 10.0 - 1.0) / 4.0
    head = math.sin(math.pi * w[0]) ** 2
    mid = np.sum((w[:-1] - 1.0) ** 2 * (1.0 + 10.0 * np.sin(math.pi * w[:-1] + 1.0) ** 2))
    tail = (w[-1] - 1.0) ** 2 * (1.0 + math.sin(2.0 * math.pi * w[-1]) ** 2)
    return float(head + mid + tail)


_ROSEN_HALF = 2.048


def _rosenbrock(u: np.ndarray) -> float:
    """Rosenbrock on [-2.048, 2.048]^d; minimum 0 at x = (1, ..., 1), u = 3.048 / 4.096."""
    x = 2.0 * _ROSEN_HALF * u - _ROSEN_HALF
    return float(np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2))


def _cube_problem(name: str, description: str, dim: int, f: Callable[[np.ndarray], float],
                  minimum: float, argmin: list[float]) -> Problem:
    names = [f"x{i}" for i in range(dim)]

    def suggest(trial: optuna.Trial) -> Params:
        return {n: trial.suggest_float(n, 0.0, 1.0) for n in names}

    def evaluate(params: Params) -> float:
        return f(np.array([params[n] for n in names], dtype=float))

    return Problem(name, description, suggest, evaluate, minimum,
                   dict(zip(names, argmin)), "synthetic", dim)


# ------------------------------------------------------------------- mixed int / categorical
# Four "branches" c; each has its own centre for (x0, x1), its own best integer k and an offset.
# f = offset[c] + 3 |x - centre[c]|^2 + 0.1 (2 - cos(6 pi (x0 - cx)) - cos(6 pi (x1 - cy)))
#     + 0.15 (log10(lr) + 2)^2 + 0.02 (k - kstar[c])^2
# Every term is >= 0 and all vanish only for c = "b", x = (0.7, 0.3), lr = 1e-2, k = 13, so the
# global minimum is 0 there; the other branches' minima are their offsets (0.3, 0.5, 0.8). The
# cosine term adds local minima in x, the integer's best value moves with the category, and the
# log-scaled float has its optimum inside the range.
_MIXED = {
    "a": (0.5, (0.2, 0.8), 4),
    "b": (0.0, (0.7, 0.3), 13),
    "c": (0.8, (0.5, 0.5), 8),
    "d": (0.3, (0.85, 0.85), 17),
}


def _mixed_suggest(trial: optuna.Trial) -> Params:
    return {
        "x0": trial.suggest_float("x0", 0.0, 1.0),
        "x1": trial.suggest_float("x1", 0.0, 1.0),
        "lr": trial.suggest_float("lr", 1e-4, 1.0, log=True),
        "k": trial.suggest_int("k", 1, 20),
        "c": trial.suggest_categorical("c", list(_MIXED)),
    }


def _mixed_evaluate(p: Params) -> float:
    offset, (cx, cy), kstar = _MIXED[p["c"]]
    dx, dy = p["x0"] - cx, p["x1"] - cy
    return float(
        offset
        + 3.0 * (dx * dx + dy * dy)
        + 0.1 * (2.0 - math.cos(6.0 * math.pi * dx) - math.cos(6.0 * math.pi * dy))
        + 0.15 * (math.log10(p["lr"]) + 2.0) ** 2
        + 0.02 * (p["k"] - kstar) ** 2
    )


# --------------------------------------------------------------------------- enumerable grids
# Test functions on a finite grid, every parameter an int or a categorical: the whole space has
# at most 512 points, so our samplers score every point of it (GP-UCB's maximiser, GP-TS's joint
# draw) instead of searching a continuum. Each grid's minimum is found by enumerating it.
_THIRDS = {"0": 0.0, "1/3": 1.0 / 3.0, "2/3": 2.0 / 3.0, "1": 1.0}  # a categorical's values


def _grid_problem(name: str, description: str, f: Callable[[np.ndarray], float],
                  levels: list[int], categorical: dict[str, float] | None = None) -> Problem:
    """``f`` on the unit cube at ``levels[i]`` equally spaced values of coordinate ``i`` (an int
    ``0 .. levels[i] - 1``), plus one last coordinate drawn from ``categorical`` (label ->
    value) if given."""
    names = [f"x{i}" for i in range(len(levels))]
    cat = dict(categorical or {})

    def suggest(trial: optuna.Trial) -> Params:
        p: Params = {n: trial.suggest_int(n, 0, k - 1) for n, k in zip(names, levels)}
        if cat:
            p["c"] = trial.suggest_categorical("c", list(cat))
        return p

    def evaluate(p: Params) -> float:
        u = [p[n] / (k - 1) for n, k in zip(names, levels)] + ([cat[p["c"]]] if cat else [])
        return f(np.array(u, dtype=float))

    points = [dict(zip(names, idx)) for idx in np.ndindex(*levels)]
    if cat:
        points = [{**q, "c": c} for q in points for c in cat]
    values = [evaluate(q) for q in points]
    best = int(np.argmin(values))
    return Problem(name, description, suggest, evaluate, float(values[best]), points[best],
                   "synthetic", len(levels) + bool(cat), {"grid": len(points)})


# --------------------------------------------------------------------------- scikit-learn tasks
# Both are deterministic: fixed folds (StratifiedKFold(shuffle=True, random_state=0)), fixed data.
# The objective is the cross-validated error rate 1 - accuracy (minimised); the optimum is unknown.
@functools.lru_cache(maxsize=None)
def _data(name: str) -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import load_breast_cancer, load_digits

    if name == "breast_cancer":
        return load_breast_cancer(return_X_y=True)
    X, y = load_digits(return_X_y=True)
    idx = np.random.default_rng(0).permutation(len(y))[:800]  # a fixed 800-image subset
    return X[idx] / 16.0, y[idx]


def _cv_error(model, data: str, folds: int) -> float:
    from sklearn.model_selection import StratifiedKFold, cross_val_score

    X, y = _data(data)
    cv = StratifiedKFold(n_splits=folds, shuffle=True, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(1.0 - np.mean(cross_val_score(model, X, y, cv=cv)))


def _svc_cancer_suggest(trial: optuna.Trial) -> Params:
    return {
        "C": trial.suggest_float("C", 1e-2, 1e3, log=True),
        "gamma": trial.suggest_float("gamma", 1e-5, 1e1, log=True),
    }


def _svc_cancer_evaluate(p: Params) -> float:
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    model = make_pipeline(StandardScaler(), SVC(C=p["C"], gamma=p["gamma"]))
    return _cv_error(model, "breast_cancer", 5)


def _svc_digits_suggest(trial: optuna.Trial) -> Params:
    return {
        "kernel": trial.suggest_categorical("kernel", ["rbf", "poly", "sigmoid"]),
        "C": trial.suggest_float("C", 1e-2, 1e3, log=True),
        "gamma": trial.suggest_float("gamma", 1e-5, 1.0, log=True),
        "degree": trial.suggest_int("degree", 2, 5),  # used by the poly kernel only
    }


def _svc_digits_evaluate(p: Params) -> float:
    from sklearn.svm import SVC

    model = SVC(kernel=p["kernel"], C=p["C"], gamma=p["gamma"], degree=p["degree"])
    return _cv_error(model, "digits", 3)


# --------------------------------------------------------------------------- registry
_BRANIN_ARGMIN = [(5.0 - math.pi) / 15.0, 12.275 / 15.0]
_H3_ARGMIN = [0.11458888230889544, 0.5556488941434317, 0.852546985649276]
_H6_ARGMIN = [0.20168950308154784, 0.15001069256125274, 0.47687397826899963,
              0.2753324293380429, 0.31165161699824356, 0.6573005342028397]

PROBLEMS: dict[str, Problem] = {
    p.name: p
    for p in [
        _cube_problem("branin", "Branin, d=2 (unit square)", 2, _CUBE["branin"].f,
                      5.0 / (4.0 * math.pi), _BRANIN_ARGMIN),
        _cube_problem("hartmann3", "Hartmann-3, d=3", 3, _CUBE["hartmann3"].f,
                      -3.8627797873326597, _H3_ARGMIN),
        _cube_problem("hartmann6", "Hartmann-6, d=6", 6, _CUBE["hartmann6"].f,
                      -3.322368011415514, _H6_ARGMIN),
        _cube_problem("ackley5", "Ackley on [-2, 2]^5 (optimum at the centre)", 5,
                      _CUBE["ackley5"].f, 0.0, [0.5] * 5),
        _cube_problem("levy4", "Levy on [-10, 10]^4", 4, _levy, 0.0, [0.55] * 4),
        _cube_problem("rosenbrock4", "Rosenbrock on [-2.048, 2.048]^4", 4, _rosenbrock, 0.0,
                      [(1.0 + _ROSEN_HALF) / (2.0 * _ROSEN_HALF)] * 4),
        Problem("mixed", "2 floats + log float + int + 4-way categorical (synthetic)",
                _mixed_suggest, _mixed_evaluate, 0.0,
                {"x0": 0.7, "x1": 0.3, "lr": 1e-2, "k": 13, "c": "b"}, "synthetic", 5),
        Problem("svc-cancer", "SVC (RBF, standardised) on breast_cancer: log C, log gamma; "
                "5-fold CV error", _svc_cancer_suggest, _svc_cancer_evaluate, None, None, "ml", 2),
        Problem("svc-digits", "SVC on 800 digits: kernel (rbf/poly/sigmoid), log C, log gamma, "
                "degree; 3-fold CV error", _svc_digits_suggest, _svc_digits_evaluate, None, None,
                "ml", 4),
        _grid_problem("branin-grid", "Branin on a 20 x 25 grid (500 points)", _CUBE["branin"].f,
                      [20, 25]),
        _grid_problem("hartmann3-grid", "Hartmann-3 on an 8^3 grid (512 points)",
                      _CUBE["hartmann3"].f, [8, 8, 8]),
        _grid_problem("hartmann3-cat-grid", "Hartmann-3 on an 8 x 8 grid x a 4-way categorical "
                      "(256 points)", _CUBE["hartmann3"].f, [8, 8], _THIRDS),
    ]
}
GRIDS = [name for name, p in PROBLEMS.items() if "grid" in p.extra]


def get_problem(name: str) -> Problem:
    try:
        return PROBLEMS[name]
    except KeyError:
        raise KeyError(f"unknown problem {name!r}; known: {', '.join(PROBLEMS)}") from None


def problem_with_minimum(name: str) -> Problem:
    """:func:`get_problem`, for a benchmark that scores regret: a ``ValueError`` naming the
    problem if it is unknown or its minimum is not known (the scikit-learn tasks)."""
    try:
        problem = get_problem(name)
    except KeyError as e:
        raise ValueError(e.args[0]) from None
    if problem.minimum is None:
        raise ValueError(f"--problem {name!r} has no known minimum to score regret; choose a "
                         "test function")
    return problem
