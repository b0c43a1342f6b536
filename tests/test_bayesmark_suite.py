"""The Bayesmark suite (``python -m benchmarks.bayesmark``): the problems are Bayesmark's, the
split is the one fixed in its README, the Optuna spaces decode to Bayesmark's configurations, the
losses equal Bayesmark's own (stored in ``reference.json``; the live comparison with the package
is ``check.py``, a command), random search's expected best comes exactly from a pool, a run binds
each seed's objective, and the report scores per (problem, seed) and per half."""

from __future__ import annotations

import argparse
import itertools
import json
import math
import pathlib
import sys
from fractions import Fraction

import numpy as np
import optuna
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.bayesmark import check  # noqa: E402
from benchmarks.bayesmark import definitions as D  # noqa: E402
from benchmarks.bayesmark.problems import ALL, HALF_PROBLEMS, Param  # noqa: E402
from benchmarks.bayesmark.suite import SUITE  # noqa: E402
from benchmarks.harness import cli, report  # noqa: E402
from benchmarks.harness import pool as P  # noqa: E402
from benchmarks.harness import scoring as S  # noqa: E402
from benchmarks.harness.suite import Scoring, Suite, fixed_budgets  # noqa: E402

# Cheap problems whose stored reference cases (those of seed 1: two each) are replayed (~1 s).
REPLAYED = ["DT_wine_nll", "DT_diabetes_mse", "kNN_iris_acc", "kNN_breast_nll", "SVM_wine_nll",
            "SVM_diabetes_mae", "RF_iris_nll", "RF_diabetes_mae", "ada_iris_acc",
            "MLP-sgd_iris_nll"]


def test_the_grid_is_bayesmarks_without_boston():
    assert len(ALL) == 90 == 9 * 5 * 2
    for m in D.FAMILIES:
        names = [n for n in ALL if ALL[n].model == m]
        assert len(names) == 10
        assert sum(ALL[n].task == "regression" for n in names) == 2
    assert all(SUITE.problem(n, 0).extra.get("bayesmark") for n in ALL)


def test_the_split_is_the_one_fixed_in_the_readme():
    # Fixed before any result was seen; changing it invalidates every comparison made on it.
    assert D.HALVES == {"tuning": ("DT", "SVM", "MLP-sgd", "lasso"),
                        "validation": ("RF", "kNN", "MLP-adam", "ada", "linear")}
    assert not set(HALF_PROBLEMS["tuning"]) & set(HALF_PROBLEMS["validation"])
    assert sorted(HALF_PROBLEMS["tuning"] + HALF_PROBLEMS["validation"]) == sorted(ALL)
    readme = (ROOT / "benchmarks" / "bayesmark" / "README.md").read_text()
    assert "tuning = {DT, SVM, MLP-sgd, lasso}" in readme
    assert "validation = {RF, kNN, MLP-adam, ada, linear}" in readme


def test_every_parameter_kind_maps_to_its_optuna_distribution():
    kinds = {p.kind: p for prob in ALL.values() for p in prob.params}
    assert set(kinds) == {"int-linear", "int-log", "real-linear", "real-log", "real-logit",
                          "bool"}
    d = Param("x", {"type": "real", "space": "logit", "range": (0.01, 0.99)}).distribution()
    assert isinstance(d, optuna.distributions.FloatDistribution) and not d.log
    assert d.low == pytest.approx(math.log(0.01 / 0.99)) and d.high == pytest.approx(-d.low)
    d = Param("x", {"type": "int", "space": "log", "range": (10, 5000)}).distribution()
    assert isinstance(d, optuna.distributions.IntDistribution) and d.log
    assert (d.low, d.high) == (10, 5000)
    d = Param("x", {"type": "real", "space": "log", "range": (1e-4, 1e1)}).distribution()
    assert d.log and (d.low, d.high) == (1e-4, 1e1)
    assert Param("x", {"type": "bool"}).distribution().choices == (False, True)
    assert Param("x", {"type": "cat", "values": ["a", "b"]}).distribution().choices == ("a", "b")


