"""Pending trials -> design rows: hallucinated (the default, GP-BUCB) or censored labels
(Verma, Dai & Low, ICML 2022), with the counts logged once and recorded.

The rules are settings objects (:class:`PendingRule`: :class:`Hallucinate`, the default,
:class:`Censoring`, :class:`IgnorePending`), each running this stage for the sampler and
travelling with its rows through the pipeline: the rule says which rows the design holds
(:meth:`PendingRule.rows`), their label (:meth:`PendingRule.label`, at the observation stage;
:meth:`PendingRule.posterior`, at the model stage), the widening of the confidence width they
call for (:meth:`PendingRule.width_bonus`, :meth:`PendingRule.theory_width`) and how far a new
point stays from them (:attr:`PendingRule.spread`). A new rule is a subclass here.

Every launched point enters the GP design. With :class:`Hallucinate` every completed trial
is observed and every pending one is a row whose label the model stage sets to the posterior
mean of the observed rows. With censoring, when trial ``c`` is sampled:

=====================================================  ================  ==============
trial ``q``                                            label             in the nu sum
=====================================================  ================  ==============
COMPLETE, delay ``d_q <= m``                           its value         ``"window"`` only
COMPLETE, delay ``d_q > m`` (``discard_late=True``)    censored, forever ``"window"`` only
RUNNING, age ``c - q <= m``                            censored          yes
RUNNING, age ``> m`` (stale: a crashed worker?)        censored          no
WAITING (enqueued, point fixed)                        censored          yes
RUNNING and dead (heartbeat, or ``stale_after``)       not in the design no
=====================================================  ================  ==============

By default (``discard_late=False``) a completed trial is used however late its result came: only
trials still running are censored. ``Censoring.paper()`` is the paper's literal rule.

The censored label is the minimum of the (standardised) observed values, or a user-given lower
bound of the objective. Delays and ages count launches (trial numbers) by default: the delay of a
finished trial is the number of trials created after it before it finished (0 in a sequential
run), recorded by the sampler's ``after_trial``; a trial told by something else gets it from the
trials' start and completion times. With ``window_unit="seconds"`` (the paper's appendix A.4)
delays are durations and ages are seconds since the trial started, measured at the start of
the trial being sampled.
"""

from __future__ import annotations

import datetime
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, ClassVar

import numpy as np
from optuna.exceptions import UpdateFinishedTrialError
from optuna.study import Study
from optuna.trial import FrozenTrial, TrialState

from optuna_gpbandit._arguments import check_number
from optuna_gpbandit._design import Condition, Design, DesignRow, RowLabels, report
from optuna_gpbandit._history import History, seconds_between, start_times, trial_delay
from optuna_gpbandit._storage import FINISH, write_trial_json
from optuna_gpbandit.acquisition.beta import sdf_beta

if TYPE_CHECKING:
    from optuna_gpbandit.gp.posterior import GPPosterior

# A new point stays this far (max over encoded columns) from every pending point, halved while
# that leaves no candidate [design choice]: hallucination leaves the mean near a pending point
# where it was, so a batch piled up next to the best point (docs/benchmarks.md, "The spread of
# pending points").
PENDING_SPREAD = 0.03
_UNITS = ("trials", "seconds")
_TERMS = ("pending", "window", "none")

@dataclass(frozen=True, kw_only=True)
class PendingRule(RowLabels):
    """How trials still running or waiting (other workers', or asked and not told yet) enter
    the model: ``pending=Hallucinate()`` (default), ``pending=Censoring(...)`` or
    ``pending=IgnorePending()``. Every completed result is used when it arrives, however late,
    under every rule but ``Censoring.paper()``, and a pending trial's point is never proposed
    again while it runs.

    Parameters
    ----------
    stale_after
        Seconds after which a RUNNING trial of another worker is presumed dead (a crashed
        worker): it leaves the model, its point is still not proposed, and a warning is logged
        once. ``None`` (default): 10 times the longest run of any finished trial, at least
        300 s; ``math.inf``: never. With Optuna's heartbeat (``RDBStorage(...,
        heartbeat_interval=...)``) a trial whose heartbeat is stale is dead as well.
    """

    stale_after: float | None = None

    def __post_init__(self) -> None:
        if self.stale_after is not None and self.stale_after != math.inf:
            check_number("stale_after", self.stale_after)

    @property
    def sees_pending(self) -> bool:
        """Whether pending trials enter the design (and two workers must not take one point)."""
        return True

    @property
    def spread(self) -> float:
        """How far (max over encoded columns) a new point stays from the design's pending
        rows while anything else is left (:data:`PENDING_SPREAD`)."""
        return PENDING_SPREAD

    @property
    def sets_width(self) -> bool:
        """Whether the rule replaces the sampler's width (:meth:`theory_width`)."""
        return False

    def design(self, study: Study, trial: FrozenTrial, history: History) -> Design:
        """The design rows of this rule (:meth:`rows`), logged once per study with its
        counts (:func:`report`)."""
        design = self.rows(history)
        report(study, trial, design)
        return design

    def rows(self, history: History) -> Design:
        """The completed trials with their values, and a row for each pending trial (see the
        module table)."""
        rows = [DesignRow(p.trial.number, p.params, "pending", False) for p in history.pending]
        return Design(history.completed, [False] * len(history.completed), rows,
                      n_dead=len(history.dead), n_unresolved=history.n_unresolved, rule=self)

    def width_bonus(self, obs: Any, posterior: Any) -> float:
        """The widening of the confidence width the pending rows call for (none here)."""
        return 0.0

    def theory_width(self, gamma: float, B: float, R: float, delta: float,
                     thompson: bool) -> float | None:
        """The width of IGP-UCB (GP-TS: ``thompson``) under this rule's theory, or ``None``:
        the sampler's own (:attr:`sets_width`)."""
        return None

    def record_finish(self, study: Study, trial: FrozenTrial) -> None:
        """``after_trial``: what the rule needs to know of a finishing trial (nothing here)."""


