"""Tune an SVM on scikit-learn's bundled digits data with a GP bandit sampler.

The objective is the 10-fold cross-validated accuracy of an ``SVC`` over a log-scaled ``C`` and
``gamma`` and a categorical ``kernel``. No data is downloaded.

Run (from the repository root)::

    pip install -e .
    python examples/demo_sklearn.py                      # GP-UCB, 1-2 minutes on 2 cores
    python examples/demo_sklearn.py --sampler gp-ts --n-trials 20

The study is stored in ``gpbandit_demo.db`` (SQLite) in the working directory; running the
command again loads the same study and adds ``--n-trials`` more trials. ``--storage`` takes
any Optuna RDB URL, or a plain file path for a journal storage (``--storage demo.log``).
"""

from __future__ import annotations

import argparse
import time

import optuna
from optuna.trial import TrialState
from sklearn.datasets import load_digits
from sklearn.model_selection import cross_val_score
from sklearn.svm import SVC

from optuna_gpbandit import GPTSSampler, GPUCBSampler, IGPUCBSampler, sampler_record

SAMPLERS = {"gp-ucb": GPUCBSampler, "igp-ucb": IGPUCBSampler, "gp-ts": GPTSSampler}


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sampler", choices=sorted(SAMPLERS), default="gp-ucb")
    p.add_argument("--n-trials", type=int, default=120, help="trials to add in this run")
    p.add_argument("--seed", type=int, default=0, help="sampler seed")
    p.add_argument("--storage", default="sqlite:///gpbandit_demo.db",
                   help="Optuna RDB URL, or a file path for a JournalStorage")
    p.add_argument("--study-name", default=None,
                   help="default: gpbandit-demo-svc-<sampler>")
    return p.parse_args()


def make_storage(spec: str) -> str | optuna.storages.BaseStorage:
    """An RDB URL is passed through; anything else is a journal file path."""
    if "://" in spec:
        return spec
    return optuna.storages.JournalStorage(optuna.storages.journal.JournalFileBackend(spec))


def make_objective():
    X, y = load_digits(return_X_y=True)
    X = X / 16.0  # 8x8 images with pixel values 0..16

    def objective(trial: optuna.Trial) -> float:
        model = SVC(
            C=trial.suggest_float("C", 1e-2, 1e3, log=True),
            gamma=trial.suggest_float("gamma", 1e-4, 10.0, log=True),
            kernel=trial.suggest_categorical("kernel", ["rbf", "poly", "sigmoid"]),
        )
        return float(cross_val_score(model, X, y, cv=10).mean())

    return objective


def format_value(v: object) -> str:
    """A parameter as a user reads it: 1000, 0.1324, 1.23e-05."""
    if not isinstance(v, float):
        return str(v)
    return f"{v:.4g}" if 1e-3 <= abs(v) < 1e4 else f"{v:.3g}"


def print_sampler_summary(study: optuna.Study) -> None:
    """What the sampler thought at its last suggestion, in plain words (from the record the GP
    samplers store on every trial they sample, ``sampler_record``)."""
    complete = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
    records = [(t, sampler_record(t)) for t in complete]
    records = [(t, r) for t, r in records if r is not None]
    print(f"{len(records)} of {len(complete)} completed trials were chosen by the Gaussian-process "
          "model (the others were the initial space-filling design).")
    if not records:
        return
    trial, r = records[-1]
    print(f"At its last choice (trial #{trial.number}) the model predicted an accuracy of "
          f"{r['mu']:.4f} +- {r['sigma']:.4f}; the trial measured {trial.value:.4f}.")
    width = r.get("nu", r.get("beta", r.get("v")))
    print(f"  Exploration weight {width:.3g}: the optimistic score is the prediction plus this "
          "many standard deviations; it grows slowly with the trials, as the theory asks.")
    gp = r["gp"]
    order = sorted(zip(gp["lengthscales"], r["names"]))
    print("  Sensitivity (shorter lengthscale = accuracy changes faster with the parameter): "
          + ", ".join(f"{n} {v:.2g}" for v, n in order) + " (unit-scaled ranges).")
    share = 100 * gp["noise_var"] / gp["scale"]
    share_text = "under 0.1 %" if share < 0.1 else f"{share:.2g} %"
    print(f"  Estimated noise: {share_text} of the signal variance (the part of the scores the "
          "model treats as chance, not as the parameters' effect).")
    print(f"  Information gathered so far: {r['info_gain']:.1f} nats (more = a better-known "
          "objective).")


def main() -> None:
    args = parse_args()
    optuna.logging.set_verbosity(optuna.logging.WARNING)  # the progress bar shows the trials
    study = optuna.create_study(
        study_name=args.study_name or f"gpbandit-demo-svc-{args.sampler}",
        storage=make_storage(args.storage),
        sampler=SAMPLERS[args.sampler](seed=args.seed),
        direction="maximize",
        load_if_exists=True,
    )
    n_before = len(study.trials)
    if n_before:
        print(f"Resuming study {study.study_name!r} with {n_before} trials.")
    start, cpu = time.perf_counter(), time.process_time()
    study.optimize(make_objective(), n_trials=args.n_trials, show_progress_bar=True)
    print(f"Ran {args.n_trials} trials in {time.perf_counter() - start:.0f} s "
          f"({time.process_time() - cpu:.0f} s of CPU in this process).")

    print(f"Best accuracy: {study.best_value:.4f} (trial #{study.best_trial.number})")
    print("Best params:   " + ", ".join(f"{k}={format_value(v)}"
                                        for k, v in study.best_params.items()))
    print_sampler_summary(study)


if __name__ == "__main__":
    main()
