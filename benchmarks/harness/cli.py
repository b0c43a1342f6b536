"""The one command line of the benchmark suites (``python -m benchmarks --help``).

    python -m benchmarks list [SUITE]
    python -m benchmarks run SUITE [--half H] [--problems ...] [--samplers ...] [--seeds N]
                                   [--trials T] [--jobs 2] [--out DIR] [--resume] [suite options]
    python -m benchmarks report SUITE DIR [DIR ...] [--half H] [--base NAME] [--compare ...]
    python -m benchmarks pool SUITE --out DIR [--from DIR ...] [selection]
    python -m benchmarks store SUITE DIR [DIR ...] [--samplers NAME ...] [--out DIR]
    python -m benchmarks summary [--file FILE] SUITE=DIR[,DIR...] ...

Suites (``suite.py``): quick, grid, smoke, hpo, bayesmark, shapes, bbob, users; ``list`` shows
each one's halves, problems, budget and default samplers. ``run`` refuses a result directory
that already holds finished runs unless ``--resume`` is given, appends one "part" (the command,
the package's checkout, versions, load) to the directory's ``config.json``, runs the tasks
(``runner.run_tasks``), evaluates the random-search pools a pool-scored suite needs, and writes
the report (``report.py``). ``report`` reads directories and their immediate subdirectories.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from . import runner
from .samplers import SAMPLERS, unknown_samplers
from .suite import SUITES, Suite, Task, get_suite

REPORTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "reports")


def check_samplers(names: list[str]) -> list[str]:
    """``names`` if each is a known sampler or a valid variant (``samplers.py``)."""
    bad = unknown_samplers(names)
    if bad:
        raise SystemExit(f"unknown sampler(s): {'; '.join(bad)}; known: {', '.join(SAMPLERS)}, "
                         "or a variant of one of ours such as 'GP-TS{\"width\": {\"B\": 0.7}}'")
    return names


# --------------------------------------------------------------------------- options
def add_selection(p: argparse.ArgumentParser, suite: Suite, default_half: str) -> None:
    halves = list(suite.halves) + (["all"] if "all" not in suite.halves else [])
    p.add_argument("--half", choices=halves, default=default_half,
                   help=f"which half of the problems (default {default_half})")
    p.add_argument("--problems", nargs="+", metavar="NAME", help="only these (of the half)")
    if suite.options is not None:
        suite.options(p)


def add_seed_options(p: argparse.ArgumentParser, suite: Suite) -> None:
    """``--seeds`` / ``--seed-list``, ``--first-seed``, ``--trials``, ``--jobs``, ``--threads``:
    what work, on how many workers."""
    group = p.add_mutually_exclusive_group()
    group.add_argument("--seeds", type=int, default=None,
                       help=f"number of seeds, from --first-seed (default {suite.seeds})")
    group.add_argument("--seed-list", type=int, nargs="+", metavar="SEED")
    p.add_argument("--first-seed", type=int, default=0)
    p.add_argument("--trials", type=int, default=None,
                   help="trials per run (default: each problem's budget; `list` shows it)")
    p.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    p.add_argument("--threads", type=int, default=1,
                   help="BLAS / OpenMP / torch threads per run (default 1)")


def seeds_of(args: argparse.Namespace, suite: Suite) -> list[int]:
    """``--seed-list``, else ``--seeds`` (default the suite's) seeds from ``--first-seed``."""
    if args.seed_list:
        return list(args.seed_list)
    return list(range(args.first_seed, args.first_seed + (args.seeds or suite.seeds)))


def select(suite: Suite, args: argparse.Namespace) -> list[str]:
    """The problems of ``--half``, narrowed by ``--problems`` and the suite's own options; a
    named problem outside the half is an error."""
    names = suite.names(args.half)
    if args.problems:
        known = set(suite.names())
        bad = [p for p in args.problems if p not in known]
        if bad:
            raise SystemExit(f"unknown problem(s) of suite {suite.name}: {', '.join(bad)} "
                             f"(python -m benchmarks list {suite.name})")
        outside = [p for p in args.problems if p not in names]
        if outside:
            raise SystemExit(f"not in the {args.half} half: {', '.join(outside)} (pass --half "
                             "all or the problem's half)")
        names = [p for p in names if p in args.problems]
    if suite.select is not None:
        names = suite.select(args, names)
    if not names:
        raise SystemExit(f"no problem selected in the {args.half} half of suite {suite.name}")
    return names


def plan(suite: Suite, args: argparse.Namespace, names: list[str], samplers: list[str],
         seeds: list[int]) -> list[Task]:
    """The runs: the suite's own plan, or every problem x sampler x seed (seeds outermost: an
    interrupted run holds whole seeds of every (problem, sampler)) at the problem's budget or
    ``--trials``."""
    if suite.plan is not None:
        return suite.plan(args, names, samplers, seeds)
    return [Task(p, s, seed, args.trials or suite.budget(p))
            for seed in seeds for p in names for s in samplers]


def pool_of(suite: Suite, args: argparse.Namespace, tasks: list[Task]) -> int:
    """``--pool``, or ``pool.pool_size`` of the longest budget; one shorter than
    ``pool.least_pool`` of it is an error naming it."""
    from . import pool as P

    longest = max(t.n_trials for t in tasks)
    if args.pool is None:
        return P.pool_size(longest)
    if args.pool < P.least_pool(longest):
        raise SystemExit(f"--pool {args.pool} is shorter than {P.least_pool(longest)} "
                         f"(1.6 x {longest} trials): random search's expected best at "
                         f"{longest} trials would lean on the pool's single best value "
                         "(benchmarks/harness/pool.py)")
    return args.pool


# --------------------------------------------------------------------------- commands
def cmd_run(suite: Suite, args: argparse.Namespace) -> int:
    names = select(suite, args)
    samplers = check_samplers(args.samplers) if args.samplers else list(suite.samplers)
    seeds = seeds_of(args, suite)
    tasks = plan(suite, args, names, samplers, seeds)
    if not tasks:
        raise SystemExit("nothing to run: no problem keeps a sampler")
    out = args.out or os.path.join(REPORTS, suite.name, args.half)
    n_pool = pool_of(suite, args, tasks) if suite.scoring.kind == "pool" else None
    n_done = len(runner.finished_keys(out)) if os.path.isdir(out) else 0
    if n_done and not args.resume:
        raise SystemExit(f"{out} already holds {n_done} finished runs: pass --resume to add to "
                         "it (finished runs are skipped), or choose another --out")
    os.makedirs(out, exist_ok=True)
    cfg_path = os.path.join(out, runner.CONFIG_FILE)
    config = json.load(open(cfg_path)) if os.path.exists(cfg_path) else {"suite": suite.name}
    part = {"command": args.command,
            "started": time.strftime("%Y-%m-%dT%H:%M:%S"), "half": args.half,
            "problems": names, "samplers": samplers, "seeds": seeds,
            "n_trials": sorted({t.n_trials for t in tasks}), "runs": len(tasks),
            "pool": n_pool, "jobs": args.jobs, "threads": args.threads,
            "cpus": os.cpu_count(), "load_start": os.getloadavg()[0],
            "package": runner.package_checkout("--short=12"), "versions": runner.versions()}
    config.setdefault("parts", []).append(part)

    def save() -> None:
        with open(cfg_path, "w") as fh:
            json.dump(config, fh, indent=1)

    save()
    pkg = part["package"]
    print(f"results: {out}; {len(names)} problems ({args.half}); optuna_gpbandit from "
          f"{pkg['path']} ({pkg['commit']}{', modified' if pkg['dirty'] else ''})",
          file=sys.stderr, flush=True)
    cpu0 = time.process_time()
    try:
        _, failed = runner.run_tasks(suite.name, tasks, out, jobs=args.jobs,
                                     threads=args.threads, resume=True)
    finally:
        part.update(finished=time.strftime("%Y-%m-%dT%H:%M:%S"), load_end=os.getloadavg()[0],
                    parent_cpu_seconds=time.process_time() - cpu0)
        save()
    if n_pool is not None:
        from . import pool as P

        keys = sorted({(t.problem, suite.objective_seed(t.seed)) for t in tasks})
        P.ensure(suite, out, keys, n_pool, jobs=args.jobs, threads=args.threads,
                 stored=[os.path.join(REPORTS, suite.name, "peers")])
    if not args.no_report:
        from .report import render

        text = render(suite, [out], base=args.base, command=f"python -m benchmarks report "
                      f"{suite.name} {out}")
        print_report(text, os.path.join(out, "report.md"), quiet=args.quiet)
    return 1 if failed else 0


def cmd_report(suite: Suite, args: argparse.Namespace) -> int:
    from .report import render

    extra = {k: getattr(args, k) for k in ("baseline",) if getattr(args, k, None)}
    text = render(suite, args.dirs, base=args.base, half=args.half, compare=args.compare,
                  out_file=args.file, floor=not args.no_floor, extra=extra,
                  command=args.command, paired_per_problem=args.per_problem)
    print_report(text, args.file or os.path.join(args.dirs[0], "report.md"), args.quiet)
    return 0


def cmd_pool(suite: Suite, args: argparse.Namespace) -> int:
    """Evaluate, or extend, the random-search pools of the selected problems (and seeds, where
    the objective depends on the seed) into ``--out``, extending the pools of ``--from``."""
    from . import pool as P

    if suite.scoring.kind != "pool":
        raise SystemExit(f"suite {suite.name} is not scored against random-search pools")
    names = select(suite, args)
    tasks = plan(suite, args, names, ["Random"], seeds_of(args, suite))
    keys = sorted({(t.problem, suite.objective_seed(t.seed)) for t in tasks})
    known = P.read(suite, list(args.from_dirs) + [args.out])
    P.ensure(suite, args.out, keys, pool_of(suite, args, tasks), jobs=args.jobs,
             threads=args.threads, known=known)
    return 0


def cmd_list(suite_name: str | None) -> int:
    if suite_name is None:
        for name in SUITES:
            try:
                s = get_suite(name)
            except ImportError as e:
                print(f"{name:10s} (not available here: {e})")
                continue
            halves = ", ".join(f"{h} {len(v)}" for h, v in s.halves.items())
            print(f"{name:10s} {s.title}: {halves} problems; {s.seeds} seeds; scoring "
                  f"{s.scoring.kind}; samplers {' '.join(s.samplers)}")
        print("\nsamplers: " + ", ".join(SAMPLERS))
        return 0
    s = get_suite(suite_name)
    print(f"{s.title} ({s.name}): scoring {s.scoring.kind}, {s.seeds} seeds, samplers "
          f"{' '.join(s.samplers)}")
    for h, names in s.halves.items():
        print(f"\n{h} half ({len(names)} problems):")
        for n in names:
            what = s.describe(n) if s.describe is not None else ""
            print(f"  {n:28s} {s.budget(n):4d} trials  {what}")
    return 0


def cmd_store(suite: Suite, args: argparse.Namespace) -> int:
    """Keep the runs of ``--samplers`` (and the pools) of the result directories in
    ``--out`` as gzipped JSON lines (merged with what it holds; per (problem, sampler, seed,
    trials) the last run read wins; per (problem, seed) the longest pool), with per-trial
    parameters dropped and timings rounded to 4 significant digits: the peers' runs and the
    random-search pools, which depend only on the seeds, kept in the repository
    (``benchmarks/reports/<suite>/peers``), where ``run`` takes its pools from. Without
    ``--samplers``, the pools only."""
    import gzip

    from . import pool as P
    from .report import collect

    if not args.samplers and suite.scoring.kind != "pool":
        raise SystemExit(f"store: --samplers is needed: suite {suite.name} has no random-search "
                         "pools to keep without runs")
    keep = []
    if args.samplers:
        _, runs, _ = collect(suite, args.dirs)
        keep = [r for r in runs if r["sampler"] in args.samplers]
        if not keep:
            raise SystemExit(f"store: no run of {', '.join(args.samplers)} in "
                             f"{', '.join(args.dirs)}")
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, runner.RUNS_FILE + ".gz")
    merged = {(r["problem"], r["sampler"], r["seed"], r["n_trials"]): r
              for r in runner.read_jsonl(os.path.join(args.out, runner.RUNS_FILE))}

    def slim(r: dict) -> dict:
        out = {k: v for k, v in r.items() if k not in ("params", "dir")}
        for k in ("suggest_seconds", "suggest_cpu_seconds", "objective_seconds", "tell_seconds"):
            out[k] = [float(f"{x:.4g}") for x in r.get(k, [])]
        return out

    for r in keep:
        merged[(r["problem"], r["sampler"], r["seed"], r["n_trials"])] = slim(r)
    if keep:
        with gzip.open(path, "wt") as fh:
            for r in merged.values():
                fh.write(json.dumps(r) + "\n")
    n_pools = 0
    if suite.scoring.kind == "pool":
        # the longest of each (problem, seed); of equal ones, the new directories' (read first)
        pools = P.read(suite, args.dirs + [args.out])
        with gzip.open(os.path.join(args.out, P.POOL_FILE + ".gz"), "wt") as fh:
            for rec in pools.values():
                fh.write(json.dumps({k: v for k, v in rec.items() if k != "dir"}) + "\n")
        n_pools = len(pools)
    runs_said = (f"{len(keep)} runs of {', '.join(args.samplers)} ({len(merged)} in all) in "
                 f"{path}" if keep else f"no runs (the pools only) in {args.out}")
    print(f"store: {runs_said}" + (f"; {n_pools} pools" if n_pools else ""), file=sys.stderr)
    return 0


