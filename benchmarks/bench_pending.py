#!/usr/bin/env python
"""Pending trials in the setups users have every day: which ``pending=`` rule loses nothing.

Three cases, each deterministic given the seed (the parallel schedules are simulated through
ask/tell, so the order of asks and tells, and with it every delay, is fixed):

* ``batch``: ask ``size`` trials, evaluate, tell them all, ``rounds`` times (5 x 20 and 3 x 60),
  on Branin (2-D, smooth, minimised). Reports the best value's regret, the smallest distance
  between two points of one batch (unit box), and how many completed trials the sampler's model
  labelled censored at the first ask of the last batch (results it threw away).
* ``slow``: two workers where good configurations take longer (they train longer and are not
  pruned): ``f(x) = |x - c|^2`` on [0, 1]^2 with ``c = (0.7, 0.3)``; a trial within 0.15 of
  ``c`` (the good region) runs 30 time units, any other 1. Each worker tells its result and asks
  again when it finishes (simulated clock, ties by worker). 120 trials. Reports the share of
  trials in the good region and the best value. ``slow-threads``: the same with real threads,
  ``study.optimize(n_jobs=2)``, good trials sleeping 0.3 s and the others 0.01 s.
* ``foreign``: a study run by 30 parallel workers of random search (300 Branin trials with start
  and completion times of a simulated 30-worker schedule, durations log-normal), continued by
  20 sequential trials of the sampler under test. Reports how many completed trials its model
  labelled censored (the largest count over the 20 asks) and the regret after the 20.

Methods: ``GPUCBSampler`` (``--sampler igp-ucb`` / ``gp-ts`` for the others) with the library
default (``pending=Hallucinate()``, pending points kept apart), ``Censoring.paper()`` (the
paper's literal rule: late results stay censored, window 20), ``Censoring()`` (censoring of
running trials only) and ``IgnorePending()``; Optuna's ``GPSampler`` (where torch is installed)
and ``TPESampler(constant_liar=True)``.

    python benchmarks/bench_pending.py                  # 5 seeds, every case
    python benchmarks/bench_pending.py --seeds 3 --cases batch slow --methods default paper
"""

from __future__ import annotations

import argparse
import datetime
import heapq
import sys
import time

from _common import limit_threads, median_rows, threads_from_argv

if __name__ == "__main__":
    limit_threads(threads_from_argv(sys.argv[1:]))

import numpy as np  # noqa: E402
import optuna  # noqa: E402

from optuna_gpbandit import (  # noqa: E402
    Censoring,
    GPTSSampler,
    GPUCBSampler,
    Hallucinate,
    IGPUCBSampler,
    IgnorePending,
)
from optuna_gpbandit.report import sampler_record  # noqa: E402
from problems import PROBLEMS  # noqa: E402

BRANIN = PROBLEMS["branin"]
CENTRE = np.array([0.7, 0.3])
GOOD_RADIUS = 0.15
SLOW, FAST = 30.0, 1.0
OURS = {"gp-ucb": GPUCBSampler, "igp-ucb": IGPUCBSampler, "gp-ts": GPTSSampler}
SAMPLER = ["gp-ucb"]  # set by --sampler


def make_sampler(method: str, seed: int) -> optuna.samplers.BaseSampler:
    if method == "gpsampler":
        return optuna.samplers.GPSampler(seed=seed)
    if method == "tpe":
        return optuna.samplers.TPESampler(seed=seed, constant_liar=True)
    if method == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    pending = {
        "default": None,
        "paper": Censoring.paper(),
        "censor": Censoring(),
        "hallucinate": Hallucinate(),
        "ignore": IgnorePending(),
    }[method]
    kw = {} if pending is None else {"pending": pending}
    return OURS[SAMPLER[0]](seed=seed, **kw)


def _point(trial: optuna.trial.Trial, d: int) -> np.ndarray:
    return np.array([trial.suggest_float(f"x{i}", 0.0, 1.0) for i in range(d)])


def _censored_completed(study: optuna.Study, number: int) -> int:
    """Completed results the sampler's model did not use when it sampled trial ``number`` (0
    for Optuna's samplers and for startup trials)."""
    record = sampler_record(study.get_trials(deepcopy=False)[number])
    counts = (record or {}).get("pending")
    return counts["late"] if counts else 0


def run_batch(method: str, seed: int, rounds: int, size: int) -> dict:
    study = optuna.create_study(sampler=make_sampler(method, seed))
    min_dist, censored = np.inf, 0
    for r in range(rounds):
        trials = [study.ask() for _ in range(size)]
        X = np.array([_point(t, 2) for t in trials])  # Optuna samples at the first suggest
        if r == rounds - 1:
            censored = _censored_completed(study, trials[0].number)
        diff = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
        min_dist = min(min_dist, float(diff[np.triu_indices(size, 1)].min()))
        for t, x in zip(trials, X):
            study.tell(t, BRANIN.f(x))
    return {"regret": study.best_value - BRANIN.minimum, "min_dist": min_dist,
            "censored": censored}


