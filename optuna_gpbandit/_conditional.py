"""Conditional (define-by-run) search spaces: the union of the parameters trials used, and their
branches.

An objective that branches (``classifier = suggest_categorical(...)``, then that classifier's
parameters) gives trials different sets of parameters. The model sees all of them:

* the relative search space is the *union* of the parameters of the COMPLETE trials
  (:func:`union_search_space`; a parameter whose distribution differs between trials is left
  out, as from Optuna's intersection). A study whose trials all use the same parameters gets
  exactly the intersection, and a plain :class:`~optuna_gpbandit._space.EncodedSpace`;
* a *branch* is a set of parameters some COMPLETE trial used together (:func:`find_branches`).
  A parameter a trial did not use is *inactive* there and encoded as a value no active one
  takes (:data:`INACTIVE_NUMERIC` for numeric columns, :data:`INACTIVE_CATEGORY` for
  categorical ones, a category of its own in the kernel's Hamming term): two trials of one
  branch differ only in the parameters they share, and the GP learns across branches through
  the shared ones (e.g. a learning rate every branch asks);
* a *selector* is a discrete parameter whose values pick the branch: in every two branches that
  use it, it took the same values or disjoint ones (``classifier`` in a pipeline; ``n_layers``
  before per-layer sizes; ``kernel`` nested under ``classifier="svc"``). In a branch, a
  selector may take the values seen in that branch and values never seen yet;
* :class:`ConditionalSpace` keeps every point it makes inside one branch: quasi-random
  candidates take the branch their selector values pick, inactive columns stay at their code,
  and the maximiser's local search moves only the columns of the point's branch
  (:meth:`ConditionalSpace.movable`, :meth:`ConditionalSpace.admissible_values`). So the
  acquisition chooses the branch and the values of its parameters jointly, and a sampled point
  names only the parameters of its branch; Optuna gives the objective those it asks for.

Not modelled: a branch no COMPLETE trial took yet (its parameters are sampled by the
independent sampler, which says so), and conditions on continuous parameters (``if lr > 0.1:
suggest ...``): such a parameter is active in the branches where it was seen, whatever ``lr``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
from optuna.distributions import BaseDistribution
from optuna.trial import FrozenTrial

from optuna_gpbandit._space import EncodedSpace

INACTIVE_NUMERIC = -0.5
"""Code of an inactive numeric column (valid values are in ``[0, 1]``)."""
INACTIVE_CATEGORY = -1.0
"""Code of an inactive categorical column (valid values are the choice indices ``0 .. n-1``)."""
_ACTIVE_ABOVE = -0.25  # encoded values above this are active ones


def is_active(values: np.ndarray) -> np.ndarray:
    """Mask of encoded ``values`` that are a parameter's value, not a branch's inactive code
    (:data:`INACTIVE_NUMERIC`, :data:`INACTIVE_CATEGORY`)."""
    return np.asarray(values) > _ACTIVE_ABOVE


def union_search_space(trials: Sequence[FrozenTrial]) -> dict[str, BaseDistribution]:
    """Every parameter of the given (COMPLETE) trials whose distribution is the same in all of
    them and not single-valued, sorted by name (as Optuna's intersection search space)."""
    seen: dict[str, BaseDistribution] = {}
    conflicting: set[str] = set()
    for t in trials:
        for name, dist in t.distributions.items():
            if name in conflicting:
                continue
            known = seen.setdefault(name, dist)
            if known != dist:
                conflicting.add(name)
    return {n: seen[n] for n in sorted(seen) if n not in conflicting and not seen[n].single()}


@dataclass(frozen=True)
class Branch:
    """Parameters used together, and the values their selectors may take there."""

    names: frozenset[str]
    active: np.ndarray  # (d,) bool: the columns of ``names``
    allowed: dict[int, np.ndarray]  # selector column -> its allowed encoded values (sorted)


def find_branches(trials: Sequence[FrozenTrial], space: EncodedSpace) -> list[Branch]:
    """The branches of ``space`` in ``trials`` (first seen first), with their selectors."""
    groups: dict[frozenset[str], list[FrozenTrial]] = {}
    for t in trials:
        key = frozenset(n for n in space.names if n in t.params)
        if key:
            groups.setdefault(key, []).append(t)
    keys = list(groups)
    seen: dict[tuple[int, frozenset[str]], frozenset[int]] = {}  # (column, branch) -> indices
    for i, (name, col) in enumerate(zip(space.names, space.columns)):
        if space.is_relaxed[i]:
            continue  # continuous or wide columns: no selectors
        for key in keys:
            if name in key:
                enc = np.array([col.encode(t.params[name]) for t in groups[key]])
                seen[i, key] = frozenset(col.index_of(enc).astype(np.int64).tolist())
    selectors: set[int] = set()
    for i in {i for i, _ in seen}:
        sets = [s for (j, _), s in seen.items() if j == i]
        if len(sets) >= 2 and all(a == b or not (a & b) for a in sets for b in sets) \
                and any(not (a & b) for a in sets for b in sets):
            selectors.add(i)
    branches = []
    for key in keys:
        active = np.array([n in key for n in space.names], dtype=bool)
        allowed = {}
        for i in sorted(selectors):
            if not active[i]:
                continue
            col = space.columns[i]
            elsewhere = set().union(*(s for (j, k), s in seen.items() if j == i and k != key))
            unseen_or_here = [k for k in range(int(col.size))
                              if k in seen[i, key] or k not in elsewhere]
            allowed[i] = np.sort(col.values_at(np.array(unseen_or_here, dtype=float)))
        branches.append(Branch(key, active, allowed))
    return branches


def encoded_space(search_space: dict[str, BaseDistribution],
                  trials: Sequence[FrozenTrial]) -> EncodedSpace:
    """The encoding of ``search_space`` for these COMPLETE ``trials``: a
    :class:`ConditionalSpace` if some trial lacks some of its parameters, else a plain
    :class:`~optuna_gpbandit._space.EncodedSpace`."""
    names = list(search_space)
    if all(all(n in t.params for n in names) for t in trials):
        return EncodedSpace(search_space)
    space = EncodedSpace(search_space)
    branches = find_branches(trials, space)
    if len(branches) <= 1 and all(b.active.all() for b in branches):
        return space
    return ConditionalSpace(search_space, branches)


class ConditionalSpace(EncodedSpace):
    """An :class:`~optuna_gpbandit._space.EncodedSpace` whose points lie in branches.

    Parameters
    ----------
    search_space
        The union search space (parameter name -> distribution).
    branches
        Its branches (:func:`find_branches`), at least one.
    """

    conditional = True

    def __init__(self, search_space: dict[str, BaseDistribution],
                 branches: Sequence[Branch]) -> None:
        super().__init__(search_space)
        if not branches:
            raise ValueError("A conditional space needs at least one branch.")
        self.branches = list(branches)
        self.inactive = np.where(self.is_categorical, INACTIVE_CATEGORY, INACTIVE_NUMERIC)
        self._actives = np.array([b.active for b in self.branches])  # (B, d)

    @property
    def prior_dim(self) -> int:
        """The largest branch's number of parameters: points of one branch vary in those only,
        so the lengthscale prior (centred at ``0.25 sqrt(d)``) scales with it, not with the
        union's."""
        return int(self._actives.sum(axis=1).max())

    # ------------------------------------------------------------------ encoding
    def holds(self, params: dict[str, Any]) -> bool:
        return any(n in params for n in self.names)

    def encode(self, params: dict[str, Any]) -> np.ndarray:
        return np.array([c.encode(params[n]) if n in params else self.inactive[i]
                         for i, (n, c) in enumerate(zip(self.names, self.columns))])

    def encode_many(self, params_list: Sequence[dict[str, Any]]) -> np.ndarray:
        return np.array([self.encode(p) for p in params_list]).reshape(-1, self.d)

    def decode(self, x: np.ndarray) -> dict[str, Any]:
        """The parameters of ``x``'s branch (inactive ones are left to the objective)."""
        return {n: c.decode(x[i]) for i, (n, c) in enumerate(zip(self.names, self.columns))
                if is_active(x[i])}

    # ------------------------------------------------------------------ branches of points
    def branch_of(self, X: np.ndarray) -> np.ndarray:
        """Index of each row's branch: the one with the same active columns (else the one
        whose active columns differ in the fewest)."""
        active = is_active(np.atleast_2d(X))
        mismatch = (active[:, None, :] != self._actives[None, :, :]).sum(axis=2)
        return np.argmin(mismatch, axis=1)

    def _compatible(self, X: np.ndarray) -> np.ndarray:
        """(n, B) mask: the row's selector values are allowed in the branch."""
        ok = np.ones((X.shape[0], len(self.branches)), dtype=bool)
        for b, br in enumerate(self.branches):
            for i, vals in br.allowed.items():
                ok[:, b] &= _member(X[:, i], vals)
        return ok

    def _project(self, X: np.ndarray, which: np.ndarray, U: np.ndarray | None) -> np.ndarray:
        """Rows of ``X`` moved into branches ``which``: inactive columns at their code, each
        selector on an allowed value (drawn with ``U`` if given, else the nearest)."""
        for b, br in enumerate(self.branches):
            rows = np.flatnonzero(which == b)
            if not rows.size:
                continue
            X[np.ix_(rows, np.flatnonzero(~br.active))] = self.inactive[~br.active]
            for i, vals in br.allowed.items():
                col = X[rows, i]
                bad = ~_member(col, vals)
                if not bad.any():
                    continue
                if U is not None:
                    k = np.minimum((U[rows[bad], i] * vals.size).astype(int), vals.size - 1)
                else:
                    k = np.argmin(np.abs(col[bad, None] - vals[None, :]), axis=1)
                X[rows[bad], i] = vals[k]
        return X

    def from_uniform(self, U: np.ndarray) -> np.ndarray:
        """Valid points: each row in the branch its selector values pick (rows whose values
        several branches allow are spread over them by row number; rows no branch allows, by
        row number over all)."""
        X = super().from_uniform(U)
        ok = self._compatible(X)
        none = ~ok.any(axis=1)
        ok[none] = True
        counts = ok.sum(axis=1)
        pick = np.arange(X.shape[0]) % counts
        which = np.array([np.flatnonzero(row)[k] for row, k in zip(ok, pick)], dtype=int)
        return self._project(X, which, U)

    def snap(self, X: np.ndarray) -> np.ndarray:
        X = np.array(X, dtype=float, copy=True)
        shape = X.shape
        X = X.reshape(-1, self.d)
        which = self.branch_of(X)
        X = super().snap(X)
        return self._project(X, which, None).reshape(shape)

    # ------------------------------------------------------------------ the maximiser's moves
    def movable(self, x: np.ndarray) -> np.ndarray:
        """Columns a local search from ``x`` may change: the active ones of its branch, but
        selectors with one allowed value."""
        br = self.branches[int(self.branch_of(x[None, :])[0])]
        free = br.active.copy()
        for i, vals in br.allowed.items():
            free[i] &= vals.size > 1
        return free

    def admissible_values(self, i: int, x: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Of a discrete column's ``values``, those ``x``'s branch allows."""
        br = self.branches[int(self.branch_of(x[None, :])[0])]
        vals = br.allowed.get(i)
        return values if vals is None else values[_member(values, vals)]

    @property
    def cardinality(self) -> int | None:
        total = 0
        for br in self.branches:
            sizes = []
            for i in np.flatnonzero(br.active).tolist():
                if self.is_continuous[i]:
                    return None
                sizes.append(br.allowed[i].size if i in br.allowed else int(self.columns[i].size))
            total += int(np.prod(sizes, dtype=object)) if sizes else 1
        return total

    def enumerate(self, max_points: int) -> np.ndarray | None:
        card = self.cardinality
        if card is None or card > max_points:
            return None
        parts = []
        for br in self.branches:
            act = np.flatnonzero(br.active)
            grids = np.meshgrid(*[br.allowed[i] if i in br.allowed
                                  else self.column_values(i) for i in act.tolist()], indexing="ij")
            P = np.tile(self.inactive, (grids[0].size if grids else 1, 1))
            for g, i in zip(grids, act):
                P[:, i] = g.ravel()
            parts.append(P)
        return np.unique(np.vstack(parts), axis=0)


def _member(values: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """Mask of ``values`` equal (to 1e-9) to one of the sorted ``allowed`` values."""
    k = np.clip(np.searchsorted(allowed, values), 0, allowed.size - 1)
    lo = np.clip(k - 1, 0, allowed.size - 1)
    return (np.abs(allowed[k] - values) <= 1e-9) | (np.abs(allowed[lo] - values) <= 1e-9)


def completed_trials(study: Any) -> list[FrozenTrial]:
    """The study's COMPLETE trials, read fresh from storage (other workers' included)."""
    from optuna.trial import TrialState
    return study._get_trials(deepcopy=False, states=(TrialState.COMPLETE,), use_cache=False)


def study_search_space(study: Any) -> dict[str, BaseDistribution]:
    """The relative search space of a study: :func:`union_search_space` of its COMPLETE
    trials."""
    return union_search_space(completed_trials(study))


def study_encoded_space(study: Any,
                        search_space: dict[str, BaseDistribution]) -> EncodedSpace:
    """:func:`encoded_space` of ``search_space`` for the study's COMPLETE trials."""
    return encoded_space(search_space, completed_trials(study))


def trials_prior_dim(trials: Sequence[FrozenTrial]) -> int:
    """``prior_dim`` of the relative search space of the COMPLETE ``trials`` (0 when there are
    none): the dimension the default start-up design counts."""
    search_space = union_search_space(trials)
    return encoded_space(search_space, trials).prior_dim if search_space else 0
