"""Tune an SVM whose input data drift during the study, with GP-UCB-CPD.

The objective is the validation accuracy of an RBF ``SVC`` (``C = 10``, log-scaled ``gamma`` in
``[1e-5, 1]``) on a fixed 600 / 400 split of scikit-learn's bundled digits data. From trial
``--change-at`` on, the data pipeline changes: the pixel values are no longer divided by 16 (a
unit change upstream, as when a preprocessing step is dropped), so every squared distance grows
256-fold and the good ``gamma`` moves down by more than two decades. The ``gamma`` that was best
before the change scores near chance afterwards. No data is downloaded.

``GPUCBCPDSampler`` stores the GP's prediction of each trial's accuracy when the trial is asked
and tests the result against it (a CUSUM on the standardised residuals, false alarms at rate
``alpha = 1e-4`` per trial). After the change the sampler's next ``gamma`` scores near chance
where the model predicted 0.99: the alarm is raised, the sampler logs a message, forgets the
trials before the change and searches again. ``study.best_trial`` still reports the pre-change
best (stale: its value was measured on the old data); ``sampler.current_best_trial(study)``
gives the best trial since the last detected change. The script re-scores both on the drifted
data.

Measured on seeds 0-3 (``--seed``): the change detected at trial 80 itself every time, no false
alarm (a validation accuracy on 400 images moves in steps of 0.0025; surprises below 2 % of the
objective's spread do not count, or one image would be a "change"); ``current_best_trial``
scores 0.99 on the drifted data where ``study.best_trial`` scores 0.11. About 15 s per run.
The former default (Avanesov's test on uniform-exploration trials,
``reset=ChangeDetection.avanesov()``) detected it 41-67 trials later.

Run (from the repository root)::

    pip install -e .
    python examples/drifting_data.py                    # 200 trials, change at 80, ~15 s
    python examples/drifting_data.py --seed 1 --change-at 60

The study is stored in ``gpbandit_drift.db`` (SQLite) in the working directory, one study per
``--seed`` / ``--change-at``; running the same command again loads that study and adds
``--n-trials`` more trials (the drift depends on the trial number, so it stays consistent).
``--storage`` takes any Optuna RDB URL, or a plain file path for a journal storage.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time

import numpy as np
import optuna
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.svm import SVC

from optuna_gpbandit import GPUCBCPDSampler
from optuna_gpbandit.changepoint import ROLE_KEY

C_FIXED = 10.0


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n-trials", type=int, default=200, help="trials to add in this run")
    p.add_argument("--seed", type=int, default=0, help="sampler seed")
    p.add_argument("--change-at", type=int, default=80,
                   help="first trial number that sees the drifted data")
    p.add_argument("--storage", default="sqlite:///gpbandit_drift.db",
                   help="Optuna RDB URL, or a file path for a JournalStorage")
    p.add_argument("--study-name", default=None,
                   help="default: gpbandit-drift-svc-seed<seed>-change<change-at>")
    return p.parse_args()


def make_storage(spec: str) -> str | optuna.storages.BaseStorage:
    """An RDB URL is passed through; anything else is a journal file path."""
    if "://" in spec:
        return spec
    return optuna.storages.JournalStorage(optuna.storages.journal.JournalFileBackend(spec))


def make_objective(change_at: int):
    """The objective, and ``score(gamma, drifted)`` to re-evaluate a ``gamma`` on either data."""
    X, y = load_digits(return_X_y=True)  # 8x8 images, pixel values 0..16
    # A fixed subsample keeps one fit at ~0.05 s: 600 images to train on, 400 to validate.
    X_train, X_valid, y_train, y_valid = train_test_split(
        X, y, train_size=600, test_size=400, random_state=0, stratify=y)

    def score(gamma: float, drifted: bool) -> float:
        # Before the change the pipeline scales pixels to [0, 1]; afterwards it passes the raw
        # 0..16 values through.
        scale = 1.0 if drifted else 1.0 / 16.0
        model = SVC(C=C_FIXED, gamma=gamma).fit(X_train * scale, y_train)
        return float(model.score(X_valid * scale, y_valid))

    def objective(trial: optuna.Trial) -> float:
        gamma = trial.suggest_float("gamma", 1e-5, 1.0, log=True)
        return score(gamma, drifted=trial.number >= change_at)

    return objective, score


class DetectionPrinter:
    """Optuna callback: prints each newly detected change point as it appears."""

    def __init__(self, sampler: GPUCBCPDSampler, known: list[int]) -> None:
        self.sampler = sampler
        self.known = list(known)

    def __call__(self, study: optuna.Study, trial: optuna.trial.FrozenTrial) -> None:
        points = self.sampler.change_points(study)
        for p in points[len(self.known):]:
            print(f"  trial {trial.number}: change detected at trial {p}")
        self.known = points


def describe(label: str, trial: optuna.trial.FrozenTrial | None, score) -> str:
    if trial is None:
        return f"{label}: none yet"
    gamma = trial.params["gamma"]
    return (f"{label}: trial #{trial.number}, gamma={gamma:.3g}, accuracy {trial.value:.4f} "
            f"when tried, {score(gamma, drifted=True):.4f} on the current (drifted) data")


def main() -> None:
    args = parse_args()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    # The sampler announces a detected change with an INFO message of the package's logger.
    logging.basicConfig(stream=sys.stdout, format="  [%(name)s] %(message)s")
    logging.getLogger("optuna_gpbandit").setLevel(logging.INFO)

    sampler = GPUCBCPDSampler(seed=args.seed)
    study = optuna.create_study(
        study_name=args.study_name or f"gpbandit-drift-svc-seed{args.seed}-change{args.change_at}",
        storage=make_storage(args.storage),
        sampler=sampler,
        direction="maximize",
        load_if_exists=True,
    )
    n_before = len(study.trials)
    if n_before:
        print(f"Resuming study {study.study_name!r} with {n_before} trials.")
    print(f"Running trials {n_before}..{n_before + args.n_trials - 1}; the data drift from "
          f"trial {args.change_at} on (pixels no longer divided by 16).")
    start = time.perf_counter()
    objective, score = make_objective(args.change_at)
    study.optimize(objective, n_trials=args.n_trials,
                   callbacks=[DetectionPrinter(sampler, sampler.change_points(study))])
    print(f"Ran {args.n_trials} trials in {time.perf_counter() - start:.1f} s.")

    points = sampler.change_points(study)
    print(f"\nTrue change at trial {args.change_at}; detected change points: {points}")
    after = [p for p in points if p >= args.change_at]
    if after:
        print(f"First detection after the change: trial {after[0]} "
              f"({after[0] - args.change_at} trials later).")
    elif points:
        print("Only detections before the change (false alarms) so far.")
    else:
        print("No change detected yet: run more trials (the command resumes the study).")
    n_uniform = sum(t.system_attrs.get(ROLE_KEY) == "uniform" for t in study.trials)
    print(f"Uniform-exploration trials: {n_uniform} of {len(study.trials)}.")

    print()
    print(describe("study.best_trial (all trials)     ", study.best_trial, score))
    print(describe("sampler.current_best_trial(study) ", sampler.current_best_trial(study), score))
    tail = [t.value for t in study.trials[-20:] if t.value is not None
            and t.system_attrs.get(ROLE_KEY) == "model"]
    if tail:
        print(f"Median accuracy of the GP-UCB trials among the last 20: {np.median(tail):.4f}")


if __name__ == "__main__":
    main()