@pytest.mark.parametrize("name", ["MLP-adam_iris_nll", "lasso_diabetes_mse", "DT_wine_acc"])
def test_suggested_params_decode_into_the_published_ranges(name):
    prob = ALL[name]
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    for _ in range(50):
        config = prob.decode(prob.suggest(study.ask()))
        for p in prob.params:
            v = config[p.name]
            if p.kind == "bool":
                assert isinstance(v, bool)
                continue
            lo, hi = p.spec["range"]
            assert lo <= v <= hi, (p.name, v)
            assert isinstance(v, int) == p.kind.startswith("int")
    # the extreme logit values decode to the range's ends
    p = Param("beta_2", {"type": "real", "space": "logit", "range": (0.9, 1.0 - 1e-6)})
    d = p.distribution()
    assert p.decode(d.low) == pytest.approx(0.9) and p.decode(d.high) <= 1.0 - 1e-6
    assert p.decode(p.encode(0.95)) == pytest.approx(0.95, rel=1e-12)


def test_random_configs_follow_bayesmarks_random_search():
    configs = D.random_configs("lasso", "diabetes", 20, seed=0)
    for c in configs:
        assert list(c) == ["alpha", "fit_intercept", "normalize", "max_iter", "tol", "positive"]
        assert isinstance(c["max_iter"], int) and 10 <= c["max_iter"] <= 5000
        assert isinstance(c["normalize"], bool)


def test_a_loss_is_a_pure_function_of_problem_seed_and_config():
    config = D.random_configs("RF", "wine", 1, seed=3)[0]  # RF: random_state=None, as published
    state = np.random.get_state()
    a = D.cv_loss("RF", "wine", "nll", 0, config)
    assert D.cv_loss("RF", "wine", "nll", 0, config) == a
    assert D.cv_loss("RF", "wine", "nll", 1, config) != a  # another shuffle_seed, another split
    after = np.random.get_state()
    assert after[0] == state[0] and np.array_equal(after[1], state[1])  # global RNG restored


def test_a_failing_evaluation_is_inf_as_in_bayesmarks_experiment_loop():
    assert D.cv_loss("kNN", "iris", "acc", 0, {"n_neighbors": 10_000, "p": 2}) == math.inf


def test_a_definition_scikit_learn_rejects_raises_instead_of_scoring_inf():
    from sklearn.utils._param_validation import InvalidParameterError

    with pytest.raises(InvalidParameterError):
        D.cv_loss("kNN", "iris", "acc", 0, {"n_neighbors": 0, "p": 2})


def test_the_patched_regressors_do_what_normalize_did():
    from sklearn.linear_model import Ridge

    X, y = D.tuning_data("diabetes", 0)
    X = X * np.arange(1, X.shape[1] + 1)  # unequal column norms
    est = D.build("linear", "diabetes", {"alpha": 0.5, "fit_intercept": True, "normalize": True,
                                          "max_iter": 100, "tol": 1e-3}).fit(X, y)
    norms = np.linalg.norm(X - X.mean(axis=0), axis=0)
    ref = Ridge(alpha=0.5).fit((X - X.mean(axis=0)) / norms, y)
    assert np.allclose(est.coef_, ref.coef_ / norms)
    assert np.allclose(est.predict(X), ref.predict((X - X.mean(axis=0)) / norms))
    off = D.build("linear", "diabetes", {"alpha": 0.5, "fit_intercept": False,
                                          "normalize": True, "max_iter": 100, "tol": 1e-3})
    assert np.allclose(off.fit(X, y).coef_, Ridge(alpha=0.5, fit_intercept=False).fit(X, y).coef_)


def test_losses_equal_bayesmarks_stored_ones():
    # The block of the installed scikit-learn minor version, else the newest one: a release
    # that changes the losses fails here until its block is written (README.md, check.py).
    block = check.reference_block()
    if block is None:
        blocks = json.loads(pathlib.Path(check.REFERENCE).read_text())["blocks"]
        block = blocks[max(blocks, key=lambda v: tuple(map(int, v.split("."))))]
    cases = [c for c in block["cases"] if c["problem"] in REPLAYED and c["seed"] == 1]
    assert {c["problem"] for c in cases} == set(REPLAYED)
    for case, ours, ok in check.replay(cases):
        assert ok, (case, ours)


