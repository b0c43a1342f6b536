"""``python -m benchmarks``: the benchmark harness (benchmarks/harness/cli.py)."""

import os
import sys

if __name__ == "__main__":
    # One BLAS / OpenMP thread unless --threads says otherwise: set before numpy, scipy and torch
    # load (spawned workers inherit the environment); the harness applies --threads again.
    threads = "1"
    for i, a in enumerate(sys.argv):
        if a == "--threads" and i + 1 < len(sys.argv):
            threads = sys.argv[i + 1]
        elif a.startswith("--threads="):
            threads = a.split("=", 1)[1]
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = threads

    from benchmarks.harness.cli import main

    sys.exit(main())
