"""Bayesmark's scikit-learn problems, unedited: spaces, models, data, CV loss.

The problem definitions here (each family's search space: parameter names, types, scales and
ranges, in their order; each estimator's scikit-learn class and fixed arguments) are transcribed
from Bayesmark 0.0.8 (uber/bayesmark, Apache-2.0; its ``sklearn_funcs.py``) into two text tables
of this module, :data:`SPACE_TABLE` and :data:`ESTIMATOR_TABLE`. They are facts of the benchmark
and must not change; ``check.py``, run where ``bayesmark`` imports, compares them with the
installed package's: every family's class and fixed arguments, and :func:`api_config`'s output
against Bayesmark's own ``api_config`` dicts (same values, same order, same number types).

The loss of a configuration for seed ``s`` is what Bayesmark's ``SklearnModel(model, dataset,
metric, shuffle_seed=s).evaluate(config)[0]`` returns:

* data: scikit-learn's bundled data set, raw (no scaling of features or targets);
* ``train_test_split(X, y, test_size=0.2, random_state=s, shuffle=True)``: the first 80 % are
  the tuning data (the 20 % test part only serves Bayesmark's "generalization" output, which no
  score uses, so it is not fitted here: one model fit in six saved);
* ``cross_val_score(model, X_train, y_train, scoring=get_scorer(...), cv=5)``: unshuffled
  ``StratifiedKFold`` (classifiers) or ``KFold`` (regressors); loss = minus the mean score, so
  ``acc`` is minus the accuracy, ``nll`` the log loss, ``mse`` / ``mae`` the raw errors;
* a failed or non-finite evaluation is ``inf`` (Bayesmark's experiment loop sets a failed
  evaluation to inf and shows it to the optimiser; ``cross_val_score``'s NaN for a failed fold
  leads there too). Not so a definition that today's scikit-learn rejects (a removed argument, a
  value no longer allowed): that raises, so that a problem cannot silently turn into a constant
  inf (``SVC(probability=True)``, in every SVM classification problem, is deprecated in
  scikit-learn 1.9 and goes in 1.11).

Randomness. Bayesmark builds its models with ``random_state=None`` (the tree and forest feature
draws, the MLPs' initialisation and batches, SVC's Platt scaling, liblinear's coordinate order
all use NumPy's global generator), so its objective is noisy and no run repeats. Here the global
generator is seeded, for each evaluation, from (problem, seed, configuration) (:func:`rng_seed`)
and restored afterwards: the same model randomness, but a run repeats exactly and one
configuration always has one loss. Seeding the global generator the same way before Bayesmark's
own ``evaluate`` gives the same loss (``check.py``).

Patched families. With today's scikit-learn two of the nine families fail as published:
``lasso`` / ``linear`` classifiers (``LogisticRegression(multi_class="ovr")``: the argument was
removed in scikit-learn 1.7 or so, and liblinear no longer fits multiclass problems itself) and
regressors (``Lasso`` / ``Ridge(normalize=...)``: removed in 1.2). They are kept, rebuilt to do
what scikit-learn < 1.2 did with the published arguments:

* classifiers: ``OneVsRestClassifier(LogisticRegression(solver="liblinear", ...))``, the l1 / l2
  penalty passed as ``penalty`` (scikit-learn < 1.8) or ``l1_ratio`` 1 / 0 (>= 1.8). liblinear's
  "ovr" was exactly this: one binary problem per class, probabilities normalised over classes;
* regressors: :class:`Normalized` (``normalize=True`` with ``fit_intercept=True``: centre the
  features, divide them by their L2 norms, fit, divide the coefficients back, as
  ``sklearn.linear_model._base._preprocess_data`` did; ignored without an intercept, as it was).

``check.py`` run under scikit-learn 1.1.3, where Bayesmark runs them unpatched, compares the
patched models with the originals (``reference.json``).

This module imports only numpy and scikit-learn (``check.py`` runs it in a Bayesmark
environment without Optuna).
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import math
import warnings
from typing import Any, NamedTuple

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin

Config = dict[str, Any]

# ---------------------------------------------------------------------------------- tables
FAMILIES = ("DT", "MLP-adam", "MLP-sgd", "RF", "SVM", "ada", "kNN", "lasso", "linear")
"""The nine model families, in the order Bayesmark lists them."""

DATASETS = {"breast": "clf", "digits": "clf", "iris": "clf", "wine": "clf", "diabetes": "reg"}
"""Data set -> task. Bayesmark's data sets but boston (removed from scikit-learn in 1.2; not
bundled anywhere)."""

TASKS = ("clf", "reg")

# One row per parameter, a family's rows in the benchmark's order (which is the order of the
# Optuna suggestions and of a random-search draw). "FAMILY" holds for both tasks; "FAMILY:clf"
# and "FAMILY:reg" where the two tasks' spaces differ. type: int, real or bool (a bool has no
# scale and no bounds); scale: linear, log or logit (uniform in x, log x or log(x / (1 - x)));
# low and high: the closed range, read as int for an int and as float for a real.
SPACE_TABLE = """
# family      parameter                  type  scale   low     high
kNN           n_neighbors                int   linear  1       25
kNN           p                          int   linear  1       4
SVM           C                          real  log     1       1e3
SVM           gamma                      real  log     1e-4    1e-3
SVM           tol                        real  log     1e-5    1e-1
DT            max_depth                  int   linear  1       15
DT            min_samples_split          real  logit   0.01    0.99
DT            min_samples_leaf           real  logit   0.01    0.49
DT            min_weight_fraction_leaf   real  logit   0.01    0.49
DT            max_features               real  logit   0.01    0.99
DT            min_impurity_decrease      real  linear  0       0.5
RF            max_depth                  int   linear  1       15
RF            max_features               real  logit   0.01    0.99
RF            min_samples_split          real  logit   0.01    0.99
RF            min_samples_leaf           real  logit   0.01    0.49
RF            min_weight_fraction_leaf   real  logit   0.01    0.49
RF            min_impurity_decrease      real  linear  0       0.5
MLP-adam      hidden_layer_sizes         int   linear  50      200
MLP-adam      alpha                      real  log     1e-5    1e1
MLP-adam      batch_size                 int   linear  10      250
MLP-adam      learning_rate_init         real  log     1e-5    1e-1
MLP-adam      tol                        real  log     1e-5    1e-1
MLP-adam      validation_fraction        real  logit   0.1     0.9
MLP-adam      beta_1                     real  logit   0.5     0.99
MLP-adam      beta_2                     real  logit   0.9     0.999999
MLP-adam      epsilon                    real  log     1e-9    1e-6
MLP-sgd       hidden_layer_sizes         int   linear  50      200
MLP-sgd       alpha                      real  log     1e-5    1e1
MLP-sgd       batch_size                 int   linear  10      250
MLP-sgd       learning_rate_init         real  log     1e-5    1e-1
MLP-sgd       power_t                    real  logit   0.1     0.9
MLP-sgd       tol                        real  log     1e-5    1e-1
MLP-sgd       momentum                   real  logit   0.001   0.999
MLP-sgd       validation_fraction        real  logit   0.1     0.9
ada           n_estimators               int   linear  10      100
ada           learning_rate              real  log     1e-4    1e1
lasso:clf     C                          real  log     1e-2    1e2
lasso:clf     intercept_scaling          real  log     1e-2    1e2
lasso:reg     alpha                      real  log     1e-2    1e2
lasso:reg     fit_intercept              bool
lasso:reg     normalize                  bool
lasso:reg     max_iter                   int   log     10      5000
lasso:reg     tol                        real  log     1e-5    1e-1
lasso:reg     positive                   bool
linear:clf    C                          real  log     1e-2    1e2
linear:clf    intercept_scaling          real  log     1e-2    1e2
linear:reg    alpha                      real  log     1e-2    1e2
linear:reg    fit_intercept              bool
linear:reg    normalize                  bool
linear:reg    max_iter                   int   log     10      5000
linear:reg    tol                        real  log     1e-4    1e-1
"""

# One row per (family, task): the scikit-learn class (by name; looked up in its modules) and the
# arguments fixed for every configuration, as name=value with a Python literal (True, None, 10)
# or a bare word (a string); a row whose class is "+" adds arguments to the row above.
ESTIMATOR_TABLE = """
# family:task  class                    fixed arguments
kNN:clf        KNeighborsClassifier
kNN:reg        KNeighborsRegressor
SVM:clf        SVC                      kernel=rbf probability=True
SVM:reg        SVR                      kernel=rbf
DT:clf         DecisionTreeClassifier   max_leaf_nodes=None
DT:reg         DecisionTreeRegressor    max_leaf_nodes=None
RF:clf         RandomForestClassifier   n_estimators=10 max_leaf_nodes=None
RF:reg         RandomForestRegressor    n_estimators=10 max_leaf_nodes=None
MLP-adam:clf   MLPClassifier            solver=adam early_stopping=True
MLP-adam:reg   MLPRegressor             solver=adam early_stopping=True
MLP-sgd:clf    MLPClassifier            solver=sgd early_stopping=True
MLP-sgd:clf    +                        learning_rate=invscaling nesterovs_momentum=True
MLP-sgd:reg    MLPRegressor             activation=tanh solver=sgd early_stopping=True
MLP-sgd:reg    +                        learning_rate=invscaling nesterovs_momentum=True
ada:clf        AdaBoostClassifier
ada:reg        AdaBoostRegressor
lasso:clf      LogisticRegression       penalty=l1 fit_intercept=True solver=liblinear
lasso:clf      +                        multi_class=ovr
lasso:reg      Lasso
linear:clf     LogisticRegression       penalty=l2 fit_intercept=True solver=liblinear
linear:clf     +                        multi_class=ovr
linear:reg     Ridge                    solver=auto
"""


class Parameter(NamedTuple):
    """One row of :data:`SPACE_TABLE`."""

    name: str
    type: str  # int, real, bool
    scale: str | None = None  # linear, log, logit (None: a bool)
    low: float | int | None = None
    high: float | int | None = None


class Estimator(NamedTuple):
    """One row of :data:`ESTIMATOR_TABLE`."""

    cls: str
    fixed: dict


def _rows(table: str) -> list[list[str]]:
    return [line.split() for line in table.splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def _keys(family_task: str) -> list[tuple[str, str]]:
    """``"DT"`` -> both tasks; ``"lasso:reg"`` -> that one."""
    family, _, task = family_task.partition(":")
    if family not in FAMILIES or task not in ("", *TASKS):
        raise ValueError(f"unknown family or task {family_task!r}")
    return [(family, t) for t in ((task,) if task else TASKS)]


def _parse_spaces(table: str) -> dict[tuple[str, str], tuple[Parameter, ...]]:
    spaces: dict[tuple[str, str], list[Parameter]] = {}
    for row in _rows(table):
        where, name, kind, *rest = row
        if kind == "bool" and not rest:
            param = Parameter(name, kind)
        elif kind in ("int", "real") and len(rest) == 3:
            scale, low, high = rest
            number = int if kind == "int" else float
            param = Parameter(name, kind, scale, number(low), number(high))
        else:
            raise ValueError(f"bad space row {row}")
        for key in _keys(where):
            spaces.setdefault(key, []).append(param)
    return {k: tuple(v) for k, v in spaces.items()}


def _literal(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text  # a bare word


def _parse_estimators(table: str) -> dict[tuple[str, str], Estimator]:
    out: dict[tuple[str, str], Estimator] = {}
    for where, cls, *fixed in _rows(table):
        (key,) = _keys(where)
        args = {k: _literal(v) for k, v in (f.split("=", 1) for f in fixed)}
        if cls == "+":  # more arguments of the row above
            if key not in out or not args.keys().isdisjoint(out[key].fixed):
                raise ValueError(f"bad continuation row of {where}")
            out[key].fixed.update(args)
        elif key in out:
            raise ValueError(f"{where} defined twice")
        else:
            out[key] = Estimator(cls, args)
    return out


SPACES = _parse_spaces(SPACE_TABLE)
"""(family, task) -> its parameters, in order."""
ESTIMATORS = _parse_estimators(ESTIMATOR_TABLE)
"""(family, task) -> scikit-learn class name and fixed arguments."""
assert set(SPACES) == set(ESTIMATORS) == {(f, t) for f in FAMILIES for t in TASKS}

PATCHED = ("lasso", "linear")
"""Families rebuilt for today's scikit-learn (module docstring)."""

