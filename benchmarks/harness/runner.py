"""Run (problem, sampler, seed) tasks, one JSON line per finished run.

A run is one in-memory Optuna study driven through ask / tell:

    t0 = perf_counter(); trial = study.ask(); params = problem.suggest(trial); t1 = ...
    value = problem.evaluate(params); t2 = ...; study.tell(trial, value); t3 = ...

``suggest_seconds`` is ``t1 - t0`` (the sampler's work: ``sample_relative`` runs in ``ask``,
``sample_independent`` in the ``suggest_*`` calls), ``objective_seconds`` ``t2 - t1``,
``tell_seconds`` ``t3 - t2`` (``after_trial`` of the sampler), ``wall_seconds`` the whole run.
``suggest_cpu_seconds`` is the process CPU time of the same step: far below the wall time means
the process was waiting for a core (a loaded machine). ``model_trials``: per trial, whether it
carries our samplers' ``gpbandit:state`` record (a trial the model chose, not a start-up trial;
always false for other samplers).

Runs are a suite's (``suite.py``): the problem of a task is ``suite.problem(name, seed)``, and a
spawned worker gets the suite's name, imports it and warms up as the suite says
(:func:`worker_init`).

The parent process alone writes ``runs.jsonl`` (append, flush, fsync after every finished run), so
an interrupted run loses at most the runs in flight; ``--resume`` skips the runs already there
(a truncated last line is ignored). Failed runs go to ``errors.jsonl`` and are retried on resume.
"""

from __future__ import annotations

import functools
import json
import math
import os
import platform
import sys
import time
import traceback
import warnings
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import asdict
from multiprocessing import get_context
from typing import Callable, Iterable

from benchmarks._common import THREAD_VARS

from .suite import Suite, Task, get_suite

RUNS_FILE = "runs.jsonl"
ERRORS_FILE = "errors.jsonl"
CONFIG_FILE = "config.json"


def make_tasks(problems: Iterable[str], samplers: Iterable[str], seeds: Iterable[int],
               n_trials: int) -> list[Task]:
    """Seeds outermost: an interrupted suite holds whole seeds of every (problem, sampler)."""
    problems, samplers = list(problems), list(samplers)
    return [Task(p, s, seed, n_trials) for seed in seeds for p in problems for s in samplers]


def limit_threads(threads: int) -> None:
    """Set the thread variables (effective for libraries loaded later) and limit the pools of
    those already loaded."""
    for var in THREAD_VARS:
        os.environ[var] = str(threads)
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(threads)
    except Exception:  # noqa: BLE001
        pass
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(threads)


def quiet() -> None:
    import optuna

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    warnings.filterwarnings("ignore")


def package_checkout(short: str = "--short") -> dict:
    """Where ``optuna_gpbandit`` is imported from (``path``), the commit of that checkout
    (``git rev-parse <short> HEAD``; ``None`` outside git) and whether the package has
    uncommitted changes (``dirty``)."""
    import subprocess

    import optuna_gpbandit

    path = os.path.dirname(os.path.realpath(optuna_gpbandit.__file__))

    def git(*args: str) -> str:
        try:
            return subprocess.run(["git", "-C", path, *args], capture_output=True, text=True,
                                  timeout=30).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""

    return {"path": path, "commit": git("rev-parse", short, "HEAD") or None,
            "dirty": bool(git("status", "--porcelain", "--", "."))}


