"""The re-implementation against Bayesmark itself: definitions and losses.

Run it where ``bayesmark`` 0.0.8 imports (the environment of ``../shared/bayesmark/setup.sh``; it
needs numpy, scikit-learn and bayesmark only, not Optuna), from the repository root::

    $BM_VENV/bin/python -m benchmarks.bayesmark.check                # all problems, 2 x 2 cases
    $BM_VENV/bin/python -m benchmarks.bayesmark.check --models DT kNN --n 5 --seeds 0 1 2
    $BM_VENV/bin/python -m benchmarks.bayesmark.check --write benchmarks/bayesmark/reference.json

It checks the grid (families, data sets and their tasks, metrics) and, per problem, that the
tables of ``definitions.py`` equal Bayesmark's definitions: the estimator's class and fixed
arguments, and ``definitions.api_config`` against the package's ``api_config`` dict (equal, and
with the same parameter order and number types: equal ``repr``); then, for ``--n``
configurations drawn by Bayesmark's own random search (``random_search.suggest_dict``) and each
seed in ``--seeds``, that :func:`definitions.cv_loss` equals ``SklearnModel(model, data, metric,
shuffle_seed=seed).evaluate(config)[0]``, NumPy's global generator seeded with
:func:`definitions.rng_seed` before Bayesmark's call as it is inside ``cv_loss``. Equal means
equal to 1e-12 (relative; measured: exactly equal). The patched families (``lasso``, ``linear``)
can only be compared where Bayesmark runs them unpatched (scikit-learn < 1.2: a second
environment, README.md): on the binary and regression problems they are exactly equal too
(relative differences <= 3e-16); on the multiclass ones (digits, iris, wine) liblinear solves the
same binary problems but not bit for bit (the old ``multi_class="ovr"`` fitted all classes in one
liblinear call, on the rows grouped by class, with one random seed for the coordinate order; the
wrapper makes one call per class, each with its own seed), so the losses agree to the solver's
tolerance: measured relative differences up to 3.7e-3 (lasso, whose own loss moves by up to
4.9e-3 when Bayesmark is re-run with another global seed) and 1.7e-4 (linear), the accuracy by at
most one sample of 1437. They are held to ``RTOL_PATCHED`` = 5e-3.

``--write FILE`` stores Bayesmark's losses of the cases in FILE, under the installed
scikit-learn's version (other versions' blocks are kept), so that :func:`replay` (and
``tests/test_bayesmark_suite.py``) can compare the re-implementation with them in the project's
own environment, without Bayesmark. Exit status 1 if any case or definition differs.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

import numpy as np

from . import definitions as D

HERE = os.path.dirname(os.path.abspath(__file__))
REFERENCE = os.path.join(HERE, "reference.json")
RTOL = 1e-12
RTOL_PATCHED = 5e-3


def _versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for dist in ("bayesmark", "scikit-learn", "numpy", "scipy"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = None
    return out


def sklearn_minor(v: str | None = None) -> str:
    """``"1.9"`` of ``"1.9.1"`` (losses may change between scikit-learn minor versions)."""
    if v is None:
        import sklearn

        v = sklearn.__version__
    return ".".join(v.split(".")[:2])


def tolerance(name: str) -> float:
    return RTOL_PATCHED if D.parse_name(name)[0] in D.PATCHED else RTOL


def close(a: float, b: float, rtol: float) -> bool:
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= rtol * max(1.0, abs(a), abs(b))


# --------------------------------------------------------------------------- against bayesmark
def grid_errors() -> list[str]:
    """Differences between the suite's grid and Bayesmark's: the families (in order), the data
    sets and their tasks (Bayesmark's without boston), the metrics of each task."""
    from bayesmark import constants, data
    from bayesmark import sklearn_funcs as sf

    errors = []
    for what, theirs in (("families", tuple(constants.MODEL_NAMES)),
                         ("classifiers", tuple(sf.MODELS_CLF)),
                         ("regressors", tuple(sf.MODELS_REG))):
        if sorted(theirs) != sorted(D.FAMILIES) or (what == "families" and theirs != D.FAMILIES):
            errors.append(f"{what}: {theirs} != {D.FAMILIES}")
    tasks = {name: kind.name for name, (_, kind) in data.DATA_LOADERS.items() if name != "boston"}
    if tasks != D.DATASETS:
        errors.append(f"data sets {tasks} != {D.DATASETS}")
    metrics = {"clf": tuple(constants.SCORERS_CLF), "reg": tuple(constants.SCORERS_REG)}
    if metrics != D.METRICS:
        errors.append(f"metrics {metrics} != {D.METRICS}")
    return errors


def definition_errors(name: str) -> list[str]:
    """Differences between the problem's definition here (``definitions.py``'s tables) and
    Bayesmark's."""
    from bayesmark import sklearn_funcs as sf

    model, dataset, _ = D.parse_name(name)
    task = D.task_of(dataset)
    ours = D.ESTIMATORS[model, task]
    space = D.api_config(model, dataset)
    cls, fixed, cfg = (sf.MODELS_CLF if task == "clf" else sf.MODELS_REG)[model]
    errors = []
    if cls.__name__ != ours.cls:
        errors.append(f"class {cls.__name__} != {ours.cls}")
    if fixed != ours.fixed:
        errors.append(f"fixed params {fixed} != {ours.fixed}")
    if cfg != space:
        errors.append(f"api_config {cfg} != {space}")
    elif repr(cfg) != repr(space):
        errors.append(f"api_config order or number types: {cfg!r} != {space!r}")
    return errors


_SKLEARN_MODELS: dict[tuple, object] = {}


def bayesmark_loss(name: str, seed: int, config: dict) -> float | str:
    """Bayesmark's CV loss (the global generator seeded as in ``cv_loss``); inf if its
    ``evaluate`` raises (its experiment loop's rule), or the error text if it cannot even build
    the problem's model here (the patched families under scikit-learn >= 1.2)."""
    import warnings

    from bayesmark.sklearn_funcs import SklearnModel

    model, dataset, metric = D.parse_name(name)
    key = (model, dataset, metric, seed)
    if key not in _SKLEARN_MODELS:
        _SKLEARN_MODELS[key] = SklearnModel(model, dataset, metric, shuffle_seed=seed)
    prob = _SKLEARN_MODELS[key]
    state = np.random.get_state()
    np.random.seed(D.rng_seed(name, seed, config))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return float(prob.evaluate(dict(config))[0])
    except TypeError as e:  # a removed scikit-learn argument: Bayesmark cannot run it here
        return f"{type(e).__name__}: {e}"
    except Exception:  # noqa: BLE001
        return math.inf
    finally:
        np.random.set_state(state)


def bayesmark_configs(name: str, n: int, k: int = 0) -> list[dict]:
    """``n`` configurations from Bayesmark's random search (``RandomState(k)``), as plain
    Python values."""
    from bayesmark import random_search

    model, dataset, _ = D.parse_name(name)
    xs = random_search.suggest_dict([], [], D.api_config(model, dataset), n_suggestions=n,
                                    random=np.random.RandomState(k))
    return [{p: D._plain(v) for p, v in x.items()} for x in xs]


def run_check(names: list[str], n: int, seeds: list[int], stream=sys.stdout) -> tuple[list, int]:
    """(cases, number of failures); prints one line per problem."""
    cases, failures = [], 0
    print(f"versions: {_versions()}", file=stream)
    grid = grid_errors()
    failures += len(grid)
    print("grid (families, data sets, metrics): "
          + ("equal" if not grid else "**differs**: " + "; ".join(grid)), file=stream)
    print("| problem | definition | cases | max rel. difference | Bayesmark s | ours s |",
          file=stream)
    print("|---|---|---:|---:|---:|---:|", file=stream, flush=True)
    for name in names:
        errs = definition_errors(name)
        failures += bool(errs)
        worst, t_bm, t_ours, n_cases, note = 0.0, 0.0, 0.0, 0, ""
        for seed in seeds:
            for config in bayesmark_configs(name, n, k=seed):
                t0 = time.process_time()
                bm = bayesmark_loss(name, seed, config)
                t1 = time.process_time()
                if isinstance(bm, str):
                    note = f"Bayesmark cannot run it here ({bm[:60]})"
                    continue
                ours = D.cv_loss(*D.parse_name(name), seed, config)
                t2 = time.process_time()
                t_bm += t1 - t0
                t_ours += t2 - t1
                n_cases += 1
                cases.append({"problem": name, "seed": seed, "config": config, "loss": bm,
                              "ours": ours})
                ok = close(bm, ours, tolerance(name))
                failures += not ok
                if math.isinf(bm) or math.isinf(ours):
                    rel = 0.0 if bm == ours else math.inf
                else:
                    rel = abs(bm - ours) / max(1.0, abs(bm))
                worst = max(worst, rel)
        k = max(n_cases, 1)
        status = "equal" if not errs else "**differs**: " + "; ".join(errs)
        print(f"| {name} | {status} | {n_cases} | "
              + (f"{worst:.1e}" if n_cases else note)
              + f" | {t_bm / k:.3f} | {t_ours / k:.3f} |", file=stream, flush=True)
    return cases, failures


def write_reference(path: str, cases: list[dict]) -> None:
    """Store Bayesmark's losses under this scikit-learn's minor version (other blocks kept)."""
    data = json.load(open(path)) if os.path.exists(path) else {"blocks": {}}
    data["about"] = ("Bayesmark 0.0.8's own CV losses (SklearnModel(...).evaluate(config)[0], "
                     "NumPy's global generator seeded with definitions.rng_seed) at configurations "
                     "of its random search; written by python -m benchmarks.bayesmark.check "
                     "--write; one block per scikit-learn minor version.")
    data["blocks"][sklearn_minor()] = {
        "versions": _versions(), "written": time.strftime("%Y-%m-%d %H:%M"),
        "cases": [{k: c[k] for k in ("problem", "seed", "config", "loss")} for c in cases]}
    with open(path, "w") as fh:
        json.dump(data, fh, indent=0, sort_keys=True)
        fh.write("\n")


# --------------------------------------------------------------------------- without bayesmark
def reference_block(path: str = REFERENCE, version: str | None = None) -> dict | None:
    """The reference block of this scikit-learn's minor version (``None`` if there is none)."""
    if not os.path.exists(path):
        return None
    return json.load(open(path))["blocks"].get(version or sklearn_minor())


def replay(cases: list[dict]) -> list[tuple[dict, float, bool]]:
    """(case, our loss, equal within the tolerance) for stored cases."""
    out = []
    for c in cases:
        ours = D.cv_loss(*D.parse_name(c["problem"]), c["seed"], c["config"])
        out.append((c, ours, close(c["loss"], ours, tolerance(c["problem"]))))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.bayesmark.check",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", nargs="+", default=list(D.FAMILIES), metavar="MODEL")
    ap.add_argument("--problems", nargs="+", metavar="NAME", help="instead of --models")
    ap.add_argument("--n", type=int, default=2, help="configurations per problem and seed")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    ap.add_argument("--write", metavar="FILE", help="store Bayesmark's losses (reference.json)")
    ap.add_argument("--replay", action="store_true",
                    help="no Bayesmark: compare with the stored reference losses instead")
    args = ap.parse_args(argv)
    names = args.problems or [p for p in D.PROBLEM_NAMES if D.parse_name(p)[0] in args.models]
    bad = [p for p in names if p not in D.PROBLEM_NAMES]
    if bad:
        raise SystemExit(f"unknown problem(s): {', '.join(bad)}")
    if args.replay:
        block = reference_block()
        if block is None:
            raise SystemExit(f"no reference block for scikit-learn {sklearn_minor()} in "
                             f"{REFERENCE}")
        res = replay([c for c in block["cases"] if c["problem"] in names])
        n_bad = sum(not ok for _, _, ok in res)
        for c, ours, ok in res:
            if not ok:
                print(f"DIFFERS {c['problem']} seed {c['seed']} {c['config']}: Bayesmark "
                      f"{c['loss']!r}, ours {ours!r}")
        print(f"{len(res) - n_bad} equal, {n_bad} differ (reference: scikit-learn "
              f"{block['versions']['scikit-learn']})")
        return 1 if n_bad else 0
    cases, failures = run_check(names, args.n, args.seeds)
    if args.write:
        write_reference(args.write, cases)
        print(f"wrote {len(cases)} cases to {args.write}")
    print(f"{failures} difference(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
