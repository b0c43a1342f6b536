"""Multi-process test infrastructure: workers sharing one Optuna study, and the checks.

Not a test module (pytest collects ``test_*.py`` only). Three parts:

* a **worker** that opens a study by name on a storage and runs ``study.optimize`` with a sampler
  built from a small JSON spec, on a cheap deterministic objective with an optional random sleep
  (so that trials of different workers overlap). Runnable as::

      python tests/distributed.py --storage STORAGE --study NAME --spec JSON --n-trials 10
      python -m tests.distributed ...            # from the repository root

  or in-process as ``run_worker(...)`` (e.g. through ``multiprocessing`` with the spawn context);
* :func:`launch_workers`, which starts K workers as separate processes (``sys.executable`` on this
  file), waits for them with a timeout and returns their exit codes, stdout and stderr;
* :func:`check_study`, which verifies that every trial finished COMPLETE, that no worker failed,
  and that no two concurrently pending trials share a point (see :func:`shared_points`); it
  returns the offending trials and pairs so that a test can print them; :func:`record_problems`
  checks the samplers' ``gpbandit:`` records on the trials.

``STORAGE`` is ``grpc://HOST:PORT`` (Optuna's gRPC storage proxy, ``GrpcStorageProxy``), an
RDB URL (anything else containing ``://``, e.g.
``postgresql+psycopg2://user:pw@127.0.0.1:5432/db``) or else the path of a journal file
(``JournalStorage(JournalFileBackend(path))``).

:class:`LocalPostgres` starts a throwaway PostgreSQL server (initdb + pg_ctl in a temporary
directory, as the ``postgres`` user when running as root) for the tests' ``postgres_url``
fixture; :class:`GrpcProxy` starts Optuna's gRPC storage proxy server over an RDB URL.
"""

from __future__ import annotations

import argparse
import datetime
import glob
import json
import math
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import optuna
from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)
from optuna.trial import FrozenTrial, TrialState

HERE = Path(__file__).resolve()
REPO_ROOT = HERE.parent.parent

# Sampler spec: {"sampler": class name, "kwargs": {...}, "seed": int}. The class is looked up in
# optuna_gpbandit, then in optuna.samplers. A kwarg (or a field of one) given as a dict with a
# "type" key builds that settings object of optuna_gpbandit from the other keys:
# {"pending": {"type": "Censoring", "window": 10}} is pending=Censoring(window=10), and
# "Class.method" names a constructor ({"type": "Censoring.paper"}). A "pending" dict without
# "type" builds a Censoring(**dict).
DEFAULT_SPEC: dict[str, Any] = {"sampler": "GPUCBSampler", "kwargs": {}, "seed": 0}


# --------------------------------------------------------------------------------- storage
GRPC_SCHEME = "grpc://"


def open_storage(
    storage: str | optuna.storages.BaseStorage, heartbeat: int | None = None
) -> str | optuna.storages.BaseStorage:
    """``grpc://HOST:PORT`` is a ``GrpcStorageProxy``; an RDB URL is passed through, a storage
    object too; anything else is a journal file.

    ``heartbeat`` (seconds, RDB URLs only): an ``RDBStorage`` with Optuna's heartbeat, grace
    period twice the interval, so that ``study.optimize`` fails the trials of dead workers.
    """
    if isinstance(storage, str) and storage.startswith(GRPC_SCHEME):
        if heartbeat is not None:
            raise ValueError("heartbeat needs an RDB URL (the gRPC proxy has no heartbeat)")
        host, _, port = storage[len(GRPC_SCHEME):].rpartition(":")
        return optuna.storages.GrpcStorageProxy(host=host, port=int(port))
    if heartbeat is not None:
        if not (isinstance(storage, str) and "://" in storage):
            raise ValueError("heartbeat needs an RDB URL (JournalStorage has no heartbeat)")
        return optuna.storages.RDBStorage(
            storage, heartbeat_interval=heartbeat, grace_period=2 * heartbeat
        )
    if not isinstance(storage, str) or "://" in storage:
        return storage
    backend = optuna.storages.journal.JournalFileBackend(storage)
    return optuna.storages.JournalStorage(backend)