@dataclass(frozen=True, kw_only=True)
class Hallucinate(PendingRule):
    """GP-BUCB (Desautels et al. 2014), the default: pending points enter the design with the
    posterior mean of the completed trials as label. Their points shrink the variance and the
    mean stays that of the completed trials, so a batch spreads out and a slow trial in a good
    region does not push other workers away from it.

    Parameters
    ----------
    stale_after
        See :class:`PendingRule`.
    """

    summary: ClassVar[str] = "the posterior mean as label (they shrink the variance)"

    def label(self, y: np.ndarray, to_model: Callable[[float], float] | None) -> float:
        """A placeholder: the model stage sets the labels (:meth:`posterior`)."""
        return 0.0

    def posterior(self, observed: np.ndarray, y: np.ndarray, X: np.ndarray,
                  condition: Condition) -> GPPosterior:
        """The posterior on every row, the pending rows labelled with the mean of the
        posterior on the observed rows."""
        if observed.all():
            return condition(None, y)
        base = condition(observed, y[observed])
        y = y.copy()
        y[~observed] = base.mean_var(X[~observed])[0]
        return condition(None, y)


@dataclass(frozen=True, kw_only=True)
class IgnorePending(PendingRule):
    """Completed trials only: parallel workers may repeat a point.

    Parameters
    ----------
    stale_after
        See :class:`PendingRule`.
    """

    @property
    def sees_pending(self) -> bool:
        return False

    def rows(self, history: History) -> Design:
        """The completed trials only."""
        return Design(history.completed, [False] * len(history.completed), [],
                      n_dead=len(history.dead), n_unresolved=history.n_unresolved, rule=self)


