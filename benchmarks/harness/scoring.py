"""How a suite's runs are scored: one score, higher is better, per run and trial.

Every suite scores a run after ``t`` trials by one of three rules (``Scoring`` of ``suite.py``), so
that one report format (``report.py``) serves them all:

``random-runs`` (the in-house suites: ``hpo``, ``quick``, ``shapes``)
    ``100 (r(t) - best(t)) / (r(t) - f*)``: ``f*`` the problem's known minimum, or else the
    lowest value any run of the result set found; ``r(t)`` the mean best-so-far of the result
    set's ``Random`` runs after ``t`` trials. 100 = ``f*``, 0 = random search at the same
    budget, negative = worse than random.
``pool`` (Bayesmark, users' objectives)
    The same formula per (problem, objective seed) with ``opt_s`` (the lowest value of that
    seed's runs and of its random-search pool) for ``f*`` and ``rand_s(t)``, random search's
    exact expected best of ``t`` draws from the pool (``pool.py``; :func:`expected_min`), for
    ``r(t)``.
``targets`` (COCO's bbob)
    COCO's measure: the percentage of the 51 targets ``10^2, 10^1.8, ..., 10^-8`` on the
    regret ``best(t) - f_opt`` that the run has reached by ``t`` (averaged over runs: the
    ECDF of (run, target) pairs at that budget).

A run's score is floored at ``floor`` = -100 for the first two rules (where random search comes
close to ``f*`` the denominator is tiny, and one poor run would swing a mean by thousands of
points; Bayesmark clips for the same reason); where ``r(t) = f*`` a run at ``f*`` scores 0 and
any other run the floor. Score at ``T``: the mean over seeds of the runs' scores after ``T``
trials; anytime at ``T``: the mean over seeds of each run's mean score over ``t = 5 .. T``.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .suite import Scoring, Suite

RULES = {
    "random-runs": "a run's score after t trials is 100 (r(t) - best(t)) / (r(t) - f*), with "
                   "f* the problem's known minimum or else the lowest value any run found, "
                   "r(t) the mean best-so-far of the Random runs after t trials (100 = f*, 0 = "
                   "random search at the same budget), floored at -100.",
    "pool": "a run's score after t trials is 100 (rand_s(t) - best(t)) / (rand_s(t) - opt_s) "
            "per (problem, objective seed): opt_s the lowest value of that seed's runs and of "
            "its random-search pool, rand_s(t) random search's exact expected best of t draws "
            "from the pool (100 = the best value known, 0 = random search at the same budget), "
            "floored at -100.",
    "targets": "COCO's measure: the percentage of the 51 targets 10^2, 10^1.8, ..., 10^-8 on "
               "the regret best(t) - f_opt that a run has reached after t trials; averaged over "
               "runs, the ECDF of (run, target) pairs at that budget.",
}
AVERAGING = ("Score at T: the mean over seeds of the runs' scores after T trials; anytime: the "
             "mean over seeds of each run's mean score over t = 5 .. T; a half's score: the "
             "mean over the problems every sampler shown ran.")
RANDOM = "Random"
ANYTIME_FROM = 5
TARGETS = 10.0 ** np.linspace(2.0, -8.0, 51)
"""COCO's 51 targets on the regret, 10^2 down to 10^-8 in steps of 10^0.2."""


@dataclass
class Cell:
    """The runs of one (problem, sampler) at one scored budget."""

    score: float
    score_se: float
    anytime: float
    anytime_se: float
    runs: int
    by_seed: dict[int, tuple[float, float]] = field(default_factory=dict)
    """(score at T, anytime at T) of each seed's run: paired differences use them."""
    T: int = 0
    curve: np.ndarray | None = None
    """The mean score over the runs after t = 1 .. T trials (the report's figure)."""


def se(x: np.ndarray) -> float:
    x = x[np.isfinite(x)]
    return float(np.std(x, ddof=1) / math.sqrt(len(x))) if len(x) > 1 else float("nan")


def nanmean(x: np.ndarray, axis: int | None = None):
    """nanmean without the warning of an all-NaN slice (an undefined score stays NaN)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(x, axis=axis)


def best_so_far(runs: list[dict], T: int) -> np.ndarray:
    """(runs x T) best value after each trial."""
    return np.minimum.accumulate(np.array([r["values"][:T] for r in runs], float), axis=1)


def normalised(R: np.ndarray, B: np.ndarray, f_star: float, floor: float | None) -> np.ndarray:
    """Scores of the best-so-far curves ``B`` (runs x T) against random's curve ``R``."""
    gap = R - f_star
    with np.errstate(divide="ignore", invalid="ignore"):
        S = np.where(gap > 0, 100.0 * (R - B) / np.where(gap > 0, gap, 1.0),
                     np.where(B <= f_star, 0.0, -np.inf))
    return np.maximum(S, floor) if floor is not None else np.where(np.isinf(S), np.nan, S)