def build_sampler(spec: dict[str, Any] | str) -> optuna.samplers.BaseSampler:
    """Sampler from a spec dict (or its JSON): ``{"sampler": name, "kwargs": {...}, "seed": s}``."""
    if isinstance(spec, str):
        spec = json.loads(spec)
    import optuna_gpbandit

    name = spec.get("sampler", DEFAULT_SPEC["sampler"])
    cls = getattr(optuna_gpbandit, name, None) or getattr(optuna.samplers, name)
    kwargs = dict(spec.get("kwargs") or {})
    if isinstance(kwargs.get("pending"), dict) and "type" not in kwargs["pending"]:
        kwargs["pending"] = {"type": "Censoring", **kwargs["pending"]}
    kwargs = {key: _settings_object(value) for key, value in kwargs.items()}
    if spec.get("seed") is not None:
        kwargs["seed"] = spec["seed"]
    return cls(**kwargs)


def _settings_object(value: Any) -> Any:
    """A JSON value of a spec's kwargs: ``{"type": name, **fields}`` -> the settings object
    ``optuna_gpbandit.<name>(**fields)`` (``name`` may be ``"Class.method"``; fields may be
    such objects too); anything else as it is."""
    import optuna_gpbandit

    if not (isinstance(value, dict) and "type" in value):
        return value
    fields = {k: _settings_object(v) for k, v in value.items() if k != "type"}
    make: Any = optuna_gpbandit
    for part in str(value["type"]).split("."):
        make = getattr(make, part)
    return make(**fields)


# ------------------------------------------------------------------------------ objective
def branin(x1: float, x2: float) -> float:
    """Branin-Hoo on [-5, 10] x [0, 15]; minimum 0.397887 at three points."""
    a, b, c = 1.0, 5.1 / (4 * math.pi**2), 5 / math.pi
    r, s, t = 6.0, 10.0, 1 / (8 * math.pi)
    return a * (x2 - b * x1**2 + c * x1 - r) ** 2 + s * (1 - t) * math.cos(x1) + s


OBJECTIVES = ("branin", "quadratic3", "hang")


class Objective:
    """Cheap deterministic objective (minimise) with an optional random sleep in [0, sleep] s.

    ``"branin"``: 2-D Branin. ``"quadratic3"``: a 3-D quadratic with a float, a log float and an
    int parameter. ``"hang"``: Branin's parameters, then a sleep of an hour (a worker to be
    killed in the middle of its trial). The sleep is drawn from ``random.Random(trial.number)`` after the parameters
    are suggested, so the trial stays RUNNING (pending for the other workers) meanwhile.
    """

    def __init__(self, name: str = "branin", sleep: float = 0.0) -> None:
        if name not in OBJECTIVES:
            raise ValueError(f"unknown objective {name!r}")
        self.name = name
        self.sleep = float(sleep)

    def __call__(self, trial: optuna.Trial) -> float:
        if self.name == "hang":
            branin(trial.suggest_float("x1", -5.0, 10.0), trial.suggest_float("x2", 0.0, 15.0))
            time.sleep(3600.0)
        if self.name in ("branin", "hang"):
            value = branin(trial.suggest_float("x1", -5.0, 10.0), trial.suggest_float("x2", 0.0, 15.0))
        else:
            x = trial.suggest_float("x", -1.0, 1.0)
            lr = trial.suggest_float("lr", 1e-4, 1.0, log=True)
            k = trial.suggest_int("k", 1, 8)
            value = (x - 0.3) ** 2 + (math.log10(lr) + 2.0) ** 2 / 4 + (k - 5) ** 2 / 16
        if self.sleep > 0:
            time.sleep(random.Random(trial.number).uniform(0.0, self.sleep))
        return value


