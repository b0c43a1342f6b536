"""Suite lists of the objective-shapes suite: groups of problems, their trial budgets, seeds and
samplers, and the (problem, sampler, seed, budget) tasks they make.

Budgets follow issue 47: penalty 30-40 trials (40), 30-D 40, 20-D 80, branches ~60, Hartmann-6
100 trials x 40 seeds; the other groups 40 (50-D: 80, as 20-D). ``full`` is what the issue's
"What must hold" checks are judged on; ``quick`` looks at every case once (one or two problems
each, 3 seeds, shorter budgets).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from benchmarks.harness.samplers import OURS
from benchmarks.harness.suite import Task

BASE = ["GP-UCB", "GP-TS", "IGP-UCB", "GPSampler", "TPE", "Random"]
"""Our samplers with their defaults against Optuna's GPSampler, TPE and random search."""


@dataclass(frozen=True)
class Group:
    name: str
    case: str  # the case
    problems: tuple[str, ...]
    trials: int
    seeds: int
    samplers: tuple[str, ...]


def _g(name: str, case: str, problems: list[str], trials: int, seeds: int,
       samplers: list[str]) -> Group:
    return Group(name, case, tuple(problems), trials, seeds, tuple(samplers))


PENALTY_2D = [f"penalty2d-{p}" for p in ("inf", "1e3", "1e6", "1e12")]
PENALTY_4D = [f"penalty4d-{p}" for p in ("inf", "1e3", "1e6", "1e12")]
SCALED = ["h3x1e-300", "h3x1e-8", "h3x1", "h3x1e8", "h3x1e250", "h3+1e6"]

FULL = [
    _g("penalty", "1 (penalty idiom)", PENALTY_2D + PENALTY_4D, 40, 5, BASE),
    _g("plateau", "2/5 (plateau of tied values)", ["plateau3d"], 40, 5, BASE),
    _g("branches", "3 (branches of different scales, costly branch)",
       ["branches-wide", "branches-costly"], 60, 10, BASE + ["TPE-group"]),
    _g("dims30", "2 (many dimensions)", ["ellipsoid30"], 40, 5, BASE + ["CMA-ES"]),
    _g("dims20", "2 (many dimensions)", ["ackley20", "rosenbrock20"], 80, 5, BASE + ["CMA-ES"]),
    _g("dims50", "2 (many dimensions)", ["styblinski50"], 80, 5, BASE + ["CMA-ES"]),
    _g("faces30", "2, control: the optimum near the faces", ["ellipsoid30-faces",
                                                              "ellipsoid30-half"], 40, 5,
       BASE + ["CMA-ES"]),
    _g("faces20", "2, control: the optimum near the faces", ["ackley20-faces"], 80, 5,
       BASE + ["CMA-ES"]),
    _g("spaces", "int-only and categorical-only spaces", ["int5", "cat6"], 40, 5, BASE),
    _g("scales", "5 (tiny and huge values)", SCALED, 40, 5, BASE),
    _g("basins", "4 (multiple basins)", ["hartmann6"], 100, 40, OURS + ["GPSampler", "TPE",
                                                                       "Random"]),
]
QUICK = [
    _g("penalty", "1 (penalty idiom)", ["penalty2d-inf", "penalty2d-1e6"], 30, 3, BASE),
    _g("plateau", "2/5 (plateau of tied values)", ["plateau3d"], 30, 3, BASE),
    _g("branches", "3 (branches of different scales, costly branch)",
       ["branches-wide", "branches-costly"], 40, 3, BASE + ["TPE-group"]),
    _g("dims30", "2 (many dimensions)", ["ellipsoid30"], 40, 3, BASE + ["CMA-ES"]),
    _g("spaces", "int-only and categorical-only spaces", ["int5", "cat6"], 30, 3, BASE),
    _g("scales", "5 (tiny and huge values)", ["h3x1e-300", "h3x1", "h3x1e250"], 30, 3, BASE),
    _g("basins", "4 (multiple basins)", ["hartmann6"], 60, 3, OURS + ["GPSampler", "TPE",
                                                                     "Random"]),
]
SUITES: dict[str, list[Group]] = {"quick": QUICK, "full": FULL}

RECOMMENDED_TRIALS = {p: g.trials for g in FULL for p in g.problems}
"""The full suite's budget of each problem: the report flags results scored at fewer trials."""
GROUP_OF = {p: g.name for g in FULL for p in g.problems}


def select(suite: str, groups: list[str] | None = None, problems: list[str] | None = None,
           samplers: list[str] | None = None, seeds: int | None = None,
           trials: int | None = None) -> list[Group]:
    """The suite's groups, narrowed and overridden by the command line's options.

    ``problems``: only these (a problem of the full suite that ``suite`` lacks is taken with its
    full group's settings). ``samplers``: each group runs those of the named samplers it runs by
    default; a name that no group runs by default (a variant such as ``'GP-UCB{"beta_scale":
    0.2}'``) runs on every group. ``seeds`` / ``trials`` replace every group's.
    """
    base = {g.name: g for g in SUITES[suite]}
    if groups:
        bad = [n for n in groups if n not in {g.name for g in FULL}]
        if bad:
            raise SystemExit(f"unknown group(s): {', '.join(bad)}; known: "
                             f"{', '.join(g.name for g in FULL)}")
        full = {g.name: g for g in FULL}
        chosen = [base.get(n, full[n]) for n in groups]
    else:
        chosen = list(base.values())
    if problems:
        bad = [p for p in problems if p not in GROUP_OF]
        if bad:
            raise SystemExit(f"unknown problem(s): {', '.join(bad)}; known: "
                             f"{', '.join(GROUP_OF)}")
        out = []
        for g in chosen + [g for g in FULL if g.name not in {c.name for c in chosen}]:
            keep = tuple(p for p in problems if GROUP_OF[p] == g.name)
            if keep and not any(o.name == g.name for o in out):
                out.append(replace(g, problems=keep))
        chosen = out
    if samplers:
        everywhere = [s for s in samplers if not any(s in g.samplers for g in FULL)]
        chosen = [replace(g, samplers=tuple(s for s in samplers
                                            if s in g.samplers or s in everywhere))
                  for g in chosen]
    if seeds is not None:
        chosen = [replace(g, seeds=seeds) for g in chosen]
    if trials is not None:
        chosen = [replace(g, trials=trials) for g in chosen]
    return [g for g in chosen if g.problems and g.samplers]


def tasks(groups: list[Group], first_seed: int = 0, seed_list: list[int] | None = None
          ) -> list[Task]:
    """Seeds outermost (as the harness's ``make_tasks``): an interrupted suite holds whole seeds
    of every (problem, sampler). A group with fewer seeds stops early."""
    out = []
    n = max((g.seeds for g in groups), default=0)
    seeds = list(seed_list) if seed_list else list(range(first_seed, first_seed + n))
    for i, seed in enumerate(seeds):
        for g in groups:
            if seed_list or i < g.seeds:
                out += [Task(p, s, seed, g.trials) for p in g.problems for s in g.samplers]
    return out
