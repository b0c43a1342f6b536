"""The real-HPO tasks: scikit-learn model x bundled dataset x metric, Bayesmark-like spaces.

Search spaces re-implement Bayesmark's ``sklearn_funcs`` configurations (uber/bayesmark,
Apache-2.0; re-written, not copied) with a few additions so that every parameter kind Optuna
users meet is present: bool (``suggest_categorical([True, False])``), categorical, int-log.
Ranges changed for speed or sense are marked "~" in ``SPACES``, added parameters "+".
Bayesmark's "logit" reals have no Optuna counterpart; two encodings are used:

* ``logit_<name>``: a float uniform in ``[logit(lo), logit(hi)]``, decoded as ``sigmoid(z)``;
* ``one_minus_<name>``: ``1 - x`` on a log scale (for ranges that approach 1, e.g. Adam's beta_2).

Objective: the mean loss over a fixed K-fold split (``StratifiedKFold`` / ``KFold`` with
``shuffle=True, random_state=0``, computed once), every stochastic model with
``random_state=0``, so an evaluation is a deterministic function of the parameters; its "noise" is
the model's sensitivity to them, as in Bayesmark. Losses: ``acc`` = 1 - accuracy, ``nll`` = log
loss (probabilities clipped to [1e-15, 1]), ``mse`` / ``mae`` on the standardised target. Features
are standardised (z-score on the whole data set, clipped to +-5); digits is a fixed 500-image
subset. A non-finite or larger loss is replaced by the cap (``LOSS_CAP``: a diverging network).

:func:`problem` gives a task as a harness problem (kind "ml"); ``suite.py`` makes the suite.
The samplers ``TPE-uv`` / ``TPE-mv`` (``multivariate=False`` / ``True``) are the harness's
(``benchmarks/harness/peers.py``). Optuna 5's ``TPESampler()`` (the harness's ``TPE``) is
already multivariate on single-objective studies (``multivariate=None``: ``not
study._is_multi_objective()``), so ``TPE-mv`` repeats ``TPE``'s runs exactly and is not in the
default sampler list; ``TPE-uv`` is the univariate TPE.
"""

from __future__ import annotations

import functools
import math
import time
import warnings
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import optuna

from benchmarks.harness.problems import Problem

Params = dict[str, Any]
LOSS_CAP = {"acc": 1.0, "nll": 35.0, "mse": 100.0, "mae": 100.0}
DIGITS_SUBSET = 360


# --------------------------------------------------------------------------- parameter kinds
@dataclass(frozen=True)
class Kind:
    """One hyperparameter: how it is suggested (``suggest``) and decoded for the model."""

    kind: str  # float, log, logit, one_minus_log, int, int_log, bool, cat
    lo: float = 0.0
    hi: float = 1.0
    choices: tuple = ()

    def key(self, name: str) -> str:
        return {"logit": f"logit_{name}", "one_minus_log": f"one_minus_{name}"}.get(self.kind,
                                                                                   name)

    def suggest(self, trial: optuna.Trial, name: str) -> Any:
        k, key = self.kind, self.key(name)
        if k in ("float", "log"):
            return trial.suggest_float(key, self.lo, self.hi, log=k == "log")
        if k == "logit":
            return trial.suggest_float(key, _logit(self.lo), _logit(self.hi))
        if k == "one_minus_log":
            return trial.suggest_float(key, 1.0 - self.hi, 1.0 - self.lo, log=True)
        if k in ("int", "int_log"):
            return trial.suggest_int(key, int(self.lo), int(self.hi), log=k == "int_log")
        if k == "bool":
            return trial.suggest_categorical(key, [True, False])
        return trial.suggest_categorical(key, list(self.choices))

    def decode(self, raw: Any) -> Any:
        if self.kind == "logit":
            return 1.0 / (1.0 + math.exp(-raw))
        if self.kind == "one_minus_log":
            return 1.0 - raw
        return raw


def _logit(p: float) -> float:
    return math.log(p / (1.0 - p))


FLOAT, LOG, LOGIT = (functools.partial(Kind, k) for k in ("float", "log", "logit"))
ONE_MINUS_LOG, INT, INT_LOG = (functools.partial(Kind, k) for k in
                               ("one_minus_log", "int", "int_log"))
BOOL = Kind("bool")


def CAT(*choices: Any) -> Kind:  # noqa: N802 (reads like the other kinds)
    return Kind("cat", choices=tuple(choices))