def target_fraction(B: np.ndarray, f_opt: float) -> np.ndarray:
    """100 x the fraction of :data:`TARGETS` that the best-so-far curves ``B`` have reached."""
    regret = B - f_opt
    return 100.0 * (regret[..., None] <= TARGETS).mean(axis=-1)


def min_rank_probabilities(n: int, t: int) -> list[Fraction]:
    """P(the minimum of ``t`` of ``n`` ranked values drawn without replacement is the k-th
    smallest), k = 1..n: ``C(n - k, t - 1) / C(n, t)``, exactly."""
    if not 1 <= t <= n:
        raise ValueError(f"t = {t} draws from a pool of {n}")
    total = math.comb(n, t)
    return [Fraction(math.comb(n - k, t - 1), total) for k in range(1, n + 1)]


def expected_min(values: list[float], t: int) -> float:
    """The expected minimum of ``t`` of ``values`` drawn without replacement (inf if a draw of
    ``t`` can hold only failed, inf, evaluations)."""
    v = sorted(values)
    out = 0.0
    for p, x in zip(min_rank_probabilities(len(v), t), v):
        if p:
            out += float(p) * x
    return out


def expected_min_curve(values: list[float], T: int) -> np.ndarray:
    """``expected_min(values, t)`` for t = 1..T."""
    return np.array([expected_min(values, t) for t in range(1, T + 1)])


def _cell(runs: list[dict], S: np.ndarray, T: int) -> Cell:
    at_T = S[:, -1]
    anytime = nanmean(S[:, ANYTIME_FROM - 1:], axis=1) if T >= ANYTIME_FROM else at_T
    return Cell(float(nanmean(at_T)), se(at_T), float(nanmean(anytime)), se(anytime), len(runs),
                {int(r["seed"]): (float(x), float(y)) for r, x, y in zip(runs, at_T, anytime)},
                T, nanmean(S, axis=0))


def _labels(scoring: Scoring, problem: str, runs: list[dict]) -> list[tuple[str, int]]:
    longest = max(len(r["values"]) for r in runs)
    return scoring.budgets(problem, longest)


@dataclass
class ProblemInfo:
    """What a problem's scores were measured against (the report's problem table)."""

    f_star: dict[int, float]  # objective seed -> f* (opt_s); one entry under 0 if unseeded
    rand: dict[str, dict[int, float]]  # label -> seed -> r(T)
    pool_best: int = 0  # seeds whose f* the pool holds
    pool_sizes: tuple[int, ...] = ()


