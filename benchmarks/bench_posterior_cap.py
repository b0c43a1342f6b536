#!/usr/bin/env python
"""What ``GPModel(max_posterior_points=...)`` (the posterior's cap, default 1500) costs in regret
at n = 2000-5000.

Full runs of 5000 trials without the cap take hours (the exact posterior at n = 5000 costs
seconds per suggestion), so the cost is measured per decision on one shared history:

1. ``generate``: GP-UCB with its defaults runs ``--n`` trials on a noisy problem (Hartmann-3 with
   Gaussian noise, sd ``--noise``; many trials are what noisy objectives need). The trials, with
   their stored sampler records, go to ``benchmarks/results/cap_history.json``.
2. ``evaluate``: at each checkpoint n, a fresh in-memory study holds the first n trials, and
   GP-UCB with the cap (default 1500) and without it (``None``: exact) each run ``--steps``
   more trials (fresh noise, ``--seeds`` sampler seeds). Reported: the noise-free regret per
   trial of those trials (the slope of cumulative regret) and the share above 1 (trials sent
   to regions known to be bad), the regret of the point the model recommends afterwards (the
   observed point of largest posterior mean), and seconds per suggestion.

Both variants start from the same stored hyperparameters, so the difference is the posterior's
data subset alone.

    python benchmarks/bench_posterior_cap.py generate --n 5000
    python benchmarks/bench_posterior_cap.py evaluate --checkpoints 2000 3000 5000 --steps 100
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from _common import limit_threads, threads_from_argv

if __name__ == "__main__":
    limit_threads(threads_from_argv(sys.argv[1:], default="1"))

import numpy as np  # noqa: E402
import optuna  # noqa: E402
from optuna.distributions import FloatDistribution  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchmarks.problems import PROBLEMS  # noqa: E402
from optuna_gpbandit import GPModel, GPUCBSampler  # noqa: E402

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
HISTORY = os.path.join(RESULTS, "cap_history.json")
NAMES = ["x0", "x1", "x2"]


def _f(x: np.ndarray) -> float:
    return float(PROBLEMS["hartmann3"].f(np.asarray(x, dtype=float)))


def _minimum() -> float:
    from benchmarks.harness.problems import get_problem

    return float(get_problem("hartmann3").minimum)


def generate(n: int, noise: float, seed: int) -> None:
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    rng = np.random.default_rng(seed)
    study = optuna.create_study(sampler=GPUCBSampler(seed=seed))
    t0 = time.perf_counter()
    for i in range(n):
        trial = study.ask()
        x = [trial.suggest_float(k, 0.0, 1.0) for k in NAMES]
        study.tell(trial, _f(np.array(x)) + noise * rng.standard_normal())
        if (i + 1) % 500 == 0:
            print(f"  {i + 1} trials, {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    rows = [{"params": t.params, "value": t.value, "system_attrs": t.system_attrs}
            for t in study.trials]
    os.makedirs(RESULTS, exist_ok=True)
    with open(HISTORY, "w") as fh:
        json.dump({"noise": noise, "seed": seed, "trials": rows}, fh)
    print(f"wrote {HISTORY}: {n} trials in {time.perf_counter() - t0:.0f} s")


def _study(rows: list[dict], n: int) -> optuna.Study:
    study = optuna.create_study()
    dists = {k: FloatDistribution(0.0, 1.0) for k in NAMES}
    study.add_trials([optuna.trial.create_trial(params=r["params"], distributions=dists,
                                                value=r["value"],
                                                system_attrs=r["system_attrs"])
                      for r in rows[:n]])
    return study


def evaluate(checkpoints: list[int], steps: int, seeds: int, caps: list[int | None]) -> None:
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    data = json.load(open(HISTORY))
    rows, noise = data["trials"], data["noise"]
    fmin = _minimum()
    print(f"Noisy Hartmann-3 (noise sd {noise}), history of {len(rows)} GP-UCB trials; from "
          f"each checkpoint n, {steps} more trials per sampler seed (seeds 0..{seeds - 1}).\n")
    print("| n | cap | regret per trial over the next trials: mean (share > 1) | "
          "recommended point's regret after them | s / suggestion |")
    print("|---:|---|---:|---:|---:|")
    for n in checkpoints:
        if n > len(rows):
            raise SystemExit(f"the history has {len(rows)} trials; generate more for n={n}")
        for cap in caps:
            regrets, secs, rec = [], [], []
            for seed in range(seeds):
                study = _study(rows, n)
                study.sampler = GPUCBSampler(seed=seed,
                                             model=GPModel(max_posterior_points=cap))
                rng = np.random.default_rng(1000 + seed)
                for _ in range(steps):
                    t0 = time.perf_counter()
                    trial = study.ask()
                    x = [trial.suggest_float(k, 0.0, 1.0) for k in NAMES]
                    secs.append(time.perf_counter() - t0)
                    value = _f(np.array(x))
                    regrets.append(value - fmin)
                    study.tell(trial, value + noise * rng.standard_normal())
                rec.append(_recommended(study, cap))
            r = np.array(regrets)
            label = cap if cap is not None else "none (exact)"
            print(f"| {n} | {label} | {r.mean():.4f} ({(r > 1).mean():.1%}) | "
                  f"{np.mean(rec):.2e} | {np.mean(secs):.2f} |", flush=True)


def _recommended(study: optuna.Study, cap: int | None) -> float:
    """Noise-free regret of the observed point with the largest posterior mean (the posterior
    with ``cap`` and the last stored hyperparameters)."""
    from optuna_gpbandit._fitted_gp import latest_state, parse_state
    from optuna_gpbandit._observations import build_observations, limit_rows
    from optuna_gpbandit._randomness import SUBSET, trial_rng
    from optuna_gpbandit._space import EncodedSpace
    from optuna_gpbandit.gp.posterior import GPPosterior

    space = EncodedSpace({k: FloatDistribution(0.0, 1.0) for k in NAMES})
    trials = study.trials
    obs = build_observations(trials, space, study.direction, GPModel(output_warping=False))
    obs = limit_rows(obs, cap, trial_rng(0, len(trials), SUBSET), space.is_categorical)
    params, _ = parse_state(latest_state(trials, len(trials)), space)
    post = GPPosterior(obs.X, obs.y, params, space.is_categorical)
    X_all = space.encode_many([t.params for t in trials])
    mu, _ = post.mean_var(X_all)
    return _f(X_all[int(np.argmax(mu))]) - _minimum()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("generate")
    g.add_argument("--n", type=int, default=5000)
    g.add_argument("--noise", type=float, default=0.3)
    g.add_argument("--seed", type=int, default=0)
    e = sub.add_parser("evaluate")
    e.add_argument("--checkpoints", type=int, nargs="+", default=[2000, 3000, 4000, 5000])
    e.add_argument("--steps", type=int, default=100, help="trials after each checkpoint")
    e.add_argument("--seeds", type=int, default=1, help="sampler seeds per checkpoint")
    e.add_argument("--caps", nargs="+", default=["1500", "none"])
    for p in (g, e):
        p.add_argument("--threads", default="1", help="BLAS threads (read before import)")
    args = ap.parse_args()
    if args.cmd == "generate":
        generate(args.n, args.noise, args.seed)
    else:
        caps = [None if c == "none" else int(c) for c in args.caps]
        evaluate(args.checkpoints, args.steps, args.seeds, caps)


if __name__ == "__main__":
    main()
