"""Shared run loop, statistics, tables and plots of the paper reproductions.

``run_bandit`` plays one bandit run through an Optuna study (in-memory storage, ask/tell) on a
finite arm set ``arms`` (rows in parameter units) with a known noiseless reward vector ``f``:

* every round the sampler proposes a point (``study.ask`` with fixed distributions), the arm
  nearest to it (Euclidean, in parameter units) is played, and ``f[arm] + noise`` is observed;
* the returned arm indices give the regret from the true, noiseless ``f``;
* ``record_arm=False`` (the proposal *is* an arm, e.g. the 1000-point grid of a stepped float):
  the trial is told the observed value;
* ``record_arm=True`` (a continuous proposal snapped to the nearest of finitely many random
  arms): the proposal trial is closed as FAIL, which every sampler ignores, and the played arm is
  added as a COMPLETE trial with the observed value, so the GP conditions on the arm actually
  played, as in the paper, not on the proposal.

``run_tasks`` runs independent (method, draw) runs sequentially or in a process pool.
"""

from __future__ import annotations

import math
import os
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import optuna
from optuna.distributions import BaseDistribution
from optuna.storages import InMemoryStorage
from optuna.trial import TrialState, create_trial

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")


def quiet() -> None:
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    warnings.filterwarnings("ignore", category=UserWarning, module="optuna")
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)


# --------------------------------------------------------------------------- run loop
def run_bandit(
    sampler: optuna.samplers.BaseSampler,
    distributions: dict[str, BaseDistribution],
    arms: np.ndarray,
    f: np.ndarray,
    noise_sd: float,
    T: int,
    noise_seed: int,
    record_arm: bool,
) -> np.ndarray:
    """Play ``T`` rounds; return the indices of the arms played."""
    names = list(distributions)
    arms = np.asarray(arms, dtype=float).reshape(len(f), len(names))
    rng = np.random.default_rng(noise_seed)
    study = optuna.create_study(direction="maximize", sampler=sampler, storage=InMemoryStorage())
    played = np.empty(T, dtype=int)
    for t in range(T):
        trial = study.ask(distributions)
        x = np.array([trial.params[n] for n in names], dtype=float)
        i = int(np.argmin(np.sum((arms - x) ** 2, axis=1)))
        y = float(f[i] + noise_sd * rng.standard_normal())
        if record_arm:
            study.tell(trial, state=TrialState.FAIL)
            params = {n: float(arms[i, j]) for j, n in enumerate(names)}
            study.add_trial(create_trial(params=params, distributions=distributions, value=y))
        else:
            study.tell(trial, y)
        played[t] = i
    return played


@dataclass(frozen=True)
class Task:
    experiment: str
    method: str
    draw: int
    T: int
    B: float | None = None  # optional override of the RKHS norm bound (chowdhury_benchmarks)


def _timed(fn: Callable[[Task], np.ndarray], task: Task) -> tuple[Task, np.ndarray, float]:
    quiet()
    t0 = time.perf_counter()
    regret = fn(task)
    return task, regret, time.perf_counter() - t0


def run_tasks(
    fn: Callable[[Task], np.ndarray], tasks: Sequence[Task], jobs: int = 1
) -> dict[tuple[str, str], dict[str, object]]:
    """Run ``fn`` (a picklable top-level function returning the instantaneous regret per round)
    on every task; group by (experiment, method): ``{"regret": (draws, T) array, "seconds":
    list}`` in draw order. Progress goes to stderr."""
    out: dict[tuple[str, str], dict[str, list]] = {}
    done = 0

    def collect(task: Task, regret: np.ndarray, secs: float) -> None:
        nonlocal done
        done += 1
        slot = out.setdefault((task.experiment, task.method), {"runs": [], "seconds": []})
        slot["runs"].append((task.draw, regret))
        slot["seconds"].append(secs)
        print(f"  [{done}/{len(tasks)}] {task.experiment} {task.method} draw {task.draw}: "
              f"final regret {regret.sum():.3f} cumulative, {secs:.1f} s",
              file=sys.stderr, flush=True)

    if jobs <= 1:
        for task in tasks:
            collect(*_timed(fn, task))
    else:
        with ProcessPoolExecutor(max_workers=jobs) as ex:
            for res in ex.map(_timed, [fn] * len(tasks), tasks):
                collect(*res)
    result = {}
    for key, slot in out.items():
        runs = sorted(slot["runs"], key=lambda r: r[0])
        result[key] = {"regret": np.stack([r for _, r in runs]), "seconds": slot["seconds"]}
    return result


