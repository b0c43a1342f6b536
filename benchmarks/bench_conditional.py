#!/usr/bin/env python
"""Conditional (define-by-run, branching) search spaces: issue 31.

Criteria of the issue: on a branching problem and a scikit-learn pipeline (10 seeds x 60
trials) our samplers' median best value is no worse than TPE's with ``multivariate=True,
group=True``, and their mean value over the run is below GPSampler's and TPE's; time per
suggestion no worse than GPSampler's on the branching problem at 100 trials.

Problems (all minimised, deterministic given the params, offline; each search space is written
define-by-run as a user writes it, see ``*_suggest``):

* ``branching``: ``branch`` in {a, b, c}, then the branch's own parameters, then a shared
  ``lr`` (log, 1e-4..1) in every trial. a: ``a_x0`` [0, 1], ``a_x1`` [-5, 5]; b: ``b_x0``
  [0, 1], ``b_x1`` [-2, 2], ``b_x2`` (log, 1e-3..10); c: ``c_x0`` (log, 1e-2..100), ``c_x1``
  [0, 10]. Each branch is a bowl in its rescaled coordinates (b's with a coupling term, c's with
  a small ripple) plus ``0.05 (log10 lr - log10 lr*)^2`` with a per-branch ``lr*`` (1e-3, 1e-2,
  1e-1). Branch minima -0.6 (a), -1.0 (b), -0.3 (c); none at the centre of its box. Branch b is
  the narrowest bowl in the most dimensions: at random points it is the WORST branch on average
  (mean 0.63 vs 0.06 and 0.05 under random sampling), so a method must find the right branch
  and optimise inside it.
  Global minimum -1.0 at b, b_x0 = 0.7, b_x1 = -0.8, b_x2 = 10^-1.6, lr = 1e-2.
* ``nested``: ``optimizer`` in {sgd, adam}; shared ``lr`` (log, 1e-5..1); sgd: ``momentum``
  [0, 0.99] and ``nesterov`` in {True, False}, and only if nesterov ``dampening`` [0, 0.5];
  adam: ``beta1`` [0.5, 0.999], ``beta2`` [0.9, 0.9999]; then ``n_layers`` int 1..3 and
  ``units_{i}`` int (log, 16..512) for i < n_layers. Smooth synthetic loss: leaf offsets 0
  (sgd + nesterov), 0.08 (sgd), 0.03 (adam), quadratic terms in the leaf's floats, an lr term
  with optimum 0.05 (sgd) or 1e-3 (adam), 0.04 (n_layers - 2)^2 and 0.01 (log2 units_i - t_i)^2
  with t = (8, 6, 5). Global minimum 0 at sgd, nesterov, momentum 0.9, dampening 0.1,
  lr 0.05, 2 layers of 256 and 64 units.
* ``sklearn-pipeline``: ``classifier`` in {svc, rf, knn} on a fixed 600-image subset of
  scikit-learn's bundled ``load_digits`` (pixels / 16); svc: ``svc_C`` (log, 1e-2..1e3),
  ``svc_gamma`` (log, 1e-5..10); rf: ``rf_n_estimators`` int (log, 10..40), ``rf_max_depth`` int
  2..12, ``rf_max_features`` [0.05, 0.5]; knn: ``knn_n_neighbors`` int 1..30, ``knn_weights``
  in {uniform, distance}, ``knn_p`` int 1..2. Objective 1 - mean 3-fold CV accuracy
  (StratifiedKFold(shuffle=True, random_state=0), random_state=0 of the forest, n_jobs=1).
  Minimum unknown: regret and the "best branch" are taken from the best value any run in
  ``runs.jsonl`` found (as the harness does).

Samplers (``--samplers``): GP-UCB, GP-TS (ours, defaults), GP-UCB+TPE (GPUCBSampler with
``independent_sampler=TPESampler(seed=s)``), GPSampler, TPE, TPE-mv (``multivariate=True,
group=True``), Random, all with ``seed=s``.

Metrics per run (``runs.jsonl``, one JSON line per finished run, keyed by (problem, sampler,
seed, trials); ``--resume`` skips finished keys, so a suite can be run or extended in parts):
best value after T trials; mean of all T values ("mean over run", lower is better); wall time
of ``study.ask()`` + the ``suggest_*`` calls per trial (as ``harness/runner.run_one``; ``tell``
is recorded apart); the share of the last T/2 trials in the best branch (branching: b; nested:
sgd + nesterov; sklearn: the classifier of the best value found); the warnings logged by
Optuna and by our samplers (LogCounter; the parameters named in "sampled independently"
warnings are counted per name). The report (``--out``, markdown, also printed) holds one row per
problem x sampler over all runs in ``runs.jsonl`` with ``--trials`` trials, the checks of
issue 31 and the independently sampled parameters.

``--timing``: on ``branching``, per sampler and seed, a study gets ``--timing-trials`` (100)
completed trials drawn by the sampler under test, then ``--timing-steps`` (10) further trials
are timed (ask + suggest, and tell apart); reported: the first step and the mean of steps
2..k (the method of ``bench_suggest_time.py``), ratio to GPSampler. Written to ``timing.md`` /
``timing.jsonl`` beside ``--out``.

To run against another checkout of the package set ``PYTHONPATH`` (the header names the
package's path and commit, "+dirty" if its ``optuna_gpbandit/`` has uncommitted changes). The
script puts its own folder (``_common``) and the repository root (``benchmarks.harness``) at the
end of ``sys.path``, never first.

    python benchmarks/bench_conditional.py --seeds 10 --trials 60 --jobs 2     # full suite
    python benchmarks/bench_conditional.py --seeds 10 --trials 60 --jobs 2 --resume \\
        --samplers GP-UCB GP-TS                         # re-run / add samplers to the same file
    python benchmarks/bench_conditional.py --report-only --trials 60           # rebuild report
    python benchmarks/bench_conditional.py --timing --seeds 3 --jobs 1         # issue 31 timing
    PYTHONPATH=/path/to/other/checkout python benchmarks/bench_conditional.py ... --out X.md

Run time, measured on the 2-core machine with ``--threads 1`` at load average ~3 (other
processes busy), checkout e3f8619: one sklearn evaluation takes 0.01-0.03 s (knn), ~0.04 s (svc),
0.05-0.22 s (rf, median ~0.09 s); mean ~0.06 s. Seed 0 at 60 trials took, per run, GP-UCB
1.5 / 3.7 / 4.5 s (branching / nested / sklearn), GP-TS 2.3 / 4.7 / 6.1 s, GPSampler 2.7 / 19.2 /
5.5 s, TPE-mv 0.3 / 1.2 / 2.7 s; with GP-UCB+TPE ~ GP-UCB and TPE, Random ~ TPE-mv that is
~70 s of runs per seed, so the full suite (10 seeds x 60 trials x 7 samplers x 3 problems, 210
runs) is ~12 min of runs, ~6-8 min wall with ``--jobs 2`` (+ ~8 s worker start-up: torch). A
smoke suite (2 seeds x 15 trials, all samplers, ``--jobs 2``) took 23 s wall. ``--timing``
with 30 fill trials took 5 s for all samplers and 1 seed; at 100 fill trials expect ~1 min per
seed (scaled, not measured: GPSampler's fill grows fastest).
"""

