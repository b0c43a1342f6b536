"""Normalised and anytime scores of the Bayesmark suite, per (problem, seed), per half, as
markdown (``report.md``).

Each seed is its own objective (seed s cross-validates on its own 80 % split), so the score is
taken per (problem, seed): ``opt_s`` = the lowest loss any run of that (problem, seed) found (all
samplers, whole runs) or its random-search pool holds; ``rand_s(t)`` = the expected best loss of
t random-search trials on that seed, from the pool (``pool.py``: the exact expected minimum of t
of the pool's n values drawn without replacement). A run's score after t trials is
``100 (1 - (best(t) - opt_s) / (rand_s(t) - opt_s))``, floored at -100 (``--no-floor``: not;
Bayesmark clips its normalised score for the same reason): 100 = the best loss known on the
seed, 0 = random search's expected best at the same budget. Where ``rand_s(t) = opt_s`` (every
t-subset of the pool holds the best value) a run at ``opt_s`` scores 0 and any other the floor.
Score at T: the mean over seeds of the runs' scores after T trials; anytime at T: the mean over
seeds of each run's mean score over t = 5..T; a half's score: the mean over its problems that
every sampler in the table ran (the formulas and the averaging of ``benchmarks/hpo/report.py``,
whose functions are imported, applied to one seed at a time). Paired differences (``paired``):
per problem the mean over the seeds both samplers ran of the difference of their runs' scores,
averaged over problems; its standard error is that of the per-seed differences, combined over
problems, so it is the error over (problem, seed) pairs.

Why not Bayesmark's pooled score: Bayesmark takes ``opt`` and random search's baseline over all
runs of a test case, which is right there because all its runs of a test case share one
objective (``shuffle_seed=0``). Here the seeds' splits shift the whole loss landscape (e.g. the
best loss found on DT_diabetes_mse differs by more between two seeds than random search's gap
on either), so pooled over seeds one seed's runs all sat at the floor or near 100 whatever they
did; per seed, a seed's offset cancels.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time

import numpy as np

from benchmarks.harness.runner import CONFIG_FILE, ERRORS_FILE, RUNS_FILE, read_jsonl
from benchmarks.hpo.report import (ANYTIME_FROM, BUDGETS, SCORE_FLOOR, Cell, _dirs_with_runs, _f,
                                   _nanmean, _order, _per_task, _scores, _se, paired, suite)

from . import definitions as D
from . import pool as P
from .problems import ALL, HALF_PROBLEMS

HALF_ORDER = ("tuning", "validation")


def collect(dirs: list[str]) -> tuple[list[dict], list[dict], int]:
    """(parts of the configs, runs, errors) of ``dirs`` and their immediate subdirectories; per
    (problem, sampler, seed) the run with the most trials (its directory in ``"dir"``); only
    this suite's problems."""
    parts, best, n_err = [], {}, 0
    for d in _dirs_with_runs(dirs):
        cfg = os.path.join(d, CONFIG_FILE)
        if os.path.exists(cfg):
            parts += [{**p, "dir": d} for p in json.load(open(cfg)).get("parts", [])]
        n_err += len(read_jsonl(os.path.join(d, ERRORS_FILE)))
        for r in read_jsonl(os.path.join(d, RUNS_FILE)):
            key = (r["problem"], r["sampler"], r["seed"])
            if r["problem"] in ALL and len(r["values"]) >= len(best.get(key, {}).get("values",
                                                                                     [])):
                best[key] = {**r, "dir": d}
    return parts, list(best.values()), n_err


def seed_opt(runs: list[dict], pool_values: list[float]) -> float:
    """``opt_s``: the lowest loss of the runs (of one problem and seed) and of the pool."""
    return min([min(r["values"]) for r in runs] + list(pool_values))


def problem_cells(runs: list[dict], pools: dict[int, list[float]], budgets: list[int],
                  floor: float | None = SCORE_FLOOR) -> dict[tuple[str, int], Cell]:
    """Cell per (sampler, T) of one problem's runs, each run scored against its own seed's
    ``opt_s`` and ``rand_s`` (``pools``: seed -> the pool's values; a seed without a pool, or
    with a pool shorter than T, is not scored at T)."""
    by_seed: dict[int, list[dict]] = {}
    for r in runs:
        by_seed.setdefault(int(r["seed"]), []).append(r)
    cells = {}
    for T in budgets:
        per: dict[str, dict[int, tuple[float, float]]] = {}
        for seed, rs in by_seed.items():
            values = pools.get(seed)
            rs = [r for r in rs if len(r["values"]) >= T]
            if values is None or len(values) < T or not rs:
                continue
            rand = P.expected_min_curve(values, T)
            best = np.minimum.accumulate(np.array([r["values"][:T] for r in rs], float), axis=1)
            S = _scores(rand, best, seed_opt(by_seed[seed], values), floor)
            anytime = _nanmean(S[:, ANYTIME_FROM - 1:], axis=1)
            for r, at_T, any_T in zip(rs, S[:, -1], anytime):
                per.setdefault(r["sampler"], {})[seed] = (float(at_T), float(any_T))
        for s, seeds in per.items():
            at_T = np.array([v[0] for v in seeds.values()])
            any_T = np.array([v[1] for v in seeds.values()])
            cells[(s, T)] = Cell(float(_nanmean(at_T)), _se(at_T), float(_nanmean(any_T)),
                                 _se(any_T), len(seeds), dict(sorted(seeds.items())))
    return cells


