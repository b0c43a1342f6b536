"""Users' objectives (the ``users`` suite): hyperparameter-tuning objectives written the way
optuna-examples writes them (xgboost, lightgbm, a scikit-learn model choice,
HistGradientBoosting, an MLP of dynamic depth) on generated data and scikit-learn's bundled iris
and diabetes; see ``objectives.py`` and ``data.py``."""