METRICS = {"clf": ("nll", "acc"), "reg": ("mae", "mse")}
SCORERS = {"nll": "neg_log_loss", "acc": "accuracy", "mae": "neg_mean_absolute_error",
           "mse": "neg_mean_squared_error"}
CV_SPLITS = 5
TEST_SIZE = 0.2


def task_of(dataset: str) -> str:
    return DATASETS[dataset]


def api_config(model: str, dataset: str) -> dict:
    """The space of ``model`` on ``dataset`` in the structure Bayesmark's optimisers take
    (``{name: {"type", "space", "range": (low, high)}}``, a bool ``{"type": "bool"}``): what
    ``check.py`` compares with the package's and its random search draws from."""
    out: dict[str, dict] = {}
    for p in SPACES[model, task_of(dataset)]:
        out[p.name] = ({"type": p.type} if p.type == "bool" else
                       {"type": p.type, "space": p.scale, "range": (p.low, p.high)})
    return out


# ---------------------------------------------------------------------------------- the split
# Fixed before any result of this suite was seen (README.md, "Selection discipline"); never
# changed. Every family has all 10 (data set, metric) pairs: 8 classification, 2 regression.
HALVES: dict[str, tuple[str, ...]] = {
    "tuning": ("DT", "SVM", "MLP-sgd", "lasso"),
    "validation": ("RF", "kNN", "MLP-adam", "ada", "linear"),
}
assert sorted(HALVES["tuning"] + HALVES["validation"]) == sorted(FAMILIES)


