#!/usr/bin/env python
"""How often a sampler ends a run in a local minimum ("stuck seeds"), over many seeds.

The quick suite has 10 seeds, too few to compare rates of a few in ten. This runs one harness
problem for many seeds and counts the runs whose simple regret at T stays above ``--stuck``
(default 1e-2: on Hartmann-3/6 every local minimum lies 0.1 or more above the global one).

``--prefix K`` continues each stuck GP-UCB run differently: the sampler under test (e.g.
GPSampler) starts from GP-UCB's first K trials of that seed. It tells when a run was captured:
if GPSampler, from the same first K trials, ends in a local minimum as well, the choice of
basin was made within those K trials.

    python benchmarks/bench_stuck.py --problem hartmann6 --samplers GP-UCB GPSampler --seeds 40
    python benchmarks/bench_stuck.py --problem hartmann6 --samplers GP-UCB \\
        --kwargs '{"beta": {"scale": 0.2}}' --seeds 40
    python benchmarks/bench_stuck.py --problem hartmann6 --samplers GPSampler --prefix 12 \\
        --seeds 10

``--diagnose`` (our samplers) prints, for each stuck run, what the model believed about the
problem's known optimum ``x*`` along the run: its posterior mean and sd there (objective units)
against the true value, the error in sds, and the fitted lengthscales. A model that is
confidently wrong at ``x*`` (errors of several sds) will not look there, whatever the width.

    python benchmarks/bench_stuck.py --problem hartmann6 --samplers GP-UCB --seeds 10 --diagnose

``--minimum F`` gives the regret's reference for a problem without a known minimum (the
scikit-learn tasks: e.g. the best value over all runs of a suite); with ``--plateau`` each stuck
run's line says how many of its trials returned exactly its best value (a quantised metric's
plateau that the sampler keeps sampling).

    python benchmarks/bench_stuck.py --problem svc-digits --samplers GP-UCB IGP-UCB GPSampler \\
        --seeds 10 --minimum 0.0149954 --stuck 1e-4 --plateau

Other ``--samplers`` names are the harness's (``benchmarks/harness/samplers.py``, e.g.
``GP-UCB-prior1``; ``--kwargs`` applies to ours).
``--kwargs`` is a JSON object of constructor arguments in the harness's variant syntax
(``benchmarks/harness/samplers.py``: a settings object as an object of its fields, e.g.
``'{"reset": {"type": "Restarts"}}'``). ``--restart-gate G`` sets the restarts' coverage gate
(``Restarts(unexplored_sd=G)``, default 0.5; it implies ``reset=Restarts()``); ``0`` restarts
whenever a run has settled, wherever the data already cover the domain.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time

from _common import limit_threads, threads_from_argv

if __name__ == "__main__":
    limit_threads(threads_from_argv(sys.argv[1:], default="1"))

import numpy as np  # noqa: E402
import optuna  # noqa: E402
from optuna.distributions import FloatDistribution  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchmarks.harness.problems import get_problem  # noqa: E402
from benchmarks.harness.samplers import SAMPLERS as HARNESS_SAMPLERS  # noqa: E402
from benchmarks.harness.samplers import variant_kwargs  # noqa: E402
from optuna_gpbandit import GPTSSampler, GPUCBSampler, IGPUCBSampler, Restarts  # noqa: E402

SAMPLERS = {
    "GP-UCB": GPUCBSampler, "IGP-UCB": IGPUCBSampler, "GP-TS": GPTSSampler,
    "GPSampler": optuna.samplers.GPSampler, "TPE": optuna.samplers.TPESampler,
}


def diagnosing(cls, problem, log: list):
    """``cls`` whose every model step appends (t, mu*, sd*, lengthscales) at the optimum."""

    class Diagnosed(cls):
        def _select(self, ctx):
            x, record = super()._select(ctx)
            xs = ctx.space.encode(problem.optimum)[None, :]
            mu, var = ctx.gp.posterior.mean_var(xs)
            mu_obj, sd_obj = ctx.obs.to_objective(float(mu[0]), float(np.sqrt(var[0])))
            log.append((ctx.t, mu_obj, sd_obj, ctx.gp.posterior.params.lengthscales.copy()))
            return x, record

    return Diagnosed


def report_diagnosis(problem, seed: int, log: list) -> None:
    truth = problem.minimum
    print(f"\nseed {seed}: model at the optimum x* (true value {truth:.4g})")
    print("| trial | posterior mean at x* | sd | error / sd | lengthscales |")
    print("|---:|---:|---:|---:|---|")
    for t, mu, sd, ls in log:
        if t % 10 == 0 or t == log[-1][0]:
            print(f"| {t} | {mu:.3f} | {sd:.3f} | {(mu - truth) / max(sd, 1e-12):.1f} | "
                  f"{np.array2string(ls, precision=2)} |")


def run(problem, make, seed: int, trials: int, start: list[tuple[dict, float]] = ()) -> list[float]:
    study = optuna.create_study(sampler=make(seed))
    dists = None
    for params, value in start:
        dists = dists or {k: FloatDistribution(0.0, 1.0) for k in params}
        study.add_trial(optuna.trial.create_trial(params=params, distributions=dists, value=value))
    values = [v for _, v in start]
    while len(values) < trials:
        trial = study.ask()
        params = problem.suggest(trial)
        value = float(problem.evaluate(params))
        study.tell(trial, value)
        values.append(value)
    return values


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--problem", default="hartmann6")
    ap.add_argument("--samplers", nargs="+", default=["GP-UCB", "GPSampler"])
    ap.add_argument("--kwargs", default="{}",
                    help="JSON keyword arguments for our samplers (the harness's variant syntax)")
    ap.add_argument("--seeds", type=int, default=40)
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--trials", type=int, default=100)
    ap.add_argument("--stuck", type=float, default=1e-2)
    ap.add_argument("--prefix", type=int, default=0,
                    help="start from GP-UCB's first K trials of each stuck GP-UCB seed")
    ap.add_argument("--restart-gate", type=float, default=None,
                    help="the restarts' coverage gate: reset=Restarts(unexplored_sd=G)")
    ap.add_argument("--minimum", type=float, default=None,
                    help="regret reference for a problem without a known minimum")
    ap.add_argument("--plateau", action="store_true",
                    help="for each stuck run, count the trials at exactly its best value")
    ap.add_argument("--diagnose", action="store_true",
                    help="print the model's belief at the known optimum in each stuck run")
    ap.add_argument("--threads", default="1", help="BLAS threads (read before import)")
    args = ap.parse_args()
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    problem = get_problem(args.problem)
    if args.minimum is not None:
        problem = dataclasses.replace(problem, minimum=args.minimum)
    if problem.minimum is None:
        raise SystemExit(f"{args.problem}: unknown minimum; choose a synthetic problem")
    settings = json.loads(args.kwargs)
    if args.restart_gate is not None:
        print(f"restarts' coverage gate: {args.restart_gate:g}\n")
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    print(f"{args.problem}, {args.trials} trials, seeds {seeds.start}-{seeds.stop - 1}; stuck: "
          f"simple regret at T > {args.stuck:g}" + (f"; from GP-UCB's first {args.prefix} "
                                                     "trials of its stuck seeds" if args.prefix
                                                     else "") + "\n")
    print("| sampler | settings | runs | stuck | median simple regret | upper quartile | "
          "cumulative regret (mean) | s |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    unknown = [n for n in args.samplers if n not in SAMPLERS and n not in HARNESS_SAMPLERS]
    if unknown:
        raise SystemExit(f"--samplers: unknown {', '.join(unknown)}; known: "
                         f"{', '.join(sorted(set(SAMPLERS) | set(HARNESS_SAMPLERS)))}")
    for name in args.samplers:
        cls = SAMPLERS.get(name)
        ours = name in ("GP-UCB", "IGP-UCB", "GP-TS")
        kwargs = variant_kwargs(cls, settings) if ours else {}
        if ours and args.restart_gate is not None:
            reset = kwargs.get("reset") or Restarts()
            if not isinstance(reset, Restarts):
                raise SystemExit(f"--restart-gate is Restarts' unexplored_sd; --kwargs has reset="
                                 f"{reset!r}")
            kwargs["reset"] = dataclasses.replace(reset, unexplored_sd=args.restart_gate)
        make = ((lambda s, c=cls: c(seed=s, **kwargs)) if ours else
                (lambda s, c=cls: c(seed=s)) if cls is not None else HARNESS_SAMPLERS[name])
        regrets, cums, t0 = [], [], time.perf_counter()
        diagnoses, plateaus = [], []
        for seed in seeds:
            log: list = []
            if args.diagnose and ours:
                make = (lambda s, c=diagnosing(cls, problem, log): c(seed=s, **kwargs))
            start = []
            if args.prefix:
                base = run(problem, lambda s: GPUCBSampler(seed=s), seed, args.trials)
                if min(base) - problem.minimum <= args.stuck:
                    continue  # only GP-UCB's stuck seeds are continued
                study = optuna.create_study(sampler=GPUCBSampler(seed=seed))
                for _ in range(args.prefix):
                    trial = study.ask()
                    params = problem.suggest(trial)
                    study.tell(trial, float(problem.evaluate(params)))
                start = [(t.params, t.value) for t in study.trials]
            values = np.array(run(problem, make, seed, args.trials, start))
            regrets.append(values.min() - problem.minimum)
            if log and regrets[-1] > args.stuck:
                diagnoses.append((seed, log))
            if args.plateau and regrets[-1] > args.stuck:
                plateaus.append(f"seed {seed}: regret {regrets[-1]:.3g}, "
                                f"{int(np.sum(values == values.min()))} of {values.size} trials "
                                "at exactly that value")
            cums.append(float(np.sum(values[len(start):] - problem.minimum)))
        r = np.array(regrets)
        if r.size == 0:
            print(f"| {name} | {args.kwargs if ours else '-'} | 0 | - | - | - | - | - |")
            continue
        print(f"| {name} | {args.kwargs if ours else '-'} | {r.size} | {(r > args.stuck).sum()} | "
              f"{np.median(r):.3g} | {np.quantile(r, 0.75):.3g} | {np.mean(cums):.1f} | "
              f"{time.perf_counter() - t0:.0f} |", flush=True)
        for line in plateaus:
            print(f"  {name} {line}")
        for seed, log in diagnoses:
            report_diagnosis(problem, seed, log)


if __name__ == "__main__":
    main()
