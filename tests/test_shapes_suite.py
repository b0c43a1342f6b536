"""The objective-shapes suite (``python -m benchmarks.shapes``, issue 47): each problem's stated
minimum is reached at its stated optimum and nowhere undercut, the penalty region is a third of
the box, every problem runs through the harness's runner with the ``model_trials`` field, and the
report's checks read what they should."""

from __future__ import annotations

import math
import pathlib
import sys

import numpy as np
import optuna
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.harness.runner import RUNS_FILE, is_model_trial, read_jsonl, run_tasks  # noqa: E402
from benchmarks.harness.samplers import SAMPLERS  # noqa: E402
from benchmarks.shapes import problems as shapes  # noqa: E402
from benchmarks.shapes.problems import ALL as PROBLEMS  # noqa: E402
from benchmarks.shapes.report import STUCK, checks, summarize  # noqa: E402
from benchmarks.shapes.suites import FULL, QUICK, SUITES, Task, select, tasks  # noqa: E402

SUITE_PROBLEMS = sorted({p for g in FULL for p in g.problems})


def _random_values(problem, n: int, seed: int = 0) -> list[float]:
    names = [f"x{i}" for i in range(problem.dim)]
    if set(problem.optimum or ()) == set(names):  # the unit cube: no study needed
        u = np.random.default_rng(seed).random((n, problem.dim))
        return [problem.evaluate(dict(zip(names, row))) for row in u]
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=seed))
    out = []
    for _ in range(n):
        trial = study.ask()
        value = problem.evaluate(problem.suggest(trial))
        study.tell(trial, value)
        out.append(value)
    return out


def test_suites_name_known_problems_and_samplers():
    for groups in SUITES.values():
        for g in groups:
            assert all(p in PROBLEMS for p in g.problems), g.name
            assert all(s in SAMPLERS for s in g.samplers), g.name
    assert "CMA-ES" in SAMPLERS and "TPE-group" in SAMPLERS
    assert all(PROBLEMS[name] is p for name, p in shapes.SHAPES.items())


@pytest.mark.parametrize("name", SUITE_PROBLEMS)
def test_stated_minimum_is_reached_at_the_optimum_and_not_undercut(name):
    p = PROBLEMS[name]
    assert p.optimum is not None and p.minimum is not None
    at_opt = p.evaluate(p.optimum)
    assert at_opt == pytest.approx(p.minimum, rel=1e-12, abs=1e-12)
    values = _random_values(p, 200)
    assert min(values) >= p.minimum - 1e-9 * max(1.0, abs(p.minimum))


def test_categorical_only_minimum_by_enumeration():
    p = PROBLEMS["cat6"]
    grid = np.array(np.meshgrid(*[range(5)] * shapes.CAT_DIM, indexing="ij")).reshape(6, -1).T
    labels = shapes.CAT_LABELS
    values = [p.evaluate({f"c{i}": labels[j] for i, j in enumerate(row)}) for row in grid]
    assert len(values) == 5 ** 6
    assert min(values) == p.minimum == 0.0
    assert sum(v == 0.0 for v in values) == 1  # a unique optimum


@pytest.mark.parametrize("d", [2, 4])
def test_penalty_region_is_a_third_of_the_box(d):
    rng = np.random.default_rng(1)
    u = rng.random((6000, d))
    p = PROBLEMS[f"penalty{d}d-1e6"]
    names = [f"x{i}" for i in range(d)]
    hit = np.mean([p.evaluate(dict(zip(names, row))) == 1e6 for row in u])
    assert hit == pytest.approx(1.0 / 3.0, abs=0.02)  # 3.3 standard errors
    # the optimum is valid; the P variants differ only on the invalid region, where they are P
    assert sum(p.optimum.values()) < p.extra["limit"]
    variants = [PROBLEMS[f"penalty{d}d-{label}"] for label in shapes.PENALTIES]
    for row in u[:200]:
        params = dict(zip(names, row))
        got = [q.evaluate(params) for q in variants]
        if row.sum() > p.extra["limit"]:
            assert got == [math.inf, 1e3, 1e6, 1e12]
        else:
            assert got == [got[0]] * 4 and got[0] < 2.0


def test_scaled_problems_are_one_function():
    params = {"x0": 0.3, "x1": 0.7, "x2": 0.2}
    base = PROBLEMS["h3x1"].evaluate(params)
    for name, p in shapes.SHAPES.items():
        if p.extra.get("shapes") == "scales":
            expect = p.extra["scale"] * base + p.extra["offset"]
            assert p.evaluate(params) == pytest.approx(expect, rel=1e-12), name


def test_plateau_ties_most_of_the_space():
    values = np.array(_random_values(PROBLEMS["plateau3d"], 400))
    assert 0.7 < np.mean(values == shapes.PLATEAU_LEVEL) < 0.9
    assert np.allclose(values * 100, np.round(values * 100), rtol=0, atol=1e-9)  # steps of 0.01


