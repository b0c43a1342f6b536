"""The benchmark harness (``benchmarks/harness``, ``python -m benchmarks``): known optima of its
problems, an end-to-end smoke run, the report and ``--resume``."""

from __future__ import annotations

import itertools
import json
import math
import pathlib
import sys

import numpy as np
import optuna
import pytest
from scipy.optimize import minimize

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.harness import cli, quick, report, runner  # noqa: E402
from benchmarks.harness.problems import GRIDS, PROBLEMS  # noqa: E402
from benchmarks.harness.suite import get_suite  # noqa: E402

KNOWN = [p for p in PROBLEMS.values() if p.minimum is not None and p.name not in GRIDS]


@pytest.mark.parametrize("problem", KNOWN, ids=[p.name for p in KNOWN])
def test_known_minimum_is_reached_at_the_optimum_and_nowhere_lower(problem):
    assert problem.evaluate(problem.optimum) == pytest.approx(problem.minimum, abs=1e-12)
    # 200 random points of the search space are all above the minimum
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    study.optimize(lambda t: problem.evaluate(problem.suggest(t)), n_trials=200)
    assert min(t.value for t in study.trials) > problem.minimum
    # no lower point next to the optimum (continuous coordinates, the rest fixed)
    floats = [k for k, v in problem.optimum.items() if isinstance(v, float) and k != "lr"]
    x0 = np.array([problem.optimum[k] for k in floats])

    def f(x):
        return problem.evaluate({**problem.optimum, **dict(zip(floats, x))})

    res = minimize(f, x0, method="L-BFGS-B", bounds=[(0.0, 1.0)] * len(floats))
    assert res.fun >= problem.minimum - 1e-9


@pytest.mark.parametrize("name", GRIDS)
def test_grid_minimum_is_the_least_value_of_the_whole_grid(name):
    problem = PROBLEMS[name]
    assert problem.evaluate(problem.optimum) == problem.minimum
    # the grid as the samplers see it: every combination of the suggested distributions' values
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    study.optimize(lambda t: problem.evaluate(problem.suggest(t)), n_trials=1)
    dists = study.trials[0].distributions
    axes = {k: (list(range(d.low, d.high + 1))
                if isinstance(d, optuna.distributions.IntDistribution) else list(d.choices))
            for k, d in dists.items()}
    values = [problem.evaluate(dict(zip(axes, combo)))
              for combo in itertools.product(*axes.values())]
    assert len(values) == problem.extra["grid"] <= 512  # small enough for our samplers to score all
    assert min(values) == problem.minimum
    # on the grid the minimum lies above the continuous function's own
    assert problem.minimum > PROBLEMS[name.split("-")[0]].minimum


def test_published_values():
    # Branin 5 / (4 pi), Hartmann-6 -3.32237, Hartmann-3 as defined by problems.py (whose P
    # differs in the 4th digit from the commonly quoted one: -3.862780, not -3.86278 2148)
    assert PROBLEMS["branin"].minimum == pytest.approx(0.397887, abs=1e-6)
    assert PROBLEMS["hartmann6"].minimum == pytest.approx(-3.32237, abs=1e-5)
    assert PROBLEMS["hartmann3"].minimum == pytest.approx(-3.86278, abs=1e-5)
    mixed = PROBLEMS["mixed"]
    # each category's own minimum is its offset: "b" is the only global one
    for c, off in [("a", 0.5), ("c", 0.8), ("d", 0.3)]:
        from benchmarks.harness.problems import _MIXED

        _, (cx, cy), k = _MIXED[c]
        assert mixed.evaluate({"x0": cx, "x1": cy, "lr": 1e-2, "k": k, "c": c}) == off


def test_ml_task_is_an_error_rate():
    problem = PROBLEMS["svc-cancer"]
    value = problem.evaluate({"C": 10.0, "gamma": 0.01})
    assert 0.0 <= value < 0.1 and problem.minimum is None
    assert problem.evaluate({"C": 10.0, "gamma": 0.01}) == value  # deterministic folds


