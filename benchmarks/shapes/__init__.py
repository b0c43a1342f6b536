"""Objective-shapes suite (issue 47): the values and spaces users produce, beside GPSampler, TPE,
random search and, on continuous spaces of 20+ dimensions, CMA-ES.

Problems (``problems.py``; all minimised, deterministic, known minimum and optimum; the issue's
case in brackets):

================== ====================================================================== =====
problem            what                                                                   case
================== ====================================================================== =====
penalty2d-P        smooth 2-D function (min 0, near the boundary of the valid region);     1
                   ``x0 + x1 > 1.1835`` (1/3 of the box) returns P in inf, 1e3, 1e6, 1e12
penalty4d-P        the same in 4-D (``x0 + .. + x3 > 2.2577``, 1/3 of the box)             1
plateau3d          a bowl quantised to 0.01 in a ball, the constant 0.72 on ~80 % of the   2, 5
                   cube (a stump plateau of tied values)
branches-wide      3 branches, define-by-run; the 'wide' one spans 0-101 (others ~1) and    3
                   holds the minimum
branches-costly    3 branches; 'costly' returns 20-35 everywhere, never the best            3
ellipsoid30        shifted 30-D ellipsoid                                                  2
ackley20           20-D Ackley, optimum off the centre                                     2
rosenbrock20       20-D Rosenbrock                                                         2
styblinski50       50-D Styblinski-Tang (a double well per coordinate)                     2
ellipsoid30-faces  controls of the centre start: the optimum's coordinates near the faces  2
ellipsoid30-half   (0.05-0.15 or 0.85-0.95): all of them, half of them (the rest as in
ackley20-faces     ellipsoid30), all of them
int5               integers only (one log-scaled)                                          spaces
cat6               categoricals only (6 x 5 labels)                                        spaces
h3x1e-300 ...      Hartmann-3 times 1e-300, 1e-8, 1, 1e8, 1e250, and plus 1e6              5
hartmann6          the harness's Hartmann-6 (multiple basins)                              4
================== ====================================================================== =====

Samplers: GP-UCB, GP-TS, IGP-UCB (ours, defaults, through the harness's ``make_sampler``),
GPSampler, TPE, Random; ``TPE-group`` (``multivariate=True, group=True``) on the branch
problems, ``CMA-ES`` (``CmaEsSampler``; needs the ``cmaes`` package) on the 20-50-D problems.
Importing ``problems`` registers the problems and these two samplers with the harness.

Suites (``suites.py``): ``full`` holds the budgets of issue 47 and is what its "What must hold"
checks are judged on; ``quick`` looks at every case once, 3 seeds, shorter budgets.

========= ============================================= ============= =============
group     problems                                      full          quick
========= ============================================= ============= =============
penalty   penalty2d-{inf,1e3,1e6,1e12}, penalty4d-...    40 x 5 seeds  30 x 3 (2-D inf, 1e6)
plateau   plateau3d                                     40 x 5        30 x 3
branches  branches-wide, branches-costly                60 x 10       40 x 3
dims30    ellipsoid30                                   40 x 5        40 x 3
dims20    ackley20, rosenbrock20                        80 x 5        -
dims50    styblinski50                                  80 x 5        -
faces30   ellipsoid30-faces, ellipsoid30-half           40 x 5        -
faces20   ackley20-faces                                80 x 5        -
spaces    int5, cat6                                    40 x 5        30 x 3
scales    h3x1e-300, h3x1e-8, h3x1, h3x1e8, h3x1e250,   40 x 5        30 x 3 (1e-300, 1, 1e250)
          h3+1e6
basins    hartmann6                                     100 x 40      60 x 3
========= ============================================= ============= =============

Commands (from the repository root; one JSON line per finished run, so any part can be
interrupted and continued with ``--resume``; ``--jobs 2`` for two worker processes)::

    python -m benchmarks.shapes list                         # problems, suites, samplers
    python -m benchmarks.shapes run --suite quick --samplers GP-UCB TPE Random --seeds 2 \\
        --out /tmp/shapes-smoke                              # smoke run, ~15 s
    python -m benchmarks.shapes run --suite full --resume    # benchmarks/reports/shapes-full
    python -m benchmarks.shapes run --suite full --groups basins --jobs 2 --resume
    python -m benchmarks.shapes report benchmarks/reports/shapes-full \\
        [--baseline DIR]                                     # report.md (+ subdirectories)

``--groups``, ``--problems``, ``--samplers`` (a group runs the named samplers it runs by default;
a variant such as ``'GP-UCB{...}'`` runs on every group), ``--seeds`` / ``--seed-list`` /
``--first-seed`` and ``--trials`` narrow or override the suite. ``--baseline DIR`` gives the
runs of today's code for the branches check's "best value no worse than today's".

The report (``report.py``) gives per problem and sampler the median best value and regret with
the interquartile range, the mean value over the run (branch problems), how many of our runs
have a start-up point as their best trial (``gpbandit:state`` records, kept per trial in the run
record's ``model_trials`` by ``run.run_one``), the stuck runs on Hartmann-6
(``benchmarks/bench_stuck.py``'s definition: regret at T above 1e-2), and the issue's checks as
PASS / FAIL lines.

CPU time of the full suite (one seed of every (problem, sampler) at the full budget, idle
2-core machine, frozen package 23199de; seconds per run: ours 0.3-1.2 on the 2-6-D problems,
2-4 on 20-D x 80, 3-6 on 50-D x 80, 2.4-2.7 on Hartmann-6 x 100; GPSampler 1-2.3, 5.7 (30-D),
8 (20-D, Hartmann-6), 20 (50-D); TPE, CMA-ES and Random below 0.5), one core: penalty ~3 min,
30-D ~1 min, 20-D ~3 min, branches ~1.5 min, Hartmann-6 ~11 min (~5 min without GPSampler),
the rest ~5 min; all ~25 min, ~13 min with ``--jobs 2`` on an idle machine.
"""
