"""``python -m benchmarks.bayesmark``: Bayesmark's problems as a suite (README.md)."""

import sys

if __name__ == "__main__":
    # One BLAS / OpenMP thread unless --threads says otherwise, set before numpy loads.
    from benchmarks._common import limit_threads, threads_from_argv

    limit_threads(threads_from_argv(sys.argv))

    from benchmarks.bayesmark.run import main

    sys.exit(main())
