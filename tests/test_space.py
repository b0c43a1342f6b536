"""EncodedSpace: Optuna distributions <-> encoded vectors."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)

from optuna_gpbandit._space import EncodedSpace


def _dists() -> dict[str, BaseDistribution]:
    with warnings.catch_warnings():  # Optuna warns when it shrinks `high` onto the step grid
        warnings.simplefilter("ignore")
        return {
            "f_lin": FloatDistribution(-3.0, 5.0),
            "f_log": FloatDistribution(1e-4, 10.0, log=True),
            "f_step": FloatDistribution(-10.2, 10.2, step=0.1),
            "f_step_uneven": FloatDistribution(0.0, 1.0, step=0.3),  # high becomes 0.9
            "f_step_small": FloatDistribution(0.001, 0.002, step=0.0001),
            "i_lin": IntDistribution(0, 45),
            "i_neg": IntDistribution(-7, 3),
            "i_log": IntDistribution(1, 1000, log=True),
            "i_step": IntDistribution(-5, 17, step=3),  # high becomes 16
            "c_mixed": CategoricalDistribution((1, "a", None)),
            "c_types": CategoricalDistribution((2.5, "x", False, (1, 2))),
            "c_many": CategoricalDistribution(tuple(f"c{i}" for i in range(40))),
        }


DISTS = _dists()
DEGENERATE = {
    "f_single": FloatDistribution(1.5, 1.5),
    "i_single": IntDistribution(3, 3),
    "c_single": CategoricalDistribution(("only",)),
}


def valid_values(dist: BaseDistribution) -> list:
    """All valid values of a discrete distribution, computed independently of the package."""
    if isinstance(dist, CategoricalDistribution):
        return list(dist.choices)
    if isinstance(dist, IntDistribution):
        return list(range(dist.low, dist.high + 1, dist.step))
    n = int(round((dist.high - dist.low) / dist.step)) + 1
    return [dist.low + k * dist.step for k in range(n)]


def assert_valid(dist: BaseDistribution, v) -> None:
    assert dist._contains(dist.to_internal_repr(v)), (dist, v)
    if isinstance(dist, IntDistribution):
        assert type(v) is int, (dist, v, type(v))
    elif isinstance(dist, FloatDistribution):
        assert type(v) is float, (dist, v, type(v))
    else:
        assert any(v is c for c in dist.choices), (dist, v)


def assert_params_valid(space_dists: dict, params: dict) -> None:
    assert list(params) == list(space_dists)
    for name, dist in space_dists.items():
        assert_valid(dist, params[name])


def assert_decode_consistent(space: EncodedSpace, dists: dict, x: np.ndarray) -> None:
    params = space.decode(x)
    assert_params_valid(dists, params)
    snapped = space.snap(x)
    np.testing.assert_allclose(space.encode(params), snapped, rtol=0, atol=1e-9)
    # decoding the snapped vector gives the same parameters
    again = space.decode(snapped)
    for name, dist in dists.items():
        if isinstance(dist, FloatDistribution) and dist.step is None:
            assert again[name] == pytest.approx(params[name], rel=1e-9, abs=1e-12)
        else:
            assert again[name] is params[name] or again[name] == params[name]


# ---------------------------------------------------------------------------------------------
# decode validity for any vector
# ---------------------------------------------------------------------------------------------
SPACE = EncodedSpace(DISTS)
_coord = st.one_of(
    st.floats(-1e6, 1e6, allow_nan=False),
    st.floats(-0.5, 1.5, allow_nan=False),
    st.integers(-3, 45).map(float),
    st.sampled_from([0.0, 1.0, -0.0, 0.5, 1 - 1e-16, 1e-300, float("inf"), -float("inf")]),
)


@settings(max_examples=300, deadline=None, database=None, derandomize=True)
@given(st.lists(_coord, min_size=SPACE.d, max_size=SPACE.d))
def test_decode_any_vector_is_valid(coords):
    assert_decode_consistent(SPACE, DISTS, np.array(coords, dtype=float))


def test_decode_random_vectors_every_kind():
    rng = np.random.default_rng(0)
    X = np.concatenate(
        [
            rng.uniform(0, 1, (300, SPACE.d)),
            rng.uniform(-2, 3, (300, SPACE.d)),
            rng.normal(scale=50, size=(100, SPACE.d)),
            rng.integers(-5, 50, (100, SPACE.d)).astype(float),
        ]
    )
    for x in X:
        assert_decode_consistent(SPACE, DISTS, x)


_EDGE_U = np.concatenate([np.linspace(-1.0, 2.0, 601), [-1e9, 1e9, 1e-300, 1 - 1e-16]])


@pytest.mark.parametrize("name", list(DISTS))
def test_single_column_decode_valid(name):
    dist = DISTS[name]
    space = EncodedSpace({name: dist})
    for u in _EDGE_U:
        assert_decode_consistent(space, {name: dist}, np.array([u]))


@pytest.mark.parametrize("name", list(DEGENERATE))
def test_single_valued_column_decodes_to_its_value(name):
    # Samplers drop single-valued distributions before encoding; decoding must still be valid.
    dist = DEGENERATE[name]
    space = EncodedSpace({name: dist})
    for u in _EDGE_U:
        v = space.decode(np.array([u]))[name]
        assert_valid(dist, v)
        assert v == (dist.choices[0] if isinstance(dist, CategoricalDistribution) else dist.low)


def test_decode_returns_original_choice_objects():
    space = EncodedSpace({"c": DISTS["c_types"]})
    choices = DISTS["c_types"].choices
    for i, c in enumerate(choices):
        v = space.decode(np.array([float(i)]))["c"]
        assert v is c
    assert space.decode(np.array([-3.0]))["c"] is choices[0]
    assert space.decode(np.array([99.0]))["c"] is choices[-1]


def test_decode_clips_and_rounds_numeric():
    space = EncodedSpace({"i": IntDistribution(0, 10), "f": FloatDistribution(-3.0, 5.0)})
    assert space.decode(np.array([-0.5, -0.5])) == {"i": 0, "f": -3.0}
    assert space.decode(np.array([1.5, 7.0])) == {"i": 10, "f": 5.0}
    assert space.decode(np.array([0.34, 0.25])) == {"i": 3, "f": -1.0}
    assert space.decode(np.array([0.36, 0.5]))["i"] == 4


# ---------------------------------------------------------------------------------------------
# encode
# ---------------------------------------------------------------------------------------------
def test_encode_known_values():
    space = EncodedSpace(
        {
            "f": FloatDistribution(-3.0, 5.0),
            "fl": FloatDistribution(1e-4, 1.0, log=True),
            "i": IntDistribution(0, 10),
            "c": CategoricalDistribution((1, "a", None)),
        }
    )
    x = space.encode({"f": 1.0, "fl": 1e-2, "i": 5, "c": None})
    np.testing.assert_allclose(x, [0.5, 0.5, 0.5, 2.0], atol=1e-12)
    x = space.encode({"f": -3.0, "fl": 1.0, "i": 10, "c": 1})
    np.testing.assert_allclose(x, [0.0, 1.0, 1.0, 0.0], atol=1e-12)
    assert space.encode_many([]).shape == (0, 4)
    many = space.encode_many([{"f": 5.0, "fl": 1e-4, "i": 0, "c": "a"}] * 3)
    np.testing.assert_allclose(many, [[1.0, 0.0, 0.0, 1.0]] * 3, atol=1e-12)


@pytest.mark.parametrize("name", list(DISTS))
def test_encode_decode_round_trip_of_valid_values(name):
    dist = DISTS[name]
    space = EncodedSpace({name: dist})
    if isinstance(dist, CategoricalDistribution) or dist.step is not None:
        values = valid_values(dist)
    else:
        rng = np.random.default_rng(1)
        u = rng.uniform(0, 1, 200)
        values = [float(dist.low), float(dist.high)]
        if dist.log:
            values += list(np.exp(np.log(dist.low) + u * np.log(dist.high / dist.low)))
        else:
            values += list(dist.low + u * (dist.high - dist.low))
        values = [float(v) for v in values]
    for v in values:
        x = space.encode({name: v})
        if isinstance(dist, CategoricalDistribution):
            assert x[0] == dist.choices.index(v)
        else:
            assert -1e-12 <= x[0] <= 1 + 1e-12
        # encoded valid values are fixed points of snap
        np.testing.assert_allclose(space.snap(x), x, rtol=0, atol=1e-12)
        back = space.decode(x)[name]
        assert_valid(dist, back)
        if isinstance(dist, CategoricalDistribution):
            assert back is v
        elif isinstance(dist, IntDistribution):
            assert back == v
        else:
            assert back == pytest.approx(v, rel=1e-10, abs=1e-12)


def test_encoding_is_monotone_for_numeric_columns():
    for name, dist in DISTS.items():
        if isinstance(dist, CategoricalDistribution):
            continue
        space = EncodedSpace({name: dist})
        u = np.linspace(-0.2, 1.2, 400)
        vals = [space.decode(np.array([ui]))[name] for ui in u]
        assert all(a <= b for a, b in zip(vals, vals[1:])), name
        assert vals[0] == pytest.approx(dist.low, rel=1e-12)
        assert vals[-1] == pytest.approx(dist.high, rel=1e-12)
        assert dist.low <= vals[0] and vals[-1] <= dist.high


# ---------------------------------------------------------------------------------------------
# snap, cardinality, enumerate
# ---------------------------------------------------------------------------------------------
def test_snap_is_idempotent_and_batched():
    rng = np.random.default_rng(2)
    X = rng.uniform(-0.5, 1.5, (200, SPACE.d))
    S = SPACE.snap(X)
    assert S.shape == X.shape
    np.testing.assert_allclose(SPACE.snap(S), S, rtol=0, atol=1e-12)
    assert not np.shares_memory(S, X)
    for i, c in enumerate(SPACE.columns):
        if c.categorical:
            assert np.all(S[:, i] == np.round(S[:, i])) and S[:, i].min() >= 0
            assert S[:, i].max() <= len(c.dist.choices) - 1
        else:
            assert S[:, i].min() >= -1e-12 and S[:, i].max() <= 1 + 1e-12
    # a 1-D vector and a 3-D batch are handled the same way
    np.testing.assert_array_equal(SPACE.snap(X[0]), S[0])
    np.testing.assert_array_equal(SPACE.snap(X.reshape(20, 10, SPACE.d)).reshape(200, -1), S)


def test_snap_picks_nearest_grid_value():
    space = EncodedSpace({"i": IntDistribution(0, 4), "c": CategoricalDistribution(("a", "b", "c"))})
    S = space.snap(np.array([[0.1, 0.4], [0.13, 0.6], [0.9, 1.49], [0.2, 2.7]]))
    np.testing.assert_allclose(S, [[0.0, 0.0], [0.25, 1.0], [1.0, 1.0], [0.25, 2.0]], atol=1e-12)


@pytest.mark.parametrize("name", [n for n, d in DISTS.items() if getattr(d, "step", 1) is not None])
def test_column_cardinality_and_values(name):
    dist = DISTS[name]
    space = EncodedSpace({name: dist})
    expected = valid_values(dist)
    assert space.cardinality == len(expected)
    enc = space.column_values(0)
    assert len(enc) == len(expected)
    decoded = [space.decode(np.array([u]))[name] for u in enc]
    if isinstance(dist, FloatDistribution):
        np.testing.assert_allclose(decoded, expected, rtol=0, atol=1e-9)
    else:
        assert decoded == expected
    for v in decoded:
        assert_valid(dist, v)


def test_cardinality_spec_examples():
    assert EncodedSpace({"x": IntDistribution(0, 45)}).cardinality == 46
    assert EncodedSpace({"x": FloatDistribution(-10.2, 10.2, step=0.1)}).cardinality == 205
    space = EncodedSpace(
        {"i": IntDistribution(0, 45), "c": CategoricalDistribution((1, "a", None))}
    )
    assert space.cardinality == 138
    assert EncodedSpace({"i": IntDistribution(0, 45), "f": FloatDistribution(0, 1)}).cardinality is None
    assert EncodedSpace({}).cardinality == 1
    assert SPACE.cardinality is None
    assert SPACE.is_categorical.tolist() == [n.startswith("c_") for n in DISTS]
    assert SPACE.is_continuous.tolist() == [n in ("f_lin", "f_log") for n in DISTS]


def test_enumerate_covers_the_product():
    dists = {
        "i": DISTS["i_step"],
        "c": DISTS["c_mixed"],
        "f": DISTS["f_step_uneven"],
        "il": IntDistribution(1, 8, log=True),
    }
    space = EncodedSpace(dists)
    card = 8 * 3 * 4 * 8
    assert space.cardinality == card
    E = space.enumerate(10_000)
    assert E.shape == (card, 4)
    assert len({tuple(r) for r in E}) == card
    np.testing.assert_allclose(space.snap(E), E, rtol=0, atol=1e-12)
    seen = set()
    for x in E:
        p = space.decode(x)
        assert_params_valid(dists, p)
        seen.add((p["i"], p["c"], round(p["f"], 9), p["il"]))
    expected = set(
        itertools.product(
            valid_values(dists["i"]),
            valid_values(dists["c"]),
            [round(v, 9) for v in valid_values(dists["f"])],
            valid_values(dists["il"]),
        )
    )
    assert seen == expected
    assert space.enumerate(card) is not None
    assert space.enumerate(card - 1) is None
    assert SPACE.enumerate(10**9) is None  # continuous columns


# ---------------------------------------------------------------------------------------------
# Sobol initial designs
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [1, 37, 256])
def test_sobol_rows_are_valid(n):
    X = SPACE.sobol(n, seed=3)
    assert X.shape == (n, SPACE.d)
    np.testing.assert_allclose(SPACE.snap(X), X, rtol=0, atol=1e-12)
    for x in X:
        assert_params_valid(DISTS, SPACE.decode(x))
    cont = SPACE.is_continuous
    assert np.all((X[:, cont] >= 0) & (X[:, cont] <= 1))


def test_sobol_covers_discrete_values():
    space = EncodedSpace({"i": IntDistribution(0, 45), "c": DISTS["c_mixed"], "f": DISTS["f_step"]})
    X = space.sobol(1024, seed=0)
    decoded = [space.decode(x) for x in X]
    assert {p["i"] for p in decoded} == set(range(46))
    assert {id(p["c"]) for p in decoded} == {id(c) for c in DISTS["c_mixed"].choices}
    assert len({round(p["f"], 9) for p in decoded}) == 205


def test_sobol_deterministic_per_seed():
    np.testing.assert_array_equal(SPACE.sobol(16, seed=5), SPACE.sobol(16, seed=5))
    assert not np.array_equal(SPACE.sobol(16, seed=5), SPACE.sobol(16, seed=6))


def test_sobol_point_deterministic_and_matches_sequence():
    X = SPACE.sobol(64, seed=9)
    for i in (0, 1, 5, 31, 63):
        p = SPACE.sobol_point(i, seed=9)
        np.testing.assert_array_equal(p, SPACE.sobol_point(i, seed=9))
        np.testing.assert_allclose(p, X[i], rtol=0, atol=1e-12)
        np.testing.assert_allclose(SPACE.snap(p), p, rtol=0, atol=1e-12)
        assert_params_valid(DISTS, SPACE.decode(p))
    assert not np.array_equal(SPACE.sobol_point(3, seed=9), SPACE.sobol_point(3, seed=10))
    assert not np.array_equal(SPACE.sobol_point(3, seed=9), SPACE.sobol_point(4, seed=9))


def test_unsupported_distribution_rejected():
    class Weird(BaseDistribution):
        def to_external_repr(self, v):
            return v

        def to_internal_repr(self, v):
            return v

        def single(self):
            return False

        def _contains(self, v):
            return True

    with pytest.raises(ValueError):
        EncodedSpace({"w": Weird()})


def test_log_columns_are_log_scaled():
    space = EncodedSpace({"f": FloatDistribution(1e-4, 1.0, log=True), "i": IntDistribution(1, 10000, log=True)})
    p = space.decode(np.array([0.25, 0.5]))
    assert p["f"] == pytest.approx(1e-3, rel=1e-9)
    assert p["i"] == 100
    assert math.isclose(space.encode({"f": 1e-2, "i": 10})[0], 0.5, abs_tol=1e-12)
