#!/usr/bin/env python
"""Noisy objectives: a harness test function plus Gaussian noise, our samplers beside Optuna's.

Each run minimises ``f(x) + sd * e`` (``e`` standard normal, drawn in trial order from a
generator seeded by the run's seed, so every sampler of one seed meets the same noise sequence)
for ``--trials`` trials. The sampler sees only the noisy values; the table scores the noise-free
``f``:

* **best trial**: regret ``f(x_b) - f*`` of the trial ``study.best_trial`` returns (the
  smallest *noisy* value): what a user would deploy;
* **best point**: the smallest noise-free regret among all trials (what the search reached);
* **mean**: the mean noise-free regret over the run (cumulative regret / T).

Median and mean over the seeds of each. ``python benchmarks/bench_noisy.py --problem hartmann6
--sd 0.1 0.3 --seeds 20``
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
from benchmarks.harness.samplers import SAMPLERS, make_sampler, unknown_samplers  # noqa: E402


def run(problem, sampler: str, seed: int, sd: float, trials: int) -> tuple[float, float, float]:
    """(regret of the best trial, smallest regret, mean regret) of one run."""
    noise = np.random.default_rng(1000 + seed)
    study = optuna.create_study(sampler=make_sampler(sampler, seed))
    true: list[float] = []

    def objective(trial: optuna.Trial) -> float:
        f = float(problem.evaluate(problem.suggest(trial)))
        true.append(f)
        return f + sd * float(noise.standard_normal())

    study.optimize(objective, n_trials=trials)
    regret = np.array(true) - problem.minimum
    return float(regret[study.best_trial.number]), float(regret.min()), float(regret.mean())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--problem", default="hartmann6")
    ap.add_argument("--samplers", nargs="+", default=["GP-UCB", "GP-TS", "GPSampler", "TPE"])
    ap.add_argument("--sd", type=float, nargs="+", default=[0.1, 0.3], help="noise sd")
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--trials", type=int, default=100)
    ap.add_argument("--threads", default="1", help="BLAS threads (read before import)")
    args = ap.parse_args()
    if any(not np.isfinite(sd) or sd < 0 for sd in args.sd):
        ap.error(f"--sd: noise sds must be finite and >= 0, got {args.sd}")
    unknown = unknown_samplers(args.samplers)
    if unknown:
        ap.error(f"--samplers: unknown {unknown}; known: {', '.join(SAMPLERS)}, or a variant "
                 "of one of ours (benchmarks/harness/samplers.py)")
    if args.seeds < 1 or args.trials < 1:
        ap.error(f"--seeds and --trials must be >= 1, got {args.seeds} and {args.trials}")
    try:
        problem = problem_with_minimum(args.problem)
    except ValueError as e:
        ap.error(str(e))
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    print(f"`{' '.join(['python benchmarks/bench_noisy.py'] + sys.argv[1:])}`: {problem.name}, "
          f"{args.seeds} seeds x {args.trials} trials; median / mean over the seeds\n")
    print("| noise sd | sampler | best trial | best point | mean over the run | s / run |")
    print("|---:|---|---:|---:|---:|---:|")
    for sd in args.sd:
        for name in args.samplers:
            t0 = time.perf_counter()
            r = np.array([run(problem, name, s, sd, args.trials) for s in range(args.seeds)])
            cells = " | ".join(f"{np.median(c):.3g} / {np.mean(c):.3g}" for c in r.T)
            print(f"| {sd:g} | {name} | {cells} | {(time.perf_counter() - t0) / args.seeds:.1f} |",
                  flush=True)


if __name__ == "__main__":
    main()
