"""Cumulative and simple regret of our samplers against GPSampler, TPE and random search.

Every sampler runs with its default settings on the problems of ``problems.py`` (minimised on the
unit cube), for the given seeds and trials. Prints a markdown table: mean cumulative regret over
seeds (sum over trials of f(x_t) - f*) and median simple regret (best f(x_t) - f*).

    pip install -e ".[bench]"     # torch for GPSampler
    python benchmarks/bench_regret.py --trials 100 --seeds 5
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
import optuna

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from problems import PROBLEMS  # noqa: E402

from optuna_gpbandit import GPTSSampler, GPUCBSampler, IGPUCBSampler  # noqa: E402

SAMPLERS = {
    "GP-UCB": lambda seed: GPUCBSampler(seed=seed),
    "IGP-UCB": lambda seed: IGPUCBSampler(seed=seed),
    "GP-TS": lambda seed: GPTSSampler(seed=seed),
    "GPSampler": lambda seed: optuna.samplers.GPSampler(seed=seed),
    "TPE": lambda seed: optuna.samplers.TPESampler(seed=seed),
    "Random": lambda seed: optuna.samplers.RandomSampler(seed=seed),
}


def run(problem_name: str, sampler_name: str, seed: int, n_trials: int) -> tuple[float, float]:
    p = PROBLEMS[problem_name]
    study = optuna.create_study(sampler=SAMPLERS[sampler_name](seed))
    study.optimize(
        lambda t: p.f(np.array([t.suggest_float(f"x{i}", 0.0, 1.0) for i in range(p.dim)])),
        n_trials=n_trials,
    )
    regret = np.array([t.value for t in study.trials]) - p.minimum
    return float(regret.sum()), float(regret.min())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=100)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--problems", nargs="+", default=list(PROBLEMS), choices=list(PROBLEMS))
    ap.add_argument("--samplers", nargs="+", default=list(SAMPLERS), choices=list(SAMPLERS))
    args = ap.parse_args()
    optuna.logging.set_verbosity(optuna.logging.ERROR)

    rows = []
    for prob in args.problems:
        for name in args.samplers:
            t0 = time.perf_counter()
            res = [run(prob, name, s, args.trials) for s in range(args.seeds)]
            cum = np.mean([r[0] for r in res])
            simple = np.median([r[1] for r in res])
            secs = (time.perf_counter() - t0) / args.seeds
            rows.append((prob, name, cum, simple, secs))
            print(f"# {prob:10s} {name:10s} cum {cum:9.2f} simple {simple:.2e} {secs:6.1f} s/run",
                  file=sys.stderr, flush=True)

    print(f"\n{args.seeds} seeds x {args.trials} trials; cumulative regret: mean over seeds; "
          "simple regret: median.\n")
    print("| problem | sampler | cumulative regret | simple regret | s / run |")
    print("|---|---|---:|---:|---:|")
    for prob, name, cum, simple, secs in rows:
        print(f"| {prob} | {name} | {cum:.2f} | {simple:.2e} | {secs:.1f} |")


if __name__ == "__main__":
    main()
