#!/usr/bin/env python
"""Multi-objective studies: hypervolume at T trials against GPSampler, TPE and NSGA-II.

Problems (both minimised in every objective):

* ``zdt1``: ZDT1 with 4 variables (convex front ``f2 = 1 - sqrt(f1)`` at ``x1..x3 = 0``);
  reference point (1.1, 1.1), the usual one: only points near the front count (maximum
  1.21 - 1/3 = 0.877).
* ``zdt2``: ZDT2 with 4 variables (non-convex front ``f2 = 1 - f1^2``); reference (1.1, 1.1)
  (maximum 1.21 - 2/3 = 0.543).
* ``rf-size``: a random forest on scikit-learn's breast_cancer: 3-fold CV error against
  ``log10`` of the total number of tree nodes (model size); ``n_estimators`` 1-50 (log),
  ``max_depth`` 1-12, ``max_features`` 0.05-1, ``min_samples_leaf`` 1-20 (log); reference
  (0.2, 4.0).

Each sampler runs ``--seeds`` seeds x ``--trials`` trials per problem (ask/tell). Reported per
(problem, sampler): the median and range of the final hypervolume (exact, the library's
``hypervolume_report`` with the fixed reference point) and the mean seconds per ``ask`` +
``suggest_*``.

    python benchmarks/bench_multi_objective.py            # 5 seeds x 50 trials
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
from optuna_gpbandit import GPTSSampler, GPUCBSampler, IGPUCBSampler, hypervolume_report  # noqa: E402,E501


def _zdt(trial: optuna.Trial, kind: int) -> dict:
    return {f"x{i}": trial.suggest_float(f"x{i}", 0.0, 1.0) for i in range(4)}


def _zdt_eval(p: dict, kind: int) -> tuple[float, float]:
    x = np.array([p[f"x{i}"] for i in range(4)])
    g = 1.0 + 9.0 * x[1:].mean()
    h = 1.0 - np.sqrt(x[0] / g) if kind == 1 else 1.0 - (x[0] / g) ** 2
    return float(x[0]), float(g * h)


_DATA = None


def _rf(trial: optuna.Trial) -> dict:
    return {
        "n_estimators": trial.suggest_int("n_estimators", 1, 50, log=True),
        "max_depth": trial.suggest_int("max_depth", 1, 12),
        "max_features": trial.suggest_float("max_features", 0.05, 1.0),
        "min_samples_leaf": trial.suggest_int("min_samples_leaf", 1, 20, log=True),
    }


def _rf_eval(p: dict) -> tuple[float, float]:
    global _DATA
    from sklearn.datasets import load_breast_cancer
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.model_selection import StratifiedKFold

    if _DATA is None:
        _DATA = load_breast_cancer(return_X_y=True)
    X, y = _DATA
    errors, nodes = [], []
    for train, test in StratifiedKFold(3, shuffle=True, random_state=0).split(X, y):
        model = RandomForestClassifier(random_state=0, n_jobs=1, **p).fit(X[train], y[train])
        errors.append(1.0 - model.score(X[test], y[test]))
        nodes.append(sum(est.tree_.node_count for est in model.estimators_))
    return float(np.mean(errors)), float(np.log10(np.mean(nodes)))


PROBLEMS = {
    "zdt1": (lambda t: _zdt(t, 1), lambda p: _zdt_eval(p, 1), (1.1, 1.1)),
    "zdt2": (lambda t: _zdt(t, 2), lambda p: _zdt_eval(p, 2), (1.1, 1.1)),
    "rf-size": (_rf, _rf_eval, (0.2, 4.0)),
}
SAMPLERS = {
    "GP-UCB": lambda s: GPUCBSampler(seed=s),
    "IGP-UCB": lambda s: IGPUCBSampler(seed=s),
    "GP-TS": lambda s: GPTSSampler(seed=s),
    "GPSampler": lambda s: optuna.samplers.GPSampler(seed=s),
    "TPE": lambda s: optuna.samplers.TPESampler(seed=s),
    "NSGA-II": lambda s: optuna.samplers.NSGAIISampler(seed=s),
}


def run(problem: str, sampler: str, seed: int, trials: int) -> tuple[float, float]:
    suggest, evaluate, ref = PROBLEMS[problem]
    study = optuna.create_study(directions=["minimize", "minimize"],
                                sampler=SAMPLERS[sampler](seed))
    secs = []
    for _ in range(trials):
        t0 = time.perf_counter()
        trial = study.ask()
        params = suggest(trial)
        secs.append(time.perf_counter() - t0)
        study.tell(trial, evaluate(params))
    hv = hypervolume_report(study, reference_point=ref).hypervolume[-1]
    return float(hv), float(np.mean(secs))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--problems", nargs="+", default=list(PROBLEMS))
    ap.add_argument("--samplers", nargs="+", default=list(SAMPLERS))
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--trials", type=int, default=50)
    ap.add_argument("--threads", default="1", help="BLAS threads (read before import)")
    args = ap.parse_args()
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    import warnings

    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    t_all = time.perf_counter()
    print(f"{args.seeds} seeds x {args.trials} trials; hypervolume at T (median [min, max]) "
          "with a fixed reference point; s / suggestion: mean ask + suggest\n")
    for problem in args.problems:
        print(f"### {problem} (reference point {PROBLEMS[problem][2]})\n")
        print("| sampler | hypervolume | vs TPE | vs GPSampler | s / suggestion |")
        print("|---|---:|---:|---:|---:|")
        rows = {}
        for sampler in args.samplers:
            res = [run(problem, sampler, s, args.trials) for s in range(args.seeds)]
            rows[sampler] = (np.array([r[0] for r in res]), np.mean([r[1] for r in res]))
        for sampler, (hv, secs) in rows.items():
            med = np.median(hv)
            rel = lambda other: (f"{med / np.median(rows[other][0]):.3f}x"
                                 if other in rows and np.median(rows[other][0]) > 0 else "-")
            print(f"| {sampler} | {med:.4f} [{hv.min():.4f}, {hv.max():.4f}] | {rel('TPE')} | "
                  f"{rel('GPSampler')} | {secs:.4f} |", flush=True)
        print()
    print(f"Total wall time: {time.perf_counter() - t_all:.0f} s")


if __name__ == "__main__":
    main()
