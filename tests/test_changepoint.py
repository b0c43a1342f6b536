"""Tests of the change-point-detection stage (``optuna_gpbandit.changepoint``).

Properties from /work/shared/specs/change_detection.md section 10.1 (deterministic unit tests)
and 10.2 (statistical tests of the CPD component) that concern the pure functions; the
sampler-level properties (roles written by a sampler, Optuna studies) belong to the sampler's tests.
Bounds on rates come from the spec's numpy re-run (numbers in brackets there) with slack; all
randomness is seeded.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution

from optuna_gpbandit._space import EncodedSpace
from optuna_gpbandit.changepoint import (
    SQRT3,
    CPDSettings,
    Domain,
    Replayer,
    ReplayState,
    TrialRecord,
    best_since,
    cpd_ridge,
    cpd_statistic,
    default_threshold,
    is_uniform_turn,
    kernel_smoothness,
    normalisation,
    rate_exponent,
    replay,
    scan,
    tail_windows,
)
from optuna_gpbandit.gp import GPParams

NOISE = 0.05


def matern52(a: np.ndarray, b: np.ndarray, ls: float | np.ndarray) -> np.ndarray:
    """Independent Matern-5/2 (unit variance) for the brute-force checks."""
    diff = (a[:, None, :] - b[None, :, :]) / ls
    s = math.sqrt(5.0) * np.sqrt((diff**2).sum(-1))
    return (1.0 + s + s**2 / 3.0) * np.exp(-s)


def gp_draw(rng: np.random.Generator, x: np.ndarray, ls: float = 0.2) -> np.ndarray:
    """A draw of GP(0, Matern-5/2, ls) at the 1-D points ``x`` (exact, joint)."""
    K = matern52(x[:, None], x[:, None], ls) + 1e-10 * np.eye(x.size)
    return np.linalg.cholesky(K) @ rng.standard_normal(x.size)


def bump(center: float):
    return lambda x: np.exp(-((x - center) ** 2) / 0.02)


def records_1d(x: np.ndarray, y: np.ndarray, uniform=None, start: int = 0) -> list[TrialRecord]:
    uniform = np.ones(x.size, bool) if uniform is None else uniform
    return [
        TrialRecord(start + i, bool(uniform[i]), x[i : i + 1], float(y[i])) for i in range(x.size)
    ]


def simulate(seed: int, n_trials: int, change_at: int | None, cpd: CPDSettings | None = None):
    """Algorithm 2's loop with the schedule and the replay state; UCB trials sit near the current
    optimum (their inputs never reach the CPD). Objective: bump at 0.2, at 0.8 from
    ``change_at``."""
    rng = np.random.default_rng(seed)
    state = ReplayState(cpd)
    records, roles = [], []
    for t in range(n_trials):
        seg = state.segment()
        uniform = is_uniform_turn(seg.n_uniform, seg.n_history)
        center = 0.2 if change_at is None or t < change_at else 0.8
        x = rng.uniform(size=1) if uniform else np.array([center + 0.02 * rng.standard_normal()])
        rec = TrialRecord(t, uniform, x, float(bump(center)(x[0]) + NOISE * rng.standard_normal()))
        state.push(rec)
        records.append(rec)
        roles.append(uniform)
    return state, records, roles


# ------------------------------------------------------------------------------------------------
# Schedule (spec 10.1.1, 10.1.2, 4 "Uniform/UCB split")
# ------------------------------------------------------------------------------------------------


def run_schedule(n_trials: int, xi: float = SQRT3) -> list[bool]:
    n_uniform, roles = 0, []
    for t in range(n_trials):
        u = is_uniform_turn(n_uniform, t, xi)
        roles.append(u)
        n_uniform += u
    return roles


def test_schedule_first_uniform_trials():
    roles = run_schedule(35)
    assert [i for i, u in enumerate(roles) if u] == [0, 1, 2, 3, 6, 9, 12, 17, 22, 27, 34]


def test_schedule_closed_form():
    counts = np.cumsum(run_schedule(900))
    for t in range(1, 901):
        assert counts[t - 1] == 1 + math.isqrt(3 * (t - 1))
    assert (counts[99], counts[299], counts[899]) == (18, 30, 52)
    assert list(counts[:5]) == [1, 2, 3, 4, 4] and counts[6] == 5


def test_schedule_tie_is_exact():
    # floating point gives sqrt(3) * sqrt(3) = 2.9999999999999996 < 3; the rule must not.
    assert not 3 <= SQRT3 * math.sqrt(3)
    assert is_uniform_turn(3, 3)
    assert not is_uniform_turn(4, 4)
    assert is_uniform_turn(2, 2, xi=math.sqrt(2))  # the same tie for another irrational xi
    assert run_schedule(4) == [True] * 4


@settings(max_examples=40, deadline=None)
@given(xi=st.floats(0.0, 5.0), t=st.integers(1, 400))
def test_schedule_fraction_follows_xi_sqrt_t(xi, t):
    count = sum(run_schedule(t, xi))
    bound = xi * math.sqrt(t - 1)
    assert min(t, bound) - 1e-6 <= count <= 1 + bound + 1e-6  # (count <= t: all uniform early on)


def test_xi_zero_one_uniform_trial():
    assert [i for i, u in enumerate(run_schedule(200, xi=0.0)) if u] == [0]


@pytest.mark.parametrize(
    "args",
    [
        (-1, 3), (2, 1), (1, -2), (1.5, 3), (True, 3),
        (1, 3, -0.1), (1, 3, math.nan), (1, 3, math.inf), (1, 3, "a"),
    ],
)
def test_schedule_bad_input(args):
    with pytest.raises(ValueError):
        is_uniform_turn(*args)


# ------------------------------------------------------------------------------------------------
# Thresholds and ridges (spec 10.1.3)
# ------------------------------------------------------------------------------------------------


def test_paper_threshold_values():
    r = rate_exponent(1, 2.5)
    assert r == pytest.approx(6 / 7)
    for n, theta in [(1, 2.6), (2, 1.4353), (3, 1.014), (5, 0.654), (10, 0.3613), (30, 0.141)]:
        assert default_threshold(n, 1, threshold_const=2.6) == pytest.approx(theta, abs=6e-4)
    assert cpd_ridge(10, 1) == pytest.approx(1.3895, abs=1e-4)
    assert cpd_ridge(10, 1, ridge_const=2.0) == pytest.approx(2 * 1.3895, abs=2e-4)
    assert rate_exponent(2, 2.5) == pytest.approx(7 / 8)
    assert default_threshold(3, 2) == pytest.approx(4.0 * 3 ** (-7 / 8))
    assert cpd_ridge(3, 2) == pytest.approx(3 ** (1 / 8))
    assert kernel_smoothness("se") == math.inf and rate_exponent(3, math.inf) == 1.0


def test_settings_threshold_defaults_and_overrides():
    assert CPDSettings().theta_0 == 4.0
    assert CPDSettings().theta(10, 1) == pytest.approx(4.0 * 10 ** (-6 / 7))
    assert CPDSettings(standardize=False).theta(2, 1) == pytest.approx(1.4353, abs=1e-4)
    assert CPDSettings(threshold_const=6.0).theta(4, 1) == pytest.approx(6.0 * 4 ** (-6 / 7))
    assert CPDSettings(rate=0.5).theta(4, 1) == pytest.approx(2.0)
    assert CPDSettings(rate=0.5).ridge(4, 1) == pytest.approx(2.0)
    assert CPDSettings(threshold=0.3).theta(7, 1) == 0.3
    assert CPDSettings(threshold=lambda n: 1.0 / n).theta(8, 3) == 0.125
    assert CPDSettings(threshold=math.inf).never_fires
    se = GPParams("se", np.array([0.3]), 1.0, 0.1)
    assert CPDSettings(params=se).theta(5, 1) == pytest.approx(0.8)  # r = 1 for nu = inf
    with pytest.raises(ValueError):
        CPDSettings(threshold=lambda n: -1.0).theta(2, 1)
    with pytest.raises(ValueError):
        CPDSettings(threshold=lambda n: math.nan).theta(2, 1)


def test_threshold_override_changes_the_decision():
    rng = np.random.default_rng(3)
    x = rng.uniform(size=(16, 1))
    y = np.sin(6 * x[:, 0]) + NOISE * rng.standard_normal(16)
    y[8:] += 3.0
    assert scan(x, y, CPDSettings(standardize=False)) is not None
    assert scan(x, y, CPDSettings(threshold=math.inf)) is None
    assert scan(x, y, CPDSettings(threshold=1e6)) is None
    assert scan(x, y, CPDSettings(threshold=lambda n: 1e6)) is None
    y_flat = np.sin(6 * x[:, 0])
    assert scan(x, y_flat, CPDSettings(standardize=False)) is None
    assert scan(x, y_flat, CPDSettings(threshold=lambda n: 1e-12)) is not None


@pytest.mark.parametrize(
    "kwargs",
    [
        {"threshold_const": 0.0},
        {"threshold_const": -1.0},
        {"threshold": -2.0},
        {"threshold": math.nan},
        {"threshold": "high"},
        {"ridge_const": 0.0},
        {"ridge_const": math.inf},
        {"rate": -0.5},
        {"max_half_window": 0},
        {"standardize": "yes"},
        {"params": GPParams("rbf", np.array([0.2]), 1.0, 0.1)},
        {"params": GPParams("matern52", np.array([-0.2]), 1.0, 0.1)},
        {"params": GPParams("matern52", np.array([0.2]), 0.0, 0.1)},
        {"params": {"kernel": "matern52"}},
    ],
)
def test_settings_bad_input(kwargs):
    with pytest.raises(ValueError):
        CPDSettings(**kwargs)


def test_formula_bad_input():
    for call in (
        lambda: default_threshold(0),
        lambda: default_threshold(2, 0),
        lambda: cpd_ridge(1.5),
        lambda: rate_exponent(1, -1.0),
        lambda: kernel_smoothness("rbf"),
        lambda: CPDSettings(params=GPParams("matern52", np.ones(2), 1.0, 0.1)).gp_params(3),
    ):
        with pytest.raises(ValueError):
            call()


# ------------------------------------------------------------------------------------------------
# Statistic (spec 10.1.4)
# ------------------------------------------------------------------------------------------------


def test_statistic_identical_halves_symmetric_and_permutation_invariant():
    rng = np.random.default_rng(0)
    XA, XB = rng.uniform(size=(6, 1)), rng.uniform(size=(6, 1))
    yA, yB = np.sin(6 * XA[:, 0]), np.cos(5 * XB[:, 0])
    assert cpd_statistic(XA, yA, XA, yA, ridge=1.3) <= 1e-24
    s_ab = cpd_statistic(XA, yA, XB, yB, ridge=1.3)
    assert s_ab > 1e-3
    assert cpd_statistic(XB, yB, XA, yA, ridge=1.3) == pytest.approx(s_ab, rel=1e-12)
    perm = rng.permutation(6)
    assert cpd_statistic(XA[perm], yA[perm], XB, yB, ridge=1.3) == pytest.approx(s_ab, rel=1e-10)
    # the kernel amplitude cancels in the mean (paper 2.1: sigma^2 and the prior scale cancel)
    p5 = GPParams("matern52", np.array([0.2]), 5.0, 123.0)
    assert cpd_statistic(XA, yA, XB, yB, ridge=1.3, params=p5) == pytest.approx(s_ab, rel=1e-10)


@pytest.mark.parametrize("d", [1, 2])
def test_statistic_brute_force(d):
    rng = np.random.default_rng(10 + d)
    ls = np.array([0.2, 0.35][:d])
    XA, XB = rng.uniform(size=(4, d)), rng.uniform(size=(4, d))
    yA, yB = rng.standard_normal(4), rng.standard_normal(4) + 1.0
    Z = rng.uniform(size=(257, d))
    lam = 0.7
    muA = matern52(Z, XA, ls) @ np.linalg.solve(matern52(XA, XA, ls) + lam * np.eye(4), yA)
    muB = matern52(Z, XB, ls) @ np.linalg.solve(matern52(XB, XB, ls) + lam * np.eye(4), yB)
    expected = np.mean((muA - muB) ** 2)  # the MEAN over the domain, not an integral or a sup
    got = cpd_statistic(
        XA, yA, XB, yB, ridge=lam, params=GPParams("matern52", ls, 1.0, 9.9), domain=Domain(Z)
    )
    assert got == pytest.approx(expected, rel=1e-9)


def test_common_level_shift_stays_visible():
    """Halves from f and f + 3 with a shared (shift, scale) fire; centring each half separately
    (the bug the spec warns about) hides the shift [spec: 200/200 against 0/200]."""
    rng = np.random.default_rng(7)
    cfg = CPDSettings()
    theta, lam = cfg.theta(8, 1), cfg.ridge(8, 1)
    shared = separate = 0
    for _ in range(40):
        x = rng.uniform(size=16)
        y = gp_draw(rng, x) + NOISE * rng.standard_normal(16)
        y[8:] += 3.0
        a, s = normalisation(y, y)
        yt = (y - a) / s
        shared += cpd_statistic(x[:8, None], yt[:8], x[8:, None], yt[8:], ridge=lam) > theta
        y1, y2 = (y[:8] - y[:8].mean()) / s, (y[8:] - y[8:].mean()) / s
        separate += cpd_statistic(x[:8, None], y1, x[8:, None], y2, ridge=lam) > theta
    assert shared == 40
    assert separate <= 2
    # and through the replay, which standardises with the exploration trials
    x = rng.uniform(size=16)
    y = gp_draw(rng, x) + NOISE * rng.standard_normal(16)
    y[8:] += 3.0
    cps = replay(records_1d(x, y)).change_points
    assert len(cps) == 1 and 8 <= cps[0] <= 15


@pytest.mark.parametrize(
    "args",
    [
        (np.zeros((0, 1)), np.zeros(0), np.ones((2, 1)), np.ones(2)),
        (np.ones((2, 1)), np.ones(3), np.ones((2, 1)), np.ones(2)),
        (np.ones((2, 1)), np.ones(2), np.ones((2, 2)), np.ones(2)),
        (np.ones(2), np.ones(2), np.ones((2, 1)), np.ones(2)),
        (np.ones((2, 1)), np.array([1.0, math.nan]), np.ones((2, 1)), np.ones(2)),
        (np.full((2, 1), math.inf), np.ones(2), np.ones((2, 1)), np.ones(2)),
    ],
)
def test_statistic_bad_input(args):
    with pytest.raises(ValueError):
        cpd_statistic(*args, ridge=1.0)


def test_statistic_bad_ridge_and_domain():
    X, y = np.ones((2, 1)), np.ones(2)
    for ridge in (0.0, -1.0, math.nan, math.inf):
        with pytest.raises(ValueError):
            cpd_statistic(X, y, X, y, ridge=ridge)
    with pytest.raises(ValueError):  # domain of another dimension
        cpd_statistic(X, y, X, y, ridge=1.0, domain=Domain.unit_cube(2))
    for bad in (np.zeros((0, 1)), np.zeros(3), np.array([[math.nan]])):
        with pytest.raises(ValueError):
            Domain(bad)
    with pytest.raises(ValueError):
        Domain(np.zeros((3, 2)), np.array([True]))


# ------------------------------------------------------------------------------------------------
# Domain (integration points)
# ------------------------------------------------------------------------------------------------


def test_domain_points():
    d1 = Domain.unit_cube(1)
    assert d1.points.shape == (1000, 1) and d1.points[0, 0] == 0.0 and d1.points[-1, 0] == 1.0
    d3 = Domain.unit_cube(3)
    assert d3.points.shape == (1024, 3) and np.all((d3.points >= 0) & (d3.points < 1))
    np.testing.assert_array_equal(d3.points, Domain.unit_cube(3).points)  # fixed seed
    assert Domain.unit_cube(5).points.shape == (2048, 5)  # max(1024, 256 d) -> power of two
    # the Sobol estimate of a known mean: E[(z1 - z2)^2] = 1/6 under U[0,1]^2
    z = Domain.unit_cube(2).points
    assert np.mean((z[:, 0] - z[:, 1]) ** 2) == pytest.approx(1 / 6, abs=2e-3)


def test_domain_from_space_gives_valid_values():
    space = EncodedSpace(
        {
            "lr": FloatDistribution(1e-4, 1e-1, log=True),
            "k": IntDistribution(1, 4),
            "c": CategoricalDistribution(["a", "b", "c"]),
        }
    )
    dom = Domain.from_space(space)
    np.testing.assert_array_equal(dom.is_categorical, [False, False, True])
    np.testing.assert_array_equal(np.unique(dom.points[:, 2]), [0.0, 1.0, 2.0])
    np.testing.assert_allclose(np.unique(dom.points[:, 1]), [0.0, 1 / 3, 2 / 3, 1.0])
    counts = np.unique(dom.points[:, 2], return_counts=True)[1]
    assert counts.min() > 0.3 * dom.points.shape[0]  # uniform over the choices
    one = Domain.from_space(EncodedSpace({"x": FloatDistribution(0.0, 5.0)}))
    np.testing.assert_array_equal(one.points[:, 0], np.linspace(0, 1, 1000))
    # the statistic and the scan run on such a domain
    rng = np.random.default_rng(1)
    X = dom.points[rng.integers(0, dom.points.shape[0], 12)]
    y = X[:, 0] + (X[:, 2] == 1)
    y[6:] += 4.0
    assert cpd_statistic(X[:6], y[:6], X[6:], y[6:], ridge=1.0, domain=dom) > 1.0
    assert scan(X, y, CPDSettings(standardize=False), dom) is not None


# ------------------------------------------------------------------------------------------------
# Scan (spec 10.1.5)
# ------------------------------------------------------------------------------------------------


def test_tail_windows_order():
    assert list(tail_windows(5)) == [(1, slice(3, 4), slice(4, 5)), (2, slice(1, 3), slice(3, 5))]
    assert [n for n, _, _ in tail_windows(9)] == [1, 2, 3, 4]
    assert [n for n, _, _ in tail_windows(9, max_half_window=2)] == [1, 2]
    assert list(tail_windows(1)) == [] and list(tail_windows(0)) == []


def test_scan_tests_windows_smallest_first_and_stops_at_first_firing():
    rng = np.random.default_rng(5)
    X, y = rng.uniform(size=(9, 1)), rng.standard_normal(9)
    calls: list[int] = []

    def spy(n: int) -> float:
        calls.append(n)
        return 1e-300 if n == 3 else math.inf

    det = scan(X, y, CPDSettings(threshold=spy))
    assert calls == [1, 2, 3]  # n = 4 never tested
    assert det is not None and det.half_window == 3 and det.trigger_index == 8
    # the statistic it reports is Algorithm 1 on the tail of 6: older U[3:6] | newer U[6:9]
    expected = cpd_statistic(X[3:6], y[3:6], X[6:9], y[6:9], ridge=cpd_ridge(3))
    assert det.statistic == pytest.approx(expected, rel=1e-10)
    calls.clear()
    assert scan(X, y, CPDSettings(threshold=spy, max_half_window=2)) is None
    assert calls == [1, 2]
    calls.clear()
    assert scan(X[:1], y[:1], CPDSettings(threshold=spy)) is None and calls == []


def test_scan_statistics_match_reference_for_every_window():
    """The scan's shared-Gram fast path equals cpd_statistic (GPPosterior) window by window."""
    rng = np.random.default_rng(8)
    X, y = rng.uniform(size=(13, 2)), rng.standard_normal(13)
    dom = Domain.unit_cube(2, n_points=256)
    p = GPParams("matern52", np.array([0.3, 0.5]), 2.0, 0.01)
    for n in range(1, 7):
        only_n = lambda k, n=n: 1e-300 if k == n else math.inf  # noqa: E731
        cfg = CPDSettings(params=p, threshold=only_n, standardize=False)
        det = scan(X, y, cfg, dom, shift=0.5, scale=2.0)
        yt = (y - 0.5) / 2.0
        ref = cpd_statistic(
            X[13 - 2 * n : 13 - n], yt[13 - 2 * n : 13 - n], X[13 - n :], yt[13 - n :],
            ridge=cpd_ridge(n, 2), params=p, domain=dom,
        )
        assert det.half_window == n and det.statistic == pytest.approx(ref, rel=1e-9)