def half_of(model: str) -> str:
    return next(h for h, fams in HALVES.items() if model in fams)


# ---------------------------------------------------------------------------------- problems
def problem_name(model: str, dataset: str, metric: str) -> str:
    """Bayesmark's test-case name (``SklearnModel.test_case_str``), e.g. ``DT_diabetes_mse``."""
    return f"{model}_{dataset}_{metric}"


def parse_name(name: str) -> tuple[str, str, str]:
    model, dataset, metric = name.split("_")
    return model, dataset, metric


PROBLEM_NAMES: list[str] = [problem_name(m, d, k) for m in FAMILIES
                            for d, task in DATASETS.items() for k in METRICS[task]]
"""All 9 families x 5 data sets x 2 metrics = 90 problems (Bayesmark's grid without boston)."""


# ---------------------------------------------------------------------------------- models
def _sklearn_version() -> tuple[int, int]:
    import sklearn

    major, minor = sklearn.__version__.split(".")[:2]
    return int(major), int("".join(c for c in minor if c.isdigit()) or 0)


def _class(name: str):
    from sklearn import ensemble, linear_model, neighbors, neural_network, svm, tree

    for mod in (neighbors, svm, tree, ensemble, neural_network, linear_model):
        if hasattr(mod, name):
            return getattr(mod, name)
    raise KeyError(name)


