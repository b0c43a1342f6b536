"""The objective-shapes problems (issue 47): the values and spaces users produce.

Every problem is a :class:`benchmarks.harness.problems.Problem` (define-by-run ``suggest``, a
deterministic ``evaluate`` of the suggested params, minimised, with a known ``minimum`` and a
point ``optimum`` reaching it), gathered in :data:`ALL`. ``extra`` holds ``shapes`` (the issue's
case the problem stands for: ``penalty``, ``plateau``, ``branches``, ``dims``, ``spaces``,
``scales``) and the case's parameters (``P``, ``scale``, ...). Continuous parameters are
``x0 .. x{d-1}`` in ``[0, 1]``, rescaled inside the function.

All functions are the suite's own (the issue: "we check these on functions and seeds of our
own"); the optima are placed off the centre of the box and off the lattice of the start-up
designs. Hartmann-6 (case 4, multiple basins) is the harness's ``hartmann6``.

The suite's peers ``CMA-ES`` (``optuna.samplers.CmaEsSampler(seed=seed)``; needs the
``cmaes`` package) and ``TPE-group`` (``TPESampler(seed=seed, multivariate=True, group=True)``,
the TPE the branches check of issue 47 names) are the harness's (``benchmarks/harness/peers.py``).
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
import optuna

from benchmarks.harness.problems import PROBLEMS, Problem

Params = dict[str, Any]
GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0


def _spread(d: int, lo: float, hi: float) -> np.ndarray:
    """``d`` deterministic, well-spread offsets in ``[lo, hi]`` (golden-ratio sequence): the
    coordinates of a shifted optimum, none at the centre."""
    return lo + (hi - lo) * ((np.arange(1, d + 1) * GOLDEN) % 1.0)


def _near_faces(d: int) -> np.ndarray:
    """``d`` deterministic offsets in ``[0.05, 0.15]`` or ``[0.85, 0.95]`` (alternating): an
    optimum far from the centre in every coordinate, where a design that starts at the centre
    gains nothing (the control of ``TrustRegion(start_at_centre=True)``)."""
    v = _spread(d, 0.05, 0.15)
    return np.where(np.arange(d) % 2 == 0, v, 1.0 - v)


def _names(d: int) -> list[str]:
    return [f"x{i}" for i in range(d)]


def _cube(name: str, description: str, d: int, f: Callable[[np.ndarray], float],
          minimum: float, argmin: np.ndarray | list[float], case: str, **extra: Any) -> Problem:
    names = _names(d)

    def suggest(trial: optuna.Trial) -> Params:
        return {n: trial.suggest_float(n, 0.0, 1.0) for n in names}

    def evaluate(params: Params) -> float:
        return float(f(np.array([params[n] for n in names], dtype=float)))

    optimum = {n: float(v) for n, v in zip(names, argmin)}
    return Problem(name, description, suggest, evaluate, float(minimum), optimum, "synthetic", d,
                   {"shapes": case, **extra})


# =========================================================================== 1. penalty idiom
def irwin_hall_sf(c: float, d: int) -> float:
    """P(U_1 + ... + U_d > c) for independent uniforms on [0, 1] (the Irwin-Hall law)."""
    cdf = sum((-1) ** k * math.comb(d, k) * (c - k) ** d for k in range(int(math.floor(c)) + 1))
    return 1.0 - cdf / math.factorial(d)


def penalty_limit(d: int, fraction: float = 1.0 / 3.0) -> float:
    """The ``c`` for which the invalid region ``x0 + ... + x{d-1} > c`` is ``fraction`` of the
    unit cube (bisection on :func:`irwin_hall_sf`; in 2-D ``2 - sqrt(2 fraction)``)."""
    lo, hi = d / 2.0, float(d)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if irwin_hall_sf(mid, d) > fraction else (lo, mid)
    return 0.5 * (lo + hi)


PENALTIES = {"inf": math.inf, "1e3": 1e3, "1e6": 1e6, "1e12": 1e12}
PENALTY_CENTRES = {2: [0.45, 0.60], 4: [0.45, 0.60, 0.50, 0.55]}
"""The minimiser of each dimension's base function: inside the valid region, 0.09 (2-D) and
0.075 (4-D) from the region's boundary, where a penalty's cliff bends a model most."""


def penalty_base(u: np.ndarray, a: np.ndarray) -> float:
    """The smooth objective under the penalty: ``sum_i (u_i - a_i)^2 + 0.05 (1 - cos(4 pi (u_i -
    a_i)))``, minimum 0 at ``u = a``, a shallow local minimum 0.5 away in each coordinate; values
    0-0.7 in 2-D."""
    z = u - a
    return float(np.sum(z * z + 0.05 * (1.0 - np.cos(4.0 * math.pi * z))))


def _penalty(d: int, label: str) -> Problem:
    P = PENALTIES[label]
    a = np.array(PENALTY_CENTRES[d])
    limit = penalty_limit(d)

    def f(u: np.ndarray) -> float:
        return P if float(np.sum(u)) > limit else penalty_base(u, a)

    region = "x0 + x1" if d == 2 else f"x0 + ... + x{d - 1}"
    desc = (f"case 1, the penalty idiom: a smooth {d}-D objective (min 0) whose invalid region "
            f"{region} > {limit:.4f} (1/3 of the box) returns P = {label}"
            + (" (the baseline: inf is an invalid trial Optuna keeps as COMPLETE)" if P == math.inf
               else ""))
    return _cube(f"penalty{d}d-{label}", desc, d, f, 0.0, a, "penalty", P=P, P_label=label,
                 limit=limit, family=f"penalty{d}d")


# =========================================================================== 2. plateau
PLATEAU_LEVEL = 0.72
PLATEAU_CENTRE = [0.70, 0.25, 0.60]
PLATEAU_RADIUS = 0.36


def plateau(u: np.ndarray) -> float:
    """A quantised bowl (steps of 0.01, like an error rate on 100 validation points) of radius
    ``PLATEAU_RADIUS`` around ``PLATEAU_CENTRE``, and the constant ``PLATEAU_LEVEL`` everywhere
    else (~80 % of the cube, like a decision tree's one-leaf stump plateau)."""
    r2 = float(np.sum((u - np.array(PLATEAU_CENTRE)) ** 2)) / PLATEAU_RADIUS ** 2
    return round(100.0 * PLATEAU_LEVEL * min(1.0, r2)) / 100.0


# =========================================================================== 3. branches
def _branch_problem(name: str, description: str, branches: dict[str, tuple[list, Callable]],
                    optimum: Params, span: str) -> Problem:
    """A define-by-run space: ``branch`` (categorical) picks one of ``branches``, each with its
    own parameters ``(name, kind, lo, hi)`` (``kind`` ``"float"`` or ``"int"``) and function."""

    def suggest(trial: optuna.Trial) -> Params:
        b = trial.suggest_categorical("branch", list(branches))
        p: Params = {"branch": b}
        for pname, kind, lo, hi in branches[b][0]:
            p[pname] = (trial.suggest_float(pname, lo, hi) if kind == "float"
                        else trial.suggest_int(pname, lo, hi))
        return p

    def evaluate(p: Params) -> float:
        return float(branches[p["branch"]][1](p))

    dim = 1 + max(len(spec) for spec, _ in branches.values())
    return Problem(name, description, suggest, evaluate, 0.0, optimum, "synthetic", dim,
                   {"shapes": "branches", "span": span})


_WIDE = {
    "a": ([("a0", "float", 0.0, 1.0), ("a1", "float", 0.0, 1.0)],
          lambda p: 0.5 + (p["a0"] - 0.3) ** 2 + (p["a1"] - 0.6) ** 2),
    "b": ([("b0", "float", 0.0, 1.0), ("b1", "int", 0, 9)],
          lambda p: 0.4 + (p["b0"] - 0.7) ** 2 + 0.01 * (p["b1"] - 3) ** 2),
    "wide": ([("w0", "float", 0.0, 1.0), ("w1", "float", 0.0, 1.0), ("w2", "float", 0.0, 1.0)],
             lambda p: 75.0 * ((p["w0"] - 0.25) ** 2 + (p["w1"] - 0.65) ** 2
                               + (p["w2"] - 0.4) ** 2)),
}
_COSTLY = {
    "a": ([("a0", "float", 0.0, 1.0), ("a1", "float", 0.0, 1.0)],
          lambda p: ((p["a0"] - 0.3) ** 2 + (p["a1"] - 0.6) ** 2
                     + 0.1 * (2.0 - math.cos(6.0 * math.pi * (p["a0"] - 0.3))
                              - math.cos(6.0 * math.pi * (p["a1"] - 0.6))))),
    "b": ([("b0", "float", 0.0, 1.0), ("b1", "int", 0, 9)],
          lambda p: 0.3 + 1.5 * (p["b0"] - 0.7) ** 2 + 0.02 * (p["b1"] - 3) ** 2),
    "costly": ([(f"k{i}", "float", 0.0, 1.0) for i in range(4)],
               lambda p: 20.0 + 15.0 * sum((p[f"k{i}"] - 0.5) ** 2 for i in range(4))),
}


# =========================================================================== 4. many dimensions
def ellipsoid(u: np.ndarray, a: np.ndarray) -> float:
    """``sum_i w_i (u_i - a_i)^2`` with weights ``w_i`` log-spaced from 1 to 10; minimum 0 at a."""
    w = np.logspace(0.0, 1.0, u.size)
    return float(np.sum(w * (u - a) ** 2))


ACKLEY_WIDTH = 65.536  # the usual [-32.768, 32.768] box, shifted so the optimum is off-centre


def ackley(u: np.ndarray, o: np.ndarray) -> float:
    """Ackley of ``x = 65.536 (u - o)``, written so that it is exactly 0 at ``u = o``."""
    x = ACKLEY_WIDTH * (u - o)
    return float(20.0 * (1.0 - math.exp(-0.2 * math.sqrt(float(np.mean(x * x)))))
                 + (math.e - math.exp(float(np.mean(np.cos(2.0 * math.pi * x))))))


ROSEN_HALF = 2.048


def rosenbrock(u: np.ndarray) -> float:
    """Rosenbrock on [-2.048, 2.048]^d (minimum 0 at x = 1, u = 3.048 / 4.096)."""
    x = 2.0 * ROSEN_HALF * u - ROSEN_HALF
    return float(np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2))


