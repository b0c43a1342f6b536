"""Command line of the objective-shapes suite (``python -m benchmarks.shapes --help``).

Runs go through the harness's runner (``benchmarks.harness.runner.run_tasks``: ask / tell,
timings, one JSON line per finished run, ``--resume``, ``--jobs``) by way of
``benchmarks.harness.suite.run_suite``. For the duration of a run two of the runner's module
functions are replaced, as ``benchmarks.hpo`` replaces its worker
initialiser: ``_worker_init`` by :func:`_worker_init` here (its module import registers the
suite's problems and samplers in each spawned worker too), and ``run_one`` by :func:`run_one`,
which calls the harness's ``run_one`` unchanged and adds one field to the run's JSON record:

``model_trials``
    per trial, whether it carries our samplers' ``gpbandit:state`` record (a system attr, stored
    in chunks ``gpbandit:state:0``, ...), which they write on the trials the model chose and not
    on start-up trials. False throughout for Optuna's samplers, which write none.

The study is reached through the problem's ``suggest`` (``trial.study``), wrapped for the run.
"""

from __future__ import annotations

import argparse
import dataclasses
import os

from benchmarks.harness import runner, suite
from benchmarks.harness.cli import _check_samplers
from benchmarks.harness.problems import PROBLEMS
from benchmarks.harness.samplers import SAMPLERS

from . import problems as _problems  # noqa: F401  (registers the problems and samplers)
from .suites import FULL, SUITES, select, tasks

HERE = os.path.dirname(os.path.abspath(__file__))
REPORTS = os.path.join(os.path.dirname(HERE), "reports")
STATE_ATTR = "gpbandit:state"


def is_model_trial(system_attrs: dict) -> bool:
    """Whether a trial carries a ``gpbandit:state`` record (whole or chunked)."""
    return any(k == STATE_ATTR or k.startswith(STATE_ATTR + ":") for k in system_attrs)


def run_one(task: runner.Task) -> dict:
    """The harness's ``run_one`` of ``task``, its record extended by ``model_trials``."""
    problem = PROBLEMS[task.problem]
    studies: list = []

    def suggest(trial):
        if not studies:
            studies.append(trial.study)
        return problem.suggest(trial)

    PROBLEMS[task.problem] = dataclasses.replace(problem, suggest=suggest)
    try:
        record = suite.HARNESS_RUN_ONE(task)
    finally:
        PROBLEMS[task.problem] = problem
    trials = studies[0].trials if studies else []
    record["model_trials"] = [is_model_trial(t.system_attrs) for t in trials]
    return record


def install() -> None:
    runner.run_one = run_one


def _worker_init(threads: int, task_list: list) -> None:
    """This module's import (problems and samplers registered), ``run_one`` replaced, then the
    harness's initialiser."""
    install()
    suite.HARNESS_INIT(threads, task_list)


def run_tasks(task_list: list, out: str, jobs: int = 1, threads: int = 1, resume: bool = True
              ) -> tuple[int, int]:
    """``runner.run_tasks`` with this suite's worker initialiser and ``run_one``."""
    with suite.hooks(_worker_init):
        return runner.run_tasks(task_list, out, jobs=jobs, threads=threads, resume=resume)


# --------------------------------------------------------------------------- commands
def cmd_run(args: argparse.Namespace) -> int:
    if args.samplers:
        _check_samplers(args.samplers)
    groups = select(args.suite, args.groups, args.problems, args.samplers, args.seeds,
                    args.trials)
    if not groups:
        raise SystemExit("nothing to run: no group keeps a problem and a sampler")
    task_list = tasks(groups, args.first_seed, args.seed_list)
    out = args.out or os.path.join(REPORTS, f"shapes-{args.suite}")

    def report() -> str:
        from .report import render

        return render([out])

    return suite.run_suite(
        args, suite="shapes", prog="benchmarks.shapes", out=out, tasks=task_list,
        fields={"suite": args.suite, "groups": [dataclasses.asdict(g) for g in groups],
                "runs": len(task_list)},
        worker_init=_worker_init, report=report, show_report=True, record_cpu=True)


def cmd_report(args: argparse.Namespace) -> int:
    from .report import render

    text = render(args.dirs, out_file=args.file, baseline=args.baseline)
    suite.print_report(text, args.file or os.path.join(args.dirs[0], "report.md"), args.quiet)
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    from .problems import SHAPES

    for name, p in {**SHAPES, "hartmann6": PROBLEMS["hartmann6"]}.items():
        print(f"{name:16s} f* = {p.minimum:<12.6g} {p.description}")
    for name, groups in SUITES.items():
        n = len(tasks(groups))
        print(f"\nsuite {name} ({n} runs):")
        for g in groups:
            print(f"  {g.name:9s} {g.trials:3d} trials x {g.seeds:2d} seeds: "
                  f"{', '.join(g.problems)} | {', '.join(g.samplers)}")
    print("\nsamplers: " + ", ".join(SAMPLERS))
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.shapes",
                                 description="Objective-shapes suite (issue 47; "
                                 "benchmarks/shapes/__init__.py).")
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run a suite's groups (one JSON line per finished run)")
    r.add_argument("--suite", choices=list(SUITES), default="quick")
    r.add_argument("--groups", nargs="+", metavar="GROUP",
                   help="only these groups (" + ", ".join(g.name for g in FULL) + ")")
    r.add_argument("--problems", nargs="+", metavar="NAME", help="only these problems")
    r.add_argument("--samplers", nargs="+", metavar="NAME",
                   help="only these samplers, on the groups that run them by default (a "
                   "sampler no group runs by default, e.g. a variant, runs on all)")
    suite.add_run_options(
        r, seeds=None, seeds_help="number of seeds of every group (default: the group's)",
        trials=None, trials_help="trials per run of every group (default: the group's budget)",
        out_help="result directory (default benchmarks/reports/shapes-<suite>)")
    r.add_argument("--quiet", action="store_true", help="do not print the report")
    r.set_defaults(func=cmd_run)
    p = sub.add_parser("report", help="write report.md of one or more result directories "
                       "(each with its immediate subdirectories)")
    p.add_argument("dirs", nargs="+", metavar="DIR")
    p.add_argument("--baseline", nargs="+", default=None, metavar="DIR",
                   help="result directories of today's code, for the branches check's 'best "
                   "value no worse than today's'")
    p.add_argument("--file", default=None, help="output (default DIR/report.md, first DIR)")
    p.add_argument("--quiet", action="store_true", help="do not print the report")
    p.set_defaults(func=cmd_report)
    sub.add_parser("list", help="problems, suites and samplers").set_defaults(func=cmd_list)
    args = ap.parse_args(argv)
    if args.cmd == "run":
        runner.limit_threads(args.threads)
    return args.func(args)