def pools_for(runs: list[dict], dirs: list[str], budgets: list[int]
              ) -> dict[tuple[str, int], dict]:
    """The pools of every (problem, seed) of ``runs``, read from ``dirs`` (and their
    subdirectories); one that is missing, or shorter than ``pool.least_pool`` of the longest
    budget its runs are scored at, is evaluated or extended (``pool.pool_size`` of that budget)
    into the directory of its runs."""
    known = P.read(dirs)
    need: dict[tuple[str, int], tuple[int, str]] = {}
    for r in runs:
        key = (r["problem"], int(r["seed"]))
        T = max([T for T in budgets if T <= len(r["values"])], default=0)
        if T > need.get(key, (0, ""))[0]:
            need[key] = (T, r["dir"])
    todo: dict[tuple[str, int], list[tuple[str, int]]] = {}
    for key, (T, d) in need.items():
        if key not in known or known[key]["n"] < P.least_pool(T):
            todo.setdefault((d, P.pool_size(T)), []).append(key)
    out = dict(known)
    for (d, n), keys in todo.items():
        print(f"report: {len(keys)} random-search pool(s) missing or short in {d}",
              file=sys.stderr)
        out.update(P.ensure(d, keys, n, known=known))
    return out


def _below_random(cells: dict[str, dict], sampler: str, T: int) -> list[str]:
    return [f"{t} ({c[(sampler, T)].score:+.1f})" for t, c in cells.items()
            if (sampler, T) in c and c[(sampler, T)].score < 0]


def _half_section(title: str, cells: dict[str, dict], samplers: list[str], budgets: list[int],
                  base: str, compare: list[str] | None, n_defined: int,
                  runs: list[dict]) -> list[str]:
    lines = [f"## {title}", ""]
    if not cells:
        return lines + ["No run.", ""]
    for T in budgets:
        shown = [s for s in samplers if any((s, T) in c for c in cells.values())]
        common, m = suite(cells, shown, T)
        if not m:
            continue
        n_runs = [c[(s, T)].runs for t, c in cells.items() if t in common for s in shown]
        lines += [f"### T = {T}", "",
                  f"{len(common)} of the half's {n_defined} problems, run by every sampler; "
                  f"{min(n_runs)}-{max(n_runs)} seeds per (problem, sampler).", "",
                  f"| sampler | score at {T} | anytime at {T} | problems below random | "
                  "s / suggestion |", "|---|---:|---:|---:|---:|"]
        for s in sorted(m, key=lambda s: -m[s][0]):
            sug = np.mean([np.mean(r["suggest_seconds"][:T]) for r in runs if r["sampler"] == s
                           and r["problem"] in common and len(r["values"]) >= T])
            below = len(_below_random({t: cells[t] for t in common}, s, T))
            lines.append(f"| {s} | {_f(m[s][0], m[s][1])} | {_f(m[s][2], m[s][3])} | "
                         f"{below} of {len(common)} | {sug:.4f} |")
        lines.append("")
        if base in shown:
            others = [s for s in (compare or shown) if s != base and s in shown]
            if others:
                lines += [f"Paired against `{base}` (other minus {base}; ± the paired standard "
                          "error over (problem, seed)):", "",
                          "| sampler | score difference | anytime difference | problems | "
                          "seed pairs |", "|---|---:|---:|---:|---:|"]
                for s in others:
                    d, se, n_p, n_pairs = paired(cells, base, s, T)
                    a, ase = paired(cells, base, s, T, "anytime")[:2]
                    lines.append(f"| {s} | {_f(d, se, signed=True)} | {_f(a, ase, signed=True)}"
                                 f" | {n_p} | {n_pairs} |")
                lines.append("")
            below = _below_random(cells, base, T)
            lines += [f"Problems where `{base}` is below random search (mean over seeds): "
                      + (", ".join(below) if below else "none") + ".", ""]
        for attr, what in (("score", "Score"), ("anytime", "Anytime score")):
            lines += [f"{what} at T = {T} per problem (mean over seeds; bold: best):", ""]
            lines += _per_task(cells, shown, T, attr)
    return lines


