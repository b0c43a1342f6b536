"""COCO's bbob suite as a harness suite (``python -m benchmarks run bbob``).

Problems: bbob f1-f24 in 2, 5, 10 and 20 dimensions (``problems.py``), instances 3-5 (half
``tuning``) and 6-8 (half ``validation``); instances 1 and 2 are reserved for the project's final
check and cannot be selected. One run per (function, dimension, instance), seed 0, as COCO runs
one trial per instance; budgets 20 d in 2-D, 12 d in 5-D, 10 d in 10-D and 20-D. Options:
``--dims`` (default 5 10) and ``--functions`` (default 1-24).

Scored as COCO scores (``benchmarks/harness/scoring.py``, rule ``targets``): the percentage of
the 51 targets 1e2 .. 1e-8 on the regret reached, at the budget and along the run. The suite's
own sections (:func:`sections`), per half and dimension: the fraction of (run, target) pairs
reached, COCO's five function groups, and per (function, dimension) cell the mean log10 regret
over the instances (a regret below 1e-8 counts as 1e-8), the best peer's, and the cells where the
base sampler is more than 1.0 behind it.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from benchmarks.harness.suite import Scoring, Suite

from . import problems as B

OURS = ("GP-UCB", "IGP-UCB", "GP-TS")
PEERS = ("GPSampler", "BoTorch", "HEBO", "SMAC-BB", "CMA-ES", "TPE", "Random")
BEHIND = 1.0
"""A cell is behind when the base's mean log10 regret is more than this above the best peer's."""
FLOOR = 1e-8
"""COCO's last target: a smaller regret counts as this in the log10 regret."""


def options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dims", type=int, nargs="+", default=None, choices=B.DIMS,
                   help="dimensions (default 5 10)")
    p.add_argument("--functions", type=int, nargs="+", default=None, metavar="F",
                   help="bbob functions 1-24 (default all)")


def select(args: argparse.Namespace, names: list[str]) -> list[str]:
    dims = set(getattr(args, "dims", None) or (5, 10))
    fns = set(getattr(args, "functions", None) or B.FUNCTIONS)
    bad = sorted(fns - set(B.FUNCTIONS))
    if bad:
        raise SystemExit(f"--functions: no bbob function {bad}; functions are 1-24")
    chosen = []
    for n in names:
        f, d, _ = B.parse(n)
        if f in fns and d in dims:
            chosen.append(n)
    return chosen


def _budgets(problem: str, length: int) -> list[tuple[str, int]]:
    return [("budget", B.BUDGET[B.parse(problem)[1]])]


def log_regret(run: dict, T: int) -> float:
    """log10 of the run's regret after ``T`` trials (at least :data:`FLOOR`)."""
    best = min(run["values"][:T])
    return math.log10(max(best - run["minimum"], FLOOR))


def cell_table(runs: list[dict], samplers: list[str]) -> dict[tuple[int, int], dict[str, float]]:
    """(function, dim) -> sampler -> mean log10 regret at the budget over its instances."""
    acc: dict[tuple[int, int], dict[str, list[float]]] = {}
    for r in runs:
        f, d, _ = B.parse(r["problem"])
        T = B.BUDGET[d]
        if r["sampler"] in samplers and len(r["values"]) >= T:
            acc.setdefault((f, d), {}).setdefault(r["sampler"], []).append(log_regret(r, T))
    return {k: {s: float(np.mean(v)) for s, v in by.items()} for k, by in sorted(acc.items())}


def _fraction(runs: list[dict], sampler: str) -> tuple[float, int]:
    """Fraction of (run, target) pairs the sampler's runs reached at the budget, and runs."""
    from benchmarks.harness.scoring import TARGETS

    hits, n = 0.0, 0
    for r in runs:
        if r["sampler"] != sampler:
            continue
        T = B.BUDGET[B.parse(r["problem"])[1]]
        if len(r["values"]) < T:
            continue
        regret = min(r["values"][:T]) - r["minimum"]
        hits += float(np.mean(regret <= TARGETS))
        n += 1
    return (hits / n if n else float("nan")), n