def _run(out, *extra):
    return cli.main(["run", "smoke", "--problems", "branin", "--samplers", "GP-UCB",
                     "Random", "--seeds", "1", "--trials", "6", "--out", str(out), *extra])


def test_smoke_end_to_end_writes_json_lines_and_renders_a_table(tmp_path, capsys):
    assert _run(tmp_path) == 0
    lines = (tmp_path / runner.RUNS_FILE).read_text().splitlines()
    records = [json.loads(line) for line in lines]
    assert sorted(r["sampler"] for r in records) == ["GP-UCB", "Random"]
    for r in records:
        assert r["problem"] == "branin" and r["seed"] == 0 and r["n_trials"] == 6
        for key in ("values", "suggest_seconds", "objective_seconds", "tell_seconds", "params"):
            assert len(r[key]) == 6
        assert r["best_value"] == min(r["values"]) and r["wall_seconds"] > 0
        assert r["minimum"] == pytest.approx(0.397887, abs=1e-6)
    config = json.loads((tmp_path / runner.CONFIG_FILE).read_text())
    part = config["parts"][-1]
    assert config["suite"] == "smoke" and part["samplers"] == ["GP-UCB", "Random"]
    assert part["n_trials"] == [6] and part["command"].startswith("python -m benchmarks run smoke")
    out = capsys.readouterr()
    assert "[2/2] branin" in out.err  # progress on stderr
    assert "### branin" in out.out and "| GP-UCB | 1 |" in out.out

    text = report.render(get_suite("smoke"), [str(tmp_path)])
    assert (tmp_path / "report.md").read_text() == text
    assert "simple regret at T: median [IQR]" in text
    assert "Quality targets" in text
    # the one format's table: Random's own score is 0 by definition, GP-UCB's the formula's
    assert "| Random | 0.0 | 0.0 | 0 of 1 |" in text
    # the table's median is the run's final simple regret
    res = quick.summarize(records)["branin"]
    r = next(r for r in records if r["sampler"] == "GP-UCB")
    assert res.cells["GP-UCB"].median == pytest.approx(min(r["values"]) - r["minimum"])
    assert res.cells["GP-UCB"].cumulative[0] == pytest.approx(
        sum(v - r["minimum"] for v in r["values"]))


