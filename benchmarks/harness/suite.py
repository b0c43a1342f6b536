"""What the suites' command lines share (``benchmarks/hpo``, ``benchmarks/shapes``,
``benchmarks/bayesmark``): the options of their ``run`` command, the seeds those select, and one
run of tasks through the harness's runner.

A suite's ``run`` (:func:`run_suite`) refuses a result directory that already holds finished runs
unless ``--resume`` is given, appends one "part" (the command, the package's checkout, versions,
load, the suite's own fields) to the directory's ``config.json``, runs the tasks with
``runner.run_tasks`` while the runner's worker initialiser is the suite's (:func:`hooks`: the
spawned workers import only the harness, so a suite's initialiser, imported by name in each
worker, registers the suite's problems there and may replace ``runner.run_one``), restores the
harness's functions afterwards, records the end of the part and writes the suite's report.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from typing import Callable, Iterator

from . import runner
from .cli import _check_samplers, _versions

HARNESS_INIT = runner._worker_init
"""The runner's own worker initialiser (a suite's initialiser calls it first or last)."""
HARNESS_RUN_ONE = runner.run_one
"""The runner's own ``run_one`` (a suite's replacement wraps it)."""

SKLEARN_MODEL_MODULES = ("tree", "ensemble", "neighbors", "neural_network", "linear_model", "svm",
                         "multiclass")
"""scikit-learn's model modules, imported by the ML suites' initialisers before a run starts."""


def add_seed_options(p: argparse.ArgumentParser, *, seeds: int | None, seeds_help: str,
                     trials: int | None, trials_help: str) -> None:
    """``--seeds`` / ``--seed-list``, ``--first-seed``, ``--trials``, ``--jobs``, ``--threads``
    (the defaults and help texts of the suite): what work, on how many workers."""
    group = p.add_mutually_exclusive_group()
    group.add_argument("--seeds", type=int, default=seeds, help=seeds_help)
    group.add_argument("--seed-list", type=int, nargs="+", metavar="SEED")
    p.add_argument("--first-seed", type=int, default=0)
    p.add_argument("--trials", type=int, default=trials, help=trials_help)
    p.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    p.add_argument("--threads", type=int, default=1,
                   help="BLAS / OpenMP / torch threads per run (default 1)")


def add_run_options(p: argparse.ArgumentParser, *, seeds: int | None, seeds_help: str,
                    trials: int | None, trials_help: str, out_help: str) -> None:
    """:func:`add_seed_options`, then ``--out``, ``--resume``, ``--no-report``."""
    add_seed_options(p, seeds=seeds, seeds_help=seeds_help, trials=trials,
                     trials_help=trials_help)
    p.add_argument("--out", default=None, help=out_help)
    p.add_argument("--resume", action="store_true",
                   help="add to --out, skipping the runs it already holds")
    p.add_argument("--no-report", action="store_true")


def seeds_of(args: argparse.Namespace) -> list[int]:
    """``--seed-list``, else ``--seeds`` seeds from ``--first-seed``."""
    if args.seed_list:
        return list(args.seed_list)
    return list(range(args.first_seed, args.first_seed + args.seeds))


def samplers_of(args: argparse.Namespace, default: list[str]) -> list[str]:
    """``--samplers`` (each a known sampler or variant), else ``default``."""
    return _check_samplers(args.samplers) if args.samplers else list(default)


@contextlib.contextmanager
def hooks(worker_init: Callable[[int, list], None]) -> Iterator[None]:
    """The runner's worker initialiser is ``worker_init`` inside the block; afterwards it and
    ``runner.run_one`` (which an initialiser may replace: with ``--jobs 1`` it runs in this
    process) are the harness's own again."""
    runner._worker_init = worker_init
    try:
        yield
    finally:
        runner._worker_init = HARNESS_INIT
        runner.run_one = HARNESS_RUN_ONE


def run_suite(args: argparse.Namespace, *, suite: str, prog: str, out: str, tasks: list,
              fields: dict, worker_init: Callable[[int, list], None],
              after: Callable[[], None] | None = None,
              report: Callable[[], str] | None = None, show_report: bool = False,
              note: str = "", record_cpu: bool = False) -> int:
    """Run ``tasks`` into ``out`` (module docstring); returns the exit status (1 if a run
    failed).

    ``suite``: the name a new ``config.json`` records; ``prog``: the module the command line was
    (``python -m <prog>``); ``fields``: the part's own entries (problems, samplers, ...);
    ``after``: the suite's own work once the runs are over (before the report); ``report``:
    writes the report and returns its text (unless ``--no-report``), printed with
    ``show_report`` unless ``--quiet``; ``note``: said after the result directory;
    ``record_cpu``: record this process's CPU seconds in the part (``parent_cpu_seconds``).
    """
    n_done = len(runner.finished_keys(out)) if os.path.isdir(out) else 0
    if n_done and not args.resume:
        raise SystemExit(f"{out} already holds {n_done} finished runs: pass --resume to add to "
                         "it (finished runs are skipped), or choose another --out")
    os.makedirs(out, exist_ok=True)
    cfg_path = os.path.join(out, runner.CONFIG_FILE)
    config = json.load(open(cfg_path)) if os.path.exists(cfg_path) else {"suite": suite}
    part = {"command": " ".join([f"python -m {prog}"] + sys.argv[1:]),
            "started": time.strftime("%Y-%m-%dT%H:%M:%S"), **fields, "jobs": args.jobs,
            "threads": args.threads, "cpus": os.cpu_count(), "load_start": os.getloadavg()[0],
            "package": runner.package_checkout("--short=12"), "versions": _versions()}
    config.setdefault("parts", []).append(part)

    def save() -> None:
        with open(cfg_path, "w") as fh:
            json.dump(config, fh, indent=1)

    save()
    pkg = part["package"]
    print(f"results: {out}; {note}optuna_gpbandit from {pkg['path']} ({pkg['commit']}"
          f"{', modified' if pkg['dirty'] else ''})", file=sys.stderr, flush=True)
    cpu0 = time.process_time()
    try:
        with hooks(worker_init):
            _, failed = runner.run_tasks(tasks, out, jobs=args.jobs, threads=args.threads,
                                         resume=True)
    finally:
        part.update(finished=time.strftime("%Y-%m-%dT%H:%M:%S"), load_end=os.getloadavg()[0])
        if record_cpu:
            part["parent_cpu_seconds"] = time.process_time() - cpu0
        save()
    if after is not None:
        after()
    if report is not None and not args.no_report:
        print_report(report(), os.path.join(out, "report.md"),
                     quiet=not show_report or getattr(args, "quiet", False))
    return 1 if failed else 0


def print_report(text: str, path: str, quiet: bool = False) -> None:
    """A written report: its text on stdout (unless ``quiet``), where it is on stderr."""
    if not quiet:
        print(text)
    print(f"report: {path}", file=sys.stderr)
