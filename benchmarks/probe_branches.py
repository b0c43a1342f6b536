"""What GP-UCB's model believes of each branch of a users' xgboost objective (issue 60).

Replays the first ``--trials`` trials of one stored run of ``u-xgb-reg-diabetes`` (or another
xgboost problem) into a study, lets ``GPUCBSampler`` fit its model for the next trial, and
prints the model's mean, width and UCB along ``lambda`` on the ``gblinear`` branch (``alpha`` at
its lower bound) and at random points of each booster, with the fitted lengthscales. ::

    python -m benchmarks.probe_branches RUNS_DIR --trials 25 --seed 0

``RUNS_DIR``: a ``python -m benchmarks run users`` result directory holding GP-UCB's runs.

``--renamed`` instead runs GP-UCB (seeds 0-4, 40 trials) on ``u-xgb-reg-diabetes`` as written
and with the ``gblinear`` branch's parameters under names of their own (``lin_lambda``, ...),
so that the model fits them lengthscales of their own, and prints each seed's best value and
its number of ``gblinear`` trials. ::

    python -m benchmarks.probe_branches --renamed
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

import numpy as np
import optuna

from benchmarks.users.objectives import _xgb_loss, _xgb_suggest
from optuna_gpbandit import GPUCBSampler


def _random_params(booster: str, rng: np.random.Generator) -> dict[str, Any]:
    q: dict[str, Any] = {"booster": booster, "lambda": 10 ** rng.uniform(-8, 0),
                         "alpha": 10 ** rng.uniform(-8, 0), "subsample": rng.uniform(0.2, 1),
                         "colsample_bytree": rng.uniform(0.2, 1)}
    if booster != "gblinear":
        q.update(max_depth=int(rng.choice([3, 5, 7, 9])),
                 min_child_weight=int(rng.integers(2, 11)), eta=10 ** rng.uniform(-3, 0),
                 gamma=10 ** rng.uniform(-8, 0),
                 grow_policy=str(rng.choice(["depthwise", "lossguide"])))
    if booster == "dart":
        q.update(sample_type=str(rng.choice(["uniform", "weighted"])),
                 normalize_type=str(rng.choice(["tree", "forest"])),
                 rate_drop=10 ** rng.uniform(-8, 0), skip_drop=10 ** rng.uniform(-8, 0))
    return q


def _renamed_suggest(trial: optuna.Trial) -> dict[str, Any]:
    """The xgboost objective's parameters, ``gblinear``'s under names of their own."""
    booster = trial.suggest_categorical("booster", ["gbtree", "gblinear", "dart"])
    if booster != "gblinear":
        return _xgb_suggest(trial)
    return {"booster": booster,
            "lambda": trial.suggest_float("lin_lambda", 1e-8, 1.0, log=True),
            "alpha": trial.suggest_float("lin_alpha", 1e-8, 1.0, log=True),
            "subsample": trial.suggest_float("lin_subsample", 0.2, 1.0),
            "colsample_bytree": trial.suggest_float("lin_colsample_bytree", 0.2, 1.0)}


def compare_renamed(seeds: range = range(5), n_trials: int = 40) -> None:
    """GP-UCB on u-xgb-reg-diabetes as written and with ``gblinear``'s parameters renamed."""
    for label, suggest in (("as written", _xgb_suggest), ("renamed", _renamed_suggest)):
        bests = []
        for seed in seeds:
            study = optuna.create_study(sampler=GPUCBSampler(seed=seed))
            study.optimize(lambda t: _xgb_loss(suggest(t), "diabetes", "rmse"),
                           n_trials=n_trials)
            bests.append(study.best_value)
            n_linear = sum(t.params["booster"] == "gblinear" for t in study.trials)
            print(f"{label}: seed {seed} best {study.best_value:.4f}, "
                  f"{n_linear} gblinear trials", flush=True)
        print(f"{label}: mean best {np.mean(bests):.4f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs_dir", nargs="?")
    ap.add_argument("--renamed", action="store_true",
                    help="compare the objective as written with gblinear's parameters renamed")
    ap.add_argument("--problem", default="u-xgb-reg-diabetes")
    ap.add_argument("--sampler", default="GP-UCB")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--trials", type=int, default=25)
    args = ap.parse_args()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    if args.renamed:
        compare_renamed()
        return
    if args.runs_dir is None:
        ap.error("give RUNS_DIR, or --renamed")
    with open(os.path.join(args.runs_dir, "runs.jsonl")) as f:
        runs = [json.loads(line) for line in f]
    run = next(r for r in runs if r["problem"] == args.problem and r["seed"] == args.seed
               and r["sampler"] == args.sampler)
    study = optuna.create_study()
    for p, v in zip(run["params"][:args.trials], run["values"][:args.trials]):
        study.enqueue_trial(p)
        t = study.ask()
        _xgb_suggest(t)
        study.tell(t, v)

    seen: dict[str, Any] = {}

    class Probe(GPUCBSampler):
        def _select(self, ctx: Any) -> Any:
            seen["ctx"], seen["acq"] = ctx, self._acquisition(ctx)[0]
            return super()._select(ctx)

    study.sampler = Probe(seed=args.seed)
    nxt = _xgb_suggest(study.ask())
    ctx, acq = seen["ctx"], seen["acq"]
    post, space = ctx.gp.posterior, ctx.space
    print(f"next trial: {nxt['booster']}, lambda {nxt['lambda']:.2g}, alpha {nxt['alpha']:.2g}")
    print("gblinear along lambda (alpha 1e-8; the model's units, larger is better):")
    for log_l in range(-8, 1):
        x = space.encode_many([{"booster": "gblinear", "lambda": 10.0 ** log_l, "alpha": 1e-8,
                                "subsample": 0.6, "colsample_bytree": 0.6}])
        mu, var = post.mean_var(x)
        print(f"  lambda 1e{log_l}: mean {mu[0]:.3f}  sd {np.sqrt(var[0]):.3f}  "
              f"ucb {acq.values(x)[0]:.3f}")
    rng = np.random.default_rng(0)
    for booster in ("gblinear", "gbtree", "dart"):
        X = space.encode_many([_random_params(booster, rng) for _ in range(2000)])
        mu, var = post.mean_var(X)
        u = acq.values(X)
        print(f"{booster:9s} best ucb {u.max():.3f}  mean sd {np.sqrt(var).mean():.3f}")
    print("lengthscales:", {n: round(float(v), 3)
                            for n, v in zip(space.names, post.params.lengthscales)})


if __name__ == "__main__":
    main()
