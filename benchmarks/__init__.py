"""Benchmarks of optuna_gpbandit (``python -m benchmarks --help``; see benchmarks/README.md).

The ``bench_*.py`` scripts and ``papers/`` run as plain scripts; this package only serves the
harness (``benchmarks/harness/``), run as ``python -m benchmarks run --suite quick``. It must
import nothing heavy: ``__main__`` limits the BLAS / OpenMP threads before numpy loads.
"""