def test_scan_bad_input():
    X, y = np.ones((4, 1)), np.ones(4)
    for kwargs in ({"scale": 0.0}, {"scale": math.nan}, {"shift": math.inf}):
        with pytest.raises(ValueError):
            scan(X, y, **kwargs)
    with pytest.raises(ValueError):
        scan(X, np.ones(3))
    with pytest.raises(ValueError):
        scan(X, y, domain=Domain.unit_cube(2))


# ------------------------------------------------------------------------------------------------
# Statistical behaviour of Algorithm 1 (spec 10.2): raw y, c = 1, theta_0 = 2.6, 1000-point grid
# ------------------------------------------------------------------------------------------------


def fire_rate(kind: str, n: int, reps: int = 200) -> float:
    grid = np.linspace(0.0, 1.0, 1000)
    cfg = CPDSettings(standardize=False)
    theta, lam = cfg.theta(n, 1), cfg.ridge(n, 1)
    rng = np.random.default_rng(1000 + n + 100 * len(kind))
    fired = 0
    for _ in range(reps):
        x = grid[rng.integers(0, 1000, 2 * n)]
        if kind == "independent":
            f = np.concatenate([gp_draw(rng, x[:n]), gp_draw(rng, x[n:])])
        else:
            f = gp_draw(rng, x)
            f[n:] += {"none": 0.0, "shift1": 1.0, "shift05": 0.5}[kind]
        y = f + NOISE * rng.standard_normal(2 * n)
        fired += cpd_statistic(x[:n, None], y[:n], x[n:, None], y[n:], ridge=lam) > theta
    return fired / reps


