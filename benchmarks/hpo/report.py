"""Normalised and anytime scores of the real-HPO suite, as markdown (``report.md``).

For each task ``f*`` is the lowest loss any run of any sampler found in the result set, ``r(t)``
the mean over the Random-search seeds of their best-so-far loss after ``t`` trials. A run's score
after ``t`` trials is ``100 (r(t) - best(t)) / (r(t) - f*)``: 100 = the best value any run found,
0 = random search at the same budget, negative = worse than random. Score at T: mean over seeds
of the score after T trials; anytime at T: mean over t = 5..T of the (seed-mean) score after t
trials. Suite scores: means over the tasks that every sampler in the table ran (±: the standard
error over seeds, combined over tasks).

A run's score is floored at ``SCORE_FLOOR`` = -100 before averaging (``--no-floor``: not):
where random search comes close to ``f*`` the denominator is tiny and one poor run would swing a
suite mean by thousands of points (Bayesmark clips its normalised losses for the same reason).
Where ``r(t) = f*`` (every random seed found the best value) a run at ``f*`` scores 0 and any
other run the floor (without the floor: left out).

A run enters the scores at T if it has at least T trials (one 100-trial run gives both T = 40
and T = 100); of the runs of one (task, sampler, seed) the longest counts.
"""

from __future__ import annotations

import json
import math
import os
import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from benchmarks.harness.runner import CONFIG_FILE, ERRORS_FILE, RUNS_FILE, read_jsonl

from .tasks import ALL_TASKS, SAMPLER_ORDER

BUDGETS = (40, 100)  # scored budgets (shorter runs only: their length)
ANYTIME_FROM = 5
SCORE_FLOOR = -100.0
RANDOM = "Random"


@dataclass
class Cell:
    score: float
    score_se: float
    anytime: float
    anytime_se: float
    runs: int
    by_seed: dict[int, tuple[float, float]] = field(default_factory=dict)
    """(score at T, anytime at T) of each seed's run: paired differences use them."""


def paired(cells: dict[str, dict], a: str, b: str, T: int, what: str = "score"
           ) -> tuple[float, float, int, int]:
    """Suite difference ``b - a`` (score or anytime at ``T``) over the tasks both ran, from
    the seeds both ran: (mean over tasks of the per-task mean difference, its standard error,
    tasks, seed pairs). The error is that of the per-seed differences, so what the two runs of
    a seed share (the task's difficulty; for two variants of one sampler, the seed's start-up
    design) cancels: it is the error to judge a variant against its default by."""
    i = 0 if what == "score" else 1
    means, variances, n_pairs = [], [], 0
    for c in cells.values():
        if (a, T) not in c or (b, T) not in c:
            continue
        sa, sb = c[(a, T)].by_seed, c[(b, T)].by_seed
        d = np.array([sb[k][i] - sa[k][i] for k in sorted(set(sa) & set(sb))], float)
        d = d[np.isfinite(d)]
        if not d.size:
            continue
        means.append(float(d.mean()))
        variances.append(float(d.var(ddof=1) / d.size) if d.size > 1 else float("nan"))
        n_pairs += d.size
    if not means:
        return float("nan"), float("nan"), 0, 0
    return (float(np.mean(means)), math.sqrt(sum(variances)) / len(means), len(means), n_pairs)


def _dirs_with_runs(dirs: list[str]) -> list[str]:
    out = []
    for d in dirs:
        subs = [os.path.join(d, s) for s in sorted(os.listdir(d))] if os.path.isdir(d) else []
        out += [x for x in [d] + subs if os.path.isfile(os.path.join(x, RUNS_FILE))]
    return out


def collect(dirs: list[str]) -> tuple[list[dict], list[dict], int]:
    """(parts of the configs, runs, errors) of ``dirs`` and their immediate subdirectories; per
    (task, sampler, seed) the run with the most trials."""
    parts, best, n_err = [], {}, 0
    for d in _dirs_with_runs(dirs):
        cfg = os.path.join(d, CONFIG_FILE)
        if os.path.exists(cfg):
            parts += [{**p, "dir": d} for p in json.load(open(cfg)).get("parts", [])]
        n_err += len(read_jsonl(os.path.join(d, ERRORS_FILE)))
        for r in read_jsonl(os.path.join(d, RUNS_FILE)):
            key = (r["problem"], r["sampler"], r["seed"])
            longest = len(best.get(key, {}).get("values", []))
            if r["problem"] in ALL_TASKS and len(r["values"]) >= longest:
                best[key] = r
    return parts, list(best.values()), n_err


