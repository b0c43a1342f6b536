"""Property-based tests of the numerical core (issue 8): no NaN or inf reaches the maximiser.

Random designs with duplicated points, tiny and huge objective scales, offsets, infinite values,
pending (censored) rows, both kernels and standardisation on or off go through the same path as
a sampling call: observations -> hyperparameter fit -> posterior -> UCB / Thompson draw ->
maximiser. Every value on the way must be finite, variances non-negative, and the chosen point
valid.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution
from optuna.study import StudyDirection
from optuna.trial import create_trial

from optuna_gpbandit.pending import Design, DesignRow
from optuna_gpbandit._maximize import maximize_acquisition
from optuna_gpbandit.model import GPModel
from optuna_gpbandit._fitted_gp import fit_gp
from optuna_gpbandit._observations import build_observations
from optuna_gpbandit._space import EncodedSpace
from optuna_gpbandit.acquisition.thompson import thompson_choice
from optuna_gpbandit.acquisition.ucb import UCB

SPACE = {
    "x": FloatDistribution(-3.0, 3.0),
    "lr": FloatDistribution(1e-5, 1.0, log=True),
    "k": IntDistribution(1, 6),
    "c": CategoricalDistribution(["a", "b", "c"]),
}


@st.composite
def designs(draw):
    """(trials, pending params, space, config (with standardize on or off), direction)."""
    n_unique = draw(st.integers(1, 12))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    space = EncodedSpace(SPACE)
    U = rng.random((n_unique, space.d))
    if draw(st.booleans()):  # points packed into a tiny region
        U = 0.5 + 1e-9 * U
    reps = rng.integers(1, 4, size=n_unique)  # duplicates
    U = np.repeat(U, reps, axis=0)
    n = U.shape[0]
    params = [space.decode(u) for u in space.from_uniform(U)]
    scale = 10.0 ** draw(st.integers(-12, 12))
    offset = draw(st.sampled_from([0.0, 1.0, -1e6, 1e9]))
    kind = draw(st.sampled_from(["random", "constant", "two-level", "outlier"]))
    base = {
        "random": rng.normal(size=n),
        "constant": np.zeros(n),
        "two-level": (np.arange(n) % 2).astype(float),
        "outlier": np.r_[np.zeros(n - 1), 1e6],
    }[kind]
    values = offset + scale * base
    if draw(st.booleans()) and n > 2:
        values[rng.integers(n)] = draw(st.sampled_from([np.inf, -np.inf]))
    trials = []
    for i, (p, v) in enumerate(zip(params, values)):
        t = create_trial(params=p, distributions=SPACE, value=float(v))
        t.number = i
        trials.append(t)
    n_pending = draw(st.integers(0, 3))
    pending = [space.decode(u) for u in space.from_uniform(rng.random((n_pending, space.d)))]
    # The stationary kernel, no output warping (the model these properties were written for).
    config = GPModel(kernel=draw(st.sampled_from(["matern52", "se"])), refit_growth=0.0,
                     standardize=draw(st.booleans()), input_warping=False, output_warping=False)
    return (trials, pending, space, config,
            draw(st.sampled_from([StudyDirection.MINIMIZE, StudyDirection.MAXIMIZE])))


def _design(trials, pending):
    rows = [DesignRow(number=len(trials) + j, params=p, status="pending", in_window=True)
            for j, p in enumerate(pending)]
    return Design(observed=list(trials), observed_in_window=[False] * len(trials), rows=rows)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(designs(), st.integers(0, 2**31 - 1))
def test_pipeline_stays_finite(case, seed):
    trials, pending, space, config, direction = case
    obs = build_observations(trials, space, direction, config, design=_design(trials, pending))
    assert np.isfinite(obs.X).all() and np.isfinite(obs.y).all()
    assert np.isfinite(obs.shift) and np.isfinite(obs.scale) and obs.scale > 0

    model = fit_gp(obs, space, config, None, seed)
    post = model.posterior
    p = post.params
    assert np.isfinite(p.lengthscales).all() and (p.lengthscales > 0).all()
    assert np.isfinite(p.scale) and p.scale > 0 and np.isfinite(p.noise_var) and p.noise_var > 0

    rng = np.random.default_rng(seed)
    C = space.from_uniform(rng.random((64, space.d)))
    C = np.vstack([C, obs.X])  # the observed points themselves (zero-distance rows)
    mu, var = post.mean_var(C)
    assert np.isfinite(mu).all() and np.isfinite(var).all() and (var >= 0).all()

    acq = UCB(post, 3.0)
    assert np.isfinite(acq.values(C)).all()
    v, g = acq.value_grad(obs.X[0])
    assert np.isfinite(v) and np.isfinite(g).all()

    x, value = maximize_acquisition(acq, space, rng, n_candidates=64, n_local_search=2,
                                    warm_starts=obs.X[:3])
    assert np.isfinite(value) and np.isfinite(x).all()
    decoded = space.decode(x)
    for name, dist in SPACE.items():
        assert dist._contains(dist.to_internal_repr(decoded[name])), (name, decoded[name])

    i, draw = thompson_choice(post, C, 2.0, rng)
    assert np.isfinite(draw[i]) and 0 <= i < C.shape[0]
