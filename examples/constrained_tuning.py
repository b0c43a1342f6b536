"""Tune a random forest for accuracy under a model-size budget with long-term constraints.

The objective is the 3-fold cross-validated accuracy of a ``RandomForestClassifier`` on
scikit-learn's bundled digits data (nothing is downloaded), over the number of trees (5-200, log
scale) and their maximum depth (2-30). Bigger forests are more accurate, and the budget says how
big they may be:

* ``--constraint size`` (default): the pickled size of the fitted forest, in KB, against
  ``--budget`` KB (default 300). Deterministic, so the sampler runs Algorithm 2 of Shi & Eryilmaz
  (AISTATS 2022), ``variant="noiseless"``.
* ``--constraint time``: the mean fit time of a fold, in seconds, against ``--budget`` s (default
  0.15; machine-dependent, so set your own). Timings are noisy, so the sampler runs Algorithm 3,
  ``variant="noisy"``. Read as a long-term budget, this is the paper's motivating case: the
  tuning job as a whole may spend ``budget`` seconds of training per trial on average.

The constraint is reported the Optuna way, ``trial.set_constraint("budget", value)``: ``> 0`` is
a violation, ``<= 0`` is feasible. The value is ``max(0, log(size / budget))`` for the size and
``time / budget - 1`` for the time; ``constraint_value`` explains both choices.

``ConstrainedGPUCBSampler`` aims at feasibility *on average over the trials*:
``(1/t) sum_s g(x_s) <= 0``. Single trials may violate the budget (especially in the first
epoch, before the multiplier ``kappa`` has grown); ``study.best_trial`` is Optuna's best
*feasible* trial, which is what you would deploy.

Run (from the repository root)::

    pip install -e .
    python examples/constrained_tuning.py                           # 30 s - 1 min on 2 cores
    python examples/constrained_tuning.py --budget 150 --n-trials 30
    python examples/constrained_tuning.py --constraint time --budget 0.1

The study is stored in ``gpbandit_constrained.db`` (SQLite) in the working directory; running the
command again loads the same study and adds ``--n-trials`` more trials (the multipliers are
rebuilt from the stored trials, so the resumed run continues where it stopped). The study name
contains the constraint and the budget, so another budget starts another study. ``--storage``
takes any Optuna RDB URL, or a plain file path for a journal storage.
"""

from __future__ import annotations

import argparse
import math
import pickle
import time

import numpy as np
import optuna
from optuna.trial import TrialState
from sklearn.datasets import load_digits
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import cross_validate

from optuna_gpbandit import ConstrainedGPUCBSampler, LongTermConstraints, sampler_record
from optuna_gpbandit.report import constraint_report

CONSTRAINT = "budget"  # the name given to trial.set_constraint
UNITS = {"size": "KB", "time": "s"}
DEFAULT_BUDGET = {"size": 300.0, "time": 0.15}


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--constraint", choices=["size", "time"], default="size",
                   help="model size in KB (default, Algorithm 2) or fit time in s (Algorithm 3)")
    p.add_argument("--budget", type=float, default=None,
                   help="budget in KB (size, default 300) or seconds per fit (time, default 0.15)")
    p.add_argument("--n-trials", type=int, default=60, help="trials to add in this run")
    p.add_argument("--epoch-length", type=int, default=10,
                   help="trials per epoch S (multipliers are updated after each); keep it "
                        "fixed for a study")
    p.add_argument("--seed", type=int, default=0, help="sampler seed")
    p.add_argument("--storage", default="sqlite:///gpbandit_constrained.db",
                   help="Optuna RDB URL, or a file path for a JournalStorage")
    p.add_argument("--study-name", default=None,
                   help="default: gpbandit-constrained-rf-<constraint>-<budget>")
    return p.parse_args()


def make_storage(spec: str) -> str | optuna.storages.BaseStorage:
    """An RDB URL is passed through; anything else is a journal file path."""
    if "://" in spec:
        return spec
    return optuna.storages.JournalStorage(optuna.storages.journal.JournalFileBackend(spec))


def constraint_value(kind: str, cost: float, budget: float) -> float:
    """The value for ``trial.set_constraint``: ``> 0`` over the budget, ``<= 0`` within it.

    Size: ``max(0, log(size / budget))``. The log keeps a 10x oversized forest at 2.3 instead of
    9, so Algorithm 2's penalty ``kappa (exp(g) - 1)`` stays comparable to the accuracy
    differences instead of swamping them in the GP. The ``max(0, .)`` removes the credit for
    slack: with the plain log, a 30 KB forest would offset a 3 MB one in the time average (the
    multiplier would not grow while the average holds); clipped, the time-averaged constraint
    says that the average excess goes to 0, i.e. that the trials end up within the budget.
    Feasibility in Optuna's sense is unchanged (``0`` counts as feasible).

    Time: ``time / budget - 1``, linear and not clipped: here the time average is the real
    long-term budget (total fit time <= budget x trials), fast trials do pay for slow ones, and
    Algorithm 3's penalty is linear anyway.
    """
    if kind == "size":
        return max(0.0, math.log(cost / budget))
    return cost / budget - 1.0


