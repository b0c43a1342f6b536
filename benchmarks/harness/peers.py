"""The peers a user would pick instead of ours, each with its own defaults.

* ``BoTorch``: optuna-integration's ``BoTorchSampler(seed=seed)`` (qLogNEI on BoTorch's
  ``SingleTaskGP``, 10 random start-up trials); ``pip install optuna-integration botorch``.
* ``HEBO``: HEBO 0.3.6 (the NeurIPS 2020 black-box optimisation challenge's winner), sequential,
  through its ``suggest`` / ``observe`` API with its defaults (:class:`HEBOSampler`); install
  with ``pip install --no-deps hebo==0.3.6`` and then ``pip install pandas pymoo==0.6.0
  disjoint-set gpytorch`` (HEBO pins a numpy older than 2 in its metadata, but runs on numpy 2:
  that pin is stale; its pymoo pin is not: pymoo 0.6.2 draws NSGA-II's seed from the operating
  system, so runs would not repeat).
* ``SMAC`` / ``SMAC-BB``: SMAC3 2.x, its hyperparameter-optimisation facade (random forest)
  and its black-box facade (GP), with their defaults (:class:`SMACSampler`); ``pip install
  smac``.
* ``CMA-ES``: Optuna's ``CmaEsSampler(seed=seed)`` (needs ``cmaes``).
* ``TPE-mv`` / ``TPE-uv`` / ``TPE-group``: ``TPESampler`` multivariate, univariate, and
  multivariate with ``group=True`` (the harness's plain ``TPE`` is Optuna's default, which in
  Optuna 5 is multivariate on single-objective studies: ``TPE-mv`` repeats its runs).

Nothing here is imported until a sampler is made, so the harness runs without the peers'
packages as long as no peer is asked for.
"""

from __future__ import annotations

import importlib
import math
from typing import Any, Callable

import numpy as np
import optuna
from optuna.distributions import (BaseDistribution, CategoricalDistribution, FloatDistribution,
                                  IntDistribution)
from optuna.trial import FrozenTrial, TrialState


def botorch_sampler(seed: int) -> optuna.samplers.BaseSampler:
    from optuna_integration import BoTorchSampler

    return BoTorchSampler(seed=seed)


def cmaes_sampler(seed: int) -> optuna.samplers.BaseSampler:
    return optuna.samplers.CmaEsSampler(seed=seed)


def tpe_group_sampler(seed: int) -> optuna.samplers.BaseSampler:
    return optuna.samplers.TPESampler(seed=seed, multivariate=True, group=True)


def hebo_sampler(seed: int) -> optuna.samplers.BaseSampler:
    return HEBOSampler(seed=seed)


def smac_sampler(seed: int, n_trials: int) -> optuna.samplers.BaseSampler:
    return SMACSampler(seed=seed, n_trials=n_trials, facade="hpo")


def smac_bb_sampler(seed: int, n_trials: int) -> optuna.samplers.BaseSampler:
    return SMACSampler(seed=seed, n_trials=n_trials, facade="blackbox")


def _intersection(study: optuna.Study) -> dict[str, BaseDistribution]:
    """The search space of the finished trials (Optuna's intersection, without the parameters
    that take one value)."""
    space = optuna.search_space.intersection_search_space(
        study._get_trials(deepcopy=False, states=(TrialState.COMPLETE,)))
    return {k: d for k, d in space.items() if not d.single()}


def _new_finished(study: optuna.Study, seen: set[int], space: dict[str, BaseDistribution]
                  ) -> list[FrozenTrial]:
    return [t for t in study._get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
            if t.number not in seen and all(k in t.params for k in space)]


def _minimised(study: optuna.Study, trials: list[FrozenTrial], worst: float | None
               ) -> list[float]:
    """The trials' values oriented for minimisation, a non-finite one replaced by the worst
    finite value known (``worst``, or the largest of ``trials``'; 0 if none is finite)."""
    sign = -1.0 if study.direction == optuna.study.StudyDirection.MAXIMIZE else 1.0
    ys = [sign * float(t.value) for t in trials]
    finite = [y for y in ys if math.isfinite(y)] + ([worst] if worst is not None else [])
    fill = max(finite) if finite else 0.0
    return [y if math.isfinite(y) else fill for y in ys]