def test_the_tables_give_every_family_a_space_and_an_estimator_per_task():
    for family in D.FAMILIES:
        for task in D.TASKS:
            assert D.SPACES[family, task] and D.ESTIMATORS[family, task].cls
    # a row for both tasks, a row per task, continuation rows
    assert D.SPACES["ada", "clf"] == D.SPACES["ada", "reg"]
    assert [p.name for p in D.SPACES["linear", "reg"]] == [
        "alpha", "fit_intercept", "normalize", "max_iter", "tol"]
    assert D.ESTIMATORS["MLP-sgd", "reg"].fixed == {
        "activation": "tanh", "solver": "sgd", "early_stopping": True,
        "learning_rate": "invscaling", "nesterovs_momentum": True}
    assert D.ESTIMATORS["RF", "clf"].fixed == {"n_estimators": 10, "max_leaf_nodes": None}
    # the api_config structure, with the number types of the bounds
    cfg = D.api_config("MLP-adam", "iris")
    assert cfg["batch_size"] == {"type": "int", "space": "linear", "range": (10, 250)}
    assert type(cfg["batch_size"]["range"][0]) is int
    assert cfg["beta_2"]["range"] == (0.9, 1.0 - 1e-6)
    assert D.api_config("lasso", "diabetes")["positive"] == {"type": "bool"}
    with pytest.raises(ValueError):
        D._parse_spaces("DT:both x int linear 1 2")


def _brute_expected_min(values, t):
    subsets = list(itertools.combinations(values, t))
    return sum(Fraction(min(s)) for s in subsets) / len(subsets)


@pytest.mark.parametrize("values", [[3, 1, 4, 1, 5, 9], [2, 2, 2, 7], [5], [8, 6, 7, 5, 3, 0, 9]])
def test_the_pools_expected_minimum_is_the_mean_over_all_subsets(values):
    n = len(values)
    v = sorted(values)
    for t in range(1, n + 1):
        probs = S.min_rank_probabilities(n, t)
        assert sum(probs) == 1
        exact = sum(p * x for p, x in zip(probs, v))
        assert exact == _brute_expected_min(values, t)
        assert S.expected_min(values, t) == pytest.approx(float(exact), rel=1e-15)
    assert S.expected_min(values, 1) == pytest.approx(np.mean(values))
    assert S.expected_min(values, n) == min(values)
    curve = S.expected_min_curve(values, n)
    assert np.all(np.diff(curve) <= 1e-12)
    with pytest.raises(ValueError):
        S.min_rank_probabilities(n, n + 1)


def test_failed_pool_values_count_only_where_a_draw_can_hold_nothing_else():
    values = [1.0, 2.0, math.inf]
    assert S.expected_min(values, 2) == pytest.approx((1.0 + 1.0 + 2.0) / 3)
    assert S.expected_min(values, 1) == math.inf


def _run(sampler, seed, values):
    return {"problem": "p", "sampler": sampler, "seed": seed, "values": list(values)}


def problem_cells(runs, pools, T, floor):
    """The cells of problem "p"'s runs at T, each seed scored against its own pool."""
    suite = Suite(name="t", title="t", halves={"all": ["p"]}, problem=None, budget=None,
                  scoring=Scoring("pool", fixed_budgets(T), floor=floor),
                  seeded_objective=True)
    cells = S.problem_cells(suite, "p", runs, pools)[0]
    return {(s, int(label.split()[-1])): c for (s, label), c in cells.items()}


