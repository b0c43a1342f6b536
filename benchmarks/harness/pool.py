"""Random search's expected best on one (problem, seed), from a pool of random evaluations.

Used by the suites scored against a pool (``Scoring(kind="pool")``: Bayesmark, users'
objectives). A suite whose objective depends on the run's seed (Bayesmark: each seed
cross-validates on its own split) has a pool per (problem, seed); one whose objective does not
has one pool per problem, kept under seed 0 (``Suite.objective_seed``).

The score's zero on seed ``s`` of a problem is ``rand_s(t)``, the expected best loss of ``t``
random-search trials on that seed's objective. It is estimated, as Bayesmark estimates its
random-search baseline, from a pool: ``n`` configurations drawn as the suite's random search
draws them (Optuna's ``RandomSampler`` through the problem's own ``suggest``, seeded by
:func:`pool_seed`, a stream of its own: no run's trials are in the pool), each evaluated once on
the seed's objective. With the pool's values sorted, ``v_(1) <= ... <= v_(n)``, the expected
minimum of ``t`` of them drawn without replacement is

    E[min] = sum_k v_(k) P(min is the k-th smallest),   P = C(n - k, t - 1) / C(n, t)

(of the C(n, t) equally likely t-subsets, C(n - k, t - 1) hold the k-th smallest and t - 1 of
the n - k above it; ties change nothing, as tied values are equal). Averaged over the pool's
draws this is the mean of the minimum over all t-subsets of the pool, so it is unbiased for the
expected best of t random trials (a U-statistic), with far less variance than the mean of a few
random-search runs. It needs ``t <= n``, and more: at ``n = t`` it is the pool's minimum, one
run's best, which the score cannot use (``POOL_PER_TRIAL``), so a pool is at least 1.6 times as
long as the longest budget it scores (``least_pool``). The estimator is ``scoring.py``'s
(``expected_min``); this module draws, evaluates and keeps the pools.

A pool is evaluated once per (problem, seed) and cached in the result directory, one JSON line
per pool (``pool.jsonl``: the values, the raw parameters, the seconds); a longer pool extends a
shorter one (the same stream: only the new configurations are evaluated), and of the lines of one
(problem, seed) the longest counts.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import sys
import time
import traceback
from typing import Any

from . import runner
from .suite import Suite, Task, get_suite

POOL_FILE = "pool.jsonl"
POOL_N = 64
"""Default pool size at up to 40 trials (``--pool``)."""
POOL_PER_TRIAL = POOL_N / 40
"""The least pool size per trial of the longest budget a pool scores (64 at 40 trials).

With a pool of exactly ``t`` values, ``rand_s(t)`` is the pool's minimum: one random-search
run's best. As ``opt_s`` takes the pool in, a seed where that one draw beat every run has
``rand_s(t) = opt_s``, and every run not at ``opt_s`` scores the floor, however close it came:
measured on the validation half scored with 40-value pools at 40 trials, ada_diabetes_mae had
GP-UCB at -100 on 6 of its 10 seeds and `GPSampler` on 8 (docs/benchmarks.md). At ``1.6 t``
values the pool's minimum weighs ``t / n = 0.625`` in ``rand_s(t)`` and the score is graded."""


def pool_size(trials: int) -> int:
    """The pool size a run of ``trials`` trials is scored with: ``max(POOL_N, ceil(1.6 trials))``
    (64 at 40 trials, 160 at 100)."""
    return max(POOL_N, least_pool(trials))


def least_pool(trials: int) -> int:
    """The shortest pool that may score a budget of ``trials``: ``ceil(1.6 trials)``."""
    return math.ceil(POOL_PER_TRIAL * trials)


# --------------------------------------------------------------------------- the pool
def pool_seed(problem: str, seed: int) -> int:
    """The seed of the pool's ``RandomSampler`` on (problem, seed): a hash, so that the pool's
    stream is none of the runs' (a Random run of seed s uses ``RandomSampler(seed=s)``)."""
    text = json.dumps(["pool", problem, int(seed)])
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little")


