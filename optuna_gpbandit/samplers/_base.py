"""The suggestion pipeline every sampler runs; concrete samplers only choose the next point.

``_choose`` reads top to bottom, one stage a line: study history (``_history``; the union
search space and its branches, ``_conditional``) -> reset (``reset=``, ``reset``: none,
change points, ``changepoint/``, or restarts, ``restarts``) -> start-up design (``_startup``)
-> failed rows (``failures=``, ``failures``) -> constraints (``constraints=``,
``constraints/``) -> pending rows (``pending=``, ``pending``) -> observations and one GP per
objective (``model=``, ``_observations``, ``_fitted_gp``, ``samplers/_models``) -> the
acquisition's maximiser (``search=``, ``search``; the sampler's ``_select``, or a
scalarisation, ``_multi``) -> the step's record (``samplers/_record``). The pipeline asks each
settings object what its stage does, never its type; the arguments are checked once
(``samplers/_settings``). Stored: ``gpbandit:params`` (the point, seen by other workers while
the trial runs) and ``gpbandit:state`` (the step's record); two workers taking one point:
``_concurrency``.
"""

from __future__ import annotations

import abc
from typing import Any, Sequence

import numpy as np
from optuna.distributions import BaseDistribution
from optuna.logging import get_logger
from optuna.samplers import BaseSampler
from optuna.samplers._base import _process_constraints_after_trial
from optuna.study import Study
from optuna.trial import FrozenTrial, TrialState

from optuna_gpbandit import _randomness
from optuna_gpbandit._arguments import check_seed
from optuna_gpbandit._conditional import (completed_trials, study_encoded_space,
                                          study_search_space, trials_prior_dim)
from optuna_gpbandit.failures import FailedTrials
from optuna_gpbandit.model import GPModel
from optuna_gpbandit._history import History, collect_history, direction_sign, write_sampled_params
from optuna_gpbandit.reset import NoReset, Reset
from optuna_gpbandit.search import AcquisitionSearch
from optuna_gpbandit.pending import Hallucinate, PendingRule
from optuna_gpbandit._space import EncodedSpace
from optuna_gpbandit._startup import startup_count, startup_stage
from optuna_gpbandit._storage import STATE, write_trial_json
from optuna_gpbandit._threads import single_threaded_blas
from optuna_gpbandit._notices import WARNING, log_once
from optuna_gpbandit.constraints import ConstraintModels
from optuna_gpbandit.samplers._concurrency import MAX_ROUNDS, taken_meanwhile
from optuna_gpbandit.samplers._context import SelectionContext, any_admitted, toward_feasibility
from optuna_gpbandit.samplers._docs import document
from optuna_gpbandit.samplers._door import check_arguments
from optuna_gpbandit.samplers._models import fit_contexts
from optuna_gpbandit.samplers._multi import (check_objectives, check_single_objective,
                                            multi_record, scalarised_choice, trial_weights)
from optuna_gpbandit.samplers._record import StepRecord
from optuna_gpbandit.samplers._settings import (ConstraintsArg, ConstraintsFunc,
                                               check_independent_sampler, resolve_settings)

_logger = get_logger(__name__)


# The floor of GP-UCB's, GP-TS's and IGP-UCB's objective models' noise (docs/benchmarks.md,
# "The noise floor", "GP-TS's noise floor" and "IGP-UCB's noise floor"); the constraint
# models, change detection and ConstrainedGPUCBSampler keep gp.fit.MIN_NOISE_VAR.
FINE_NOISE_FLOOR = 1e-10