def test_each_seed_is_scored_against_its_own_opt_and_random_baseline():
    base = [4.0, 6.0, 3.0, 8.0, 5.0, 7.0]
    pools = {0: base, 1: [v + 100.0 for v in base]}  # seed 1: the same landscape, shifted
    runs = []
    for seed, off in ((0, 0.0), (1, 100.0)):
        runs += [_run("A", seed, [v + off for v in (5.0, 3.0, 2.5, 2.5, 2.0)]),
                 _run("B", seed, [v + off for v in (6.0, 6.0, 5.0, 4.5, 4.5)])]
    cells = problem_cells(runs, pools, 5, floor=None)
    a, b = cells[("A", 5)], cells[("B", 5)]
    # the offset cancels: both seeds score alike
    assert a.by_seed[0] == pytest.approx(a.by_seed[1]) and b.by_seed[0] == pytest.approx(
        b.by_seed[1])
    # opt_s = 2.0 (run A), rand_s(5) = the pool's expected minimum of 5 draws
    rand5 = float(_brute_expected_min(base, 5))
    assert a.by_seed[0][0] == pytest.approx(100.0) and a.score == pytest.approx(100.0)
    assert b.by_seed[0][0] == pytest.approx(100 * (1 - (4.5 - 2.0) / (rand5 - 2.0)))
    # anytime: the mean over t = 5..T of the score after t trials (here t = 5 alone)
    assert a.anytime == pytest.approx(100.0)
    # a pool value below every run: no run reaches 100 on that seed
    cells = problem_cells(runs, {0: base + [1.0], 1: pools[1]}, 5, floor=None)
    assert cells[("A", 5)].by_seed[0][0] < 100.0 and cells[("A", 5)].by_seed[1][0] == 100.0
    # the floor, and a seed whose pool is shorter than T is not scored at T
    cells = problem_cells(runs, {0: base, 1: base[:4]}, 5, floor=-100.0)
    assert set(cells[("B", 5)].by_seed) == {0}


def test_a_pool_is_drawn_from_its_own_stream_and_extended_not_redrawn(tmp_path):
    first = P.draw(SUITE, "kNN_iris_acc", 3, 0)
    assert first == P.draw(SUITE, "kNN_iris_acc", 5, 0)[:3]
    assert first != P.draw(SUITE, "kNN_iris_acc", 3, 1)
    import optuna

    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))  # a Random run
    assert [ALL["kNN_iris_acc"].suggest(study.ask()) for _ in range(3)] != first
    pools = P.ensure(SUITE, str(tmp_path), [("kNN_iris_acc", 0)], 3)
    rec = pools[("kNN_iris_acc", 0)]
    assert rec["n"] == 3 and rec["values"][0] == ALL["kNN_iris_acc"].evaluate(first[0], 0)
    longer = P.ensure(SUITE, str(tmp_path), [("kNN_iris_acc", 0)], 5)[("kNN_iris_acc", 0)]
    assert longer["values"][:3] == rec["values"] and longer["n"] == 5
    assert P.read(SUITE, [str(tmp_path)])[("kNN_iris_acc", 0)]["n"] == 5
    assert len((tmp_path / P.POOL_FILE).read_text().splitlines()) == 2


def test_a_run_scores_each_seeds_objective_and_reports_per_half(tmp_path, monkeypatch):
    from benchmarks.harness import runner

    # the pools are evaluated here, not copied from the ones kept in the repository
    monkeypatch.setattr(cli, "REPORTS", str(tmp_path / "no-stored-reports"))
    problems = ["DT_iris_acc", "kNN_iris_nll"]
    assert cli.main(["run", "bayesmark", "--half", "all", "--problems", *problems, "--samplers",
                     "Random", "TPE", "--seeds", "2", "--trials", "6", "--out", str(tmp_path),
                     "--base", "TPE", "--pool", "10", "--quiet"]) == 0
    runs = runner.read_jsonl(str(tmp_path / "runs.jsonl"))
    assert len(runs) == 2 * 2 * 2
    for r in runs:
        prob = ALL[r["problem"]]
        # the recorded value is the loss of the run's own seed (shuffle_seed = seed)
        raw = r["params"][-1]
        assert r["values"][-1] == prob.evaluate(raw, r["seed"])
    pools = P.read(SUITE, [str(tmp_path)])
    assert set(pools) == {(p, s) for p in problems for s in (0, 1)}
    assert all(rec["n"] == 10 for rec in pools.values())
    text = (tmp_path / "report.md").read_text()
    assert "## Tuning half (DT, SVM, MLP-sgd, lasso)" in text
    assert "## Validation half (RF, kNN, MLP-adam, ada, linear)" in text
    assert "Paired against `TPE`" in text and "| Random |" in text
    cfg = json.loads((tmp_path / "config.json").read_text())
    assert cfg["suite"] == "bayesmark" and cfg["parts"][0]["half"] == "all"
    assert cfg["parts"][0]["pool"] == 10
    # a later report reuses the cached pools
    before = (tmp_path / P.POOL_FILE).read_text()
    report.render(SUITE, [str(tmp_path)], base="TPE")
    assert (tmp_path / P.POOL_FILE).read_text() == before


