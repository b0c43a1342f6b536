"""The users' objectives (benchmarks/users/objectives.py): every problem suggests define-by-run
and evaluates to a finite, deterministic loss (in one process and across processes); the halves
split the problems and the data sets; the branches branch; the reserved data sets are not used."""

from __future__ import annotations

import importlib.util
import inspect
import json
import math
import pathlib
import subprocess
import sys

import numpy as np
import optuna
import pytest

from benchmarks.users import data as users_data
from benchmarks.users import objectives
from benchmarks.users.objectives import FAMILIES, HALVES, LOSS_CAP, PROBLEMS

ROOT = pathlib.Path(__file__).resolve().parents[1]
RESERVED = ("wine", "breast_cancer", "breast cancer", "digits")
_MISSING = [m for m in ("xgboost", "lightgbm") if importlib.util.find_spec(m) is None]
# the tests that train models need xgboost and lightgbm (both in the test extra)
needs_models = pytest.mark.skipif(
    bool(_MISSING), reason=f"{', '.join(_MISSING)} not installed: pip install -e '.[test]'")


def _random_params(name: str, n: int, seed: int = 0, fixed: dict | None = None) -> list[dict]:
    """``n`` configurations of problem ``name`` from a RandomSampler, through its ``suggest``
    (``fixed``: params enqueued, e.g. a branch); each is checked to be the trial's params."""
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=seed))
    out = []
    for _ in range(n):
        if fixed:
            study.enqueue_trial(fixed)
        trial = study.ask()
        params = PROBLEMS[name].suggest(trial)
        assert params == trial.params, name  # exactly what it suggested, nothing else
        out.append(params)
    return out


# --------------------------------------------------------------------------- registry, halves
def test_halves_split_problems_and_data():
    tuning, validation = set(HALVES["tuning"]), set(HALVES["validation"])
    assert set(HALVES) == {"tuning", "validation"}
    assert not tuning & validation
    assert tuning | validation == set(PROBLEMS)
    assert len(tuning) == len(validation) == 12
    for half, names in HALVES.items():
        assert {PROBLEMS[n].extra["family"] for n in names} == set(FAMILIES), half
        assert {PROBLEMS[n].extra["metric"] for n in names} == set(LOSS_CAP), half
        for n in names:
            assert PROBLEMS[n].extra["half"] == half
            assert users_data.DATASETS[PROBLEMS[n].extra["data"]].half == half
    data_of = {h: {PROBLEMS[n].extra["data"] for n in names} for h, names in HALVES.items()}
    assert not data_of["tuning"] & data_of["validation"]


def test_problem_records():
    for name, p in PROBLEMS.items():
        assert name == p.name and name.startswith("u-")
        assert p.kind == "ml" and p.minimum is None and p.optimum is None
        assert p.dim == FAMILIES[p.extra["family"]][2]
        assert {"family", "data", "metric", "half"} <= set(p.extra)
        assert p.extra["data"] in users_data.DATASETS


@needs_models
# --------------------------------------------------------------------------- evaluation
@pytest.mark.parametrize("name", list(PROBLEMS))
def test_evaluates_finite_and_deterministic(name):
    problem = PROBLEMS[name]
    configs = _random_params(name, 2, seed=3)
    values = [problem.evaluate(p) for p in configs]
    for v in values:
        assert isinstance(v, float) and math.isfinite(v) and 0.0 <= v <= LOSS_CAP[
            problem.extra["metric"]]
    # the same params again, after a JSON round trip (as the harness's pools store them)
    again = problem.evaluate(json.loads(json.dumps(configs[0])))
    assert again == values[0]


@needs_models
def test_losses_spread():
    """Random configurations do not all give the same loss (on the problems whose loss is
    coarsest: 1 - accuracy)."""
    for name, p in PROBLEMS.items():
        if p.extra["metric"] == "error":
            values = {p.evaluate(q) for q in _random_params(name, 4, seed=5)}
            assert len(values) >= 2, name


