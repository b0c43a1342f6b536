"""Command line of the benchmark harness.

    python -m benchmarks run --suite quick [--jobs 2] [--out DIR] [--resume]
    python -m benchmarks run --suite smoke
    python -m benchmarks run --suite grid --jobs 2
    python -m benchmarks run --problems branin mixed --samplers GP-UCB TPE --seeds 3 --trials 40
    python -m benchmarks report DIR
    python -m benchmarks list

Suites: ``quick`` = every problem but the grids x every sampler, 10 seeds x 100 trials (the
issue's quality targets are judged on it); ``grid`` = the three enumerable grids (every
parameter an int or a categorical, at most 512 points) x every sampler, 20 seeds x 40 trials;
``smoke`` = branin and mixed, 2 seeds x 15 trials (< 1 min).
``--problems / --samplers / --seeds / --trials`` override the suite.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

from .problems import GRIDS, PROBLEMS
from .runner import CONFIG_FILE, RUNS_FILE, limit_threads, make_tasks, read_jsonl, run_tasks
from .samplers import SAMPLERS, unknown_samplers

SUITES = {
    "quick": {"problems": [p for p in PROBLEMS if p not in GRIDS], "samplers": list(SAMPLERS),
              "seeds": 10, "trials": 100},
    "grid": {"problems": list(GRIDS), "samplers": list(SAMPLERS), "seeds": 20, "trials": 40},
    "smoke": {"problems": ["branin", "mixed"], "samplers": list(SAMPLERS), "seeds": 2,
              "trials": 15},
}
RESULTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "results")


def _versions() -> dict:
    """Installed versions, read from the package metadata (importing torch takes seconds)."""
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for dist in ("optuna", "optuna_gpbandit", "numpy", "scipy", "scikit-learn", "torch",
                 "greenlet"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = None
    return out


def _check(names: list[str], known: dict, what: str) -> list[str]:
    bad = [n for n in names if n not in known]
    if bad:
        raise SystemExit(f"unknown {what}: {', '.join(bad)}; known: {', '.join(known)}")
    return names


def _check_samplers(names: list[str]) -> list[str]:
    """``names`` if each is a known sampler or a valid variant (:mod:`.samplers`)."""
    bad = unknown_samplers(names)
    if bad:
        raise SystemExit(f"unknown sampler(s): {'; '.join(bad)}; known: {', '.join(SAMPLERS)}, "
                         "or a variant of one of ours such as 'GP-TS{\"width\": {\"B\": 0.7}}'")
    return names


def cmd_run(args: argparse.Namespace) -> int:
    explicit = any(v is not None for v in (args.suite, args.problems, args.samplers, args.seeds,
                                           args.trials))
    stored = None
    if args.resume:
        if not args.out:
            raise SystemExit("--resume needs --out DIR (the directory of the run to continue)")
        cfg_path = os.path.join(args.out, CONFIG_FILE)
        if os.path.exists(cfg_path):
            stored = json.load(open(cfg_path))
    if stored is not None and not explicit:
        suite = stored["suite"]
        problems, samplers = stored["problems"], stored["samplers"]
        seeds, trials = stored["seeds"], stored["n_trials"]
    else:
        suite = args.suite or "quick"
        base = SUITES[suite]
        problems = _check(args.problems or base["problems"], PROBLEMS, "problem(s)")
        samplers = _check_samplers(args.samplers or base["samplers"])
        seeds = list(range(args.first_seed, args.first_seed + (args.seeds or base["seeds"])))
        trials = args.trials or base["trials"]
        if args.suite is None and stored is None and (args.problems or args.samplers
                                                      or args.seeds or args.trials):
            suite = "custom"
    out = args.out or os.path.join(RESULTS, f"{suite}-{time.strftime('%Y%m%d-%H%M%S')}")
    n_previous = len(read_jsonl(os.path.join(out, RUNS_FILE)))
    if n_previous and not args.resume:  # checked before config.json is touched
        raise SystemExit(f"{out} already holds {n_previous} finished runs: pass --resume to "
                         "continue it, or choose another --out")
    os.makedirs(out, exist_ok=True)
    config = {
        "suite": suite, "problems": problems, "samplers": samplers, "seeds": seeds,
        "n_trials": trials, "jobs": args.jobs, "threads": args.threads,
        "cpus": os.cpu_count(), "created": (stored or {}).get("created")
        or time.strftime("%Y-%m-%dT%H:%M:%S"), "versions": _versions(),
        "command": " ".join(["python -m benchmarks"] + sys.argv[1:]),
    }
    if stored is not None:
        config["resumed"] = stored.get("resumed", []) + [time.strftime("%Y-%m-%dT%H:%M:%S")]
    with open(os.path.join(out, CONFIG_FILE), "w") as fh:
        json.dump(config, fh, indent=1)
    print(f"results: {out}", file=sys.stderr, flush=True)
    tasks = make_tasks(problems, samplers, seeds, trials)
    _, failed = run_tasks(tasks, out, jobs=args.jobs, threads=args.threads, resume=args.resume)
    if not args.no_report:
        from .report import render

        print(render(out, plots=not args.no_plots))
        print(f"report: {os.path.join(out, 'report.md')}", file=sys.stderr)
    return 1 if failed else 0


def cmd_report(args: argparse.Namespace) -> int:
    from .report import render

    print(render(args.dir, plots=not args.no_plots))
    print(f"report: {os.path.join(args.dir, 'report.md')}", file=sys.stderr)
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    print("problems:")
    for p in PROBLEMS.values():
        opt = "unknown (best over all runs)" if p.minimum is None else f"{p.minimum:.10g}"
        print(f"  {p.name:12s} {p.description}; minimum {opt}")
    print("samplers: " + ", ".join(SAMPLERS))
    for name, s in SUITES.items():
        print(f"suite {name}: {len(s['problems'])} problems x {len(s['samplers'])} samplers x "
              f"{s['seeds']} seeds x {s['trials']} trials")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks",
                                 description="Benchmark harness: our samplers vs GPSampler, TPE "
                                 "and random search (benchmarks/README.md).")
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run a suite (one JSON line per finished run)")
    r.add_argument("--suite", choices=list(SUITES), default=None,
                   help="quick (default): all problems, 10 seeds x 100 trials; smoke: 2 problems, "
                   "2 seeds x 15 trials")
    r.add_argument("--problems", nargs="+", default=None, metavar="NAME")
    r.add_argument("--samplers", nargs="+", default=None, metavar="NAME")
    r.add_argument("--seeds", type=int, default=None, help="number of seeds")
    r.add_argument("--first-seed", type=int, default=0)
    r.add_argument("--trials", type=int, default=None)
    r.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    r.add_argument("--threads", type=int, default=1,
                   help="OMP/OPENBLAS/MKL threads per run (default 1)")
    r.add_argument("--out", default=None,
                   help="result directory (default benchmarks/results/<suite>-<timestamp>)")
    r.add_argument("--resume", action="store_true",
                   help="skip the runs already in --out; without suite options, rerun the "
                   "stored configuration")
    r.add_argument("--no-report", action="store_true")
    r.add_argument("--no-plots", action="store_true")
    r.set_defaults(func=cmd_run)
    p = sub.add_parser("report", help="render report.md (and PNG plots) of a result directory")
    p.add_argument("dir")
    p.add_argument("--no-plots", action="store_true")
    p.set_defaults(func=cmd_report)
    sub.add_parser("list", help="problems, samplers, suites").set_defaults(func=cmd_list)
    args = ap.parse_args(argv)
    if args.cmd == "run":
        limit_threads(args.threads)
    return args.func(args)
