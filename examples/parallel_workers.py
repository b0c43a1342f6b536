"""Tune a model with 4 worker processes sharing one Optuna storage.

Each worker is a separate process (as on a cluster: same script, same storage, same sampler
settings). While a worker's trial runs, the other workers see its point through the storage: with
the default ``pending=Hallucinate()`` the point shrinks the GP's variance around it and no other
worker is given a point within 0.03 (encoded units) of it, so the workers never repeat each
other, and every result is used when it arrives, however late.

The task: a gradient-boosting classifier on scikit-learn's bundled breast-cancer data (5-fold
cross-validated accuracy; learning rate, depth, number of trees, subsampling). Nothing is
downloaded.

Run (from the repository root)::

    pip install -e .
    python examples/parallel_workers.py                    # 4 workers x 15 trials, 40-80 s
    python examples/parallel_workers.py --storage postgresql://user:pw@host/db --workers 8

The default storage is a journal file (``gpbandit_parallel.log``), which many processes can
share safely; any Optuna RDB URL works too (PostgreSQL or MySQL for many machines; SQLite locks
under concurrent writers). Running the command again adds trials to the same study.

The study is created once, before the workers start, and each worker loads it: processes that
create one study in a new database at the same moment can crash in Optuna's schema set-up (seen
with SQLite). Set-ups for several machines: docs/pending.md, "Sharing a study between processes".
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import time

import numpy as np
import optuna
from optuna.trial import TrialState
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import GradientBoostingClassifier
from sklearn.model_selection import cross_val_score

from optuna_gpbandit import GPUCBSampler, sampler_record

STUDY = "gpbandit-parallel-gbc"


def make_storage(spec: str) -> str | optuna.storages.BaseStorage:
    """An RDB URL is passed through; anything else is a journal file path."""
    if "://" in spec:
        return spec
    return optuna.storages.JournalStorage(optuna.storages.journal.JournalFileBackend(spec))


def objective(trial: optuna.Trial) -> float:
    X, y = load_breast_cancer(return_X_y=True)
    model = GradientBoostingClassifier(
        learning_rate=trial.suggest_float("learning_rate", 1e-3, 1.0, log=True),
        max_depth=trial.suggest_int("max_depth", 1, 6),
        n_estimators=trial.suggest_int("n_estimators", 10, 150, log=True),
        subsample=trial.suggest_float("subsample", 0.3, 1.0),
        random_state=0,
    )
    return float(cross_val_score(model, X, y, cv=5).mean())


def worker(storage_spec: str, n_trials: int, seed: int) -> None:
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    # Every worker builds the same sampler: its draws depend on (seed, trial number), so the
    # workers still explore different points. The study exists (main created it): load it.
    sampler = GPUCBSampler(seed=seed)
    study = optuna.load_study(study_name=STUDY, storage=make_storage(storage_spec), sampler=sampler)
    study.optimize(objective, n_trials=n_trials)


def overlapping_duplicates(trials: list[optuna.trial.FrozenTrial]) -> int:
    """Pairs of trials that ran at the same time with the same params."""
    count = 0
    for i, a in enumerate(trials):
        for b in trials[i + 1 :]:
            overlap = a.datetime_start < b.datetime_complete and b.datetime_start < a.datetime_complete
            count += overlap and a.params == b.params
    return count


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--trials-per-worker", type=int, default=15)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--storage", default="gpbandit_parallel.log",
                   help="Optuna RDB URL, or a file path for a JournalStorage")
    args = p.parse_args()

    # Once, before any worker starts (the workers load it): not in each worker, where processes
    # creating one study in a new database at the same moment can crash in the schema set-up.
    optuna.create_study(study_name=STUDY, storage=make_storage(args.storage),
                        direction="maximize", load_if_exists=True)
    start = time.perf_counter()
    ctx = mp.get_context("spawn")  # real separate processes, as on several machines
    procs = [
        ctx.Process(target=worker, args=(args.storage, args.trials_per_worker, args.seed))
        for _ in range(args.workers)
    ]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join()
    elapsed = time.perf_counter() - start

    study = optuna.load_study(study_name=STUDY, storage=make_storage(args.storage))
    trials = study.get_trials(states=(TrialState.COMPLETE,))
    records = [r for r in map(sampler_record, trials) if r and "pending" in r]
    seen = [r["pending"]["pending"] for r in records]
    late = sum(r["pending"]["late"] for r in records)
    print(f"{len(trials)} complete trials in the study ({args.workers} workers, "
          f"{elapsed:.0f} s this run); failed workers: "
          f"{sum(proc.exitcode != 0 for proc in procs)}")
    print(f"pending points the GP saw per suggestion: mean {np.mean(seen or [0]):.1f}, "
          f"max {max(seen or [0])}; completed results left unused: {late}")
    print(f"pairs of concurrent trials with the same params: {overlapping_duplicates(trials)}")
    print(f"best accuracy {study.best_value:.4f} with {study.best_params}")


if __name__ == "__main__":
    main()
