"""Long-term and per-trial constraint metrics of a study.

Shi & Eryilmaz (AISTATS 2022): time-averaged regret ``R_T / T`` and cumulative constraint
violation ``V_T = || [sum_{t<=T} g(x_t)]^+ ||`` (sum each constraint over time first, then clip,
then the Euclidean norm over constraints: a round with slack cancels an earlier violation); and,
side by side, the best feasible value so far and the feasible share (what ``study.best_trial``
follows).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence, cast

import numpy as np
from optuna.study import Study, StudyDirection
from optuna.trial import TrialState

from optuna_gpbandit.constraints import SkippedTrial, constraint_matrix
from optuna_gpbandit.report.regret import regret_curves


def cumulative_violation(g: Any) -> np.ndarray:
    """``V_t = || [sum_{tau<=t} g(x_tau)]^+ ||_2`` for every ``t``.

    Parameters
    ----------
    g
        Constraint values in time order, ``(T, m)`` (1-D: one constraint). Not clipped per round.

    Returns
    -------
    numpy.ndarray
        ``(T,)``, non-negative.
    """
    g = np.asarray(g, dtype=float)
    if g.ndim == 1:
        g = g[:, None]
    if g.ndim != 2:
        raise ValueError(f"g must be (T, m) or (T,), got shape {g.shape}.")
    if np.isnan(g).any():
        raise ValueError("g contains NaN.")
    return np.linalg.norm(np.maximum(np.cumsum(g, axis=0), 0.0), axis=1)


def violation_curves(g: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(V_t, V_t / t)``: cumulative and time-averaged constraint violation."""
    v = cumulative_violation(g)
    return v, v / np.arange(1, v.size + 1)


@dataclass(frozen=True, eq=False)
class LongTermMetrics:
    """Regret and constraint-violation curves under long-term constraints, per round ``t``.

    Attributes
    ----------
    regret
        Instantaneous regret ``f* - f(x_t)`` (``f(x_t) - f*`` when minimising). Not clipped: it
        can be negative, since violating the constraints can beat the constrained optimum.
    cumulative_regret, average_regret
        ``R_t`` and ``R_t / t``.
    violation, average_violation
        ``V_t = || [sum_{tau<=t} g(x_tau)]^+ ||`` and ``V_t / t``.
    average_value
        ``(1/t) sum_{tau<=t} f(x_tau)`` (time-averaged utility).
    """

    regret: np.ndarray
    cumulative_regret: np.ndarray
    average_regret: np.ndarray
    violation: np.ndarray
    average_violation: np.ndarray
    average_value: np.ndarray

    def summary(self) -> dict[str, float | int | None]:
        """Final values (``None`` when there are no rounds)."""
        n = int(self.regret.size)
        last = (lambda a: float(a[-1])) if n else (lambda a: None)
        return {
            "n": n,
            "cumulative_regret": last(self.cumulative_regret),
            "average_regret": last(self.average_regret),
            "violation": last(self.violation),
            "average_violation": last(self.average_violation),
            "average_value": last(self.average_value),
        }


def long_term_metrics(
    f_vals: Any, g_vals: Any, f_star: float, maximize: bool = True
) -> LongTermMetrics:
    """Time-averaged regret, violation and utility of a sequence of rounds.

    Parameters
    ----------
    f_vals
        Objective values ``f(x_t)`` in time order, ``(T,)`` (noise-free ones for the paper's
        metrics).
    g_vals
        Constraint values ``(T, m)`` (1-D: one constraint), ``> 0`` violates.
    f_star
        The constrained optimum ``f(x*)`` (a maximum if ``maximize``, else a minimum).
    maximize
        Direction of the objective.
    """
    f = np.asarray(f_vals, dtype=float).reshape(-1)
    g = np.asarray(g_vals, dtype=float)
    if g.ndim == 1:
        g = g[:, None]
    if g.shape[0] != f.size:
        raise ValueError(f"{f.size} objective values but {g.shape[0]} constraint rows.")
    if np.isnan(f).any():
        raise ValueError("f_vals contains NaN.")
    r, cum, avg, _ = regret_curves(f, float(f_star), maximize)
    v, v_avg = violation_curves(g)
    t = np.arange(1, f.size + 1)
    return LongTermMetrics(r, cum, avg, v, v_avg, np.cumsum(f) / t)