def test_cpd_false_alarm_and_power():
    none = [fire_rate("none", n) for n in (1, 2, 4, 8, 16)]
    assert none[0] == 0.0 and none[1] == 0.0  # [0, 0]
    assert max(none[2:]) <= 0.05  # [0.01, 0.01, 0.01]
    shift = [fire_rate("shift1", n) for n in (4, 8, 16)]
    assert shift[2] >= 0.9 and shift[1] >= 0.3  # [0.99, 0.525]
    assert shift[0] < shift[1] < shift[2]  # power grows with n
    indep = [fire_rate("independent", n) for n in (8, 16)]
    assert indep[1] >= 0.65 and indep[0] >= 0.3  # [0.825, 0.505]
    assert fire_rate("shift05", 16) < shift[2]  # power grows with Delta [0.185 < 0.99]


# ------------------------------------------------------------------------------------------------
# Detector over a run: piecewise-stationary and stationary objectives
# ------------------------------------------------------------------------------------------------


def test_big_level_shift_detected_after_change_never_before():
    """Spec 10.1.6: 12 uniform trials of sin(6x) + eps, then 12 of sin(6x) + 5 + eps:
    exactly one change point j, 12 <= j <= 18 [200 seeds: 12-17]."""
    for seed in range(25):
        rng = np.random.default_rng(seed)
        x = rng.uniform(size=24)
        y = np.sin(6 * x) + NOISE * rng.standard_normal(24)
        y[12:] += 5.0
        seg = replay(records_1d(x, y))
        assert len(seg.change_points) == 1, seed
        j = seg.change_points[0]
        assert 12 <= j <= 18
        assert seg.start == j + 1
        assert seg.uniform_numbers == tuple(range(j + 1, 24)) == seg.history_numbers
        det = seg.last_detection
        assert det is not None and det.statistic > det.threshold
        # the paper discards everything up to the trigger, the trigger included: right after it
        # the segment is empty and the next turn is uniform
        at = replay(records_1d(x[: j + 1], y[: j + 1]))
        assert at.start == j + 1 and at.n_uniform == at.n_history == 0
        assert is_uniform_turn(at.n_uniform, at.n_history)