class _IntersectionPeer(optuna.samplers.BaseSampler):
    """A peer that models Optuna's intersection of the finished trials' spaces
    (:func:`_intersection`); the first trial and the parameters outside it come from a seeded
    ``RandomSampler``."""

    def __init__(self, *, seed: int | None = None) -> None:
        self._seed = 0 if seed is None else int(seed)
        self._random = optuna.samplers.RandomSampler(seed=seed)

    def reseed_rng(self) -> None:
        self._random.reseed_rng()

    def infer_relative_search_space(self, study: optuna.Study, trial: FrozenTrial
                                    ) -> dict[str, BaseDistribution]:
        return _intersection(study)

    def sample_independent(self, study: optuna.Study, trial: FrozenTrial, param_name: str,
                           param_distribution: BaseDistribution) -> Any:
        return self._random.sample_independent(study, trial, param_name, param_distribution)


class HEBOSampler(_IntersectionPeer):
    """HEBO 0.3.6 as an Optuna sampler: one ``HEBO`` object per study, fed every finished trial
    once (``observe``) and asked for one point per trial (``suggest(n_suggestions=1)``), as its
    own sequential loop would; its defaults throughout (``rand_sample = 1 + d`` scrambled Sobol
    points, then its GP with input and output warping, the MACE ensemble of acquisitions,
    NSGA-II).

    The search space is Optuna's intersection of the finished trials' spaces (the first trial,
    whose space is not known yet, and the parameters outside the intersection come from a
    seeded ``RandomSampler``, as with Optuna's own relative samplers); HEBO's object is rebuilt
    from the history when that space changes. HEBO draws from numpy's and torch's global
    generators: both are seeded from (seed, trial number) before each suggestion, so a run
    repeats. A non-finite value is shown to HEBO as the worst finite value so far (its GP
    takes no inf). Log-scaled parameters are HEBO's ``pow`` / ``pow_int`` types, stepped ints
    ``step_int``, categoricals ``cat`` over the choices' indices.
    """

    def __init__(self, *, seed: int | None = None) -> None:
        super().__init__(seed=seed)
        self._space_key: tuple | None = None
        self._hebo: Any = None
        self._seen: set[int] = set()

    def sample_relative(self, study: optuna.Study, trial: FrozenTrial,
                        search_space: dict[str, BaseDistribution]) -> dict[str, Any]:
        if not search_space:
            return {}
        import pandas as pd
        import torch

        key = tuple(sorted((k, repr(d)) for k, d in search_space.items()))
        if key != self._space_key:
            DesignSpace, HEBO = _hebo()
            self._space_key, self._seen = key, set()
            self._hebo = HEBO(DesignSpace().parse(_hebo_space(search_space)),
                              scramble_seed=self._seed)
        done = _new_finished(study, self._seen, search_space)
        if done:
            worst = float(np.max(self._hebo.y)) if self._hebo.y.shape[0] else None
            ys = _minimised(study, done, worst)
            rows = pd.DataFrame([{k: _to_hebo(d, t.params[k]) for k, d in search_space.items()}
                                 for t in done])
            self._hebo.observe(rows, np.array(ys, dtype=float).reshape(-1, 1))
            self._seen.update(t.number for t in done)
        state = np.random.SeedSequence([self._seed, trial.number]).generate_state(2)
        np.random.seed(int(state[0]))
        torch.manual_seed(int(state[1]))
        rec = self._hebo.suggest(n_suggestions=1).iloc[0]
        return {k: _from_hebo(d, rec[k]) for k, d in search_space.items()}


def _hebo() -> tuple[Any, Any]:
    """HEBO's ``DesignSpace`` and ``HEBO``, imported with pymoo's notice that it runs without
    its compiled modules silenced (printed at import, about speed only)."""
    from pymoo.config import Config

    Config.warnings["not_compiled"] = False
    from hebo.design_space.design_space import DesignSpace
    from hebo.optimizers.hebo import HEBO

    return DesignSpace, HEBO