def make_objective(kind: str, budget: float):
    X, y = load_digits(return_X_y=True)

    def objective(trial: optuna.Trial) -> float:
        model = RandomForestClassifier(
            n_estimators=trial.suggest_int("n_estimators", 5, 200, log=True),
            max_depth=trial.suggest_int("max_depth", 2, 30),
            random_state=0,
            n_jobs=1,
        )
        cv = cross_validate(model, X, y, cv=3, return_estimator=True)
        if kind == "size":
            cost = float(np.mean([len(pickle.dumps(m)) for m in cv["estimator"]])) / 1024.0
        else:
            cost = float(np.mean(cv["fit_time"]))
        trial.set_user_attr("cost", cost)
        trial.set_constraint(CONSTRAINT, constraint_value(kind, cost, budget))
        return float(np.mean(cv["test_score"]))

    return objective


def print_report(study: optuna.Study, kind: str, budget: float, variant: str, S: int) -> None:
    unit = UNITS[kind]
    trials = sorted(study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)),
                    key=lambda t: t.number)
    n_feasible = sum(t.constraints.get(CONSTRAINT, np.inf) <= 0 for t in trials)
    print(f"\nFeasible trials: {n_feasible} of {len(trials)} ({n_feasible / len(trials):.0%}; "
          f"budget {budget:g} {unit})")
    try:
        best = study.best_trial  # Optuna's best trial among the feasible ones
    except ValueError:
        print("No feasible trial yet: run more trials or raise the budget.")
        return
    print(f"Best feasible trial #{best.number}: accuracy {best.value:.4f}, "
          f"{kind} {best.user_attrs['cost']:.3g} {unit}")
    print(f"  params: {best.params}")
    top = max(trials, key=lambda t: t.value)
    if top.number != best.number:
        print(f"  (the most accurate trial overall, #{top.number}: {top.value:.4f} at "
              f"{top.user_attrs['cost']:.3g} {unit}, is over the budget)")

    # Long-term metrics of the trials in order: time-averaged violation V_t / t =
    # [sum_{s<=t} g(x_s)]^+ / t (a trial under the budget offsets an earlier one over it) and
    # time-averaged accuracy. The regret needs an optimum: here, the best feasible accuracy found.
    rep = constraint_report(study, optimum=best.value, names=[CONSTRAINT])
    by_number = {t.number: t for t in trials}
    g = rep.constraints[:, 0]
    cost = np.array([by_number[int(k)].user_attrs.get("cost", np.nan) for k in rep.numbers])
    print(f"\nPer epoch (S = {S} trials; kappa: the multiplier the sampler used, from its "
          "gpbandit:multipliers record; V_t/t: time-averaged violation at the epoch's end):")
    print(f"  trials   feasible  mean {kind:4s}   mean accuracy  kappa     V_t/t  "
          "time-avg accuracy")
    for start in range(0, len(g), S):
        end = min(start + S, len(g))
        used = [sampler_record(by_number[int(k)]) for k in rep.numbers[start:end]]
        kappas = [r["multipliers"]["kappa"][0] for r in used if r and r.get("multipliers")]
        kappa = f"{kappas[-1]:<8.3g}" if kappas else "-       "
        print(f"  {rep.numbers[start]:3d}-{rep.numbers[end - 1]:<3d}  "
              f"{np.mean(g[start:end] <= 0):>6.0%}   {np.mean(cost[start:end]):7.3g} {unit:2s}   "
              f"{rep.values[start:end].mean():.4f}         {kappa}  "
              f"{rep.average_violation[end - 1]:.3f}  {rep.average_value[end - 1]:.4f}")
    s = rep.summary()
    distinct = len({tuple(sorted(t.params.items())) for t in trials})
    print(f"After {s['n']} trials ({distinct} distinct parameter sets): time-averaged violation "
          f"{s['average_violation']:.3f} (towards 0 while the trials keep within the budget), "
          f"time-averaged accuracy {s['average_value']:.4f}, time-averaged regret against the "
          f"best feasible trial {s['average_regret']:.4f}")

    # The multipliers for the next trial, rebuilt from the stored trials as the sampler does at
    # every call (nothing is kept in memory).
    state = LongTermConstraints(variant, epoch_length=S).prepare(trials).state
    last = f"{state.epoch_means[-1][0]:+.3f}" if state.epoch_means else "-"
    print(f"Multipliers for the next trial: kappa = {[round(k, 4) for k in state.kappa]} after "
          f"{state.epoch} full epochs (last epoch mean g = {last})")


def main() -> None:
    args = parse_args()
    budget = args.budget if args.budget is not None else DEFAULT_BUDGET[args.constraint]
    variant = "noiseless" if args.constraint == "size" else "noisy"
    optuna.logging.set_verbosity(optuna.logging.WARNING)  # the progress bar shows the trials
    study = optuna.create_study(
        study_name=args.study_name or f"gpbandit-constrained-rf-{args.constraint}-{budget:g}",
        storage=make_storage(args.storage),
        sampler=ConstrainedGPUCBSampler(variant=variant, epoch_length=args.epoch_length,
                                        seed=args.seed),
        direction="maximize",
        load_if_exists=True,
    )
    n_before = len(study.trials)
    if n_before:
        print(f"Resuming study {study.study_name!r} with {n_before} trials.")
    print(f"Maximising 3-fold CV accuracy of a random forest on digits, {args.constraint} budget "
          f"{budget:g} {UNITS[args.constraint]} (Algorithm "
          f"{2 if variant == 'noiseless' else 3}, variant={variant!r}).")
    start = time.perf_counter()
    study.optimize(make_objective(args.constraint, budget), n_trials=args.n_trials,
                   show_progress_bar=True)
    print(f"Ran {args.n_trials} trials in {time.perf_counter() - start:.1f} s.")
    print_report(study, args.constraint, budget, variant, args.epoch_length)


if __name__ == "__main__":
    main()
