#!/usr/bin/env python
"""Short studies with several threads: the best value of ``study.optimize(n_jobs=J)`` beside the
same study run sequentially.

Each run minimises a harness problem (default Branin, the study of
``tests/test_reliability.py``'s threaded check) for ``--trials`` trials with ``n_jobs`` threads
sharing one in-memory study. Threaded runs are not reproducible (the order of asks and tells
depends on timing), so the table gives the spread over the seeds: min, median and max of the
best value's regret, per sampler and ``n_jobs``. ``--sleep S`` makes each evaluation wait ``S``
seconds, as a training job does, so that the other threads' trials are pending while a thread
asks (with an instant objective they mostly are not). Samplers are harness names or variants, e.g.
``'GP-UCB{"beta": {"early_factor": 1.0}, "n_startup_trials": 4}'``.

    python benchmarks/bench_threads.py --samplers 'GP-UCB{"n_startup_trials": 4}' --jobs 1 4 --seeds 10
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from _common import limit_threads, threads_from_argv

if __name__ == "__main__":
    limit_threads(threads_from_argv(sys.argv[1:], default="1"))

import numpy as np  # noqa: E402
import optuna  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchmarks.harness.problems import problem_with_minimum  # noqa: E402
from benchmarks.harness.samplers import make_sampler, unknown_samplers  # noqa: E402


def run(problem, sampler: str, seed: int, n_jobs: int, trials: int, sleep: float) -> float:
    """Regret of the best value of one run."""
    study = optuna.create_study(sampler=make_sampler(sampler, seed))

    def objective(trial: optuna.Trial) -> float:
        value = float(problem.evaluate(problem.suggest(trial)))
        time.sleep(sleep)  # a training job's duration: its trial stays pending meanwhile
        return value

    study.optimize(objective, n_trials=trials, n_jobs=n_jobs)
    return float(study.best_value - problem.minimum)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--problem", default="branin")
    ap.add_argument("--samplers", nargs="+", default=["GP-UCB", "GP-TS"])
    ap.add_argument("--jobs", type=int, nargs="+", default=[1, 4], help="n_jobs values")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--trials", type=int, default=32)
    ap.add_argument("--sleep", type=float, default=0.0,
                    help="seconds each evaluation waits (a slow objective), default 0")
    ap.add_argument("--threads", default="1", help="BLAS threads (read before import)")
    args = ap.parse_args()
    bad = unknown_samplers(args.samplers)
    if bad:
        ap.error("unknown samplers: " + "; ".join(bad))
    if any(j < 1 for j in args.jobs) or args.seeds < 1 or args.trials < 1:
        ap.error(f"--jobs, --seeds and --trials must be >= 1, got {args.jobs}, {args.seeds} "
                 f"and {args.trials}")
    if not args.sleep >= 0:
        ap.error(f"--sleep must be >= 0, got {args.sleep}")
    try:
        problem = problem_with_minimum(args.problem)
    except ValueError as e:
        ap.error(str(e))
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    print(f"`python benchmarks/bench_threads.py {' '.join(sys.argv[1:])}`: {args.problem}, "
          f"{args.trials} trials, seeds 0-{args.seeds - 1}, {args.sleep:g} s per evaluation; "
          "regret of the best value\n")
    print("| sampler | n_jobs | min | median | max | s / run |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in args.samplers:
        for n_jobs in args.jobs:
            start = time.perf_counter()
            r = [run(problem, name, seed, n_jobs, args.trials, args.sleep)
                 for seed in range(args.seeds)]
            s = (time.perf_counter() - start) / args.seeds
            print(f"| {name} | {n_jobs} | {min(r):.3g} | {float(np.median(r)):.3g} | "
                  f"{max(r):.3g} | {s:.1f} |", flush=True)


if __name__ == "__main__":
    main()