@needs_models
def test_deterministic_across_processes():
    """One problem of each family, evaluated here and in a fresh process in another order."""
    names = ["u-xgb-reg-diabetes", "u-lgbm-reg-linear", "u-choice-iris", "u-hgb-diabetes",
             "u-mlp-reg-friedman-wide"]
    cases = [(n, _random_params(n, 1, seed=7)[0]) for n in names]
    here = [PROBLEMS[n].evaluate(p) for n, p in cases]
    code = ("import json, sys\n"
            "from benchmarks.users.objectives import PROBLEMS\n"
            "cases = json.loads(sys.stdin.read())[::-1]\n"
            "print(json.dumps([PROBLEMS[n].evaluate(p) for n, p in cases][::-1]))\n")
    out = subprocess.run([sys.executable, "-c", code], input=json.dumps(cases), cwd=ROOT,
                         capture_output=True, text=True, timeout=120, check=True)
    there = json.loads(out.stdout.strip().splitlines()[-1])
    assert there == here  # JSON keeps a float's repr exactly: bit-identical


@needs_models
def test_non_finite_or_larger_loss_is_capped(monkeypatch):
    suggest, _, dim, about = FAMILIES["hgb"]
    p = _random_params("u-hgb-diabetes", 1)[0]
    for bad, expected in [(math.nan, LOSS_CAP["rmse"]), (math.inf, LOSS_CAP["rmse"]),
                          (1e9, LOSS_CAP["rmse"]), (0.5, 0.5)]:
        monkeypatch.setitem(FAMILIES, "hgb", (suggest, lambda *a, v=bad: v, dim, about))
        assert PROBLEMS["u-hgb-diabetes"].evaluate(p) == expected


@needs_models
def test_diverged_mlp_is_capped(monkeypatch):
    """scikit-learn's "non-finite parameter weights" error gives the cap; other errors raise."""
    from sklearn.pipeline import Pipeline

    def diverge(self, *a, **k):
        raise ValueError("Solver produced non-finite parameter weights.")

    p = _random_params("u-mlp-reg-linear", 1)[0]
    monkeypatch.setattr(Pipeline, "fit", diverge)
    assert PROBLEMS["u-mlp-reg-linear"].evaluate(p) == LOSS_CAP["rmse"]

    def broken(self, *a, **k):
        raise ValueError("something else")

    monkeypatch.setattr(Pipeline, "fit", broken)
    with pytest.raises(ValueError, match="something else"):
        PROBLEMS["u-mlp-reg-linear"].evaluate(p)


def test_loss_functions():
    y = np.array([0, 1, 1, 0])
    assert objectives._loss("error", y, np.array([0.1, 0.9, 0.4, 0.2])) == 0.25
    assert objectives._loss("logloss", y, np.array([0.0, 1.0, 1.0, 0.0])) == 0.0
    assert objectives._loss("logloss", y, np.array([1.0, 1.0, 1.0, 0.0])) == pytest.approx(
        -math.log(1e-15) / 4)
    three = np.array([[0.5, 0.25, 0.25], [0.2, 0.2, 0.6]])
    assert objectives._loss("logloss", np.array([0, 2]), three) == pytest.approx(
        -(math.log(0.5) + math.log(0.6)) / 2)
    assert objectives._loss("rmse", np.array([0.0, 1.0]), np.array([1.0, 0.0])) == 1.0


@needs_models
def test_every_thread_pool_is_limited():
    """The controller that limits evaluations to one thread sees every OpenMP and BLAS library
    loaded by the families' packages."""
    from threadpoolctl import ThreadpoolController

    PROBLEMS["u-hgb-diabetes"].evaluate(_random_params("u-hgb-diabetes", 1)[0])
    ours = {lib.filepath for lib in objectives._threads().lib_controllers}
    packages = ("sklearn", "scikit_learn", "xgboost", "lightgbm", "numpy", "scipy")
    loaded = {lib.filepath for lib in ThreadpoolController().lib_controllers
              if any(s in lib.filepath for s in packages)}
    assert any("gomp" in f or "omp" in f for f in ours)
    assert loaded <= ours


