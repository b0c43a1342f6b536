"""Exploration schedules (spec gp_ucb section 4.4 / 9.10, igp_ucb_gp_ts 9.5), UCB and tie-breaking."""

from __future__ import annotations

import math

import numpy as np
import pytest

from optuna_gpbandit.acquisition import (
    UCB,
    argmax_random_tie,
    beta_theorem1,
    beta_theorem2,
    beta_theorem3,
    gp_ts_scale,
    igp_ucb_beta,
    theory_gamma,
    thompson_choice,
)
from optuna_gpbandit.acquisition.beta import resolve_gamma
from optuna_gpbandit.gp import GPParams, GPPosterior

TS = [1, 10, 100, 1000]

# spec gp_ucb.md section 4.4, Theorem 1 with delta = 0.1
THM1_TABLE = {
    1000: [19.416, 28.626, 37.837, 47.047],
    46: [13.258, 22.468, 31.679, 40.889],
    357: [17.356, 26.566, 35.777, 44.987],
}
THM1_DIV5 = [3.883, 5.725, 7.567, 9.409]  # |D| = 1000, divided by 5


# ---------------------------------------------------------------------------------------------
# GP-UCB (Srinivas et al.)
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("card", sorted(THM1_TABLE))
def test_theorem1_table(card):
    for t, ref in zip(TS, THM1_TABLE[card]):
        assert beta_theorem1(t, card, 0.1) == pytest.approx(ref, abs=1e-3)


def test_theorem1_divided_by_5_row():
    for t, ref in zip(TS, THM1_DIV5):
        assert beta_theorem1(t, 1000, 0.1) / 5 == pytest.approx(ref, abs=1e-3)


def test_theorem1_formula_and_monotonicity():
    # delta sits in the denominator together with the 6 (spec pitfall 2)
    assert beta_theorem1(7, 200, 0.05) == pytest.approx(
        2 * math.log(200 * 49 * math.pi**2 / (6 * 0.05)), rel=1e-14
    )
    values = [beta_theorem1(t, 200, 0.1) for t in range(1, 300)]
    assert np.all(np.diff(values) > 0)
    # larger domain or smaller delta -> larger beta
    assert beta_theorem1(5, 2000, 0.1) > beta_theorem1(5, 200, 0.1)
    assert beta_theorem1(5, 200, 0.01) > beta_theorem1(5, 200, 0.1)


def test_theorem2_values():
    for t, ref in zip([1, 10, 100], [9.6785, 28.0992, 46.5198]):
        assert beta_theorem2(t, 1, 0.1, a=1.0, b=1.0, r=1.0) == pytest.approx(ref, abs=1e-3)
    assert beta_theorem2(1, 2, 0.1) == pytest.approx(14.1008, abs=1e-3)


def test_theorem2_monotone_and_clamped():
    for d in (1, 2, 5):
        values = [beta_theorem2(t, d, 0.1) for t in range(1, 300)]
        assert np.all(np.diff(values) > 0)
    # an absurdly small d*b*r makes the raw formula negative: clamped at 0
    assert beta_theorem2(1, 3, 0.5, b=1e-6, r=1e-3) == 0.0


def test_theorem3_value_and_monotone():
    assert beta_theorem3(1, 1.0, 1.0, 0.1) == pytest.approx(3664.4215, abs=1e-3)
    assert beta_theorem3(1, 1.0, 1.0, 0.1) == pytest.approx(2 + 300 * math.log(10) ** 3, rel=1e-14)
    # B enters as 2B (squared-norm convention), not 2B^2
    assert beta_theorem3(3, 2.0, 4.0, 0.1) - beta_theorem3(3, 2.0, 0.0, 0.1) == pytest.approx(8.0)
    values = [beta_theorem3(t, 5.0, 1.0, 0.1) for t in range(1, 200)]
    assert np.all(np.diff(values) > 0)
    # example from the spec: t = 100, delta = 0.1, gamma = 20 gives about 2e6
    assert 1.5e6 < beta_theorem3(100, 20.0, 1.0, 0.1) < 2.5e6


