#!/usr/bin/env python
"""Many constraints (500 ``trial.set_constraint`` values per trial): our system attrs per trial
and the time per suggestion, in the default mode and in the long-term mode.

Objective: ``sum_i (x_i - 0.3)^2`` on ``[0, 1]^3``; constraint ``j`` is ``x_{j mod 3} - 0.9 -
1e-4 j``. 20 trials, then 2 more timed; prints the bytes of our ``gpbandit:*`` system attrs of
the last trial (JSON), the bytes of Optuna's own constraint attrs, and the seconds.

    python benchmarks/bench_many_constraints.py            # both modes, 500 constraints
    python benchmarks/bench_many_constraints.py --m 50
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from _common import limit_threads, threads_from_argv

if __name__ == "__main__":
    limit_threads(threads_from_argv(sys.argv[1:]))

import numpy as np  # noqa: E402
import optuna  # noqa: E402

from optuna_gpbandit import (  # noqa: E402
    ConstrainedGPUCBSampler,
    GPUCBSampler,
    LongTermConstraints,
)


def run(mode: str, m: int) -> str:
    def objective(trial: optuna.trial.Trial) -> float:
        x = np.array([trial.suggest_float(f"x{i}", 0, 1) for i in range(3)])
        for j in range(m):
            trial.set_constraint(f"c{j}", float(x[j % 3] - 0.9 - 1e-4 * j))
        return float(((x - 0.3) ** 2).sum())

    sampler = (GPUCBSampler(seed=0) if mode == "feasible"
               else ConstrainedGPUCBSampler(seed=0, constraints=LongTermConstraints()))
    study = optuna.create_study(sampler=sampler)
    study.optimize(objective, n_trials=20)
    t0 = time.perf_counter()
    study.optimize(objective, n_trials=2)
    per_ask = (time.perf_counter() - t0) / 2
    attrs = study.trials[-1].system_attrs
    ours = {k: v for k, v in attrs.items() if k.startswith("gpbandit")}
    theirs = {k: v for k, v in attrs.items() if k.startswith("constraints")}
    return (f"| {mode} | {m} | {len(json.dumps(ours))} | {len(json.dumps(theirs))} | "
            f"{per_ask:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--m", type=int, default=500)
    parser.add_argument("--threads", default="1")
    args = parser.parse_args()
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    print("| mode | constraints | our attrs (bytes) | Optuna's constraint attrs (bytes) | "
          "s per suggestion at n = 21 |")
    print("|---|---:|---:|---:|---:|")
    for mode in ("feasible", "long_term"):
        print(run(mode, args.m), flush=True)


if __name__ == "__main__":
    main()
