"""Parameter documentation shared by the public samplers (numpydoc entries).

Every public sampler lists all its arguments in its own signature; the entries they share are
written once here and put into each class docstring by :func:`document`, where the line
``<NAME parameters>`` stands.
"""

from __future__ import annotations

import textwrap
from typing import TypeVar

T = TypeVar("T")

COMMON = """\
seed
    Seed of every random choice. Each trial's draws come from ``(seed, trial.number)``, so a
    fresh sampler on a stored study repeats an uninterrupted run. ``None`` draws a seed.
n_startup_trials
    Completed trials before the GP is used (``0``: from the first completed trial on).
    ``None`` (the default, except for ``GPTSSampler``): ``d + 1`` for ``d`` parameters (in a
    conditional space, the largest branch's), at least 5 and at most 20: the fewest points
    that span every direction of the space. Five start-up points in 7-10 dimensions left
    GP-UCB runs on a plateau for their whole budget; ``GPTSSampler``'s default is 5, where its
    draws explored better than a longer design (docs/benchmarks.md, "Start-up design"). The
    first trial goes to ``independent_sampler`` (the search space is unknown until a trial
    completes); the next ones take points of a scrambled Sobol sequence indexed by trial
    number, so parallel workers get distinct, space-filling points.
independent_sampler
    Sampler for parameters outside the relative search space (conditional or dynamic ones)
    and for trials asked before any has completed. Default: a random sampler whose draws
    depend only on ``(seed, trial number, parameter)``, the ``j``-th parameter of a trial taking
    coordinate ``j`` of a scrambled Sobol point (space-filling first batches).
deterministic_objective
    ``True``: the objective has no noise; the GP's noise variance is fixed at its floor
    (``1e-6`` of the standardised variance) instead of fitted, as Optuna's ``GPSampler`` does
    with this argument. Not with ``noise_var`` (or ``lam``).
kernel
    ``"matern52"`` (default) or ``"se"``; ARD lengthscales over the encoded parameters.
lengthscale, kernel_scale, noise_var
    Fix these hyperparameters (in encoded unit-cube inputs and standardised targets) instead
    of fitting them by MAP marginal likelihood. ``lengthscale`` may be a scalar or one value
    per parameter (in search-space order), each at least ``1e-6``; all three positive and
    finite.
standardize
    Standardise the objective values before the GP (default). ``False`` uses the raw,
    direction-oriented values, as the papers' theory assumes.
n_candidates
    Quasi-random candidates scored before local polishing (and the enumeration limit for fully
    discrete spaces).
n_local_search
    Best candidates polished with L-BFGS-B / discrete line search.
refit_growth, max_fit_points
    Hyperparameter refit schedule: refit when the number of observations grew by this
    fraction since the last fit (``0`` refits every trial); fit on at most this many points.
max_posterior_points
    At most this many trials enter the GP posterior (default 1500; ``None``: all). Beyond
    it, the posterior conditions on the pending trials, the best half of the budget and, of
    the other completed trials, half spread-out witnesses of every region evaluated and half
    a random sample (subset of data): 0.17 s per suggestion at n = 5000 against 2.8 s exact,
    at a regret per trial of 0.006 against 0.0007 (noisy Hartmann-3; docs/benchmarks.md, "What the
    posterior cap costs"). ``t`` and the refit schedule still count every trial.
warn_independent_sampling
    Log a warning when a parameter after the startup phase goes to the independent sampler.
pending
    How RUNNING and WAITING trials (other workers', or asked and not yet told) are used.
    Every completed result is used when it arrives, however late, in every mode but
    ``Censoring.paper()``:

    * ``"hallucinate"`` (default): GP-BUCB (Desautels et al. 2014). Their points shrink the
      variance, and the mean is that of the completed trials, so a batch spreads out and a
      slow trial in a good region does not push other workers away from it.
    * ``"censor"``: Verma et al.'s censoring (GP-UCB-SDF / GP-TS-SDF). Their points enter
      the GP with the worst observed value as label, which also lowers the mean near them,
      and the width grows by ``B_y`` times the sum of their posterior standard deviations:
      more exploration, which pays on rough objectives with long delays. A
      :class:`~optuna_gpbandit.Censoring` instance sets the window, a known lower bound,
      ``B_y``, the trials in the sum and Verma's ``beta_t``; ``Censoring.paper()`` also
      discards results that arrive later than the window (the paper's literal rule).
    * ``"ignore"``: completed trials only (parallel workers may repeat a point).

    A pending trial's point is never proposed again while it runs.
stale_after
    Seconds after which a RUNNING trial of another worker is presumed dead (a crashed
    worker): it leaves the model, its point is still not proposed, and a warning is logged
    once. ``None`` (default): 10 times the longest run of any finished trial, at least
    300 s; ``math.inf``: never. With Optuna's heartbeat (``RDBStorage(...,
    heartbeat_interval=...)``) a trial whose heartbeat is stale is dead as well.
constraints
    Black-box constraints ``g_j(x) <= 0`` (a value ``> 0`` is a violation, as in Optuna),
    reported by ``trial.set_constraint(name, value)`` or ``constraints_func``.
    ``"auto"`` (default, GPSampler's meaning): once trials report constraint values, the
    next point is the sampler's choice among the points that may be feasible
    (:class:`~optuna_gpbandit.constraints.FeasibleConstraints`, optimistic feasibility:
    CONFIG, Xu et al. 2023), and ``study.best_trial`` is the best feasible trial. A
    :class:`~optuna_gpbandit.constraints.FeasibleConstraints` sets its width;
    a :class:`~optuna_gpbandit.constraints.LongTermConstraints` keeps the constraints on
    average over the trials instead (Shi & Eryilmaz 2022; multipliers rebuilt from the
    stored trials at every call penalise the GP targets; the confidence width uses
    ``delta / L`` for ``L`` epochs). ``None``: constraint values are ignored.
constraints_func
    Optuna's older constraint API: ``constraints_func(frozen_trial) -> sequence of float``
    called after each COMPLETE or PRUNED trial, values stored as Optuna's own samplers do.
    With ``constraints="auto"`` or ``None`` it means ``FeasibleConstraints()``.
change_detection
    Non-stationary objectives: a :class:`~optuna_gpbandit.changepoint.ChangeDetection` that
    tests every result against the model's prediction of it (default; or Avanesov's test on
    uniform-exploration trials) and, on detection, resets the history the model sees. See
    :meth:`change_points` and :meth:`current_best_trial`.
failures
    What the model makes of FAIL trials (an exception or a NaN value), PRUNED trials and
    values of ``+-inf``:

    * ``"impute"`` (default): they enter the posterior as bad results, the worst observed
      value, or a pruned trial's last intermediate value (as TPE uses it), so the sampler
      learns where trials fail;
    * ``"ignore"``: they are left out of the model (Optuna's GPSampler does this).

    In both modes their points are not asked again while any other point is left, and a
    study where most recent trials fail logs a warning once.
"""

