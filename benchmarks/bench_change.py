#!/usr/bin/env python
"""Objectives that change over the trials: false alarms, detection delay and regret after an
abrupt change, regret under gradual drift; our change detection beside plain GP-UCB, an oracle,
Optuna's GPSampler and TPE.

Problems (maximised; noise sd 0.05 on every observation, one draw per seed and trial number;
the functions are draws of a unit-variance GP with a squared-exponential kernel of lengthscale
0.2 on [0, 1]^d, 600 random Fourier features, one set per seed and role):

* ``stationary-1d`` / ``stationary-2d``: one draw, 300 trials. Every alarm is false.
* ``abrupt-1d`` / ``abrupt-2d``: draw A before trial 150, draw B from trial 150 on; B is
  redrawn (next sub-seed) until its maximiser is at least 0.25 (max-norm) from A's, so the
  optimum's location changes. 300 trials.
* ``drift-1d`` / ``drift-2d``: ``f_t = cos(theta_t) A + sin(theta_t) B`` with
  ``theta_t = pi t / 300``: the function (and its optimum) moves continuously; still a
  unit-variance GP draw at every t. 300 trials.

Methods:

* ``residual`` -- ``GPUCBCPDSampler(seed=s)``: the default residual CUSUM detector (alpha 1e-4).
* ``avanesov`` -- ``GPUCBCPDSampler(seed=s, reset=ChangeDetection.avanesov(),
  n_startup_trials=1)``: the paper's detector on uniform-exploration trials, package defaults
  otherwise.
* ``drift`` -- ``GPUCBCPDSampler(seed=s, reset=ChangeDetection(window=100))``: the drift mode
  (the model sees the latest 100 trials; the residual detector still runs). The environment
  variable ``DRIFT_WINDOW`` changes the window for experiments.
* ``gpucb`` -- ``GPUCBSampler(seed=s)``: no change detection.
* ``oracle`` -- ``GPUCBSampler(seed=s)`` on a fresh study from the true change on (abrupt
  problems only): what a user who knew the change would do.
* ``gpsampler`` -- Optuna's ``GPSampler(seed=s)`` (needs torch); ``tpe`` -- ``TPESampler(seed=s)``.

Columns: false alarms (alarms before the change, or more than one after it, summed over seeds),
first alarm after the change per seed (``-`` none): the trials from the change to the trial
whose result raised the alarm, and in brackets to the start of the new segment; mean regret
per trial before and after the change (mean over seeds), and for drift problems the mean regret
per trial over the whole run; seconds per run. Regret is ``max f_t - f_t(x_t)`` of the noise-free
function (max on a grid of 4001 points in 1-D, 301 x 301 in 2-D).

    python benchmarks/bench_change.py       # all problems and methods, 3 seeds, 5 min on 2 cores
                                            # -> reports/change/change.{md,json}
    python benchmarks/bench_change.py --problems abrupt-1d --methods residual gpucb --seeds 1
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from _common import limit_threads

if __name__ == "__main__":
    limit_threads("1")

import numpy as np  # noqa: E402
import optuna  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
T_DEFAULT = 300
CHANGE_AT = 150
NOISE_SD = 0.05
LENGTHSCALE = 0.2
N_FEATURES = 600
MIN_MOVE = 0.25
DRIFT_WINDOW = 100


class Draw:
    """A unit-variance SE-kernel GP draw on [0, 1]^d (random Fourier features)."""

    def __init__(self, d: int, seed: list[int]) -> None:
        rng = np.random.default_rng(seed)
        self.W = rng.standard_normal((N_FEATURES, d)) / LENGTHSCALE
        self.b = rng.uniform(0.0, 2.0 * math.pi, N_FEATURES)
        self.a = rng.standard_normal(N_FEATURES) * math.sqrt(2.0 / N_FEATURES)

    def __call__(self, X: np.ndarray) -> np.ndarray:
        return np.cos(np.atleast_2d(X) @ self.W.T + self.b) @ self.a


def grid(d: int) -> np.ndarray:
    if d == 1:
        return np.linspace(0.0, 1.0, 4001)[:, None]
    g = np.linspace(0.0, 1.0, 301)
    return np.stack(np.meshgrid(g, g, indexing="ij"), -1).reshape(-1, 2)


class Problem:
    def __init__(self, name: str, seed: int, T: int = T_DEFAULT) -> None:
        self.name, self.T = name, T
        kind, dim = name.split("-")
        self.kind, self.d = kind, int(dim[0])
        self.G = grid(self.d)
        self.A = Draw(self.d, [seed, self.d, 0])
        self.fA = self.A(self.G)
        self.B, self.fB = None, None
        if kind != "stationary":
            for k in range(1, 50):
                B = Draw(self.d, [seed, self.d, k])
                fB = B(self.G)
                move = np.abs(self.G[np.argmax(fB)] - self.G[np.argmax(self.fA)]).max()
                if kind == "drift" or move >= MIN_MOVE:
                    self.B, self.fB = B, fB
                    break
        self.noise = NOISE_SD * np.random.default_rng([seed, 99]).standard_normal(T)
        self.change_at = CHANGE_AT if kind == "abrupt" else None

    def weights(self, t: int) -> tuple[float, float]:
        if self.kind == "stationary":
            return 1.0, 0.0
        if self.kind == "abrupt":
            return (1.0, 0.0) if t < CHANGE_AT else (0.0, 1.0)
        theta = math.pi * t / self.T
        return math.cos(theta), math.sin(theta)

    def f(self, t: int, x: np.ndarray) -> float:
        a, b = self.weights(t)
        v = a * float(self.A(x)[0])
        if b:
            v += b * float(self.B(x)[0])
        return v

    def fmax(self, t: int) -> float:
        a, b = self.weights(t)
        g = a * self.fA if not b else a * self.fA + b * self.fB
        return float(g.max())


def make_sampler(method: str, seed: int) -> optuna.samplers.BaseSampler:
    from optuna_gpbandit import ChangeDetection, GPUCBCPDSampler, GPUCBSampler

    if method == "residual":
        return GPUCBCPDSampler(seed=seed)
    if method == "avanesov":
        return GPUCBCPDSampler(seed=seed, reset=ChangeDetection.avanesov(), n_startup_trials=1)
    if method == "drift":
        window = int(os.environ.get("DRIFT_WINDOW", DRIFT_WINDOW))
        return GPUCBCPDSampler(seed=seed, reset=ChangeDetection(window=window))
    if method in ("gpucb", "oracle"):
        return GPUCBSampler(seed=seed)
    if method == "gpsampler":
        return optuna.samplers.GPSampler(seed=seed)
    if method == "tpe":
        return optuna.samplers.TPESampler(seed=seed)
    raise ValueError(method)


def run(task: tuple[str, str, int, int]) -> dict[str, Any]:
    problem_name, method, seed, T = task
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.simplefilter("ignore")
    p = Problem(problem_name, seed, T)
    regret = np.empty(T)
    t0 = time.perf_counter()
    study = sampler = None
    raised: list[int] = []  # the trial whose result raised each alarm
    for t in range(T):
        if study is None or (method == "oracle" and t == p.change_at):
            sampler = make_sampler(method, seed)
            study = optuna.create_study(direction="maximize", sampler=sampler)
        trial = study.ask()
        x = np.array([trial.suggest_float(f"x{i}", 0.0, 1.0) for i in range(p.d)])
        study.tell(trial, p.f(t, x) + p.noise[t])
        regret[t] = p.fmax(t) - p.f(t, x)
        if method in DETECTING:
            n = len(sampler.change_points(study))
            raised += [t] * (n - len(raised))
    points = list(sampler.change_points(study)) if method in DETECTING else []
    return {"problem": problem_name, "method": method, "seed": seed, "T": T,
            "regret": regret.tolist(), "change_points": points, "raised": raised,
            "seconds": time.perf_counter() - t0}


def alarms(r: dict[str, Any], change_at: int | None) -> tuple[int, str | None]:
    """(false alarms, first alarm after the change as "raised (segment start)" in trials after
    the change: when the alarm was raised, and where the new segment was placed)."""
    cps, raised = r["change_points"], r.get("raised", r["change_points"])
    if change_at is None:
        return len(cps), None
    before = [c for c in cps if c < change_at]
    after = [(c, a) for c, a in zip(cps, raised) if c >= change_at]
    first = f"{after[0][1] - change_at} ({after[0][0] - change_at})" if after else None
    return len(before) + max(0, len(after) - 1), first


def table(runs: list[dict[str, Any]], problems: list[str], methods: list[str]) -> str:
    lines = ["| problem | method | false alarms | first alarm after the change: raised (segment "
             "start) | regret/trial "
             "before | regret/trial after (or whole run) | s/run |",
             "|---|---|---:|---|---:|---:|---:|"]
    for prob in problems:
        kind = prob.split("-")[0]
        change_at = CHANGE_AT if kind == "abrupt" else None
        for m in methods:
            rs = sorted((r for r in runs if r["problem"] == prob and r["method"] == m),
                        key=lambda r: r["seed"])
            if not rs:
                continue
            fa = [alarms(r, change_at) for r in rs]
            detects = m in DETECTING
            false = str(sum(a for a, _ in fa)) if detects else "-"
            delays = ", ".join("-" if d is None else str(d) for _, d in fa) \
                if detects and change_at else "-"
            reg = np.array([r["regret"] for r in rs])
            if change_at:
                before = f"{reg[:, :change_at].mean():.4f}"
                after = f"{reg[:, change_at:].mean():.4f}"
            else:
                before, after = "-", f"{reg.mean():.4f}"
            secs = np.mean([r["seconds"] for r in rs])
            lines.append(f"| {prob} | {m} | {false} | {delays} | {before} | {after} "
                         f"| {secs:.0f} |")
    return "\n".join(lines)


PROBLEMS = ["stationary-1d", "stationary-2d", "abrupt-1d", "abrupt-2d", "drift-1d", "drift-2d"]
METHODS = ["residual", "avanesov", "drift", "gpucb", "oracle", "gpsampler", "tpe"]
DETECTING = ("residual", "avanesov", "drift")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problems", nargs="+", default=PROBLEMS, choices=PROBLEMS)
    ap.add_argument("--methods", nargs="+", default=METHODS, choices=METHODS)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--T", type=int, default=T_DEFAULT)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", default=os.path.join(HERE, "reports", "change"))
    args = ap.parse_args()
    tasks = [(p, m, s, args.T) for p in args.problems for m in args.methods
             for s in range(args.seeds)
             if not (m == "oracle" and not p.startswith("abrupt"))]
    # slowest first, so the pool's tail is short
    tasks.sort(key=lambda t: (t[1] != "gpsampler", t[0]))
    t0 = time.perf_counter()
    runs = []
    with ProcessPoolExecutor(args.workers) as pool:
        for r in pool.map(run, tasks):
            runs.append(r)
            print(f"# {r['problem']} {r['method']} seed {r['seed']}: change points "
                  f"{r['change_points']}, regret/trial {np.mean(r['regret']):.4f}, "
                  f"{r['seconds']:.0f} s", file=sys.stderr, flush=True)
    text = table(runs, args.problems, args.methods)
    text += (f"\n\n{args.seeds} seeds x {args.T} trials, change at trial {CHANGE_AT} (abrupt), "
             f"noise sd {NOISE_SD}; wall time {time.perf_counter() - t0:.0f} s with "
             f"{args.workers} workers; `python benchmarks/bench_change.py "
             f"{' '.join(sys.argv[1:])}`.")
    print(text)
    os.makedirs(args.out, exist_ok=True)
    full = (sorted(args.problems) == sorted(PROBLEMS) and sorted(args.methods) == sorted(METHODS)
            and args.T == T_DEFAULT and args.seeds >= 3)
    name = "change" if full else "change_partial"  # the README quotes the full run
    with open(os.path.join(args.out, name + ".md"), "w") as fh:
        fh.write(text + "\n")
    with open(os.path.join(args.out, name + ".json"), "w") as fh:
        json.dump({"args": vars(args), "runs": runs}, fh)


if __name__ == "__main__":
    main()