def test_wide_branch_spans_100x_the_others():
    p = PROBLEMS["branches-wide"]
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    by: dict[str, list[float]] = {}
    for _ in range(600):
        trial = study.ask()
        params = p.suggest(trial)
        by.setdefault(params["branch"], []).append(p.evaluate(params))
        study.tell(trial, by[params["branch"]][-1])
    span = {b: max(v) - min(v) for b, v in by.items()}
    assert span["wide"] > 50 * max(span["a"], span["b"])


def test_every_problem_runs_through_the_runner(tmp_path):
    task_list = [Task(p, "Random", 0, 2) for p in SUITE_PROBLEMS] + [
        Task("h3x1", "GP-UCB", 0, 8)]
    ok, failed = run_tasks("shapes", task_list, str(tmp_path), jobs=1, resume=False)
    assert (ok, failed) == (len(task_list), 0)
    runs = {(r["problem"], r["sampler"]): r for r in read_jsonl(str(tmp_path / RUNS_FILE))}
    assert {p for p, s in runs if s == "Random"} == set(SUITE_PROBLEMS)
    for r in runs.values():
        assert len(r["values"]) == len(r["model_trials"]) == r["n_trials"]
    assert not any(runs[("cat6", "Random")]["model_trials"])
    # GP-UCB: start-up trials carry no gpbandit:state record, the model's trials do
    flags = runs[("h3x1", "GP-UCB")]["model_trials"]
    assert not flags[0] and flags[-1] and flags == sorted(flags)


def test_state_attr_detection_handles_chunks():
    assert is_model_trial({"gpbandit:state:0": "{}"})
    assert is_model_trial({"gpbandit:state": "{}"})
    assert not is_model_trial({"gpbandit:params": "{}", "gpbandit:stateful": 1})


def test_select_keeps_group_samplers_and_runs_variants_everywhere():
    groups = select("quick", samplers=["CMA-ES", "Random", 'GP-UCB{"x": 1}'])
    by = {g.name: g.samplers for g in groups}
    assert by["dims30"] == ("CMA-ES", "Random", 'GP-UCB{"x": 1}')
    assert by["penalty"] == ("Random", 'GP-UCB{"x": 1}')
    only = select("quick", problems=["ackley20"], trials=9, seeds=2)
    assert [(g.name, g.problems, g.trials, g.seeds) for g in only] == [
        ("dims20", ("ackley20",), 9, 2)]
    t = tasks(QUICK)
    assert len(t) == len(set(x.key for x in t))
    assert [x.seed for x in t] == sorted(x.seed for x in t)  # seeds outermost


def _run(problem, sampler, seed, values, model=None):
    return {"problem": problem, "sampler": sampler, "seed": seed, "n_trials": len(values),
            "minimum": 0.0, "values": values,
            "model_trials": model if model is not None else [False] * len(values),
            "suggest_seconds": [0.0] * len(values), "suggest_cpu_seconds": [0.0] * len(values),
            "objective_seconds": [0.0] * len(values), "tell_seconds": [0.0] * len(values)}


def test_checks_apply_the_issues_rules():
    runs = []
    for seed in range(5):
        runs += [_run("penalty2d-inf", "GP-UCB", seed, [1.0, 1e-3]),
                 _run("penalty2d-1e6", "GP-UCB", seed, [1e6, 2.9e-3]),  # <= 2e-3 + 1e-3
                 _run("penalty2d-1e12", "GP-UCB", seed, [1e12, 3.1e-3]),  # > 3e-3
                 _run("penalty2d-1e6", "TPE", seed, [0.5, 0.1]),
                 _run("penalty2d-1e12", "TPE", seed, [0.5, 0.1]),
                 # best found by the model in 3 of 5 seeds: FAIL although below Random
                 _run("ellipsoid30", "GP-UCB", seed, [5.0, 1.0], [False, seed < 3]),
                 _run("ellipsoid30", "Random", seed, [5.0, 4.0]),
                 _run("hartmann6", "GP-UCB", seed, [1.0, 2 * STUCK if seed < 1 else 0.0])]
    lines = checks(summarize(runs))
    text = {ln.split(":")[0]: ln for ln in lines if ln.startswith("- ")}
    assert text["- PASS penalty penalty2d-1e6 GP-UCB"]
    assert text["- **FAIL** penalty penalty2d-1e12 GP-UCB"]
    assert "model in 3 of 5 seeds (need 4): no" in text["- **FAIL** 30-D ellipsoid30 GP-UCB"]
    assert "1 of 5 runs stuck" in text["- **FAIL** Hartmann-6 GP-UCB"]  # limit 5 x 5 / 40 = 0

