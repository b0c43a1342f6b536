"""The shared sampling pipeline; concrete samplers only choose the next point.

``sample_relative``: study history (completed, pending, failed trials) -> design with censored
and imputed rows -> observations -> GP posterior -> ``_select`` (acquisition + maximiser, per
sampler) -> decoded params. Two JSON records go to the trial's system attrs: ``gpbandit:params`` (the sampled point,
so other workers see it while the trial runs) and ``gpbandit:state`` (t, exploration weight,
posterior at the chosen point, information gain, pending counts, hyperparameters).

Concurrent workers may pick the same point at the same moment: see ``_concurrency``.
"""

from __future__ import annotations

import abc
import dataclasses
import math
from typing import Any, Callable, Sequence

import numpy as np
import optuna
from optuna.distributions import BaseDistribution
from optuna.logging import get_logger
from optuna.samplers import BaseSampler
from optuna.samplers._base import _process_constraints_after_trial
from optuna.study import Study
from optuna.trial import FrozenTrial, TrialState

from optuna_gpbandit import _failures, _pending, _randomness, _row_effects
from optuna_gpbandit._arguments import check_bool, check_int, check_number, check_seed
from optuna_gpbandit._pending import Censoring, resolve_pending
from optuna_gpbandit._history import History, collect_history, write_sampled_params
from optuna_gpbandit._notices import WARNING, log_once
from optuna_gpbandit._model import STATE_KEY, FittedModel, GPConfig, fit_model, latest_state
from optuna_gpbandit._restarts import (RESTART_PATIENCE, UNEXPLORED_KEY, restart_stage,
                                       unexplored)
from optuna_gpbandit._observations import (Observations, build_observations, limit_rows,
                                          oriented_values, standardization)
from optuna_gpbandit._space import EncodedSpace
from optuna_gpbandit._storage import write_trial_json
from optuna_gpbandit._threads import single_threaded_blas
from optuna_gpbandit.changepoint import ChangeDetection
from optuna_gpbandit.constraints import (CONSTRAINTS_KEY, DIAGNOSTICS_KEY, ConstraintModels,
                                         FeasibleConstraints, LongTermConstraints,
                                         trial_constraints)
from optuna_gpbandit.gp.fit import MIN_NOISE_VAR
from optuna_gpbandit.gp.posterior import NumericalError
from optuna_gpbandit._maximize import maximize_acquisition
from optuna_gpbandit.acquisition.scalarize import check_scalarization
from optuna_gpbandit.samplers._concurrency import MAX_ROUNDS, taken_meanwhile
from optuna_gpbandit.samplers._context import (SelectionContext, any_admitted, deterministic,
                                              exclusion, log_repeats, toward_feasibility)
from optuna_gpbandit.samplers._docs import document
from optuna_gpbandit.samplers._multi import choose_multi
from optuna_gpbandit.samplers._segments import SegmentsMixin

# Up to this many constraints, every trial's records hold all multipliers.
FULL_MULTIPLIER_RECORD = 20
_logger = get_logger(__name__)


