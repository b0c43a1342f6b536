"""COCO's bbob suite (``python -m benchmarks run bbob``): the reserved instances cannot be run,
each problem's stated optimum is the instance's, the halves are fixed, and the score is COCO's
fraction of targets."""

from __future__ import annotations

import math
import pathlib
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

pytest.importorskip("cocoex")

from benchmarks.bbob import problems as B  # noqa: E402
from benchmarks.bbob import suite as bbob  # noqa: E402
from benchmarks.harness import cli  # noqa: E402
from benchmarks.harness import scoring as S  # noqa: E402


@pytest.mark.parametrize("instance", B.RESERVED)
def test_the_reserved_instances_are_refused(instance):
    with pytest.raises(ValueError, match="reserved for the project's final check"):
        B.problem(1, 5, instance)
    with pytest.raises(ValueError, match="reserved"):
        B.optimum(12, 10, instance)
    assert not any(B.parse(n)[2] in B.RESERVED for n in bbob.SUITE.names())


def test_the_halves_are_the_fixed_instances():
    assert B.HALVES == {"tuning": (3, 4, 5), "validation": (6, 7, 8)}
    tuning, validation = bbob.SUITE.names("tuning"), bbob.SUITE.names("validation")
    assert not set(tuning) & set(validation)
    assert {B.parse(n)[2] for n in validation} == {6, 7, 8}
    assert len(validation) == 24 * len(B.DIMS) * 3


@pytest.mark.parametrize("f", [1, 5, 8, 12, 21])
def test_the_stated_optimum_is_the_instance_s_and_nothing_random_undercuts_it(f):
    p = B.problem(f, 5, 6)
    assert p.evaluate(p.optimum) == pytest.approx(p.minimum, abs=1e-12)
    assert all(abs(v) <= 5.0 for v in p.optimum.values())
    rng = np.random.default_rng(f)
    for x in rng.uniform(-5.0, 5.0, size=(300, 5)):
        assert p.evaluate({f"x{i}": float(v) for i, v in enumerate(x)}) >= p.minimum
    # another instance is another function: its optimum value differs
    assert B.problem(f, 5, 7).minimum != p.minimum


def test_the_score_is_the_fraction_of_coco_s_targets_reached():
    assert len(S.TARGETS) == 51 and S.TARGETS[0] == 100.0
    assert S.TARGETS[-1] == pytest.approx(1e-8)
    # regret 2 reaches the targets 10^2 .. 10^0.4 (9 of 51), regret 0.5 10^2 .. 10^-0.2 (12),
    # regret 0 all
    B_ = np.array([[3.0, 1.5, 1.0]])
    got = S.target_fraction(B_, 1.0)[0]
    assert got[0] == pytest.approx(100.0 * 9 / 51)  # regret 2: 10^2 .. 10^0.4
    assert got[1] == pytest.approx(100.0 * 12 / 51)  # regret 0.5: 10^2 .. 10^-0.2
    assert got[2] == 100.0


def test_log_regret_floors_at_coco_s_last_target():
    run = {"problem": "bbob-f01-d05-i06", "minimum": 1.0, "values": [5.0, 1.0 + 1e-3, 1.0]}
    assert bbob.log_regret(run, 2) == pytest.approx(-3.0)
    assert bbob.log_regret(run, 3) == math.log10(bbob.FLOOR)


def test_the_selection_options_narrow_dimensions_and_functions():
    parser = cli._suite_parser("run", bbob.SUITE)
    names = cli.select(bbob.SUITE, parser.parse_args(["--half", "validation"]))
    assert {B.parse(n)[1] for n in names} == {5, 10} and len(names) == 24 * 2 * 3
    names = cli.select(bbob.SUITE, parser.parse_args(["--dims", "2", "--functions", "3", "4"]))
    assert {B.parse(n)[:2] for n in names} == {(3, 2), (4, 2)}
    assert all(B.parse(n)[2] in B.HALVES["tuning"] for n in names)
    with pytest.raises(SystemExit, match="no bbob function"):
        cli.select(bbob.SUITE, parser.parse_args(["--functions", "25"]))