from __future__ import annotations

import os
import sys

for _path in (os.path.dirname(os.path.abspath(__file__)),  # _common; the repository root for
              os.path.dirname(os.path.dirname(os.path.abspath(__file__)))):  # benchmarks.harness
    if _path not in sys.path:  # appended, never first: PYTHONPATH picks the package
        sys.path.append(_path)

from _common import LogCounter, limit_threads, threads_from_argv  # noqa: E402

from benchmarks.harness.runner import _append as append_jsonl  # noqa: E402
from benchmarks.harness.runner import _fmt_secs as _hms  # noqa: E402
from benchmarks.harness.problems import Problem as HarnessProblem  # noqa: E402
from benchmarks.harness.runner import limit_threads as limit_pools  # noqa: E402
from benchmarks.harness.peers import warm  # noqa: E402
from benchmarks.harness.runner import (import_modules, package_checkout, pool_run,  # noqa: E402
                                       read_jsonl)

limit_threads(threads_from_argv(sys.argv[1:]))  # before numpy / scipy / torch load

import argparse  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import re  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
import warnings  # noqa: E402
from collections import Counter  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from functools import lru_cache  # noqa: E402
from typing import Any, Callable  # noqa: E402

import numpy as np  # noqa: E402
import optuna  # noqa: E402

Params = dict[str, Any]
HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.join(HERE, "reports", "conditional", "report.md")


@dataclass(frozen=True)
class Problem(HarnessProblem):
    """``harness.problems.Problem`` with the branch of a trial and the best branch (``None``:
    the branch of the best value found)."""

    branch: Callable[[Params], str] = lambda p: ""
    best_branch: str | None = None


# ------------------------------------------------------------------------------- branching
# (best value, lr optimum, centre in the branch's unit coordinates)
_BRANCH = {
    "a": (-0.6, 1e-3, (0.25, 0.7)),
    "b": (-1.0, 1e-2, (0.7, 0.3, 0.35)),
    "c": (-0.3, 1e-1, (0.6, 0.45)),
}