@dataclass(frozen=True, kw_only=True)
class Censoring(PendingRule):
    """Verma, Dai & Low's censoring (GP-UCB-SDF / GP-TS-SDF, ICML 2022):
    ``pending=Censoring(...)``. Pending points enter the GP with the worst observed value as
    label, which also lowers the mean near them, and the width grows by ``B_y`` times the sum
    of their posterior standard deviations: more exploration, which pays on rough objectives
    with long delays.

    Parameters
    ----------
    stale_after
        See :class:`PendingRule`.
    window
        The censoring window ``m`` (the paper's default is twice the mean delay). A result that
        arrives more than ``m`` launches (or seconds) after its trial started is treated as
        never arrived, and a RUNNING trial older than ``m`` stops widening the confidence width
        (a crashed worker's trial cannot freeze the search). Default 20 launches: about twice
        the number of trials other workers start while one runs, for up to ~10 workers.
    window_unit
        ``"trials"`` (default, the paper's main text) or ``"seconds"`` (its appendix A.4).
    lower_bound
        Known worst value of the objective (the lowest for ``maximize``, the highest for
        ``minimize``, e.g. ``0.0`` for an accuracy), used as the censored label. ``None``
        (default) uses the worst observed value, the paper's "lower-bound proxy".
    width
        ``B_y`` in ``nu_t = beta_t + B_y * sum_s sigma_{t-1}(x_s)``, in standardised units
        (default 1.0, the value the paper's experiments used on targets in ``[0, 1]``).
    pending_term
        Which trials enter the sum: ``"pending"`` (default) those still pending within the
        window, a tighter variant that is still valid (when nothing is pending the sampler is
        its plain version exactly); ``"window"`` all trials launched within the window, as in
        the paper (wider than the plain sampler even in sequential runs); ``"none"``.
    discard_late
        ``False`` (default): a result is used when it arrives, however late; only trials still
        running are censored. ``True``: a result that arrived more than ``window`` launches
        (or seconds) after its trial started stays censored forever, the paper's rule for its
        delayed-feedback setting (results that convert late are worth nothing, e.g. a click
        after the campaign). See :meth:`paper`.
    theory_beta
        IGP-UCB and GP-TS only: replace Chowdhury & Gopalan's width by Verma et al.'s
        ``beta_t = B + (R + B_y) sqrt(2 (gamma_{t-1} + 1 + ln(2 / delta)))`` (``ln(4 / delta)``
        for GP-TS), where ``B_y = width`` bounds the censored targets. It is what their regret
        bound needs when results are censored; wider than the default, so more exploration.
    """

    window: float = 20
    window_unit: str = "trials"
    lower_bound: float | None = None
    width: float = 1.0
    pending_term: str = "pending"
    discard_late: bool = False
    theory_beta: bool = False
    summary: ClassVar[str] = "the worst observed value as label, widening the confidence width"

    @classmethod
    def paper(cls, window: float = 20, **kwargs: Any) -> "Censoring":
        """Verma et al.'s literal rule: late results stay censored (``discard_late=True``) and
        every trial launched within the window widens the width (``pending_term="window"``).

        Choose it in the paper's setting, where a result that arrives after ``window`` launches
        is worthless or the window is a storage limit; an HPO study loses real results with it.
        """
        kwargs.setdefault("discard_late", True)
        kwargs.setdefault("pending_term", "window")
        return cls(window=window, **kwargs)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.window_unit not in _UNITS:
            raise ValueError(f"window_unit must be one of {_UNITS}, got {self.window_unit!r}.")
        if isinstance(self.window, bool) or not (
            isinstance(self.window, (int, float)) and self.window >= 0
        ):
            raise ValueError(f"window must be a number >= 0, got {self.window!r}.")
        if self.window_unit == "trials" and float(self.window) != int(self.window):
            raise ValueError(f"A window in trials must be an integer, got {self.window!r}.")
        if self.lower_bound is not None and not math.isfinite(self.lower_bound):
            raise ValueError(f"lower_bound must be finite or None, got {self.lower_bound!r}.")
        if not (math.isfinite(self.width) and self.width >= 0):
            raise ValueError(f"width must be finite and >= 0, got {self.width!r}.")
        if self.pending_term not in _TERMS:
            raise ValueError(f"pending_term must be one of {_TERMS}, got {self.pending_term!r}.")
        for name in ("discard_late", "theory_beta"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be True or False, got {getattr(self, name)!r}.")

    @property
    def sets_width(self) -> bool:
        return self.theory_beta

    def rows(self, history: History) -> Design:
        """Observed, late, pending and stale rows under the window (see the module table)."""
        current = history.current
        seconds = self.window_unit == "seconds"
        m = float(self.window)
        now = current.datetime_start or datetime.datetime.now()

        def age(t: FrozenTrial) -> float:
            if t.state == TrialState.WAITING:
                return 0.0
            if seconds:
                return seconds_between(t.datetime_start, now) or 0.0
            return float(current.number - t.number)

        window_term = self.pending_term == "window"
        observed, observed_in_window, rows = [], [], []
        starts = start_times(history.all_trials) if self.discard_late else None
        for t in history.completed:
            recent = window_term and age(t) <= m
            if (self.discard_late
                    and trial_delay(t, history.all_trials, self.window_unit, starts) > m):
                rows.append(DesignRow(t.number, t.params, "late", recent))
            else:
                observed.append(t)
                observed_in_window.append(recent)
        for p in history.pending:
            stale = age(p.trial) > m
            in_window = self.pending_term != "none" and not stale
            rows.append(DesignRow(p.trial.number, p.params, "stale" if stale else "pending",
                                  in_window))
        return Design(observed, observed_in_window, rows, n_dead=len(history.dead),
                      n_unresolved=history.n_unresolved, rule=self,
                      late_after=f"{self.window:g} {self.window_unit}")

    def label(self, y: np.ndarray, to_model: Callable[[float], float] | None) -> float:
        """The worst observed label, or the model's image of ``lower_bound`` if that is lower
        (one objective)."""
        label = super().label(y, to_model)
        if self.lower_bound is not None and to_model is not None:
            label = min(label, to_model(self.lower_bound))
        return label

    def width_bonus(self, obs: Any, posterior: Any) -> float:
        """``B_y`` times the sum of the posterior standard deviations at the rows in the
        window."""
        if not obs.in_window.any():
            return 0.0
        var = posterior.mean_var(obs.X[obs.in_window])[1]
        return self.width * float(np.sum(np.sqrt(var)))

    def theory_width(self, gamma: float, B: float, R: float, delta: float,
                     thompson: bool) -> float | None:
        """Verma et al.'s width with ``B_y = width`` (``theory_beta=True``)."""
        return sdf_beta(gamma, B, R, self.width, delta, thompson) if self.theory_beta else None

    def record_finish(self, study: Study, trial: FrozenTrial) -> None:
        """Store the number of trials created so far on a finishing trial, where delays in
        launches decide (``discard_late`` with ``window_unit="trials"``)."""
        if not self.discard_late or self.window_unit != "trials":
            return
        n = study._storage.get_n_trials(study._study_id)
        try:
            write_trial_json(study, trial, FINISH, int(n))
        except UpdateFinishedTrialError:  # told twice, or finished by someone else
            pass
