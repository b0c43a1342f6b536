#!/usr/bin/env python
"""Import time of ``optuna_gpbandit`` next to ``import optuna``, each in a fresh interpreter.

Each of ``--repeats`` rounds starts one Python process per statement and times the import inside
it with ``time.perf_counter`` (interpreter start-up excluded); the best and the median of the
rounds are printed, and the ratio of the bests. Byte-code caching is switched on for the child
processes (``PYTHONDONTWRITEBYTECODE`` removed), as on a user's machine, and one warm-up round
writes the caches first. ``python benchmarks/bench_import_time.py [--repeats N]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

STATEMENTS = {
    "import optuna": "import optuna",
    "import optuna_gpbandit": "import optuna_gpbandit",
    "from optuna_gpbandit import GPUCBSampler": "from optuna_gpbandit import GPUCBSampler",
}


def time_import(statement: str, env: dict[str, str]) -> float:
    code = ("import time; t = time.perf_counter(); " + statement
            + "; print(time.perf_counter() - t)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, check=True)
    return float(out.stdout.strip())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="rounds (default 5)")
    args = parser.parse_args(argv)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    for statement in STATEMENTS.values():  # warm-up: byte-code caches written
        time_import(statement, env)
    times = {label: [] for label in STATEMENTS}
    for _ in range(args.repeats):
        for label, statement in STATEMENTS.items():
            times[label].append(time_import(statement, env))
    base = min(times["import optuna"])
    print(f"{'statement':<42} {'best s':>7} {'median s':>9} {'best / optuna':>14}")
    for label, ts in times.items():
        print(f"{label:<42} {min(ts):7.3f} {statistics.median(ts):9.3f} {min(ts) / base:14.2f}")
    print(f"({os.cpu_count()} cores, Python {sys.version.split()[0]}, {args.repeats} rounds)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