def test_moved_optimum_detected_within_bounded_delay():
    """Spec 10.3 S1 on the pure stage: bump at 0.2 -> 0.8 at trial 300 of 600, the schedule's
    uniform trials, noise 0.05, 20 seeds [spec: 15% reset before 300; first reset after 300
    at +64 median, +165 max; never missed]."""
    early, delays, n_uniform_to_detect = 0, [], []
    for seed in range(20):
        state, records, roles = simulate(seed, 600, 300)
        cps = state.change_points
        early += any(c < 300 for c in cps)
        after = [c for c in cps if c >= 300]
        assert after, f"seed {seed}: change missed"
        delays.append(after[0] - 300)
        n_uniform_to_detect.append(sum(roles[300 : after[0] + 1]))
        for c in cps:  # the 4 trials after every reset are uniform
            assert all(roles[c + 1 : c + 5])
    assert early <= 6
    assert max(delays) <= 200
    assert float(np.median(delays)) <= 120
    assert max(n_uniform_to_detect) <= 12  # post-change exploration points needed


def test_stationary_run_few_false_alarms():
    """Spec 10.3 S2 on the pure stage: 600 trials, no change [27% runs with a reset at
    theta_0 = 4, 6% at 6]."""
    resets = [len(simulate(1000 + s, 600, None)[0].change_points) for s in range(20)]
    assert np.mean(resets) <= 0.6 and sum(r == 0 for r in resets) >= 10
    conservative = CPDSettings(threshold_const=6.0)
    resets6 = [len(simulate(1000 + s, 600, None, conservative)[0].change_points) for s in range(20)]
    assert sum(r > 0 for r in resets6) <= 3
    state, _, roles = simulate(0, 600, 300, CPDSettings(threshold=math.inf))
    assert state.change_points == [] and sum(roles) == 1 + math.isqrt(3 * 599)


