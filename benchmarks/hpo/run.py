"""Command line of the real-HPO suite (``python -m benchmarks.hpo --help``).

Runs go through the harness's runner (``benchmarks.harness.runner.run_tasks``: ask / tell,
timings, one JSON line per finished run, ``--resume``, ``--jobs``); ``tasks`` registers the HPO
tasks and ``TPE-mv`` with the harness. The runner's spawned workers import only the harness, so
for the duration of a run its worker initialiser is replaced by :func:`_worker_init` here, whose
module import registers the tasks in each worker too.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from benchmarks.harness import runner
from benchmarks.harness.cli import _check_samplers, _versions
from benchmarks.harness.samplers import SAMPLERS

from .tasks import ALL_TASKS, DEFAULT_SAMPLERS, HELD_OUT, TASKS, folds, time_evaluations

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.join(os.path.dirname(HERE), "reports", "hpo")
# Not under DEFAULT_OUT: a report reads its directories' subdirectories too, and the suite's
# means must not take in the held-out tasks.
HELD_OUT_OUT = os.path.join(os.path.dirname(HERE), "reports", "hpo-held-out")
FULL = {"seeds": 10, "trials": 100}

_harness_init = runner._worker_init


def _worker_init(threads: int, tasks: list) -> None:
    """The harness's initialiser, then the data sets, folds and model modules of the tasks."""
    _harness_init(threads, tasks)
    import importlib

    for mod in ("tree", "ensemble", "neighbors", "neural_network", "linear_model", "svm",
                "multiclass"):
        importlib.import_module(f"sklearn.{mod}")
    for name in {t.problem for t in tasks}:
        folds(ALL_TASKS[name].dataset, ALL_TASKS[name].k)


def package_info() -> dict:
    """Where optuna_gpbandit is imported from and the git commit of that checkout."""
    return runner.package_checkout("--short=12")


def _pick(names: list[str] | None, default: list[str], what: str,
          known: list[str] | None = None) -> list[str]:
    names = names or default
    known = default if known is None else known
    bad = [n for n in names if n not in known]
    if bad:
        raise SystemExit(f"unknown {what}: {', '.join(bad)}; known: {', '.join(known)}")
    return names


def _task_names(args: argparse.Namespace) -> list[str]:
    """``--tasks``, any of the suite's or the held-out ones; by default the suite's, or the
    held-out ones with ``--held-out``."""
    return _pick(args.tasks, list(HELD_OUT if args.held_out else TASKS), "task(s)",
                 list(ALL_TASKS))


def cmd_run(args: argparse.Namespace) -> int:
    tasks = _task_names(args)
    samplers = _check_samplers(args.samplers) if args.samplers else list(DEFAULT_SAMPLERS)
    seeds = args.seed_list if args.seed_list else list(
        range(args.first_seed, args.first_seed + args.seeds))
    out = args.out or (HELD_OUT_OUT if args.held_out else DEFAULT_OUT)
    n_done = len(runner.finished_keys(out)) if os.path.isdir(out) else 0
    if n_done and not args.resume:
        raise SystemExit(f"{out} already holds {n_done} finished runs: pass --resume to add to "
                         "it (finished runs are skipped), or choose another --out")
    os.makedirs(out, exist_ok=True)
    cfg_path = os.path.join(out, runner.CONFIG_FILE)
    config = json.load(open(cfg_path)) if os.path.exists(cfg_path) else {"suite": "hpo"}
    part = {"command": " ".join(["python -m benchmarks.hpo"] + sys.argv[1:]),
            "started": time.strftime("%Y-%m-%dT%H:%M:%S"), "tasks": tasks,
            "samplers": samplers, "seeds": seeds, "n_trials": args.trials, "jobs": args.jobs,
            "threads": args.threads, "cpus": os.cpu_count(), "load_start": os.getloadavg()[0],
            "package": package_info(), "versions": _versions()}
    config.setdefault("parts", []).append(part)

    def save() -> None:
        with open(cfg_path, "w") as fh:
            json.dump(config, fh, indent=1)

    save()
    print(f"results: {out}; optuna_gpbandit from {part['package']['path']} "
          f"({part['package']['commit']}{', modified' if part['package']['dirty'] else ''})",
          file=sys.stderr, flush=True)
    runner._worker_init = _worker_init
    try:
        _, failed = runner.run_tasks(runner.make_tasks(tasks, samplers, seeds, args.trials), out,
                                     jobs=args.jobs, threads=args.threads, resume=True)
    finally:
        runner._worker_init = _harness_init
        part.update(finished=time.strftime("%Y-%m-%dT%H:%M:%S"), load_end=os.getloadavg()[0])
        save()
    if not args.no_report:
        from .report import render

        render([out], default=args.default)
        print(f"report: {os.path.join(out, 'report.md')}", file=sys.stderr)
    return 1 if failed else 0


