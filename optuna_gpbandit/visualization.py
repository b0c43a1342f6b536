"""Plots of a study's per-trial sampler records, in the style of :mod:`optuna.visualization`.

Every trial an ``optuna_gpbandit`` sampler chooses with its model carries a record (the trial
system attr ``gpbandit:state``, read by :func:`optuna_gpbandit.sampler_record`): the exploration
width and the model's prediction at the chosen point. :func:`plot_record` draws those records
against what the trials then returned. It needs plotly (``pip install "optuna_gpbandit[plots]"``),
imported only when a plot is made.
"""

from __future__ import annotations

import importlib
import math
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np
from optuna.study import Study, StudyDirection
from optuna.trial import FrozenTrial, TrialState

from optuna_gpbandit.constraints.data import trial_constraints
from optuna_gpbandit.report.regret import regret_curves, sampler_record

__all__ = ["plot_record"]

_TITLE = "Sampler Record Plot"
_NO_PLOTLY = ("plot_record needs plotly: pip install \"optuna_gpbandit[plots]\" "
              "(or pip install plotly).")


@dataclass
class _Points:
    """Trial numbers and values of one trace."""

    numbers: list[int]
    values: list[float]


@dataclass
class _RecordInfo:
    """What :func:`plot_record` draws, extracted from the study (no plotly needed)."""

    target_name: str
    maximize: bool
    observed: _Points  # COMPLETE feasible trials with a record
    startup: _Points  # COMPLETE feasible trials without one (start-up, enqueued, exploration)
    infeasible: _Points  # COMPLETE trials violating a constraint
    mu: _Points  # the model's prediction at the chosen point (COMPLETE trials with a record)
    sd: list[float]  # its band, aligned with ``mu``
    sd_key: str  # "pred_sd" or "sigma"
    hover: list[str]  # aligned with ``mu``
    nu: _Points  # every trial with a record, whatever its state
    width: _Points  # ``beta`` (UCB) or ``v`` (GP-TS), same trials as ``nu`` where present
    width_key: str | None
    feasible: _Points  # COMPLETE feasible trials, for best-so-far and regret


def _number(value: Any) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        return math.nan
    return float(value)


def _entry(record: dict[str, Any], key: str, objective: int | None) -> float:
    """``record[key]`` for one objective (records of several objectives hold lists)."""
    value = record.get(key)
    if objective is None:
        return _number(value)
    if isinstance(value, list) and objective < len(value):
        return _number(value[objective])
    return math.nan


def _width_record(record: dict[str, Any], objective: int | None) -> dict[str, Any]:
    """The part of a record holding the exploration width (per objective for several)."""
    if objective is None:
        return record
    per = record.get("per_objective")
    entry = per[objective] if isinstance(per, list) and objective < len(per) else None
    return entry if isinstance(entry, dict) else {}


def _feasible(trial: FrozenTrial) -> bool:
    """Optuna's rule: feasible when every constraint value is zero or less (none: feasible)."""
    return all(_number(v) <= 0.0 for v in trial_constraints(trial)[1])


def _objective_index(study: Study, target: int | None) -> int | None:
    """``None`` for a single-objective study, else the index of the objective to plot."""
    n = len(study.directions)
    if target is not None and (isinstance(target, bool) or not isinstance(target, int)
                               or not 0 <= target < n):
        raise ValueError(f"plot_record: target must be the index of an objective, 0 to {n - 1}; "
                         f"got {target!r}.")
    if n == 1:
        return None
    if target is None:
        raise ValueError(f"plot_record: the study has {n} objectives; pass target=<index> "
                         f"(0 to {n - 1}) to choose the objective whose record to plot.")
    return target


def _target_name(study: Study, objective: int | None, target_name: str | None) -> str:
    if target_name is not None:
        return target_name
    names = study.metric_names
    if names is not None:
        return names[0 if objective is None else objective]
    return "Objective Value" if objective is None else f"Objective {objective}"


