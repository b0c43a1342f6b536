#!/usr/bin/env python
"""How well the MAP fit estimates observation noise: fitted against true noise variance.

Data: ``n`` uniform points in ``[0, 1]^d``, ``f(x) = sum_i sin(3 x_i) + x_0^2`` (smooth, every
lengthscale of order 1) plus Gaussian noise of sd ``s``, standardised as the samplers do. The
table gives, per noise level, the ratio of the fitted noise variance to the true one (in
standardised units) over the seeds, and the smallest fitted lengthscale: a ratio far below 1
with short lengthscales means the fit explains the noise as a rough function (it interpolates
the noise), which is what makes a sampler chase noise.

    python benchmarks/bench_noise_fit.py --sd 0.02 0.1 0.3 0.6 1.0 --seeds 6
"""

from __future__ import annotations

import argparse
import os
import sys

from _common import limit_threads, threads_from_argv

if __name__ == "__main__":
    limit_threads(threads_from_argv(sys.argv[1:], default="1"))

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from optuna_gpbandit.gp.fit import fit_hyperparameters  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sd", type=float, nargs="+", default=[0.02, 0.1, 0.3, 0.6, 1.0])
    ap.add_argument("--seeds", type=int, default=6)
    ap.add_argument("--n", type=int, default=50)
    ap.add_argument("--d", type=int, default=3)
    ap.add_argument("--threads", default="1", help="BLAS threads (read before import)")
    args = ap.parse_args()
    if any(not np.isfinite(s) or s <= 0 for s in args.sd):
        ap.error(f"--sd: noise sds must be finite and > 0 (the ratio divides by them), got {args.sd}")
    if args.seeds < 1 or args.n < 2 or args.d < 1:
        ap.error(f"--seeds, --n and --d must be >= 1, 2 and 1, got {args.seeds}, {args.n}, {args.d}")
    print(f"`{' '.join(['python benchmarks/bench_noise_fit.py'] + sys.argv[1:])}`: n = {args.n}, "
          f"d = {args.d}, Matern-5/2, the samplers' priors\n")
    print("| noise sd | fitted / true noise variance, per seed | smallest lengthscale, median |")
    print("|---:|---|---:|")
    for s in args.sd:
        ratios, shortest = [], []
        for seed in range(args.seeds):
            rng = np.random.default_rng(seed)
            X = rng.uniform(size=(args.n, args.d))
            y = np.sin(3 * X).sum(axis=1) + X[:, 0] ** 2 + s * rng.standard_normal(args.n)
            sd_y = y.std()
            p = fit_hyperparameters(X, (y - y.mean()) / sd_y, np.zeros(args.d, dtype=bool),
                                    "matern52")
            ratios.append(p.noise_var / (s / sd_y) ** 2)
            shortest.append(p.lengthscales.min())
        print(f"| {s:g} | {' '.join(f'{r:.2f}' for r in ratios)} | {np.median(shortest):.2f} |")


if __name__ == "__main__":
    main()