def versions() -> dict:
    """Installed versions, read from the package metadata (importing torch takes seconds)."""
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for dist in ("optuna", "optuna_gpbandit", "numpy", "scipy", "scikit-learn", "torch",
                 "greenlet", "botorch", "optuna-integration", "hebo", "smac", "cmaes",
                 "coco-experiment", "xgboost", "lightgbm"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = None
    return out


STATE_ATTR = "gpbandit:state"


def import_modules(modules: Iterable[str]) -> None:
    """Import ``modules`` now (those not installed are skipped)."""
    import importlib

    for m in modules:
        try:
            importlib.import_module(m)
        except ImportError:
            pass


def warm_up(suite: "Suite", tasks: list[Task]) -> None:
    """Import what the runs will need, so that no run's first suggestion (or objective) pays a
    module import: the peers' packages, the suite's modules, then the suite's own ``warm``."""
    from .peers import warm

    import_modules(["numpy", "scipy.optimize", "optuna", "optuna_gpbandit"]
                   + list(suite.modules))
    warm(sorted({t.sampler for t in tasks}))
    if suite.warm is not None:
        suite.warm(tasks)


def worker_init(suite_name: str, threads: int, tasks: list[Task]) -> None:
    """A worker's start: thread limits, quiet logging, the suite's imports and warm-up."""
    limit_threads(threads)
    quiet()
    warm_up(get_suite(suite_name), tasks)
    limit_threads(threads)  # torch, if it was just imported


def is_model_trial(system_attrs: dict) -> bool:
    """Whether a trial carries our samplers' ``gpbandit:state`` record (whole or chunked), which
    they write on the trials the model chose and not on start-up trials."""
    return any(k == STATE_ATTR or k.startswith(STATE_ATTR + ":") for k in system_attrs)


def run_one(suite: "Suite", task: Task) -> dict:
    """One run of ``task`` on the suite's problem (its objective for the task's seed); returns
    its JSON record."""
    import optuna

    from .samplers import make_sampler

    quiet()
    problem = suite.problem(task.problem, task.seed)
    study = optuna.create_study(direction="minimize",
                                sampler=make_sampler(task.sampler, task.seed, task.n_trials))
    values, t_suggest, t_cpu, t_obj, t_tell, all_params = [], [], [], [], [], []
    best, best_params = math.inf, None
    start = time.perf_counter()
    for _ in range(task.n_trials):
        c0, t0 = time.process_time(), time.perf_counter()
        trial = study.ask()
        params = problem.suggest(trial)
        t1, c1 = time.perf_counter(), time.process_time()
        value = float(problem.evaluate(params))
        t2 = time.perf_counter()
        study.tell(trial, value)
        t3 = time.perf_counter()
        values.append(value)
        all_params.append(params)
        t_suggest.append(t1 - t0)
        t_cpu.append(c1 - c0)
        t_obj.append(t2 - t1)
        t_tell.append(t3 - t2)
        if value < best:
            best, best_params = value, params
    wall = time.perf_counter() - start
    return {
        **asdict(task),
        "minimum": problem.minimum,
        "values": values,
        "best_value": best,
        "best_params": _plain(best_params or {}),
        "params": [_plain(p) for p in all_params],
        "suggest_seconds": t_suggest,
        "suggest_cpu_seconds": t_cpu,
        "objective_seconds": t_obj,
        "tell_seconds": t_tell,
        "wall_seconds": wall,
        "model_trials": [is_model_trial(t.system_attrs) for t in study.trials],
        "finished": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "pid": os.getpid(),
        "loadavg": os.getloadavg()[0],
    }


def _plain(params: dict) -> dict:
    return {k: (v.item() if hasattr(v, "item") else v) for k, v in params.items()}


def _safe_run(suite_name: str, task: Task) -> tuple[Task, dict | None, str | None]:
    try:
        return task, run_one(get_suite(suite_name), task), None
    except Exception:  # noqa: BLE001
        return task, None, traceback.format_exc()


# --------------------------------------------------------------------------- files
def read_jsonl(path: str) -> list[dict]:
    """Records of a JSON-lines file, or of its gzipped copy ``path + ".gz"`` (how stored runs
    are kept in the repository); unparsable lines (a run killed mid-write) are skipped."""
    out = []
    if not os.path.exists(path) and os.path.exists(path + ".gz"):
        import gzip

        opener = lambda: gzip.open(path + ".gz", "rt")  # noqa: E731
    elif os.path.exists(path):
        opener = lambda: open(path)  # noqa: E731
    else:
        return out
    with opener() as fh:
        for line in fh:
            line = line.strip()
            if not line:
                continue
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return out


def _append(path: str, record: dict) -> None:
    with open(path, "a") as fh:
        # a previous writer killed mid-line leaves no newline: start on a fresh line
        if fh.tell() > 0:
            with open(path, "rb") as rfh:
                rfh.seek(-1, os.SEEK_END)
                if rfh.read(1) != b"\n":
                    fh.write("\n")
        fh.write(json.dumps(record) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def finished_keys(out_dir: str) -> set[tuple]:
    return {(r["problem"], r["sampler"], r["seed"], r["n_trials"])
            for r in read_jsonl(os.path.join(out_dir, RUNS_FILE))}


# --------------------------------------------------------------------------- progress
def _fmt_secs(s: float) -> str:
    s = int(round(s))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


class Progress:
    """finished/total, elapsed and an ETA on stderr. The ETA sums, over the runs left, the mean
    wall time of finished runs of the same (problem, sampler) (else of the sampler, else of all),
    divided by the number of workers."""

    def __init__(self, total: int, jobs: int, previous: list[dict], stream=None):
        self.total, self.jobs = total, max(1, jobs)
        self.stream = stream or sys.stderr
        self.done = 0
        self.start = time.perf_counter()
        self.secs: dict[tuple[str, str], list[float]] = {}
        for r in previous:
            self._add(r["problem"], r["sampler"], r["wall_seconds"])

    def _add(self, problem: str, sampler: str, secs: float) -> None:
        self.secs.setdefault((problem, sampler), []).append(secs)

    def _estimate(self, task: Task) -> float | None:
        for keys in (
            [(task.problem, task.sampler)],
            [k for k in self.secs if k[1] == task.sampler],
            list(self.secs),
        ):
            vals = [v for k in keys for v in self.secs.get(k, [])]
            if vals:
                return sum(vals) / len(vals)
        return None

    def eta(self, remaining: list[Task]) -> str:
        est = [self._estimate(t) for t in remaining]
        if not remaining:
            return "0:00:00"
        if any(e is None for e in est):
            return "?"
        return "~" + _fmt_secs(sum(est) / self.jobs)

    def finished(self, task: Task, record: dict | None, error: str | None,
                 remaining: list[Task]) -> None:
        self.done += 1
        if record is not None:
            self._add(task.problem, task.sampler, record["wall_seconds"])
            what = f"{record['wall_seconds']:.1f} s, best {record['best_value']:.4g}"
            if record["minimum"] is not None:
                what += f" (regret {max(record['best_value'] - record['minimum'], 0.0):.2e})"
        else:
            what = "FAILED: " + (error or "").strip().splitlines()[-1]
        elapsed = time.perf_counter() - self.start
        print(f"[{self.done}/{self.total}] {task.problem} / {task.sampler} / seed {task.seed}: "
              f"{what} | elapsed {_fmt_secs(elapsed)}, ETA {self.eta(remaining)}",
              file=self.stream, flush=True)


# --------------------------------------------------------------------------- driver
def run_tasks(suite_name: str, tasks: list[Task], out_dir: str, jobs: int = 1, threads: int = 1,
              resume: bool = False) -> tuple[int, int]:
    """Run the tasks of suite ``suite_name`` not yet in ``out_dir/runs.jsonl``; returns
    (finished now, failed now)."""
    os.makedirs(out_dir, exist_ok=True)
    runs_path = os.path.join(out_dir, RUNS_FILE)
    errors_path = os.path.join(out_dir, ERRORS_FILE)
    previous = read_jsonl(runs_path)
    done = {(r["problem"], r["sampler"], r["seed"], r["n_trials"]) for r in previous}
    if previous and not resume:
        raise SystemExit(f"{runs_path} already holds {len(previous)} runs: pass --resume to "
                         "continue it, or choose another --out")
    todo = [t for t in tasks if t.key not in done]
    skipped = len(tasks) - len(todo)
    print(f"{len(tasks)} runs: {skipped} already finished in {out_dir}, {len(todo)} to run "
          f"with {jobs} worker(s), {threads} BLAS/OpenMP thread(s) each", file=sys.stderr,
          flush=True)
    if not todo:
        return 0, 0
    progress = Progress(len(todo), jobs, [r for r in previous if r.get("wall_seconds")])
    n_ok = n_fail = 0

    def collect(task: Task, record: dict | None, error: str | None, remaining: list[Task]):
        nonlocal n_ok, n_fail
        if record is not None:
            _append(runs_path, record)
            n_ok += 1
        else:
            _append(errors_path, {**asdict(task), "error": error,
                                  "time": time.strftime("%Y-%m-%dT%H:%M:%S")})
            n_fail += 1
        progress.finished(task, record, error, remaining)

    pool_run(todo, functools.partial(_safe_run, suite_name),
             functools.partial(worker_init, suite_name), threads, jobs, collect)
    return n_ok, n_fail


def pool_run(tasks: list, work: Callable, init: Callable, threads: int, jobs: int,
             collect: Callable) -> None:
    """``collect(*work(task), remaining)`` for every task, ``remaining`` the tasks not yet
    started: in this process for ``jobs <= 1`` (after ``init(threads, tasks)``), else in
    ``jobs`` spawned worker processes (clean: they read the thread variables before numpy /
    torch load) with at most ``2 x jobs`` tasks queued. Ctrl-C keeps what has finished."""
    if jobs <= 1:
        init(threads, tasks)
        for i, task in enumerate(tasks):
            collect(*work(task), tasks[i + 1:])
        return
    ex = ProcessPoolExecutor(max_workers=jobs, mp_context=get_context("spawn"),
                             initializer=init, initargs=(threads, tasks))
    try:
        queue, running = list(tasks), {}
        while queue or running:
            while queue and len(running) < 2 * jobs:
                task = queue.pop(0)
                running[ex.submit(work, task)] = task
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for fut in finished:
                running.pop(fut)
                collect(*fut.result(), queue + list(running.values()))
    except KeyboardInterrupt:
        print("interrupted: finished runs are saved; --resume continues", file=sys.stderr)
        ex.shutdown(wait=False, cancel_futures=True)
        raise
    ex.shutdown()
