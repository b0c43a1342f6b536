"""Tune a random forest for accuracy under a budget: per trial (model size) or on average
(fit time).

The objective is the 3-fold cross-validated accuracy of a ``RandomForestClassifier`` on
scikit-learn's bundled digits data (nothing is downloaded), over the number of trees (5-200, log
scale) and their maximum depth (2-30). Bigger forests are more accurate, and the budget says how
big they may be:

* ``--constraint size`` (default): the pickled size of the fitted forest must stay within
  ``--budget`` KB (default 300) *for the model you deploy*: a per-trial limit. The constraint
  value is ``size - budget`` in KB (hundreds: units do not matter to the sampler), and the
  sampler is ``ConstrainedGPUCBSampler()``, whose default ``constraints=FeasibleConstraints()``
  (optimistic feasibility, CONFIG) keeps every trial to the forests that may fit and finds the
  most accurate one that does.
* ``--constraint time``: the mean fit time of a fold, in seconds, against ``--budget`` s (default
  0.15; machine-dependent, so set your own), read as a *long-term* budget: the tuning job as a
  whole may spend ``budget`` seconds of training per trial on average, fast trials paying for
  slow ones. That is Shi & Eryilmaz's setting (AISTATS 2022):
  ``constraints=LongTermConstraints("noisy")``, Algorithm 3 (``"noisy"``: timings are noisy),
  constraint value ``time / budget - 1``.

The constraint is reported the Optuna way, ``trial.set_constraint("budget", value)``: ``> 0`` is
a violation, ``<= 0`` is feasible. ``study.best_trial`` is Optuna's best *feasible* trial, which
is what you would deploy; the report shows it over the trials, with the share of feasible trials
and the violation.

Run (from the repository root)::

    pip install -e .
    python examples/constrained_tuning.py                           # 30 s - 1 min on 2 cores
    python examples/constrained_tuning.py --budget 150 --n-trials 30
    python examples/constrained_tuning.py --constraint time --budget 0.1

The study is stored in ``gpbandit_constrained.db`` (SQLite) in the working directory; running the
command again loads the same study and adds ``--n-trials`` more trials (constraint models and
multipliers are rebuilt from the stored trials, so the resumed run continues where it stopped).
The study name contains the constraint and the budget, so another budget starts another study.
``--storage`` takes any Optuna RDB URL, or a plain file path for a journal storage.
"""

from __future__ import annotations

import argparse
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
                   help="model size in KB per trial (default, FeasibleConstraints()) or mean "
                        "fit time in s on average (LongTermConstraints('noisy'), Algorithm 3)")
    p.add_argument("--budget", type=float, default=None,
                   help="budget in KB (size, default 300) or seconds per fit (time, default 0.15)")
    p.add_argument("--n-trials", type=int, default=60, help="trials to add in this run")
    p.add_argument("--epoch-length", type=int, default=10,
                   help="--constraint time: trials per epoch S (multipliers are updated "
                        "after each); keep it fixed for a study")
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

    Size: ``size - budget`` in KB, as measured (the sampler standardises each constraint).

    Time: ``time / budget - 1``, linear and not clipped: here the time average is the real
    long-term budget (total fit time <= budget x trials), fast trials do pay for slow ones, and
    Algorithm 3's penalty is linear anyway.
    """
    if kind == "size":
        return cost - budget
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

    rep = constraint_report(study, names=[CONSTRAINT])
    print("\nBest feasible accuracy over the trials (feasible share so far; violation: "
          "mean of max(0, g) so far):")
    g = rep.constraints[:, 0]
    for end in sorted({min(k, len(g)) for k in (10, 20, 40, 60, 100, 200, len(g))}):
        best_so_far = rep.best_feasible[end - 1]
        print(f"  after {end:3d} trials: best feasible "
              + ("-     " if np.isnan(best_so_far) else f"{best_so_far:.4f}")
              + f"   feasible {rep.feasible_share[end - 1]:4.0%}"
              + f"   violation {np.maximum(g[:end], 0.0).mean():.3g}")
    if kind == "time":
        print_long_term(study, rep, trials, variant, S)


def print_long_term(study: optuna.Study, rep, trials: list, variant: str, S: int) -> None:
    """Per epoch: the multiplier, the time-averaged violation ``[sum_s g(x_s)]^+ / t`` (a trial
    under the budget offsets an earlier one over it) and the time-averaged accuracy."""
    by_number = {t.number: t for t in trials}
    g = rep.constraints[:, 0]
    cost = np.array([by_number[int(k)].user_attrs.get("cost", np.nan) for k in rep.numbers])
    print(f"\nPer epoch (S = {S} trials; kappa: the multiplier the sampler used, from its "
          "gpbandit:multipliers record; V_t/t: time-averaged violation at the epoch's end):")
    print("  trials   feasible  mean time    mean accuracy  kappa     V_t/t  "
          "time-avg accuracy")
    for start in range(0, len(g), S):
        end = min(start + S, len(g))
        used = [sampler_record(by_number[int(k)]) for k in rep.numbers[start:end]]
        kappas = [r["multipliers"]["kappa"][0] for r in used if r and r.get("multipliers")]
        kappa = f"{kappas[-1]:<8.3g}" if kappas else "-       "
        print(f"  {rep.numbers[start]:3d}-{rep.numbers[end - 1]:<3d}  "
              f"{np.mean(g[start:end] <= 0):>6.0%}   {np.mean(cost[start:end]):7.3g} s    "
              f"{rep.values[start:end].mean():.4f}         {kappa}  "
              f"{rep.average_violation[end - 1]:.3f}  {rep.average_value[end - 1]:.4f}")
    s = rep.summary()
    print(f"After {s['n']} trials: time-averaged violation {s['average_violation']:.3f} "
          f"(towards 0 while the trials keep within the budget on average), time-averaged "
          f"accuracy {s['average_value']:.4f}")
    # The multipliers for the next trial, rebuilt from the stored trials as the sampler does at
    # every call (nothing is kept in memory).
    state = LongTermConstraints(variant, epoch_length=S).prepare(trials).state
    last = f"{state.epoch_means[-1][0]:+.3f}" if state.epoch_means else "-"
    print(f"Multipliers for the next trial: kappa = {[round(k, 4) for k in state.kappa]} after "
          f"{state.epoch} full epochs (last epoch mean g = {last}, in units of its scale)")


def main() -> None:
    args = parse_args()
    budget = args.budget if args.budget is not None else DEFAULT_BUDGET[args.constraint]
    variant = "noisy"  # --constraint time: Algorithm 3 (noisy timings)
    optuna.logging.set_verbosity(optuna.logging.WARNING)  # the progress bar shows the trials
    study = optuna.create_study(
        study_name=args.study_name or f"gpbandit-constrained-rf-{args.constraint}-{budget:g}",
        storage=make_storage(args.storage),
        sampler=(ConstrainedGPUCBSampler(seed=args.seed) if args.constraint == "size" else
                 ConstrainedGPUCBSampler(seed=args.seed, constraints=LongTermConstraints(
                     variant, epoch_length=args.epoch_length))),
        direction="maximize",
        load_if_exists=True,
    )
    n_before = len(study.trials)
    if n_before:
        print(f"Resuming study {study.study_name!r} with {n_before} trials.")
    print(f"Maximising 3-fold CV accuracy of a random forest on digits, {args.constraint} budget "
          f"{budget:g} {UNITS[args.constraint]} "
          + ("per trial (FeasibleConstraints())." if args.constraint == "size"
             else "on average (LongTermConstraints('noisy'), Algorithm 3)."))
    start = time.perf_counter()
    study.optimize(make_objective(args.constraint, budget), n_trials=args.n_trials,
                   show_progress_bar=True)
    print(f"Ran {args.n_trials} trials in {time.perf_counter() - start:.1f} s.")
    print_report(study, args.constraint, budget, variant, args.epoch_length)


if __name__ == "__main__":
    main()