# ------------------------------------------------------------------------------------------------
# Replay (spec 9.3, 10.1.7, 10.1.8)
# ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def run_with_changes():
    """150 trials with level shifts at 50 and 100 (several change points)."""
    rng = np.random.default_rng(42)
    state = ReplayState()
    records = []
    for t in range(150):
        seg = state.segment()
        u = is_uniform_turn(seg.n_uniform, seg.n_history)
        x = rng.uniform(size=1)
        level = 3.0 * (t >= 50) - 3.0 * (t >= 100)
        y = float(np.sin(6 * x[0]) + level + NOISE * rng.standard_normal())
        rec = TrialRecord(t, u, x, y)
        state.push(rec)
        records.append(rec)
    assert len(state.change_points) >= 2
    return records, state.segment()


def test_replay_deterministic_and_order_independent(run_with_changes):
    records, seg = run_with_changes
    assert replay(records) == seg
    shuffled = [records[i] for i in np.random.default_rng(0).permutation(len(records))]
    assert replay(shuffled) == seg
    assert Replayer().replay(shuffled) == seg


def test_replay_prefix_gives_prefix_change_points(run_with_changes):
    records, seg = run_with_changes
    for k in (1, 10, 37, 60, 99, 120, 149):
        pre = replay(records[:k])
        assert pre.change_points == tuple(c for c in seg.change_points if c < k)
        assert pre.start == (pre.change_points[-1] + 1 if pre.change_points else 0)
        assert all(n >= pre.start for n in pre.history_numbers)


