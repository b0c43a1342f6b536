"""One BLAS thread while a sampler computes, restored exactly afterwards.

A suggestion makes many small BLAS calls, where threads only contend (with each other and with
other workers), so the samplers run them with one BLAS thread. threadpoolctl's ``limit`` saves
the limits it finds and restores them on exit; two threads of ``study.optimize(n_jobs=k)``
nesting such limits out of order would leave the pool at one thread for good (the second saves
the first's ``1``). Here the limit is reference-counted across threads: the first caller saves
the user's limits, the last one out restores them.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Iterator
from typing import Any

from threadpoolctl import ThreadpoolController

_lock = threading.Lock()
_depth = 0
_limiter: Any = None


@functools.lru_cache(maxsize=1)
def _controller() -> ThreadpoolController:
    """One controller per process (inspecting the loaded libraries at every call would cost
    time per suggestion; docs/benchmarks.md, "Thread limits").

    SciPy is imported on first use (not at package import), and its BLAS may be another library
    than NumPy's: it is loaded here first, so that the controller sees, and limits, the BLAS the
    GP computations run on from the first suggestion of a process on (else a fresh process's
    first suggestions ran multi-threaded, with other rounding than a resumed one's)."""
    import scipy.linalg  # noqa: F401 (loads its BLAS)

    return ThreadpoolController()


@contextlib.contextmanager
def single_threaded_blas() -> Iterator[None]:
    """Limit BLAS to one thread inside the block (nesting and threads are safe)."""
    global _depth, _limiter
    with _lock:
        if _depth == 0:
            _limiter = _controller().limit(limits=1, user_api="blas")
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                _limiter.restore_original_limits()
                _limiter = None


class PicklableLock:
    """Mixin: pickle / deepcopy an object without its ``_lock`` (a new one is made on load)."""

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()
