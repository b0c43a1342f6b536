"""JSON values in trial system attrs, chunked to fit RDB storages (2045 characters a value)."""

from __future__ import annotations

import json
from typing import Any

from optuna.study import Study
from optuna.trial import FrozenTrial

PREFIX = "gpbandit:"
_MAX_LEN = 2045


def write_trial_json(study: Study, trial: FrozenTrial, key: str, value: Any, rewrite: bool = False) -> None:
    """Store ``value`` as JSON under ``PREFIX + key`` (``:0``, ``:1``, ... chunks).

    ``rewrite=True`` when the key may already hold a longer value: an empty chunk after the last
    one ends the value for readers.
    """
    text = json.dumps(value)
    n_chunks = 0
    for i in range(0, max(len(text), 1), _MAX_LEN):
        study._storage.set_trial_system_attr(
            trial._trial_id, f"{PREFIX}{key}:{i // _MAX_LEN}", text[i : i + _MAX_LEN]
        )
        n_chunks += 1
    if rewrite:
        study._storage.set_trial_system_attr(trial._trial_id, f"{PREFIX}{key}:{n_chunks}", "")


def read_trial_json(trial: FrozenTrial, key: str) -> Any | None:
    """The JSON value stored by :func:`write_trial_json`, or ``None``."""
    attrs = trial.system_attrs
    parts = []
    i = 0
    while part := attrs.get(f"{PREFIX}{key}:{i}"):
        parts.append(part)
        i += 1
    if not parts:
        return None
    try:
        return json.loads("".join(parts))
    except json.JSONDecodeError:
        return None
