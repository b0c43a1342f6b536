"""``python -m benchmarks``: the benchmark harness (benchmarks/harness/cli.py)."""

import sys

if __name__ == "__main__":
    # One BLAS / OpenMP thread unless --threads says otherwise: set before numpy, scipy and torch
    # load (spawned workers inherit the environment); the harness applies --threads again.
    from benchmarks._common import limit_threads, threads_from_argv

    limit_threads(threads_from_argv(sys.argv))

    from benchmarks.harness.cli import main

    sys.exit(main())
