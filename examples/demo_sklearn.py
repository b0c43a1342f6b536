"""Tune an SVM on scikit-learn's bundled digits data with a GP bandit sampler.

The objective is the 10-fold cross-validated accuracy of an ``SVC`` over a log-scaled ``C`` and
``gamma`` and a categorical ``kernel``. No data is downloaded.

Run (from the repository root)::

    pip install -e .
    python examples/demo_sklearn.py                      # GP-UCB, ~1-2 minutes on 2 cores
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


def print_sampler_summary(study: optuna.Study) -> None:
    """Summarise the per-trial record the GP samplers store in the trials' system attrs."""
    complete = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
    records = [(t, sampler_record(t)) for t in complete]
    records = [(t, r) for t, r in records if r is not None]
    print(f"GP-sampled trials: {len(records)} of {len(complete)} completed")
    if not records:
        return
    trial, r = records[-1]
    width = f"beta={r['beta']:.3f}" if "beta" in r else f"v={r['v']:.3f}"
    print(f"Last GP-sampled trial #{trial.number}: t={r['t']}, {width}, "
          f"information gain={r['info_gain']:.3f}")
    print(f"  predicted {r['mu']:.4f} +- {r['sigma']:.4f}, observed {trial.value:.4f}")
    gp = r["gp"]
    scales = ", ".join(f"{n}={v:.3g}" for n, v in zip(r["names"], gp["lengthscales"]))
    print(f"  GP ({gp['kernel']}): lengthscales {scales}; "
          f"scale={gp['scale']:.3g}, noise_var={gp['noise_var']:.3g}")


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
    start = time.perf_counter()
    study.optimize(make_objective(), n_trials=args.n_trials, show_progress_bar=True)
    print(f"Ran {args.n_trials} trials in {time.perf_counter() - start:.1f} s.")

    print(f"Best accuracy: {study.best_value:.4f} (trial #{study.best_trial.number})")
    print(f"Best params:   {study.best_params}")
    print_sampler_summary(study)


if __name__ == "__main__":
    main()