def cmd_summary(args: argparse.Namespace) -> int:
    from .summary import render

    text = render(args.pairs, base=args.base, out_file=args.file)
    print_report(text, args.file, args.quiet)
    return 0


def print_report(text: str, path: str | None, quiet: bool = False) -> None:
    """A written report: its text on stdout (unless ``quiet``), where it is on stderr."""
    if not quiet:
        print(text)
    if path:
        print(f"report: {path}", file=sys.stderr)


def _suite_parser(cmd: str, suite: Suite) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=f"python -m benchmarks {cmd} {suite.name}",
                                description=f"{cmd}: {suite.title}")
    default_half = "tuning" if "tuning" in suite.halves else "all"
    if cmd == "run":
        add_selection(p, suite, default_half)
        p.add_argument("--samplers", nargs="+", metavar="NAME",
                       help=f"default: {' '.join(suite.samplers)}")
        add_seed_options(p, suite)
        p.add_argument("--out", default=None, help=f"result directory (default "
                       f"benchmarks/reports/{suite.name}/<half>)")
        p.add_argument("--resume", action="store_true",
                       help="add to --out, skipping the runs it already holds")
        p.add_argument("--no-report", action="store_true")
        p.add_argument("--quiet", action="store_true", help="do not print the report")
        p.add_argument("--base", default="GP-UCB", help="the sampler the paired differences "
                       "judge")
        if suite.scoring.kind == "pool":
            p.add_argument("--pool", type=int, default=None, help="random-search pool per "
                           "(problem, objective seed), at least 1.6 x the longest budget")
    elif cmd == "report":
        p.add_argument("dirs", nargs="+", metavar="DIR")
        p.add_argument("--half", choices=list(suite.halves) + ["all"], default="all",
                       help="the half to report; all: each half, then both together (default)")
        p.add_argument("--base", default="GP-UCB", help="paired differences against this "
                       "sampler")
        p.add_argument("--compare", nargs="+", metavar="NAME",
                       help="the samplers to pair with --base (default: all others)")
        p.add_argument("--per-problem", action="store_true",
                       help="also each problem's paired difference from --base (a swap table)")
        p.add_argument("--file", default=None, help="output (default DIR/report.md, first DIR)")
        p.add_argument("--quiet", action="store_true", help="do not print the report")
        p.add_argument("--no-floor", action="store_true",
                       help="do not floor the runs' scores at -100")
        if suite.name == "shapes":
            p.add_argument("--baseline", nargs="+", default=None, metavar="DIR",
                           help="result directories of today's code, for the branches check's "
                           "'best value no worse than today's'")
    elif cmd == "store":
        p.add_argument("dirs", nargs="+", metavar="DIR")
        p.add_argument("--samplers", nargs="+", default=[], metavar="NAME",
                       help="the samplers whose runs are kept (none: the pools only)")
        p.add_argument("--out", default=os.path.join(REPORTS, suite.name, "peers"),
                       help=f"default benchmarks/reports/{suite.name}/peers")
    elif cmd == "pool":
        add_selection(p, suite, default_half)
        add_seed_options(p, suite)
        p.add_argument("--pool", type=int, default=None, help="pool size (default as for run)")
        p.add_argument("--out", required=True, help="the directory the pools are written to")
        p.add_argument("--from", dest="from_dirs", nargs="*", default=[], metavar="DIR",
                       help="result directories whose pools are extended, not redrawn")
    return p


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    commands = ("list", "run", "report", "pool", "store", "summary")
    if not argv or argv[0] in ("-h", "--help") or argv[0] not in commands:
        print(__doc__)
        if argv and argv[0] not in ("-h", "--help"):
            raise SystemExit(f"unknown command {argv[0]!r}; commands: {', '.join(commands)}")
        return 0
    cmd, rest = argv[0], argv[1:]
    if cmd == "list":
        return cmd_list(rest[0] if rest else None)
    if cmd == "summary":
        p = argparse.ArgumentParser(prog="python -m benchmarks summary",
                                    description="One table of every suite against every peer.")
        p.add_argument("pairs", nargs="+", metavar="SUITE=DIR[,DIR...]")
        p.add_argument("--base", default="GP-UCB")
        p.add_argument("--file", default=None, help="also write the table to FILE")
        p.add_argument("--quiet", action="store_true")
        return cmd_summary(p.parse_args(rest))
    if not rest or rest[0].startswith("-"):
        raise SystemExit(f"python -m benchmarks {cmd} SUITE ...: name a suite "
                         f"({', '.join(SUITES)})")
    suite = get_suite(rest[0])
    args = _suite_parser(cmd, suite).parse_args(rest[1:])
    args.command = " ".join(["python -m benchmarks", cmd, *rest])
    if cmd in ("run", "pool"):
        runner.limit_threads(args.threads)
    return {"run": cmd_run, "report": cmd_report, "pool": cmd_pool,
            "store": cmd_store}[cmd](suite, args)
