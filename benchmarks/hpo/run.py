"""Command line of the real-HPO suite (``python -m benchmarks.hpo --help``).

Runs go through the harness's runner (``benchmarks.harness.runner.run_tasks``: ask / tell,
timings, one JSON line per finished run, ``--resume``, ``--jobs``) by way of
``benchmarks.harness.suite.run_suite``; ``tasks`` registers the HPO tasks and ``TPE-mv`` with the
harness. The runner's spawned workers import only the harness, so for the duration of a run its
worker initialiser is replaced by :func:`_worker_init` here, whose module import registers the
tasks in each worker too.
"""

from __future__ import annotations

import argparse
import os

from benchmarks.harness import runner, suite
from benchmarks.harness.samplers import SAMPLERS

from .tasks import ALL_TASKS, DEFAULT_SAMPLERS, HELD_OUT, TASKS, folds, time_evaluations

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.join(os.path.dirname(HERE), "reports", "hpo")
# Not under DEFAULT_OUT: a report reads its directories' subdirectories too, and the suite's
# means must not take in the held-out tasks.
HELD_OUT_OUT = os.path.join(os.path.dirname(HERE), "reports", "hpo-held-out")
FULL = {"seeds": 10, "trials": 100}


def _worker_init(threads: int, tasks: list) -> None:
    """The harness's initialiser, then the data sets, folds and model modules of the tasks."""
    suite.HARNESS_INIT(threads, tasks)
    runner.import_modules(f"sklearn.{m}" for m in suite.SKLEARN_MODEL_MODULES)
    for name in {t.problem for t in tasks}:
        folds(ALL_TASKS[name].dataset, ALL_TASKS[name].k)


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
    samplers = suite.samplers_of(args, DEFAULT_SAMPLERS)
    seeds = suite.seeds_of(args)
    out = args.out or (HELD_OUT_OUT if args.held_out else DEFAULT_OUT)

    def report() -> str:
        from .report import render

        return render([out], default=args.default)

    return suite.run_suite(
        args, suite="hpo", prog="benchmarks.hpo", out=out,
        tasks=runner.make_tasks(tasks, samplers, seeds, args.trials),
        fields={"tasks": tasks, "samplers": samplers, "seeds": seeds, "n_trials": args.trials},
        worker_init=_worker_init, report=report)


def cmd_report(args: argparse.Namespace) -> int:
    from .report import SCORE_FLOOR, render

    dirs = args.dirs or [DEFAULT_OUT]
    text = render(dirs, default=args.default, out_file=args.file,
                  floor=None if args.no_floor else SCORE_FLOOR)
    suite.print_report(text, args.file or os.path.join(dirs[0], "report.md"), args.quiet)
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
    suite.add_run_options(
        r, seeds=FULL["seeds"],
        seeds_help=f"number of seeds, from --first-seed (default {FULL['seeds']})",
        trials=FULL["trials"], trials_help=f"trials per run (default {FULL['trials']}; the report "
        "scores a 100-trial run at 40 and at 100)", out_help="result directory (default "
        "benchmarks/reports/hpo, with --held-out benchmarks/reports/hpo-held-out)")
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