class Normalized(RegressorMixin, BaseEstimator):
    """``Lasso`` / ``Ridge`` (``base``) with scikit-learn < 1.2's ``normalize`` argument.

    ``normalize=True`` with ``fit_intercept=True``: the features are centred and divided by
    ``sqrt(n var)`` (their centred L2 norms; a constant feature by 1) before the fit, the
    coefficients divided by the same after it and the intercept recomputed, as scikit-learn
    1.1's ``_preprocess_data`` / ``_set_intercept`` did; with ``fit_intercept=False`` it is
    ignored, as it was then.
    """

    def __init__(self, base: str = "Lasso", alpha: float = 1.0, fit_intercept: bool = True,
                 normalize: bool = False, max_iter: int | None = None, tol: float = 1e-4,
                 positive: bool = False, solver: str = "auto"):
        self.base = base
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.normalize = normalize
        self.max_iter = max_iter
        self.tol = tol
        self.positive = positive
        self.solver = solver

    def _estimator(self):
        from sklearn.linear_model import Lasso, Ridge

        kw = {"alpha": self.alpha, "fit_intercept": bool(self.fit_intercept),
              "max_iter": self.max_iter, "tol": self.tol}
        if self.base == "Lasso":
            return Lasso(positive=bool(self.positive), **kw)
        return Ridge(solver=self.solver, **kw)

    def fit(self, X, y):
        X = np.asarray(X, dtype=float)
        est = self._estimator()
        if self.normalize and self.fit_intercept:
            n = X.shape[0]
            offset, var = X.mean(axis=0), X.var(axis=0)
            eps = np.finfo(X.dtype).eps  # scikit-learn 1.1's _is_constant_feature
            constant = var <= n * eps * var + (n * offset * eps) ** 2
            scale = np.sqrt(var * n)
            scale[constant] = 1.0
            est.fit((X - offset) / scale, y)
            self.coef_ = est.coef_ / scale
            self.intercept_ = float(np.mean(y) - offset @ self.coef_)
        else:
            est.fit(X, y)
            self.coef_, self.intercept_ = est.coef_, est.intercept_
        return self

    def predict(self, X):
        return np.asarray(X, dtype=float) @ self.coef_ + self.intercept_


