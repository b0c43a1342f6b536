"""The storage schema: every attribute this package writes to or reads from an Optuna storage,
who writes it and who reads it.

One naming rule: every attribute of ours is named ``gpbandit:<what>``. A JSON value is stored
in chunks ``gpbandit:<what>:0``, ``:1``, ... (RDB storages limit a value to 2045 characters;
:func:`write_trial_json` / :func:`read_trial_json`); a plain value (a number, a string, a short
list) is stored under the name itself. Samplers keep no other state: a study resumed from any
storage, or shared by many workers, is rebuilt from these.

=====================  =====  =====  ==================================  ==========================
name                   on     kind   written by                          read by
=====================  =====  =====  ==================================  ==========================
``gpbandit:params``    trial  JSON   ``_history.write_sampled_params``   ``_history`` (points of
                                     (each suggestion)                   pending and failed trials)
``gpbandit:stamp``     trial  float  ``_history.write_sampled_params``   ``_history``,
                                     (time the point was stored)         ``samplers._concurrency``
``gpbandit:state``     trial  JSON   ``samplers._base`` (the step's      ``_fitted_gp.latest_state``
                                     record)                             (warm start),
                                                                         ``restarts``, ``report``
``gpbandit:finish``    trial  JSON   ``pending.record_finish``           ``pending.trial_delay``
                                     (``after_trial``)
``gpbandit:multipliers`` trial JSON  ``constraints.long_term``          users, ``report``
                                     (long-term constraints)             (diagnostics)
``gpbandit:role``      trial  str    ``changepoint.stage``               ``changepoint.stage``
                                     (``before_trial``)
``gpbandit:prediction`` trial list   ``changepoint.stage``               ``changepoint.stage``
                                     (``store_prediction``)              (residual test)
``gpbandit:change_points`` study list ``changepoint.stage``              users (informational)
``constraints``        trial  list   Optuna (``constraints_func``)       ``constraints.data``
``constraints:<name>`` trial  float  Optuna (``trial.set_constraint``)   ``constraints.data``
=====================  =====  =====  ==================================  ==========================
"""

from __future__ import annotations

import json
from typing import Any

from optuna.study import Study
from optuna.trial import FrozenTrial

PREFIX = "gpbandit:"
PARAMS = "gpbandit:params"
"""Trial, JSON: ``{"params": {name: internal value}}``, the relative sample of the trial."""
STAMP = "gpbandit:stamp"
"""Trial, float: ``time.time()`` after the point was stored (a reader whose stamp is later sees
the point)."""
STATE = "gpbandit:state"
"""Trial, JSON: the record of the step that chose the trial's point (``report.sampler_record``)."""
FINISH = "gpbandit:finish"
"""Trial, JSON int: the number of trials in the study when this one finished (its delay)."""
MULTIPLIERS = "gpbandit:multipliers"
"""Trial, JSON: the long-term constraints' multiplier state (``MultiplierState.to_json``)."""
ROLE = "gpbandit:role"
"""Trial, str: ``"uniform"`` (exploration), ``"model"`` or ``"external"`` (enqueued)."""
PREDICTION = "gpbandit:prediction"
"""Trial, list: ``[mean, sd, segment start, observations, spread]``, the model's prediction of
the trial's value when it was asked and the spread of the values it was fitted on (objective
units; read by the residual test)."""
CHANGE_POINTS = "gpbandit:change_points"
"""Study, list: the detected change points (informational; the replay is the truth)."""
OPTUNA_CONSTRAINTS = "constraints"
"""Optuna's trial attr of ``constraints_func`` values (a sequence, ``None`` if it raised)."""
OPTUNA_CONSTRAINT_PREFIX = "constraints:"
"""Prefix of Optuna's trial attrs written by ``trial.set_constraint(name, value)``."""
_MAX_LEN = 2045


def _check(name: str) -> str:
    if not name.startswith(PREFIX):
        raise ValueError(f"storage attribute names start with {PREFIX!r}, got {name!r}.")
    return name


def write_trial_json(study: Study, trial: FrozenTrial, name: str, value: Any,
                     rewrite: bool = False) -> None:
    """Store ``value`` as JSON under ``name`` (chunks ``name:0``, ``name:1``, ...).

    ``rewrite=True`` when the name may already hold a longer value: an empty chunk after the
    last one ends the value for readers.
    """
    _check(name)
    text = json.dumps(value)
    n_chunks = 0
    for i in range(0, max(len(text), 1), _MAX_LEN):
        study._storage.set_trial_system_attr(
            trial._trial_id, f"{name}:{i // _MAX_LEN}", text[i : i + _MAX_LEN]
        )
        n_chunks += 1
    if rewrite:
        study._storage.set_trial_system_attr(trial._trial_id, f"{name}:{n_chunks}", "")


def read_trial_json(trial: FrozenTrial, name: str) -> Any | None:
    """The JSON value stored by :func:`write_trial_json` under ``name``, or ``None``."""
    _check(name)
    attrs = trial.system_attrs
    parts = []
    i = 0
    while part := attrs.get(f"{name}:{i}"):
        parts.append(part)
        i += 1
    if not parts:
        return None
    try:
        return json.loads("".join(parts))
    except json.JSONDecodeError:
        return None