@document
class GPBanditSampler(SegmentsMixin, BaseSampler, abc.ABC):
    """Base class of the GP bandit samplers (not used directly).

    Parameters
    ----------
    <common parameters>
    <restarts parameters>
    """

    def __init__(
        self,
        *,
        seed: int | None = None,
        n_startup_trials: int = 5,
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
    ) -> None:
        seed = check_seed(seed)
        self._scalarization = check_scalarization(scalarization)
        self._seed = int(np.random.SeedSequence().entropy % (2**31)) if seed is None else seed
        self._user_seed = seed is not None
        self._n_startup_trials = check_int("n_startup_trials", n_startup_trials, 0)
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
        if not (constraints is None or (isinstance(constraints, str) and constraints == "auto")
                or isinstance(constraints, (LongTermConstraints, FeasibleConstraints))):
            raise ValueError(
                "constraints must be 'auto', None, or a FeasibleConstraints or "
                f"LongTermConstraints instance, got {constraints!r}."
            )
        if constraints_func is not None and not callable(constraints_func):
            raise ValueError("constraints_func must be callable.")
        # "auto" (GPSampler's meaning): the best feasible point once trials report constraint
        # values, quietly nothing before; constraints_func asks for constraints explicitly.
        self._auto_constraints = constraints == "auto" and constraints_func is None
        if constraints == "auto" or (constraints is None and constraints_func is not None):
            constraints = FeasibleConstraints()
        self._constraints = constraints
        self._constraints_func = constraints_func
        if change_detection is not None and not isinstance(change_detection, ChangeDetection):
            raise ValueError(
                f"change_detection must be a ChangeDetection instance, got {change_detection!r}."
            )
        self._change_detection = change_detection
        self._restarts = check_bool("restarts", restarts)
        if self._restarts and change_detection is not None:
            raise ValueError("restarts=True and change_detection both reset the history the model "
                             "sees: pass one of them.")
        self._deterministic = check_bool("deterministic_objective", deterministic_objective)
        if self._deterministic:
            if noise_var is not None:
                raise ValueError("Pass either deterministic_objective=True or noise_var, not both.")
            noise_var = MIN_NOISE_VAR
        self._gp_config = GPConfig(
            kernel=kernel,
            lengthscale=lengthscale,
            kernel_scale=kernel_scale,
            noise_var=noise_var,
            refit_growth=refit_growth,
            max_fit_points=max_fit_points,
        )
        self._standardize = check_bool("standardize", standardize)
        self._max_posterior_points = (
            None if max_posterior_points is None
            else check_int("max_posterior_points", max_posterior_points, 2)
        )
        self._n_candidates = check_int("n_candidates", n_candidates, 1)
        self._n_local_search = check_int("n_local_search", n_local_search, 0)
        self._warn_independent_sampling = check_bool(
            "warn_independent_sampling", warn_independent_sampling
        )
        self._search_space = optuna.search_space.IntersectionSearchSpace()

    # ---------------------------------------------------------------- Optuna interface
    def reseed_rng(self) -> None:
        """Reseed the independent sampler; draw a new seed unless the user fixed one.

        Per-trial streams already differ between trials, so threads need no reseeding.
        """
        if not self._user_seed:
            self._seed = int(np.random.SeedSequence().entropy % (2**31))
            if self._own_independent:
                self._independent_sampler = _randomness.TrialSeededRandomSampler(self._seed)
        self._independent_sampler.reseed_rng()

    def infer_relative_search_space(
        self, study: Study, trial: FrozenTrial
    ) -> dict[str, BaseDistribution]:
        return {
            name: dist
            for name, dist in self._search_space.calculate(study).items()
            if not dist.single()
        }

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
        space = EncodedSpace(search_space)
        for round_ in range(MAX_ROUNDS):
            history = collect_history(study, search_space, trial, self._stale_after)
            x, record = self._choose(study, trial, space, history)
            params = space.decode(x)
            stamp = write_sampled_params(study, trial, params, search_space, rewrite=round_ > 0)
            if record is None:  # a startup point: distinct per trial number
                return params
            record["rounds"] = round_ + 1
            if self._pending_mode == "ignore" or not taken_meanwhile(
                study, space, history, x, stamp
            ):
                write_trial_json(study, trial, STATE_KEY, record)
                if self._change_detection is not None and not record.get("penalised"):
                    self._change_detection.store_prediction(
                        study, trial, record["mu"], record["pred_sd"],
                        record.get("segment_start", 0), record["n_observed"], record["y_scale"])
                return params
            _logger.debug(
                "Trial %d: a concurrent trial took the same point; choosing again.", trial.number
            )
        # Still taken after every round (many workers converging at once): a quasi-random point,
        # distinct per trial number.
        params = space.decode(self._startup_point(space, trial.number))
        write_sampled_params(study, trial, params, search_space, rewrite=True)
        return params

    def _no_constraint_data(self, study: Study, trials: Sequence[FrozenTrial]) -> None:
        if len(trials) >= max(self._n_startup_trials, 1):
            n_empty = sum(1 for t in trials if t.system_attrs.get(CONSTRAINTS_KEY) in ([], ()))
            log_once(study, "no-constraints", WARNING,
                     "%s: none of the %d completed trials reports constraint values "
                     "(trial.set_constraint(name, value) or constraints_func)%s; the "
                     "constraint stage does nothing until one does.",
                     type(self).__name__, len(trials),
                     f"; constraints_func returned an empty sequence for {n_empty} of them"
                     if n_empty else "")

    def _fit_feasibility(self, study: Study, counted: list[FrozenTrial], space: EncodedSpace,
                         extra: dict[str, Any]) -> ConstraintModels | None:
        """The constraint GPs of :class:`FeasibleConstraints` on the ``counted`` trials (``None``
        without constraint data), with their record and notices."""
        assert isinstance(self._constraints, FeasibleConstraints)
        feasibility, skipped = self._constraints.fit(counted, space, self._gp_config.kernel,
                                                     self._seed)
        if skipped:  # once at 1, 2, 4, 8, ... skipped trials: counts without a flood
            log_once(study, f"constraint-skipped-{len(skipped).bit_length()}", WARNING,
                     "%s: %d trial(s) skipped by the constraint models (unusable "
                     "constraint data; on_missing='skip'): %s", type(self).__name__,
                     len(skipped), "; ".join(k.message for k in skipped[:5])
                     + (" ..." if len(skipped) > 5 else ""))
        if feasibility is not None or not self._auto_constraints:  # quiet when unused
            extra["feasibility"] = {
                "constraints": 0 if feasibility is None else len(feasibility.models),
                "warped": 0 if feasibility is None else sum(feasibility.warped)}
        if not self._auto_constraints and not any(trial_constraints(t)[0] for t in counted):
            self._no_constraint_data(study, counted)
        return feasibility

    def _choose(
        self, study: Study, trial: FrozenTrial, space: EncodedSpace, history: History
    ) -> tuple[np.ndarray, dict[str, Any] | None]:
        """The encoded next point and its record (``None`` for a startup point)."""
        targets, extra = None, {}
        start, streak = 0, 0
        if self._change_detection is not None:
            history, start, uniform = self._segment_history(study, trial, space, history, extra)
            if uniform is not None:
                return uniform, None
        elif self._restarts:
            history, start, streak = restart_stage(study, history, type(self).__name__, extra)
        if not history.completed or (len(history.completed) < self._n_startup_trials
                                     and (start == 0 or self._restarts)):
            return self._startup_point(space, trial.number), None
        failed = _failures.failed_rows(history, study.directions[0])  # (MO trials cannot prune)
        _failures.report(study, trial, failed, self._failures)
        noise_factor, delta_factor = 1.0, 1.0
        feasibility = None
        if isinstance(self._constraints, FeasibleConstraints):
            feasibility = self._fit_feasibility(
                study, [t for t in history.completed if t.number >= start], space, extra)
        elif self._constraints is not None:
            stage = self._constraints.prepare([
                t for t in history.all_trials
                if t.number >= start and all(n in t.params for n in space.names)
            ])
            if not stage.trials:  # history="epoch" at the start of an epoch: a fresh start
                return self._startup_point(space, trial.number), None
            history = dataclasses.replace(history, completed=list(stage.trials))
            extra["penalised"] = True  # the model predicts penalised targets, not values
            y = oriented_values(history.completed, study.direction)
            targets = dict(zip(stage.numbers.tolist(), stage.targets(y).tolist()))
            if stage.state.m:  # no constraint data yet: the plain sampler on f
                noisy = stage.state.variant == "noisy"
                noise_factor = stage.state.noise_factor
                delta_factor = 1.0 / ((2.0 if noisy else 1.0) * stage.n_epochs)
            else:
                self._no_constraint_data(study, stage.trials)
            full = stage.state.to_json()
            small = stage.state.m <= FULL_MULTIPLIER_RECORD
            extra["multipliers"] = full if small else stage.state.summary_json()
            # Multipliers change only between epochs: with many constraints, the first trial of
            # an epoch holds them all, the others a summary (nothing here is read back).
            write_trial_json(study, trial, DIAGNOSTICS_KEY,
                             full if small or stage.state.position == 0
                             else extra["multipliers"])
        design = _pending.pending_stage(study, trial, history, self._pending_mode,
                                          self._censoring)
        extra["pending"] = design.counts()
        if study._is_multi_objective():
            return choose_multi(self, study, trial, space, history, design, failed, feasibility,
                                extra)
        obs = build_observations(
            history.completed, space, study.direction, self._standardize, design=design,
            hallucinate=self._pending_mode == "hallucinate",
            lower_bound=self._censoring.lower_bound, targets=targets,
            failed=failed if self._failures == "impute" else None,
            scale_floor=self._study_spread(history, study) if start > 0 else None,
        )
        if obs.n_observed >= 2 and np.ptp(obs.y_raw) == 0.0:
            # Nothing to model (a constant objective, or a broken one): a GP would fit infinite
            # lengthscales and UCB would bounce between corners. Space-filling points instead.
            _logger.info(
                "Trial %d: all %d observed values are equal (%g); sampling a quasi-random point.",
                trial.number, obs.n_observed, obs.sign * obs.y_raw[0],
            )
            return self._startup_point(space, trial.number), None
        fitted = self._capped_model(obs, space, trial,
                                    latest_state(history.all_trials, trial.number))
        if fitted is None:
            return self._startup_point(space, trial.number), None
        obs, model = fitted
        bonus = _row_effects.width_bonus(obs, model.posterior, self._censoring)
        rng = _randomness.trial_rng(self._seed, trial.number, _randomness.SAMPLE)
        pending_X = exclusion(obs, model, space, history, failed,
                              None if feasibility is None else feasibility.infeasible)
        if not deterministic(model):
            log_repeats(study, trial, obs, model)
        ctx = SelectionContext(study, trial, space, obs, model, rng, bonus, noise_factor,
                               delta_factor, pending_X, feasibility)
        if feasibility is not None and not any_admitted(feasibility, space, ctx):
            x, record = toward_feasibility(feasibility, ctx, self._n_candidates,
                                           self._n_local_search)
        else:
            x, record = self._select(ctx)
        record.update(ctx.step_record(x))
        record.update(extra)
        if self._restarts and streak + len(history.pending) >= RESTART_PATIENCE - 1:
            # This trial may complete a settled streak: record what the model has not seen.
            record[UNEXPLORED_KEY] = unexplored(model.posterior, space, self._seed)
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
            n_complete = len(study._get_trials(deepcopy=False, states=(TrialState.COMPLETE,)))
            if n_complete >= self._n_startup_trials:
                _logger.warning(
                    "Trial %d: parameter %r is outside the relative search space of %s; it is "
                    "sampled by %s.",
                    trial.number, param_name, type(self).__name__,
                    type(self._independent_sampler).__name__,
                )
        return self._independent_sampler.sample_independent(
            study, trial, param_name, param_distribution
        )

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

    @abc.abstractmethod
    def _select(self, ctx: SelectionContext) -> tuple[np.ndarray, dict[str, Any]]:
        """Return the encoded next point and a record of the step (e.g. the beta used)."""

    def _capped_model(self, obs: Observations, space: EncodedSpace, trial: FrozenTrial,
                      previous: dict | None,
                      what: str = "the GP") -> tuple[Observations, FittedModel] | None:
        """``obs`` cut to ``max_posterior_points`` rows and the GP fitted on them; ``None``
        (logged, naming ``what``) when the GP cannot be factorised."""
        obs = limit_rows(obs, self._max_posterior_points,
                         _randomness.trial_rng(self._seed, trial.number, _randomness.SUBSET),
                         space.is_categorical)
        try:
            return obs, self._fit(obs, space, previous)
        except NumericalError:
            _logger.warning("Trial %d: %s could not be factorised; sampling a quasi-random "
                            "point.", trial.number, what)
            return None

    def _acquisition(self, ctx: SelectionContext) -> tuple[Any, dict[str, Any]]:
        """The objective's acquisition in ``ctx`` as a function (``values``, ``value_grad``)
        and its record; what a multi-objective study scalarises (samplers that support
        several objectives)."""
        raise NotImplementedError

    def _maximise(self, ctx: SelectionContext, acq: Any,
                  warm_starts: np.ndarray | None = None) -> np.ndarray:
        """The encoded maximiser of ``acq`` within the constraints and exclusions of ``ctx``,
        started also from ``warm_starts`` (default: ``ctx.warm_starts()``)."""
        x, _ = maximize_acquisition(
            ctx.within_constraints(acq), ctx.space, ctx.rng, n_candidates=self._n_candidates,
            n_local_search=self._n_local_search,
            warm_starts=ctx.warm_starts() if warm_starts is None else warm_starts,
            exclude=ctx.pending_X,
        )
        return x

    # ---------------------------------------------------------------- helpers
    @staticmethod
    def _study_spread(history: History, study: Study) -> float | None:
        """Standardising scale of every completed trial of the study (before and after change
        points): the objective's amplitude, still true after a change [design choice]."""
        done = [t for t in history.all_trials
                if t.state == TrialState.COMPLETE and t.value is not None]
        if len(done) < 2:
            return None
        y = oriented_values(done, study.direction)
        return standardization(y[np.isfinite(y)])[1]

    def _startup_point(self, space: EncodedSpace, number: int) -> np.ndarray:
        return space.sobol_point(number, self._seed)

    # Samplers whose acquisition random scalarisations combine (Paria et al.): True there.
    _multi_objective = False

    def _check_objectives(self, study: Study) -> None:
        """Raise for a multi-objective study this sampler (or its settings) cannot serve."""
        if not study._is_multi_objective():
            return
        k = len(study.directions)
        if not self._multi_objective:
            raise ValueError(
                f"{type(self).__name__} supports single-objective studies only; this study has "
                f"{k} objectives (GPUCBSampler, IGPUCBSampler and GPTSSampler support several)."
            )
        if self._change_detection is not None:
            raise ValueError(f"change_detection supports single-objective studies only; this "
                             f"study has {k} objectives.")
        if self._restarts:
            raise ValueError(f"restarts=True supports single-objective studies only; this study "
                             f"has {k} objectives.")
        if isinstance(self._constraints, LongTermConstraints):
            raise ValueError(
                f"constraints=LongTermConstraints(...) supports single-objective studies only; "
                f"this study has {k} objectives. constraints='auto' (the default) keeps each "
                "trial to the points the constraint models admit."
            )

    @staticmethod
    def _check_single_objective(study: Study) -> None:
        if study._is_multi_objective():
            raise ValueError(
                "optuna_gpbandit samplers support single-objective studies only; this study has "
                f"{len(study.directions)} objectives."
            )
