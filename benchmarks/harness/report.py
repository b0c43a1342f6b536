"""One report format for every suite (``python -m benchmarks report SUITE DIR ...``).

Reads ``runs.jsonl`` of each directory and of its immediate subdirectories (per (problem,
sampler, seed) the run with the most trials, its directory in ``"dir"``), scores the runs by the
suite's rule (``scoring.py``) and writes ``report.md`` with, per half of the suite (and both
together), per scored budget:

* a table of the samplers: score and anytime score (means over the problems every sampler
  shown ran, ± the standard error over seeds combined over problems), the problems below random
  search, seconds per suggestion;
* the paired differences against the base sampler (``--base``), ± the paired standard error;
* a figure of the mean score over the trials (x: the fraction of the budget), ``score-*.png``;
* the score per problem (bold: the best);

then the suite's own sections (its checks, its tables), a table of the problems (what the
scores were measured against) and the failed runs.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from . import scoring as S
from .runner import CONFIG_FILE, ERRORS_FILE, RUNS_FILE, read_jsonl
from .samplers import OURS, SAMPLERS

if TYPE_CHECKING:
    from .suite import Suite

ORDER = OURS + ["GPSampler", "BoTorch", "HEBO", "SMAC", "SMAC-BB", "CMA-ES", "TPE", "TPE-mv",
                "TPE-uv", "TPE-group", "Random"]
"""Samplers in report order (others after them, by name)."""


def order(names: set[str]) -> list[str]:
    pref = ORDER + [s for s in SAMPLERS if s not in ORDER]
    return [s for s in pref if s in names] + sorted(names - set(pref))


def dirs_with_runs(dirs: list[str]) -> list[str]:
    """``dirs`` and their immediate subdirectories that hold a ``runs.jsonl`` (or a gzipped
    one, ``runs.jsonl.gz``: the stored peers' runs)."""
    out = []
    for d in dirs:
        subs = [os.path.join(d, s) for s in sorted(os.listdir(d))] if os.path.isdir(d) else []
        out += [x for x in [d] + subs if os.path.isfile(os.path.join(x, RUNS_FILE))
                or os.path.isfile(os.path.join(x, RUNS_FILE + ".gz"))]
    return out


def collect(suite: "Suite", dirs: list[str]) -> tuple[list[dict], list[dict], list[dict]]:
    """(parts of the configs, runs, errors) of ``dirs`` and their immediate subdirectories;
    per (problem, sampler, seed) the run with the most trials (its directory in ``"dir"``),
    only the suite's problems; the errors of the runs that never finished."""
    names = set(suite.names())
    parts, best, errors = [], {}, []
    for d in dirs_with_runs(dirs):
        cfg = os.path.join(d, CONFIG_FILE)
        if os.path.exists(cfg):
            parts += [{**p, "dir": d} for p in json.load(open(cfg)).get("parts", [])]
        errors += read_jsonl(os.path.join(d, ERRORS_FILE))
        for r in read_jsonl(os.path.join(d, RUNS_FILE)):
            key = (r["problem"], r["sampler"], r["seed"])
            if r["problem"] in names and len(r["values"]) >= len(best.get(key, {}).get(
                    "values", [])):
                best[key] = {**r, "dir": d}
    last = {(e["problem"], e["sampler"], e["seed"]): e for e in errors}
    return parts, list(best.values()), [e for k, e in last.items() if k not in best]


@dataclass
class Data:
    """Everything a report section may read."""

    suite: "Suite"
    dirs: list[str]
    runs: list[dict]
    cells: dict[str, dict]  # problem -> (sampler, label) -> Cell
    infos: dict[str, S.ProblemInfo]
    labels: list[str]
    samplers: list[str]
    base: str
    extra: dict = field(default_factory=dict)  # the suite's own report options

    def runs_of(self, problem: str) -> list[dict]:
        return [r for r in self.runs if r["problem"] == problem]


def pools_for(suite: "Suite", runs: list[dict], dirs: list[str]) -> dict[tuple[str, int], dict]:
    """The pools of every (problem, objective seed) of ``runs``, read from ``dirs`` (and their
    subdirectories); one that is missing, or shorter than ``pool.least_pool`` of the longest
    budget its runs are scored at, is evaluated or extended (``pool.pool_size`` of that
    budget) into the directory of its runs."""
    from . import pool as P

    known = P.read(suite, dirs)
    need: dict[tuple[str, int], tuple[int, str]] = {}
    for r in runs:
        key = (r["problem"], suite.objective_seed(r["seed"]))
        T = max([T for _, T in suite.scoring.budgets(r["problem"], len(r["values"]))
                 if T <= len(r["values"])], default=0)
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
        out.update(P.ensure(suite, d, keys, n, known=known))
    return out


def score(suite: "Suite", runs: list[dict], dirs: list[str]
          ) -> tuple[dict[str, dict], dict[str, S.ProblemInfo], list[str]]:
    """(cells per problem, what each was measured against, the labels in order)."""
    by_problem: dict[str, list[dict]] = {}
    for r in runs:
        by_problem.setdefault(r["problem"], []).append(r)
    names = list(suite.order) or suite.names()
    by_problem = {p: by_problem[p] for p in names if p in by_problem}
    pools: dict[tuple[str, int], dict] = {}
    if suite.scoring.kind == "pool":
        pools = pools_for(suite, runs, dirs)
    cells, infos, labels = {}, {}, []
    for p, rs in by_problem.items():
        seed_pools = {s: v["values"] for (q, s), v in pools.items() if q == p}
        cells[p], infos[p] = S.problem_cells(suite, p, rs, seed_pools)
        for _, label in cells[p]:
            if label not in labels:
                labels.append(label)
    labels.sort(key=lambda x: [int(n) if n.isdigit() else n for n in re.split(r"(\d+)", x)])
    return cells, infos, labels


def fmt(x: float | None, se: float | None = None, signed: bool = False) -> str:
    """``x`` to one decimal (with its sign: a difference) and, where defined, `` ± se``."""
    if x is None or not math.isfinite(x):
        return "n/a"
    text = f"{round(x, 1) + 0.0:{'+' if signed else ''}.1f}"  # + 0.0: no "-0.0"
    return text + (f" ± {se:.1f}" if se is not None and math.isfinite(se) else "")


def g(x: float | None) -> str:
    """A value in a table: 3 significant digits, exponent notation where large or small."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    if x == 0:
        return "0"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if abs(x) >= 1e4 or abs(x) < 1e-3:
        return f"{x:.2e}"
    return f"{x:.3g}"


def below_random(cells: dict[str, dict], sampler: str, label: str) -> list[str]:
    return [f"{p} ({c[(sampler, label)].score:+.1f})" for p, c in cells.items()
            if (sampler, label) in c and c[(sampler, label)].score < 0]


def per_problem(cells: dict[str, dict], samplers: list[str], label: str, attr: str) -> list[str]:
    lines = ["| problem | " + " | ".join(samplers) + " |",
             "|---" + "|---:" * len(samplers) + "|"]
    for p, c in cells.items():
        vals = [getattr(c[(s, label)], attr) if (s, label) in c else None for s in samplers]
        best = max((v for v in vals if v is not None and math.isfinite(v)), default=None)
        row = [(f"**{fmt(v)}**" if v == best and v is not None else fmt(v)) for v in vals]
        lines.append(f"| {p} | " + " | ".join(row) + " |")
    return lines + [""]


def per_problem_paired(cells: dict[str, dict], base: str, samplers: list[str], label: str
                       ) -> list[str]:
    """Each sampler's score at ``label`` per problem with its paired difference from
    ``base`` over the seeds both ran (± its paired standard error): a swap table, one part of
    ``base`` replaced at a time, read problem by problem."""
    others = [s for s in samplers if s != base]
    lines = [f"| problem | {base} | " + " | ".join(others) + " |",
             "|---" + "|---:" * (len(others) + 1) + "|"]
    for p, c in cells.items():
        if (base, label) not in c:
            continue
        row = [fmt(c[(base, label)].score)]
        for s in others:
            if (s, label) not in c:
                row.append(fmt(None))
                continue
            d, dse = S.paired({p: c}, base, s, label)[:2]
            row.append(f"{fmt(c[(s, label)].score)} ({fmt(d, dse, signed=True)})")
        lines.append(f"| {p} | " + " | ".join(row) + " |")
    return lines + [""]


def suggest_seconds(runs: list[dict], sampler: str, problems: list[str], label_T: dict[str, int]
                    ) -> float:
    xs = [np.mean(r["suggest_seconds"][:label_T[r["problem"]]]) for r in runs
          if r["sampler"] == sampler and r["problem"] in label_T and r["problem"] in problems
          and len(r["values"]) >= label_T[r["problem"]]]
    return float(np.mean(xs)) if xs else float("nan")


def figure(cells: dict[str, dict], samplers: list[str], label: str, path: str, title: str,
           unit: str) -> bool:
    """The mean score over the trials per sampler (x: fraction of each problem's budget),
    averaged over ``cells``' problems; False if matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    grid = np.linspace(0.0, 1.0, 101)[1:]
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    for i, s in enumerate(samplers):
        curves = []
        for c in cells.values():
            cell = c.get((s, label))
            if cell is None or cell.curve is None or not len(cell.curve):
                continue
            T = len(cell.curve)
            curves.append(np.interp(grid * T, np.arange(1, T + 1), cell.curve))
        if not curves:
            continue
        ax.plot(grid, S.nanmean(np.array(curves), axis=0), "-" if s in OURS else "--",
                color=plt.get_cmap("tab10")(i % 10), label=s, lw=1.6)
    ax.set_xlabel("fraction of the budget (trials / T)")
    ax.set_ylabel(unit.split(" (")[0])
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def variants(cells: dict[str, dict], samplers: list[str], label: str) -> list[str]:
    """Each variant (``Name{json}``) against its base sampler ``Name``, paired by seed."""
    pairs = [(s.split("{", 1)[0], s) for s in samplers
             if "{" in s and s.split("{", 1)[0] in samplers]
    if not pairs:
        return []
    lines = ["Variants against their base sampler (paired by seed):", "",
             "| variant | score difference | anytime difference | problems | seed pairs |",
             "|---|---:|---:|---:|---:|"]
    for base, var in pairs:
        d, dse, n_p, n_pairs = S.paired(cells, base, var, label)
        if n_p:
            a, ase = S.paired(cells, base, var, label, "anytime")[:2]
            lines.append(f"| {var} | {fmt(d, dse, signed=True)} | {fmt(a, ase, signed=True)} | "
                         f"{n_p} | {n_pairs} |")
    return lines + [""]


def half_section(data: Data, title: str, cells: dict[str, dict], n_defined: int,
                 compare: list[str] | None, out_dir: str | None, slug: str,
                 per_problem_tables: bool = True, paired_per_problem: bool = False
                 ) -> list[str]:
    suite, runs = data.suite, data.runs
    lines = [f"## {title}", ""]
    if not cells:
        return lines + ["No run.", ""]
    random_based = suite.scoring.kind != "targets"
    for label in data.labels:
        shown = [s for s in data.samplers if any((s, label) in c for c in cells.values())]
        common, m = S.means(cells, shown, label)
        if not m:
            continue
        n_runs = [c[(s, label)].runs for p, c in cells.items() if p in common for s in shown]
        label_T = {p: c[(shown[0], label)].T for p, c in cells.items() if p in common}
        Ts = sorted(set(label_T.values()))
        lines += [f"### {label}" + (f" (T = {', '.join(map(str, Ts))})"
                                     if label != f"T = {Ts[0]}" or len(Ts) > 1 else ""), "",
                  f"{len(common)} of the half's {n_defined} problems, run by every sampler "
                  f"shown; {min(n_runs)}-{max(n_runs)} seeds per (problem, sampler).", "",
                  "| sampler | score | anytime | "
                  + ("problems below random | " if random_based else "")
                  + "s / suggestion |",
                  "|---|---:|---:|" + ("---:|" if random_based else "") + "---:|"]
        for s in sorted(m, key=lambda s: -m[s][0]):
            sub = {p: cells[p] for p in common}
            below = f"{len(below_random(sub, s, label))} of {len(common)} | " if random_based \
                else ""
            lines.append(f"| {s} | {fmt(m[s][0], m[s][1])} | {fmt(m[s][2], m[s][3])} | "
                         f"{below}{suggest_seconds(runs, s, common, label_T):.4f} |")
        lines.append("")
        if data.base in shown:
            others = [s for s in (compare or shown) if s != data.base and s in shown]
            if others:
                lines += [f"Paired against `{data.base}` (other minus {data.base}; ± the paired "
                          "standard error over (problem, seed)):", "",
                          "| sampler | score difference | anytime difference | problems | "
                          "seed pairs |", "|---|---:|---:|---:|---:|"]
                for s in others:
                    d, dse, n_p, n_pairs = S.paired(cells, data.base, s, label)
                    a, ase = S.paired(cells, data.base, s, label, "anytime")[:2]
                    lines.append(f"| {s} | {fmt(d, dse, signed=True)} | "
                                 f"{fmt(a, ase, signed=True)} | {n_p} | {n_pairs} |")
                lines.append("")
            lines += variants(cells, shown, label)
            if random_based:
                below = below_random(cells, data.base, label)
                lines += [f"Problems where `{data.base}` is below random search (mean over "
                          "seeds): " + (", ".join(below) if below else "none") + ".", ""]
        if out_dir is not None:
            name = f"score-{slug}-{re.sub(r'[^a-z0-9]+', '', label.lower())}.png"
            if figure({p: cells[p] for p in common}, shown, label, os.path.join(out_dir, name),
                      f"{suite.title}: {title}, {label}", suite.scoring.unit):
                lines += [f"![mean score over the trials]({name})", ""]
        if paired_per_problem and data.base in shown:
            lines += [f"Score at {label} per problem and its paired difference from "
                      f"`{data.base}` (± the paired standard error over the seeds):", ""]
            lines += per_problem_paired(cells, data.base, shown, label)
        if per_problem_tables:
            for attr, what in (("score", "Score"), ("anytime", "Anytime score")):
                lines += [f"{what} at {label} per problem (mean over seeds; bold: best):", ""]
                lines += per_problem(cells, shown, label, attr)
    return lines


def header(suite: "Suite", dirs: list[str], parts: list[dict], runs: list[dict],
           errors: list[dict], command: str) -> list[str]:
    loads = [r["loadavg"] for r in runs if r.get("loadavg") is not None]
    lines = [f"# {suite.title}", "",
             f"Written {time.strftime('%Y-%m-%d %H:%M')} by `{command}` from {len(runs)} runs"
             + (f" ({len(errors)} failed runs in {ERRORS_FILE})" if errors else "")
             + (f"; 1-min load at the end of the runs {min(loads):.1f}-{max(loads):.1f}"
                if loads else "") + ".", ""]
    if suite.notes:
        lines += [suite.notes, ""]
    if parts:
        lines += ["Runs made by:", ""]
    for p in parts:
        pkg = p.get("package", {})
        v = p.get("versions", {})
        lines.append(
            f"- `{p.get('command')}` ({p.get('dir')}): {p.get('started')} to "
            f"{p.get('finished', '?')}, optuna_gpbandit {pkg.get('commit')}"
            f"{' (modified)' if pkg.get('dirty') else ''}, optuna {v.get('optuna')}, "
            f"{p.get('jobs')} job(s) x {p.get('threads')} thread(s), load "
            f"{p.get('load_start', float('nan')):.1f} -> {p.get('load_end', float('nan')):.1f}")
    lines += ["", f"Score: {suite.scoring.unit}. Rule `{suite.scoring.kind}` "
              f"(`benchmarks/harness/scoring.py`): {S.RULES[suite.scoring.kind]} {S.AVERAGING}",
              ""]
    return lines


def problems_table(data: Data) -> list[str]:
    lines = ["## Problems", "", "f*: the value the score's 100 stands for (per objective seed: "
             "min .. max); r(T): random search's best at T (mean over objective seeds); eval s: "
             "mean wall seconds per evaluation in these runs; inf: failed or non-finite "
             "evaluations in the runs.", "",
             "| problem | half | seeds | f* | " + " | ".join(f"r({x})" for x in data.labels)
             + " | eval s | inf |", "|---|---|---:|---:" + "|---:" * len(data.labels)
             + "|---:|---:|"]
    for p, info in data.infos.items():
        rs = data.runs_of(p)
        fs = list(info.f_star.values())
        f_text = g(fs[0]) if len(fs) == 1 else f"{g(min(fs))} .. {g(max(fs))}" if fs else "n/a"
        rand = [g(float(np.mean(list(info.rand[x].values())))) if info.rand.get(x) else "n/a"
                for x in data.labels]
        extra = (f"; pool best on {info.pool_best} of {len(fs)}, pools "
                 f"{'/'.join(map(str, info.pool_sizes))}" if info.pool_sizes else "")
        lines.append(f"| {p} | {data.suite.half_of(p) or ''} | "
                     f"{len({int(r['seed']) for r in rs})} | {f_text}{extra} | "
                     + " | ".join(rand)
                     + f" | {np.mean([np.mean(r['objective_seconds']) for r in rs]):.3f} | "
                     f"{sum(1 for r in rs for v in r['values'] if not math.isfinite(v))} |")
    return lines + [""]


def render(suite: "Suite", dirs: list[str], *, base: str = "GP-UCB", half: str = "all",
           compare: list[str] | None = None, out_file: str | None = None,
           floor: bool = True, extra: dict | None = None, command: str | None = None,
           paired_per_problem: bool = False) -> str:
    """The report of ``dirs`` (module docstring), written to ``out_file`` (default the first
    directory's ``report.md``; figures beside it); returns its text. ``paired_per_problem``:
    also each problem's paired differences from ``base`` (:func:`per_problem_paired`)."""
    if not floor:
        import dataclasses

        suite = dataclasses.replace(suite, scoring=dataclasses.replace(suite.scoring,
                                                                       floor=None))
    parts, runs, errors = collect(suite, dirs)
    if not runs:
        raise SystemExit(f"no finished run of suite {suite.name} in {', '.join(dirs)} (or their "
                         "subdirectories)")
    cells, infos, labels = score(suite, runs, dirs)
    data = Data(suite, dirs, runs, cells, infos, labels, order({r["sampler"] for r in runs}),
                base, dict(extra or {}))
    command = command or f"python -m benchmarks report {suite.name} {' '.join(dirs)}"
    lines = header(suite, dirs, parts, runs, errors, command)
    out_path = out_file or os.path.join(dirs[0], "report.md")
    out_dir = os.path.dirname(os.path.abspath(out_path))
    halves = [h for h in suite.halves if h != "all"]
    shown_halves = (halves + ["all"] if len(halves) > 1 else halves or ["all"]) \
        if half == "all" else [half]
    per_problem_tables = len(cells) <= 120
    for h in shown_halves:
        names = suite.names(h)
        title = ("Both halves together" if h == "all" and len(halves) > 1 else
                 "All problems" if h == "all" else f"{h.capitalize()} half"
                 + (f" ({suite.half_notes[h]})" if h in suite.half_notes else ""))
        sub = {p: c for p, c in cells.items() if p in names}
        lines += half_section(data, title, sub, len(names), compare, out_dir, h,
                              per_problem_tables, paired_per_problem)
    if suite.sections is not None:
        lines += suite.sections(data)
    lines += problems_table(data)
    if errors:
        lines += ["## Failed runs", "", "| problem | sampler | seed | trials | error |",
                  "|---|---|---:|---:|---|"]
        for e in errors:
            last = (e.get("error") or "").strip().splitlines()[-1:] or [""]
            lines.append(f"| {e['problem']} | {e['sampler']} | {e['seed']} | {e['n_trials']} | "
                         f"`{last[0][:160]}` |")
        lines.append("")
    text = "\n".join(lines) + "\n"
    os.makedirs(out_dir, exist_ok=True)
    with open(out_path, "w") as fh:
        fh.write(text)
    return text