# ---------------------------------------------------------------------------------------------
# IGP-UCB / GP-TS (Chowdhury & Gopalan)
# ---------------------------------------------------------------------------------------------
def test_igp_ucb_and_gp_ts_reference_values():
    assert igp_ucb_beta(0.0, 1.0, 0.1, 0.1) == pytest.approx(1.2570053, abs=1e-7)
    assert gp_ts_scale(0.0, 1.0, 0.1, 0.1) == pytest.approx(1.2826918, abs=1e-7)


@pytest.mark.parametrize("kind", ["se", "matern52"])
@pytest.mark.parametrize("d", [1, 3])
def test_igp_schedules_monotone_in_t(kind, d):
    betas, vs = [], []
    for t in range(1, 200):
        g = theory_gamma(t - 1, d, kind)
        betas.append(igp_ucb_beta(g, 1.0, 0.1, 0.1))
        vs.append(gp_ts_scale(g, 1.0, 0.1, 0.1))
    assert np.all(np.diff(betas) >= 0) and np.all(np.diff(vs) >= 0)
    assert betas[-1] > betas[0] and vs[-1] > vs[0]
    assert min(betas) >= 1.0


@pytest.mark.parametrize("gamma", [0.0, 0.5, 3.0, 40.0])
@pytest.mark.parametrize("B", [0.0, 1.0, 7.5])
def test_igp_schedule_properties(gamma, B):
    # R = 0 gives B exactly
    assert igp_ucb_beta(gamma, B, 0.0, 0.1) == B
    assert gp_ts_scale(gamma, B, 0.0, 0.1) == B
    # v > beta for the same gamma, and beta >= B
    for R in (0.01, 0.1, 2.0):
        beta = igp_ucb_beta(gamma, B, R, 0.1)
        v = gp_ts_scale(gamma, B, R, 0.1)
        assert v > beta >= B
        assert beta == pytest.approx(B + R * math.sqrt(2 * (gamma + 1 + math.log(10))), rel=1e-14)
        assert v == pytest.approx(B + R * math.sqrt(2 * (gamma + 1 + math.log(20))), rel=1e-14)
        assert igp_ucb_beta(gamma + 1.0, B, R, 0.1) > beta


def test_gp_ucb_width_exceeds_igp_ucb_beta():
    # spec igp 9.5: GP-UCB's beta~_t > beta_t for B=1, R=0.1, delta=0.1, gamma >= 1
    for gamma in (1.0, 5.0, 30.0):
        for t in (1, 10, 100):
            assert beta_theorem3(t, gamma, 1.0, 0.1) > igp_ucb_beta(gamma, 1.0, 0.1, 0.1)


def test_theory_gamma_values():
    assert theory_gamma(0, 2, "se") == 0.0
    assert theory_gamma(1, 2, "matern52") == 0.0
    assert theory_gamma(10, 1, "se") == pytest.approx(math.log(10) ** 2, rel=1e-14)
    assert theory_gamma(10, 2, "se") == pytest.approx(math.log(10) ** 3, rel=1e-14)
    assert theory_gamma(50, 3, "se") == pytest.approx(math.log(50) ** 4, rel=1e-14)
    # Matern-2.5 exponents d(d+1)/(5 + d(d+1)): 0.286, 0.545, 0.706 for d = 1, 2, 3 (spec sec. 2)
    for d, expo in ((1, 0.286), (2, 0.545), (3, 0.706)):
        t = 1000
        g = theory_gamma(t, d, "matern52")
        assert math.log(g / math.log(t)) / math.log(t) == pytest.approx(expo, abs=1e-3)
        assert g == pytest.approx(t ** (d * (d + 1) / (5 + d * (d + 1))) * math.log(t), rel=1e-12)
    for kind in ("se", "matern52"):
        vals = [theory_gamma(t, 2, kind) for t in range(0, 300)]
        assert np.all(np.diff(vals) >= 0)


