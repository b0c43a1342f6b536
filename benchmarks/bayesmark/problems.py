"""Bayesmark's problems as Optuna search spaces and harness problems.

The ``api_config`` of a problem maps to Optuna distributions one parameter at a time:

==================================  =================================================  ==========
Bayesmark                           Optuna (``trial.suggest_*``)                       decoded
==================================  =================================================  ==========
real, ``linear``, (lo, hi)          ``suggest_float(name, lo, hi)``                    as is
real, ``log``                       ``suggest_float(name, lo, hi, log=True)``          as is
real, ``logit``                     ``suggest_float("logit_" + name, logit(lo),        sigmoid(z),
                                    logit(hi))``: uniform in logit space               clipped
int, ``linear``                     ``suggest_int(name, lo, hi)``                      as is
int, ``log``                        ``suggest_int(name, lo, hi, log=True)``            as is
bool                                ``suggest_categorical(name, [False, True])``       as is
cat, ordinal, listed ``values``     ``suggest_categorical(name, values)``              as is
==================================  =================================================  ==========

A "logit" real has no Optuna counterpart. It becomes a float uniform on ``[logit(lo),
logit(hi)]`` (the space Bayesmark warps it to, and where its random search draws uniformly),
named ``logit_<name>`` so that the study shows which scale it is on, and is decoded by the
logistic function, clipped to ``[lo, hi]`` as Bayesmark's ``unwarp`` clips. Log and linear
reals and ints map to Optuna's own log / linear distributions (Bayesmark's random search draws
ints uniformly in the warped space and rounds; Optuna's ``RandomSampler`` does the same up to
the end points' weight). Bools are categorical (a user's ``suggest_categorical([False, True])``,
which is how Optuna users write them; Bayesmark itself treats them as a 0 / 1 int). Bayesmark's
scikit-learn problems have no cat or ordinal parameter; the mapping is there for completeness.

:func:`harness_problem` gives the 90 problems as harness problems (kind "ml",
``extra["bayesmark"]``), under Bayesmark's test-case names (``DT_diabetes_mse``). A problem's
objective depends on the run's seed (``shuffle_seed``): ``harness_problem(name, s)`` is the
objective of seed ``s``, so a run of seed s scores ``SklearnModel(..., shuffle_seed=s)``
(``suite.py``).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import optuna

from benchmarks.harness.problems import Problem

from . import definitions as D

Params = dict[str, Any]


def _logit(p: float) -> float:
    return math.log(p / (1.0 - p))


@dataclass(frozen=True)
class Param:
    """One Bayesmark parameter and its Optuna counterpart."""

    name: str
    spec: dict

    @property
    def kind(self) -> str:
        """e.g. ``real-logit``, ``int-linear``, ``bool``."""
        t = self.spec["type"]
        if t == "bool":
            return "bool"
        if t in ("cat", "ordinal"):
            return "cat"
        if "values" in self.spec:  # a real / int restricted to listed values
            return f"{t}-values"
        return f"{t}-{self.spec.get('space', 'linear')}"

    @property
    def key(self) -> str:
        """The Optuna parameter name."""
        return f"logit_{self.name}" if self.kind == "real-logit" else self.name

    def distribution(self) -> optuna.distributions.BaseDistribution:
        s, k = self.spec, self.kind
        if k == "bool":
            return optuna.distributions.CategoricalDistribution([False, True])
        if k == "cat" or k.endswith("-values"):
            return optuna.distributions.CategoricalDistribution(list(s["values"]))
        lo, hi = s["range"]
        if k == "real-logit":
            return optuna.distributions.FloatDistribution(_logit(lo), _logit(hi))
        if k.startswith("real-"):
            return optuna.distributions.FloatDistribution(lo, hi, log=k == "real-log")
        if k in ("int-linear", "int-log"):
            return optuna.distributions.IntDistribution(int(lo), int(hi), log=k == "int-log")
        raise NotImplementedError(f"{self.name}: {s}")

    def suggest(self, trial: optuna.Trial) -> Any:
        d = self.distribution()
        if isinstance(d, optuna.distributions.CategoricalDistribution):
            return trial.suggest_categorical(self.key, d.choices)
        if isinstance(d, optuna.distributions.IntDistribution):
            return trial.suggest_int(self.key, d.low, d.high, log=d.log)
        return trial.suggest_float(self.key, d.low, d.high, log=d.log)

    def decode(self, raw: Any) -> Any:
        if self.kind != "real-logit":
            return raw
        lo, hi = self.spec["range"]
        p = 1.0 / (1.0 + math.exp(-raw)) if raw >= 0 else math.exp(raw) / (1.0 + math.exp(raw))
        return min(max(p, lo), hi)

    def encode(self, value: Any) -> Any:
        return _logit(value) if self.kind == "real-logit" else value


@dataclass(frozen=True)
class BayesmarkProblem:
    model: str
    dataset: str
    metric: str

    @property
    def name(self) -> str:
        return D.problem_name(self.model, self.dataset, self.metric)

    @property
    def half(self) -> str:
        return D.half_of(self.model)

    @property
    def params(self) -> list[Param]:
        return [Param(n, s) for n, s in D.api_config(self.model, self.dataset).items()]

    @property
    def task(self) -> str:
        return "classification" if D.DATASETS[self.dataset] == "clf" else "regression"

    def distributions(self) -> dict[str, optuna.distributions.BaseDistribution]:
        return {p.key: p.distribution() for p in self.params}

    def suggest(self, trial: optuna.Trial) -> Params:
        return {p.key: p.suggest(trial) for p in self.params}

    def decode(self, raw: Params) -> D.Config:
        """Optuna's params -> Bayesmark's configuration."""
        return {p.name: p.decode(raw[p.key]) for p in self.params}

    def encode(self, config: D.Config) -> Params:
        return {p.key: p.encode(config[p.name]) for p in self.params}

    def loss(self, seed: int, config: D.Config) -> float:
        return D.cv_loss(self.model, self.dataset, self.metric, seed, config)

    def evaluate(self, raw: Params, seed: int) -> float:
        return self.loss(seed, self.decode(raw))

    def kinds(self) -> str:
        """e.g. ``int-linear 1, real-logit 4, real-linear 1``."""
        counts: dict[str, int] = {}
        for p in self.params:
            counts[p.kind] = counts.get(p.kind, 0) + 1
        return ", ".join(f"{k} {n}" for k, n in counts.items())

    def description(self) -> str:
        patched = " (patched for today's scikit-learn)" if self.model in D.PATCHED else ""
        return (f"Bayesmark {self.model} on {self.dataset}, 5-fold CV {self.metric}{patched}; "
                f"{len(self.params)} params: {self.kinds()}; {self.half} half")


ALL: dict[str, BayesmarkProblem] = {
    n: BayesmarkProblem(*D.parse_name(n)) for n in D.PROBLEM_NAMES}
HALF_PROBLEMS: dict[str, list[str]] = {
    h: [n for n, p in ALL.items() if p.half == h] for h in D.HALVES}
HALF_PROBLEMS["all"] = list(ALL)


@functools.lru_cache(maxsize=None)
def harness_problem(name: str, seed: int) -> Problem:
    """The harness problem of ``name`` whose objective is that of ``shuffle_seed=seed``."""
    p = ALL[name]

    def evaluate(raw: Params) -> float:
        return p.evaluate(raw, seed)

    return Problem(name, p.description(), p.suggest, evaluate, None, None, "ml", len(p.params),
                   {"bayesmark": True, "seed": seed, "half": p.half})