def test_replayer_cache_never_changes_results(run_with_changes):
    records, seg = run_with_changes
    rep = Replayer()
    for k in range(0, 151, 3):  # the sequential case: incremental extensions
        assert rep.replay(records[:k], key="s") == replay(records[:k])
    assert rep.n_incremental > 40 and rep.n_full == 1
    # a trial with a lower number finishing late: full replay, same result as replay()
    late = [r for r in records if r.number != 70]
    assert rep.replay(late, key="s") == replay(late)
    assert rep.replay(records, key="s") == seg
    # changed data under the same numbers is not taken from the cache
    changed = list(records)
    changed[12] = TrialRecord(12, records[12].uniform, records[12].x, records[12].y + 50.0)
    assert records[12].uniform and replay(changed) != seg  # the change matters
    assert rep.replay(changed, key="s") == replay(changed)
    assert rep.n_full >= 3
    # keys are independent entries
    assert rep.replay(records[:50], key="other") == replay(records[:50])
    assert rep.replay(records, key="s") == seg


def test_replay_ignores_ucb_trials_and_unobserved_records():
    rng = np.random.default_rng(4)
    x = rng.uniform(size=20)
    y = np.sin(6 * x) + NOISE * rng.standard_normal(20)
    base = records_1d(x, y)
    seg = replay(base)
    # UCB trials (any inputs, wild values) never enter U; they only count in the history
    extra = [TrialRecord(100 + i, False, np.array([0.5]), 1e6 * (-1) ** i) for i in range(10)]
    seg2 = replay(base + extra)
    assert seg2.change_points == seg.change_points and seg2.uniform_numbers == seg.uniform_numbers
    assert seg2.n_history == seg.n_history + 10
    # a non-finite target is skipped (not observed)
    nan_rec = TrialRecord(200, True, np.array([0.1]), math.nan)
    seg3 = replay(base + [nan_rec])
    assert seg3 == seg
    assert replay([]).start == 0 and replay([]).change_points == ()