def test_resume_skips_finished_runs(tmp_path, capsys):
    assert _run(tmp_path, "--no-report") == 0
    path = tmp_path / runner.RUNS_FILE
    first, second = path.read_text().splitlines()
    with pytest.raises(SystemExit):  # no silent mixing of two runs
        _run(tmp_path, "--no-report")
    capsys.readouterr()
    # keep the first run, and a second one cut off mid-line (killed while writing)
    path.write_text(first + "\n" + second[: len(second) // 2])
    assert _run(tmp_path, "--resume", "--no-report") == 0
    err = capsys.readouterr().err
    assert "1 already finished" in err and "1 to run" in err
    records = runner.read_jsonl(str(path))
    assert len(records) == 2 and json.loads(first) == records[0]
    assert {r["sampler"] for r in records} == {"GP-UCB", "Random"}
    # deterministic: the rerun gives the values of the interrupted one's full record
    assert records[1]["values"] == json.loads(second)["values"]
    # nothing left: a second resume runs nothing
    assert _run(tmp_path, "--resume", "--no-report") == 0
    assert "0 to run" in capsys.readouterr().err
    assert len(runner.read_jsonl(str(path))) == 2


def test_report_of_unknown_optimum_uses_the_best_value_over_all_runs():
    runs = [
        {"problem": "p", "sampler": s, "seed": seed, "n_trials": 3, "minimum": None,
         "values": v, "suggest_seconds": [0.0] * 3, "wall_seconds": 1.0}
        for s, seed, v in [("GP-UCB", 0, [0.3, 0.2, 0.25]), ("TPE", 0, [0.4, 0.1, 0.5])]
    ]
    res = quick.summarize(runs)["p"]
    assert res.reference == 0.1 and not res.known_minimum
    assert res.cells["GP-UCB"].median == pytest.approx(0.1)
    assert res.cells["TPE"].median == 0.0
    assert math.isclose(res.cells["TPE"].cumulative[0], 0.3 + 0.0 + 0.4)


def test_a_variant_name_builds_our_sampler_with_its_arguments():
    from benchmarks.harness.samplers import make_sampler, unknown_samplers
    sampler = make_sampler('GP-TS{"width": {"B": 0.7}, "search": {"n_candidates": 256}}', seed=3)
    assert type(sampler).__name__ == "GPTSSampler"
    assert sampler._width.B == 0.7 and sampler._settings.search.n_candidates == 256
    # the fields not given keep GP-TS's defaults for that argument, not the classes' defaults
    assert sampler._width.R == 0.0 and sampler._width.early_factor == 3.0
    assert unknown_samplers(["GP-UCB", 'IGP-UCB{"width": {"B": 1.0}}']) == []


def test_a_variant_chooses_a_settings_class_by_type():
    from benchmarks.harness.samplers import make_sampler
    from optuna_gpbandit import CandidateDraw, Censoring, Restarts, Theorem1, Theorem2
    sampler = make_sampler('GP-UCB{"pending": {"type": "Censoring", "window": 10}, '
                           '"reset": {"type": "Restarts"}, "beta": {"theorem": 2, "a": 2.0}, '
                           '"model": {"input_warping": false}}', seed=0)
    assert sampler._settings.pending == Censoring(window=10)
    assert isinstance(sampler._settings.reset, Restarts)
    assert sampler._beta == Theorem2(a=2.0)
    assert sampler._settings.model.input_warping is False
    assert make_sampler('GP-UCB{"beta": {"type": "Theorem1.paper"}}', 0)._beta == Theorem1.paper()
    assert make_sampler('GP-TS{"draw": {"type": "CandidateDraw"}}', 0)._draw == CandidateDraw()
    # a nested object without "type" replaces fields of the field's default (it was passed on
    # as a plain dict, which the sampler took for a trust region and failed on at its first ask)
    nested = make_sampler('GP-UCB{"search": {"trust_region": {"start_at_centre": false}}}', 0)
    region = nested._settings.search.trust_region
    assert type(region).__name__ == "TrustRegion" and region.start_at_centre is False
    assert region.min_dim == 10  # the default's other fields kept


def test_a_variant_of_the_earlier_flat_arguments_means_the_same_settings():
    from benchmarks.harness.samplers import make_sampler, modern_name
    old = make_sampler('GP-TS{"B": 0.7, "n_candidates": 256}', seed=3)
    assert old._width.B == 0.7 and old._settings.search.n_candidates == 256
    assert old._width.early_factor == 3.0
    assert modern_name('GP-UCB{"beta_scale": 0.1}') == 'GP-UCB{"beta": {"scale": 0.1}}'
    assert modern_name('GP-UCB{"pending": "censor"}') == 'GP-UCB{"pending": {"type": "Censoring"}}'


@pytest.mark.parametrize("name, reason", [
    ('GP-TS{"Bx": 0.7}', "Bx"),  # not an argument of the sampler
    ('GP-TS{"width": {"Bx": 0.7}}', "Bx"),  # not a field of the settings object
    ('GP-UCB{"beta": {"scale": -1}}', "scale"),  # rejected by the settings object
    ('GP-UCB{"model": 3}', "model"),  # rejected by the sampler
    ('GP-UCB{"reset": {"patience": 3}}', "type"),  # not a field of the default NoReset()
    ('GP-UCB{"search": {"trust_region": {"nope": 1}}}', "nope"),  # nested: not a field
    ('GP-UCB{"search": {"polish_distance": {"x": 1}}}', "type"),  # nested default None
    ('GP-UCB{"pending": {"type": "Nope"}}', "Nope"),
    ('TPE{"n_startup_trials": 5}', "not one of"),  # not one of ours
    ('GP-UCB{beta: {"scale": 1}}', "not JSON"),
    ('GP-UCB{"beta": {"scale": 1}', "not JSON"),
    ('GP-UCB{"seed": 1}', "seed"),
])
def test_a_bad_variant_is_an_error_naming_it(name, reason):
    from benchmarks.harness.samplers import make_sampler, unknown_samplers
    with pytest.raises(ValueError, match=reason):
        make_sampler(name, seed=0)
    (msg,) = unknown_samplers([name])
    assert name in msg and reason in msg
    with pytest.raises(SystemExit, match="unknown sampler"):
        cli.check_samplers(["GP-UCB", name])


def test_per_problem_paired_differences() -> None:
    """The swap table's cell: a variant's score and its paired difference from the base, over
    the seeds both ran, with the standard error of the per-seed differences."""
    from benchmarks.harness.scoring import Cell

    def cell(scores: dict[int, float]) -> Cell:
        return Cell(float(np.mean(list(scores.values()))), 0.0, 0.0, 0.0, len(scores),
                    by_seed={k: (v, v) for k, v in scores.items()})

    label = "T = 40"
    cells = {"p": {("base", label): cell({0: 10.0, 1: 20.0, 2: 30.0}),
                   ("swap", label): cell({0: 14.0, 1: 22.0, 2: 90.0})},  # seed 2 unpaired
             "q": {("swap", label): cell({0: 1.0})}}  # no base run: no row
    cells["p"][("swap", label)].by_seed.pop(2)
    lines = report.per_problem_paired(cells, "base", ["base", "swap"], label)
    rows = [ln for ln in lines if ln.startswith("| p ")]
    assert len(rows) == 1 and not any(ln.startswith("| q ") for ln in lines)
    # differences 4 and 2 over seeds 0 and 1: mean 3, standard error sd/sqrt(2) = 1
    assert "(+3.0 ± 1.0)" in rows[0]


def test_log_ei_swap_matches_expected_improvement() -> None:
    """``GP-UCB-logEI``'s acquisition: the log of EI's closed form where that is computable,
    finite far below the best value (where EI underflows), and its gradient that of its
    values."""
    from scipy.stats import norm

    from benchmarks.harness.swaps import LogEI, log_h

    z = np.array([-8.0, -2.0, 0.0, 1.5, 6.0])
    assert np.allclose(log_h(z)[0], np.log(z * norm.cdf(z) + norm.pdf(z)), rtol=1e-10)
    assert np.isfinite(log_h(np.array([-60.0]))[0]).all()

    class Posterior:  # mean sin(x).sum(), variance 0.1 + x_0^2
        def mean_var(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            return np.sin(X).sum(axis=1), 0.1 + X[:, 0] ** 2

        def mean_var_grad(self, x: np.ndarray) -> tuple[float, float, np.ndarray, np.ndarray]:
            return (float(np.sin(x).sum()), float(0.1 + x[0] ** 2), np.cos(x),
                    np.array([2.0 * x[0], 0.0]))

    acq = LogEI(Posterior(), best=2.5)
    x = np.array([0.3, -0.2])
    value, grad = acq.value_grad(x)
    assert value == pytest.approx(acq.values(x[None])[0])
    mu, var = Posterior().mean_var(x[None])
    sd = math.sqrt(var[0])
    zz = (mu[0] - 2.5) / sd
    assert value == pytest.approx(math.log(sd * (zz * norm.cdf(zz) + norm.pdf(zz))))
    eps = 1e-6
    numeric = [(acq.values((x + eps * e)[None])[0] - acq.values((x - eps * e)[None])[0])
               / (2 * eps) for e in np.eye(2)]
    assert np.allclose(grad, numeric, rtol=1e-5)