def cmd_report(args: argparse.Namespace) -> int:
    from .report import SCORE_FLOOR, render

    dirs = args.dirs or [DEFAULT_OUT]
    text = render(dirs, default=args.default, out_file=args.file,
                  floor=None if args.no_floor else SCORE_FLOOR)
    if not args.quiet:
        print(text)
    print(f"report: {args.file or os.path.join(dirs[0], 'report.md')}", file=sys.stderr)
    return 0


def cmd_time(args: argparse.Namespace) -> int:
    runner.quiet()
    names = _task_names(args)
    print(f"CPU seconds per evaluation, {args.n} random-search points per task (seed 0), "
          f"{os.environ.get('OMP_NUM_THREADS', '?')} BLAS thread(s), load "
          f"{os.getloadavg()[0]:.2f}\n")
    print("| task | params | mean s | max s | best loss | median loss | capped |")
    print("|---|---|---:|---:|---:|---:|---:|")
    total = 0.0
    for name in names:
        r = time_evaluations([name], n=args.n)[name]
        total += r["mean"]
        print(f"| {name} | {ALL_TASKS[name].kinds()} | {r['mean']:.3f} | {r['max']:.3f} | "
              f"{r['loss_min']:.4g} | {r['loss_median']:.4g} | {r['capped']} |", flush=True)
    print(f"\nmean over the {len(names)} tasks: {total / len(names):.3f} s per evaluation")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    from benchmarks.harness.problems import PROBLEMS

    for name in ALL_TASKS:
        held = " (held out)" if name in HELD_OUT else ""
        print(f"{name:28s} {PROBLEMS[name].description}{held}")
    print("samplers (default): " + ", ".join(DEFAULT_SAMPLERS))
    print("also: " + ", ".join(s for s in SAMPLERS if s not in DEFAULT_SAMPLERS))
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.hpo",
                                 description="Real-HPO suite (benchmarks/hpo/__init__.py).")
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run tasks x samplers x seeds (one JSON line per run)")
    r.add_argument("--tasks", nargs="+", metavar="TASK")
    r.add_argument("--held-out", action="store_true",
                   help="the held-out tasks (no default was chosen on them) instead of the suite")
    r.add_argument("--samplers", nargs="+", metavar="NAME")
    seeds = r.add_mutually_exclusive_group()
    seeds.add_argument("--seeds", type=int, default=FULL["seeds"],
                       help=f"number of seeds, from --first-seed (default {FULL['seeds']})")
    seeds.add_argument("--seed-list", type=int, nargs="+", metavar="SEED")
    r.add_argument("--first-seed", type=int, default=0)
    r.add_argument("--trials", type=int, default=FULL["trials"],
                   help=f"trials per run (default {FULL['trials']}; the report scores a "
                   "100-trial run at 40 and at 100)")
    r.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    r.add_argument("--threads", type=int, default=1,
                   help="BLAS / OpenMP / torch threads per run (default 1)")
    r.add_argument("--out", default=None, help="result directory (default "
                   "benchmarks/reports/hpo, with --held-out benchmarks/reports/hpo-held-out)")
    r.add_argument("--resume", action="store_true",
                   help="add to --out, skipping the runs it already holds")
    r.add_argument("--no-report", action="store_true")
    r.add_argument("--default", default="GP-UCB", help="the sampler the targets judge")
    r.set_defaults(func=cmd_run)
    p = sub.add_parser("report", help="write report.md of one or more result directories "
                       "(each with its immediate subdirectories)")
    p.add_argument("dirs", nargs="*", metavar="DIR")
    p.add_argument("--file", default=None, help="output (default DIR/report.md, first DIR)")
    p.add_argument("--default", default="GP-UCB", help="the sampler the targets judge")
    p.add_argument("--quiet", action="store_true", help="do not print the report")
    p.add_argument("--no-floor", action="store_true",
                   help="do not floor the runs' scores at -100 (report.py's docstring)")
    p.set_defaults(func=cmd_report)
    t = sub.add_parser("time", help="CPU seconds per evaluation of each task")
    t.add_argument("--tasks", nargs="+", metavar="TASK")
    t.add_argument("--held-out", action="store_true", help="time the held-out tasks")
    t.add_argument("--n", type=int, default=20)
    t.set_defaults(func=cmd_time)
    sub.add_parser("list", help="tasks and samplers").set_defaults(func=cmd_list)
    args = ap.parse_args(argv)
    if args.cmd in ("run", "time"):
        runner.limit_threads(getattr(args, "threads", 1))
    return args.func(args)
