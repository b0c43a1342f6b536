"""The real-HPO suite (``python -m benchmarks.hpo``): its tasks and held-out tasks evaluate, the
task lists stay apart, and the normalised score is Bayesmark's formula."""

from __future__ import annotations

import math
import pathlib
import sys

import optuna
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.harness import cli  # noqa: E402
from benchmarks.harness.report import variants  # noqa: E402
from benchmarks.harness.scoring import paired, problem_cells  # noqa: E402
from benchmarks.harness.suite import Scoring, Suite, fixed_budgets, get_suite  # noqa: E402
from benchmarks.hpo.run import translate  # noqa: E402
from benchmarks.hpo.tasks import ALL_TASKS, HELD_OUT, LOSS_CAP, TASKS  # noqa: E402


def test_held_out_tasks_are_new_pairs_and_the_suite_s_second_half():
    assert not set(HELD_OUT) & set(TASKS)
    pairs = {(t.model, t.dataset, t.metric) for t in TASKS.values()}
    assert all((t.model, t.dataset, t.metric) not in pairs for t in HELD_OUT.values())
    suite = get_suite("hpo")
    assert suite.names("tuning") == list(TASKS) and suite.names("held-out") == list(HELD_OUT)
    assert all(suite.problem(name, 0).extra.get("hpo") for name in ALL_TASKS)


@pytest.mark.parametrize("name", list(HELD_OUT))
def test_a_held_out_task_gives_a_finite_loss_below_its_cap(name):
    task = ALL_TASKS[name]
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    study.optimize(lambda trial: task.evaluate(task.suggest(trial)), n_trials=2)
    for t in study.trials:
        assert math.isfinite(t.value) and 0.0 <= t.value < LOSS_CAP[task.metric], (name, t.params)


def test_held_out_tasks_are_run_only_when_asked():
    suite = get_suite("hpo")
    args = cli._suite_parser("run", suite).parse_args(translate([]))
    assert cli.select(suite, args) == list(TASKS)
    some = list(HELD_OUT)[:2]
    args = cli._suite_parser("run", suite).parse_args(translate(["--held-out", "--tasks", *some]))
    assert cli.select(suite, args) == some
    args = cli._suite_parser("run", suite).parse_args(["--problems", "no-such-task"])
    with pytest.raises(SystemExit, match="unknown problem"):
        cli.select(suite, args)


def _run(sampler: str, seed: int, values: list[float]) -> dict:
    return {"problem": "t", "sampler": sampler, "seed": seed, "values": values}


def task_cells(runs: list[dict], T: int) -> dict:
    """The cells of one task's runs scored against their Random runs at T (label ``T = T``)."""
    suite = Suite(name="t", title="t", halves={"all": ["t"]}, problem=None, budget=None,
                  scoring=Scoring("random-runs", fixed_budgets(T)))
    cells, info = problem_cells(suite, "t", runs)
    return {(s, int(label.split()[-1])): c for (s, label), c in cells.items()}, info


def test_score_is_100_at_the_best_value_and_0_at_random_search():
    # Random's mean best-so-far after 2 trials: (3 + 5) / 2 = 4; f* = 1 (run "A").
    runs = [_run("Random", 0, [3.0, 4.0]), _run("Random", 1, [5.0, 5.0]),
            _run("A", 0, [2.0, 1.0]), _run("B", 0, [4.0, 4.0]), _run("C", 0, [9.0, 9.0])]
    cells, info = task_cells(runs, 2)
    assert info.f_star == {0: 1.0} and info.rand["T = 2"] == {0: 4.0}
    assert cells[("A", 2)].score == pytest.approx(100.0)
    assert cells[("B", 2)].score == pytest.approx(0.0)
    assert cells[("C", 2)].score == pytest.approx(-100.0)  # (4 - 9) / 3 = -167, floored