# --------------------------------------------------------------------------- search spaces
# Bayesmark's ranges; "+" marks a parameter added here, "~" a changed range (see the comments).
_TREE = {
    "max_depth": INT(1, 15),
    "min_samples_split": LOGIT(0.01, 0.99),
    "min_samples_leaf": LOGIT(0.01, 0.49),
    "min_weight_fraction_leaf": LOGIT(0.01, 0.49),
    "max_features": LOGIT(0.01, 0.99),
    "min_impurity_decrease": FLOAT(0.0, 0.5),
}
SPACES: dict[str, dict[str, Kind]] = {
    "kNN": {"n_neighbors": INT(1, 25), "p": INT(1, 4),
            "weights": CAT("uniform", "distance")},  # + weights
    # ~ gamma: Bayesmark's [1e-4, 1e-3] is nearly linear on standardised features; + class_weight
    "SVM": {"C": LOG(1.0, 1e3), "gamma": LOG(1e-4, 1e-1), "tol": LOG(1e-5, 1e-1),
            "class_weight": CAT("none", "balanced")},
    # ~ C: [1e-2, 1e2] (C = 1e3 with a small epsilon takes up to 1 s to fit); + epsilon
    "SVR": {"C": LOG(1e-2, 1e2), "gamma": LOG(1e-4, 1e-1), "tol": LOG(1e-5, 1e-1),
            "epsilon": LOG(1e-2, 1.0)},
    "DT": {**_TREE, "criterion": CAT("gini", "entropy")},  # + criterion
    "DT-reg": {**_TREE, "min_impurity_decrease": FLOAT(0.0, 0.05),  # ~ scale of MSE-impurity
               "criterion": CAT("squared_error", "friedman_mse", "absolute_error")},
    "RF": {**_TREE, "bootstrap": BOOL},  # + bootstrap
    "MLP-adam": {
        "hidden_layer_sizes": INT(50, 200), "alpha": LOG(1e-5, 1e1),
        "batch_size": INT_LOG(10, 250),  # ~ int-log instead of linear
        "learning_rate_init": LOG(1e-5, 1e-1), "tol": LOG(1e-5, 1e-1),
        "validation_fraction": LOGIT(0.1, 0.9), "beta_1": LOGIT(0.5, 0.99),
        "beta_2": ONE_MINUS_LOG(0.9, 1.0 - 1e-6), "epsilon": LOG(1e-9, 1e-6),
        "activation": CAT("relu", "tanh"),  # + activation
    },
    "ada": {"n_estimators": INT_LOG(5, 50),  # ~ int-log on [5, 50] instead of linear [10, 100]
            "learning_rate": LOG(1e-4, 1e1)},
    "lasso": {"C": LOG(1e-2, 1e2), "intercept_scaling": LOG(1e-2, 1e2)},
    "linear": {"C": LOG(1e-2, 1e2), "intercept_scaling": LOG(1e-2, 1e2),
               "class_weight": CAT("none", "balanced")},  # + class_weight
    # Bayesmark's lasso-reg without the removed ``normalize``, with l1_ratio: sklearn's ElasticNet
    "ElasticNet": {"alpha": LOG(1e-3, 1e1), "l1_ratio": LOGIT(0.01, 0.99), "fit_intercept": BOOL,
                   "max_iter": INT_LOG(10, 5000), "tol": LOG(1e-5, 1e-1), "positive": BOOL,
                   "selection": CAT("cyclic", "random")},
}


def _none(v: Any) -> Any:
    return None if v == "none" else v


