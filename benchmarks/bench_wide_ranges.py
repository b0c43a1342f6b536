#!/usr/bin/env python
"""Time per suggestion of ``GPUCBSampler`` with wide integer and fine-step parameters (issue 14).

A 2-D problem, ``f = (x - 0.3)^2 + (u - 0.7)^2`` with ``x = suggest_float("x", 0, 1)`` and ``u``
the second parameter rescaled to ``[0, 1]``, in four variants of that second parameter:

* ``a``: ``suggest_float("y", 0, 1)`` (the reference);
* ``b``: ``suggest_int("n", 0, 10**7)``;
* ``c``: ``suggest_int("n", 0, 10**12)``;
* ``d``: ``suggest_float("v", 0, 1e6, step=1e-6)``.

Each variant runs ``--trials`` trials (default 40) with ``GPUCBSampler(seed)`` for each of
``--seeds`` seeds (default 0 1 2; variants interleaved within a seed so a change of machine load
hits them alike). Every ask + suggest + tell step after the sampler's startup trials is timed
with ``time.perf_counter`` (the objective is not timed). The table gives the mean over those
steps and seeds, the ratio to variant ``a`` and the best value found. Issue 14 asks for ``b`` to
cost at most 2x ``a``.

Run ``python -m benchmarks.bench_wide_ranges`` or ``python benchmarks/bench_wide_ranges.py``
(``--help`` for the options; ``--threads N`` sizes the BLAS pools, default 1).
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import statistics
import sys
import time
from typing import Callable

if __package__:
    from benchmarks._common import limit_threads, threads_from_argv
else:
    from _common import limit_threads, threads_from_argv

if __name__ == "__main__":  # before numpy / scipy load their thread pools
    limit_threads(threads_from_argv(sys.argv[1:], default="1"))

import numpy as np  # noqa: E402
import optuna  # noqa: E402

from optuna_gpbandit import GPUCBSampler  # noqa: E402
from optuna_gpbandit._startup import startup_count  # noqa: E402

Suggest = Callable[[optuna.Trial], float]  # the second parameter, rescaled to [0, 1]
VARIANTS: dict[str, tuple[str, Suggest]] = {
    "a": ("float x + float y", lambda t: t.suggest_float("y", 0.0, 1.0)),
    "b": ("float x + int 0..1e7", lambda t: t.suggest_int("n", 0, 10**7) / 1e7),
    "c": ("float x + int 0..1e12", lambda t: t.suggest_int("n", 0, 10**12) / 1e12),
    "d": ("float x + float 0..1e6 step 1e-6", lambda t: t.suggest_float("v", 0.0, 1e6,
                                                                          step=1e-6) / 1e6),
}
REFERENCE = "a"


def run(variant: str, seed: int, n_trials: int) -> tuple[list[float], float]:
    """Wall seconds of each step after startup, and the best value, of one study."""
    sampler = GPUCBSampler(seed=seed)
    study = optuna.create_study(sampler=sampler)
    suggest = VARIANTS[variant][1]
    n_startup = startup_count(sampler._settings.n_startup_trials, 2)  # two parameters
    times = []
    for i in range(n_trials):
        t0 = time.perf_counter()
        trial = study.ask()
        x, u = trial.suggest_float("x", 0.0, 1.0), suggest(trial)
        t1 = time.perf_counter()
        value = (x - 0.3) ** 2 + (u - 0.7) ** 2  # not timed
        t2 = time.perf_counter()
        study.tell(trial, value)
        if i >= n_startup:
            times.append((t1 - t0) + (time.perf_counter() - t2))
    return times, study.best_value


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--trials", type=int, default=40, help="trials per study (default: 40)")
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2],
                   help="sampler seeds (default: 0 1 2)")
    p.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS),
                   help="variants to run (default: all)")
    p.add_argument("--threads", type=int, default=1, metavar="N",
                   help="BLAS / OpenMP threads, set before numpy loads (default: 1)")
    args = p.parse_args(argv)
    if args.trials < 7:
        p.error("--trials must be >= 7 (5 startup trials + 2 timed)")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    print(f"# Time per suggestion, GPUCBSampler, 2-D, {args.trials} trials, seeds {args.seeds}")
    print(f"# python {platform.python_version()}; optuna {optuna.__version__}; numpy "
          f"{np.__version__}; {os.cpu_count()} CPUs; load average %.2f %.2f %.2f"
          % os.getloadavg())
    sys.stdout.flush()
    times: dict[str, list[float]] = {v: [] for v in args.variants}
    best: dict[str, list[float]] = {v: [] for v in args.variants}
    t_start = time.perf_counter()
    for seed in args.seeds:
        for v in args.variants:
            steps, b = run(v, seed, args.trials)
            times[v] += steps
            best[v].append(b)
            print(f"#   seed={seed} {v}: mean {statistics.fmean(steps) * 1e3:.1f} ms, max "
                  f"{max(steps) * 1e3:.1f} ms, best {b:.2e}  "
                  f"[{time.perf_counter() - t_start:.0f} s elapsed]", file=sys.stderr)
    ref = statistics.fmean(times[REFERENCE]) if REFERENCE in times else math.nan
    print()
    print("| variant | search space | mean s / suggestion | ratio to (a) | median best value |")
    print("|---|---|---:|---:|---:|")
    for v in args.variants:
        m = statistics.fmean(times[v])
        print(f"| ({v}) | {VARIANTS[v][0]} | {m:.4f} | {m / ref:.2f}x | "
              f"{statistics.median(best[v]):.1e} |")
    print()
    print(f"Total wall time: {time.perf_counter() - t_start:.1f} s; load average at the end: "
          "%.2f %.2f %.2f" % os.getloadavg())
    return 0


if __name__ == "__main__":
    sys.exit(main())