GP_UCB = """\
beta
    The schedule ``beta_t`` (before ``beta_scale``):

    * ``"theorem1"``: ``2 log(|D| t^2 pi^2 / (6 delta))``. In the paper ``|D|`` is the
      cardinality of the finite decision set. Here ``|D| = min(cardinality, n_candidates)``
      for a fully discrete search space and ``n_candidates`` otherwise (the number of
      points the maximiser scores per step, the discretisation of a continuous space)
      [design choice: a discrete space of 10^6 points would add ``2 log(10^6 / 1024)`` =
      13.8 to ``beta_t`` for points the maximiser never scores at once].
    * ``"theorem2"``: ``2 log(2 t^2 pi^2 / (3 delta)) + 2 d log(t^2 d b r sqrt(log(4 d a /
      delta)))`` for a continuous space of ``d`` parameters (encoded to the unit cube).
    * ``"theorem3"``: ``2 B + 300 gamma_t log(t / delta)^3``; ``gamma_t`` is bounded by the
      greedy experimental design on 256 fixed quasi-random points, divided by ``1 - 1/e``.
      Huge in practice (almost pure exploration); provided for completeness.
    * ``"auto"`` (default): ``"theorem1"``.
    * a number: constant ``beta``; a callable: ``beta(t)``.

    ``t`` is the number of completed trials the model sees plus one.
beta_scale
    Factor on ``beta_t``. ``1.0`` is the theory; the paper's experiments used ``0.2`` ("divided
    by 5"). Default ``0.05`` [design choice], re-measured with the current lengthscale prior
    on Hartmann-3/6 (10 seeds x 100 trials; scale: seeds solved on Hartmann-3 / Hartmann-6,
    cumulative regret on Hartmann-6): 0.02: 6 / 6, 57; 0.05: 7 / 6, 66; 0.1: 8 / 6, 97;
    0.2: 10 / 6, 132. Larger scales escape Hartmann-3's local minimum more often and pay in
    cumulative regret elsewhere. See docs/benchmarks.md for the numbers.
early_beta_factor
    Factor on ``beta_t`` while the model is young: the whole factor for ``t <= 15``, falling
    linearly to 1 at ``t = 40`` and 1 from there on (``t`` as above; after a restart or a
    change point it counts the new segment). Default ``3.0`` for :class:`GPUCBSampler`
    [design choice], ``1.0`` (off, not measured with change detection) for
    :class:`GPUCBCPDSampler`; ``1.0`` gives the previous default's trials exactly. The
    hyperparameters fitted on the first results are the least reliable of a run and its
    basin is chosen then: on the real-HPO suite (16 scikit-learn tasks, 10 seeds) the mean
    normalised score went 56.4 -> 59.7 at 40 trials and 67.6 -> 70.5 at 100 (GPSampler 51.5,
    58.1), where a three times wider ``beta_scale`` throughout costs the test functions
    (docs/benchmarks.md, "Early width"). The factor is 1 while trials are pending (other
    workers' trials, a batch asked before its results): their points already spread the
    batch, and on every ask the two compounded (Branin, 32 trials over 4 threads, median
    regret 0.095-0.27 over 3 x 10 seeds; with the factor off while trials are pending
    0.0057-0.0094, with ``1.0`` 0.005-0.015; ``benchmarks/bench_threads.py``). A sequential
    study never has pending trials; with ``pending="ignore"`` the model sees none, and the
    factor stays.
delta
    Failure probability in ``(0, 1)``.
lipschitz_a, lipschitz_b, domain_r
    Theorem 2 constants ``a``, ``b`` (derivative tail bound) and ``r`` (domain side; 1 after
    encoding).
rkhs_bound
    Theorem 3 ``B``, a bound on the *squared* RKHS norm of the objective.
"""

