"""README's Quick start as a user runs it, at Optuna's default verbosity: per seed, the lines
the sampler logs itself, the configurations asked again (identical, and within 1e-3 of the
range of ``C`` on its log scale with the same solver, issue 61's measure) and the best value.

    python benchmarks/quick_start.py --seeds 0 1 2 3 4

The objective is the README's (3-fold CV of a logistic regression on scikit-learn's bundled
breast-cancer data, deterministic), 30 trials of ``GPUCBSampler(seed=seed)``.
"""

from __future__ import annotations

import argparse
import collections
import io
import logging
import math

import optuna
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from optuna_gpbandit import GPUCBSampler

X, Y = load_breast_cancer(return_X_y=True)


def objective(trial: optuna.Trial) -> float:
    C = trial.suggest_float("C", 1e-4, 1e2, log=True)
    solver = trial.suggest_categorical("solver", ["lbfgs", "liblinear"])
    model = make_pipeline(StandardScaler(), LogisticRegression(C=C, solver=solver))
    return float(cross_val_score(model, X, Y, cv=3).mean())


def run(seed: int, n_trials: int = 30) -> dict[str, object]:
    """One Quick start study: the sampler's own lines, the repeats and the best value."""
    buf = io.StringIO()
    handler = logging.StreamHandler(buf)
    logging.getLogger("optuna_gpbandit").addHandler(handler)
    try:
        study = optuna.create_study(direction="maximize", sampler=GPUCBSampler(seed=seed))
        study.optimize(objective, n_trials=n_trials)
    finally:
        logging.getLogger("optuna_gpbandit").removeHandler(handler)
    trials = study.trials
    counts = collections.Counter(tuple(sorted(t.params.items())) for t in trials)
    points = [(math.log10(t.params["C"]) / 6.0, t.params["solver"]) for t in trials]
    near = sum(any(s == s0 and abs(c - c0) < 1e-3 for c0, s0 in points[:i])
               for i, (c, s) in enumerate(points))
    return {"seed": seed, "lines": buf.getvalue().splitlines(),
            "identical": sum(v - 1 for v in counts.values()), "within 1e-3": near,
            "best": study.best_value}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    args = parser.parse_args()
    optuna.logging.set_verbosity(optuna.logging.WARNING)  # Optuna's own trial lines
    logging.getLogger("optuna_gpbandit").setLevel(logging.INFO)  # the default verbosity
    print("| seed | lines of the sampler's own | identical repeats | within 1e-3 | best |")
    print("|---:|---:|---:|---:|---:|")
    for seed in args.seeds:
        r = run(seed)
        print(f"| {r['seed']} | {len(r['lines'])} | {r['identical']} | {r['within 1e-3']} | "
              f"{r['best']:.4f} |")
        for line in r["lines"]:
            print(f"<!-- {line} -->")


if __name__ == "__main__":
    main()