def branching_suggest(trial: optuna.Trial) -> Params:
    branch = trial.suggest_categorical("branch", ["a", "b", "c"])
    p: Params = {"branch": branch}
    if branch == "a":
        p["a_x0"] = trial.suggest_float("a_x0", 0.0, 1.0)
        p["a_x1"] = trial.suggest_float("a_x1", -5.0, 5.0)
    elif branch == "b":
        p["b_x0"] = trial.suggest_float("b_x0", 0.0, 1.0)
        p["b_x1"] = trial.suggest_float("b_x1", -2.0, 2.0)
        p["b_x2"] = trial.suggest_float("b_x2", 1e-3, 10.0, log=True)
    else:
        p["c_x0"] = trial.suggest_float("c_x0", 1e-2, 1e2, log=True)
        p["c_x1"] = trial.suggest_float("c_x1", 0.0, 10.0)
    p["lr"] = trial.suggest_float("lr", 1e-4, 1.0, log=True)
    return p


def branching_evaluate(p: Params) -> float:
    best, lr_star, centre = _BRANCH[p["branch"]]
    if p["branch"] == "a":
        u = (p["a_x0"], (p["a_x1"] + 5.0) / 10.0)
    elif p["branch"] == "b":
        u = (p["b_x0"], (p["b_x1"] + 2.0) / 4.0, (math.log10(p["b_x2"]) + 3.0) / 4.0)
    else:
        u = ((math.log10(p["c_x0"]) + 2.0) / 4.0, p["c_x1"] / 10.0)
    d = [ui - ci for ui, ci in zip(u, centre)]
    sq = sum(di * di for di in d)
    if p["branch"] == "a":
        shape = 2.0 * sq
    elif p["branch"] == "b":
        shape = 3.0 * sq + 1.5 * (d[0] - d[1]) ** 2
    else:
        shape = sq + 0.05 * (1.0 - math.cos(4.0 * math.pi * d[0]))
    return float(best + shape + 0.05 * (math.log10(p["lr"]) - math.log10(lr_star)) ** 2)


# ---------------------------------------------------------------------------------- nested
_UNITS_TARGET = (8.0, 6.0, 5.0)  # log2 of the best units of layer i


def nested_suggest(trial: optuna.Trial) -> Params:
    optimizer = trial.suggest_categorical("optimizer", ["sgd", "adam"])
    p: Params = {"optimizer": optimizer}
    p["lr"] = trial.suggest_float("lr", 1e-5, 1.0, log=True)
    if optimizer == "sgd":
        p["momentum"] = trial.suggest_float("momentum", 0.0, 0.99)
        p["nesterov"] = trial.suggest_categorical("nesterov", [True, False])
        if p["nesterov"]:
            p["dampening"] = trial.suggest_float("dampening", 0.0, 0.5)
    else:
        p["beta1"] = trial.suggest_float("beta1", 0.5, 0.999)
        p["beta2"] = trial.suggest_float("beta2", 0.9, 0.9999)
    p["n_layers"] = trial.suggest_int("n_layers", 1, 3)
    for i in range(p["n_layers"]):
        p[f"units_{i}"] = trial.suggest_int(f"units_{i}", 16, 512, log=True)
    return p


def nested_evaluate(p: Params) -> float:
    if p["optimizer"] == "sgd":
        lr_star = 0.05
        if p["nesterov"]:
            leaf = 0.8 * (p["momentum"] - 0.9) ** 2 + 0.4 * (p["dampening"] - 0.1) ** 2
        else:
            leaf = 0.08 + 0.8 * (p["momentum"] - 0.8) ** 2
    else:
        lr_star = 1e-3
        leaf = 0.03 + 1.5 * (p["beta1"] - 0.9) ** 2 + 50.0 * (p["beta2"] - 0.99) ** 2
    lr_term = 0.04 * (math.log10(p["lr"]) - math.log10(lr_star)) ** 2
    arch = 0.04 * (p["n_layers"] - 2) ** 2 + sum(
        0.01 * (math.log2(p[f"units_{i}"]) - _UNITS_TARGET[i]) ** 2 for i in range(p["n_layers"]))
    return float(leaf + lr_term + arch)


def nested_branch(p: Params) -> str:
    if p["optimizer"] == "sgd":
        return "sgd+nesterov" if p["nesterov"] else "sgd"
    return "adam"


# ---------------------------------------------------------------------- scikit-learn pipeline
@lru_cache(maxsize=None)
def _digits() -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    idx = np.random.default_rng(0).permutation(len(y))[:600]  # a fixed 600-image subset
    return X[idx] / 16.0, y[idx]