def _record_info(study: Study, target: int | None, target_name: str | None) -> _RecordInfo:
    trials = sorted(study.get_trials(deepcopy=False), key=lambda t: t.number)
    if not trials:
        raise ValueError("plot_record: the study has no trials.")
    objective = _objective_index(study, target)
    records = [(t, sampler_record(t)) for t in trials]
    if all(r is None for _, r in records):
        raise ValueError(
            f"plot_record: none of the study's {len(trials)} trials has a record of an "
            "optuna_gpbandit sampler (trial system attr 'gpbandit:state'): the study was run "
            "with another sampler, or only its start-up trials have been sampled.")
    direction = study.directions[0 if objective is None else objective]
    info = _RecordInfo(
        target_name=_target_name(study, objective, target_name),
        maximize=direction == StudyDirection.MAXIMIZE,
        observed=_Points([], []), startup=_Points([], []), infeasible=_Points([], []),
        mu=_Points([], []), sd=[], sd_key="pred_sd", hover=[],
        nu=_Points([], []), width=_Points([], []), width_key=None, feasible=_Points([], []))
    model = [r for t, r in records if r is not None and t.state == TrialState.COMPLETE]
    # pred_sd (an observation's sd) where every record has it; else sigma (older records and
    # records of several objectives hold only sigma, the sd of the objective function).
    if objective is not None or not model or any("pred_sd" not in r for r in model):
        info.sd_key = "sigma"
    for trial, record in records:
        if record is not None:
            width = _width_record(record, objective)
            info.nu.numbers.append(trial.number)
            info.nu.values.append(_number(width.get("nu")))
            key = "beta" if "beta" in width else "v" if "v" in width else None
            if key is not None:
                info.width_key = info.width_key or key
                info.width.numbers.append(trial.number)
                info.width.values.append(_number(width.get(key)))
        if trial.state != TrialState.COMPLETE:
            continue  # failed, pruned, running, waiting: no value to compare
        value = float(trial.values[0 if objective is None else objective])
        feasible = _feasible(trial)
        group = info.infeasible if not feasible else (
            info.startup if record is None else info.observed)
        group.numbers.append(trial.number)
        group.values.append(value)
        if feasible:
            info.feasible.numbers.append(trial.number)
            info.feasible.values.append(value)
        if record is not None:
            info.mu.numbers.append(trial.number)
            info.mu.values.append(_entry(record, "mu", objective))
            info.sd.append(_entry(record, info.sd_key, objective))
            refit = record.get("refitted")
            if isinstance(refit, list):  # one per objective
                refit = refit[objective] if objective is not None and objective < len(refit) \
                    else None
            info.hover.append(f"t={record.get('t')}, n_observed={record.get('n_observed')}, "
                              f"refitted={refit}")
    return info