def test_resolve_gamma_modes():
    calls = []

    def data_gain():
        calls.append(1)
        return 3.25

    assert resolve_gamma("data", 7, 2, "se", data_gain) == 3.25
    assert calls == [1]

    def must_not_be_called():
        raise AssertionError("data_gain evaluated although not needed")

    assert resolve_gamma("theory", 7, 2, "se", must_not_be_called) == theory_gamma(7, 2, "se")
    assert resolve_gamma("theory", 9, 3, "matern52", must_not_be_called) == theory_gamma(
        9, 3, "matern52"
    )
    assert resolve_gamma(1.0, 7, 2, "se", must_not_be_called) == 1.0
    assert resolve_gamma(0, 7, 2, "se", must_not_be_called) == 0.0
    seen = []

    def cb(t_minus_1, d):
        seen.append((t_minus_1, d))
        return 0.5 * t_minus_1 + d

    assert resolve_gamma(cb, 7, 2, "se", must_not_be_called) == 5.5
    assert seen == [(7, 2)]


@pytest.mark.parametrize("bad", ["dat", "Theory", "", -1.0, float("nan"), float("inf")])
def test_resolve_gamma_errors(bad):
    with pytest.raises(ValueError):
        resolve_gamma(bad, 3, 1, "se", lambda: 1.0)


@pytest.mark.parametrize("ret", [-0.1, float("nan"), float("inf")])
def test_resolve_gamma_callable_errors(ret):
    with pytest.raises(ValueError):
        resolve_gamma(lambda t, d: ret, 3, 1, "se", lambda: 1.0)


# ---------------------------------------------------------------------------------------------
# UCB acquisition
# ---------------------------------------------------------------------------------------------
def _posterior(kind="matern52", noise=0.01, seed=0):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.uniform(0, 1, 12), rng.integers(0, 3, 12), rng.uniform(0, 1, 12)])
    is_cat = np.array([False, True, False])
    params = GPParams(kind, np.array([0.3, 1.0, 0.5]), 1.3, noise)
    return GPPosterior(X, rng.normal(size=12), params, is_cat), rng


@pytest.mark.parametrize("width", [-1e-9, -1.0, float("nan"), float("inf"), -float("inf")])
def test_ucb_width_validation(width):
    post, _ = _posterior()
    with pytest.raises(ValueError):
        UCB(post, width)


@pytest.mark.parametrize("kind", ["se", "matern52"])
def test_ucb_values(kind):
    post, rng = _posterior(kind)
    Xc = np.column_stack([rng.uniform(0, 1, 50), rng.integers(0, 3, 50), rng.uniform(0, 1, 50)])
    mu, var = post.mean_var(Xc)
    np.testing.assert_array_equal(UCB(post, 0.0).values(Xc), mu)
    for w in (0.5, 3.0):
        vals = UCB(post, w).values(Xc)
        np.testing.assert_allclose(vals, mu + w * np.sqrt(var), rtol=0, atol=1e-14)
        assert np.all(vals >= mu)


@pytest.mark.parametrize("kind", ["se", "matern52"])
@pytest.mark.parametrize("width", [0.0, 0.7, 4.0])
def test_ucb_value_grad_matches_finite_differences(kind, width):
    post, rng = _posterior(kind)
    ucb = UCB(post, width)
    h = 1e-6
    for _ in range(6):
        x = np.array([rng.uniform(0, 1), float(rng.integers(0, 3)), rng.uniform(0, 1)])
        val, grad = ucb.value_grad(x)
        assert val == pytest.approx(ucb.values(x[None, :])[0], abs=1e-12)
        assert grad[1] == 0.0  # categorical dimension
        for j in (0, 2):
            e = np.zeros(3)
            e[j] = h
            fd = (ucb.values((x + e)[None, :])[0] - ucb.values((x - e)[None, :])[0]) / (2 * h)
            assert grad[j] == pytest.approx(fd, rel=1e-5, abs=1e-6)


def test_ucb_value_grad_at_zero_variance_is_finite():
    X = np.array([[0.2], [0.8]])
    post = GPPosterior(X, np.array([1.0, -1.0]), GPParams("se", np.array([0.2]), 1.0, 1e-12),
                       np.array([False]))
    val, grad = UCB(post, 2.0).value_grad(X[0])
    assert np.isfinite(val) and np.all(np.isfinite(grad))
    assert val == pytest.approx(1.0, abs=1e-4)


# ---------------------------------------------------------------------------------------------
# tie-breaking and Thompson choice
# ---------------------------------------------------------------------------------------------
def test_argmax_random_tie_picks_among_ties():
    values = np.array([1.0, 3.0, 3.0, 0.0, 3.0, 2.9])
    picks = [argmax_random_tie(values, np.random.default_rng(s)) for s in range(60)]
    assert set(picks) == {1, 2, 4}
    # deterministic per seed
    for s in range(10):
        assert argmax_random_tie(values, np.random.default_rng(s)) == picks[s]