# --------------------------------------------------------------------------------- worker
def run_worker(
    storage: str,
    study_name: str,
    spec: dict[str, Any] | str = DEFAULT_SPEC,
    n_trials: int | None = None,
    max_total: int | None = None,
    sleep: float = 0.0,
    objective: str = "branin",
    heartbeat: int | None = None,
) -> None:
    """One worker: open the study by name and optimise.

    Runs ``n_trials`` trials, or (with ``max_total``) stops once the study holds ``max_total``
    trials in any state (``MaxTrialsCallback(max_total, states=None)``, checked after each of this
    worker's trials). With ``n_trials=None`` only ``max_total`` bounds the run; with both, the
    first bound reached wins. The study must exist (the launcher creates it, also so that the
    RDB schema is not created by several processes at once).
    """
    if n_trials is None and max_total is None:
        raise ValueError("give n_trials or max_total")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.load_study(
        study_name=study_name, storage=open_storage(storage, heartbeat), sampler=build_sampler(spec)
    )
    callbacks = []
    if max_total is not None:
        callbacks.append(optuna.study.MaxTrialsCallback(max_total, states=None))
    study.optimize(Objective(objective, sleep), n_trials=n_trials, callbacks=callbacks)


def _parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="one worker of a shared Optuna study")
    p.add_argument("--storage", required=True, help="RDB URL, or a journal file path")
    p.add_argument("--study", required=True, help="study name (the study must exist)")
    p.add_argument("--spec", default=json.dumps(DEFAULT_SPEC), help="sampler spec as JSON")
    p.add_argument("--n-trials", type=int, default=None)
    p.add_argument("--max-total", type=int, default=None)
    p.add_argument("--sleep", type=float, default=0.0, help="max random sleep per trial (s)")
    p.add_argument("--objective", default="branin", choices=OBJECTIVES)
    p.add_argument("--heartbeat", type=int, default=None, help="RDB heartbeat interval (s)")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    a = _parse_args(argv)
    run_worker(a.storage, a.study, a.spec, a.n_trials, a.max_total, a.sleep, a.objective,
               a.heartbeat)


# ------------------------------------------------------------------------------- launcher
@dataclass
class WorkerResult:
    index: int
    returncode: int | None  # None: killed at the timeout
    stdout: str
    stderr: str
    elapsed: float
    timed_out: bool = False

    @property
    def failed(self) -> bool:
        """Non-zero exit, timeout, or a traceback on stderr (an exception Optuna logged)."""
        return self.timed_out or self.returncode != 0 or "Traceback" in self.stderr

    def describe(self) -> str:
        status = "timed out" if self.timed_out else f"exit {self.returncode}"
        tail = "\n".join(self.stderr.strip().splitlines()[-30:])
        return f"worker {self.index}: {status} after {self.elapsed:.1f} s\n{tail}".rstrip()


def worker_env() -> dict[str, str]:
    """The workers' environment: one BLAS thread each (K processes on few cores), repo importable."""
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env.setdefault(var, "1")
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO_ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    )
    return env


def worker_command(
    storage: str,
    study_name: str,
    spec: dict[str, Any] | str = DEFAULT_SPEC,
    *,
    n_trials: int | None = None,
    max_total: int | None = None,
    sleep: float = 0.0,
    objective: str = "branin",
    heartbeat: int | None = None,
) -> list[str]:
    """The command line of one worker process (see :func:`main`)."""
    spec_json = spec if isinstance(spec, str) else json.dumps(spec)
    cmd = [sys.executable, str(HERE), "--storage", str(storage), "--study", study_name,
           "--spec", spec_json, "--sleep", str(sleep), "--objective", objective]
    if n_trials is not None:
        cmd += ["--n-trials", str(n_trials)]
    if max_total is not None:
        cmd += ["--max-total", str(max_total)]
    if heartbeat is not None:
        cmd += ["--heartbeat", str(heartbeat)]
    return cmd


