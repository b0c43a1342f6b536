"""The suggestion pipeline every sampler runs; concrete samplers only choose the next point.

``_choose`` reads top to bottom, one stage a line: study history (``_history``; the union
search space and its branches, ``_conditional``) -> segment (change points, ``changepoint/``, or
restarts, ``_restarts``; start-up points, also per branch) -> failed rows (``_failures``) ->
constraints (``_constraint_step``) -> pending rows (``_pending``) -> observations and one GP per
objective (``_observations``, ``_model``) -> what the maximiser avoids (``_context``) -> the
acquisition's maximiser (the sampler's ``_select``, or a scalarisation, ``_multi``) -> record.
Stored: ``gpbandit:params`` (the point, seen by other workers while the trial runs) and
``gpbandit:state`` (the step's record); two workers taking one point: ``_concurrency``.
"""

from __future__ import annotations

import abc
import dataclasses
import math
from typing import Any, Callable, Sequence

import numpy as np
from optuna.distributions import BaseDistribution
from optuna.logging import get_logger
from optuna.samplers import BaseSampler
from optuna.samplers._base import _process_constraints_after_trial
from optuna.study import Study
from optuna.trial import FrozenTrial, TrialState

from optuna_gpbandit import _failures, _pending, _randomness, _row_effects
from optuna_gpbandit._conditional import (branch_startup_point, completed_trials, startup_point,
                                          study_encoded_space, study_search_space,
                                          trials_prior_dim)
from optuna_gpbandit._arguments import check_bool, check_int, check_number, check_seed
from optuna_gpbandit._failures import FailedRow
from optuna_gpbandit._pending import Censoring, Design, resolve_pending
from optuna_gpbandit._history import History, collect_history, write_sampled_params
from optuna_gpbandit._model import (FittedModel, GPConfig, capped_fit, fit_model,
                                    latest_state)
from optuna_gpbandit._restarts import (RESTART_PATIENCE, UNEXPLORED_KEY, restart_stage,
                                       unexplored)
from optuna_gpbandit._observations import Observations, build_observations, study_spread
from optuna_gpbandit._space import EncodedSpace
from optuna_gpbandit._startup import startup_count
from optuna_gpbandit._storage import STATE, write_trial_json
from optuna_gpbandit._threads import single_threaded_blas
from optuna_gpbandit.changepoint import ChangeDetection
from optuna_gpbandit.constraints import (ConstraintModels, FeasibleConstraints,
                                         LongTermConstraints)
from optuna_gpbandit.gp.fit import MIN_NOISE_VAR
from optuna_gpbandit._maximize import maximize_acquisition
from optuna_gpbandit.acquisition.scalarize import check_scalarization
from optuna_gpbandit.samplers._concurrency import MAX_ROUNDS, taken_meanwhile
from optuna_gpbandit.samplers._context import (SelectionContext, any_admitted, deterministic,
                                              exclusion, log_repeats, toward_feasibility)
from optuna_gpbandit.samplers._docs import document
from optuna_gpbandit.samplers._constraint_step import (ConstraintStep, constraint_step,
                                                      resolve_constraints)
from optuna_gpbandit.samplers._multi import (check_objectives, check_single_objective,
                                            multi_record, objective_targets, scalarised_choice,
                                            stored_states, trial_weights)
from optuna_gpbandit.samplers._segments import SegmentsMixin

_logger = get_logger(__name__)