def test_argmax_random_tie_tolerance_and_unique_max():
    rng = np.random.default_rng(0)
    for _ in range(20):
        assert argmax_random_tie(np.array([0.0, 5.0, 5.0 - 1e-6, -3.0]), rng) == 1
    # values within 1e-12 (1 + |max|) of the max count as ties
    near = np.array([100.0, 100.0 - 1e-11, 99.0])
    assert {argmax_random_tie(near, np.random.default_rng(s)) for s in range(40)} == {0, 1}
    # negative values
    neg = np.array([-4.0, -2.0, -2.0, -7.0])
    assert {argmax_random_tie(neg, np.random.default_rng(s)) for s in range(40)} == {1, 2}
    assert argmax_random_tie(np.array([3.0]), rng) == 0


def test_thompson_choice_zero_scale_is_mean_argmax():
    post, rng = _posterior("se")
    Xc = np.column_stack([rng.uniform(0, 1, 30), rng.integers(0, 3, 30), rng.uniform(0, 1, 30)])
    mu, _ = post.mean_var(Xc)
    idx, draw = thompson_choice(post, Xc, 0.0, np.random.default_rng(3))
    assert idx == int(np.argmax(mu))
    # with zero scale only the mean's argmax survives pruning, and its draw is its mean
    drawn = np.isfinite(draw)
    assert drawn.sum() == 1 and drawn[idx]
    np.testing.assert_allclose(draw[idx], mu[idx], atol=1e-14)


def test_pruning_keeps_every_plausible_winner():
    from optuna_gpbandit.acquisition.thompson import prune_candidates

    post, rng = _posterior("matern52")
    Xc = np.column_stack([rng.uniform(0, 1, 200), rng.integers(0, 3, 200), rng.uniform(0, 1, 200)])
    keep = set(prune_candidates(post, Xc, 1.0).tolist())
    draws = post.sample_joint(Xc, np.random.default_rng(0), n_samples=2000)
    winners = set(np.argmax(draws, axis=1).tolist())
    assert winners <= keep
    mu, var = post.mean_var(Xc)
    dropped = np.setdiff1d(np.arange(200), sorted(keep))
    assert dropped.size > 0
    # every dropped point is dominated by 5-sigma bands
    assert np.all(mu[dropped] + 5 * np.sqrt(var[dropped]) < np.max(mu - 5 * np.sqrt(var)))


def test_thompson_choice_seeded():
    post, rng = _posterior("matern52")
    Xc = np.column_stack([rng.uniform(0, 1, 40), rng.integers(0, 3, 40), rng.uniform(0, 1, 40)])
    a = thompson_choice(post, Xc, 1.5, np.random.default_rng(11))
    b = thompson_choice(post, Xc, 1.5, np.random.default_rng(11))
    assert a[0] == b[0]
    np.testing.assert_array_equal(a[1], b[1])
    assert a[0] == int(np.argmax(a[1]))
    picks = {thompson_choice(post, Xc, 5.0, np.random.default_rng(s))[0] for s in range(30)}
    assert len(picks) > 1


def test_early_factor_is_whole_until_15_one_from_40_and_linear_between():
    from optuna_gpbandit.acquisition.beta import EARLY_END, EARLY_UNTIL, early_factor

    assert (EARLY_UNTIL, EARLY_END) == (15, 40)
    for t in (1, 6, 15):
        assert early_factor(t, 3.0) == 3.0
    for t in (40, 41, 1000):
        assert early_factor(t, 3.0) == 1.0
    assert early_factor(20, 3.0) == pytest.approx(3.0 - 2.0 * 5 / 25)
    values = [early_factor(t, 3.0) for t in range(1, 60)]
    assert all(a >= b for a, b in zip(values, values[1:]))
    assert all(early_factor(t, 1.0) == 1.0 for t in range(1, 60))
    assert early_factor(20, 0.5) == pytest.approx(0.5 + 0.5 * 5 / 25)  # a narrower start
