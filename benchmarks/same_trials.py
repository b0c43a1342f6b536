#!/usr/bin/env python
"""Same trials before and after a refactor: run a fixed set of studies, store every trial's
parameters, and compare two such files.

Not a golden-file test: trial sequences drift with floating-point rounding from machine to
machine, so the two files must come from the same machine (run the script on the commit before
the change and on the commit after it, then ``--compare``). 48 studies of 22 trials cover every
public sampler: the quick suite's 9 problems (GP-UCB, IGP-UCB, GP-TS), the constraint rules
(feasible and long-term), change detection, restarts, pending trials (hallucinated and censored;
RUNNING trials are added by hand so that the run is deterministic), failures and
multi-objective studies. Trials and the gpbandit: records are compared.

    python benchmarks/same_trials.py --out before.json      # on the old commit
    python benchmarks/same_trials.py --out after.json       # on the new one
    python benchmarks/same_trials.py --compare before.json after.json
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
import optuna
from optuna.trial import TrialState

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from problems import PROBLEMS  # noqa: E402

from benchmarks.harness.problems import PROBLEMS as QUICK_SUITE  # noqa: E402

import optuna_gpbandit as gb  # noqa: E402

N_TRIALS = 22


def _box(problem):
    def objective(trial):
        x = np.array([trial.suggest_float(f"x{i}", 0.0, 1.0) for i in range(problem.dim)])
        return problem.f(x)
    return objective


def _constrained(trial):
    x1, x2 = trial.suggest_float("x1", 0, 6), trial.suggest_float("x2", 0, 6)
    trial.set_constraint("g", math.sin(x1) * math.sin(x2) + 0.95)
    return -math.sin(x1) - x2


def _mixed(trial):  # int, log, categorical, a failing region
    lr = trial.suggest_float("lr", 1e-4, 1.0, log=True)
    depth = trial.suggest_int("depth", 1, 8)
    kind = trial.suggest_categorical("kind", ["a", "b", "c"])
    if lr > 0.3:
        raise optuna.TrialPruned() if depth % 2 else ValueError("diverged")
    return (math.log10(lr) + 2) ** 2 + (depth - 5) ** 2 / 10 + {"a": 0.3, "b": 0.0, "c": 0.5}[kind]


def _drift(trial):
    x = trial.suggest_float("x", 0.0, 1.0)
    return (x - (0.2 if trial.number < 15 else 0.8)) ** 2


def _two_objectives(trial):
    x, y = trial.suggest_float("x", 0, 1), trial.suggest_float("y", 0, 1)
    return (x - 0.3) ** 2 + y, (x - 0.7) ** 2 + (1 - y) ** 2


def _with_pending(sampler, objective, n_trials):
    """A study where two trials stay RUNNING (asked, never told): the pending stage sees them."""
    study = optuna.create_study(sampler=sampler)
    study.optimize(objective, n_trials=6)
    for _ in range(2):
        trial = study.ask()
        objective(trial)  # suggests the parameters; the value is never told
    study.optimize(objective, n_trials=n_trials - 8)
    return study


def _quick(problem):
    def objective(trial):
        return problem.evaluate(problem.suggest(trial))
    return objective


def cases():
    for pname, problem in QUICK_SUITE.items():  # the quick suite's 9 problems
        for sname in ("GPUCBSampler", "IGPUCBSampler", "GPTSSampler"):
            yield f"quick/{pname}/{sname}", (
                lambda problem=problem, sname=sname: (getattr(gb, sname)(seed=0),
                                                      _quick(problem), None))
    yield "gp-ucb/branin", lambda: (gb.GPUCBSampler(seed=0), _box(PROBLEMS["branin"]), None)
    yield "gp-ucb/hartmann6", lambda: (gb.GPUCBSampler(seed=1), _box(PROBLEMS["hartmann6"]),
                                       None)
    yield "igp-ucb/hartmann3", lambda: (gb.IGPUCBSampler(seed=0), _box(PROBLEMS["hartmann3"]),
                                        None)
    yield "gp-ts/branin", lambda: (gb.GPTSSampler(seed=0), _box(PROBLEMS["branin"]), None)
    yield "gp-ts-candidates/branin", lambda: (gb.GPTSSampler(seed=0, draw=gb.CandidateDraw()),
                                              _box(PROBLEMS["branin"]), None)
    yield "gp-ucb/mixed-failures", lambda: (gb.GPUCBSampler(seed=0), _mixed, None)
    yield "gp-ts/mixed-failures", lambda: (gb.GPTSSampler(seed=2), _mixed, None)
    yield "gp-ucb/feasible", lambda: (gb.GPUCBSampler(seed=0), _constrained, "maximize")
    yield "constrained/feasible", lambda: (gb.ConstrainedGPUCBSampler(seed=0), _constrained,
                                           "maximize")
    yield "constrained/long-term", lambda: (
        gb.ConstrainedGPUCBSampler(seed=0, constraints=gb.LongTermConstraints()), _constrained, "maximize")
    yield "constrained/long-term-noisy", lambda: (
        gb.ConstrainedGPUCBSampler(seed=0, constraints=gb.LongTermConstraints("noisy")), _constrained,
        "maximize")
    yield "cpd/drift", lambda: (gb.GPUCBCPDSampler(seed=0), _drift, None)
    yield "cpd-avanesov/drift", lambda: (gb.GPUCBCPDSampler(seed=0, reset=gb.ChangeDetection.avanesov()),
                                         _drift, None)
    yield "gp-ucb-restarts/hartmann3", lambda: (gb.GPUCBSampler(seed=0, reset=gb.Restarts()),
                                                _box(PROBLEMS["hartmann3"]), None)
    yield "gp-ucb/pending-hallucinate", lambda: (gb.GPUCBSampler(seed=0),
                                                 _box(PROBLEMS["branin"]), "pending")
    yield "gp-ucb/pending-censor", lambda: (gb.GPUCBSampler(seed=0, pending=gb.Censoring()),
                                            _box(PROBLEMS["branin"]), "pending")
    yield "igp-ucb/pending-censor", lambda: (gb.IGPUCBSampler(seed=0, pending=gb.Censoring()),
                                             _box(PROBLEMS["hartmann3"]), "pending")
    for name in ("GPUCBSampler", "IGPUCBSampler", "GPTSSampler"):
        yield f"{name}/multi-objective", (
            lambda name=name: (getattr(gb, name)(seed=0), _two_objectives, "multi"))
    yield "gp-ucb/multi-linear", lambda: (gb.GPUCBSampler(seed=0, scalarization="linear"),
                                          _two_objectives, "multi")


def run_case(make) -> list[dict]:
    sampler, objective, kind = make()
    if kind == "pending":
        study = _with_pending(sampler, objective, N_TRIALS)
    elif kind == "multi":
        study = optuna.create_study(directions=["minimize", "minimize"], sampler=sampler)
        study.optimize(objective, n_trials=N_TRIALS, catch=(ValueError,))
    else:
        study = optuna.create_study(direction=kind or "minimize", sampler=sampler)
        study.optimize(objective, n_trials=N_TRIALS, catch=(ValueError,))
    return [{"number": t.number, "state": t.state.name, "params": t.params,
             "records": {k: v for k, v in t.system_attrs.items() if k.startswith("gpbandit:")
                         and k != "gpbandit:stamp"}}  # the stamp is a wall-clock time
            for t in study.trials]


def compare(a_path: str, b_path: str) -> int:
    a, b = json.loads(Path(a_path).read_text()), json.loads(Path(b_path).read_text())
    bad = 0
    for name in a["cases"]:
        ta, tb = a["cases"][name], b["cases"].get(name)
        if tb is None:
            print(f"{name}: missing in {b_path}")
            bad += 1
            continue
        def core(t):
            return {k: v for k, v in t.items() if k != "records"}
        first = next((i for i, (x, y) in enumerate(zip(ta, tb)) if core(x) != core(y)), None)
        if first is None and len(ta) == len(tb):
            rec = next((i for i, (x, y) in enumerate(zip(ta, tb))
                        if "records" in x and "records" in y and x["records"] != y["records"]),
                       None)
            print(f"{name}: same {len(ta)} trials"
                  + ("" if rec is None else f" (records differ from trial {rec})"))
        else:
            bad += 1
            print(f"{name}: DIFFERENT from trial {first}: {ta[first] if first is not None else ''}"
                  f" vs {tb[first] if first is not None else ''}")
    print(f"{len(a['cases']) - bad} of {len(a['cases'])} cases give the same trials")
    return 1 if bad else 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", help="where to write the trials (JSON)")
    p.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"))
    p.add_argument("--only", default="", help="run only cases whose name contains this")
    args = p.parse_args()
    if args.compare:
        return compare(*args.compare)
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    result, start = {}, time.perf_counter()
    for name, make in cases():
        if args.only in name:
            result[name] = run_case(make)
            print(f"{name}: {len(result[name])} trials", flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps({"cases": result}, indent=0))
    print(f"{len(result)} cases in {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