# --------------------------------------------------------------------------- branches
def _keys(name: str, fixed: dict, n: int = 3) -> set[frozenset]:
    return {frozenset(p) for p in _random_params(name, n, seed=11, fixed=fixed)}


@needs_models
def test_xgb_booster_branches():
    base = {"booster", "lambda", "alpha", "subsample", "colsample_bytree"}
    tree = base | {"max_depth", "min_child_weight", "eta", "gamma", "grow_policy"}
    dart = tree | {"sample_type", "normalize_type", "rate_drop", "skip_drop"}
    for name in ("u-xgb-clf-hard", "u-xgb-reg-diabetes"):
        assert _keys(name, {"booster": "gblinear"}) == {frozenset(base)}
        assert _keys(name, {"booster": "gbtree"}) == {frozenset(tree)}
        assert _keys(name, {"booster": "dart"}) == {frozenset(dart)}
        assert len(dart) == PROBLEMS[name].dim
    # the branches give different losses too
    p = _random_params("u-xgb-reg-diabetes", 1, seed=2, fixed={"booster": "dart"})[0]
    linear = {k: v for k, v in p.items() if k in base} | {"booster": "gblinear"}
    assert PROBLEMS["u-xgb-reg-diabetes"].evaluate(p) != PROBLEMS[
        "u-xgb-reg-diabetes"].evaluate(linear)


def test_choice_branches():
    for name in ("u-choice-iris", "u-choice-clf-wide"):
        svc = _keys(name, {"classifier": "SVC"})
        rf = _keys(name, {"classifier": "RandomForest"})
        lr = _keys(name, {"classifier": "LogisticRegression"})
        assert svc == {frozenset({"classifier", "svc_c", "svc_gamma"})}
        assert rf == {frozenset({"classifier", "rf_max_depth", "rf_n_estimators"})}
        assert lr == {frozenset({"classifier", "lr_c"})}
        assert len(set().union(*svc, *rf, *lr)) == PROBLEMS[name].dim


def test_mlp_depth_branches():
    extra = {"optimizer", "learning_rate_init", "alpha"}
    for depth in (1, 2, 3):
        units = {f"n_units_l{i}" for i in range(depth)}
        assert _keys("u-mlp-clf-hard", {"n_layers": depth}) == {
            frozenset({"n_layers"} | units | extra)}
    assert PROBLEMS["u-mlp-clf-hard"].dim == 1 + 3 + len(extra)


def test_dims_are_the_union_of_the_branches():
    for name, p in PROBLEMS.items():
        seen: set[str] = set()
        for q in _random_params(name, 60, seed=13):
            seen |= set(q)
        assert len(seen) == p.dim, name


# --------------------------------------------------------------------------- reserved data
def test_reserved_data_sets_not_used(monkeypatch):
    import sklearn.datasets

    for p in PROBLEMS.values():
        text = (p.name + " " + p.description + " " + json.dumps(p.extra)).lower()
        assert not any(r in text for r in RESERVED), p.name
    for d in users_data.DATASETS.values():
        assert d.maker in {"make_classification", "make_regression", "make_friedman1",
                           "load_iris", "load_diabetes"}, d.name
        assert not any(r in (d.name + d.about).lower() for r in RESERVED), d.name
    for mod in (objectives, users_data, sys.modules["benchmarks.users"]):
        source = inspect.getsource(mod)
        for banned in ("load_wine", "load_breast_cancer", "load_digits", "fetch_",
                       "fetch_openml"):
            assert banned not in source, (mod.__name__, banned)
    # building every data set calls none of the reserved loaders and downloads nothing
    for banned in ("load_wine", "load_breast_cancer", "load_digits", "fetch_openml",
                   "fetch_california_housing", "fetch_covtype"):
        monkeypatch.setattr(sklearn.datasets, banned, _forbidden(banned))
    for name in users_data.DATASETS:
        X, y = users_data.load.__wrapped__(name)
        assert len(X) == len(y) <= 3000


def _forbidden(name: str):
    def call(*a, **k):
        raise AssertionError(f"{name} must not be called")
    return call