def test_stored_pools_are_copied_into_a_run_not_evaluated_again(tmp_path, monkeypatch):
    made, kept, later = tmp_path / "made", tmp_path / "kept", tmp_path / "later"
    rec = P.ensure(SUITE, str(made), [("kNN_iris_acc", 0)], 4)[("kNN_iris_acc", 0)]
    # `store` without --samplers keeps the pools only (gzipped), and refuses to keep nothing
    assert cli.main(["store", "bayesmark", str(made), "--out", str(kept)]) == 0
    assert (kept / (P.POOL_FILE + ".gz")).exists() and not (kept / "runs.jsonl.gz").exists()
    with pytest.raises(SystemExit, match="--samplers is needed"):
        cli.main(["store", "quick", str(made), "--out", str(kept)])

    def no_evaluation(*args, **kwargs):
        raise AssertionError("a stored pool was evaluated again")

    monkeypatch.setattr(P.runner, "pool_run", no_evaluation)
    got = P.ensure(SUITE, str(later), [("kNN_iris_acc", 0)], 4, stored=[str(kept)])
    assert got[("kNN_iris_acc", 0)]["values"] == rec["values"]
    # copied into the run's own directory, which then reports on its own
    assert P.read(SUITE, [str(later)])[("kNN_iris_acc", 0)]["values"] == rec["values"]
    # a stored pool shorter than asked is not taken
    with pytest.raises(AssertionError, match="evaluated again"):
        P.ensure(SUITE, str(tmp_path / "longer"), [("kNN_iris_acc", 0)], 6, stored=[str(kept)])


def test_a_pool_is_at_least_1_6_times_the_trials_or_refused_naming_the_argument():
    from benchmarks.harness.suite import Task

    def pool_of(pool, trials):
        return cli.pool_of(SUITE, argparse.Namespace(pool=pool),
                           [Task("DT_iris_acc", "Random", 0, trials)])

    assert pool_of(None, 40) == P.POOL_N == 64
    assert pool_of(None, 100) == 160
    assert pool_of(10, 6) == 10
    with pytest.raises(SystemExit, match="--pool 40 is shorter than 64"):
        pool_of(40, 40)


def test_a_report_extends_a_pool_as_short_as_the_budget(tmp_path):
    short = P.ensure(SUITE, str(tmp_path), [("kNN_iris_acc", 0)], 6)[("kNN_iris_acc", 0)]
    run = {"problem": "kNN_iris_acc", "seed": 0, "values": [0.0] * 6, "dir": str(tmp_path)}
    # at n = T, rand_s(T) would be the pool's minimum: extended to pool_size(T) = 64
    rec = report.pools_for(SUITE, [run], [str(tmp_path)])[("kNN_iris_acc", 0)]
    assert rec["n"] == P.pool_size(6) == 64 and rec["values"][:6] == short["values"]
    assert P.read(SUITE, [str(tmp_path)])[("kNN_iris_acc", 0)]["n"] == 64


def test_a_problem_outside_the_chosen_half_is_refused():
    def select(*argv):
        return cli.select(SUITE, cli._suite_parser("run", SUITE).parse_args(list(argv)))

    assert select("--problems", "DT_iris_acc") == ["DT_iris_acc"]
    with pytest.raises(SystemExit, match="not in the tuning half"):
        select("--problems", "RF_iris_acc")
    assert len(select("--half", "validation", "--models", "kNN")) == 10
    assert len(select("--models", "MLP-sgd", "--skip-slow")) == 8