def draw(suite: "Suite", problem: str, n: int, seed: int) -> list[dict]:
    """The pool's first ``n`` raw (Optuna) parameter sets on (problem, seed)."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=pool_seed(problem,
                                                                                      seed)))
    suggest = suite.problem(problem, seed).suggest
    return [suggest(study.ask()) for _ in range(n)]


def _plain(value: Any) -> Any:
    """A JSON value of a parameter (numpy scalars -> Python; bools and strings as they are)."""
    return value.item() if hasattr(value, "item") else value


def evaluate(suite: "Suite", task: Task, known: dict | None = None) -> dict:
    """The pool record of ``task`` (problem, seed, ``n_trials`` = pool size), extending
    ``known`` (a shorter pool of the same (problem, seed)) where its configurations agree."""
    params = [{k: _plain(v) for k, v in p.items()}
              for p in draw(suite, task.problem, task.n_trials, task.seed)]
    values: list[float] = []
    seconds: list[float] = []
    if known and known["params"] == params[:len(known["params"])]:
        values, seconds = list(known["values"]), list(known["objective_seconds"])
    prob = suite.problem(task.problem, task.seed)
    for raw in params[len(values):]:
        t0 = time.process_time()
        values.append(float(prob.evaluate(raw)))
        seconds.append(time.process_time() - t0)
    v = runner.versions()
    return {"problem": task.problem, "seed": task.seed, "n": len(values),
            "sampler_seed": pool_seed(task.problem, task.seed), "values": values,
            "params": params, "objective_seconds": seconds,
            "versions": {k: v.get(k) for k in ("optuna", "scikit-learn", "numpy")},
            "written": time.strftime("%Y-%m-%dT%H:%M:%S")}


def _work(suite_name: str, item: tuple[Task, dict | None]) -> tuple:
    task, known = item
    try:
        return item, evaluate(get_suite(suite_name), task, known), None
    except Exception:  # noqa: BLE001
        return item, None, traceback.format_exc()


def _init(suite_name: str, threads: int, items: list) -> None:
    """A pool worker's start: the runner's worker start on the pool's tasks."""
    runner.worker_init(suite_name, threads, [t[0] for t in items])


def read(suite: "Suite", dirs: list[str]) -> dict[tuple[str, int], dict]:
    """The longest pool of each (problem, seed) of the suite in ``dirs`` and their immediate
    subdirectories."""
    names = set(suite.names())
    out: dict[tuple[str, int], dict] = {}
    for d in dirs:
        subs = [os.path.join(d, s) for s in sorted(os.listdir(d))] if os.path.isdir(d) else []
        for x in [d] + subs:
            for r in runner.read_jsonl(os.path.join(x, POOL_FILE)):
                key = (r["problem"], int(r["seed"]))
                if r["problem"] in names and r["n"] > out.get(key, {}).get("n", 0):
                    out[key] = {**r, "dir": x}
    return out


def ensure(suite: "Suite", out: str, keys: list[tuple[str, int]], n: int, jobs: int = 1,
           threads: int = 1, known: dict[tuple[str, int], dict] | None = None,
           stored: list[str] | None = None) -> dict[tuple[str, int], dict]:
    """Pools of at least ``n`` values for each (problem, seed) of ``keys``: those of ``known``
    (default: ``out``'s cache) that are long enough, then those of the ``stored`` directories
    (the pools kept in the repository, ``benchmarks/reports/<suite>/peers``), copied into
    ``out/pool.jsonl`` so that ``out`` reports on its own, and the others evaluated (``jobs``
    workers) and appended there. Returns the pools of ``keys``."""
    known = read(suite, [out]) if known is None else known
    pools = {k: known[k] for k in keys if k in known and known[k]["n"] >= n}
    kept = read(suite, stored or [])
    copied = [k for k in keys if k not in pools and k in kept and kept[k]["n"] >= n]
    if copied:
        os.makedirs(out, exist_ok=True)
        for k in copied:
            record = {f: v for f, v in kept[k].items() if f != "dir"}
            runner._append(os.path.join(out, POOL_FILE), record)
            pools[k] = {**record, "dir": out}
        print(f"random-search pools: {len(copied)} of {len(keys)} (problem, seed) copied from "
              f"{', '.join(stored or [])}", file=sys.stderr, flush=True)
    todo = [(Task(p, "Random", s, n), known.get((p, s))) for p, s in keys
            if (p, s) not in pools]
    if not todo:
        return pools
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, POOL_FILE)
    print(f"random-search pools: {len(todo)} of {len(keys)} (problem, seed) to evaluate, {n} "
          f"configurations each, into {path}", file=sys.stderr, flush=True)
    done, failed = [], []

    def collect(item, record, error, remaining) -> None:
        task = item[0]
        done.append(task)
        if record is None:
            failed.append(f"{task.problem} seed {task.seed}")
            print(f"[{len(done)}/{len(todo)}] pool {task.problem} / seed {task.seed}: FAILED\n"
                  f"{error}", file=sys.stderr, flush=True)
            return
        runner._append(path, record)
        pools[(task.problem, task.seed)] = {**record, "dir": out}
        fin = [v for v in record["values"] if math.isfinite(v)]
        print(f"[{len(done)}/{len(todo)}] pool {task.problem} / seed {task.seed}: "
              f"{record['n']} values, best {min(fin, default=math.inf):.5g}, "
              f"{sum(record['objective_seconds']):.1f} s CPU", file=sys.stderr, flush=True)

    runner.pool_run(todo, functools.partial(_work, suite.name),
                    functools.partial(_init, suite.name), threads, jobs, collect)
    if failed:
        raise SystemExit(f"random-search pool(s) failed: {', '.join(failed)}")
    return pools
