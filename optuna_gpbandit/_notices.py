"""Log a message once per study and process (counts included by the caller).

Samplers are stateless, but a message such as "12 failed trials are left out of the model" would
repeat at every trial; this keeps one per ``(storage, study, key)``. Nothing here affects the
points sampled.
"""

from __future__ import annotations

import logging
import threading

from optuna.logging import get_logger
from optuna.study import Study

_logger = get_logger("optuna_gpbandit")
_seen: set[tuple[int, int, str]] = set()
_lock = threading.Lock()


def log_once(study: Study, key: str, level: int, msg: str, *args: object) -> bool:
    """Log ``msg % args`` at ``level`` unless ``key`` was logged for ``study`` already.

    Returns whether it was logged.
    """
    ident = (id(study._storage), study._study_id, key)
    with _lock:
        if ident in _seen:
            return False
        _seen.add(ident)
    _logger.log(level, msg, *args)
    return True


WARNING, INFO = logging.WARNING, logging.INFO