def _build(model: str, p: Params):
    """The estimator of ``model`` with the decoded hyperparameters ``p``."""
    from sklearn import ensemble, linear_model, neighbors, neural_network, svm, tree
    from sklearn.multiclass import OneVsRestClassifier

    if model == "kNN":
        return neighbors.KNeighborsClassifier(**p)
    if model == "kNN-reg":
        return neighbors.KNeighborsRegressor(**p)
    if model == "SVM":
        return svm.SVC(kernel="rbf", **{**p, "class_weight": _none(p["class_weight"])})
    if model == "SVR":
        return svm.SVR(kernel="rbf", **p)
    if model in ("DT", "DT-reg"):
        cls = tree.DecisionTreeClassifier if model == "DT" else tree.DecisionTreeRegressor
        return cls(random_state=0, **p)
    if model in ("RF", "RF-reg"):
        cls = ensemble.RandomForestClassifier if model == "RF" else ensemble.RandomForestRegressor
        return cls(n_estimators=10, random_state=0, n_jobs=1, **p)
    if model in ("MLP-adam", "MLP-adam-reg"):
        cls = (neural_network.MLPClassifier if model == "MLP-adam"
               else neural_network.MLPRegressor)
        return cls(solver="adam", early_stopping=True, max_iter=MLP_MAX_ITER, random_state=0,
                   hidden_layer_sizes=(p.pop("hidden_layer_sizes"),), **p)
    if model in ("ada", "ada-reg"):
        cls = ensemble.AdaBoostClassifier if model == "ada" else ensemble.AdaBoostRegressor
        return cls(random_state=0, **p)
    if model in ("lasso", "linear"):
        l1 = 1.0 if model == "lasso" else 0.0
        base = linear_model.LogisticRegression(
            solver="liblinear", l1_ratio=l1, random_state=0,
            **{**p, "class_weight": _none(p.get("class_weight"))})
        return OneVsRestClassifier(base)  # Bayesmark's multi_class="ovr"
    if model == "ElasticNet":
        return linear_model.ElasticNet(random_state=0, **p)
    raise KeyError(model)


MLP_MAX_ITER = 25  # Bayesmark: 200 (sklearn's default); early stopping usually ends runs sooner


# --------------------------------------------------------------------------- data and CV loss
@functools.lru_cache(maxsize=None)
def load(dataset: str) -> tuple[np.ndarray, np.ndarray, bool]:
    """(X, y, is_classification): standardised features (clipped to +-5); a standardised target
    for regression; digits: a fixed subset of ``DIGITS_SUBSET`` images."""
    from sklearn import datasets

    loader = {"iris": datasets.load_iris, "wine": datasets.load_wine,
              "breast": datasets.load_breast_cancer, "digits": datasets.load_digits,
              "diabetes": datasets.load_diabetes}[dataset]
    X, y = loader(return_X_y=True)
    if dataset == "digits":
        idx = np.random.default_rng(0).permutation(len(y))[:DIGITS_SUBSET]
        X, y = X[idx], y[idx]
    clf = dataset != "diabetes"
    sd = X.std(axis=0)
    X = np.clip((X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0), -5.0, 5.0)
    if not clf:
        y = (y - y.mean()) / y.std()
    return X, (y.astype(int) if clf else y.astype(float)), clf


@functools.lru_cache(maxsize=None)
def folds(dataset: str, k: int) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    from sklearn.model_selection import KFold, StratifiedKFold

    X, y, clf = load(dataset)
    cv = (StratifiedKFold if clf else KFold)(n_splits=k, shuffle=True, random_state=0)
    return tuple(cv.split(X, y))


def cv_loss(model: str, dataset: str, metric: str, k: int, params: Params) -> float:
    X, y, _ = load(dataset)
    losses = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence warnings: expected at odd settings
        for train, test in folds(dataset, k):
            est = _build(model, dict(params)).fit(X[train], y[train])
            losses.append(_loss(est, X[test], y[test], metric))
    loss = float(np.mean(losses))
    cap = LOSS_CAP[metric]
    return loss if math.isfinite(loss) and loss < cap else cap


def _loss(est, X: np.ndarray, y: np.ndarray, metric: str) -> float:
    if metric == "nll":
        proba = est.predict_proba(X)
        col = np.searchsorted(est.classes_, y)  # every class is in every training fold
        return float(-np.mean(np.log(np.clip(proba[np.arange(len(y)), col], 1e-15, 1.0))))
    pred = est.predict(X)
    if metric == "acc":
        return float(np.mean(pred != y))
    err = pred - y
    return float(np.mean(err * err) if metric == "mse" else np.mean(np.abs(err)))