def sklearn_suggest(trial: optuna.Trial) -> Params:
    clf = trial.suggest_categorical("classifier", ["svc", "rf", "knn"])
    p: Params = {"classifier": clf}
    if clf == "svc":
        p["svc_C"] = trial.suggest_float("svc_C", 1e-2, 1e3, log=True)
        p["svc_gamma"] = trial.suggest_float("svc_gamma", 1e-5, 1e1, log=True)
    elif clf == "rf":
        p["rf_n_estimators"] = trial.suggest_int("rf_n_estimators", 10, 40, log=True)
        p["rf_max_depth"] = trial.suggest_int("rf_max_depth", 2, 12)
        p["rf_max_features"] = trial.suggest_float("rf_max_features", 0.05, 0.5)
    else:
        p["knn_n_neighbors"] = trial.suggest_int("knn_n_neighbors", 1, 30)
        p["knn_weights"] = trial.suggest_categorical("knn_weights", ["uniform", "distance"])
        p["knn_p"] = trial.suggest_int("knn_p", 1, 2)
    return p


def sklearn_evaluate(p: Params) -> float:
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.svm import SVC

    if p["classifier"] == "svc":
        model = SVC(C=p["svc_C"], gamma=p["svc_gamma"])
    elif p["classifier"] == "rf":
        model = RandomForestClassifier(
            n_estimators=p["rf_n_estimators"], max_depth=p["rf_max_depth"],
            max_features=p["rf_max_features"], random_state=0, n_jobs=1)
    else:
        model = KNeighborsClassifier(n_neighbors=p["knn_n_neighbors"],
                                     weights=p["knn_weights"], p=p["knn_p"])
    X, y = _digits()
    cv = StratifiedKFold(n_splits=3, shuffle=True, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(1.0 - np.mean(cross_val_score(model, X, y, cv=cv)))


PROBLEMS: dict[str, Problem] = {
    "branching": Problem(
        "branching", "branch a/b/c with own floats + shared log lr; min -1.0 in branch b",
        branching_suggest, branching_evaluate, -1.0,
        {"branch": "b", "b_x0": 0.7, "b_x1": -0.8, "b_x2": 10 ** -1.6, "lr": 1e-2},
        kind="synthetic", branch=lambda p: p["branch"], best_branch="b"),
    "nested": Problem(
        "nested", "sgd(momentum, nesterov -> dampening) | adam(beta1, beta2), lr, n_layers -> "
        "units_i; min 0 at sgd+nesterov", nested_suggest, nested_evaluate, 0.0,
        {"optimizer": "sgd", "lr": 0.05, "momentum": 0.9, "nesterov": True, "dampening": 0.1,
         "n_layers": 2, "units_0": 256, "units_1": 64},
        kind="synthetic", branch=nested_branch, best_branch="sgd+nesterov"),
    "sklearn-pipeline": Problem(
        "sklearn-pipeline", "svc | rf | knn on 600 digits, 1 - 3-fold CV accuracy",
        sklearn_suggest, sklearn_evaluate, None, None, kind="ml",
        branch=lambda p: p["classifier"]),
}


# -------------------------------------------------------------------------------- samplers
def make_sampler(name: str, seed: int) -> optuna.samplers.BaseSampler:
    from optuna.samplers import GPSampler, RandomSampler, TPESampler

    import optuna_gpbandit as gb

    makers: dict[str, Callable[[], optuna.samplers.BaseSampler]] = {
        "GP-UCB": lambda: gb.GPUCBSampler(seed=seed),
        "GP-TS": lambda: gb.GPTSSampler(seed=seed),
        "GP-UCB+TPE": lambda: gb.GPUCBSampler(seed=seed,
                                              independent_sampler=TPESampler(seed=seed)),
        "GPSampler": lambda: GPSampler(seed=seed),
        "TPE": lambda: TPESampler(seed=seed),
        "TPE-mv": lambda: TPESampler(seed=seed, multivariate=True, group=True),
        "Random": lambda: RandomSampler(seed=seed),
    }
    return makers[name]()


SAMPLERS = ["GP-UCB", "GP-TS", "GP-UCB+TPE", "GPSampler", "TPE", "TPE-mv", "Random"]
OURS = ["GP-UCB", "GP-TS", "GP-UCB+TPE"]


# ---------------------------------------------------------------------------------- logging
class _Counter(LogCounter):
    """LogCounter keeping parameter names (``a_x0`` stays, ``Trial 12`` becomes ``Trial N``),
    counting each record once (our package also hands its records to Optuna's logger)."""

    def __init__(self) -> None:
        super().__init__(r"(?<![A-Za-z_])[0-9]+(?:\.[0-9]+)?(?:e[+-]?[0-9]+)?")
        self._last: Any = None

    def emit(self, record) -> None:
        if record is self._last:
            return
        self._last = record
        super().emit(record)

    def remove(self) -> None:
        import logging

        for name in ("optuna", "optuna_gpbandit"):
            logging.getLogger(name).removeHandler(self)


_INDEPENDENT = re.compile(r"parameter [`'\"]([^`'\"]+)[`'\"].*(?:sampled independently|"
                          r"outside the relative search space)")


def independent_params(messages: dict[str, int]) -> dict[str, int]:
    out: Counter[str] = Counter()
    for msg, n in messages.items():
        m = _INDEPENDENT.search(msg)
        if m:
            out[m.group(1)] += n
    return dict(out)


# ------------------------------------------------------------------------------------ runs
def _plain(params: Params) -> Params:
    return {k: (v.item() if hasattr(v, "item") else v) for k, v in params.items()}


def _step(study: optuna.Study, problem: Problem) -> tuple[Any, Params, float, float, list]:
    """ask + suggest, timed (wall, CPU), with the Python warnings they raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        c0, t0 = time.process_time(), time.perf_counter()
        trial = study.ask()
        params = problem.suggest(trial)
        t1, c1 = time.perf_counter(), time.process_time()
    return trial, params, t1 - t0, c1 - c0, caught


def run_one(task: dict) -> dict:
    """One study of ``task["trials"]`` trials (ask / tell); returns its JSON record."""
    problem = PROBLEMS[task["problem"]]
    log = _Counter()
    log.install()
    pywarn: Counter[str] = Counter()
    try:
        study = optuna.create_study(direction="minimize",
                                    sampler=make_sampler(task["sampler"], task["seed"]))
        values, branches, all_params, t_sug, t_cpu, t_obj, t_tell = [], [], [], [], [], [], []
        start = time.perf_counter()
        for _ in range(task["trials"]):
            trial, params, wall, cpu, caught = _step(study, problem)
            t1 = time.perf_counter()
            value = float(problem.evaluate(params))
            t2 = time.perf_counter()
            with warnings.catch_warnings(record=True) as caught_tell:
                warnings.simplefilter("always")
                study.tell(trial, value)
            t3 = time.perf_counter()
            pywarn.update(w.category.__name__ for w in list(caught) + list(caught_tell))
            values.append(value)
            branches.append(problem.branch(params))
            all_params.append(_plain(params))
            t_sug.append(wall)
            t_cpu.append(cpu)
            t_obj.append(t2 - t1)
            t_tell.append(t3 - t2)
        wall_total = time.perf_counter() - start
    finally:
        log.remove()
    i_best = int(np.argmin(values))
    return {
        **task,
        "minimum": problem.minimum,
        "best_value": values[i_best],
        "best_params": all_params[i_best],
        "mean_value": float(np.mean(values)),
        "values": values,
        "branches": branches,
        "params": all_params,
        "suggest_seconds": t_sug,
        "suggest_cpu_seconds": t_cpu,
        "objective_seconds": t_obj,
        "tell_seconds": t_tell,
        "wall_seconds": wall_total,
        "logged": dict(log.messages),
        "independent": independent_params(dict(log.messages)),
        "python_warnings": dict(pywarn),
        "finished": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "pid": os.getpid(),
        "loadavg": os.getloadavg()[0],
    }


def run_timing(task: dict) -> dict:
    """``trials`` completed trials of the sampler under test on ``branching``, then ``steps``
    timed trials: ask + suggest (wall, CPU) and tell apart."""
    problem = PROBLEMS["branching"]
    log = _Counter()
    log.install()
    try:
        study = optuna.create_study(direction="minimize",
                                    sampler=make_sampler(task["sampler"], task["seed"]))
        t0 = time.perf_counter()
        for _ in range(task["trials"]):
            trial, params, *_ = _step(study, problem)
            study.tell(trial, problem.evaluate(params))
        fill = time.perf_counter() - t0
        wall, cpu, tell = [], [], []
        for _ in range(task["steps"]):
            trial, params, w, c, _ = _step(study, problem)
            value = problem.evaluate(params)
            t2 = time.perf_counter()
            study.tell(trial, value)
            tell.append(time.perf_counter() - t2)
            wall.append(w)
            cpu.append(c)
    finally:
        log.remove()
    return {**task, "fill_seconds": fill, "wall": wall, "cpu": cpu, "tell": tell,
            "logged_total": sum(log.messages.values()),
            "wall_seconds": fill + sum(wall) + sum(tell),
            "finished": time.strftime("%Y-%m-%dT%H:%M:%S"), "loadavg": os.getloadavg()[0]}


def _safe(task: dict) -> tuple[dict, dict | None, str | None]:
    try:
        return task, (run_timing(task) if task["kind"] == "timing" else run_one(task)), None
    except Exception:  # noqa: BLE001
        return task, None, traceback.format_exc()


def _worker_init(threads: int, tasks: list[dict]) -> None:
    """Quiet the libraries and import what the runs need (no run's first suggestion or
    objective pays a module import)."""
    warnings.filterwarnings("ignore")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    modules = ["scipy.optimize", "optuna_gpbandit"]
    warm(sorted({t["sampler"] for t in tasks}))
    if any(t.get("problem") == "sklearn-pipeline" for t in tasks):
        modules += ["sklearn.svm", "sklearn.ensemble", "sklearn.neighbors",
                    "sklearn.model_selection", "sklearn.datasets"]
    import_modules(modules)
    if any(t.get("problem") == "sklearn-pipeline" for t in tasks):
        _digits()
    limit_pools(threads)


# ----------------------------------------------------------------------------------- files
def key(r: dict) -> tuple:
    return (r.get("problem", "branching"), r["sampler"], r["seed"], r["trials"])


def run_pool(tasks: list[dict], path: str, jobs: int, threads: int) -> int:
    """Run ``tasks`` (``jobs`` spawned workers, or in-process for 1), appending each finished
    record to ``path`` (failures to ``errors.jsonl`` beside it); returns the number failed."""
    errors = os.path.join(os.path.dirname(path), "errors.jsonl")
    done_secs: list[float] = []
    start, n_fail = time.perf_counter(), 0

    def collect(task, record, error, left):
        nonlocal n_fail
        if record is None:
            n_fail += 1
            append_jsonl(errors, {**task, "error": error})
            what = "FAILED: " + (error or "").strip().splitlines()[-1]
        else:
            append_jsonl(path, record)
            done_secs.append(record["wall_seconds"])
            what = f"{record['wall_seconds']:.1f} s"
            if "best_value" in record:
                what += f", best {record['best_value']:.4g}, mean {record['mean_value']:.4g}"
            else:
                what += f", steps 2..k {np.mean(record['wall'][1:] or record['wall']):.3f} s"
        eta = (_hms(np.mean(done_secs) * left / max(jobs, 1)) if done_secs else "?")
        print(f"[{len(tasks) - left}/{len(tasks)}] {task.get('problem', 'timing')} / "
              f"{task['sampler']} / seed {task['seed']}: {what} | elapsed "
              f"{_hms(time.perf_counter() - start)}, ETA ~{eta}", file=sys.stderr, flush=True)

    pool_run(tasks, _safe, _worker_init, threads, jobs,
             lambda task, record, error, rest: collect(task, record, error, len(rest)))
    return n_fail


# ---------------------------------------------------------------------------------- header
def package_info() -> tuple[str, str]:
    """(path of the imported optuna_gpbandit, short commit of its checkout [+dirty])."""
    info = package_checkout()
    if info["commit"] is None:
        return info["path"], "unknown (not a git checkout)"
    return info["path"], info["commit"] + ("+dirty" if info["dirty"] else "")


def header(args: argparse.Namespace, title: str) -> list[str]:
    pkg, commit = package_info()
    versions = [f"python {platform.python_version()}", f"optuna {optuna.__version__}",
                f"numpy {np.__version__}"]
    for mod in ("sklearn", "torch"):
        try:
            versions.append(f"{mod} {__import__(mod).__version__}")
        except ImportError:
            pass
    return [
        f"# {title}", "",
        f"- command: `python {os.path.relpath(os.path.abspath(sys.argv[0]))} "
        f"{' '.join(sys.argv[1:])}`",
        f"- package: `{pkg}` at commit {commit}",
        f"- date: {time.strftime('%Y-%m-%d %H:%M:%S %Z')}",
        f"- machine: {os.cpu_count()} CPUs, load average {'%.2f %.2f %.2f' % os.getloadavg()}; "
        f"--jobs {args.jobs}, --threads {args.threads}; " + ", ".join(versions),
        "",
    ]


# ---------------------------------------------------------------------------------- report
def _mmm(v: list[float], fmt: str = ".4g") -> str:
    return f"{np.median(v):{fmt}} [{min(v):{fmt}}, {max(v):{fmt}}]"


def report(runs: list[dict], trials: int) -> list[str]:
    runs = [r for r in runs if r["trials"] == trials]
    if not runs:
        return [f"No runs with {trials} trials."]
    problems = [p for p in PROBLEMS if any(r["problem"] == p for r in runs)]
    names = [s for s in SAMPLERS if any(r["sampler"] == s for r in runs)]
    lines = [f"Runs of {trials} trials; commits: "
             + ", ".join(sorted({r.get("commit", "?") for r in runs}))
             + f"; load average during the runs: {min(r['loadavg'] for r in runs):.1f}-"
             f"{max(r['loadavg'] for r in runs):.1f}.", "",
             "best: best value after T trials, median [min, max] over seeds; regret: median of "
             "best - minimum (sklearn: - best value of any run); mean: median over seeds of the "
             "mean of all T values (lower is better); branch: median share of the last T/2 "
             "trials in the best branch; s/sugg: mean wall seconds of ask + suggest per trial "
             "(CPU in brackets); warn: logged warnings, total over the runs.", ""]
    summary: dict[tuple[str, str], dict] = {}
    for prob in problems:
        p = PROBLEMS[prob]
        pr = [r for r in runs if r["problem"] == prob]
        all_runs_prob = pr
        best_any = min(r["best_value"] for r in all_runs_prob)
        ref = p.minimum if p.minimum is not None else best_any
        best_branch = p.best_branch
        if best_branch is None:
            best_branch = p.branch(min(all_runs_prob, key=lambda r: r["best_value"])["best_params"])
        lines += [f"## {prob}: {p.description}", "",
                  f"minimum {'%.4g' % p.minimum if p.minimum is not None else 'unknown'}; "
                  f"best found {best_any:.4g}; best branch {best_branch}", "",
                  "| sampler | seeds | best | regret | mean | branch | s/sugg | s/objective | "
                  "warn |", "|---|---:|---|---:|---|---:|---|---:|---:|"]
        for s in names:
            rs = sorted((r for r in pr if r["sampler"] == s), key=lambda r: r["seed"])
            if not rs:
                continue
            best = [r["best_value"] for r in rs]
            mean = [r["mean_value"] for r in rs]
            half = [np.mean([b == best_branch for b in r["branches"][trials // 2:]]) for r in rs]
            sugg = np.mean([np.mean(r["suggest_seconds"]) for r in rs])
            cpu = np.mean([np.mean(r["suggest_cpu_seconds"]) for r in rs])
            obj = np.mean([np.mean(r["objective_seconds"]) for r in rs])
            warn = sum(sum(r["logged"].values()) for r in rs)
            seeds = [r["seed"] for r in rs]
            summary[(prob, s)] = {"best": float(np.median(best)), "mean": float(np.median(mean)),
                                  "seeds": tuple(seeds)}
            lines.append(
                f"| {s} | {len(rs)} | {_mmm(best)} | {np.median(best) - ref:.3g} | "
                f"{_mmm(mean)} | {np.median(half):.2f} | {sugg:.3f} ({cpu:.3f}) | {obj:.3f} | "
                f"{warn} |")
        lines.append("")
    lines += ["## Issue 31 checks (medians over seeds)", "",
              "best <= TPE-mv: median best no worse than TPE-mv's; mean < X: median of the mean "
              "over the run below X's. '?' where the reference did not run on the same seeds.",
              "", "| problem | sampler | best <= TPE-mv | mean < GPSampler | mean < TPE |",
              "|---|---|---|---|---|"]
    for prob in problems:
        for s in (x for x in OURS if (prob, x) in summary):
            me = summary[(prob, s)]
            cells = []
            for ref_name, what in (("TPE-mv", "best"), ("GPSampler", "mean"), ("TPE", "mean")):
                other = summary.get((prob, ref_name))
                if other is None or other["seeds"] != me["seeds"]:
                    cells.append("?")
                    continue
                ok = me[what] <= other[what] if what == "best" else me[what] < other[what]
                cells.append(f"{'yes' if ok else 'NO'} ({me[what]:.4g} vs {other[what]:.4g})")
            lines.append(f"| {prob} | {s} | " + " | ".join(cells) + " |")
    lines += ["", "## Logged warnings", "",
              "Parameters named in 'sampled independently' warnings (count over all runs), then "
              "the other messages.", ""]
    any_warn = False
    for prob in problems:
        for s in names:
            rs = [r for r in runs if r["problem"] == prob and r["sampler"] == s]
            ind: Counter[str] = Counter()
            other: Counter[str] = Counter()
            for r in rs:
                ind.update(r["independent"])
                other.update({m: n for m, n in r["logged"].items() if not _INDEPENDENT.search(m)})
            if ind or other:
                any_warn = True
                lines.append(f"- {prob} / {s}: independent: "
                             + (", ".join(f"{k} {v}" for k, v in sorted(ind.items())) or "none"))
                for m, n in other.most_common(5):
                    lines.append(f"  - {n} x `{m[:200]}`")
    if not any_warn:
        lines.append("none")
    pyw: Counter[str] = Counter()
    for r in runs:
        pyw.update(r.get("python_warnings", {}))
    lines += ["", "Python warnings raised in ask / suggest / tell (all runs): "
              + (", ".join(f"{k} {v}" for k, v in pyw.most_common()) or "none") + "."]
    return lines


def timing_report(recs: list[dict], trials: int) -> list[str]:
    recs = [r for r in recs if r["trials"] == trials]
    names = [s for s in SAMPLERS if any(r["sampler"] == s for r in recs)]
    rest = {s: np.mean([np.mean(r["wall"][1:] or r["wall"]) for r in recs if r["sampler"] == s])
            for s in names}
    lines = [f"Timing on branching after {trials} trials drawn by the sampler under test: wall "
             "seconds of ask + suggest; CPU: process CPU seconds of the same steps; tell apart; "
             "mean over seeds; ratio = mean 2..k / GPSampler's.", "",
             "| sampler | seeds | k | first | mean 2..k | ratio 2..k | CPU 1..k | tell 1..k | "
             "fill s |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for s in names:
        rs = [r for r in recs if r["sampler"] == s]
        ratio = (f"{rest[s] / rest['GPSampler']:.2f}x" if "GPSampler" in rest and
                 s != "GPSampler" else "-")
        lines.append(
            f"| {s} | {len(rs)} | {len(rs[0]['wall'])} | "
            f"{np.mean([r['wall'][0] for r in rs]):.3f} | {rest[s]:.3f} | {ratio} | "
            f"{np.mean([np.mean(r['cpu']) for r in rs]):.3f} | "
            f"{np.mean([np.mean(r['tell']) for r in rs]):.4f} | "
            f"{np.mean([r['fill_seconds'] for r in rs]):.1f} |")
    lines.append("")
    lines.append(f"load average during the runs: {min(r['loadavg'] for r in recs):.1f}-"
                 f"{max(r['loadavg'] for r in recs):.1f}")
    return lines


# ------------------------------------------------------------------------------------ main
def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--problems", nargs="+", default=list(PROBLEMS), choices=list(PROBLEMS))
    ap.add_argument("--samplers", nargs="+", default=SAMPLERS, choices=SAMPLERS)
    ap.add_argument("--seeds", type=int, default=None,
                    help="seeds 0..N-1 (default 10; --timing: 3)")
    ap.add_argument("--seed-list", type=int, nargs="+", default=None,
                    help="explicit seeds (instead of --seeds)")
    ap.add_argument("--trials", type=int, default=60, help="trials per run (default 60)")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    ap.add_argument("--threads", type=int, default=1,
                    help="BLAS / OpenMP / torch threads per process (default 1)")
    ap.add_argument("--out", default=DEFAULT_OUT,
                    help="report file; runs.jsonl (and timing.*) go beside it "
                         "(default benchmarks/reports/conditional/report.md)")
    ap.add_argument("--resume", action="store_true",
                    help="keep the runs already in runs.jsonl and skip their keys")
    ap.add_argument("--report-only", action="store_true",
                    help="no runs: rebuild the report from runs.jsonl")
    ap.add_argument("--timing", action="store_true",
                    help="time suggestions on branching after --timing-trials trials instead")
    ap.add_argument("--timing-trials", type=int, default=100)
    ap.add_argument("--timing-steps", type=int, default=10)
    args = ap.parse_args(argv)
    if args.seed_list is None:
        args.seed_list = list(range(args.seeds if args.seeds else (3 if args.timing else 10)))
    if args.jobs < 1 or args.threads < 1 or args.trials < 1 or args.timing_steps < 1:
        ap.error("--jobs, --threads, --trials and --timing-steps must be positive")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    warnings.filterwarnings("ignore")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    out_dir = os.path.dirname(os.path.abspath(args.out))
    os.makedirs(out_dir, exist_ok=True)
    _, commit = package_info()
    if args.timing:
        path = os.path.join(out_dir, "timing.jsonl")
        tasks = [{"kind": "timing", "sampler": s, "seed": seed, "trials": args.timing_trials,
                  "steps": args.timing_steps, "commit": commit}
                 for seed in args.seed_list for s in args.samplers]
    else:
        path = os.path.join(out_dir, "runs.jsonl")
        tasks = [{"kind": "run", "problem": p, "sampler": s, "seed": seed,
                  "trials": args.trials, "commit": commit}
                 for seed in args.seed_list for p in args.problems for s in args.samplers]
    previous = read_jsonl(path)
    n_fail = 0
    if not args.report_only:
        if previous and not args.resume:
            print(f"{path} already holds {len(previous)} records: pass --resume to continue "
                  "it, or choose another --out", file=sys.stderr)
            return 2
        done = {key(r) for r in previous}
        todo = [t for t in tasks if key(t) not in done]
        print(f"{len(tasks)} tasks: {len(tasks) - len(todo)} already in {path}, {len(todo)} to "
              f"run with {args.jobs} worker(s), {args.threads} thread(s) each", file=sys.stderr)
        n_fail = run_pool(todo, path, args.jobs, args.threads)
    if args.timing:
        lines = header(args, "Conditional search spaces: time per suggestion (issue 31)")
        lines += timing_report(read_jsonl(path), args.timing_trials)
        target = os.path.join(out_dir, "timing.md")
    else:
        lines = header(args, "Conditional search spaces (issue 31)")
        lines += report(read_jsonl(path), args.trials)
        target = args.out
    text = "\n".join(lines) + "\n"
    print(text)
    with open(target, "w") as fh:
        fh.write(text)
    if n_fail:
        print(f"{n_fail} runs failed: see errors.jsonl beside {target}", file=sys.stderr)
    return 1 if n_fail else 0


if __name__ == "__main__":
    sys.exit(main())
