"""Command line of the Bayesmark suite (``python -m benchmarks.bayesmark --help``).

``run``, ``report`` and ``pool`` are the harness's (``python -m benchmarks run|report|pool
bayesmark``: ``benchmarks/harness/cli.py``), with the same options; ``time``, ``list`` and
``check`` (``check.py``) are the suite's own.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from benchmarks.harness import cli, runner
from benchmarks.harness import pool as P

from . import definitions as D
from .problems import ALL, HALF_PROBLEMS
from .suite import DEFAULT_SAMPLERS, SUITE


def cmd_time(args: argparse.Namespace) -> int:
    """CPU seconds per evaluation at random-search points, per problem and per family, and the
    CPU estimate of a full run."""
    import numpy as np
    import optuna

    runner.quiet()
    names = cli.select(SUITE, args)
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
    n_pool = P.pool_size(args.trials) if args.pool is None else args.pool
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
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] in (["run"], ["report"], ["pool"]):
        return cli.main([argv[0], "bayesmark"] + argv[1:])
    if argv[:1] == ["check"]:  # its own options: check.py
        from . import check

        return check.main(argv[1:])
    ap = argparse.ArgumentParser(prog="python -m benchmarks.bayesmark",
                                 description="Bayesmark's problems, unedited (README.md); run, "
                                 "report and pool are `python -m benchmarks run|report|pool "
                                 "bayesmark`.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("run", "report", "pool"):
        sub.add_parser(name, help=f"python -m benchmarks {name} bayesmark ...", add_help=False)
    t = sub.add_parser("time", help="CPU seconds per evaluation, and a full run's estimate")
    cli.add_selection(t, SUITE, "all")
    t.add_argument("--n", type=int, default=5, help="evaluations per problem (default 5)")
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--trials", type=int, default=40, help="for the estimate")
    t.add_argument("--seeds", type=int, default=SUITE.seeds, help="for the estimate")
    t.add_argument("--samplers", type=int, default=len(DEFAULT_SAMPLERS),
                   help="number of samplers, for the estimate")
    t.add_argument("--pool", type=int, default=None,
                   help="pool size, for the estimate (default as for run)")
    t.set_defaults(func=cmd_time)
    sub.add_parser("list", help="problems by half, samplers").set_defaults(func=cmd_list)
    sub.add_parser("check", help="compare the losses with Bayesmark's own (check.py; "
                   "python -m benchmarks.bayesmark check --help)", add_help=False)
    args = ap.parse_args(argv)
    if args.cmd == "time":
        runner.limit_threads(1)
    return args.func(args)
