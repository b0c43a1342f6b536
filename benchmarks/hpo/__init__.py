"""Real-HPO suite (issue 30): 16 scikit-learn tuning tasks, normalised and anytime scores.

Tasks (``tasks.py``; model x bundled data set x metric, Bayesmark-like spaces, all minimised):

=========================== ====== =============================================== ========
task                        folds  params (Optuna kinds)                           eval s
=========================== ====== =============================================== ========
kNN-digits-acc              5      int 2, cat 1                                    0.037
kNN-wine-nll                5      int 2, cat 1                                    0.007
SVM-breast-acc              5      log 3, cat 1                                    0.014
SVR-diabetes-mae            5      log 4                                           0.024
DT-digits-acc               5      int 1, logit 4, float 1, cat 1                  0.005
DT-reg-diabetes-mse         5      int 1, logit 4, float 1, cat 1                  0.004
RF-wine-nll                 5      int 1, logit 4, float 1, bool 1                 0.047
RF-breast-acc               5      int 1, logit 4, float 1, bool 1                 0.065
MLP-adam-iris-nll           3      int 1, log 4, int-log 1, logit 2, 1-x log 1,    0.057
                                   cat 1
MLP-adam-reg-diabetes-mse   3      (as MLP-adam-iris-nll)                          0.078
ada-wine-acc                3      int-log 1, log 1                                0.071
ada-reg-diabetes-mae        3      int-log 1, log 1                                0.074
lasso-iris-nll              5      log 2                                           0.026
lasso-digits-nll            3      log 2                                           0.077
linear-breast-nll           5      log 2, cat 1                                    0.020
ElasticNet-diabetes-mse     5      log 2, logit 1, bool 2, int-log 1, cat 1        0.004
=========================== ====== =============================================== ========

eval s: mean CPU seconds of one evaluation at 20 random-search points, one thread
(``python -m benchmarks.hpo time``); mean over the tasks 0.038 s. Data: scikit-learn's bundled
iris, wine, breast_cancer, digits (a fixed 360-image subset) and diabetes; nothing is
downloaded. Losses: 1 - accuracy, log loss, MSE / MAE of the standardised target, over a fixed
CV split, so an evaluation is deterministic. Samplers: GP-UCB, GP-TS, IGP-UCB (ours, defaults),
GPSampler, TPE (Optuna 5's default, which is multivariate on single-objective studies), TPE-uv
(``multivariate=False``), Random; ``TPE-mv`` (``multivariate=True``) repeats TPE's runs exactly
under Optuna 5 and runs only if named.

Score (``report.py``): per task, f* = the best loss of any run in the result set, r(t) = the
mean over the Random seeds of their best-so-far loss after t trials; a run's score after t trials
is 100 (r(t) - best(t)) / (r(t) - f*), floored at -100 (100 = the best any run found, 0 = random
search at the same budget). Score at T: mean over seeds; anytime at T: mean over t = 5..T; suite
score: mean over tasks. T = 40 and 100: a 100-trial run gives both.

Commands (from the repository root; results in ``benchmarks/reports/hpo/``, one JSON line per
finished run, so any part can be interrupted and continued with ``--resume``)::

    python -m benchmarks.hpo list                     # tasks and samplers
    python -m benchmarks.hpo time                     # seconds per evaluation of each task
    python -m benchmarks.hpo run --samplers Random GP-UCB TPE --seeds 1 --trials 15 \\
        --out /tmp/hpo-smoke                          # smoke run, ~45 s
    # full run: 16 tasks x 7 samplers x 10 seeds x 100 trials, in parts (any split works):
    python -m benchmarks.hpo run --samplers Random TPE TPE-uv --resume
    python -m benchmarks.hpo run --samplers GP-UCB GP-TS IGP-UCB --resume
    python -m benchmarks.hpo run --samplers GPSampler --seed-list 0 1 2 3 4 --resume
    python -m benchmarks.hpo run --samplers GPSampler --seed-list 5 6 7 8 9 --resume
    python -m benchmarks.hpo report benchmarks/reports/hpo   # report.md (+ subdirectories)

``--jobs 2`` runs two worker processes (the machine has 2 cores); two parts run at the same time
must write to different directories (e.g. ``--out benchmarks/reports/hpo/gp``): ``report DIR``
merges DIR and its immediate subdirectories. ``--tasks`` / ``--first-seed`` select further.
Random must be in the result set (it defines the score's zero).

Estimated time of the full run, one core, scaled from the smoke runs (2-core machine, 1-min
load 2-6 from other work; frozen package e3f8619): evaluations 0.038-0.053 s on average (the
timings above; the 15-trial smoke runs), i.e. 10-14 min per sampler for its 16 x 10 x 100 =
16,000 trials; s / suggestion over 100-trial runs (one each on kNN-wine, ElasticNet and
MLP-adam-iris: 3, 7 and 10 params) GP-UCB / GP-TS / IGP-UCB 0.007 / 0.032 / 0.046,
GPSampler 0.06 / 0.20 / 0.30, TPE 0.002-0.005, weighted by the tasks' dimensions. Per sampler:
Random ~12 min, TPE and TPE-uv ~13 min each, GP-UCB, GP-TS and IGP-UCB ~16-21 min each,
GPSampler ~45-55 min; all seven ~2.5 h on one core, ~1.3 h with ``--jobs 2`` on an idle machine.
"""
