"""Data sets of the users' objectives (``objectives.py``): generated, plus scikit-learn's bundled
iris and diabetes; nothing is downloaded.

Each data set is a fixed function of its recipe: the generators (``make_classification``,
``make_regression``, ``make_friedman1``) take a fixed ``random_state``, and so do the split
(:func:`split`: 75 % train / 25 % validation, stratified for classification) and the folds
(:func:`folds`: ``StratifiedKFold(shuffle=True, random_state=0)``). Regression targets are
standardised (z-score over the whole data set), so an RMSE is in units of the target's standard
deviation (predicting the mean gives about 1). Features are left as generated; the models that
need standardised features standardise them in a pipeline fitted on the training part.

Every data set belongs to one half (``DATASETS[name].half``): no data set of the validation half
is used by a problem of the tuning half, and the reverse. wine, breast_cancer and digits are
reserved for the project's final check and are not used here.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class DataSpec:
    """A data set: ``task`` is "binary", "multiclass" or "regression"; ``maker`` names the
    scikit-learn function (``make_classification``, ``make_regression``, ``make_friedman1``,
    ``load_iris``, ``load_diabetes``) and ``kwargs`` its arguments."""

    name: str
    task: str
    half: str
    maker: str
    kwargs: dict
    about: str


def _clf(name: str, half: str, about: str, n_classes: int = 2, **kw: Any) -> DataSpec:
    task = "binary" if n_classes == 2 else "multiclass"
    return DataSpec(name, task, half, "make_classification", {"n_classes": n_classes, **kw}, about)


def _reg(name: str, half: str, about: str, maker: str, **kw: Any) -> DataSpec:
    return DataSpec(name, "regression", half, maker, kw, about)


DATASETS: dict[str, DataSpec] = {d.name: d for d in [
    # ---------------------------------------------------------------- tuning half
    _clf("clf-hard", "tuning", "make_classification 2000 x 20, 6 informative, flip_y 0.10, "
         "class_sep 0.8", n_samples=2000, n_features=20, n_informative=6, n_redundant=4,
         flip_y=0.10, class_sep=0.8, random_state=101),
    _clf("clf-clusters", "tuning", "make_classification 1500 x 10, 6 informative, 3 clusters "
         "per class, flip_y 0.05", n_samples=1500, n_features=10, n_informative=6,
         n_redundant=2, n_clusters_per_class=3, flip_y=0.05, class_sep=1.0, random_state=106),
    _clf("clf-imbalanced", "tuning", "make_classification 2500 x 12, 5 informative, 85/15 "
         "classes, flip_y 0.03", n_samples=2500, n_features=12, n_informative=5,
         n_redundant=3, weights=[0.85], flip_y=0.03, class_sep=0.9, random_state=103),
    _clf("clf-small", "tuning", "make_classification 300 x 8, 4 informative, flip_y 0.15",
         n_samples=300, n_features=8, n_informative=4, n_redundant=2, flip_y=0.15,
         class_sep=1.0, random_state=105),
    _clf("clf-noisy", "tuning", "make_classification 600 x 15, 5 informative, flip_y 0.08, "
         "class_sep 0.9", n_samples=600, n_features=15, n_informative=5, n_redundant=3,
         flip_y=0.08, class_sep=0.9, random_state=109),
    DataSpec("iris", "multiclass", "tuning", "load_iris", {}, "scikit-learn's bundled iris "
             "(150 x 4, 3 classes)"),
    _reg("friedman", "tuning", "make_friedman1 1500 x 10 (5 noise features), noise 1.0",
         "make_friedman1", n_samples=1500, n_features=10, noise=1.0, random_state=201),
    _reg("reg-linear", "tuning", "make_regression 1000 x 30, 10 informative, noise 20",
         "make_regression", n_samples=1000, n_features=30, n_informative=10, noise=20.0,
         random_state=203),
    # ---------------------------------------------------------------- validation half
    _clf("clf-multiclass", "validation", "make_classification 1200 x 16, 8 informative, 4 "
         "classes, flip_y 0.05", n_classes=4, n_samples=1200, n_features=16, n_informative=8,
         n_redundant=4, flip_y=0.05, class_sep=1.0, random_state=104),
    _clf("clf-wide", "validation", "make_classification 1000 x 40, 10 informative, flip_y 0.02, "
         "class_sep 0.7", n_samples=1000, n_features=40, n_informative=10, n_redundant=10,
         flip_y=0.02, class_sep=0.7, random_state=102),
    _clf("clf-imbalanced-wide", "validation", "make_classification 3000 x 25, 8 informative, "
         "90/10 classes, flip_y 0.05", n_samples=3000, n_features=25, n_informative=8,
         n_redundant=5, weights=[0.9], flip_y=0.05, class_sep=0.8, random_state=107),
    _clf("clf-3class", "validation", "make_classification 800 x 12, 6 informative, 3 classes, "
         "flip_y 0.10", n_classes=3, n_samples=800, n_features=12, n_informative=6,
         n_redundant=2, flip_y=0.10, class_sep=0.9, random_state=108),
    _clf("clf-small-imbalanced", "validation", "make_classification 400 x 10, 4 informative, "
         "80/20 classes, flip_y 0.05", n_samples=400, n_features=10, n_informative=4,
         n_redundant=2, weights=[0.8], flip_y=0.05, class_sep=0.8, random_state=110),
    DataSpec("diabetes", "regression", "validation", "load_diabetes", {},
             "scikit-learn's bundled diabetes (442 x 10)"),
    _reg("friedman-wide", "validation", "make_friedman1 600 x 20 (15 noise features), noise 0.5",
         "make_friedman1", n_samples=600, n_features=20, noise=0.5, random_state=202),
    _reg("reg-lowrank", "validation", "make_regression 2000 x 15, 5 informative, effective "
         "rank 5, noise 0.8", "make_regression", n_samples=2000, n_features=15, n_informative=5,
         noise=0.8, effective_rank=5, tail_strength=0.5, random_state=204),
]}
"""All data sets by name."""


@functools.cache
def load(name: str) -> tuple[np.ndarray, np.ndarray]:
    """Features (float64) and target of data set ``name``: class labels 0 .. k-1, or the
    standardised regression target."""
    import sklearn.datasets as ds

    spec = DATASETS[name]
    X, y = getattr(ds, spec.maker)(**spec.kwargs, **({"return_X_y": True}
                                                     if spec.maker.startswith("load_") else {}))
    X = np.ascontiguousarray(X, dtype=np.float64)
    if spec.task == "regression":
        y = np.asarray(y, dtype=np.float64)
        y = (y - y.mean()) / y.std()
    else:
        y = np.asarray(y, dtype=np.int64)
    X.setflags(write=False)
    y.setflags(write=False)
    return X, y


@functools.cache
def split(name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The fixed holdout split of ``name``: ``X_train, X_valid, y_train, y_valid`` (25 %
    validation, ``random_state=0``, stratified for classification)."""
    from sklearn.model_selection import train_test_split

    X, y = load(name)
    strat = None if DATASETS[name].task == "regression" else y
    parts = train_test_split(X, y, test_size=0.25, random_state=0, stratify=strat)
    for a in parts:
        a.setflags(write=False)
    return tuple(parts)  # type: ignore[return-value]


@functools.cache
def folds(name: str, k: int) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """The fixed ``k``-fold split of ``name`` (``StratifiedKFold(k, shuffle=True,
    random_state=0)``; ``KFold`` for regression): a tuple of ``(train_index, valid_index)``."""
    from sklearn.model_selection import KFold, StratifiedKFold

    X, y = load(name)
    cls = KFold if DATASETS[name].task == "regression" else StratifiedKFold
    return tuple(cls(n_splits=k, shuffle=True, random_state=0).split(X, y))
