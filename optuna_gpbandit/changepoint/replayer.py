"""Deterministic replay of a trial history (spec 9.3): change points and current segment."""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Hashable, Sequence, cast

import numpy as np

from optuna_gpbandit._arguments import check_instance
from optuna_gpbandit.changepoint._checks import _check_int
from optuna_gpbandit.changepoint.detector import Detection, normalisation, scan
from optuna_gpbandit.changepoint.segment import Segment
from optuna_gpbandit.changepoint.sequential import (Prediction, ResidualState,
                                                    ResidualTest)
from optuna_gpbandit.changepoint.settings import CPDSettings
from optuna_gpbandit.changepoint.statistic import Domain, _unit_domain
from optuna_gpbandit._threads import PicklableLock


@dataclass(frozen=True, eq=False)
class TrialRecord:
    """One observed trial, as the replay sees it.

    Attributes
    ----------
    number
        Trial number (unique, ``>= 0``).
    uniform
        Whether the trial was a uniform-exploration trial (its stored role; never recomputed).
    x
        Encoded input, shape ``(d,)``.
    y
        Target oriented for maximisation (``-value`` for ``minimize``). Non-finite targets make
        the record unobserved: the replay skips it.
    prediction
        The sampler's prediction of ``y`` when the trial was asked (residual test only).
    """

    number: int
    uniform: bool
    x: np.ndarray
    y: float
    prediction: Prediction | None = None

    def __post_init__(self) -> None:
        _check_int("TrialRecord.number", self.number)
        x = np.asarray(self.x, dtype=float)
        if x.ndim != 1 or x.size == 0 or not np.all(np.isfinite(x)):
            raise ValueError(f"TrialRecord {self.number}: x must be a finite non-empty 1-D array.")
        try:
            y = float(self.y)
        except (TypeError, ValueError):
            raise ValueError(
                f"TrialRecord {self.number}: y must be a number, got {self.y!r}."
            ) from None
        object.__setattr__(self, "number", int(self.number))
        object.__setattr__(self, "uniform", bool(self.uniform))
        object.__setattr__(self, "x", x)
        object.__setattr__(self, "y", y)


class ReplayState:
    """Algorithm 2's bookkeeping, fed one observed trial at a time in trial-number order.

    The result after pushing records ``r_1 .. r_k`` depends on those records only, so pushing a
    prefix gives the prefix's segment and :func:`replay` (a fresh state fed every record) equals
    any incremental use.

    Not thread-safe (use :class:`Replayer` from several threads).

    Parameters
    ----------
    settings
        Detector settings (``None``: defaults).
    domain
        Integration points; ``None``: :meth:`Domain.unit_cube` of the first record's dimension.
    """

    def __init__(self, settings: CPDSettings | None = None, domain: Domain | None = None) -> None:
        if settings is not None:
            check_instance("settings", settings, CPDSettings, "a CPDSettings or None")
        if domain is not None and not isinstance(domain, Domain):
            raise ValueError(f"domain must be a Domain or None, got {domain!r}.")
        self.settings = CPDSettings() if settings is None else settings
        self.domain = domain
        self.start = 0
        self.change_points: list[int] = []
        self.last_detection: Detection | None = None
        self.last_number = -1
        self._U_x: list[np.ndarray] = []
        self._U_y: list[float] = []
        self._U_numbers: list[int] = []
        self._history: list[int] = []
        self._all_uniform_y: list[float] = []

    def push(self, record: TrialRecord) -> int | None:
        """Process the next observed trial; return the new segment start if its scan fired.

        Raises
        ------
        ValueError
            If ``record.number`` is not above every number pushed before, or its dimension does
            not match.
        """
        if not isinstance(record, TrialRecord):
            raise ValueError(f"push expects a TrialRecord, got {record!r}.")
        if record.number <= self.last_number:
            raise ValueError(
                "Records must be pushed in increasing trial number "
                f"({record.number} after {self.last_number})."
            )
        if self.domain is None:
            self.domain = _unit_domain(record.x.shape[0])
        if record.x.shape[0] != self.domain.d:
            raise ValueError(
                f"Trial {record.number}: x has {record.x.shape[0]} dimensions, "
                f"the domain {self.domain.d}."
            )
        self.last_number = record.number
        if not math.isfinite(record.y):
            return None
        self._history.append(record.number)
        if not record.uniform:
            return None
        self._U_x.append(record.x)
        self._U_y.append(record.y)
        self._U_numbers.append(record.number)
        self._all_uniform_y.append(record.y)
        if len(self._U_y) < 2 or self.settings.never_fires:
            return None
        y_u = np.asarray(self._U_y)
        a, s = normalisation(y_u, self._all_uniform_y) if self.settings.standardize else (0.0, 1.0)
        det = scan(np.vstack(self._U_x), y_u, self.settings, self.domain, shift=a, scale=s)
        if det is None:
            return None
        self.change_points.append(record.number)
        self.last_detection = det
        self.start = record.number + 1
        self._U_x, self._U_y, self._U_numbers, self._history = [], [], [], []
        return self.start

    def segment(self) -> Segment:
        """Snapshot of the current state."""
        return Segment(
            self.start,
            tuple(self.change_points),
            tuple(self._U_numbers),
            tuple(self._history),
            self.last_detection,
        )

    def copy(self) -> ReplayState:
        new = ReplayState.__new__(ReplayState)
        new.__dict__.update(self.__dict__)
        for name in ("change_points", "_U_x", "_U_y", "_U_numbers", "_history", "_all_uniform_y"):
            setattr(new, name, list(getattr(self, name)))
        return new


