"""Output warping (optuna_gpbandit._warping): the poor half compressed by rank."""

from __future__ import annotations

import numpy as np
import optuna
import pytest
from scipy.special import ndtri

from optuna_gpbandit import GPModel, GPUCBSampler
from optuna_gpbandit import _warping
from optuna_gpbandit._observations import build_observations
from optuna_gpbandit._space import EncodedSpace
from optuna_gpbandit._storage import STATE, read_trial_json


def _standardised(y: np.ndarray) -> np.ndarray:
    return (y - y.mean()) / y.std()


def _plateau() -> np.ndarray:
    """20 good values (larger is better) and 6 tied at a far poor plateau (chance level)."""
    rng = np.random.default_rng(0)
    return _standardised(np.concatenate([-rng.uniform(0.02, 0.1, 20), np.full(6, -0.885)]))


def test_the_formula_on_the_poor_half_and_the_good_half_untouched():
    z = _plateau()
    warp = _warping.fit(z)
    assert warp is not None
    u = warp.forward(z) * warp.sd + warp.mean  # before the second standardisation
    med = np.median(z)
    good = z >= med
    np.testing.assert_allclose(u[good], z[good])
    s = max(np.sqrt(np.mean((z[good] - med) ** 2)),
            _warping.SPREAD_FLOOR * np.sqrt(np.mean((z - med) ** 2)))
    # The 6 tied plateau values share the mid-rank 3.5 of 26.
    expected = max(z[-1], med + s * ndtri((3.5 - 0.5) / 26))
    np.testing.assert_allclose(u[-6:], expected)
    assert expected > z[-1] + 1.0  # the far plateau is pulled up by more than one sd
    assert warp.n_lifted == 6
    # Standardised again.
    w = warp.forward(z)
    assert abs(w.mean()) < 1e-12 and abs(w.std() - 1.0) < 1e-12


def test_order_kept_ties_tied_and_the_inverse():
    z = _plateau()
    warp = _warping.fit(z)
    w = warp.forward(z)
    order = np.argsort(z, kind="stable")
    assert np.all(np.diff(w[order]) >= 0)
    assert np.ptp(w[-6:]) == 0.0
    grid = np.linspace(-8.0, 4.0, 301)  # beyond the knots on both sides
    fg = warp.forward(grid)
    assert np.all(np.diff(fg) > 0)
    np.testing.assert_allclose(warp.inverse(fg), grid, atol=1e-9)


def test_monotone_when_the_reference_shares_its_median():
    # Reference: a far poor value and many values tied at the median; an observation outside the
    # reference lies just below that median: it must not be lifted above the median.
    z = np.array([-6.0, -3.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.9, 0.95, -1.0])
    warp = _warping.fit(z, reference=np.arange(7))
    w = warp.forward(z)
    order = np.argsort(z, kind="stable")
    assert np.all(np.diff(w[order]) >= 0)
    assert np.all(w[7:9] <= w[2])


def test_no_warp_where_it_would_change_nothing():
    rng = np.random.default_rng(1)
    assert _warping.fit(_standardised(rng.normal(size=4))) is None  # too few values
    # A long good tail and a compact poor half (Hartmann-like): nothing is lifted.
    y = np.concatenate([rng.uniform(0.0, 0.3, 25), [1.5, 2.5, 3.0]])
    assert _warping.fit(_standardised(y)) is None
    # Equal values: no spread to match.
    assert _warping.fit(np.zeros(8)) is None


def test_exploitation_does_not_collapse_the_spread():
    # Most values at the optimum (a converged run): the poor values are not lifted to the
    # optimum's level (the spread floor), so the model does not read the domain as good.
    z = _standardised(np.concatenate([np.full(20, 6.0) + np.linspace(0, 1e-3, 20),
                                      [0.5, -0.2, 0.0, 1.0, 3.0]]))
    warp = _warping.fit(z)
    w = warp.forward(z)
    assert np.max(w[20:]) < np.min(w[:20]) - 1.0


def _study_with(values: list[float]) -> optuna.Study:
    study = optuna.create_study()
    dist = optuna.distributions.FloatDistribution(0.0, 1.0)
    for i, v in enumerate(values):
        study.add_trial(optuna.trial.create_trial(params={"x": i / len(values)},
                                                  distributions={"x": dist}, value=v))
    return study


@pytest.mark.parametrize("warp", [True, False])
def test_observations_warp_and_records_in_objective_units(warp):
    values = [0.03, 0.05, 0.04, 0.885, 0.885, 0.06, 0.02, 0.07, 0.885, 0.045]
    study = _study_with(values)
    trials = study.get_trials()
    space = EncodedSpace({"x": trials[0].distributions["x"]})
    obs = build_observations(trials, space, study.direction, GPModel(output_warping=warp))
    assert (obs.warp is not None) is warp
    for i in range(len(values)):
        value, _ = obs.to_objective(float(obs.y[i]), 0.0)
        assert value == pytest.approx(values[i], abs=1e-12)


def test_the_sampler_warps_by_default_and_not_with_output_warping_false():
    def objective(t: optuna.Trial) -> float:  # a far plateau over a fifth of the domain
        x = t.suggest_float("x", 0.0, 1.0)
        return 50.0 if x > 0.8 else (x - 0.3) ** 2

    lifted = {}
    for flag in (True, False):
        study = optuna.create_study(sampler=GPUCBSampler(seed=0,
                                                         model=GPModel(output_warping=flag)))
        study.optimize(objective, n_trials=16)
        assert study.best_value < 0.01
        records = [r for r in (read_trial_json(t, STATE) for t in study.trials) if r]
        lifted[flag] = max(r["n_warped"] for r in records)
    assert lifted[True] > 0 and lifted[False] == 0
    with pytest.raises(ValueError, match="output_warping"):
        GPModel(output_warping="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="model must be a GPModel"):
        GPUCBSampler(model={"output_warping": False})  # type: ignore[arg-type]