def test_replay_invariant_to_affine_rescaling_and_sign():
    rng = np.random.default_rng(9)
    x = rng.uniform(size=40)
    y = np.sin(6 * x) + NOISE * rng.standard_normal(40)
    y[22:] = -np.sin(6 * x[22:]) + NOISE * rng.standard_normal(18)
    seg = replay(records_1d(x, y))
    assert seg.change_points  # the test is meaningful
    assert replay(records_1d(x, 1000.0 * y + 7.0)).change_points == seg.change_points
    assert replay(records_1d(x, -y)).change_points == seg.change_points


def test_replay_two_dimensional_with_categorical():
    space = EncodedSpace(
        {"u": FloatDistribution(0.0, 1.0), "c": CategoricalDistribution(["a", "b"])}
    )
    dom = Domain.from_space(space, n_points=512)
    rng = np.random.default_rng(2)
    X = np.column_stack([rng.uniform(size=40), rng.integers(0, 2, 40)])
    y = np.sin(4 * X[:, 0]) + X[:, 1] + NOISE * rng.standard_normal(40)
    y[20:] += 4.0
    recs = [TrialRecord(i, True, X[i], float(y[i])) for i in range(40)]
    seg = replay(recs, CPDSettings(), dom)
    assert seg.change_points and 20 <= seg.change_points[0] <= 32