def build(model: str, dataset: str, config: Config):
    """The estimator Bayesmark builds for ``config``: ``cls(**config, **fixed)``; the patched
    families as the module docstring says."""
    clf = task_of(dataset) == "clf"
    cls_name, fixed = ESTIMATORS[model, task_of(dataset)]
    params = {**config, **fixed}  # the fixed arguments win, as in Bayesmark
    if model not in PATCHED:
        return _class(cls_name)(**params)
    if clf:
        from sklearn.linear_model import LogisticRegression
        from sklearn.multiclass import OneVsRestClassifier

        penalty = params.pop("penalty")
        params.pop("multi_class")
        if _sklearn_version() >= (1, 8):
            params["l1_ratio"] = {"l1": 1.0, "l2": 0.0}[penalty]
        else:
            params["penalty"] = penalty
        return OneVsRestClassifier(LogisticRegression(**params))
    return Normalized(base=cls_name, **params)


# ---------------------------------------------------------------------------------- data, loss
@functools.lru_cache(maxsize=None)
def load(dataset: str) -> tuple[np.ndarray, np.ndarray]:
    """Bayesmark's ``load_data``: the bundled data set, raw."""
    from sklearn import datasets

    loader = {"digits": datasets.load_digits, "iris": datasets.load_iris,
              "wine": datasets.load_wine, "breast": datasets.load_breast_cancer,
              "diabetes": datasets.load_diabetes}[dataset]
    return loader(return_X_y=True)


@functools.lru_cache(maxsize=None)
def tuning_data(dataset: str, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The 80 % that Bayesmark cross-validates on for ``shuffle_seed=seed``."""
    from sklearn.model_selection import train_test_split

    X, y = load(dataset)
    X_train, _, y_train, _ = train_test_split(X, y, test_size=TEST_SIZE, random_state=seed,
                                              shuffle=True)
    return X_train, y_train


def _plain(v: Any) -> Any:
    """A JSON value of a config value (numpy scalars to Python)."""
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return float(v)
    return v


def rng_seed(name: str, seed: int, config: Config) -> int:
    """The seed of NumPy's global generator for one evaluation: a hash of the problem, the
    shuffle seed and the configuration (numpy scalars and Python numbers alike)."""
    text = json.dumps([name, int(seed), sorted((k, _plain(v)) for k, v in config.items())])
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little")


def cv_loss(model: str, dataset: str, metric: str, seed: int, config: Config) -> float:
    """Bayesmark's CV loss of ``config`` for ``shuffle_seed=seed`` (module docstring); ``inf``
    for a failed or non-finite evaluation."""
    from sklearn.metrics import get_scorer
    from sklearn.model_selection import cross_val_score

    X, y = tuning_data(dataset, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Bayesmark ignores UserWarning; the rest is noise
        est = build(model, dataset, config)  # a removed argument (TypeError) raises here
    state = np.random.get_state()
    np.random.seed(rng_seed(problem_name(model, dataset, metric), seed, config))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            scores = cross_val_score(est, X, y, scoring=get_scorer(SCORERS[metric]),
                                     cv=CV_SPLITS, error_score="raise")
        loss = -float(np.mean(scores))
    except _InvalidParameter:  # the definition no longer fits scikit-learn: not a loss
        raise
    except Exception:  # noqa: BLE001 (Bayesmark's experiment loop: a failure is inf)
        loss = math.inf
    finally:
        np.random.set_state(state)
    return loss if math.isfinite(loss) else math.inf


try:  # scikit-learn >= 1.2: a parameter value the estimator no longer accepts
    from sklearn.utils._param_validation import InvalidParameterError as _InvalidParameter
except ImportError:  # pragma: no cover (the check's scikit-learn 1.1 environment)
    class _InvalidParameter(Exception):
        pass


def random_configs(model: str, dataset: str, n: int, seed: int) -> list[Config]:
    """``n`` configurations drawn as Bayesmark's random search draws them (uniform in the
    warped space, unwarped, clipped, ints and bools rounded), without Bayesmark."""
    rng = np.random.RandomState(seed)
    warps = {"linear": (float, float), "log": (math.log, math.exp), "logit": (_logit, _sigmoid)}
    out = []
    for _ in range(n):
        c: Config = {}
        for p in SPACES[model, task_of(dataset)]:
            if p.type == "bool":
                c[p.name] = bool(np.round(rng.uniform(0.0, 1.0)))
                continue
            to, back = warps[p.scale]
            x = min(max(back(rng.uniform(to(p.low), to(p.high))), p.low), p.high)
            c[p.name] = int(np.round(x)) if p.type == "int" else float(x)
        out.append(c)
    return out


def _logit(p: float) -> float:
    return math.log(p / (1.0 - p))


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))