def test_paired_difference_cancels_what_a_seed_shares():
    # 5 trials at one value each. Random: best 4 and 6 (mean 5); f* = 0 (sampler "B", seed 1),
    # so score = 100 (5 - best) / 5. A's seeds score 60 and 20, B's 80 and 100 (the seeds'
    # difficulty differs; B's per-seed gains are 20 and 80).
    def run(sampler, seed, v):
        return _run(sampler, seed, [v] * 5)

    runs = [run("Random", 0, 4.0), run("Random", 1, 6.0), run("A", 0, 2.0), run("A", 1, 4.0),
            run("B", 0, 1.0), run("B", 1, 0.0)]
    cells = {"t": {(s, f"T = {T}"): c for (s, T), c in task_cells(runs, 5)[0].items()}}
    assert cells["t"][("A", "T = 5")].by_seed == {0: (60.0, 60.0), 1: (20.0, 20.0)}
    d, se, n_tasks, n_pairs = paired(cells, "A", "B", "T = 5")
    assert (d, n_tasks, n_pairs) == (pytest.approx(50.0), 1, 2)
    assert se == pytest.approx(30.0)  # sd of (20, 80) / sqrt(2)
    assert paired(cells, "A", "B", "T = 5", "anytime")[0] == pytest.approx(50.0)
    # Two tasks: the mean of the per-task means, the errors added in quadrature, halved.
    cells["u"] = cells["t"]
    d2, se2, n2, _ = paired(cells, "A", "B", "T = 5")
    assert (d2, n2) == (pytest.approx(50.0), 2) and se2 == pytest.approx(30.0 / math.sqrt(2))
    # Seeds only one sampler ran are left out; no common task: NaN.
    cells["t"][("B", "T = 5")].by_seed[7] = (0.0, 0.0)
    assert paired(cells, "A", "B", "T = 5")[3] == 4
    assert math.isnan(paired(cells, "A", "C", "T = 5")[0])


def test_one_seed_per_problem_takes_the_error_over_problems():
    # bbob runs one seed per (function, dimension, instance): the error of the per-problem
    # differences over the problems, not an undefined per-seed one.
    def run(problem, sampler, v):
        return {"problem": problem, "sampler": sampler, "seed": 0, "values": [v] * 5}

    cells = {}
    for p, (a, b) in {"p": (2.0, 1.0), "q": (4.0, 1.0)}.items():
        runs = [run(p, "Random", 6.0), run(p, "A", a), run(p, "B", b), run(p, "C", 0.0)]
        suite = Suite(name="t", title="t", halves={"all": [p]}, problem=None, budget=None,
                      scoring=Scoring("random-runs", fixed_budgets(5)))
        cells[p] = problem_cells(suite, p, runs)[0]
    # f* = 0: A scores 100 (6 - a) / 6, B 100 (6 - 1) / 6; B - A = 100 (a - 1) / 6
    d, se, n, pairs = paired(cells, "A", "B", "T = 5")
    diffs = [100.0 * 1.0 / 6.0, 100.0 * 3.0 / 6.0]
    assert (n, pairs) == (2, 2) and d == pytest.approx(sum(diffs) / 2)
    assert se == pytest.approx(abs(diffs[1] - diffs[0]) / 2)


def test_a_variant_is_reported_against_its_base_sampler_only():
    runs = [_run("Random", 0, [4.0] * 5), _run("Random", 1, [6.0] * 5),
            _run("A", 0, [2.0] * 5), _run("A", 1, [4.0] * 5),
            _run('A{"x": 1}', 0, [1.0] * 5), _run('A{"x": 1}', 1, [0.0] * 5),
            _run('B{"x": 1}', 0, [1.0] * 5)]
    cells = {"t": {(s, f"T = {T}"): c for (s, T), c in task_cells(runs, 5)[0].items()}}
    rows = [r for r in variants(cells, ["Random", "A", 'A{"x": 1}', 'B{"x": 1}'], "T = 5")
            if r.startswith("| A")]
    assert rows == ['| A{"x": 1} | +50.0 ± 30.0 | +50.0 ± 30.0 | 1 | 2 |']
    assert variants(cells, ["Random", "A"], "T = 5") == []  # no variant, no table