def start_victim(storage: str, study_name: str, spec: dict[str, Any] | str,
                 heartbeat: int | None = None, timeout: float = 120.0,
                 model_trial: bool = False) -> tuple[subprocess.Popen, int]:
    """Start a worker whose first trial hangs; return it once that trial is RUNNING with its
    point stored (``gpbandit:params`` and stamp written), and the trial's number.

    ``model_trial``: also wait for the model's record (``gpbandit:state``). The sampler writes
    it after the point, so returning at the point alone races the caller's kill against that
    write (seen once in a fresh-clone CI run: the victim's record missing).

    The caller kills it (``proc.kill()``: SIGKILL, no clean-up of any kind).
    """
    from optuna_gpbandit._history import pending_point
    from optuna_gpbandit._storage import STATE, read_trial_json

    cmd = worker_command(storage, study_name, spec, n_trials=1, objective="hang",
                         heartbeat=heartbeat)
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=worker_env(), cwd=str(REPO_ROOT))
    deadline = time.perf_counter() + timeout
    space = {"x1": FloatDistribution(-5.0, 10.0), "x2": FloatDistribution(0.0, 15.0)}
    while time.perf_counter() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the victim worker exited early (exit {proc.returncode})")
        for t in load_trials(storage, study_name):
            if t.state == TrialState.RUNNING and (
                set(t.params) == set(space) or pending_point(t, space) is not None
            ) and (not model_trial or read_trial_json(t, STATE) is not None):
                return proc, t.number
        time.sleep(0.2)
    proc.kill()
    raise RuntimeError("the victim worker never reached a running trial with its point stored")


def launch_workers(
    storage: str,
    study_name: str,
    spec: dict[str, Any] | str = DEFAULT_SPEC,
    n_workers: int = 4,
    *,
    n_trials: int | None = None,
    max_total: int | None = None,
    sleep: float = 0.0,
    objective: str = "branin",
    timeout: float = 120.0,
    heartbeat: int | None = None,
) -> list[WorkerResult]:
    """Run ``n_workers`` worker processes (``sys.executable tests/distributed.py``) and wait.

    The study must already exist. Workers still running at ``timeout`` seconds are killed and
    reported with ``timed_out=True``. Output goes to temporary files (no pipe can fill up).
    """
    cmd = worker_command(storage, study_name, spec, n_trials=n_trials, max_total=max_total,
                         sleep=sleep, objective=objective, heartbeat=heartbeat)
    env = worker_env()
    start = time.perf_counter()
    deadline = start + timeout
    procs = []
    with tempfile.TemporaryDirectory(prefix="gpbandit-workers-") as logdir:
        for i in range(n_workers):
            out = open(os.path.join(logdir, f"{i}.out"), "w+")
            err = open(os.path.join(logdir, f"{i}.err"), "w+")
            proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, cwd=str(REPO_ROOT))
            procs.append((proc, out, err))
        results = []
        for i, (proc, out, err) in enumerate(procs):
            timed_out = False
            try:
                proc.wait(timeout=max(0.0, deadline - time.perf_counter()))
            except subprocess.TimeoutExpired:
                timed_out = True
                proc.kill()
                proc.wait()
            elapsed = time.perf_counter() - start
            out.seek(0)
            err.seek(0)
            results.append(WorkerResult(i, None if timed_out else proc.returncode,
                                        out.read(), err.read(), elapsed, timed_out))
            out.close()
            err.close()
    return results


# -------------------------------------------------------------------------------- checker
def unit_coordinate(dist: BaseDistribution, value: Any) -> float:
    """A parameter value in [0, 1] (log scale for log distributions); categoricals: the index."""
    internal = float(dist.to_internal_repr(value))
    if isinstance(dist, CategoricalDistribution):
        return internal
    assert isinstance(dist, (FloatDistribution, IntDistribution)), dist
    low, high = float(dist.low), float(dist.high)
    if dist.log:
        internal, low, high = math.log(internal), math.log(low), math.log(high)
    return 0.0 if high == low else (internal - low) / (high - low)


