"""Command line of the Bayesmark suite (``python -m benchmarks.bayesmark --help``).

Runs go through the harness's runner (``benchmarks.harness.runner.run_tasks``: ask / tell,
timings, one JSON line per finished run, ``--resume``, ``--jobs``) by way of
``benchmarks.harness.suite.run_suite``, as ``benchmarks/hpo/run.py``'s do: importing
``problems`` registers the problems with the harness, and for the duration of a run the runner's
worker initialiser is :func:`_worker_init` (its module import registers the problems in spawned
workers too). One more hook: a Bayesmark objective depends on the run's seed (``shuffle_seed``),
which the runner does not pass to a problem, so the initialiser replaces ``runner.run_one`` by
:func:`_run_one`, which binds the problem's name to the objective of the task's seed
(``problems.bind``) and then calls the harness's ``run_one``. After the runs, ``run`` evaluates
the random-search pool of each (problem, seed) it ran that the result directory does not hold
yet (``pool.py``), which the report scores against.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from benchmarks.harness import runner, suite
from benchmarks.harness.samplers import SAMPLERS

from . import definitions as D
from . import pool
from .problems import ALL, HALF_PROBLEMS, bind

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.join(os.path.dirname(HERE), "reports", "bayesmark")
FULL = {"seeds": 10, "trials": 40}
DEFAULT_SAMPLERS = ["GP-UCB", "GPSampler", "TPE", "Random"]
SLOW = [n for n, p in ALL.items() if p.model.startswith("MLP") and p.dataset == "digits"]
"""The problems ``--skip-slow`` leaves out: an MLP on digits, seconds per evaluation (README)."""


def _run_one(task: runner.Task) -> dict:
    """The harness's ``run_one`` on the objective of the task's seed."""
    bind(task.problem, task.seed)
    return suite.HARNESS_RUN_ONE(task)


def _worker_init(threads: int, tasks: list) -> None:
    """The harness's initialiser, the model modules and the data splits (``pool.warm``), then
    the seed hook."""
    pool.warm(threads, tasks)
    runner.run_one = _run_one


def select(half: str, problems: list[str] | None, models: list[str] | None,
           skip_slow: bool = False) -> list[str]:
    """The problems of ``half`` (tuning / validation / all), narrowed by ``--problems`` or
    ``--models`` and without :data:`SLOW` with ``skip_slow``; a named problem or model outside
    the half is an error."""
    names = HALF_PROBLEMS[half]
    if problems:
        bad = [p for p in problems if p not in ALL]
        if bad:
            raise SystemExit(f"unknown problem(s): {', '.join(bad)} (python -m "
                             "benchmarks.bayesmark list)")
        outside = [p for p in problems if p not in names]
        if outside:
            raise SystemExit(f"not in the {half} half: {', '.join(outside)} (pass --half all "
                             "or the problem's half)")
        names = [p for p in names if p in problems]
    if models:
        bad = [m for m in models if m not in D.FAMILIES]
        if bad:
            raise SystemExit(f"unknown model(s): {', '.join(bad)}; known: "
                             f"{', '.join(D.FAMILIES)}")
        names = [p for p in names if ALL[p].model in models]
    if skip_slow:
        names = [p for p in names if p not in SLOW]
    if not names:
        raise SystemExit(f"no problem selected in the {half} half")
    return names


def _pool_of(args: argparse.Namespace) -> int:
    """``--pool``, or ``pool.pool_size(--trials)`` if not given; one shorter than
    ``pool.least_pool(--trials)`` is an error naming it."""
    if args.pool is None:
        return pool.pool_size(args.trials)
    if args.pool < pool.least_pool(args.trials):
        raise SystemExit(f"--pool {args.pool} is shorter than {pool.least_pool(args.trials)} "
                         f"(1.6 x --trials {args.trials}): random search's expected best at "
                         f"{args.trials} trials would lean on the pool's single best value "
                         "(README.md, Scoring)")
    return args.pool


def cmd_run(args: argparse.Namespace) -> int:
    problems = select(args.half, args.problems, args.models, args.skip_slow)
    samplers = suite.samplers_of(args, DEFAULT_SAMPLERS)
    seeds = suite.seeds_of(args)
    out = args.out or os.path.join(DEFAULT_OUT, args.half)
    n_pool = _pool_of(args)

    def pools() -> None:
        pool.ensure(out, [(p, s) for s in seeds for p in problems], n_pool, jobs=args.jobs,
                    threads=args.threads)

    def report() -> str:
        from .report import render

        return render([out], base=args.base, half="all")

    return suite.run_suite(
        args, suite="bayesmark", prog="benchmarks.bayesmark", out=out,
        tasks=runner.make_tasks(problems, samplers, seeds, args.trials),
        fields={"half": args.half, "problems": problems, "samplers": samplers, "seeds": seeds,
                "n_trials": args.trials, "pool": n_pool},
        worker_init=_worker_init, after=pools, report=report,
        note=f"{len(problems)} problems ({args.half} half); ")


def cmd_report(args: argparse.Namespace) -> int:
    from .report import render

    dirs = args.dirs or [DEFAULT_OUT]
    text = render(dirs, base=args.base, half=args.half, compare=args.compare,
                  out_file=args.file, no_floor=args.no_floor)
    suite.print_report(text, args.file or os.path.join(dirs[0], "report.md"), args.quiet)
    return 0


def cmd_pool(args: argparse.Namespace) -> int:
    """Evaluate, or extend, the random-search pools of the selected (problem, seed) into
    ``--out``, starting from the pools of ``--from`` (a longer pool extends a shorter one)."""
    problems = select(args.half, args.problems, args.models, args.skip_slow)
    keys = [(p, s) for s in suite.seeds_of(args) for p in problems]
    known = pool.read(list(args.from_dirs) + [args.out])
    pool.ensure(args.out, keys, _pool_of(args), jobs=args.jobs, threads=args.threads,
                known=known)
    return 0


def cmd_time(args: argparse.Namespace) -> int:
    """CPU seconds per evaluation at random-search points, per problem and per family, and the
    CPU estimate of a full run."""
    import numpy as np
    import optuna

    runner.quiet()
    names = select(args.half, args.problems, args.models, args.skip_slow)
    print(f"CPU seconds per evaluation, {args.n} random-search points per problem (seed "
          f"{args.seed}), {os.environ.get('OMP_NUM_THREADS', '?')} BLAS thread(s), load "
          f"{os.getloadavg()[0]:.2f}\n")
    print("| problem | half | params | mean s | max s | best loss | median loss | inf |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    means: dict[str, float] = {}
    for name in names:
        p = ALL[name]
        study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=args.seed))
        p.evaluate(p.suggest(study.ask()), args.seed)  # data, imports: untimed
        secs, losses = [], []
        for _ in range(args.n):
            raw = p.suggest(study.ask())
            t0 = time.process_time()
            losses.append(p.evaluate(raw, args.seed))
            secs.append(time.process_time() - t0)
        means[name] = float(np.mean(secs))
        fin = [v for v in losses if np.isfinite(v)]
        print(f"| {name} | {p.half} | {len(p.params)} | {means[name]:.3f} | {max(secs):.3f} | "
              + (f"{min(fin):.4g} | {np.median(fin):.4g}" if fin else "n/a | n/a")
              + f" | {len(losses) - len(fin)} |", flush=True)
    print("\n| family | half | problems | mean s per evaluation | slowest problem |")
    print("|---|---|---:|---:|---|")
    for m in D.FAMILIES:
        ps = [n for n in names if ALL[n].model == m]
        if ps:
            slow = max(ps, key=means.get)
            print(f"| {m} | {D.half_of(m)} | {len(ps)} | {np.mean([means[n] for n in ps]):.3f} "
                  f"| {slow} ({means[slow]:.2f} s) |")
    total = sum(means.values())
    evals = args.trials * args.seeds * args.samplers
    n_pool = _pool_of(args)
    print(f"\nObjective CPU of {len(names)} problems x {args.trials} trials x {args.seeds} seeds "
          f"x {args.samplers} samplers: {total * evals / 3600:.1f} h; of the random-search pools "
          f"({n_pool} evaluations per (problem, seed), once: README.md): "
          f"{total * n_pool * args.seeds / 3600:.1f} h; the samplers' own time comes on top")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    for half in ("tuning", "validation"):
        print(f"{half} half: families {', '.join(D.HALVES[half])}")
        for name in HALF_PROBLEMS[half]:
            print(f"  {name:24s} {ALL[name].kinds()}")
    print("samplers (default): " + ", ".join(DEFAULT_SAMPLERS))
    print("also: " + ", ".join(s for s in SAMPLERS if s not in DEFAULT_SAMPLERS))
    return 0


def _selection(p: argparse.ArgumentParser, default_half: str) -> None:
    p.add_argument("--half", choices=["tuning", "validation", "all"], default=default_half,
                   help=f"which half of the problems (default {default_half}; README.md)")
    p.add_argument("--problems", nargs="+", metavar="NAME", help="only these (of the half)")
    p.add_argument("--models", "--families", dest="models", nargs="+", metavar="MODEL",
                   help="only these families")
    p.add_argument("--skip-slow", action="store_true",
                   help=f"leave out the MLPs on digits ({len(SLOW)} problems, seconds per "
                   "evaluation)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.bayesmark",
                                 description="Bayesmark's problems, unedited (README.md).")
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run problems x samplers x seeds (one JSON line per run)")
    _selection(r, "tuning")
    r.add_argument("--samplers", nargs="+", metavar="NAME",
                   help=f"default: {' '.join(DEFAULT_SAMPLERS)}")
    suite.add_run_options(
        r, seeds=FULL["seeds"],
        seeds_help=f"number of seeds, from --first-seed (default {FULL['seeds']})",
        trials=FULL["trials"], trials_help=f"trials per run (default {FULL['trials']}; a "
        "100-trial run is scored at 40 and at 100)",
        out_help="result directory (default benchmarks/reports/bayesmark/<half>)")
    r.add_argument("--pool", type=int, default=None,
                   help=f"random-search pool per (problem, seed), at least 1.6 x --trials "
                   f"(default {pool.POOL_N}, or 1.6 x --trials if more; README.md, Scoring)")
    r.add_argument("--base", default="GP-UCB", help="the sampler the paired differences judge")
    r.set_defaults(func=cmd_run)
    p = sub.add_parser("report", help="write report.md of result directories (each with its "
                       "immediate subdirectories), per half")
    p.add_argument("dirs", nargs="*", metavar="DIR")
    p.add_argument("--half", choices=["tuning", "validation", "all"], default="all",
                   help="the half to report; all: each half, then both together (default)")
    p.add_argument("--base", default="GP-UCB", help="paired differences against this sampler")
    p.add_argument("--compare", nargs="+", metavar="NAME",
                   help="the samplers to pair with --base (default: all others)")
    p.add_argument("--file", default=None, help="output (default DIR/report.md, first DIR)")
    p.add_argument("--quiet", action="store_true", help="do not print the report")
    p.add_argument("--no-floor", action="store_true",
                   help="do not floor the runs' scores at -100")
    p.set_defaults(func=cmd_report)
    t = sub.add_parser("time", help="CPU seconds per evaluation, and a full run's estimate")
    _selection(t, "all")
    t.add_argument("--n", type=int, default=5, help="evaluations per problem (default 5)")
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--trials", type=int, default=FULL["trials"], help="for the estimate")
    t.add_argument("--seeds", type=int, default=FULL["seeds"], help="for the estimate")
    t.add_argument("--samplers", type=int, default=len(DEFAULT_SAMPLERS),
                   help="number of samplers, for the estimate")
    t.add_argument("--pool", type=int, default=None,
                   help="pool size, for the estimate (default as for run)")
    t.set_defaults(func=cmd_time)
    q = sub.add_parser("pool", help="evaluate or extend the random-search pools of a selection "
                       "(run and report do so themselves where a pool is missing or short)")
    _selection(q, "tuning")
    suite.add_seed_options(
        q, seeds=FULL["seeds"], seeds_help=f"number of seeds, from --first-seed (default "
        f"{FULL['seeds']})", trials=FULL["trials"],
        trials_help=f"the longest budget the pools score (default {FULL['trials']})")
    q.add_argument("--pool", type=int, default=None, help="pool size (default as for run)")
    q.add_argument("--out", required=True, help="the directory the pools are written to")
    q.add_argument("--from", dest="from_dirs", nargs="*", default=[], metavar="DIR",
                   help="result directories whose pools are extended, not redrawn")
    q.set_defaults(func=cmd_pool)
    sub.add_parser("list", help="problems by half, samplers").set_defaults(func=cmd_list)
    sub.add_parser("check", help="compare the losses with Bayesmark's own (check.py; "
                   "python -m benchmarks.bayesmark check --help)", add_help=False)
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["check"]:  # its own options: check.py
        from . import check

        return check.main(argv[1:])
    args = ap.parse_args(argv)
    if args.cmd in ("run", "time", "pool"):
        runner.limit_threads(getattr(args, "threads", 1))
    return args.func(args)