KERNELIZED = """\
B
    Bound on the RKHS norm of the (standardised) objective. Default 0.5 [design choice]:
    lower cumulative regret than 1.0 on Branin, Hartmann-3/6 and Ackley-5 (4 seeds x 60
    trials) with similar simple regret; 0.25 was too greedy on Hartmann-6.
R
    Sub-Gaussian noise level. ``None`` (IGP-UCB's default) uses the model's noise standard
    deviation ``sqrt(lambda)``, as the paper's experiments set ``lambda = R^2``. GP-TS's
    default is ``0`` (see :class:`GPTSSampler`).
delta
    Failure probability in ``(0, 1)``.
lam
    Regulariser ``lambda`` (noise variance relative to the kernel amplitude). ``None``
    (default): fitted with the other hyperparameters. ``"theory"``: ``1 + 2 / horizon``, the
    paper's specification. A number: that value (floored at ``1e-6``). A fixed ``lam`` sets the
    GP noise to ``lam * kernel_scale`` (``kernel_scale`` taken as 1 when it is fitted).
horizon
    ``T`` in ``lam="theory"``; default 100 (Optuna does not tell samplers the horizon).
gamma
    ``gamma_{t-1}``: ``"data"`` (default) the information gain
    ``0.5 log det(I + K_{t-1} / lambda)`` of the observed design; ``"theory"`` the order
    bound ``(log t)^{d+1}`` (SE) or ``t^{d(d+1)/(5+d(d+1))} log t`` (Matern-5/2) with constant
    1; a number; or a callable ``gamma(t - 1, d)``.

    With ``pending=Censoring(theory_beta=True)`` the width is Verma et al.'s
    ``B + (R + B_y) sqrt(2 (gamma_{t-1} + 1 + log(2 / delta)))`` (``B_y``: ``width``;
    ``log(4 / delta)`` for GP-TS).
early_beta_factor
    Factor on the variance the acquisition sees while the model is young, as GP-UCB's
    ``early_beta_factor`` is on ``beta_t``: the width (``v_t`` or ``beta_t``) is multiplied by
    the square root of a factor that is ``early_beta_factor`` for ``t <= 15``, falls linearly to
    1 at ``t = 40`` and is 1 from there on (``t``: points in the design, pending ones included,
    + 1; after a restart or a change point it counts the new segment). Default ``3.0`` for
    :class:`GPTSSampler` [design choice], ``1.0`` (off) for :class:`IGPUCBSampler` and
    :class:`ConstrainedGPUCBSampler`; ``1.0`` gives the paper's width throughout and the trials
    of the previous default exactly. Not applied to Verma et al.'s width
    (``Censoring(theory_beta=True)``). On the real-HPO suite (16 scikit-learn tasks, 10 seeds;
    docs/benchmarks.md, "Early width") GP-TS's mean normalised score went 53.1 -> 57.6 at 40
    trials and 60.2 -> 68.8 at 100 (GP-UCB 58.7 and 69.5, GPSampler 50.5 and 57.2 in that
    scoring); IGP-UCB's went 55.5 -> 54.5 at 40, so it stays off there. The cost is late polish
    on smooth test functions (quick suite, GP-TS: Hartmann-6's median simple regret 0.068 ->
    0.119, Rosenbrock-4's cumulative regret 33.5k -> 44.6k). As for GP-UCB, the factor is 1
    while trials are pending.
"""