def _se(x: np.ndarray) -> float:
    x = x[np.isfinite(x)]
    return float(np.std(x, ddof=1) / math.sqrt(len(x))) if len(x) > 1 else float("nan")


def _nanmean(x: np.ndarray, axis: int | None = None):
    """nanmean without the warning of an all-NaN slice (an undefined score stays NaN)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(x, axis=axis)


def _scores(R: np.ndarray, B: np.ndarray, f_star: float, floor: float | None) -> np.ndarray:
    """Scores of the best-so-far curves ``B`` (runs x T) against random's mean curve ``R``."""
    gap = R - f_star
    with np.errstate(divide="ignore", invalid="ignore"):
        S = np.where(gap > 0, 100.0 * (R - B) / np.where(gap > 0, gap, 1.0),
                     np.where(B <= f_star, 0.0, -np.inf))
    return np.maximum(S, floor) if floor is not None else np.where(np.isinf(S), np.nan, S)


def task_cells(runs: list[dict], budgets: list[int], floor: float | None = SCORE_FLOOR
               ) -> tuple[float, dict[int, float], dict[tuple[str, int], Cell]]:
    """(f*, r(T) per budget, Cell per (sampler, T)) of one task's runs."""
    f_star = min(min(r["values"]) for r in runs)
    by: dict[str, list[dict]] = {}
    for r in runs:
        by.setdefault(r["sampler"], []).append(r)
    cells, rand_at = {}, {}
    for T in budgets:
        def curves(rs: list[dict]) -> np.ndarray:
            return np.minimum.accumulate(np.array([r["values"][:T] for r in rs], float), axis=1)

        rand = [r for r in by.get(RANDOM, []) if len(r["values"]) >= T]
        if not rand:
            continue
        R = curves(rand).mean(axis=0)
        rand_at[T] = float(R[-1])
        for s, rs in by.items():
            rs = [r for r in rs if len(r["values"]) >= T]
            if not rs:
                continue
            S = _scores(R, curves(rs), f_star, floor)
            at_T = S[:, -1]
            anytime = _nanmean(S[:, ANYTIME_FROM - 1:], axis=1)
            cells[(s, T)] = Cell(float(_nanmean(at_T)), _se(at_T), float(_nanmean(anytime)),
                                 _se(anytime), len(rs),
                                 {int(r["seed"]): (float(x), float(y))
                                  for r, x, y in zip(rs, at_T, anytime)})
    return f_star, rand_at, cells


def _order(names: set[str]) -> list[str]:
    return [s for s in SAMPLER_ORDER if s in names] + sorted(names - set(SAMPLER_ORDER))


def _f(x: float, se: float | None = None, signed: bool = False) -> str:
    """``x`` to one decimal (with its sign: a difference) and, where defined, `` ± se``."""
    if x is None or not math.isfinite(x):
        return "n/a"
    text = f"{round(x, 1) + 0.0:{'+' if signed else ''}.1f}"  # + 0.0: no "-0.0"
    return text + (f" ± {se:.1f}" if se is not None and math.isfinite(se) else "")


def suite(cells: dict[str, dict], samplers: list[str], T: int) -> tuple[list[str], dict]:
    """Common tasks at T and per sampler (score, se, anytime, se) means over them."""
    common = [t for t, c in cells.items() if all((s, T) in c for s in samplers)]
    out = {}
    for s in samplers:
        cs = [cells[t][(s, T)] for t in common]
        if not cs:
            continue
        n = len(cs)
        out[s] = (np.mean([c.score for c in cs]),  # a NaN standard error (1 seed) stays NaN
                  math.sqrt(sum(c.score_se ** 2 for c in cs)) / n,
                  np.mean([c.anytime for c in cs]),
                  math.sqrt(sum(c.anytime_se ** 2 for c in cs)) / n)
    return common, out


