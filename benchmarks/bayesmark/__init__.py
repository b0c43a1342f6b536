"""Bayesmark's own problem definitions, unedited, as a real-HPO suite (issue 50).

See ``README.md`` beside this file: the problems (``definitions.py``), the Optuna spaces and the
harness registration (``problems.py``), the tuning / validation split, the commands
(``python -m benchmarks.bayesmark ...``), the check against Bayesmark itself (``check.py``) and
the per-seed scoring (``report.py``, with random search's expected best from a pool:
``pool.py``). Importing this package imports nothing.
"""