# --------------------------------------------------------------------------- tasks
@dataclass(frozen=True)
class HPOTask:
    model: str  # key of _build
    space: str  # key of SPACES
    dataset: str
    metric: str
    k: int = 5  # CV folds

    @property
    def name(self) -> str:
        return f"{self.model}-{self.dataset}-{self.metric}"

    def suggest(self, trial: optuna.Trial) -> Params:
        return {kind.key(n): kind.suggest(trial, n) for n, kind in SPACES[self.space].items()}

    def decode(self, raw: Params) -> Params:
        return {n: kind.decode(raw[kind.key(n)]) for n, kind in SPACES[self.space].items()}

    def evaluate(self, raw: Params) -> float:
        return cv_loss(self.model, self.dataset, self.metric, self.k, self.decode(raw))

    def kinds(self) -> str:
        """e.g. ``int 2, logit 4, float 1, cat 1``."""
        counts: dict[str, int] = {}
        for kind in SPACES[self.space].values():
            counts[kind.kind] = counts.get(kind.kind, 0) + 1
        return ", ".join(f"{k} {n}" for k, n in counts.items())


TASKS: dict[str, HPOTask] = {t.name: t for t in [
    HPOTask("kNN", "kNN", "digits", "acc"),
    HPOTask("kNN", "kNN", "wine", "nll"),
    HPOTask("SVM", "SVM", "breast", "acc"),
    HPOTask("SVR", "SVR", "diabetes", "mae"),
    HPOTask("DT", "DT", "digits", "acc"),
    HPOTask("DT-reg", "DT-reg", "diabetes", "mse"),
    HPOTask("RF", "RF", "wine", "nll"),
    HPOTask("RF", "RF", "breast", "acc"),
    HPOTask("MLP-adam", "MLP-adam", "iris", "nll", k=3),
    HPOTask("MLP-adam-reg", "MLP-adam", "diabetes", "mse", k=3),
    HPOTask("ada", "ada", "wine", "acc", k=3),
    HPOTask("ada-reg", "ada", "diabetes", "mae", k=3),
    HPOTask("lasso", "lasso", "iris", "nll"),
    HPOTask("lasso", "lasso", "digits", "nll", k=3),
    HPOTask("linear", "linear", "breast", "nll"),
    HPOTask("ElasticNet", "ElasticNet", "diabetes", "mse"),
]}

# Held out: the suite's search spaces on other (model, data set, metric) pairs. No default was
# chosen on them; `python -m benchmarks.hpo run --held-out` runs them, and the report scores them
# like the suite's own tasks (in their own tables when the runs hold only them).
HELD_OUT: dict[str, HPOTask] = {t.name: t for t in [
    HPOTask("kNN-reg", "kNN", "diabetes", "mae"),
    HPOTask("SVM", "SVM", "digits", "acc"),
    HPOTask("DT", "DT", "breast", "acc"),
    HPOTask("RF-reg", "RF", "diabetes", "mae"),
    HPOTask("MLP-adam", "MLP-adam", "breast", "nll", k=3),
    HPOTask("ada", "ada", "breast", "acc", k=3),
    HPOTask("lasso", "lasso", "wine", "nll"),
]}
ALL_TASKS: dict[str, HPOTask] = {**TASKS, **HELD_OUT}


def problem(name: str) -> Problem:
    """The harness problem of task ``name``."""
    t = ALL_TASKS[name]
    desc = (f"{t.model} on {t.dataset}, {t.k}-fold CV {t.metric} ({len(SPACES[t.space])} "
            f"params: {t.kinds()})")
    return Problem(t.name, desc, t.suggest, t.evaluate, None, None, "ml", len(SPACES[t.space]),
                   {"hpo": True})


DEFAULT_SAMPLERS = ["GP-UCB", "GP-TS", "IGP-UCB", "GPSampler", "TPE", "TPE-uv", "Random"]
SAMPLER_ORDER = DEFAULT_SAMPLERS[:-1] + ["TPE-mv", "Random"]  # tables' column order


def time_evaluations(names: list[str], n: int = 20, seed: int = 0,
                     clock: Callable[[], float] = time.process_time) -> dict[str, dict]:
    """Per task: mean / max CPU seconds of ``n`` evaluations at random-search points (after one
    untimed evaluation that loads the data and the modules)."""
    out = {}
    for name in names:
        task = ALL_TASKS[name]
        study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=seed))
        task.evaluate(task.suggest(study.ask()))
        secs, losses = [], []
        for _ in range(n):
            raw = task.suggest(study.ask())
            t0 = clock()
            losses.append(task.evaluate(raw))
            secs.append(clock() - t0)
        out[name] = {"mean": float(np.mean(secs)), "max": float(np.max(secs)),
                     "loss_min": float(np.min(losses)), "loss_median": float(np.median(losses)),
                     "capped": int(sum(v >= LOSS_CAP[task.metric] for v in losses))}
    return out