@document
class GPBanditSampler(SegmentsMixin, BaseSampler, abc.ABC):
    """Base class of the GP bandit samplers (not used directly).

    Parameters
    ----------
    <common parameters>
    <restarts parameters>
    <warping parameters>
    <input_warping parameters>
    """

    def __init__(
        self,
        *,
        seed: int | None = None,
        n_startup_trials: int | None = None,
        independent_sampler: BaseSampler | None = None,
        deterministic_objective: bool = False,
        kernel: str = "matern52",
        lengthscale: float | Sequence[float] | None = None,
        kernel_scale: float | None = None,
        noise_var: float | None = None,
        standardize: bool = True,
        n_candidates: int = 1024,
        n_local_search: int = 5,
        refit_growth: float = 0.05,
        max_fit_points: int = 256,
        max_posterior_points: int | None = 1500,
        warn_independent_sampling: bool = True,
        pending: str | Censoring = "hallucinate",
        stale_after: float | None = None,
        constraints: FeasibleConstraints | LongTermConstraints | str | None = "auto",
        constraints_func: Callable[[FrozenTrial], Sequence[float]] | None = None,
        change_detection: ChangeDetection | None = None,
        failures: str = "impute",
        scalarization: str = "chebyshev",
        restarts: bool = False,
        output_warping: bool = True,
        input_warping: bool = True,
    ) -> None:
        seed = check_seed(seed)
        self._scalarization = check_scalarization(scalarization)
        self._seed = int(np.random.SeedSequence().entropy % (2**31)) if seed is None else seed
        self._user_seed = seed is not None
        self._n_startup_trials = (None if n_startup_trials is None
                                  else check_int("n_startup_trials", n_startup_trials, 0))
        self._failures = _failures.check_failures(failures)
        if independent_sampler is not None and not isinstance(independent_sampler, BaseSampler):
            raise ValueError(
                f"independent_sampler must be an Optuna sampler, got {independent_sampler!r}."
            )
        self._own_independent = independent_sampler is None
        self._independent_sampler = independent_sampler or _randomness.TrialSeededRandomSampler(
            self._seed
        )
        self._pending_mode, self._censoring = resolve_pending(pending)
        self._stale_after = (
            stale_after if stale_after is None or stale_after == math.inf
            else check_number("stale_after", stale_after)
        )
        self._constraints, self._auto_constraints = resolve_constraints(constraints,
                                                                        constraints_func)
        self._constraints_func = constraints_func
        if change_detection is not None and not isinstance(change_detection, ChangeDetection):
            raise ValueError(
                f"change_detection must be a ChangeDetection instance, got {change_detection!r}."
            )
        self._change_detection = change_detection
        self._restarts = check_bool("restarts", restarts)
        self._output_warping = check_bool("output_warping", output_warping)
        if self._restarts and change_detection is not None:
            raise ValueError("restarts=True and change_detection both reset the history the model "
                             "sees: pass one of them.")
        self._deterministic = check_bool("deterministic_objective", deterministic_objective)
        if self._deterministic:
            if noise_var is not None:
                raise ValueError("Pass either deterministic_objective=True or noise_var, not both.")
            noise_var = MIN_NOISE_VAR
        self._gp_config = GPConfig(
            kernel=kernel, lengthscale=lengthscale, kernel_scale=kernel_scale, noise_var=noise_var,
            refit_growth=refit_growth, max_fit_points=max_fit_points,
            input_warping=check_bool("input_warping", input_warping),
        )
        self._standardize = check_bool("standardize", standardize)
        self._max_posterior_points = (
            None if max_posterior_points is None
            else check_int("max_posterior_points", max_posterior_points, 2)
        )
        self._n_candidates = check_int("n_candidates", n_candidates, 1)
        self._n_local_search = check_int("n_local_search", n_local_search, 0)
        self._warn_independent_sampling = check_bool("warn_independent_sampling",
                                                     warn_independent_sampling)

    # ---------------------------------------------------------------- Optuna interface
    def reseed_rng(self) -> None:
        """Reseed the independent sampler; draw a new seed unless the user fixed one (per-trial
        streams already differ between trials, so threads need no reseeding)."""
        if not self._user_seed:
            self._seed = int(np.random.SeedSequence().entropy % (2**31))
            if self._own_independent:
                self._independent_sampler = _randomness.TrialSeededRandomSampler(self._seed)
        self._independent_sampler.reseed_rng()

    def infer_relative_search_space(self, study: Study,
                                    trial: FrozenTrial) -> dict[str, BaseDistribution]:
        # The union of the parameters of COMPLETE trials: a define-by-run objective's branches
        # are modelled too (the intersection, when every trial uses the same parameters).
        return study_search_space(study)

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
        for round_ in range(MAX_ROUNDS):
            history = collect_history(study, search_space, trial, self._stale_after,
                                      space.conditional)
            x, record = self._choose(study, trial, space, history)
            params = space.decode(x)
            stamp = write_sampled_params(study, trial, params, search_space, rewrite=round_ > 0)
            if record is None:  # a startup point: distinct per trial number
                return params
            record["rounds"] = round_ + 1
            if self._pending_mode == "ignore" or not taken_meanwhile(study, space, history, x,
                                                                     stamp):
                write_trial_json(study, trial, STATE, record)
                if self._change_detection is not None and not record.get("penalised"):
                    self._change_detection.store_prediction(
                        study, trial, record["mu"], record["pred_sd"],
                        record.get("segment_start", 0), record["n_observed"], record["y_scale"])
                return params
            _logger.debug("Trial %d: a concurrent trial took the same point; choosing again.",
                          trial.number)
        # Still taken after every round (many workers converging at once): a quasi-random point,
        # distinct per trial number.
        params = space.decode(self._startup_point(space, trial.number))
        write_sampled_params(study, trial, params, search_space, rewrite=True)
        return params

    def _choose(
        self, study: Study, trial: FrozenTrial, space: EncodedSpace, history: History
    ) -> tuple[np.ndarray, dict[str, Any] | None]:
        """The encoded next point and its record (``None`` for a start-up point): the stages
        of one suggestion, for one objective or several (then ``k`` models)."""
        extra: dict[str, Any] = {}
        start, streak = 0, 0
        if self._change_detection is not None:  # segment: change points, or restarts
            history, start, uniform = self._segment_history(study, trial, space, history, extra)
            if uniform is not None:
                return uniform, None
        elif self._restarts:
            history, start, streak = restart_stage(study, history, type(self).__name__, extra)
        n_startup = startup_count(self._n_startup_trials, space.prior_dim)
        startup = not history.completed or (len(history.completed) < n_startup
                                            and (start == 0 or self._restarts))
        x = startup_point(space, history, trial.number, self._seed) if startup else (
            branch_startup_point(space, history, trial.number, self._seed))  # (a rare branch)
        if x is not None:
            return x, None
        failed = _failures.failed_rows(history, study.directions[0])  # (MO trials cannot prune)
        _failures.report(study, trial, failed, self._failures)
        step = constraint_step(
            self._constraints, auto=self._auto_constraints, study=study, trial=trial,
            space=space, history=history, start=start, kernel=self._gp_config.kernel,
            seed=self._seed, sampler_name=type(self).__name__,
            n_startup_trials=n_startup)
        if step.startup:
            return self._startup_point(space, trial.number), None
        history = step.history
        extra.update(step.record)
        design = _pending.pending_stage(study, trial, history, self._pending_mode,
                                        self._censoring)
        extra["pending"] = design.counts()
        ctxs = self._contexts(study, trial, space, history, design, failed, step, start)
        if ctxs is None:
            return self._startup_point(space, trial.number), None
        x, record = self._decide(ctxs, history, step.feasibility)
        record.update(extra)
        if self._restarts and streak + len(history.pending) >= RESTART_PATIENCE - 1:
            # This trial may complete a settled streak: record what the model has not seen.
            record[UNEXPLORED_KEY] = unexplored(ctxs[0].model.posterior, space, self._seed)
        return x, record

    def _contexts(self, study: Study, trial: FrozenTrial, space: EncodedSpace, history: History,
                  design: Design, failed: list[FailedRow], step: ConstraintStep,
                  start: int) -> list[SelectionContext] | None:
        """One fitted model per objective on the observations (pending and failed rows
        included), with what the maximiser must avoid; ``None``: a quasi-random point
        instead (nothing to model, or a GP that cannot be factorised)."""
        k = len(study.directions)
        previous = (stored_states(history, trial, k) if k > 1
                    else [latest_state(history.all_trials, trial.number)])
        fitted = []
        for i, direction in enumerate(study.directions):
            obs = build_observations(
                history.completed, space, direction, self._standardize, design=design,
                hallucinate=self._pending_mode == "hallucinate",
                lower_bound=self._censoring.lower_bound if k == 1 else None,
                targets=objective_targets(study, history, i) if k > 1 else step.targets,
                failed=failed if self._failures == "impute" else None,
                scale_floor=study_spread(history.all_trials, study.direction) if start else None,
                warp=self._output_warping and k == 1 and self._change_detection is None)
            if k == 1 and obs.n_observed >= 2 and np.ptp(obs.y_raw) == 0.0:
                # Nothing to model (a constant objective, or a broken one): a GP would fit
                # infinite lengthscales and UCB would bounce between corners.
                _logger.info("Trial %d: all %d observed values are equal (%g); sampling a "
                             "quasi-random point.", trial.number, obs.n_observed,
                             obs.sign * obs.y_raw[0])
                return None
            model = self._capped_model(obs, space, trial, previous[i],
                                       what="the GP" if k == 1 else f"the GP of objective {i}")
            if model is None:
                return None
            fitted.append(model)
        rng = _randomness.trial_rng(self._seed, trial.number, _randomness.SAMPLE)
        ctxs = [SelectionContext(study, trial, space, obs, model, rng,
                                 _row_effects.width_bonus(obs, model.posterior, self._censoring),
                                 step.noise_factor, step.delta_factor,
                                 feasibility=step.feasibility,
                                 n_unresolved=history.n_unresolved) for obs, model in fitted]
        # The least deterministic objective decides whether evaluated points are done.
        noisiest = max(ctxs, key=lambda c: c.model.posterior.effective_noise_var
                       / c.model.posterior.params.scale)
        avoid = exclusion(noisiest.obs, noisiest.model, space, history, failed,
                          None if step.feasibility is None else step.feasibility.infeasible)
        if k == 1 and not deterministic(noisiest.model):
            log_repeats(study, trial, noisiest.obs, noisiest.model)
        return [dataclasses.replace(c, excluded=avoid) for c in ctxs]

    def _decide(self, ctxs: list[SelectionContext], history: History,
                feasibility: ConstraintModels | None) -> tuple[np.ndarray, dict[str, Any]]:
        """The acquisition's maximiser (the sampler's own, or a scalarisation of the
        objectives' ones), or a step toward feasibility; with the step's record."""
        ctx, multi = ctxs[0], len(ctxs) > 1
        weights = trial_weights(self._seed, ctx.trial.number, len(ctxs)) if multi else None
        if feasibility is not None and not any_admitted(feasibility, ctx.space, ctx):
            x, record = toward_feasibility(feasibility, ctx, self._n_candidates,
                                           self._n_local_search)
        elif multi:
            x, record = scalarised_choice(ctxs, history, weights, self._scalarization,
                                          self._acquisition, self._maximise)
        else:
            x, record = self._select(ctx)
        record.update(multi_record(ctxs, x, weights, self._scalarization) if multi
                      else ctx.step_record(x))
        return x, record

    def sample_independent(
        self,
        study: Study,
        trial: FrozenTrial,
        param_name: str,
        param_distribution: BaseDistribution,
    ) -> Any:
        self._check_objectives(study)
        if self._warn_independent_sampling and trial.number > 0:
            done = completed_trials(study)  # read once: the count and the dimension
            dim = 0 if self._n_startup_trials is not None else trials_prior_dim(done)
            if len(done) >= startup_count(self._n_startup_trials, dim):
                _logger.warning("Trial %d: parameter %r is outside the relative search space "
                                "of %s; it is sampled by %s.", trial.number, param_name,
                                type(self).__name__, type(self._independent_sampler).__name__)
        return self._independent_sampler.sample_independent(study, trial, param_name,
                                                            param_distribution)

    def after_trial(
        self,
        study: Study,
        trial: FrozenTrial,
        state: TrialState,
        values: Sequence[float] | None,
    ) -> None:
        if self._constraints_func is not None:
            _process_constraints_after_trial(self._constraints_func, study, trial, state)
        _pending.record_finish(study, trial, self._pending_mode, self._censoring)
        self._independent_sampler.after_trial(study, trial, state, values)

    # ---------------------------------------------------------------- pipeline hooks
    def _fit(self, obs: Observations, space: EncodedSpace, previous: dict | None) -> FittedModel:
        return fit_model(obs, space, self._gp_config, previous, self._seed)

    def _select(self, ctx: SelectionContext) -> tuple[np.ndarray, dict[str, Any]]:
        """The encoded next point and a record of the step (e.g. the beta used): by default the
        maximiser of the sampler's :meth:`_acquisition`."""
        acq, record = self._acquisition(ctx)
        return self._maximise(ctx, acq), record

    def _capped_model(self, obs: Observations, space: EncodedSpace, trial: FrozenTrial,
                      previous: dict | None,
                      what: str = "the GP") -> tuple[Observations, FittedModel] | None:
        """:func:`~optuna_gpbandit._model.capped_fit` with this sampler's cap and fit."""
        rng = _randomness.trial_rng(self._seed, trial.number, _randomness.SUBSET)
        return capped_fit(obs, space, self._max_posterior_points, rng,
                          lambda o: self._fit(o, space, previous), trial.number, what)

    @abc.abstractmethod
    def _acquisition(self, ctx: SelectionContext) -> tuple[Any, dict[str, Any]]:
        """The objective's acquisition in ``ctx`` as a function (``values``, ``value_grad``)
        and its record: what ``_select`` maximises and a multi-objective study scalarises."""

    def _maximise(self, ctx: SelectionContext, acq: Any,
                  warm_starts: np.ndarray | None = None) -> np.ndarray:
        """The encoded maximiser of ``acq`` within the constraints and exclusions of ``ctx``,
        started also from ``warm_starts`` (default: ``ctx.warm_starts()``)."""
        x, _ = maximize_acquisition(
            ctx.within_constraints(acq), ctx.space, ctx.rng, n_candidates=self._n_candidates,
            n_local_search=self._n_local_search,
            warm_starts=ctx.warm_starts() if warm_starts is None else warm_starts,
            exclude=ctx.excluded,
        )
        return x

    def _startup_point(self, space: EncodedSpace, number: int) -> np.ndarray:  # (helpers)
        return space.sobol_point(number, self._seed)

    # Samplers whose acquisition random scalarisations combine (Paria et al.): True there.
    _multi_objective = False

    def _check_objectives(self, study: Study) -> None:
        """Raise for a multi-objective study this sampler (or its settings) cannot serve."""
        check_objectives(study, type(self).__name__, self._multi_objective,
                         change_detection=self._change_detection is not None,
                         restarts=self._restarts,
                         long_term=isinstance(self._constraints, LongTermConstraints))

    _check_single_objective = staticmethod(check_single_objective)