STYBLINSKI_X = -2.903534027771178  # the 1-D minimiser of x^4 - 16 x^2 + 5 x


def styblinski_tang(u: np.ndarray) -> float:
    """Styblinski-Tang on [-5, 5]^d: ``0.5 sum_i (x^4 - 16 x^2 + 5 x)``, a double well per
    coordinate (2^d local minima; the other well's floor is 14.1 higher per coordinate)."""
    x = 10.0 * u - 5.0
    return float(0.5 * np.sum(x ** 4 - 16.0 * x ** 2 + 5.0 * x))


# =========================================================================== 5. int / categorical
INT_TARGET = {"k0": 12, "k1": 37, "k2": 25, "k3": 41, "k4": 37}


def _int_suggest(trial: optuna.Trial) -> Params:
    p = {f"k{i}": trial.suggest_int(f"k{i}", 0, 50) for i in range(4)}
    p["k4"] = trial.suggest_int("k4", 1, 1000, log=True)
    return p


def int_objective(p: Params) -> float:
    """Integers only: two quadratic coordinates, one absolute value, a coupled pair (``k3 - k0``)
    and a log-scaled integer; every term is >= 0 and all vanish at ``INT_TARGET`` only."""
    t = INT_TARGET
    return float((p["k0"] - t["k0"]) ** 2 / 100.0 + (p["k1"] - t["k1"]) ** 2 / 100.0
                 + abs(p["k2"] - t["k2"]) / 10.0
                 + (p["k3"] - p["k0"] - (t["k3"] - t["k0"])) ** 2 / 50.0
                 + 2.0 * (math.log10(p["k4"]) - math.log10(t["k4"])) ** 2)