def _hebo_space(space: dict[str, BaseDistribution]) -> list[dict]:
    out = []
    for name, d in space.items():
        if isinstance(d, CategoricalDistribution):
            out.append({"name": name, "type": "cat",
                        "categories": [str(i) for i in range(len(d.choices))]})
        elif isinstance(d, IntDistribution):
            if d.log:
                out.append({"name": name, "type": "pow_int", "lb": d.low, "ub": d.high})
            elif d.step != 1:
                out.append({"name": name, "type": "step_int", "lb": d.low, "ub": d.high,
                            "step": d.step})
            else:
                out.append({"name": name, "type": "int", "lb": d.low, "ub": d.high})
        elif isinstance(d, FloatDistribution):
            out.append({"name": name, "type": "pow" if d.log else "num", "lb": d.low,
                        "ub": d.high})
        else:
            raise ValueError(f"HEBOSampler: unsupported distribution {d!r} of {name!r}")
    return out


def _to_hebo(d: BaseDistribution, value: Any) -> Any:
    if isinstance(d, CategoricalDistribution):
        return str(int(d.to_internal_repr(value)))
    return value


def _from_hebo(d: BaseDistribution, value: Any) -> Any:
    if isinstance(d, CategoricalDistribution):
        return d.choices[int(value)]
    if isinstance(d, IntDistribution):
        v = int(round(float(value)))
        v = d.low + int(round((v - d.low) / d.step)) * d.step
        return min(max(v, d.low), d.high)
    v = float(value)
    if d.step is not None:
        v = d.low + round((v - d.low) / d.step) * d.step
    return min(max(v, d.low), d.high)