@document
class GPBanditSampler(BaseSampler, abc.ABC):
    """Base class of the GP bandit samplers (not used directly).

    Parameters
    ----------
    <common parameters>
    <settings parameters>
    """

    def __new__(cls, *args: Any, **kwargs: Any) -> GPBanditSampler:
        # the user's arguments, before Python's "unexpected keyword argument" speaks: errors
        # that name the settings object and field, or the right argument (samplers/_door.py)
        check_arguments(cls, kwargs)
        return super().__new__(cls)

    def __init__(
        self,
        *,
        seed: int | None = None,
        independent_sampler: BaseSampler | None = None,
        n_startup_trials: int | None = None,
        deterministic_objective: bool | None = None,
        constraints_func: ConstraintsFunc | None = None,
        warn_independent_sampling: bool = True,
        model: GPModel = GPModel(),
        search: AcquisitionSearch = AcquisitionSearch(),
        pending: PendingRule = Hallucinate(),
        failures: FailedTrials = FailedTrials(),
        reset: Reset | None = NoReset(),
        constraints: ConstraintsArg = "auto",
        scalarization: str = "chebyshev",
    ) -> None:
        seed = check_seed(seed)
        self._settings = resolve_settings(
            n_startup_trials=n_startup_trials, deterministic_objective=deterministic_objective,
            constraints_func=constraints_func,
            warn_independent_sampling=warn_independent_sampling, model=model, search=search,
            pending=pending, failures=failures, reset=reset, constraints=constraints,
            scalarization=scalarization, noise_floor=self._noise_floor)
        self._seed = _randomness.fresh_seed() if seed is None else seed
        self._user_seed = seed is not None
        independent_sampler = check_independent_sampler(independent_sampler)
        self._own_independent = independent_sampler is None
        self._independent_sampler = independent_sampler or _randomness.TrialSeededRandomSampler(
            self._seed)

    # ---------------------------------------------------------------- Optuna interface
    def reseed_rng(self) -> None:
        """Reseed the independent sampler; draw a new seed unless the user fixed one (per-trial
        streams already differ between trials, so threads need no reseeding)."""
        if not self._user_seed:
            self._seed = _randomness.fresh_seed()
            if self._own_independent:
                self._independent_sampler = _randomness.TrialSeededRandomSampler(self._seed)
        self._independent_sampler.reseed_rng()

    def infer_relative_search_space(self, study: Study,
                                    trial: FrozenTrial) -> dict[str, BaseDistribution]:
        # The union of the parameters of COMPLETE trials: a define-by-run objective's branches
        # are modelled too (the intersection, when every trial uses the same parameters).
        return study_search_space(study)

    def before_trial(self, study: Study, trial: FrozenTrial) -> None:
        self._independent_sampler.before_trial(study, trial)
        self._settings.reset.before_trial(study, trial)

    def sample_relative(
        self, study: Study, trial: FrozenTrial, search_space: dict[str, BaseDistribution]
    ) -> dict[str, Any]:
        self._check_objectives(study)
        if not search_space:
            return {}
        # Many small BLAS calls: threads only contend (with each other, with other workers).
        with single_threaded_blas():
            return self._sample_relative(study, trial, search_space)

    def _sample_relative(
        self, study: Study, trial: FrozenTrial, search_space: dict[str, BaseDistribution]
    ) -> dict[str, Any]:
        space = study_encoded_space(study, search_space)
        pending = self._settings.pending
        for round_ in range(MAX_ROUNDS):
            history = collect_history(study, search_space, trial, pending.stale_after,
                                      space.conditional)
            x, record = self._choose(study, trial, space, history)
            params = space.decode(x)
            stamp = write_sampled_params(study, trial, params, search_space, rewrite=round_ > 0)
            if record is None:  # a startup point: distinct per trial number
                return params
            record.rounds = round_ + 1
            if not pending.sees_pending or not taken_meanwhile(study, space, history, x, stamp):
                write_trial_json(study, trial, STATE, record.to_json())
                self._settings.reset.after_record(study, trial, record)
                return params
            _logger.debug("Trial %d: a concurrent trial took the same point; choosing again.",
                          trial.number)
        # Still taken after every round (many workers converging at once): a quasi-random point,
        # distinct per trial number.
        params = space.decode(self._startup_point(space, trial.number))
        write_sampled_params(study, trial, params, search_space, rewrite=True)
        return params

    def _choose(self, study: Study, trial: FrozenTrial, space: EncodedSpace,
                history: History) -> tuple[np.ndarray, StepRecord | None]:
        """The encoded next point and its record (``None`` for a start-up point): the stages
        of one suggestion, for one objective or several (then ``k`` models)."""
        s, name = self._settings, type(self).__name__
        view = s.reset.view(study, trial, space, history, self._seed, name)
        if view.uniform is not None:  # an exploration trial of the change detector
            return view.uniform, None
        history = view.history
        n_startup = startup_count(s.n_startup_trials, space.prior_dim)
        search = s.search.for_space(space)
        x = startup_stage(space, history, trial.number, self._seed, n_startup,
                          s.reset.fresh_startup, view.start, centre=search.starts_at_centre)
        if x is not None:
            return x, None
        history, failed = s.failures.rows(study, trial, history)
        step = s.constraints.step(
            auto=s.auto_constraints, study=study, trial=trial, space=space, history=history,
            start=view.start, model=s.model, seed=self._seed, sampler_name=name,
            n_startup_trials=n_startup)
        if step.startup:
            return self._startup_point(space, trial.number), None
        history = step.history
        design = s.pending.design(study, trial, history)
        ctxs = fit_contexts(study, trial, space, history, design, failed, step, view, s,
                            search, self._seed, n_startup)
        if ctxs is None:
            return self._startup_point(space, trial.number), None
        x, record = self._decide(ctxs, history, step.feasibility)
        record.reset, record.constraints = view.record, step.record
        record.penalised, record.pending = step.penalised, design.counts()
        if ctxs[0].box is not None:
            record.trust_region = ctxs[0].box.side
        record.extra = s.reset.annotate(view, history, ctxs[0].gp.posterior, space,
                                        self._seed)
        return x, record

    def _decide(self, ctxs: list[SelectionContext], history: History,
                feasibility: ConstraintModels | None) -> tuple[np.ndarray, StepRecord]:
        """The acquisition's maximiser (the sampler's own, or a scalarisation of the
        objectives' ones), or a step toward feasibility; with the step's record."""
        ctx, multi = ctxs[0], len(ctxs) > 1
        weights = trial_weights(self._seed, ctx.trial.number, len(ctxs)) if multi else None
        scalarization = self._settings.scalarization
        if feasibility is not None and not any_admitted(feasibility, ctx.space, ctx):
            x, terms = toward_feasibility(feasibility, ctx)
        elif weights is not None:  # multi
            x, terms = scalarised_choice(ctxs, history, weights, scalarization,
                                         self._acquisition)
        else:
            x, terms = self._select(ctx)
        point = (multi_record(ctxs, x, weights, scalarization) if weights is not None  # multi
                 else ctx.step_record(x))
        return x, StepRecord(point, terms)

    def sample_independent(
        self,
        study: Study,
        trial: FrozenTrial,
        param_name: str,
        param_distribution: BaseDistribution,
    ) -> Any:
        self._check_objectives(study)
        s = self._settings
        if s.warn_independent_sampling and trial.number > 0:
            done = completed_trials(study)  # read once: the count and the dimension
            dim = 0 if s.n_startup_trials is not None else trials_prior_dim(done)
            if len(done) >= startup_count(s.n_startup_trials, dim):
                # once per study at WARNING (Optuna's samplers say it at every such parameter)
                said = log_once(study, "independent-sampling", WARNING,
                                "Trial %d: parameter %r is outside the relative search space "
                                "of %s; it is sampled by %s. Later parameters of this kind are "
                                "logged at DEBUG; warn_independent_sampling=False silences "
                                "this.", trial.number, param_name, type(self).__name__,
                                type(self._independent_sampler).__name__)
                if not said:
                    _logger.debug("Trial %d: parameter %r is sampled by %s.", trial.number,
                                  param_name, type(self._independent_sampler).__name__)
        return self._independent_sampler.sample_independent(study, trial, param_name,
                                                            param_distribution)

    def after_trial(
        self,
        study: Study,
        trial: FrozenTrial,
        state: TrialState,
        values: Sequence[float] | None,
    ) -> None:
        if self._settings.constraints_func is not None:
            _process_constraints_after_trial(self._settings.constraints_func, study, trial,
                                             state)
        self._settings.pending.record_finish(study, trial)
        self._independent_sampler.after_trial(study, trial, state, values)

    # ---------------------------------------------------------------- change detection
    def change_points(self, study: Study) -> list[int]:
        """Trial numbers at which a change was detected (empty without
        ``reset=ChangeDetection(...)``). The model sees only trials after the last one."""
        return list(self._settings.reset.current_segment(study)[1])

    def current_best_trial(self, study: Study) -> FrozenTrial | None:
        """The best COMPLETE trial since the last detected change (``None`` if none yet).

        ``study.best_trial`` keeps a value observed before a change, under the old objective;
        with ``reset=ChangeDetection(...)`` use this instead. Without it, this is the best
        trial of the study.
        """
        check_single_objective(study)
        start, _, trials = self._settings.reset.current_segment(study)
        done = [t for t in trials if t.state == TrialState.COMPLETE and t.number >= start]
        if not done:
            return None
        sign = direction_sign(study.direction)

        def rank(t: FrozenTrial) -> tuple[float, int]:
            assert t.value is not None  # COMPLETE, single objective
            return sign * t.value, -t.number

        return max(done, key=rank)

    # ---------------------------------------------------------------- pipeline hooks
    def _select(self, ctx: SelectionContext) -> tuple[np.ndarray, dict[str, Any]]:
        """The encoded next point and the acquisition's terms for the record (e.g. the beta
        used): by default the maximiser of the sampler's :meth:`_acquisition`."""
        acq, terms = self._acquisition(ctx)
        return ctx.maximise(acq), terms

    @abc.abstractmethod
    def _acquisition(self, ctx: SelectionContext) -> tuple[Any, dict[str, Any]]:
        """The objective's acquisition in ``ctx`` as a function (``values``, ``value_grad``)
        and its record: what ``_select`` maximises and a multi-objective study scalarises."""

    def _startup_point(self, space: EncodedSpace, number: int) -> np.ndarray:
        return space.sobol_point(number, self._seed)

    # Samplers whose acquisition random scalarisations combine (Paria et al.): True there.
    _multi_objective = False

    # The objective model's noise floor where GPModel(noise_floor=None) leaves it to the sampler
    # (None: the model's own, gp.fit.MIN_NOISE_VAR, as ConstrainedGPUCBSampler's).
    _noise_floor: float | None = FINE_NOISE_FLOOR

    def _check_objectives(self, study: Study) -> None:
        """Raise for a multi-objective study this sampler (or its settings) cannot serve."""
        check_objectives(study, type(self).__name__, self._multi_objective,
                         reset=self._settings.reset, constraints=self._settings.constraints)