def problem_cells(suite: "Suite", problem: str, runs: list[dict],
                  pools: dict[int, list[float]] | None = None
                  ) -> tuple[dict[tuple[str, str], Cell], ProblemInfo]:
    """Cells per (sampler, label) of one problem's runs, and what they were measured against.
    ``pools``: objective seed -> the random-search pool's values (kind ``pool``; a seed without
    a pool, or with one shorter than T, is not scored at T)."""
    scoring = suite.scoring
    cells: dict[tuple[str, str], Cell] = {}
    labels = _labels(scoring, problem, runs)
    if scoring.kind == "targets":
        f_opt = runs[0]["minimum"]
        info = ProblemInfo({0: f_opt}, {})
        for label, T in labels:
            by: dict[str, list[dict]] = {}
            for r in runs:
                if len(r["values"]) >= T:
                    by.setdefault(r["sampler"], []).append(r)
            for s, rs in by.items():
                cells[(s, label)] = _cell(rs, target_fraction(best_so_far(rs, T), f_opt), T)
        return cells, info
    if scoring.kind == "random-runs":
        known = [r["minimum"] for r in runs if r.get("minimum") is not None]
        f_star = float(known[0]) if known else min(min(r["values"]) for r in runs)
        info = ProblemInfo({0: f_star}, {})
        for label, T in labels:
            rand = [r for r in runs if r["sampler"] == RANDOM and len(r["values"]) >= T]
            if not rand:
                continue
            R = best_so_far(rand, T).mean(axis=0)
            info.rand[label] = {0: float(R[-1])}
            by = {}
            for r in runs:
                if len(r["values"]) >= T:
                    by.setdefault(r["sampler"], []).append(r)
            for s, rs in by.items():
                cells[(s, label)] = _cell(rs, normalised(R, best_so_far(rs, T), f_star,
                                                         scoring.floor), T)
        return cells, info
    pools = pools or {}
    by_seed: dict[int, list[dict]] = {}
    for r in runs:
        by_seed.setdefault(suite.objective_seed(r["seed"]), []).append(r)
    info = ProblemInfo({}, {}, 0, tuple(sorted({len(v) for v in pools.values()})))
    for oseed, rs in by_seed.items():
        if oseed in pools:
            info.f_star[oseed] = min([min(r["values"]) for r in rs] + list(pools[oseed]))
            info.pool_best += min(pools[oseed]) <= info.f_star[oseed]
    for label, T in labels:
        per: dict[str, list[tuple[dict, float, float]]] = {}
        curves: dict[str, list[np.ndarray]] = {}
        for oseed, rs in by_seed.items():
            values = pools.get(oseed)
            rs = [r for r in rs if len(r["values"]) >= T]
            if values is None or len(values) < T or not rs:
                continue
            rand = expected_min_curve(values, T)
            info.rand.setdefault(label, {})[oseed] = float(rand[-1])
            S = normalised(rand, best_so_far(rs, T), info.f_star[oseed], scoring.floor)
            anytime = nanmean(S[:, ANYTIME_FROM - 1:], axis=1) if T >= ANYTIME_FROM else S[:, -1]
            for r, row, at_T, any_T in zip(rs, S, S[:, -1], anytime):
                per.setdefault(r["sampler"], []).append((r, float(at_T), float(any_T)))
                curves.setdefault(r["sampler"], []).append(row)
        for s, items in per.items():
            at_T = np.array([x[1] for x in items])
            any_T = np.array([x[2] for x in items])
            cells[(s, label)] = Cell(float(nanmean(at_T)), se(at_T), float(nanmean(any_T)),
                                     se(any_T), len(items),
                                     dict(sorted((int(r["seed"]), (a, b)) for r, a, b in items)),
                                     T, nanmean(np.array(curves[s]), axis=0))
    return cells, info


def paired(cells: dict[str, dict], a: str, b: str, label: str, what: str = "score"
           ) -> tuple[float, float, int, int]:
    """Suite difference ``b - a`` (score or anytime at ``label``) over the problems both ran,
    from the seeds both ran: (mean over problems of the per-problem mean difference, its
    standard error, problems, seed pairs). The error is that of the per-seed differences, so
    what the two runs of a seed share (the problem's difficulty; for two variants of one
    sampler, the seed's start-up design) cancels: it is the error to judge a variant against
    its default by."""
    i = 0 if what == "score" else 1
    means, variances, n_pairs = [], [], 0
    for c in cells.values():
        if (a, label) not in c or (b, label) not in c:
            continue
        sa, sb = c[(a, label)].by_seed, c[(b, label)].by_seed
        d = np.array([sb[k][i] - sa[k][i] for k in sorted(set(sa) & set(sb))], float)
        d = d[np.isfinite(d)]
        if not d.size:
            continue
        means.append(float(d.mean()))
        variances.append(float(d.var(ddof=1) / d.size) if d.size > 1 else float("nan"))
        n_pairs += d.size
    if not means:
        return float("nan"), float("nan"), 0, 0
    if len(means) > 1 and all(v != v for v in variances):
        # one seed per problem: the error over problems of the per-problem differences
        return (float(np.mean(means)), float(np.std(means, ddof=1) / math.sqrt(len(means))),
                len(means), n_pairs)
    return (float(np.mean(means)), math.sqrt(sum(variances)) / len(means), len(means), n_pairs)


def means(cells: dict[str, dict], samplers: list[str], label: str
          ) -> tuple[list[str], dict[str, tuple[float, float, float, float]]]:
    """Problems every sampler of ``samplers`` ran at ``label``, and per sampler (score, se,
    anytime, se) means over them."""
    common = [p for p, c in cells.items() if all((s, label) in c for s in samplers)]
    out = {}
    for s in samplers:
        cs = [cells[p][(s, label)] for p in common]
        if not cs:
            continue
        n = len(cs)
        out[s] = (float(np.mean([c.score for c in cs])),  # a NaN error (1 seed) stays NaN
                  math.sqrt(sum(c.score_se ** 2 for c in cs)) / n,
                  float(np.mean([c.anytime for c in cs])),
                  math.sqrt(sum(c.anytime_se ** 2 for c in cs)) / n)
    return common, out