CAT_LABELS = ["a", "b", "c", "d", "e"]
CAT_DIM = 6


def _cat_tables() -> tuple[list[str], np.ndarray, np.ndarray]:
    """(optimal label per variable, unary costs (CAT_DIM x 5), pair costs of neighbours
    ((CAT_DIM - 1) x 5 x 5)): fixed random tables (seed 47), zero at the optimum."""
    rng = np.random.default_rng(47)
    k = len(CAT_LABELS)
    best = rng.integers(0, k, size=CAT_DIM)
    unary = rng.uniform(0.2, 1.0, size=(CAT_DIM, k))
    unary[np.arange(CAT_DIM), best] = 0.0
    pair = rng.uniform(0.0, 0.5, size=(CAT_DIM - 1, k, k))
    pair[np.arange(CAT_DIM - 1), best[:-1], best[1:]] = 0.0
    return [CAT_LABELS[i] for i in best], unary, pair


CAT_OPTIMUM, _CAT_UNARY, _CAT_PAIR = _cat_tables()


def _cat_suggest(trial: optuna.Trial) -> Params:
    return {f"c{i}": trial.suggest_categorical(f"c{i}", CAT_LABELS) for i in range(CAT_DIM)}


def cat_objective(p: Params) -> float:
    """Categoricals only (5 labels x 6 variables, 15,625 points): a cost per label and a cost per
    pair of neighbouring labels, all >= 0, zero at ``CAT_OPTIMUM`` only."""
    idx = [CAT_LABELS.index(p[f"c{i}"]) for i in range(CAT_DIM)]
    return float(sum(_CAT_UNARY[i, j] for i, j in enumerate(idx))
                 + sum(_CAT_PAIR[i, idx[i], idx[i + 1]] for i in range(CAT_DIM - 1)))


