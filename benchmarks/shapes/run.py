"""Command line of the objective-shapes suite (``python -m benchmarks.shapes --help``).

``run`` and ``report`` are the harness's (``python -m benchmarks run|report shapes``:
``benchmarks/harness/cli.py``), reached here with this suite's earlier option name ``--suite``
(the group list, ``--set`` there); ``list`` is the suite's own.
"""

from __future__ import annotations

import argparse
import sys

from benchmarks.harness import cli
from benchmarks.harness.samplers import SAMPLERS

from .problems import ALL
from .suites import SUITES, tasks


def translate(argv: list[str]) -> list[str]:
    """``--suite X`` -> ``--set X``."""
    return ["--set" if a == "--suite" else a for a in argv]


def cmd_list(args: argparse.Namespace) -> int:
    for name, p in ALL.items():
        print(f"{name:16s} f* = {p.minimum:<12.6g} {p.description}")
    for name, groups in SUITES.items():
        n = len(tasks(groups))
        print(f"\nsuite {name} ({n} runs):")
        for g in groups:
            print(f"  {g.name:9s} {g.trials:3d} trials x {g.seeds:2d} seeds: "
                  f"{', '.join(g.problems)} | {', '.join(g.samplers)}")
    print("\nsamplers: " + ", ".join(SAMPLERS))
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] in (["run"], ["report"]):
        return cli.main([argv[0], "shapes"] + translate(argv[1:]))
    ap = argparse.ArgumentParser(prog="python -m benchmarks.shapes",
                                 description="Objective-shapes suite (issue 47; "
                                 "benchmarks/shapes/__init__.py): run and report are `python -m "
                                 "benchmarks run|report shapes`.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("run", help="python -m benchmarks run shapes ... (--suite accepted for --set)")
    sub.add_parser("report", help="python -m benchmarks report shapes DIR ...")
    sub.add_parser("list", help="problems, suites and samplers").set_defaults(func=cmd_list)
    args = ap.parse_args(argv)
    return args.func(args)
