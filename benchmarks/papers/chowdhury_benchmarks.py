"""Chowdhury & Gopalan (ICML 2017), Fig. 3: Rosenbrock and Hartmann-3 on 100 d random arms.

Setting (paper section 6, spec ``igp_ucb_gp_ts.md`` section 7, E3). The paper refers to Azimi et
al. (2012) for the functions and leaves the domain, B and T unstated; our choices:

* Rosenbrock (d = 2), maximised: ``10 - 100 (x2 - x1^2)^2 - (1 - x1)^2`` on ``[-2, 2]^2``;
  Hartmann-3 (d = 3), maximised: ``-H3`` on ``[0, 1]^3`` (``benchmarks/problems.py``);
* arms: 100 d points drawn uniformly from the domain (200 and 300), new ones per draw;
* the samplers work on the unit cube (``suggest_float("x{i}", 0, 1)``; Rosenbrock mapped by
  ``x = 4 u - 2``) with the SE kernel, lengthscale 0.2 **in unit-cube units** (the paper
  probably meant native units, which would be 0.05 of Rosenbrock's box: no correlation
  between its 200 arms);
* f is standardised on the arms (zero mean, unit standard deviation over the arms, a fixed
  affine map of the benchmark, not data-dependent), so the unit-variance prior is plausible
  (raw Rosenbrock spans ~3000); regret is reported in these units;
* as in E1 (``chowdhury_synthetic.py``): noise ``N(0, R^2)``, ``R^2 = 1 %`` of the range of f,
  ``lambda = R^2``, ``delta = 0.1``, ``gamma_t`` from the SE bound ``(ln t)^(d+1)``, B the RKHS norm
  of f's ``lambda_gen``-regularised interpolant on the arms (``lambda_gen = 0.01``);
* methods: IGP-UCB, GP-TS, GP-UCB (RKHS width), EI (xi = 0), PI (xi = 0.01).

A continuous proposal is snapped to the nearest arm (Euclidean in the unit cube) and the arm is
recorded as the trial (see ``harness.run_bandit``).

    python benchmarks/papers/chowdhury_benchmarks.py --quick    # T=60, 2 draws    (~1 min)
    python benchmarks/papers/chowdhury_benchmarks.py --reduced  # T=300, 6 draws   (~8 min)
    python benchmarks/papers/chowdhury_benchmarks.py            # 25 draws (the paper's), T=300
                                                                # (~35 min)
"""

from __future__ import annotations

import argparse
import math
import os
import sys

import numpy as np
from optuna.distributions import FloatDistribution

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))  # benchmarks/, for problems.py
import harness  # noqa: E402
from chowdhury_synthetic import (  # noqa: E402
    LENGTHSCALE, METHOD_NAMES, kernel_matrix, make_sampler, rkhs_norm_of_interpolant,
    run_and_report,
)
from problems import PROBLEMS  # noqa: E402


def rosenbrock(U: np.ndarray) -> np.ndarray:
    x = 4.0 * U - 2.0
    return 10.0 - 100.0 * (x[:, 1] - x[:, 0] ** 2) ** 2 - (1.0 - x[:, 0]) ** 2


def hartmann3(U: np.ndarray) -> np.ndarray:
    return -np.array([PROBLEMS["hartmann3"].f(u) for u in U])


EXPERIMENTS = {"Rosenbrock (d=2, 200 arms)": (2, rosenbrock),
               "Hartmann-3 (d=3, 300 arms)": (3, hartmann3)}
# (T, draws): the default has the paper's 25 draws (T is not stated in the paper); "reduced" is
# the size of the stored results.
PRESETS = {"quick": (60, 2), "reduced": (300, 6), "default": (300, 25)}


def make_problem(name: str, draw: int) -> dict:
    d, fn = EXPERIMENTS[name]
    rng = np.random.default_rng([draw, d])
    arms = rng.uniform(0.0, 1.0, (100 * d, d))
    raw = fn(arms)
    f = (raw - raw.mean()) / raw.std()
    K = kernel_matrix(arms, arms, "se", LENGTHSCALE)
    B = rkhs_norm_of_interpolant(K, f)
    R = math.sqrt(0.01 * float(np.ptp(f)))
    return {"arms": arms, "f": f, "B": B, "R": R, "raw_sd": float(raw.std()), "d": d}


def run_one(task: harness.Task) -> np.ndarray:
    p = make_problem(task.experiment, task.draw)
    d = p["d"]
    B = p["B"] if task.B is None else task.B
    sampler = make_sampler(task.method, task.draw, "se", B, p["R"], d=d)
    dists = {f"x{i}": FloatDistribution(0.0, 1.0) for i in range(d)}
    played = harness.run_bandit(sampler, dists, p["arms"], p["f"], p["R"], task.T,
                                noise_seed=10000 + task.draw, record_arm=True)
    return p["f"].max() - p["f"][played]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    harness.add_common_args(ap, PRESETS)
    ap.add_argument("--experiments", nargs="+", default=list(EXPERIMENTS),
                    choices=list(EXPERIMENTS))
    ap.add_argument("--methods", nargs="+", default=list(METHOD_NAMES), choices=list(METHOD_NAMES))
    ap.add_argument("--B", type=float, default=None,
                    help="use this RKHS norm bound B (IGP-UCB, GP-TS, GP-UCB) instead of the norm "
                         "of f's interpolant (sensitivity check; the paper does not state B)")
    args = ap.parse_args()
    harness.quiet()
    mode, T, draws = harness.resolve_mode(args)
    title = (f"Chowdhury & Gopalan 2017, Fig. 3 (benchmarks on 100 d random arms): mode {mode}, "
             f"T = {T}, {draws} draws (paper: 25 draws, T not stated), jobs = {args.jobs}"
             + ("" if args.B is None else f", B = {args.B:g} for every draw"))
    print(title, flush=True)

    problem_stats = {}
    for e in args.experiments:
        ps = [make_problem(e, d) for d in range(draws)]
        problem_stats[e] = (f"B = {np.mean([p['B'] for p in ps]):.2f}, "
                            f"R = {np.mean([p['R'] for p in ps]):.3f}, "
                            f"range of standardised f = "
                            f"{np.mean([np.ptp(p['f']) for p in ps]):.2f}, "
                            f"sd of raw f on the arms = {np.mean([p['raw_sd'] for p in ps]):.4g} "
                            f"(multiply regrets by it for raw units), uniformly random arms: "
                            f"{harness.random_play_text(ps, T)}")
    stem = harness.output_name("chowdhury_benchmarks", args,
                               extra="" if args.B is None else f"B{args.B:g}")
    tasks = [harness.Task(e, m, d, T, B=args.B) for e in args.experiments for d in range(draws)
             for m in args.methods]
    run_and_report(run_one, tasks, args, stem, title, problem_stats, T, draws)


if __name__ == "__main__":
    main()
