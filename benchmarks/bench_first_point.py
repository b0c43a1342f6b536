#!/usr/bin/env python
"""Does the first trial's point matter? GP-UCB's best value after 80 trials of a quick-suite
problem, with the first trial drawn from one scrambled Sobol point per trial (the default since
314a048, so that trials asked before any result are spread) or by plain random draws (before).

Issue 30 bisected a Levy-4 "regression" (median simple regret 0.0104 on 9a73ebe, 0.194 on
353ed2e, seeds 0-4) to 314a048; with plain random first draws today's code gives 9a73ebe's
five values exactly, so nothing else changed. Over more seeds the two draws are alike:

    python benchmarks/bench_first_point.py --problem levy4 --seeds 20

Seeds 0-19 (Nov 25, 2026): median 0.146 (Sobol) against 0.069 (random), seeds 5-19 0.119
against 0.101; Mann-Whitney p = 0.66.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import optuna

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.harness.problems import PROBLEMS  # noqa: E402

import optuna_gpbandit as gb  # noqa: E402
from optuna_gpbandit import _randomness  # noqa: E402


def best_values(problem, seeds, trials: int) -> list[float]:
    out = []
    for seed in seeds:
        study = optuna.create_study(sampler=gb.GPUCBSampler(seed=seed))
        study.optimize(lambda t: problem.evaluate(problem.suggest(t)), n_trials=trials)
        out.append(study.best_value - (problem.minimum or 0.0))
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--problem", default="levy4", choices=sorted(PROBLEMS))
    p.add_argument("--seeds", type=int, default=20)
    p.add_argument("--trials", type=int, default=80)
    args = p.parse_args()
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    from scipy.stats import mannwhitneyu

    problem, seeds = PROBLEMS[args.problem], range(args.seeds)
    default_dims = _randomness.QUASI_DIMS
    sobol = best_values(problem, seeds, args.trials)
    _randomness.QUASI_DIMS = 0  # every parameter of the first trial by plain random draws
    plain = best_values(problem, seeds, args.trials)
    _randomness.QUASI_DIMS = default_dims
    print(f"{args.problem}, GP-UCB, {args.trials} trials, seeds 0-{args.seeds - 1}: simple regret")
    print("| first trial | seeds 0-4 | median | per seed |")
    print("|---|---|---:|---|")
    for name, r in (("Sobol point (default)", sobol), ("plain random", plain)):
        print(f"| {name} | {np.median(r[:5]):.4g} | {np.median(r):.4g} | "
              f"{', '.join(f'{v:.3g}' for v in r)} |")
    print(f"Mann-Whitney p = {mannwhitneyu(sobol, plain).pvalue:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