def render(dirs: list[str], base: str = "GP-UCB", half: str = "all",
           compare: list[str] | None = None, out_file: str | None = None,
           no_floor: bool = False) -> str:
    parts, runs, n_err = collect(dirs)
    if not runs:
        raise SystemExit(f"no finished Bayesmark run in {', '.join(dirs)} (or their "
                         "subdirectories)")
    floor = None if no_floor else SCORE_FLOOR
    by_problem: dict[str, list[dict]] = {}
    for r in runs:
        by_problem.setdefault(r["problem"], []).append(r)
    by_problem = {p: by_problem[p] for p in ALL if p in by_problem}
    longest = max(len(r["values"]) for r in runs)
    budgets = [T for T in BUDGETS if T <= longest] or [longest]
    pools = pools_for(runs, dirs, budgets)
    seed_pools = {p: {s: pools[(p, s)]["values"] for (q, s) in pools if q == p}
                  for p in by_problem}
    cells = {p: problem_cells(rs, seed_pools[p], budgets, floor) for p, rs in by_problem.items()}
    samplers = _order({r["sampler"] for r in runs})

    loads = [r["loadavg"] for r in runs if r.get("loadavg") is not None]
    lines = ["# Bayesmark suite (unedited problem definitions): normalised scores", "",
             f"Written {time.strftime('%Y-%m-%d %H:%M')} by `python -m benchmarks.bayesmark "
             f"report {' '.join(dirs)} --half {half} --base {base}"
             + (" --no-floor" if no_floor else "")
             + f"` from {len(runs)} runs"
             + (f" ({n_err} failures in {ERRORS_FILE})" if n_err else "")
             + (f"; 1-min load at the end of the runs {min(loads):.1f}-{max(loads):.1f}"
                if loads else "") + ".", ""]
    lines += ["Runs made by:", ""]
    for p in parts:
        pkg = p.get("package", {})
        lines.append(
            f"- `{p.get('command')}` ({p.get('dir')}): {p.get('started')} to "
            f"{p.get('finished', '?')}, optuna_gpbandit {pkg.get('commit')}"
            f"{' (modified)' if pkg.get('dirty') else ''}, optuna "
            f"{p.get('versions', {}).get('optuna')}, scikit-learn "
            f"{p.get('versions', {}).get('scikit-learn')}, {p.get('jobs')} job(s) x "
            f"{p.get('threads')} thread(s), load {p.get('load_start', float('nan')):.1f} -> "
            f"{p.get('load_end', float('nan')):.1f}")
    lines += ["", __doc__.split("\n\n", 1)[1].strip().replace("``", "`"), ""]

    halves = list(HALF_ORDER) + ["all"] if half == "all" else [half]
    for h in halves:
        names = HALF_PROBLEMS[h]
        title = ("Both halves together" if h == "all" else
                 f"{h.capitalize()} half ({', '.join(D.HALVES[h])})")
        sub = {p: c for p, c in cells.items() if p in names}
        lines += _half_section(title, sub, samplers, budgets, base, compare, len(names), runs)

    lines += ["## Problems", "", "Per seed s: opt_s, the best loss of the seed's runs and pool; "
              "gap(T), rand_s(T) - opt_s, random search's expected distance from it after T "
              "trials. opt_s range: min and max over seeds (the seeds' splits differ); gap: mean "
              "over seeds; pool best: the seeds whose opt_s the pool holds (no run can score 100 "
              "there); pool: values per (problem, seed); eval s: mean wall seconds per evaluation "
              "in the runs; inf: failed evaluations in runs and pools (Bayesmark's rule: a "
              "failure is inf).", "",
              "| problem | half | params | seeds | opt_s range | "
              + " | ".join(f"gap({T})" for T in budgets)
              + " | pool best | pool | eval s | inf |",
              "|---|---|---|---:|---:" + "|---:" * len(budgets) + "|---:|---:|---:|---:|"]
    for p, rs in by_problem.items():
        opts, gaps, pool_best = {}, {T: [] for T in budgets}, 0
        for seed, values in sorted(seed_pools[p].items()):
            mine = [r for r in rs if int(r["seed"]) == seed]
            if not mine:
                continue
            opts[seed] = seed_opt(mine, values)
            pool_best += min(values) <= opts[seed]
            for T in budgets:
                if len(values) >= T:
                    gaps[T].append(P.expected_min(values, T) - opts[seed])
        n_inf = sum(1 for r in rs for v in r["values"] if not math.isfinite(v)) + sum(
            1 for v in seed_pools[p].values() for x in v if not math.isfinite(x))
        n_pool = sorted({len(v) for v in seed_pools[p].values()})
        lines.append(
            f"| {p} | {ALL[p].half} | {ALL[p].kinds()} | {len(opts)} | "
            + (f"{min(opts.values()):.5g} .. {max(opts.values()):.5g}" if opts else "n/a")
            + " | " + " | ".join(f"{np.mean(gaps[T]):.4g}" if gaps[T] else "n/a" for T in budgets)
            + f" | {pool_best} of {len(opts)} | {'/'.join(map(str, n_pool))} | "
            f"{np.mean([np.mean(r['objective_seconds']) for r in rs]):.3f} | {n_inf} |")
    text = "\n".join(lines) + "\n"
    with open(out_file or os.path.join(dirs[0], "report.md"), "w") as fh:
        fh.write(text)
    return text


__all__ = ["render", "collect", "ANYTIME_FROM"]