class SMACSampler(_IntersectionPeer):
    """SMAC3 (2.x) as an Optuna sampler, through its ask / tell interface, with a facade's
    defaults: ``facade="hpo"`` is ``HyperparameterOptimizationFacade`` (a random forest, what
    SMAC recommends for hyperparameter optimisation), ``"blackbox"`` ``BlackBoxFacade`` (a GP,
    for continuous black-box functions). SMAC sizes its initial design by the budget, so the
    sampler takes ``n_trials``; the scenario is deterministic (``deterministic=True``: one
    evaluation per configuration, as every objective of the suites is).

    One SMAC object per study, fed each finished trial once: a trial SMAC asked for is told
    with its own ``TrialInfo``, any other (the first trial, whose space is not known yet) as a
    configuration of SMAC's space. Space, first trial, non-finite values and the rebuild when
    the space changes as :class:`HEBOSampler`. Stepped ints and categoricals are SMAC integers
    over their indices; SMAC's output directory is a temporary one per study. A space SMAC has
    evaluated whole (a model choice's intersection, one categorical of three) makes SMAC raise
    at its next ask; the independent sampler draws the trials from then on.
    """

    def __init__(self, *, seed: int | None = None, n_trials: int = 100,
                 facade: str = "hpo") -> None:
        if facade not in ("hpo", "blackbox"):
            raise ValueError(f"facade must be 'hpo' or 'blackbox', got {facade!r}")
        super().__init__(seed=seed)
        self._n_trials, self._facade = int(n_trials), facade
        self._space_key: tuple | None = None
        self._smac: Any = None
        self._cs: Any = None
        self._asked: dict[int, Any] = {}
        self._seen: set[int] = set()
        self._worst: float | None = None
        self._tmp: Any = None
        self._exhausted = False

    def _build(self, space: dict[str, BaseDistribution]) -> None:
        import tempfile

        from ConfigSpace import Categorical, ConfigurationSpace, Float, Integer
        from smac import BlackBoxFacade, HyperparameterOptimizationFacade, Scenario

        cs = ConfigurationSpace(seed=self._seed)
        for k, d in space.items():
            if isinstance(d, CategoricalDistribution):
                cs.add(Categorical(k, [str(i) for i in range(len(d.choices))]))
            elif isinstance(d, IntDistribution):
                if d.log:
                    cs.add(Integer(k, (d.low, d.high), log=True))
                else:
                    cs.add(Integer(k, (0, (d.high - d.low) // d.step)))
            else:
                cs.add(Float(k, (d.low, d.high), log=d.log))
        self._tmp = tempfile.TemporaryDirectory(prefix="smac-")
        scenario = Scenario(cs, deterministic=True, n_trials=self._n_trials, seed=self._seed,
                            output_directory=self._tmp.name)
        facade = (HyperparameterOptimizationFacade if self._facade == "hpo"
                  else BlackBoxFacade)
        self._smac = facade(scenario, lambda config, seed=0: 0.0, overwrite=True,
                            logging_level=40)
        self._cs, self._asked, self._seen, self._exhausted = cs, {}, set(), False

    def sample_relative(self, study: optuna.Study, trial: FrozenTrial,
                        search_space: dict[str, BaseDistribution]) -> dict[str, Any]:
        if not search_space:
            return {}
        from ConfigSpace import Configuration
        from smac.main.exceptions import ConfigurationSpaceExhaustedException
        from smac.runhistory.dataclasses import TrialInfo, TrialValue

        key = tuple(sorted((k, repr(d)) for k, d in search_space.items()))
        if key != self._space_key:
            self._space_key = key
            self._build(search_space)
        if self._exhausted:  # SMAC is done with this space (below): nothing to tell it
            return {}
        done = _new_finished(study, self._seen, search_space)
        for t, y in zip(done, _minimised(study, done, self._worst)):
            info = self._asked.pop(t.number, None)
            if info is None:
                values = {k: _to_smac(d, t.params[k]) for k, d in search_space.items()}
                info = TrialInfo(config=Configuration(self._cs, values=values), seed=0)
            self._smac.tell(info, TrialValue(cost=y), save=False)
            self._worst = y if self._worst is None else max(self._worst, y)
            self._seen.add(t.number)
        try:
            info = self._smac.ask()
        except ConfigurationSpaceExhaustedException:
            # every configuration of the modelled space (the intersection: e.g. one categorical
            # of three choices) was evaluated, and SMAC's generator is spent: from now on (or
            # until the space changes) the independent sampler draws the trials
            self._exhausted = True
            return {}
        self._asked[trial.number] = info
        config = info.config
        return {k: _from_smac(d, config[k]) for k, d in search_space.items()}


def _to_smac(d: BaseDistribution, value: Any) -> Any:
    if isinstance(d, CategoricalDistribution):
        return str(int(d.to_internal_repr(value)))
    if isinstance(d, IntDistribution) and not d.log:
        return (int(value) - d.low) // d.step
    return value


def _from_smac(d: BaseDistribution, value: Any) -> Any:
    if isinstance(d, CategoricalDistribution):
        return d.choices[int(value)]
    if isinstance(d, IntDistribution):
        return int(value) if d.log else d.low + int(value) * d.step
    return _from_hebo(d, value)


MODULES: dict[str, Callable[[], Any]] = {
    "GPSampler": lambda: [importlib.import_module(m) for m in (
        "torch", "optuna._gp.search_space", "optuna._gp.gp", "optuna._gp.optim_mixed",
        "optuna._gp.acqf", "optuna._gp.prior")],
    "BoTorch": lambda: [importlib.import_module(m) for m in (
        "torch", "botorch", "gpytorch", "optuna_integration")],
    "HEBO": _hebo,
    "SMAC": lambda: [importlib.import_module(m) for m in ("smac", "ConfigSpace")],
}
MODULES["SMAC-BB"] = MODULES["SMAC"]


def warm(names: list[str]) -> None:
    """Import what the samplers ``names`` import at their first suggestion (a peer whose
    package is not installed is skipped: its runs fail with the import error)."""
    for name in names:
        if name in MODULES:
            try:
                MODULES[name]()
            except ImportError:
                pass


PEERS: dict[str, Callable[..., optuna.samplers.BaseSampler]] = {
    "BoTorch": botorch_sampler,
    "HEBO": hebo_sampler,
    "CMA-ES": cmaes_sampler,
    "TPE-mv": lambda seed: optuna.samplers.TPESampler(seed=seed, multivariate=True),
    "TPE-uv": lambda seed: optuna.samplers.TPESampler(seed=seed, multivariate=False),
    "TPE-group": tpe_group_sampler,
    "SMAC": smac_sampler,
    "SMAC-BB": smac_bb_sampler,
}
"""The peers by name (the harness's ``SAMPLERS`` holds them beside ours and Optuna's)."""
BUDGETED = ("SMAC", "SMAC-BB")
"""The peers whose factory takes the run's trial budget too (``factory(seed, n_trials)``)."""