def save_runs(path: str, res: dict, wall: float) -> None:
    """Store ``run_tasks`` results (regret per round of every run) for ``--replot``."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    arrays = {"wall": np.array(wall)}
    for i, ((e, m), slot) in enumerate(res.items()):
        arrays[f"key{i}"] = np.array([e, m])
        arrays[f"regret{i}"] = slot["regret"]
        arrays[f"seconds{i}"] = np.asarray(slot["seconds"])
    np.savez_compressed(path, **arrays)


def load_runs(path: str) -> tuple[dict, float]:
    data = np.load(path)
    res, i = {}, 0
    while f"key{i}" in data:
        e, m = (str(v) for v in data[f"key{i}"])
        res[(e, m)] = {"regret": data[f"regret{i}"], "seconds": list(data[f"seconds{i}"])}
        i += 1
    return res, float(data["wall"])


def run_or_load(fn, tasks: Sequence[Task], args, stem: str) -> tuple[dict, float]:
    """Run the tasks and save them to ``<out>/<stem>.npz``, or with ``--replot`` load them."""
    path = os.path.join(args.out, f"{stem}.npz")
    if args.replot:
        return load_runs(path)
    t0 = time.perf_counter()
    res = run_tasks(fn, tasks, args.jobs)
    wall = time.perf_counter() - t0
    save_runs(path, res, wall)
    return res, wall


# --------------------------------------------------------------------------- statistics
def mean_se(values: np.ndarray) -> tuple[float, float]:
    values = np.asarray(values, dtype=float)
    se = float(values.std(ddof=1) / math.sqrt(values.size)) if values.size > 1 else float("nan")
    return float(values.mean()), se


def fmt(mean: float, se: float, digits: int = 3) -> str:
    if math.isnan(se):
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} ± {se:.{digits}f}"


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]], n_text: int = 1) -> str:
    """A markdown table; the first ``n_text`` columns left-aligned, the others right-aligned."""
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---" if i < n_text else "---:" for i in range(len(header))) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def save_text(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as fh:
        fh.write(text)


def add_common_args(ap, presets: dict[str, tuple[int, int]]) -> None:
    """Presets of (T, draws), overridable with ``--T`` / ``--draws``:

    * ``default`` (no flag, or ``--full``): the paper's number of draws / runs (hours);
    * ``--reduced``: the smaller size of the results stored in ``results/`` (minutes);
    * ``--quick``: a smoke run (under two minutes).
    """
    quick, reduced, default = presets["quick"], presets["reduced"], presets["default"]
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true",
                      help=f"smoke run: T={quick[0]}, {quick[1]} draws (< 2 min)")
    mode.add_argument("--reduced", action="store_true",
                      help=f"the stored results' size: T={reduced[0]}, {reduced[1]} draws")
    mode.add_argument("--full", action="store_true",
                      help=f"the default, the paper's size: T={default[0]}, {default[1]} draws")
    ap.add_argument("--T", type=int, default=None, help=f"rounds per run (default {default[0]})")
    ap.add_argument("--draws", type=int, default=None,
                    help=f"independent problems (default {default[1]})")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    ap.add_argument("--out", default=RESULTS,
                    help="directory for the PNG, the table (.md) and the runs (.npz)")
    ap.add_argument("--replot", action="store_true",
                    help="rebuild the table and the PNG from the saved .npz of the same settings")
    ap.set_defaults(_presets=dict(presets))


def mode_name(args) -> str:
    return "quick" if args.quick else "reduced" if args.reduced else "default"


def resolve_mode(args) -> tuple[str, int, int]:
    name = mode_name(args)
    T, draws = args._presets[name]
    return name, args.T or T, args.draws or draws


def output_name(stem: str, args, extra: str = "") -> str:
    """``stem`` for a default (paper-size) run, else ``stem_<mode>[_T..][_d..]<extra>``, so that
    quick, reduced or customised runs do not overwrite each other's files."""
    mode = mode_name(args)
    parts = [] if mode == "default" else [mode]
    if args.T:
        parts.append(f"T{args.T}")
    if args.draws:
        parts.append(f"d{args.draws}")
    if extra:
        parts.append(extra)
    return "_".join([stem] + parts)


def random_play_regret(problems: Sequence[dict]) -> tuple[float, float]:
    """Mean ± SE over problems of the per-round regret of playing a uniformly random arm,
    ``max f - mean f`` (the slope of a method that learns nothing)."""
    return mean_se(np.array([p["f"].max() - p["f"].mean() for p in problems]))


def random_play_text(problems: Sequence[dict], T: int) -> str:
    """``regret <mean ± SE> per round, R_T = <T x mean>`` of uniformly random play."""
    mean, se = random_play_regret(problems)
    return f"regret {fmt(mean, se, digits=2)} per round, R_{T} = {T * mean:.0f}"


def load_pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt
