#!/usr/bin/env python
"""Failed trials: does the sampler learn where trials fail, and do random failures cost regret?

Two cases (issue 14), every public sampler of ours with ``failures=FailedTrials()`` (the default:
failed trials imputed) and ``failures=FailedTrials(impute=False)`` (failed trials left out of the
model), beside Optuna's ``GPSampler`` (if torch is installed) and ``TPESampler``:

* ``lrwd``: tune ``lr`` (log, 1e-5..1) and ``wd`` (0..0.1) of a "training run" whose loss
  ``0.1 (log10(lr) + 1)^2 + 10 (wd - 0.03)^2 + 0.1`` improves as ``lr`` grows towards 0.1 and
  which diverges for ``lr > 0.1``: a NaN loss (``--failure nan``, default), ``raise
  optuna.TrialPruned()`` (``prune``) or an exception caught by ``catch=`` (``raise``). 60 trials;
  reported: failed trials among trials 10-59, the most often asked point (points equal to 1e-9
  in ``log10 lr`` and ``wd``), the best loss (minimum 0.1 at lr = 0.1, wd = 0.03).
* ``edge``: the same parameters, a diagonal edge ``lr_max(wd) = 0.05 * 10^(10 wd)`` and a loss
  that falls at a constant rate up to it (``benchmarks.problems.edge_objective``; minimum 1.0):
  the search presses against the boundary, where a model that does not know where trials fail
  keeps stepping over it.
* ``random``: Branin and Hartmann-3 on the unit cube where 10% of the trials fail at random
  (trial ``k`` of seed ``s`` fails iff a uniform draw seeded by ``(s, k)`` is below 0.1, so every
  method fails the same trial numbers). 60 trials; reported: median simple regret.

    python benchmarks/bench_failures.py                      # both cases, 3 seeds (lrwd), 5 (random)
    python benchmarks/bench_failures.py --case lrwd --failure prune
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks._common import limit_threads, threads_from_argv  # noqa: E402

limit_threads(threads_from_argv(sys.argv))

import argparse  # noqa: E402
import math  # noqa: E402
import time  # noqa: E402
from collections import Counter  # noqa: E402

import numpy as np  # noqa: E402
import optuna  # noqa: E402

from benchmarks.problems import PROBLEMS, Diverged, edge_objective, lrwd_objective  # noqa: E402
from optuna_gpbandit import (  # noqa: E402
    ConstrainedGPUCBSampler,
    FailedTrials,
    GPTSSampler,
    GPUCBCPDSampler,
    GPUCBSampler,
    IGPUCBSampler,
)

OURS = {
    "GP-UCB": GPUCBSampler,
    "IGP-UCB": IGPUCBSampler,
    "GP-TS": GPTSSampler,
    "GP-UCB-CPD": GPUCBCPDSampler,
    "Constrained": ConstrainedGPUCBSampler,
}


def methods(with_ignore: bool = True) -> dict:
    out = {}
    for name, cls in OURS.items():
        out[name] = lambda s, cls=cls: cls(seed=s)
        if with_ignore:
            out[f"{name} (ignore)"] = lambda s, cls=cls: cls(
                seed=s, failures=FailedTrials(impute=False))
    try:
        import torch  # noqa: F401

        out["GPSampler"] = lambda s: optuna.samplers.GPSampler(seed=s)
    except ImportError:
        print("torch not installed: GPSampler left out", file=sys.stderr)
    out["TPE"] = lambda s: optuna.samplers.TPESampler(seed=s)
    return out


def run_lrwd(make, seed: int, failure: str, n_trials: int, task=lrwd_objective) -> dict:
    study = optuna.create_study(sampler=make(seed))
    t0 = time.perf_counter()
    study.optimize(task(failure), n_trials=n_trials, catch=(Diverged,))
    elapsed = time.perf_counter() - t0
    trials = study.trials
    failed = sum(t.state != optuna.trial.TrialState.COMPLETE for t in trials[10:60])
    points = Counter(
        (round(math.log10(t.params["lr"]), 9), round(t.params["wd"], 9)) for t in trials
    )
    done = [t.value for t in trials if t.state == optuna.trial.TrialState.COMPLETE]
    return {"failed": failed, "max_repeat": max(points.values()),
            "best": min(done) if done else math.inf, "seconds": elapsed}


def random_objective(problem, seed: int):
    def objective(trial: optuna.Trial) -> float:
        u = np.array([trial.suggest_float(f"x{i}", 0.0, 1.0) for i in range(problem.dim)])
        if np.random.default_rng([seed, trial.number, 7]).random() < 0.1:
            raise Diverged("random failure")
        return problem.f(u)

    return objective


def run_random(make, seed: int, problem, n_trials: int) -> dict:
    study = optuna.create_study(sampler=make(seed))
    study.optimize(random_objective(problem, seed), n_trials=n_trials, catch=(Diverged,))
    n_failed = sum(t.state == optuna.trial.TrialState.FAIL for t in study.trials)
    return {"regret": study.best_value - problem.minimum, "failed": n_failed}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--case", choices=["lrwd", "edge", "random", "both"], default="both")
    ap.add_argument("--failure", choices=["nan", "prune", "raise"], default="nan")
    ap.add_argument("--seeds", type=int, default=None, help="seeds 0..N-1 (3 lrwd, 5 random)")
    ap.add_argument("--trials", type=int, default=60)
    ap.add_argument("--only", nargs="*", help="method names to run (default: all)")
    ap.add_argument("--threads", default="1", help="BLAS threads (default 1)")
    args = ap.parse_args()
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    ms = methods()
    if args.only:
        ms = {k: v for k, v in ms.items() if k in args.only}
    for case, task, title in (("lrwd", lrwd_objective, "lr/wd with a diverging region"),
                              ("edge", edge_objective, "lr/wd, a diagonal diverging edge the "
                               "loss falls towards (minimum 1.0)")):
        if args.case not in (case, "both"):
            continue
        seeds = range(args.seeds or 3)
        print(f"\n### {title} (failure={args.failure}, {args.trials} trials,"
              f" seeds 0-{len(seeds) - 1})\n")
        print("| method | failed of trials 10-59 (per seed) | most asks of one point | best loss "
              "(median) | s per study |")
        print("|---|---|---:|---:|---:|")
        for name, make in ms.items():
            rs = [run_lrwd(make, s, args.failure, args.trials, task) for s in seeds]
            print(f"| {name} | {', '.join(str(r['failed']) for r in rs)} | "
                  f"{max(r['max_repeat'] for r in rs)} | "
                  f"{np.median([r['best'] for r in rs]):.4g} | "
                  f"{np.mean([r['seconds'] for r in rs]):.1f} |", flush=True)
    if args.case in ("random", "both"):
        seeds = range(args.seeds or 5)
        names = ["branin", "hartmann3"]
        print(f"\n### 10% random failures ({args.trials} trials, seeds 0-{len(seeds) - 1}): "
              "median simple regret [IQR]\n")
        print("| method | " + " | ".join(names) + " |")
        print("|---|" + "---:|" * len(names))
        for name, make in ms.items():
            cells = []
            for pname in names:
                reg = [run_random(make, s, PROBLEMS[pname], args.trials)["regret"] for s in seeds]
                q1, q2, q3 = np.percentile(reg, [25, 50, 75])
                cells.append(f"{q2:.3g} [{q1:.2g}, {q3:.2g}]")
            print(f"| {name} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