def sections(data) -> list[str]:
    """Per half and dimension: fraction of targets, groups, cells behind the best peer."""
    base = data.base
    lines = ["## COCO's view: per half and dimension", "",
             "Fraction: of (run, target) pairs reached at the budget (the ECDF's end); in "
             "brackets, the ratio to the best peer's (peers: every sampler not ours). Cells: "
             f"(function, dimension) pairs; mean log10 regret over the instances (regret "
             f"floored at {FLOOR:g}); behind: more than {BEHIND} above the best peer's; "
             "rank: mean over cells of the rank of the mean log10 regret (1 = best).", ""]
    halves = [h for h in data.suite.halves]
    for h in halves:
        names = set(data.suite.names(h))
        for d in B.DIMS:
            runs = [r for r in data.runs if r["problem"] in names and B.parse(r["problem"])[1] == d]
            if not runs:
                continue
            samplers = [s for s in data.samplers if any(r["sampler"] == s for r in runs)]
            # paired: only the problems (instances) every sampler shown ran
            ran = {s: {r["problem"] for r in runs if r["sampler"] == s} for s in samplers}
            both = set.intersection(*ran.values())
            runs = [r for r in runs if r["problem"] in both]
            cells = cell_table(runs, samplers)
            common = [k for k, by in cells.items() if all(s in by for s in samplers)]
            peers = [s for s in samplers if s not in OURS and "{" not in s]
            fr = {s: _fraction([r for r in runs if (B.parse(r["problem"])[0], d) in common],
                               s) for s in samplers}
            best_peer = max((fr[s][0] for s in peers), default=float("nan"))
            ranks = {s: 0.0 for s in samplers}
            behind = {s: [] for s in samplers}
            for k in common:
                vals = np.array([cells[k][s] for s in samplers])
                order = vals.argsort(kind="stable")
                rank = np.empty(len(vals))
                rank[order] = np.arange(1, len(vals) + 1)
                for v in set(vals):  # ties share their mean rank
                    rank[vals == v] = rank[vals == v].mean()
                for s, r_ in zip(samplers, rank):
                    ranks[s] += r_ / len(common)
                if peers:
                    bp = min(cells[k][p] for p in peers)
                    for s in samplers:
                        if cells[k][s] > bp + BEHIND:
                            behind[s].append(f"f{k[0]}")
            lines += [f"### {h.capitalize()} half, {d}-D ({len(common)} cells, "
                      f"{len(both)} problems every sampler ran, budget {B.BUDGET[d]})", "",
                      "| sampler | fraction of targets | runs | mean rank | cells behind the "
                      "best peer |", "|---|---:|---:|---:|---|"]
            for s in sorted(samplers, key=lambda s: -fr[s][0]):
                ratio = (f" ({fr[s][0] / best_peer:.2f} x)" if best_peer and
                         math.isfinite(best_peer) and s not in peers else "")
                bh = behind[s]
                lines.append(f"| {s} | {fr[s][0]:.3f}{ratio} | {fr[s][1]} | {ranks[s]:.2f} | "
                             f"{len(bh)}{': ' + ', '.join(bh) if bh and s not in peers else ''} |")
            lines.append("")
            lines += [f"Mean log10 regret per function ({d}-D; bold: best):", "",
                      "| f | group | " + " | ".join(samplers) + " |",
                      "|---|---" + "|---:" * len(samplers) + "|"]
            for k in common:
                row = [cells[k][s] for s in samplers]
                lo = min(row)
                lines.append(f"| f{k[0]} {B.NAMES[k[0]]} | {B.group_of(k[0])} | "
                             + " | ".join(f"**{v:.2f}**" if v == lo else f"{v:.2f}" for v in row)
                             + " |")
            lines.append("")
            lines += [f"Fraction of targets by COCO's function group ({d}-D):", "",
                      "| group | " + " | ".join(samplers) + " |",
                      "|---" + "|---:" * len(samplers) + "|"]
            for grp, fs in B.GROUPS.items():
                rs = [r for r in runs if B.parse(r["problem"])[0] in fs]
                if rs:
                    lines.append(f"| {grp} | " + " | ".join(
                        f"{_fraction(rs, s)[0]:.3f}" for s in samplers) + " |")
            lines.append("")
    if base not in data.samplers:
        lines += [f"(No run of the base sampler `{base}`.)", ""]
    return lines


SUITE = Suite(
    name="bbob", title="COCO's bbob suite: fraction of targets reached",
    halves={h: B.names(h, dims=B.DIMS) for h in B.HALVES},
    problem=lambda name, seed: B.problem(*B.parse(name)),
    budget=lambda name: B.BUDGET[B.parse(name)[1]],
    scoring=Scoring("targets", _budgets, floor=None,
                    unit="percentage of COCO's 51 targets reached (1e2 .. 1e-8 on the regret)"),
    seeds=1, samplers=("GP-UCB", "GP-TS", "GPSampler", "CMA-ES", "TPE", "Random"),
    modules=("cocoex",), options=options, select=select, sections=sections,
    describe=lambda name: B.problem(*B.parse(name)).description,
    notes="COCO's bbob functions through `cocoex` (`benchmarks/bbob/problems.py`); instances "
          "3-5 tuning, 6-8 validation, 1-2 reserved for the project's final check.")