def run_slow(method: str, seed: int, n_trials: int = 120) -> dict:
    study = optuna.create_study(sampler=make_sampler(method, seed))
    events: list[tuple[float, int, optuna.trial.Trial, float]] = []
    asked, good = 0, 0
    for worker in range(2):
        t = study.ask()
        x = _point(t, 2)
        inside = np.linalg.norm(x - CENTRE) < GOOD_RADIUS
        good += inside
        heapq.heappush(events, (SLOW if inside else FAST, worker, t, float(((x - CENTRE) ** 2).sum())))
        asked += 1
    while events:
        now, worker, t, y = heapq.heappop(events)
        study.tell(t, y)
        if asked < n_trials:
            t = study.ask()
            x = _point(t, 2)
            inside = np.linalg.norm(x - CENTRE) < GOOD_RADIUS
            good += inside
            heapq.heappush(events, (now + (SLOW if inside else FAST), worker, t,
                                    float(((x - CENTRE) ** 2).sum())))
            asked += 1
    return {"regret": study.best_value, "good_share": good / n_trials}


def run_slow_threads(method: str, seed: int, n_trials: int = 120) -> dict:
    """``slow`` with real threads: ``study.optimize(n_jobs=2)``, good trials sleep 0.3 s, others
    0.01 s (not deterministic: the schedule depends on the machine)."""
    study = optuna.create_study(sampler=make_sampler(method, seed))

    def objective(trial: optuna.Trial) -> float:
        x = _point(trial, 2)
        inside = np.linalg.norm(x - CENTRE) < GOOD_RADIUS
        time.sleep(0.3 if inside else 0.01)
        trial.set_user_attr("good", bool(inside))
        return float(((x - CENTRE) ** 2).sum())

    study.optimize(objective, n_trials=n_trials, n_jobs=2)
    good = sum(t.user_attrs.get("good", False) for t in study.trials)
    return {"regret": study.best_value, "good_share": good / n_trials}


def foreign_history(seed: int, n: int = 300, workers: int = 30) -> list[optuna.trial.FrozenTrial]:
    """``n`` random-search Branin trials of a simulated ``workers``-worker schedule."""
    rng = np.random.default_rng([seed, 30])
    base = datetime.datetime(2026, 1, 1)
    free = [0.0] * workers
    trials = []
    dist = {f"x{i}": optuna.distributions.FloatDistribution(0.0, 1.0) for i in range(2)}
    order = []
    for k in range(n):
        w = int(np.argmin(free))
        start = free[w]
        duration = float(rng.lognormal(0.0, 0.5))
        free[w] = start + duration
        order.append((start, start + duration))
    for k, (start, end) in enumerate(sorted(order)):
        x = rng.random(2)
        trials.append(optuna.trial.FrozenTrial(
            number=k, state=optuna.trial.TrialState.COMPLETE, value=BRANIN.f(x),
            datetime_start=base + datetime.timedelta(seconds=60 * start),
            datetime_complete=base + datetime.timedelta(seconds=60 * end),
            params={f"x{i}": float(x[i]) for i in range(2)}, distributions=dist,
            user_attrs={}, system_attrs={}, intermediate_values={}, trial_id=k))
    return trials


def run_foreign(method: str, seed: int, n_more: int = 20) -> dict:
    study = optuna.create_study(sampler=make_sampler(method, seed))
    study.add_trials(foreign_history(seed))
    censored = 0
    for _ in range(n_more):
        study.optimize(lambda t: BRANIN.f(_point(t, 2)), n_trials=1)
        censored = max(censored, _censored_completed(study, study.trials[-1].number))
    return {"regret": study.best_value - BRANIN.minimum, "censored": censored}


CASES = {
    "batch5x20": lambda m, s: run_batch(m, s, 5, 20),
    "batch3x60": lambda m, s: run_batch(m, s, 3, 60),
    "slow": run_slow,
    "slow-threads": run_slow_threads,
    "foreign": run_foreign,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--cases", nargs="+", default=list(CASES))
    parser.add_argument("--methods", nargs="+",
                        default=["default", "paper", "censor", "ignore", "gpsampler", "tpe"])
    parser.add_argument("--sampler", choices=sorted(OURS), default="gp-ucb",
                        help="our sampler under the pending rules (default gp-ucb)")
    parser.add_argument("--threads", default="1")
    args = parser.parse_args()
    SAMPLER[0] = args.sampler
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    try:
        import torch  # noqa: F401  (GPSampler needs it)
    except ImportError:
        args.methods = [m for m in args.methods if m != "gpsampler"]
    for case in args.cases:
        print(f"\n### {case}\n")
        first = True
        for method in args.methods:
            t0 = time.perf_counter()
            runs = [CASES[case](method, seed) for seed in range(args.seeds)]
            rows = median_rows(method, runs, time.perf_counter() - t0, header=first)
            first = False
            print("\n".join(rows), flush=True)


if __name__ == "__main__":
    main()