MULTI_OBJECTIVE = """\
scalarization
    Multi-objective studies (``optuna.create_study(directions=[...])``): each trial draws
    weights ``lambda`` uniformly from the simplex (from its own random stream) and maximises
    a scalarisation of the objectives' acquisitions, one GP per objective (Paria, Kandasamy &
    Poczos 2019). ``"chebyshev"`` (default): ``min_i lambda_i (u_i - z_i)``, ``z_i`` the
    lowest observed standardised value; reaches every Pareto-optimal point. ``"linear"``:
    ``sum_i lambda_i u_i``; only the convex hull of the front. Ignored for one objective.
    Not with ``change_detection`` or ``LongTermConstraints`` (an error says so).
"""

RESTARTS = """\
restarts
    ``True``: once the model has been certain of its choices for 10 consecutive trials
    (posterior sd at the chosen point below 0.04 of the objective's sd), none of them improved
    the best value and much of the domain is still unexplored (mean posterior sd at least half
    the prior's), it forgets the trials so far and starts again with a fresh start-up design
    (each restart logged; the study's best trial is kept; :mod:`optuna_gpbandit._restarts`).
    A run captured by a local optimum in 5 or more dimensions gets another chance (Hartmann-6,
    40 seeds x 100 trials, runs stuck: GP-UCB 11 -> 8, IGP-UCB 14 -> 13, GP-TS 12 -> 10) at
    the price of a start-up design and a climb per restart (cumulative regret there +16 % to
    +60 %); where the data cover the domain (Branin, Hartmann-3, Ackley-5, Levy-4,
    Rosenbrock-4 in 100 trials) it never restarts. ``False`` (default): the model keeps every
    trial. Single-objective studies; not with ``change_detection`` (errors say so).
"""

