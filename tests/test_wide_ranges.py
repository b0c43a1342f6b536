"""Wide integer and fine-step ranges (issue 14): never enumerated, always valid values."""

from __future__ import annotations

import math
import warnings

import numpy as np
import optuna
import pytest
from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution

from optuna_gpbandit import GPTSSampler, GPUCBSampler, IGPUCBSampler
from optuna_gpbandit._maximize import _line_values, maximize_acquisition
from optuna_gpbandit._space import RELAX_THRESHOLD, EncodedSpace
from optuna_gpbandit._storage import PARAMS, STATE, read_trial_json

SAMPLERS = [GPUCBSampler, GPTSSampler, IGPUCBSampler]
WIDE = {  # the study test suggests these same distributions
    "int": IntDistribution(0, 10**12),
    "int_log": IntDistribution(1, 10**12, log=True),
    "float_step": FloatDistribution(0.0, 1e6, step=1e-6),
}
with warnings.catch_warnings():  # Optuna moves `high` onto the grid
    warnings.simplefilter("ignore")
    MORE = {
        "float_step_neg": FloatDistribution(-1e6, 1e6, step=1e-6),
        "int_step": IntDistribution(-(10**12), 10**12, step=7),
    }


def _valid(dist, v) -> bool:
    if isinstance(dist, IntDistribution) and type(v) is not int:
        return False
    if isinstance(dist, FloatDistribution) and type(v) is not float:
        return False
    return bool(dist._contains(dist.to_internal_repr(v)))


# ---------------------------------------------------------------------------------------------
# studies
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", list(WIDE))
@pytest.mark.parametrize("sampler_cls", SAMPLERS)
def test_study_with_wide_parameter_gives_valid_gp_values(sampler_cls, kind):
    dist = WIDE[kind]
    suggest = {
        "int": lambda t: t.suggest_int("v", 0, 10**12),
        "int_log": lambda t: t.suggest_int("v", 1, 10**12, log=True),
        "float_step": lambda t: t.suggest_float("v", 0.0, 1e6, step=1e-6),
    }[kind]

    def objective(trial):
        x = trial.suggest_float("x", -1.0, 1.0)
        v = suggest(trial)
        u = math.log(v) / math.log(dist.high) if dist.log else v / dist.high
        return (x - 0.3) ** 2 + (u - 0.7) ** 2

    study = optuna.create_study(sampler=sampler_cls(seed=0, n_startup_trials=3))
    study.optimize(objective, n_trials=12)
    trials = study.trials
    assert len(trials) == 12 and all(t.state.is_finished() for t in trials)
    for t in trials:
        assert _valid(dist, t.params["v"]), t.params
    for t in trials[3:]:  # GP rounds: the sampled point is the one used (Optuna kept it)
        assert read_trial_json(t, STATE) is not None
        stored = read_trial_json(t, PARAMS)["params"]
        assert stored["v"] == float(dist.to_internal_repr(t.params["v"]))
        assert stored["x"] == t.params["x"]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_finds_integer_optimum_in_wide_range(seed):
    n_max, opt = 10**7, 3_141_592

    def objective(trial):
        return -(((trial.suggest_int("n", 0, n_max) - opt) / n_max) ** 2)

    study = optuna.create_study(
        direction="maximize", sampler=GPUCBSampler(seed=seed, n_startup_trials=3)
    )
    study.optimize(objective, n_trials=30)
    # Random search on the same seeds misses 1 % for seeds 0 and 2 (and 3 of seeds 0..5).
    assert abs(study.best_params["n"] - opt) <= 0.01 * n_max


# ---------------------------------------------------------------------------------------------
# space
# ---------------------------------------------------------------------------------------------
def test_relaxed_mask_and_counts():
    space = EncodedSpace(
        {
            "x": FloatDistribution(0, 1),
            "small": IntDistribution(0, RELAX_THRESHOLD - 1),
            "edge": IntDistribution(0, RELAX_THRESHOLD),  # RELAX_THRESHOLD + 1 values
            "c": CategoricalDistribution(list(range(2000))),
            **WIDE,
        }
    )
    assert space.n_values == [None, RELAX_THRESHOLD, RELAX_THRESHOLD + 1, 2000,
                              10**12 + 1, 10**12, 10**12 + 1]
    assert space.is_relaxed.tolist() == [True, False, True, False, True, True, True]
    assert space.is_continuous.tolist() == [True] + [False] * 6
    assert space.cardinality is None


def test_cardinality_is_exact_and_nothing_is_enumerated():
    space = EncodedSpace({f"i{k}": IntDistribution(0, 10**12) for k in range(30)})
    assert space.cardinality == (10**12 + 1) ** 30
    assert space.enumerate(10**9) is None
    with pytest.raises(ValueError, match="too many"):
        space.column_values(0)


