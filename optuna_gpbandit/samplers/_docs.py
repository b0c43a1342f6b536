"""Parameter documentation shared by the public samplers (numpydoc entries).

Every public sampler lists all its arguments in its own signature: GPSampler's six, its
exploration width, and the settings objects, which document their own fields. The entries the
samplers share are written once here and put into each class docstring by :func:`document`,
where the line ``<NAME parameters>`` stands.
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
    (``GPModel.noise_floor``) instead of fitted, as Optuna's ``GPSampler`` does
    with this argument, and no configuration is asked twice. Not with
    ``GPModel(noise_var=...)``. ``None`` (default): find out. A proposal within
    ``AcquisitionSearch.min_distance`` of an evaluated configuration asks that very
    configuration again; once a repeat has given its very value (or any value while the
    fitted noise is below 1e-2 of the kernel scale) and no configuration has given two values,
    the study is treated as deterministic: no evaluated configuration is asked again (said
    once at INFO); the noise variance is still fitted. A noisy objective shows itself at its
    first repeat and keeps its repeats, each another look at one configuration.
    ``False``: a noisy objective; a configuration is asked again where the model finds that
    worth it, except one whose repeats gave identical values.
constraints_func
    Optuna's constraint API of GPSampler: ``constraints_func(frozen_trial) -> sequence of
    float`` called after each COMPLETE or PRUNED trial, values stored as Optuna's own samplers
    do (a value ``> 0`` is a violation). With ``constraints="auto"`` or ``None`` it means
    ``FeasibleConstraints()``. ``trial.set_constraint(name, value)`` in the objective works
    without it.
warn_independent_sampling
    Log a warning when a parameter after the start-up phase goes to the independent sampler.
"""

SETTINGS = """\
model
    The GP model: kernel, fixed hyperparameters, standardisation, output and input warping,
    refit schedule and size caps (:class:`~optuna_gpbandit.GPModel`; default ``GPModel()``).
search
    How the acquisition is maximised: quasi-random candidates, local polish, warm starts
    (:class:`~optuna_gpbandit.AcquisitionSearch`; default ``AcquisitionSearch()``).
pending
    How RUNNING and WAITING trials (other workers', or asked and not yet told) enter the model:
    :class:`~optuna_gpbandit.Hallucinate` (default; GP-BUCB),
    :class:`~optuna_gpbandit.Censoring` (Verma et al.'s censoring; ``Censoring.paper()`` their
    literal rule) or :class:`~optuna_gpbandit.IgnorePending`; each sets when a running trial is
    presumed dead (``stale_after``).
failures
    What the model makes of failed and pruned trials and of ``+-inf`` values
    (:class:`~optuna_gpbandit.FailedTrials`; default: imputed as bad results, so the sampler
    learns where trials fail).
reset
    Which trials the model sees: :class:`~optuna_gpbandit.NoReset` (default: all; ``None``
    means the same), :class:`~optuna_gpbandit.ChangeDetection` (objectives
    that change over the trials; a detected change resets the history) or
    :class:`~optuna_gpbandit.Restarts` (the model starts again once it has settled with much
    of the domain unexplored; these two for single-objective studies).
constraints
    Black-box constraints ``g_j(x) <= 0`` (a value ``> 0`` is a violation, as in Optuna),
    reported by ``trial.set_constraint(name, value)`` or ``constraints_func``.
    ``"auto"`` (default, GPSampler's meaning): once trials report constraint values, the
    next point is the sampler's choice among the points that may be feasible
    (:class:`~optuna_gpbandit.FeasibleConstraints`, optimistic feasibility: CONFIG, Xu et
    al. 2023), and ``study.best_trial`` is the best feasible trial. A
    :class:`~optuna_gpbandit.FeasibleConstraints` sets its width;
    a :class:`~optuna_gpbandit.LongTermConstraints` keeps the constraints on average over
    the trials instead (Shi & Eryilmaz 2022). ``None``: constraint values are ignored.
"""

MULTI_OBJECTIVE = """\
scalarization
    Multi-objective studies (``optuna.create_study(directions=[...])``): each trial draws
    weights ``lambda`` uniformly from the simplex (from its own random stream) and maximises
    a scalarisation of the objectives' acquisitions, one GP per objective (Paria, Kandasamy &
    Poczos 2019). ``"chebyshev"`` (default): ``min_i lambda_i (u_i - z_i)``, ``z_i`` the
    lowest observed standardised value; reaches every Pareto-optimal point. ``"linear"``:
    ``sum_i lambda_i u_i``; only the convex hull of the front. Ignored for one objective.
    Not with ``Restarts``, ``ChangeDetection`` or ``LongTermConstraints`` (an error says so).
"""

_SECTIONS = {"common": COMMON, "settings": SETTINGS, "multi_objective": MULTI_OBJECTIVE}


def document(cls: T) -> T:
    """Replace each ``<NAME parameters>`` line of ``cls``'s docstring by that shared text."""
    doc = cls.__doc__ or ""
    for name, text in _SECTIONS.items():
        doc = doc.replace(f"    <{name} parameters>\n", textwrap.indent(text, "    "))
    cls.__doc__ = doc
    return cls