# =========================================================================== 6. value scales
SCALES = {"1e-300": 1e-300, "1e-8": 1e-8, "1": 1.0, "1e8": 1e8, "1e250": 1e250}
OFFSETS = {"1e6": 1e6}


def _scaled(h3: Problem, label: str, scale: float, offset: float) -> Problem:
    name = f"h3+{label}" if offset else f"h3x{label}"
    what = f"plus {label}" if offset else f"times {label}"

    def evaluate(params: Params) -> float:
        return scale * h3.evaluate(params) + offset

    desc = (f"case 5/6, value scales: Hartmann-3 {what} (the optimum of h3x1; regret / scale "
            "compares across the family)")
    return Problem(name, desc, h3.suggest, evaluate, scale * h3.minimum + offset,
                   dict(h3.optimum), "synthetic", 3,
                   {"shapes": "scales", "scale": scale, "offset": offset})


# =========================================================================== registry
def _problems() -> list[Problem]:
    out = [_penalty(d, label) for d in (2, 4) for label in PENALTIES]
    out.append(_cube(
        "plateau3d", "case 2, a plateau of tied values: a bowl quantised to 0.01 in a ball "
        f"(radius {PLATEAU_RADIUS}) and the constant {PLATEAU_LEVEL} on the rest (~80 %) of "
        "the 3-D cube", 3, plateau, 0.0, PLATEAU_CENTRE, "plateau", level=PLATEAU_LEVEL))
    out.append(_branch_problem(
        "branches-wide", "case 3, branches of very different scales: 3 branches (2, 2 and 3 "
        "params, one int); the 'wide' branch spans 0-101 (the others 0.4-1.35) and holds the "
        "global minimum 0", _WIDE, {"branch": "wide", "w0": 0.25, "w1": 0.65, "w2": 0.4}, "wide"))
    out.append(_branch_problem(
        "branches-costly", "case 3, a costly branch: 3 branches; 'costly' (4 params) returns "
        "20-35 everywhere, the others 0-1.8 (global minimum 0 in branch 'a'): once its level is "
        "known, each visit only costs", _COSTLY, {"branch": "a", "a0": 0.3, "a1": 0.6},
        "costly"))
    a30 = _spread(30, 0.2, 0.8)
    out.append(_cube("ellipsoid30", "case 2, many dimensions: a shifted 30-D ellipsoid (weights "
                     "1-10, optimum off-centre)", 30, lambda u: ellipsoid(u, a30), 0.0, a30,
                     "dims"))
    o20 = _spread(20, 0.35, 0.65)
    out.append(_cube("ackley20", "case 2, many dimensions: 20-D Ackley, the usual box width, "
                     "optimum shifted off the centre", 20, lambda u: ackley(u, o20), 0.0, o20,
                     "dims"))
    e30, e20 = _near_faces(30), _near_faces(20)
    out.append(_cube("ellipsoid30-faces", "control of the centre start: ellipsoid30 with its "
                     "optimum near the faces (offsets 0.05-0.15 or 0.85-0.95)", 30,
                     lambda u: ellipsoid(u, e30), 0.0, e30, "dims"))
    h30 = np.where(np.arange(30) < 15, e30, a30)
    out.append(_cube("ellipsoid30-half", "control of the centre start: ellipsoid30 with half "
                     "of its optimum's coordinates near the faces, half as in ellipsoid30", 30,
                     lambda u: ellipsoid(u, h30), 0.0, h30, "dims"))
    out.append(_cube("ackley20-faces", "control of the centre start: ackley20 with its optimum "
                     "near the faces (offsets 0.05-0.15 or 0.85-0.95)", 20,
                     lambda u: ackley(u, e20), 0.0, e20, "dims"))
    u_rosen = (1.0 + ROSEN_HALF) / (2.0 * ROSEN_HALF)
    out.append(_cube("rosenbrock20", "case 2, many dimensions: 20-D Rosenbrock on "
                     "[-2.048, 2.048]^20", 20, rosenbrock, 0.0, [u_rosen] * 20, "dims"))
    u_st = (STYBLINSKI_X + 5.0) / 10.0
    out.append(_cube("styblinski50", "case 2, many dimensions: 50-D Styblinski-Tang (a double "
                     "well per coordinate)", 50, styblinski_tang,
                     styblinski_tang(np.full(50, u_st)), [u_st] * 50, "dims"))
    out.append(Problem("int5", "case 5/6, integers only: 4 ints in [0, 50] (one coupled pair) "
                       "and a log-scaled int in [1, 1000]", _int_suggest, int_objective, 0.0,
                       dict(INT_TARGET), "synthetic", 5, {"shapes": "spaces"}))
    out.append(Problem("cat6", "case 5/6, categoricals only: 6 variables x 5 labels, unary and "
                       "neighbour-pair costs (15,625 points)", _cat_suggest, cat_objective, 0.0,
                       {f"c{i}": v for i, v in enumerate(CAT_OPTIMUM)}, "synthetic", CAT_DIM,
                       {"shapes": "spaces"}))
    h3 = PROBLEMS["hartmann3"]
    out += [_scaled(h3, label, s, 0.0) for label, s in SCALES.items()]
    out += [_scaled(h3, label, 1.0, o) for label, o in OFFSETS.items()]
    return out


SHAPES: dict[str, Problem] = {p.name: p for p in _problems()}
"""The suite's own problems (``hartmann6``, case 4, is the harness's)."""
ALL: dict[str, Problem] = {**SHAPES, "hartmann6": PROBLEMS["hartmann6"]}
"""Every problem of the suite."""