def test_normalisation_rule():
    seg, allu = np.array([1.0, 2.0, 3.0, 4.0, 5.0]), np.arange(50.0)
    assert normalisation(seg, allu) == pytest.approx((3.0, np.std(seg, ddof=1)))
    assert normalisation(seg[:4], allu) == pytest.approx((24.5, np.std(allu, ddof=1)))
    assert normalisation(seg[:1], allu[:1]) == (0.0, 1.0)
    assert normalisation(np.full(6, 2.0), allu) == (2.0, 1.0)
    with pytest.raises(ValueError):
        normalisation(np.array([1.0, math.nan]), allu)


def test_replay_bad_input():
    r0 = TrialRecord(0, True, np.array([0.1]), 1.0)
    with pytest.raises(ValueError):
        replay([r0, TrialRecord(0, True, np.array([0.2]), 2.0)])  # duplicate number
    with pytest.raises(ValueError):
        replay([r0, TrialRecord(1, True, np.array([0.2, 0.3]), 2.0)])  # dimension
    with pytest.raises(ValueError):
        replay([r0, (1, True, np.array([0.2]), 2.0)])  # not a record
    with pytest.raises(ValueError):
        replay([r0], domain=Domain.unit_cube(2))
    for bad in (
        lambda: TrialRecord(-1, True, np.array([0.1]), 1.0),
        lambda: TrialRecord(1.0, True, np.array([0.1]), 1.0),
        lambda: TrialRecord(1, True, np.array([math.nan]), 1.0),
        lambda: TrialRecord(1, True, np.zeros((1, 1)), 1.0),
        lambda: TrialRecord(1, True, np.array([0.1]), "x"),
        lambda: ReplayState(settings="cpd"),
        lambda: Replayer(max_entries=0),
    ):
        with pytest.raises(ValueError):
            bad()
    state = ReplayState()
    state.push(TrialRecord(3, True, np.array([0.1]), 1.0))
    with pytest.raises(ValueError):
        state.push(TrialRecord(2, True, np.array([0.1]), 1.0))  # out of order


# ------------------------------------------------------------------------------------------------
# Best since the last change (spec 9.8)
# ------------------------------------------------------------------------------------------------


def test_best_since():
    numbers = np.array([0, 1, 2, 3, 4, 5])
    values = np.array([9.0, 1.0, 3.0, math.nan, 3.0, 2.0])
    assert best_since(numbers, values, 0) == 0
    assert best_since(numbers, values, 1) == 2  # lowest number among ties
    assert best_since(numbers, values, 1, "minimize") == 1
    assert best_since(numbers, values, 3) == 4  # NaN ignored
    assert best_since(numbers, values, 6) is None
    assert best_since([], [], 0) is None
    assert best_since(numbers, np.array([-np.inf] * 6), 2) == 2


@settings(max_examples=50, deadline=None)
@given(
    values=st.lists(st.floats(-5, 5) | st.just(math.nan), min_size=0, max_size=12),
    start=st.integers(0, 12),
    minimize=st.booleans(),
)
def test_best_since_brute_force(values, start, minimize):
    numbers = list(range(len(values)))
    cands = [
        (-v if minimize else v, -n)
        for n, v in zip(numbers, values)
        if n >= start and not math.isnan(v)
    ]
    expected = -max(cands)[1] if cands else None
    assert best_since(numbers, values, start, "minimize" if minimize else "maximize") == expected


def test_best_since_bad_input():
    with pytest.raises(ValueError):
        best_since([0, 1], [1.0], 0)
    with pytest.raises(ValueError):
        best_since([0, 1], [1.0, 2.0], 0, "max")
    with pytest.raises(ValueError):
        best_since([0.5, 1.0], [1.0, 2.0], 0)
    with pytest.raises(ValueError):
        best_since([0, 1], [1.0, 2.0], -1)