WARPING = """\
output_warping
    ``True`` (default): the poorer half of the (standardised) objective values is compressed by
    rank before the GP sees it: each is lifted to at least the normal quantile of its rank,
    with the median and the better half's spread, all three taken from a space-filling subset
    of the trials (:mod:`optuna_gpbandit._warping`). A few configurations far worse than the
    rest (chance-level accuracy, a log loss that blows up, a diverging run) then no longer set
    the model's amplitude and lengthscales; the better half and the order of all values are
    kept, and a poor half no longer-tailed than normal is left as it is. Measured against
    ``False`` (docs/benchmarks.md, "Output warping"): real-HPO suite, 10 seeds, score at 40 /
    100 trials GP-UCB 50.5 / 62.6 -> 52.7 / 66.5, GP-TS 46.3 / 58.1 -> 49.8 / 63.4;
    scikit-learn pipeline's mean value
    over the run 0.105 -> 0.094; quick suite's best values better in 16 of 27 cells, worse
    in 6, cumulative regret up on Hartmann-3 (+9 % to +46 %) and Branin (+3 % to +6 %).
    ``False``: the GP sees the standardised values (the papers' model). Applies to
    single-objective studies without ``change_detection`` (whose residual test needs the model
    in objective units); records stay in objective units (``mu``, ``sigma``) and count the
    lifted values (``n_warped``).
"""

INPUT_WARPING = """\
input_warping
    ``True`` (default): each numeric parameter may pass through a monotone warp, the CDF of a
    Kumaraswamy distribution ``1 - (1 - x^a)^b`` on its unit-scaled range, fitted with the
    GP's other hyperparameters (Snoek et al. 2014; :mod:`optuna_gpbandit.gp.input_warp`).
    One lengthscale can then be short at one end of a range and long at the other: a loss
    that falls off a cliff below a few neighbours, a regularisation constant that matters
    only at its low end. The warp is kept only when it raises the fit's log posterior by
    more than the Bayesian information criterion's penalty (``0.5 log n`` per warp
    parameter); otherwise the stationary fit is used as before (the stored state then holds
    an identity warp). Measured against ``False`` (docs/benchmarks.md, "Input warping"):
    real-HPO suite, GP-UCB, 10 seeds, score at 40 trials 51.3 -> 56.4 (anytime 43.5 ->
    45.3; k-NN on wine -5.9 -> 60.1), at 100 trials 67.6 either way (anytime 55.4 -> 57.2);
    the scikit-learn pipeline of docs/conditional.md pays in its mean value over the run
    (0.094 -> 0.104: a kept warp stretches the box's edges, where UCB then samples); on the
    quick suite's test functions the warp is rarely kept (Hartmann-3/6 and Ackley-5 give the
    same trials). Categorical parameters are never warped, and nothing is warped when
    ``lengthscale`` is fixed (it fixes the input geometry). ``False``: the stationary kernel
    of the papers.
"""

_SECTIONS = {"common": COMMON, "gp_ucb": GP_UCB, "kernelized": KERNELIZED,
             "multi_objective": MULTI_OBJECTIVE, "restarts": RESTARTS, "warping": WARPING,
             "input_warping": INPUT_WARPING}


def document(cls: T) -> T:
    """Replace each ``<NAME parameters>`` line of ``cls``'s docstring by that shared text."""
    doc = cls.__doc__ or ""
    for name, text in _SECTIONS.items():
        doc = doc.replace(f"    <{name} parameters>\n", textwrap.indent(text, "    "))
    cls.__doc__ = doc
    return cls