def point_distance(a: FrozenTrial, b: FrozenTrial) -> float:
    """Max abs difference of two trials' points in the unit-normalised space.

    Floats and ints are scaled to [0, 1] by their distribution (log scale when ``log=True``), so
    the distance does not depend on the parameters' units; two different categorical choices are
    1 apart. Trials with different parameter names are ``inf`` apart.
    """
    if set(a.params) != set(b.params):
        return math.inf
    diff = 0.0
    for name, value in a.params.items():
        da, db = a.distributions[name], b.distributions[name]
        if isinstance(da, CategoricalDistribution):
            d = 0.0 if value == b.params[name] else 1.0
        else:
            d = abs(unit_coordinate(da, value) - unit_coordinate(db, b.params[name]))
        diff = max(diff, d)
    return diff


def _pending_from(t: FrozenTrial) -> datetime.datetime | None:
    """When ``t``'s point was in storage for other workers to see: its ``gpbandit:stamp``
    (taken after the sampler stored the point), else its start. Not the start alone: a trial
    is created, and only then reads the history and chooses; a trial that completes in between
    is an observation to it, and choosing that point again is a sequential repeat (allowed on
    objectives that look noisy), not two workers at one point."""
    from optuna_gpbandit._storage import STAMP

    stamp = t.system_attrs.get(STAMP)
    if isinstance(stamp, (int, float)) and t.datetime_start is not None:
        return max(t.datetime_start, datetime.datetime.fromtimestamp(stamp))
    return t.datetime_start


def _overlap(a: FrozenTrial, b: FrozenTrial) -> bool:
    """Were the two trials pending at the same time with their points stored? ([stored,
    complete] intervals overlap, :func:`_pending_from`; an unfinished trial's interval is
    open-ended.)"""
    a_start, b_start = _pending_from(a), _pending_from(b)
    if a_start is None or b_start is None:
        return False
    a_end, b_end = a.datetime_complete, b.datetime_complete
    return (b_end is None or a_start < b_end) and (a_end is None or b_start < a_end)


@dataclass
class SharedPoint:
    """Two trials that were pending at the same time at (nearly) the same point."""

    a: int
    b: int
    distance: float
    params_a: dict[str, Any]
    params_b: dict[str, Any]

    def __str__(self) -> str:
        return (f"trials {self.a} and {self.b} overlapped at distance {self.distance:.2e}: "
                f"{self.params_a} / {self.params_b}")


def shared_points(trials: list[FrozenTrial], tol: float = 1e-6) -> list[SharedPoint]:
    """Pairs of trials whose [datetime_start, datetime_complete] intervals overlap and whose points
    are within ``tol`` in the unit-normalised space (:func:`point_distance`).

    "Share a point" is a tolerance, not ``params ==``: two workers whose optimiser converges to the
    same maximiser from slightly different data get points a few 1e-9 apart, which exact equality
    would miss. The default 1e-6 flags only such numerically identical points; the samplers' own
    same-point test uses 1e-3 in encoded units (pass ``tol=1e-3`` to count near-duplicates).
    """
    found = []
    trials = sorted(trials, key=lambda t: t.number)
    for i, a in enumerate(trials):
        for b in trials[i + 1 :]:
            if _overlap(a, b):
                d = point_distance(a, b)
                if d <= tol:
                    found.append(SharedPoint(a.number, b.number, d, a.params, b.params))
    return found


@dataclass
class CheckReport:
    n_trials: int
    not_complete: list[tuple[int, str]] = field(default_factory=list)
    failed_workers: list[WorkerResult] = field(default_factory=list)
    shared: list[SharedPoint] = field(default_factory=list)
    n_overlapping_pairs: int = 0

    @property
    def ok(self) -> bool:
        return not (self.not_complete or self.failed_workers or self.shared)

    def __str__(self) -> str:
        lines = [f"{self.n_trials} trials, {self.n_overlapping_pairs} overlapping pairs"]
        if self.not_complete:
            lines.append(f"not COMPLETE: {self.not_complete}")
        lines += [w.describe() for w in self.failed_workers]
        if self.shared:
            lines.append(f"{len(self.shared)} concurrently pending pairs share a point:")
            lines += [f"  {s}" for s in self.shared]
        return "\n".join(lines)