def _targets(cells: dict[str, dict], samplers: list[str], default: str,
             budgets: list[int]) -> list[str]:
    lines = [f"## Targets (issue 30; default sampler `{default}`)", "",
             "Value: the difference of the suite means ± its paired standard error (from the "
             "per-seed differences of the two samplers' runs, combined over tasks; see "
             "`paired`).", "", "| target | T | value | met |", "|---|---:|---|---|"]

    def pair(a: str, b: str, T: int) -> tuple[list[str], dict]:
        return suite(cells, [a, b], T) if a in samplers and b in samplers else ([], {})

    for T in budgets:
        for ref, need, what in (("GPSampler", 10, "score"), ("TPE", 25, "score"),
                                ("TPE-uv", 25, "score"), ("TPE-mv", 25, "score"),
                                ("GPSampler", 5, "anytime")):
            common, m = pair(default, ref, T)
            if not m:
                continue
            i = 0 if what == "score" else 2
            d = m[default][i] - m[ref][i]
            se = paired(cells, ref, default, T, what)[1]
            lines.append(f"| {what} {default} >= {ref} + {need} | {T} | {_f(d, se, signed=True)} "
                         f"({len(common)} tasks) | {'yes' if d >= need else '**no**'} |")
        for ref in ("TPE", "TPE-uv", "TPE-mv"):
            common, m = pair(default, ref, T)
            if not m:
                continue
            worst = min(common, key=lambda t: cells[t][(default, T)].score
                        - cells[t][(ref, T)].score)
            d = cells[worst][(default, T)].score - cells[worst][(ref, T)].score
            lines.append(f"| no task more than 5 below {ref} | {T} | worst {d:+.1f} ({worst}) | "
                         f"{'yes' if d >= -5 else '**no**'} |")
        common, m = pair("GP-TS", "GP-UCB", T)
        if m:
            d = m["GP-TS"][0] - m["GP-UCB"][0]
            se = paired(cells, "GP-UCB", "GP-TS", T)[1]
            lines.append(f"| score GP-TS >= GP-UCB - 3 | {T} | {_f(d, se, signed=True)} "
                         f"({len(common)} tasks) | {'yes' if d >= -3 else '**no**'} |")
    return lines + [""]


def _variants(cells: dict[str, dict], samplers: list[str], budgets: list[int]) -> list[str]:
    """Each variant (``Name{json}``) against its base sampler ``Name``, paired by seed."""
    pairs = [(s.split("{", 1)[0], s) for s in samplers
             if "{" in s and s.split("{", 1)[0] in samplers]
    if not pairs:
        return []
    lines = ["## Variants against their base sampler (paired by seed)", "",
             "| variant | T | score difference | anytime difference | tasks | seed pairs |",
             "|---|---:|---:|---:|---:|---:|"]
    for base, var in pairs:
        for T in budgets:
            d, se, n_tasks, n_pairs = paired(cells, base, var, T)
            if n_tasks:
                a, ase = paired(cells, base, var, T, "anytime")[:2]
                lines.append(f"| {var} | {T} | {_f(d, se, signed=True)} | "
                             f"{_f(a, ase, signed=True)} | {n_tasks} | {n_pairs} |")
    return lines + [""]


def _per_task(cells: dict[str, dict], samplers: list[str], T: int, attr: str) -> list[str]:
    lines = ["| task | " + " | ".join(samplers) + " |", "|---" + "|---:" * len(samplers) + "|"]
    for t, c in cells.items():
        vals = [getattr(c[(s, T)], attr) if (s, T) in c else None for s in samplers]
        best = max((v for v in vals if v is not None and math.isfinite(v)), default=None)
        row = [(f"**{_f(v)}**" if v == best and v is not None else _f(v)) for v in vals]
        lines.append(f"| {t} | " + " | ".join(row) + " |")
    return lines + [""]


def _header(dirs: list[str], parts: list[dict], runs: list[dict], n_err: int) -> list[str]:
    loads = [r["loadavg"] for r in runs if r.get("loadavg") is not None]
    lines = ["# Real-HPO suite: normalised scores", "",
             f"Written {time.strftime('%Y-%m-%d %H:%M')} (1-min load {os.getloadavg()[0]:.2f}) "
             f"by `python -m benchmarks.hpo report {' '.join(dirs)}` from {len(runs)} runs"
             + (f" ({n_err} failures in {ERRORS_FILE})" if n_err else "")
             + (f"; load at the end of the runs {min(loads):.1f}-{max(loads):.1f}" if loads
                else "") + ".", "", "Runs made by:", ""]
    for p in parts:
        pkg = p.get("package", {})
        lines.append(
            f"- `{p.get('command')}` ({p.get('dir')}): {p.get('started')} to "
            f"{p.get('finished', '?')}, optuna_gpbandit {pkg.get('commit')}"
            f"{' (modified)' if pkg.get('dirty') else ''} from `{pkg.get('path')}`, optuna "
            f"{p.get('versions', {}).get('optuna')}, scikit-learn "
            f"{p.get('versions', {}).get('scikit-learn')}, {p.get('jobs')} job(s) x "
            f"{p.get('threads')} thread(s) on {p.get('cpus')} CPUs, load "
            f"{p.get('load_start', float('nan')):.1f} -> {p.get('load_end', float('nan')):.1f}")
    return lines + ["", __doc__.split("\n\n", 1)[1].strip().replace("``", "`"), ""]


