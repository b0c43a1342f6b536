"""Helpers shared by the stand-alone benchmark scripts (``python benchmarks/bench_*.py``).

Imports nothing heavy: :func:`limit_threads` must run before numpy / scipy / torch load.
"""

from __future__ import annotations

import logging
import os
import re
from collections import Counter

THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def threads_from_argv(argv: list[str], default: str = "1") -> str:
    """The value of ``--threads N`` / ``--threads=N`` in ``argv`` (``default`` if absent)."""
    for i, arg in enumerate(argv):
        if arg == "--threads" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--threads="):
            return arg.split("=", 1)[1]
    return default


def limit_threads(threads: str, override: bool = True) -> None:
    """Size the BLAS / OpenMP thread pools (call before numpy / torch are imported).

    Runs are sequential and small, so extra threads only compete for the cores. ``override``:
    replace values already in the environment.
    """
    if threads.isdigit() and int(threads) > 0:
        for var in THREAD_VARS:
            if override:
                os.environ[var] = threads
            else:
                os.environ.setdefault(var, threads)


class LogCounter(logging.Handler):
    """Counts warnings logged by Optuna and by our samplers (numbers in messages removed)."""

    def __init__(self, number_pattern: str = r"[0-9.e+-]+") -> None:
        super().__init__(logging.WARNING)
        self.messages: Counter[str] = Counter()
        self._numbers = re.compile(number_pattern)

    def emit(self, record: logging.LogRecord) -> None:
        self.messages[f"{record.name}: {self._numbers.sub('N', record.getMessage())}"] += 1

    def install(self) -> None:
        """Route the warnings of ``optuna`` and ``optuna_gpbandit`` here (and nowhere else)."""
        import optuna

        optuna.logging.disable_default_handler()
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        for name in ("optuna", "optuna_gpbandit"):
            lg = logging.getLogger(name)
            lg.addHandler(self)
            lg.setLevel(logging.WARNING)
            lg.propagate = False


def median_rows(method: str, runs: list[dict], seconds: float, header: bool) -> list[str]:
    """Markdown rows: ``median [min, max]`` over ``runs`` of each key of the first run (and the
    table header first if ``header``), with ``seconds`` in the last column."""
    import numpy as np  # here: limit_threads must run before numpy loads

    keys = list(runs[0])
    rows = []
    if header:
        rows.append("| method | " + " | ".join(f"{k} median [min, max]" for k in keys)
                    + " | s |")
        rows.append("|---|" + "---:|" * (len(keys) + 1))
    cells = []
    for k in keys:
        v = np.array([r[k] for r in runs], dtype=float)
        cells.append(f"{np.median(v):.3g} [{v.min():.3g}, {v.max():.3g}]")
    rows.append(f"| {method} | " + " | ".join(cells) + f" | {seconds:.0f} |")
    return rows
