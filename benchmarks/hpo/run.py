"""Command line of the real-HPO suite (``python -m benchmarks.hpo --help``).

``run`` and ``report`` are the harness's (``python -m benchmarks run hpo`` / ``report hpo``:
``benchmarks/harness/cli.py``), reached here with this suite's earlier option names
(``--tasks`` for ``--problems``, ``--held-out`` for ``--half held-out``, ``--default`` for
``--base``); ``time`` and ``list`` are the suite's own.
"""

from __future__ import annotations

import argparse
import os
import sys

from benchmarks.harness import cli, runner

from .tasks import ALL_TASKS, DEFAULT_SAMPLERS, HELD_OUT, time_evaluations

RENAMED = {"--tasks": "--problems", "--default": "--base"}


def translate(argv: list[str]) -> list[str]:
    """This suite's earlier options in the harness's terms (module docstring)."""
    out = []
    for a in argv:
        if a == "--held-out":
            out += ["--half", "held-out"]
        else:
            out.append(RENAMED.get(a, a))
    return out


def _task_names(args: argparse.Namespace) -> list[str]:
    names = args.tasks or list(HELD_OUT if args.held_out else
                               [t for t in ALL_TASKS if t not in HELD_OUT])
    bad = [n for n in names if n not in ALL_TASKS]
    if bad:
        raise SystemExit(f"unknown task(s): {', '.join(bad)}; known: {', '.join(ALL_TASKS)}")
    return names


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
    from .tasks import problem

    for name in ALL_TASKS:
        held = " (held out)" if name in HELD_OUT else ""
        print(f"{name:28s} {problem(name).description}{held}")
    print("samplers (default): " + ", ".join(DEFAULT_SAMPLERS))
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] in (["run"], ["report"]):
        return cli.main([argv[0], "hpo"] + translate(argv[1:]))
    ap = argparse.ArgumentParser(prog="python -m benchmarks.hpo",
                                 description="Real-HPO suite (benchmarks/hpo/__init__.py): run "
                                 "and report are `python -m benchmarks run|report hpo`.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("run", help="python -m benchmarks run hpo ... (--tasks, --held-out, "
                   "--default accepted)")
    sub.add_parser("report", help="python -m benchmarks report hpo DIR ...")
    t = sub.add_parser("time", help="CPU seconds per evaluation of each task")
    t.add_argument("--tasks", nargs="+", metavar="TASK")
    t.add_argument("--held-out", action="store_true", help="time the held-out tasks")
    t.add_argument("--n", type=int, default=20)
    t.set_defaults(func=cmd_time)
    sub.add_parser("list", help="tasks and samplers").set_defaults(func=cmd_list)
    args = ap.parse_args(argv)
    if args.cmd == "time":
        runner.limit_threads(1)
    return args.func(args)
