#!/usr/bin/env python
"""Time per suggestion of the optuna_gpbandit samplers next to Optuna's ``GPSampler``.

For each study size ``n`` an in-memory study is filled with ``n`` COMPLETE trials of a cheap
``--dim``-D objective (Ackley on [0, 1]^d, rescaled to [-2, 2]^d) at uniformly random points; the
same trials are used for every sampler. Each sampler then gets a fresh instance on a fresh copy
of that study, and ``k`` consecutive steps ``study.ask()`` + ``suggest_float`` x d +
``study.tell()`` are timed with ``time.perf_counter`` (the objective evaluation itself is not
timed). Reported per (n, sampler), averaged over ``--repeats`` runs with different sampler seeds:

* ``first``: the first step. The copied trials carry no stored sampler state, so our samplers fit
  the GP hyperparameters here; ``GPSampler`` has no cached kernel parameters yet.
* ``mean 2..k``: the later steps, where our samplers may reuse the stored hyperparameters (they
  refit when the data grew by ``GPModel(refit_growth=...)``, 5 %) and ``GPSampler`` warm-starts
  its fit from its in-memory cache.
* ``mean 1..k``: all steps.

and the ratio of each number to ``GPSampler``'s at the same ``n`` (``ours / GPSampler``).

Run ``python benchmarks/bench_suggest_time.py --help`` for the options; ``--quick`` is a smoke
run of well under a minute. ``GPSampler`` needs ``torch`` (``pip install -e ".[bench]"``).
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import os
import platform
import pstats
import statistics
import sys
import time
from dataclasses import dataclass, field

from _common import limit_threads, threads_from_argv

# ``--threads`` must act before numpy, scipy and torch load their thread pools: the libraries
# read these variables once, at load (threadpoolctl later would miss scipy.linalg's OpenBLAS,
# which is loaded lazily). No ``--threads``: the libraries' defaults.
if __name__ == "__main__":
    limit_threads(threads_from_argv(sys.argv[1:], default=""))

import numpy as np  # noqa: E402
import optuna  # noqa: E402
from optuna.distributions import FloatDistribution  # noqa: E402
from optuna.trial import FrozenTrial, create_trial  # noqa: E402

SAMPLER_LABELS = {
    "gpucb": "GPUCBSampler",
    "igpucb": "IGPUCBSampler",
    "gpts": "GPTSSampler",
    "gp": "optuna GPSampler",
}
REFERENCE = "gp"


def make_sampler(name: str, seed: int) -> optuna.samplers.BaseSampler:
    if name == "gp":
        return optuna.samplers.GPSampler(seed=seed)
    import optuna_gpbandit

    cls = {
        "gpucb": optuna_gpbandit.GPUCBSampler,
        "igpucb": optuna_gpbandit.IGPUCBSampler,
        "gpts": optuna_gpbandit.GPTSSampler,
    }[name]
    return cls(seed=seed)


def ackley(x: np.ndarray) -> float:
    """Ackley function on the unit cube (mapped to [-2, 2]^d); minimum 0 at the centre."""
    z = 4.0 * np.asarray(x, dtype=float) - 2.0
    d = z.size
    return float(
        -20.0 * np.exp(-0.2 * np.sqrt(np.sum(z * z) / d))
        - np.exp(np.sum(np.cos(2.0 * np.pi * z)) / d)
        + 20.0
        + np.e
    )


def make_trials(n: int, dim: int, seed: int) -> list[FrozenTrial]:
    """``n`` COMPLETE trials at uniformly random points of [0, 1]^dim."""
    rng = np.random.default_rng(seed)
    dists = {f"x{i}": FloatDistribution(0.0, 1.0) for i in range(dim)}
    X = rng.random((n, dim))
    return [
        create_trial(
            params={f"x{i}": float(v) for i, v in enumerate(x)},
            distributions=dists,
            value=ackley(x),
        )
        for x in X
    ]


@dataclass
class Result:
    first: list[float] = field(default_factory=list)  # one entry per repeat
    rest: list[float] = field(default_factory=list)  # mean of calls 2..k, per repeat
    all: list[float] = field(default_factory=list)  # mean of calls 1..k, per repeat
    cpu: list[float] = field(default_factory=list)  # mean process CPU time of calls 1..k


def time_steps(
    sampler: optuna.samplers.BaseSampler,
    trials: list[FrozenTrial],
    dim: int,
    k: int,
    profiler: cProfile.Profile | None = None,
) -> tuple[list[float], list[float]]:
    """Wall-clock and process-CPU seconds of each of ``k`` ask + suggest + tell steps on a fresh
    copy of ``trials``."""
    study = optuna.create_study(direction="minimize", sampler=sampler)
    study.add_trials(trials)
    names = [f"x{i}" for i in range(dim)]
    wall, cpu = [], []
    for _ in range(k):
        if profiler is not None:
            profiler.enable()
        c0, t0 = time.process_time(), time.perf_counter()
        trial = study.ask()
        x = np.array([trial.suggest_float(name, 0.0, 1.0) for name in names])
        t1, c1 = time.perf_counter(), time.process_time()
        if profiler is not None:
            profiler.disable()
        value = ackley(x)  # not timed
        if profiler is not None:
            profiler.enable()
        c2, t2 = time.process_time(), time.perf_counter()
        study.tell(trial, value)
        t3, c3 = time.perf_counter(), time.process_time()
        if profiler is not None:
            profiler.disable()
        wall.append((t1 - t0) + (t3 - t2))
        cpu.append((c1 - c0) + (c3 - c2))
    return wall, cpu


def calls_for(n: int, calls: int | None) -> int:
    if calls is not None:
        return calls
    return 10 if n <= 300 else 5


def fmt_s(v: float | None) -> str:
    if v is None or not np.isfinite(v):
        return "-"
    return f"{v:.3f}" if v >= 0.01 else f"{v * 1e3:.2f} ms"


def fmt_ratio(v: float | None) -> str:
    return "-" if v is None or not np.isfinite(v) else f"{v:.2f}x"


def mean(values: list[float]) -> float:
    return float(statistics.fmean(values)) if values else float("nan")


def environment_summary() -> str:
    parts = [
        f"python {platform.python_version()}",
        f"optuna {optuna.__version__}",
        f"numpy {np.__version__}",
    ]
    with contextlib.suppress(ImportError):
        import scipy

        parts.append(f"scipy {scipy.__version__}")
    with contextlib.suppress(ImportError):
        import torch

        parts.append(f"torch {torch.__version__}")
    try:
        import greenlet  # noqa: F401  (GPSampler batches its L-BFGS-B runs with it)

        parts.append("greenlet installed")
    except ImportError:
        parts.append("greenlet not installed")
    parts.append(f"{os.cpu_count()} CPUs")
    with contextlib.suppress(OSError, AttributeError):
        parts.append("load average %.2f %.2f %.2f" % os.getloadavg())
    threads = {k: os.environ[k] for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                          "MKL_NUM_THREADS") if k in os.environ}
    if threads:
        parts.append(", ".join(f"{k}={v}" for k, v in threads.items()))
    return "; ".join(parts)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", type=int, nargs="+", default=None,
                   help="numbers of existing COMPLETE trials (default: 100 300 1000; "
                        "--quick: 50 100)")
    p.add_argument("--dim", type=int, default=5, help="number of parameters (default: 5)")
    p.add_argument("--repeats", type=int, default=None,
                   help="runs per (n, sampler), with sampler seeds 0, 1, ... (default: 3; "
                        "--quick: 1)")
    p.add_argument("--calls", type=int, default=None,
                   help="timed steps per run (default: 10 for n <= 300, 5 above; --quick: 3)")
    p.add_argument("--samplers", nargs="+", default=list(SAMPLER_LABELS),
                   choices=list(SAMPLER_LABELS),
                   help="samplers to time (default: all); 'gp' is optuna.samplers.GPSampler, "
                        "the reference of the ratio column")
    p.add_argument("--data-seed", type=int, default=12345, help="seed of the trial data")
    p.add_argument("--quick", action="store_true",
                   help="smoke run: sizes 50 100, 1 repeat, 3 calls (unless given explicitly)")
    p.add_argument("--threads", type=int, default=None, metavar="N",
                   help="set OMP_NUM_THREADS, OPENBLAS_NUM_THREADS and MKL_NUM_THREADS to N "
                        "before numpy, scipy and torch load (default: leave the environment "
                        "alone, i.e. the libraries' defaults: one thread per core)")
    p.add_argument("--profile", type=int, default=0, metavar="N",
                   help="also print the N hottest functions (by cumulative and by own time) "
                        "of the timed steps of each sampler at each size (cProfile; inflates "
                        "the times)")
    args = p.parse_args(argv)
    if args.sizes is None:
        args.sizes = [50, 100] if args.quick else [100, 300, 1000]
    if args.repeats is None:
        args.repeats = 1 if args.quick else 3
    if args.calls is None and args.quick:
        args.calls = 3
    if args.threads is not None and args.threads < 1:
        p.error("--threads must be positive")
    if args.dim < 1 or args.repeats < 1 or (args.calls is not None and args.calls < 1):
        p.error("--dim, --repeats and --calls must be positive")
    if min(args.sizes) < 10:
        p.error("sizes must be >= 10 (GPSampler's default n_startup_trials)")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    if REFERENCE in args.samplers:
        try:
            import torch  # noqa: F401
        except ImportError:
            print("GPSampler needs torch: pip install -e \".[bench]\"", file=sys.stderr)
            return 1

    print(f"# Suggestion time, dim={args.dim}, repeats={args.repeats}"
          + ("" if args.threads is None else f", thread pools limited to {args.threads}"))
    print(f"# {environment_summary()}")
    print(f"# command: {' '.join([os.path.basename(sys.argv[0])] + sys.argv[1:])}")
    sys.stdout.flush()

    results: dict[tuple[int, str], Result] = {}
    profiles: list[tuple[str, str]] = []
    t_start = time.perf_counter()
    for n in args.sizes:
        trials = make_trials(n, args.dim, args.data_seed + n)
        k = calls_for(n, args.calls)
        profilers = {name: cProfile.Profile() if args.profile else None for name in args.samplers}
        # Repeats outermost, samplers interleaved: a change of machine load during the run
        # affects every sampler alike rather than one of them.
        for rep in range(args.repeats):
            for name in args.samplers:
                res = results.setdefault((n, name), Result())
                wall, cpu = time_steps(make_sampler(name, seed=rep), trials, args.dim, k,
                                       profilers[name])
                res.first.append(wall[0])
                if len(wall) > 1:
                    res.rest.append(mean(wall[1:]))
                res.all.append(mean(wall))
                res.cpu.append(mean(cpu))
                print(f"#   n={n:>5} rep={rep} {SAMPLER_LABELS[name]:<17} k={k:<3} "
                      f"steps: {' '.join(f'{t:.3f}' for t in wall)} s"
                      f"  [{time.perf_counter() - t_start:.0f} s elapsed]", file=sys.stderr)
        for name, profiler in profilers.items():
            if profiler is not None:
                for order in ("cumulative", "tottime"):
                    buf = io.StringIO()
                    pstats.Stats(profiler, stream=buf).sort_stats(order).print_stats(
                        args.profile)
                    profiles.append((f"n={n} {SAMPLER_LABELS[name]}, by {order}",
                                     buf.getvalue()))

    print()
    print("Wall-clock seconds per ask + suggest + tell step (mean over repeats); ratios are "
          "ours / GPSampler at the same n; 'CPU 1..k' is the process CPU time per step (all "
          "threads).")
    print()
    header = ["n", "sampler", "k", "first", "mean 2..k", "mean 1..k",
              "ratio first", "ratio 2..k", "ratio 1..k", "CPU 1..k"]
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---:" if h not in ("sampler",) else "---" for h in header) + "|")
    for n in args.sizes:
        ref = results.get((n, REFERENCE))
        for name in args.samplers:
            res = results[(n, name)]
            row = [str(n), SAMPLER_LABELS[name], str(calls_for(n, args.calls)),
                   fmt_s(mean(res.first)), fmt_s(mean(res.rest)), fmt_s(mean(res.all))]
            for attr in ("first", "rest", "all"):
                if ref is None or name == REFERENCE:
                    row.append("-")
                else:
                    row.append(fmt_ratio(mean(getattr(res, attr)) / mean(getattr(ref, attr))))
            row.append(fmt_s(mean(res.cpu)))
            print("| " + " | ".join(row) + " |")
    print()
    print(f"Total wall time: {time.perf_counter() - t_start:.1f} s")
    with contextlib.suppress(OSError, AttributeError):
        load = os.getloadavg()
        print("Load average at the end: %.2f %.2f %.2f" % load
              + (" (above the CPU count: other processes competed for the cores, so the times "
                 "are inflated and noisy)" if load[1] > (os.cpu_count() or 1) else ""))
    for title, text in profiles:
        print(f"\n## Profile: {title}\n")
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