@pytest.mark.parametrize("name", list(WIDE) + list(MORE))
def test_wide_column_decode_snap_sobol_valid(name):
    dist = {**WIDE, **MORE}[name]
    space = EncodedSpace({name: dist})
    rng = np.random.default_rng(0)
    U = np.concatenate([space.sobol(256, seed=1)[:, 0], rng.uniform(-0.1, 1.1, 300),
                        [0.0, 1.0, 1 - 1e-16, 1e-300, -np.inf, np.inf]])
    for u in U:
        v = space.decode(np.array([u]))[name]
        assert _valid(dist, v), (u, v)
        s = space.snap(np.array([u]))
        assert space.decode(s)[name] == v  # snapped points are fixed points
        np.testing.assert_array_equal(space.snap(s), s)
    assert space.decode(np.array([0.0]))[name] == dist.low
    assert space.decode(np.array([1.0]))[name] == dist.high


def test_values_at_exact_for_integers():
    idx = np.array([0.0, 1.0, 123_456_789_012.0, 10**12 - 1.0, 10**12])
    for name in ("int", "int_log"):
        dist = WIDE[name]
        space = EncodedSpace({name: dist})
        got = [space.decode(np.array([u]))[name] for u in space.column_values_at(0, idx)]
        assert got == [min(dist.low + int(k), dist.high) for k in idx]
        assert all(_valid(dist, v) for v in got)


@pytest.mark.parametrize("name", list(WIDE) + list(MORE))
def test_line_values_small_sorted_unique_with_neighbours(name):
    dist = {**WIDE, **MORE}[name]
    space = EncodedSpace({name: dist})
    col = space.columns[0]
    for u in (0.0, 0.123456789, 0.5, 1.0):
        current = space.snap(np.array([u]))[0]
        vals = _line_values(space, 0, current)
        assert 9 <= vals.size <= 64
        assert np.all(np.diff(vals) > 0)
        assert current in vals
        decoded = [space.decode(np.array([v]))[name] for v in vals]
        assert all(_valid(dist, v) for v in decoded)
        assert len(set(decoded)) == len(decoded)
        # the grid neighbours of the current value are tried
        k = int(col.index_of(np.asarray(current)))
        for j in (k - 1, k + 1):
            if 0 <= j < col.n_values:
                assert np.any(np.isclose(vals, col.values_at(np.array([float(j)]))[0],
                                         rtol=0, atol=1e-15))
        assert vals[0] <= 0.02 and vals[-1] >= 0.98  # and a spread over the range


class _Peak:
    """A smooth acquisition on the encoded cube with its maximum at ``centre``."""

    def __init__(self, centre: np.ndarray, width: float = 0.05) -> None:
        self.c, self.w = np.asarray(centre, dtype=float), width

    def values(self, X: np.ndarray) -> np.ndarray:
        return np.exp(-np.sum((X - self.c) ** 2, axis=-1) / self.w**2)

    def value_grad(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        v = float(self.values(x[None, :])[0])
        return v, -2.0 * (x - self.c) / self.w**2 * v


def test_maximiser_relaxes_wide_integer_then_snaps():
    dists = {"n": IntDistribution(0, 10**12), "x": FloatDistribution(0.0, 1.0)}
    space = EncodedSpace(dists)
    target = 314_159_265_358
    acq = _Peak(np.array([space.encode({"n": target, "x": 0.0})[0], 0.42]))
    x, f = maximize_acquisition(acq, space, np.random.default_rng(0))
    params = space.decode(x)
    assert _valid(dists["n"], params["n"])
    # the relaxed optimum (to L-BFGS-B's precision), rounded onto the grid
    assert abs(params["n"] - target) <= 1e-6 * 10**12
    assert params["x"] == pytest.approx(0.42, abs=1e-5)
    assert f == pytest.approx(float(acq.values(space.snap(x)[None, :])[0]))


class _Edge:
    """A peak beyond ``edge`` in the first column, cut by a steep smooth penalty past it (a
    constraint boundary between two integers, as the penalised acquisition has)."""

    def __init__(self, edge: float, peak: float) -> None:
        self.edge, self.peak = edge, peak

    def values(self, X):
        u = np.atleast_2d(X)[:, 0]
        return -(u - self.peak) ** 2 - 1e4 * np.maximum(u - self.edge, 0.0) ** 2

    def value_grad(self, x):
        u = float(x[0])
        grad = np.zeros_like(np.asarray(x, dtype=float))
        grad[0] = -2 * (u - self.peak) - 2e4 * max(u - self.edge, 0.0)
        return float(self.values(np.asarray(x)[None, :])[0]), grad


def test_relaxed_optimum_on_an_edge_rounds_to_the_allowed_side():
    """The relaxed optimum sits at 805.6 (between 805 and 806): plain rounding gives 806,
    past the edge and worse than the start, so the polish was thrown away; the best grid
    neighbour is 805."""
    dists = {"n": IntDistribution(0, 10**4)}
    space = EncodedSpace(dists)
    assert space.is_relaxed[0]
    edge = space.encode({"n": 805})[0] + 0.6 * (space.encode({"n": 806})[0]
                                                 - space.encode({"n": 805})[0])
    acq = _Edge(edge, peak=edge + 0.05)
    x, _ = maximize_acquisition(acq, space, np.random.default_rng(0), n_candidates=64)
    assert space.decode(x)["n"] == 805