def new_state(settings: CPDSettings | ResidualTest | None = None,
              domain: Domain | None = None) -> ReplayState | ResidualState:
    """A fresh replay state of the detector ``settings`` name: :class:`ResidualTest` (the
    residual CUSUM) or :class:`CPDSettings` (Avanesov's test; also for ``None``)."""
    if settings is not None and settings.tests_predictions:
        return ResidualState(cast(ResidualTest, settings), domain)
    return ReplayState(cast(CPDSettings | None, settings), domain)


def _sorted_records(records: Sequence[TrialRecord]) -> list[TrialRecord]:
    recs = list(records)
    for r in recs:
        if not isinstance(r, TrialRecord):
            raise ValueError(f"replay expects TrialRecord items, got {r!r}.")
    recs.sort(key=lambda r: r.number)
    for a, b in zip(recs, recs[1:]):
        if a.number == b.number:
            raise ValueError(f"Duplicate trial number {a.number} in the records.")
    return recs


def replay(
    records: Sequence[TrialRecord],
    settings: CPDSettings | ResidualTest | None = None,
    domain: Domain | None = None,
) -> Segment:
    """Replay a whole history and return its change points and current segment (spec 9.3).

    Records are sorted by trial number (the result does not depend on their order); records
    with a non-finite target are skipped. Pass observed (COMPLETE) trials only. An exploration
    trial that fired ends the segment: it and every earlier trial are forgotten, and the next
    segment starts at its number + 1.

    Parameters
    ----------
    records
        Observed trials (any order, unique numbers).
    settings, domain
        As in :class:`ReplayState`.

    Returns
    -------
    Segment
    """
    state = new_state(settings, domain)
    for r in _sorted_records(records):
        state.push(r)
    return state.segment()


class Replayer(PicklableLock):
    """:func:`replay` with a cache that extends the last replay incrementally.

    When the records of a call (sorted by number) begin with exactly the records processed
    before (same numbers, roles, inputs and targets, bit for bit), only the new ones are pushed
    -- the sequential case costs one scan per new exploration trial. Otherwise (a trial with a
    lower number finished late, a prefix, different data) the replay restarts from scratch. The
    result is always that of :func:`replay` on the same records. Thread-safe; one cache entry
    per ``key`` (e.g. a study id), the ``max_entries`` most recently used are kept.
    """

    def __init__(
        self,
        settings: CPDSettings | ResidualTest | None = None,
        domain: Domain | None = None,
        max_entries: int = 8,
    ) -> None:
        self.settings = CPDSettings() if settings is None else settings
        check_instance("settings", self.settings, (CPDSettings, ResidualTest),
                       "a ResidualTest, a CPDSettings or None")
        self.domain = domain
        self.max_entries = _check_int("max_entries", max_entries, 1)
        # key -> (numbers, roles, targets, inputs, predictions, state) of the records processed
        # last
        self._cache: OrderedDict[Hashable, tuple[Any, ...]] = OrderedDict()
        self._lock = threading.Lock()
        self.n_full = 0  # diagnostics: full replays
        self.n_incremental = 0  # diagnostics: incremental extensions

    def replay(self, records: Sequence[TrialRecord], key: Hashable = None) -> Segment:
        """Same result as ``replay(records, settings, domain)``."""
        recs = _sorted_records(records)
        numbers = np.array([r.number for r in recs], dtype=np.int64)
        uniform = np.array([r.uniform for r in recs], dtype=bool)
        ys = np.array([r.y for r in recs], dtype=float)
        xs = [r.x for r in recs]
        preds = [r.prediction for r in recs]
        with self._lock:
            entry = self._cache.get(key)
            k0 = 0
            state = None
            if entry is not None:
                c_num, c_uni, c_y, c_x, c_pred, c_state = entry
                p = c_num.shape[0]
                if (
                    p <= numbers.shape[0]
                    and np.array_equal(numbers[:p], c_num)
                    and np.array_equal(uniform[:p], c_uni)
                    and ys[:p].tobytes() == c_y.tobytes()
                    and all(
                        a.shape == b.shape and a.tobytes() == b.tobytes()
                        for a, b in zip(xs[:p], c_x)
                    )
                    and preds[:p] == c_pred
                ):
                    state, k0 = c_state.copy(), p
            if state is None:
                state = new_state(self.settings, self.domain)
                self.n_full += 1
            else:
                self.n_incremental += 1
            for r in recs[k0:]:
                state.push(r)
            self._cache[key] = (numbers, uniform, ys, list(xs), preds, state)
            self._cache.move_to_end(key)
            while len(self._cache) > self.max_entries:
                self._cache.popitem(last=False)
            return state.segment()

    def clear(self) -> None:
        with self._lock:
            self._cache.clear()