def render(dirs: list[str], default: str = "GP-UCB", out_file: str | None = None,
           floor: float | None = SCORE_FLOOR) -> str:
    parts, runs, n_err = collect(dirs)
    if not runs:
        raise SystemExit(f"no finished HPO run in {', '.join(dirs)} (or their subdirectories)")
    by_task: dict[str, list[dict]] = {}
    for r in runs:
        by_task.setdefault(r["problem"], []).append(r)
    by_task = {t: by_task[t] for t in ALL_TASKS if t in by_task}
    longest = max(len(r["values"]) for r in runs)
    budgets = [T for T in BUDGETS if T <= longest] or [longest]
    info = {t: task_cells(rs, budgets, floor) for t, rs in by_task.items()}
    cells = {t: v[2] for t, v in info.items()}
    samplers = _order({r["sampler"] for r in runs})
    lines = _header(dirs, parts, runs, n_err) + ["## Suite means", ""]
    for T in budgets:
        shown = [s for s in samplers if any((s, T) in c for c in cells.values())]
        common, m = suite(cells, shown, T)
        if not m:
            continue
        n_runs = [c[(s, T)].runs for t, c in cells.items() if t in common for s in shown]
        lines += [f"T = {T}: the {len(common)} tasks every sampler ran, {min(n_runs)}-"
                  f"{max(n_runs)} seeds per (task, sampler).",
                  "", f"| sampler | score at {T} | anytime at {T} | s / suggestion |",
                  "|---|---:|---:|---:|"]
        for s in sorted(m, key=lambda s: -m[s][0]):
            sug = np.mean([np.mean(r["suggest_seconds"][:T]) for r in runs if r["sampler"] == s
                           and r["problem"] in common and len(r["values"]) >= T])
            lines.append(f"| {s} | {_f(m[s][0], m[s][1])} | {_f(m[s][2], m[s][3])} | "
                         f"{sug:.4f} |")
        lines.append("")
    lines += _targets(cells, samplers, default, budgets)
    lines += _variants(cells, samplers, budgets)
    for T in budgets:
        for attr, what in (("score", "Score"), ("anytime", "Anytime score")):
            if any((s, T) in c for c in cells.values() for s in samplers):
                lines += [f"## {what} at T = {T} per task (bold: best)", ""]
                lines += _per_task(cells, samplers, T, attr)
    lines += ["## Tasks", "", "f*: the best loss of all runs; r(T): random search's mean "
              "best-so-far loss after T trials; eval s: mean wall seconds per evaluation in "
              "these runs; s / suggestion: mean per sampler over all trials of its runs.", "",
              "| task | params | f* | " + " | ".join(f"r({T})" for T in budgets) + " | eval s | "
              + " | ".join(samplers) + " |", "|---|---|---:" + "|---:" * len(budgets) + "|---:"
              + "|---:" * len(samplers) + "|"]
    for t, (f_star, rand_at, _) in info.items():
        rs = by_task[t]
        sug = [np.mean([np.mean(r["suggest_seconds"]) for r in rs if r["sampler"] == s] or
                       [np.nan]) for s in samplers]
        lines.append(
            f"| {t} | {ALL_TASKS[t].kinds()} | {f_star:.4g} | "
            + " | ".join(f"{rand_at[T]:.4g}" if T in rand_at else "n/a" for T in budgets)
            + f" | {np.mean([np.mean(r['objective_seconds']) for r in rs]):.3f} | "
            + " | ".join("n/a" if np.isnan(x) else f"{x:.3f}" for x in sug) + " |")
    text = "\n".join(lines) + "\n"
    with open(out_file or os.path.join(dirs[0], "report.md"), "w") as fh:
        fh.write(text)
    return text
