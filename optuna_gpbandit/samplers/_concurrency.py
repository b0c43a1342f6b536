"""Concurrent workers: did another trial take the point we just chose?"""

from __future__ import annotations

import numpy as np
from optuna.study import Study
from optuna.trial import TrialState

from optuna_gpbandit._history import History, pending_point
from optuna_gpbandit._maximize import near_any
from optuna_gpbandit._space import EncodedSpace

MAX_ROUNDS = 3  # choices per call when a concurrent worker took the same point


def taken_meanwhile(
    study: Study, space: EncodedSpace, history: History, x: np.ndarray, stamp: float
) -> bool:
    """Did another trial store (nearly) ``x`` before us, with a point we did not use?

    Every writer checks after writing; the stamps are taken after the points are in storage, so
    of two trials with the same point the one with the later stamp sees the other's point and
    yields (a trial with no stamp yet counts as earlier; at worst both yield). "Did not use": the
    trial was not finished at our read, and its point is not the one our design held for it
    (unknown then, or chosen again since).
    """
    finished = {t.number for t in history.all_trials if t.state.is_finished()}
    used = {p.trial.number: p.params for p in history.pending}
    me = history.current.number
    for t in study._get_trials(deepcopy=False, use_cache=False):
        if t.number == me or t.number in finished or t.state == TrialState.FAIL:
            continue
        found = pending_point(t, space.search_space, space.conditional)
        if found is None:
            continue
        params, their_stamp = found
        if used.get(t.number) == params or (their_stamp, t.number) > (stamp, me):
            continue
        if near_any(space.encode(params)[None, :], x[None, :])[0]:
            return True
    return False