def plot_record(
    study: Study,
    *,
    optimum: float | None = None,
    target: int | None = None,
    target_name: str | None = None,
) -> Any:
    """Plot the sampler's per-trial records of a study against the values the trials returned.

    Three panels share the trial-number axis:

    1. **Prediction against observation.** The value each COMPLETE trial returned (trials with
       a record: ``Objective Value``; trials without one, i.e. start-up, enqueued and
       change-detection exploration trials: ``Start-up Trial``; trials violating a constraint:
       ``Infeasible Trial``, grey) and, for trials with a record, the model's prediction at the
       chosen point (``mu``) with error bars of +- one ``pred_sd``: the predicted standard
       deviation of an *observation* (the posterior sd of the objective plus the fitted
       noise), the spread an observed value should have around ``mu``, so about two thirds of
       the values should fall within the bars when the model is calibrated. Records that do
       not hold ``pred_sd`` (records of several objectives) give ``sigma``, the posterior sd of
       the objective function itself; the trace's name says which.
    2. **Exploration width.** ``nu``, the multiple of the posterior sd the acquisition adds
       (UCB ``mu + nu sigma``; GP-TS: the scale of the posterior draw), and the sampler's own
       parameter: ``beta`` (GP-UCB: ``nu = sqrt(beta)``; IGP-UCB: ``nu = beta``) or ``v``
       (GP-TS: ``nu = v``), ``nu`` adding the censoring bonus of pending trials if any (the
       record's ``width_bonus``). Drawn for every trial with a record, whatever its state.
    3. **Best value so far** over the COMPLETE feasible trials or, when ``optimum`` is given,
       the simple regret ``min_{s <= t} (y_s - f*)`` (``f* - y_s`` when maximising) on a log
       axis. A regret of zero or less (the optimum reached, or passed by a noisy value)
       cannot be drawn on a log axis and leaves a gap.

    Failed, pruned, running and waiting trials have no value: they are left out of panels 1
    and 3 (their exploration width, if the sampler chose them with its model, is in panel 2).

    Parameters
    ----------
    study
        A study run with an ``optuna_gpbandit`` sampler.
    optimum
        The known best value of the (plotted) objective, for benchmarks: panel 3 then shows
        the simple regret instead of the best value.
    target
        For a study of several objectives, the index of the objective to plot (required there;
        ``None`` or ``0`` for one objective). Unlike Optuna's ``target`` this is an index, not
        a function of the trial: the records hold one model per objective.
    target_name
        The objective's name on the axis and in the legend. Default: the study's metric name
        if set, else ``"Objective Value"`` (``"Objective <i>"`` for several objectives).

    Returns
    -------
    plotly.graph_objects.Figure
        The figure (``fig.show()``, ``fig.write_html(path)``).

    Raises
    ------
    ImportError
        If plotly is not installed.
    ValueError
        If the study has no trials, if no trial has a record (another sampler, or only start-up
        trials), if the study has several objectives and ``target`` is not given or not one of
        their indices, or if ``optimum`` is not a finite number.
    """
    try:  # plotly ships no type information: imported by name, its objects are Any
        go = importlib.import_module("plotly.graph_objects")
        make_subplots = importlib.import_module("plotly.subplots").make_subplots
    except ImportError as e:  # pragma: no cover - plotly is in the test extra
        raise ImportError(_NO_PLOTLY) from e
    if optimum is not None and not math.isfinite(_number(optimum)):
        raise ValueError(f"plot_record: optimum must be a finite number, got {optimum!r}.")
    info = _record_info(study, target, target_name)
    bottom = "Best Value" if optimum is None else "Simple Regret"
    fig = make_subplots(
        rows=3, cols=1, shared_xaxes=True, vertical_spacing=0.07, row_heights=[0.5, 0.25, 0.25],
        subplot_titles=("Observed value and the model's prediction at the chosen point",
                        "Exploration width", bottom))
    colors = {"observed": "#1f77b4", "model": "#ff7f0e", "startup": "#2ca02c", "width": "#9467bd"}

    fig.add_trace(go.Scatter(
        x=info.observed.numbers, y=info.observed.values, mode="markers", name=info.target_name,
        marker={"color": colors["observed"]}), row=1, col=1)
    fig.add_trace(go.Scatter(
        x=info.mu.numbers, y=info.mu.values, mode="markers",
        name=f"Prediction (mu +- {info.sd_key})",
        marker={"color": colors["model"], "symbol": "line-ew-open", "size": 12},
        error_y={"type": "data", "array": info.sd, "visible": True, "color": colors["model"]},
        customdata=info.sd, text=info.hover,
        hovertemplate="Trial %{x}<br>mu %{y:.4g} +- %{customdata:.3g}<br>%{text}<extra></extra>"),
        row=1, col=1)
    fig.add_trace(go.Scatter(
        x=info.startup.numbers, y=info.startup.values, mode="markers", name="Start-up Trial",
        marker={"color": colors["startup"], "symbol": "diamond"}), row=1, col=1)
    fig.add_trace(go.Scatter(
        x=info.infeasible.numbers, y=info.infeasible.values, mode="markers",
        name="Infeasible Trial", marker={"color": "#cccccc"},
        showlegend=bool(info.infeasible.numbers)), row=1, col=1)

    fig.add_trace(go.Scatter(
        x=info.nu.numbers, y=info.nu.values, mode="lines+markers", name="nu",
        line={"color": colors["width"]}), row=2, col=1)
    if info.width_key is not None:
        fig.add_trace(go.Scatter(
            x=info.width.numbers, y=info.width.values, mode="lines+markers", name=info.width_key,
            line={"color": colors["width"], "dash": "dot"}, marker={"symbol": "circle-open"}),
            row=2, col=1)

    values = np.asarray(info.feasible.values, dtype=float)
    if optimum is None:
        best = (np.maximum.accumulate(values) if info.maximize
                else np.minimum.accumulate(values)) if values.size else values
        curve: list[float | None] = [float(v) for v in best]
    else:
        simple = regret_curves(values, float(optimum), info.maximize)[3]
        curve = [float(v) if v > 0 else None for v in simple]
    fig.add_trace(go.Scatter(
        x=info.feasible.numbers, y=curve, mode="lines", name=bottom,
        line={"color": "#d62728", "shape": "hv"}), row=3, col=1)

    fig.update_layout(title=_TITLE, height=800)
    fig.update_yaxes(title_text=info.target_name, row=1, col=1)
    fig.update_yaxes(title_text="Width", row=2, col=1)
    fig.update_yaxes(title_text=bottom if optimum is None else "Simple Regret (log)",
                     type="linear" if optimum is None else "log", row=3, col=1)
    fig.update_xaxes(title_text="Trial", row=3, col=1)
    return fig