@dataclass(frozen=True, eq=False, kw_only=True)
class ConstraintReport(LongTermMetrics):
    """:class:`LongTermMetrics` of a study, with the rounds it used.

    Attributes
    ----------
    numbers
        Trial numbers of the rounds (COMPLETE trials with usable constraint data, in number order).
    values
        Objective values used (stored values, or ``objective(params)``).
    constraints
        ``(T, m)`` constraint values used.
    names
        Constraint names of the columns.
    skipped
        COMPLETE trials left out for unusable constraint data.
    feasible
        Whether each round's constraints all hold (``g <= 0``).
    best_feasible
        The best feasible value so far (``study.best_value`` at the end; NaN before the first
        feasible round).
    feasible_share
        Share of feasible rounds so far.
    optimum
        The constrained optimum given (NaN if none: the regret curves are NaN then).
    maximize
        Direction of the objective.
    """

    numbers: np.ndarray
    values: np.ndarray
    constraints: np.ndarray
    names: tuple[str, ...] = ()
    skipped: tuple[SkippedTrial, ...] = ()
    feasible: np.ndarray
    best_feasible: np.ndarray
    feasible_share: np.ndarray
    optimum: float = math.nan
    maximize: bool = True

    def summary(self) -> dict[str, float | int | None]:
        """Final values: the long-term metrics, the best feasible value, its gap to the optimum
        (NaN without one; ``inf`` with no feasible round), and the feasible share."""
        out = super().summary()
        n = int(self.regret.size)
        best = float(self.best_feasible[-1]) if n else math.nan
        out["best_feasible"] = None if math.isnan(best) else best
        if math.isnan(self.optimum):
            out["best_feasible_gap"] = None
        elif math.isnan(best):
            out["best_feasible_gap"] = math.inf
        else:
            out["best_feasible_gap"] = (self.optimum - best) if self.maximize \
                else (best - self.optimum)
        out["feasible_share"] = float(self.feasible_share[-1]) if n else None
        return out


def constraint_report(
    study: Study,
    optimum: float | None = None,
    *,
    objective: Callable[[dict[str, Any]], float] | None = None,
    constraints: Callable[[dict[str, Any]], Sequence[float]] | None = None,
    names: Sequence[str] | None = None,
    on_missing: str = "skip",
) -> ConstraintReport:
    """Best feasible value, feasible share, constraint violation and regret of a study, per
    round, side by side.

    Only COMPLETE trials count, in trial-number order. ``study.best_trial`` is Optuna's best
    feasible trial; ``best_feasible`` follows it over the rounds.

    Parameters
    ----------
    study
        A single-objective study.
    optimum
        The constrained optimum ``f(x*)`` in the study's direction, if known (for the regret
        curves and the best feasible value's gap).
    objective
        Optional noise-free objective ``objective(params)``; default: the stored values.
    constraints
        Optional noise-free constraints ``constraints(params) -> sequence``; default: the stored
        constraint values (``constraints_func`` / ``trial.set_constraint``, read as in
        :func:`optuna_gpbandit.constraints.constraint_matrix`).
    names
        Constraint names to read (default: those of the first trial with constraint data).
    on_missing
        Stored constraint data missing / differently named / not finite: ``"skip"`` (default; the
        trial is left out of every curve and listed in ``skipped``) or ``"raise"``.
    """
    if study._is_multi_objective():
        raise ValueError("constraint_report supports single-objective studies only.")
    trials = sorted(
        study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)), key=lambda t: t.number
    )
    if constraints is None:
        matrix = constraint_matrix(trials, names=names, on_missing=on_missing)
        kept, g = list(matrix.trials), matrix.values
        col_names, skipped = matrix.names, matrix.skipped
    else:
        kept, skipped = trials, ()
        rows = [np.asarray(constraints(t.params), dtype=float).reshape(-1) for t in trials]
        if len({r.size for r in rows}) > 1:
            raise ValueError("constraints(params) returned sequences of different lengths.")
        m = rows[0].size if rows else 0
        g = np.array(rows, dtype=float).reshape(len(rows), m)
        col_names = tuple(names) if names is not None else tuple(str(i) for i in range(m))
        if len(col_names) != m:
            raise ValueError(f"{len(col_names)} names for {m} constraint values.")
    if objective is None:
        f = np.array([t.value for t in kept], dtype=float)
    else:
        f = np.array([float(objective(t.params)) for t in kept], dtype=float)
    maximize = study.direction == StudyDirection.MAXIMIZE
    opt = math.nan if optimum is None else float(optimum)
    base = long_term_metrics(f, g, opt, maximize)
    feasible = (cast(np.ndarray, (g <= 0.0).all(axis=1)) if g.shape[1]  # 2-D: an array
                else np.ones(f.size, dtype=bool))
    sign = 1.0 if maximize else -1.0
    best = sign * np.maximum.accumulate(np.where(feasible, sign * f, -np.inf)) if f.size \
        else np.zeros(0)
    best[~np.isfinite(best)] = np.nan
    return ConstraintReport(
        regret=base.regret,
        cumulative_regret=base.cumulative_regret,
        average_regret=base.average_regret,
        violation=base.violation,
        average_violation=base.average_violation,
        average_value=base.average_value,
        numbers=np.array([t.number for t in kept], dtype=int),
        values=f,
        constraints=g,
        names=col_names,
        skipped=tuple(skipped),
        feasible=feasible,
        best_feasible=best,
        feasible_share=np.cumsum(feasible) / np.arange(1, f.size + 1),
        optimum=opt,
        maximize=maximize,
    )
