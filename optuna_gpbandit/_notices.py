"""The package's log: shown like Optuna's own messages, and once per study where it would repeat.

Samplers are stateless, but a message such as "12 failed trials are left out of the model" would
repeat at every trial; :func:`log_once` keeps one per ``(storage, study, key)`` (counts included
by the caller). One key per kind of notice: a user reads at most one line of each kind per
study at INFO or above, and only what they can act on; the package's bookkeeping (how many
pending rows, ties, polishing) is at DEBUG. Nothing here affects the points sampled.

Messages of the ``optuna_gpbandit`` loggers reach Optuna's handler and obey Optuna's verbosity
(``optuna.logging.set_verbosity``), so an INFO notice shows by default as Optuna's INFO lines do.
An application that configures logging itself (handlers on the root logger) gets them through
the usual propagation instead.
"""

from __future__ import annotations

import logging
import threading
import weakref

from optuna.logging import get_logger
from optuna.study import Study

_logger = get_logger("optuna_gpbandit")
# Keys logged, per live storage object. Not keyed by id(storage): a new study's storage can get
# the address of a freed one, and its notices were then taken as said already.
# Keys: (study id, key), and (id(storage), study id, key) for storages that take no weak reference.
_seen: "weakref.WeakKeyDictionary[object, set[tuple[object, ...]]]" = weakref.WeakKeyDictionary()
_seen_by_id: set[tuple[object, ...]] = set()  # storages that take no weak reference
_lock = threading.Lock()


class _ToOptuna(logging.Handler):
    """Hand a record to Optuna's logger when the application has not configured logging."""

    def emit(self, record: logging.LogRecord) -> None:
        if logging.getLogger().handlers:  # the root logger handles it (propagation)
            return
        target = logging.getLogger("optuna")
        if target.isEnabledFor(record.levelno):
            target.handle(record)


def configure_logging() -> None:
    """Attach :class:`_ToOptuna` to the package logger once (level INFO unless set)."""
    if not any(isinstance(h, _ToOptuna) for h in _logger.handlers):
        _logger.addHandler(_ToOptuna())
        if _logger.level == logging.NOTSET:
            _logger.setLevel(logging.INFO)


def log_once(study: Study, key: str, level: int, msg: str, *args: object) -> bool:
    """Log ``msg % args`` at ``level`` unless ``key`` was logged for ``study`` already.

    Returns whether it was logged.
    """
    storage = study._storage
    ident: tuple[object, ...] = (study._study_id, key)
    with _lock:
        try:
            seen = _seen.setdefault(storage, set())
        except TypeError:  # no weak reference to this storage
            seen, ident = _seen_by_id, (id(storage), *ident)
        if ident in seen:
            return False
        seen.add(ident)
    _logger.log(level, msg, *args)
    return True


WARNING, INFO, DEBUG = logging.WARNING, logging.INFO, logging.DEBUG