def check_study(
    storage: str | optuna.storages.BaseStorage,
    study_name: str,
    workers: list[WorkerResult] | None = None,
    tol: float = 1e-6,
) -> CheckReport:
    """Every trial COMPLETE, no failed worker, no two concurrently pending trials at one point."""
    return check_trials(load_trials(storage, study_name), workers, tol)


def load_trials(storage: str | optuna.storages.BaseStorage, study_name: str) -> list[FrozenTrial]:
    study = optuna.load_study(study_name=study_name, storage=open_storage(storage))
    return study.get_trials(deepcopy=False)


def check_trials(
    trials: list[FrozenTrial], workers: list[WorkerResult] | None = None, tol: float = 1e-6
) -> CheckReport:
    report = CheckReport(len(trials))
    report.not_complete = [(t.number, t.state.name) for t in trials if t.state != TrialState.COMPLETE]
    report.failed_workers = [w for w in workers or [] if w.failed]
    report.shared = shared_points(trials, tol)
    report.n_overlapping_pairs = sum(
        _overlap(a, b) for i, a in enumerate(trials) for b in trials[i + 1 :]
    )
    return report


def record_problems(trial: FrozenTrial) -> list[str]:
    """What is wrong with the ``gpbandit:`` system attrs the samplers wrote on ``trial``.

    Every such attr must be a known one: a plain value of its type (``gpbandit:stamp`` a
    number, ``gpbandit:role`` a string, ``gpbandit:prediction`` a list) or a chunk
    ``gpbandit:<record>:<i>`` of a JSON record (``_storage.write_trial_json``): chunks from 0 on
    with no gap (an empty chunk ends a rewritten record), joined into valid JSON. The point
    record (``gpbandit:params``) must hold the trial's own parameters and come with its stamp;
    a model record (``gpbandit:state``) must be a dict and come with the point record. An empty
    list: every record intact (a trial without records has none to break).
    """
    from optuna_gpbandit._storage import (FINISH, MULTIPLIERS, PARAMS, PREDICTION, PREFIX, ROLE,
                                          STAMP, STATE, read_trial_json)

    plain: dict[str, tuple[type, ...]] = {STAMP: (int, float), ROLE: (str,), PREDICTION: (list,)}
    chunked = {PARAMS, STATE, FINISH, MULTIPLIERS}
    where = f"trial {trial.number}"
    problems = []
    chunks: dict[str, dict[int, Any]] = {}
    for key, value in trial.system_attrs.items():
        if not key.startswith(PREFIX):
            continue
        if key in plain:
            if not isinstance(value, plain[key]) or isinstance(value, bool):
                problems.append(f"{where}: {key} is {value!r}, not a {plain[key][0].__name__}")
            continue
        name, _, index = key.rpartition(":")
        if name not in chunked or not index.isdigit():
            problems.append(f"{where}: unknown attr {key}")
            continue
        chunks.setdefault(name, {})[int(index)] = value
    records = {}
    for name, parts in sorted(chunks.items()):
        n = 0
        while isinstance(parts.get(n), str) and parts[n]:
            n += 1
        if n == 0:
            problems.append(f"{where}: {name} has no chunk 0 (chunks {sorted(parts)})")
            continue
        if len(parts) > n and parts.get(n) != "":
            problems.append(f"{where}: {name} chunk {n} is missing or not text "
                            f"(chunks {sorted(parts)})")
            continue
        records[name] = read_trial_json(trial, name)
        if records[name] is None:
            problems.append(f"{where}: {name} is not valid JSON ({n} chunk(s))")
    point = records.get(PARAMS)
    if PARAMS in records and point is not None:
        stored = point.get("params") if isinstance(point, dict) else None
        if not isinstance(stored, dict):
            problems.append(f"{where}: {PARAMS} holds no params dict: {point!r}")
        else:
            for name, internal in stored.items():
                dist = trial.distributions.get(name)
                if dist is not None and internal != float(
                        dist.to_internal_repr(trial.params[name])):
                    problems.append(f"{where}: {PARAMS} has {name}={internal!r}, the trial "
                                    f"{trial.params[name]!r}")
        if STAMP not in trial.system_attrs:
            problems.append(f"{where}: {PARAMS} without {STAMP}")
    if STATE in records:
        if records[STATE] is not None and not isinstance(records[STATE], dict):
            problems.append(f"{where}: {STATE} is not a dict: {records[STATE]!r}")
        if PARAMS not in chunks:
            problems.append(f"{where}: {STATE} without {PARAMS}")
    return problems


# ---------------------------------------------------------------------- local PostgreSQL
class PostgresUnavailable(RuntimeError):
    """No PostgreSQL server could be started; the message says why."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def postgres_bindir() -> str | None:
    """Directory of initdb/pg_ctl: the newest /usr/lib/postgresql/*/bin, else from PATH."""
    def version(path: str) -> tuple:
        v = Path(path).parent.name
        return tuple(int(p) for p in v.split(".") if p.isdigit())

    for bindir in sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=version, reverse=True):
        if os.access(os.path.join(bindir, "initdb"), os.X_OK):
            return bindir
    initdb = shutil.which("initdb")
    return os.path.dirname(os.path.realpath(initdb)) if initdb else None


def check_postgres(url: str, timeout: float = 5.0) -> str | None:
    """``None`` if a connection to the SQLAlchemy ``url`` works, else the error message."""
    import sqlalchemy

    try:
        engine = sqlalchemy.create_engine(url, connect_args={"connect_timeout": int(timeout)})
        try:
            with engine.connect() as conn:
                conn.execute(sqlalchemy.text("SELECT 1"))
        finally:
            engine.dispose()
    except Exception as e:  # noqa: BLE001 - any failure means "unusable"
        return f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"
    return None


class LocalPostgres:
    """A throwaway PostgreSQL server: initdb + pg_ctl in a temporary directory, on a free port.

    Runs as the ``postgres`` user when the current user is root (postgres refuses to run as
    root); trust authentication on 127.0.0.1 only; fsync off. ``url`` is a SQLAlchemy URL of the
    ``postgres`` database. :meth:`start` raises :class:`PostgresUnavailable` with the reason.
    """

    def __init__(self, bindir: str, root: str, port: int, as_user: str | None) -> None:
        self.bindir, self.root, self.port, self.as_user = bindir, root, port, as_user
        self.data = os.path.join(root, "data")
        self.url = f"postgresql+psycopg2://postgres@127.0.0.1:{port}/postgres"

    def _run(self, *args: str, timeout: float = 90.0) -> subprocess.CompletedProcess:
        cmd = [os.path.join(self.bindir, args[0]), *args[1:]]
        if self.as_user:
            cmd = ["runuser", "-u", self.as_user, "--", *cmd]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd="/")

    @classmethod
    def start(cls) -> LocalPostgres:
        bindir = postgres_bindir()
        if bindir is None:
            raise PostgresUnavailable(
                "no PostgreSQL server binaries (initdb) found; install PostgreSQL "
                "(apt-get install postgresql) or set GPBANDIT_TEST_POSTGRES_URL"
            )
        as_user = None
        if os.geteuid() == 0:
            import pwd

            try:
                pw = pwd.getpwnam("postgres")
            except KeyError:
                raise PostgresUnavailable(
                    "running as root and there is no 'postgres' user to run the server as"
                ) from None
            if shutil.which("runuser") is None:
                raise PostgresUnavailable("running as root and 'runuser' is not available")
            as_user = "postgres"
        root = tempfile.mkdtemp(prefix="gpbandit-pg-")
        if as_user:
            os.chown(root, pw.pw_uid, pw.pw_gid)
        server = cls(bindir, root, free_port(), as_user)
        try:
            server._start()
        except BaseException:
            server.stop()
            raise
        return server

    def _start(self) -> None:
        def fail(step: str, proc: subprocess.CompletedProcess) -> None:
            log = ""
            try:
                log = Path(self.root, "server.log").read_text()[-1500:]
            except OSError:
                pass
            raise PostgresUnavailable(
                f"{step} failed (exit {proc.returncode}): {proc.stderr.strip()[-1500:]} {log}".strip()
            )

        proc = self._run("initdb", "-D", self.data, "-U", "postgres", "-A", "trust",
                         "--no-locale", "-E", "UTF8", "--no-sync")
        if proc.returncode != 0:
            fail("initdb", proc)
        options = (f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 "
                   "-c fsync=off -c synchronous_commit=off -c full_page_writes=off")
        proc = self._run("pg_ctl", "-D", self.data, "-l", os.path.join(self.root, "server.log"),
                         "-w", "-t", "60", "-o", options, "start")
        if proc.returncode != 0:
            fail("pg_ctl start", proc)

    def stop(self) -> None:
        if os.path.exists(os.path.join(self.data, "postmaster.pid")):
            try:
                self._run("pg_ctl", "-D", self.data, "-m", "fast", "-w", "stop", timeout=60)
            except subprocess.TimeoutExpired:
                self._run("pg_ctl", "-D", self.data, "-m", "immediate", "stop", timeout=60)
        shutil.rmtree(self.root, ignore_errors=True)


# ---------------------------------------------------------------------- gRPC storage proxy
_GRPC_SERVER = """\
import sys

import optuna

optuna.logging.set_verbosity(optuna.logging.WARNING)
url, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
optuna.storages.run_grpc_proxy_server(optuna.storages.get_storage(url), host=host, port=port)
"""


class GrpcProxy:
    """Optuna's gRPC storage proxy (``run_grpc_proxy_server``) over the RDB ``url``, in a
    process of its own on a free localhost port; ``storage`` is its ``grpc://`` spec for
    :func:`open_storage` and the workers.

    Use as a context manager (``with GrpcProxy(url) as proxy:``): it starts the server and waits
    until it answers (up to ``timeout`` seconds; a port taken meanwhile: another port, up to 5
    tries), and stops it (SIGTERM, then SIGKILL) on exit. Needs ``grpcio`` and ``protobuf``.
    """

    def __init__(self, url: str, host: str = "127.0.0.1", timeout: float = 120.0) -> None:
        self.url, self.host, self.timeout = url, host, timeout
        self.port = 0
        self.proc: subprocess.Popen | None = None
        self._log = tempfile.TemporaryFile(mode="w+")

    @property
    def storage(self) -> str:
        return f"{GRPC_SCHEME}{self.host}:{self.port}"

    def __enter__(self) -> GrpcProxy:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        deadline = time.perf_counter() + self.timeout
        for _ in range(5):
            self.port = free_port()
            self.proc = subprocess.Popen(
                [sys.executable, "-c", _GRPC_SERVER, self.url, self.host, str(self.port)],
                stdout=self._log, stderr=self._log, env=worker_env(), cwd=str(REPO_ROOT))
            client = optuna.storages.GrpcStorageProxy(host=self.host, port=self.port)
            try:
                while self.proc.poll() is None and time.perf_counter() < deadline:
                    try:
                        client.wait_server_ready(timeout=1.0)
                        return
                    except ConnectionError:
                        pass
            finally:
                client.close()
            if self.proc.poll() is None:  # still starting at the deadline
                break
            # exited: most likely the port was taken between free_port() and the bind
        self._log.seek(0)
        raise RuntimeError(f"the gRPC proxy server did not start on {self.host} in "
                           f"{self.timeout:.0f} s: {self._log.read()[-3000:]}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()


if __name__ == "__main__":
    main()
