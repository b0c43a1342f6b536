#!/usr/bin/env python
"""Long-term constraints: the synthetic experiment of Shi & Eryilmaz (AISTATS 2022, appendix E.1).

Problem (spec section 7.1; Gardner et al. 2014 / ADMMBO "toy1", written as a maximisation):

* ``X = [0, 6]^2``, ``f(x) = -sin(x1) - x2`` maximised, ``g(x) = sin(x1) sin(x2) + 0.95 <= 0``
  (a feasible region of 1.8 % of the box);
* the constrained optimum is ``x* = (3 pi / 2, arcsin 0.95)``, ``f* = 1 - arcsin(0.95)
  = -0.2532359`` (printed, and checked on a 3001 x 3001 grid and by SLSQP at start-up);
* the reward is observed with N(0, 0.01) noise (sd 0.1), as in the paper. E.1.1 ("noiseless")
  reports ``g`` exactly; E.1.2 ("noisy") adds N(0, 0.01) noise to ``g`` too. Within a seed every
  method sees the same noise sequence (one value per trial number).

Everything goes through Optuna: ``study.optimize`` with ``trial.suggest_float("x1", 0, 6)`` /
``"x2"``, the objective returns the noisy reward and reports the (noisy or exact) constraint value
with ``trial.set_constraint("g", value)``. Optuna 5's ``GPSampler`` reads those values itself (its
``constraints_func`` argument is deprecated in 5.0 in favour of ``set_constraint``); the
unconstrained GP-UCB baselines ignore them.

Methods (``--methods``; default: all but the ``optional`` ones):

* ``alg2``: ``ConstrainedGPUCBSampler(constraints=LongTermConstraints("noiseless"))`` (Algorithm 2:
  ``psi = exp``, S = 20,
  ``kappa`` from 1) on E.1.1 (exact ``g``);
* ``alg3``: ``ConstrainedGPUCBSampler(constraints=LongTermConstraints("noisy"))`` (Algorithm 3:
  linear penalty,
  ``kappa_step = 0.5``, ``kappa`` from 0) on E.1.2 (noisy ``g``);
* ``feasible``: ``ConstrainedGPUCBSampler()``, the default ``FeasibleConstraints()`` (the best
  feasible trial; for comparison: it does not aim at the time average);
* ``gpucb``: ``GPUCBSampler(constraints=None)``, unconstrained, same seed / kernel / candidates;
* ``igpucb``: ``IGPUCBSampler``, unconstrained: exactly the constrained sampler without its
  constraint stage (the m = 0 case);
* ``gpsampler``: Optuna's ``GPSampler`` (constrained log-EI), E.1.1;
* ``random``: ``RandomSampler`` (reference: time-averaged violation about 0.95);
* optional: ``alg3-exact`` (Algorithm 3 on E.1.1), ``alg2-raw`` (Algorithm 2 on the raw
  constraint values, ``LongTermConstraints(scale=False)``: the paper's literal penalty), ``alg2-epoch`` (Algorithm 2 with the paper's
  literal fresh GP per epoch, ``history="epoch"``), ``gpsampler-noisy`` (GPSampler on E.1.2).

Our samplers run with the package defaults (Matern-5/2 with fitted ARD lengthscales, standardised
targets, ``B = 0.5``, fitted noise, 1024 candidates); the constrained ones get
``epoch_length = 20`` and ``n_trials_hint = T`` (so ``L = ceil(T / S)`` in ``delta / L``, as the
paper's fixed horizon). The paper does not report its lengthscale, ``B``, ``R``, ``lambda``,
``delta`` or optimiser.

Metrics (always of the noise-free ``f`` and ``g`` at the chosen points, computed with
``optuna_gpbandit.report.constraint_report``), mean ± standard error over seeds, at
``t = 20, 100, 200, 350``:

* time-averaged regret ``R_t / t = (1/t) sum_{s<=t} (f* - f(x_s))`` (can be negative: violating
  the constraint can beat ``f*``);
* time-averaged constraint violation ``V_t / t = [sum_{s<=t} g(x_s)]^+ / t`` (summed first, then
  clipped: slack cancels earlier violations);
* and at ``T``: fraction of feasible trials (all, and the last 100), simple regret of the best
  feasible trial, the final multiplier ``kappa``, seconds per run.

Output: the markdown tables to stdout (also ``results/constrained.md``), raw per-seed data to
``results/constrained.json`` and ``results/constrained.npz`` (arrays ``<method>/<name>`` of shape
``(seeds, T)``), mean curves to ``results/constrained.png`` (if matplotlib is installed), progress
to stderr. ``--report results/constrained.json`` reprints the tables of a saved run;
``--report a.json b.json --out results/constrained`` merges runs (e.g. seeds added later with
``--first-seed``) and saves the merged one.

    pip install -e ".[bench]"     # torch (+ greenlet) for GPSampler, matplotlib for the plot
    python benchmarks/bench_constrained.py                    # 10 seeds, T = 350
    python benchmarks/bench_constrained.py --quick            # ~1 minute smoke run
    python benchmarks/bench_constrained.py --methods alg2 alg3 --seeds 20
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import re
import sys
import time
import warnings
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable


from _common import LogCounter, limit_threads, threads_from_argv

# Thread pools are sized when numpy / scipy / torch load, so ``--threads`` acts before the imports.
if __name__ == "__main__":
    limit_threads(threads_from_argv(sys.argv[1:]))

import numpy as np  # noqa: E402
import optuna  # noqa: E402

from optuna_gpbandit import (  # noqa: E402
    ConstrainedGPUCBSampler,
    GPUCBSampler,
    IGPUCBSampler,
    LongTermConstraints,
    sampler_record,
)
from optuna_gpbandit.report import constraint_report  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
LOW, HIGH = 0.0, 6.0
NOISE_SD = 0.1  # N(0, 0.01): variance 0.01, the paper's reward (and E.1.2 constraint) noise
EPOCH = 20  # S, the paper's experiments
CHECKPOINTS = (20, 100, 200, 350)
F_STAR = 1.0 - math.asin(0.95)  # -0.2532358975...
X_STAR = (1.5 * math.pi, math.asin(0.95))


# ------------------------------------------------------------------------------------ problem


def f_true(x1: Any, x2: Any) -> Any:
    return -np.sin(x1) - x2


def g_true(x1: Any, x2: Any) -> Any:
    return np.sin(x1) * np.sin(x2) + 0.95


def check_optimum(n_grid: int = 3001) -> dict[str, float]:
    """``f*`` three ways: closed form, the best feasible point of a grid, SLSQP from the grid's."""
    from scipy.optimize import minimize

    u = np.linspace(LOW, HIGH, n_grid)
    X1, X2 = np.meshgrid(u, u, indexing="ij")
    F, G = f_true(X1, X2), g_true(X1, X2)
    feasible = G <= 0
    i = np.argmax(np.where(feasible, F, -np.inf))
    x0 = np.array([X1.flat[i], X2.flat[i]])
    res = minimize(lambda x: -f_true(*x), x0, method="SLSQP", bounds=[(LOW, HIGH)] * 2,
                   constraints=[{"type": "ineq", "fun": lambda x: -g_true(*x)}],
                   options={"ftol": 1e-14, "maxiter": 500})
    return {
        "closed_form": F_STAR,
        "grid": float(F.flat[i]),
        "grid_x1": float(x0[0]), "grid_x2": float(x0[1]),
        "slsqp": float(-res.fun), "slsqp_x1": float(res.x[0]), "slsqp_x2": float(res.x[1]),
        "slsqp_g": float(g_true(*res.x)),
        "feasible_fraction": float(feasible.mean()),
        "mean_g_uniform": float(G.mean()),
    }


# ------------------------------------------------------------------------------------ methods


@dataclass(frozen=True)
class Method:
    label: str
    noisy_g: bool  # E.1.2 (constraint observed with noise) instead of E.1.1
    make: Callable[[int, int, argparse.Namespace], optuna.samplers.BaseSampler]
    default: bool = True


def _constrained(variant: str, **kw: Any):
    def make(seed: int, T: int, args: argparse.Namespace) -> optuna.samplers.BaseSampler:
        return ConstrainedGPUCBSampler(
            seed=seed, constraints=LongTermConstraints(
                variant, epoch_length=args.epoch_length, n_trials_hint=T, **kw))
    return make


METHODS: dict[str, Method] = {
    "alg2": Method("Alg. 2 (noiseless g)", False, _constrained("noiseless")),
    "alg3": Method("Alg. 3 (noisy g)", True, _constrained("noisy")),
    "feasible": Method("Default (FeasibleConstraints())", False,
                       lambda s, T, a: ConstrainedGPUCBSampler(seed=s)),
    "gpucb": Method("GP-UCB, unconstrained", False,
                    lambda s, T, a: GPUCBSampler(seed=s, constraints=None)),
    "igpucb": Method("IGP-UCB, unconstrained", False,
                     lambda s, T, a: IGPUCBSampler(seed=s, constraints=None)),
    "gpsampler": Method("Optuna GPSampler (constrained)", False,
                        lambda s, T, a: optuna.samplers.GPSampler(seed=s)),
    "random": Method("Random", False, lambda s, T, a: optuna.samplers.RandomSampler(seed=s)),
    # optional
    "alg3-exact": Method("Alg. 3 (exact g)", False, _constrained("noisy"), False),
    "alg2-raw": Method("Alg. 2, raw constraint values (scale=False)", False,
                       lambda s, T, a: ConstrainedGPUCBSampler(
                           seed=s, constraints=LongTermConstraints(
                               "noiseless", epoch_length=a.epoch_length, n_trials_hint=T,
                               scale=False)), False),
    "alg2-epoch": Method("Alg. 2, fresh GP per epoch", False,
                         _constrained("noiseless", history="epoch"), False),
    "gpsampler-noisy": Method("Optuna GPSampler (noisy g)", True,
                              lambda s, T, a: optuna.samplers.GPSampler(seed=s), False),
}


# ------------------------------------------------------------------------------------ harness


LOG = LogCounter(r"[0-9.]+")


def noise(seed: int, T: int) -> tuple[np.ndarray, np.ndarray]:
    """Reward and constraint noise of a seed, one value per trial number (shared by methods)."""
    eps_f = NOISE_SD * np.random.default_rng([seed, 1]).standard_normal(T)
    eps_g = NOISE_SD * np.random.default_rng([seed, 2]).standard_normal(T)
    return eps_f, eps_g


def run_one(method: str, seed: int, T: int, args: argparse.Namespace) -> dict:
    spec = METHODS[method]
    eps_f, eps_g = noise(seed, T)

    def objective(trial: optuna.Trial) -> float:
        x1 = trial.suggest_float("x1", LOW, HIGH)
        x2 = trial.suggest_float("x2", LOW, HIGH)
        n = trial.number
        trial.set_constraint("g", float(g_true(x1, x2) + (eps_g[n] if spec.noisy_g else 0.0)))
        return float(f_true(x1, x2) + eps_f[n])

    study = optuna.create_study(direction="maximize", sampler=spec.make(seed, T, args))
    logged_before = LOG.messages.copy()
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        study.optimize(objective, n_trials=T)
    seconds = time.perf_counter() - t0
    trials = sorted(study.get_trials(deepcopy=False), key=lambda t: t.number)
    assert len(trials) == T and all(t.state == optuna.trial.TrialState.COMPLETE for t in trials)
    rep = constraint_report(
        study, F_STAR,
        objective=lambda p: f_true(p["x1"], p["x2"]),
        constraints=lambda p: [g_true(p["x1"], p["x2"])],
        names=["g"],
    )
    kappa = np.full(T, np.nan)  # multiplier in force when each trial was sampled
    for t in trials:
        rec = sampler_record(t)
        if rec is not None and rec.get("multipliers") and rec["multipliers"]["kappa"]:
            kappa[t.number] = rec["multipliers"]["kappa"][0]
    durations = np.array([t.duration.total_seconds() for t in trials])
    w_counts = Counter(f"{w.category.__name__}: {re.sub(r'[0-9.]+', 'N', str(w.message))}"
                       for w in caught)
    return {
        "seed": seed,
        "x1": [t.params["x1"] for t in trials],
        "x2": [t.params["x2"] for t in trials],
        "f": rep.values.tolist(),
        "g": rep.constraints[:, 0].tolist(),
        "g_observed": [t.constraints["g"] for t in trials],
        "y_observed": [t.value for t in trials],
        "average_regret": rep.average_regret.tolist(),
        "average_violation": rep.average_violation.tolist(),
        "kappa": [None if math.isnan(k) else k for k in kappa],
        "trial_seconds": durations.tolist(),
        "seconds": seconds,
        "warnings": dict(w_counts),
        "logged": dict(LOG.messages - logged_before),
    }


# ------------------------------------------------------------------------------------ report


def mean_se(values: Any) -> tuple[float, float]:
    a = np.asarray(values, dtype=float)
    a = a[np.isfinite(a)]
    if a.size == 0:
        return float("nan"), float("nan")
    se = float(a.std(ddof=1) / math.sqrt(a.size)) if a.size > 1 else float("nan")
    return float(a.mean()), se


def fmt(ms: tuple[float, float], digits: int = 3) -> str:
    m, s = ms
    if math.isnan(m):
        return "–"
    return f"{m:.{digits}f} ± {s:.{digits}f}" if not math.isnan(s) else f"{m:.{digits}f}"


def checkpoints(T: int) -> list[int]:
    cps = [c for c in CHECKPOINTS if c < T] + [T]
    return sorted(set(cps))


def summarise(results: dict[str, list[dict]], T: int) -> list[dict]:
    rows = []
    for name, runs in results.items():
        if not runs:
            continue
        reg = np.array([r["average_regret"] for r in runs])
        cv = np.array([r["average_violation"] for r in runs])
        g = np.array([r["g"] for r in runs])
        f = np.array([r["f"] for r in runs])
        feas = g <= 0
        best_feasible = np.where(feas, f, -np.inf).max(axis=1)
        simple = np.where(np.isfinite(best_feasible), F_STAR - best_feasible, np.nan)
        last = min(100, T)
        kappa_end = [r["kappa"][-1] for r in runs if r["kappa"][-1] is not None]
        rows.append({
            "method": name, "label": METHODS[name].label,
            "g_obs": "noisy" if METHODS[name].noisy_g else "exact", "n_seeds": len(runs),
            "regret": {t: mean_se(reg[:, t - 1]) for t in checkpoints(T)},
            "violation": {t: mean_se(cv[:, t - 1]) for t in checkpoints(T)},
            "feasible": mean_se(feas.mean(axis=1)),
            "feasible_last": mean_se(feas[:, -last:].mean(axis=1)),
            "n_no_feasible": int(np.sum(~np.isfinite(best_feasible))),
            "simple_median": (float(np.nanmedian(simple)) if np.isfinite(simple).any()
                              else float("nan")),
            "simple": mean_se(simple),
            "kappa": mean_se(kappa_end) if kappa_end else (float("nan"), float("nan")),
            "seconds": mean_se([r["seconds"] for r in runs]),
            "s_per_trial": float(np.mean([r["seconds"] for r in runs]) / T),
        })
    return rows


def tables(rows: list[dict], T: int) -> str:
    cps = checkpoints(T)
    out = ["| method | g observed | seeds | metric | " + " | ".join(f"t = {c}" for c in cps)
           + " | s / run |",
           "|---|---|---:|---|" + "---:|" * len(cps) + "---:|"]
    for r in rows:
        for key, label in (("regret", "avg regret R_t/t"), ("violation", "avg violation V_t/t")):
            out.append(
                f"| {r['label']} | {r['g_obs']} | {r['n_seeds']} | {label} | "
                + " | ".join(fmt(r[key][c]) for c in cps)
                + f" | {fmt(r['seconds'], 1) if key == 'regret' else ''} |")
    out += ["", f"At T = {T}:", "",
            f"| method | feasible trials | feasible, last {min(100, T)} | best feasible: simple "
            "regret (median; mean ± s.e.) | seeds without a feasible trial | final kappa | "
            "s / trial |",
            "|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        simple = ("–" if math.isnan(r["simple_median"])
                  else f"{r['simple_median']:.4f} ({fmt(r['simple'], 4)})")
        out.append(
            f"| {r['label']} | {fmt(r['feasible'], 3)} | {fmt(r['feasible_last'], 3)} | {simple} "
            f"| {r['n_no_feasible']}/{r['n_seeds']} | {fmt(r['kappa'], 2)} "
            f"| {r['s_per_trial']:.3f} |")
    return "\n".join(out)


def plot(results: dict[str, list[dict]], T: int, path: str) -> str | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.4))
    t = np.arange(1, T + 1)
    for name, runs in results.items():
        if not runs:
            continue
        for ax, key in zip(axes, ("average_regret", "average_violation")):
            a = np.array([r[key] for r in runs])
            mean = a.mean(axis=0)
            se = a.std(axis=0, ddof=1) / math.sqrt(len(a)) if len(a) > 1 else 0 * mean
            ax.plot(t, mean, label=f"{METHODS[name].label} ({len(runs)} seeds)")
            ax.fill_between(t, mean - se, mean + se, alpha=0.15)
    axes[0].axhline(0.0, color="k", lw=0.6)
    axes[0].set_ylabel("time-averaged regret  R_t / t")
    axes[1].set_ylabel("time-averaged violation  [sum g]^+ / t")
    axes[0].set_ylim(-1.5, 3.5)
    axes[1].set_ylim(0.0, 1.2)
    for ax in axes:
        ax.set_xlabel("t (trials)")
        ax.grid(alpha=0.3)
    axes[1].legend(fontsize=8)
    fig.suptitle(f"Shi & Eryilmaz E.1 (f = -sin x1 - x2, g = sin x1 sin x2 + 0.95), "
                 f"mean ± s.e. over seeds; f* = {F_STAR:.6f}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def save_npz(results: dict[str, list[dict]], path: str) -> None:
    arrays = {}
    for name, runs in results.items():
        if not runs:
            continue
        for key in ("x1", "x2", "f", "g", "g_observed", "y_observed", "average_regret",
                    "average_violation", "kappa", "trial_seconds"):
            arrays[f"{name}/{key}"] = np.array(
                [[np.nan if v is None else v for v in r[key]] for r in runs], dtype=float)
        arrays[f"{name}/seeds"] = np.array([r["seed"] for r in runs])
        arrays[f"{name}/seconds"] = np.array([r["seconds"] for r in runs])
    np.savez_compressed(path, **arrays)


def save_all(config: dict, results: dict[str, list[dict]], out_base: str) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(out_base)), exist_ok=True)
    with open(out_base + ".json", "w") as fh:
        json.dump({"config": config, "summary": _jsonable(summarise(results, config["T"])),
                   "results": results}, fh)
    save_npz(results, out_base + ".npz")


def load_runs(paths: list[str]) -> tuple[dict, dict[str, list[dict]]]:
    """Saved runs merged by method; a (method, seed) already loaded is not taken again."""
    config: dict | None = None
    results: dict[str, list[dict]] = {}
    for path in paths:
        with open(path) as fh:
            saved = json.load(fh)
        if config is None:
            config = dict(saved["config"], merged_from=[])
        elif saved["config"]["T"] != config["T"]:
            raise SystemExit(f"{path}: T = {saved['config']['T']}, not {config['T']}.")
        config["merged_from"].append({"path": path, **{k: saved["config"].get(k) for k in (
            "seeds", "first_seed", "methods", "elapsed_seconds", "load_start", "load_end")}})
        for name, runs in saved["results"].items():
            have = {r["seed"] for r in results.setdefault(name, [])}
            results[name] += [r for r in runs if r["seed"] not in have]
    assert config is not None
    for runs in results.values():
        runs.sort(key=lambda r: r["seed"])
    config["methods"] = {k: METHODS[k].label for k in results}
    return config, results


def report(config: dict, results: dict[str, list[dict]], out_base: str | None) -> None:
    T = config["T"]
    rows = summarise(results, T)
    opt = config["optimum"]
    head = (f"Shi & Eryilmaz E.1 through Optuna: T = {T}, S = {config['epoch_length']}, reward "
            f"noise sd {NOISE_SD} (g noise sd {NOISE_SD} where 'noisy'); f* = {F_STAR:.7f} at "
            f"x* = ({X_STAR[0]:.6f}, {X_STAR[1]:.6f}) (grid {opt['grid']:.7f}, SLSQP "
            f"{opt['slsqp']:.7f}); mean ± s.e. over seeds; metrics of the noise-free f and g.")
    n_max = max((len(runs) for runs in results.values()), default=0)
    gp_runs = [r for k, runs in results.items() if k.startswith("gpsampler") for r in runs]
    n_gp = max((len(runs) for k, runs in results.items() if k.startswith("gpsampler")), default=0)
    if 0 < n_gp < n_max:
        head += (f" GPSampler ran on {n_gp} of the {n_max} seeds only (slow: "
                 f"{np.mean([r['seconds'] for r in gp_runs]):.0f} s per run).")
    text = tables(rows, T)
    print("\n" + head + "\n")
    print(text)
    warned: Counter[tuple[str, str]] = Counter()
    for name, runs in results.items():
        for r in runs:
            for msg, n in {**r["warnings"], **r["logged"]}.items():
                warned[(name, msg)] += n
    notes = [f"* warning ({name}, {n}x): {' '.join(msg.split())[:300]}"
             for (name, msg), n in warned.items()]
    if notes:
        print()
        print("\n".join(notes))
    if out_base is not None:
        with open(out_base + ".md", "w") as fh:
            fh.write(head + "\n\n" + text + "\n")
            if notes:
                fh.write("\n" + "\n".join(notes) + "\n")
        png = plot(results, T, out_base + ".png")
        print(f"plot: {png}" if png else "no plot (matplotlib is not installed)", file=sys.stderr)


# ------------------------------------------------------------------------------------ main


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", "-T", type=int, default=None,
                    help="T trials per run (default 350; 100 with --quick)")
    ap.add_argument("--seeds", type=int, default=None,
                    help="seeds 0..N-1 (default 10; 2 with --quick)")
    ap.add_argument("--methods", nargs="+", default=None, choices=list(METHODS),
                    help="default: " + " ".join(k for k, v in METHODS.items() if v.default))
    ap.add_argument("--gpsampler-seeds", type=int, default=None,
                    help="run GPSampler methods on the first N seeds only (it is slow)")
    ap.add_argument("--epoch-length", type=int, default=EPOCH, help="S (default 20)")
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: 2 seeds, T = 100, GPSampler on 1 seed (about a minute)")
    ap.add_argument("--threads", type=int, default=1,
                    help="BLAS / OpenMP threads (default 1; 0 = the libraries' defaults)")
    ap.add_argument("--out", default=None,
                    help="results base path (default benchmarks/results/constrained[_quick])")
    ap.add_argument("--no-plot", action="store_true")
    ap.add_argument("--first-seed", type=int, default=0,
                    help="seeds first..first+N-1 (default 0), e.g. to add seeds to a saved run")
    ap.add_argument("--report", metavar="JSON", nargs="+",
                    help="only reprint the tables of saved runs; several files (same T) are "
                         "merged by method and seed, and with --out the merged run is saved")
    args = ap.parse_args()
    if args.report:
        config, results = load_runs(args.report)
        if args.out:
            save_all(config, results, args.out)
        base = args.out or os.path.splitext(args.report[0])[0]
        report(config, results, None if args.no_plot else base)
        return
    n_seeds = args.seeds if args.seeds is not None else (2 if args.quick else 10)
    T = args.trials if args.trials is not None else (100 if args.quick else 350)
    gp_seeds = args.gpsampler_seeds if args.gpsampler_seeds is not None else (
        1 if args.quick else n_seeds)
    methods = args.methods or [k for k, v in METHODS.items() if v.default]
    out_base = args.out or os.path.join(
        HERE, "results", "constrained_quick" if args.quick else "constrained")
    os.makedirs(os.path.dirname(os.path.abspath(out_base)), exist_ok=True)

    LOG.install()

    opt = check_optimum()
    print(f"# f* = {F_STAR:.10f} at x* = ({X_STAR[0]:.6f}, {X_STAR[1]:.6f}); grid 3001^2: "
          f"{opt['grid']:.7f} at ({opt['grid_x1']:.4f}, {opt['grid_x2']:.4f}); SLSQP: "
          f"{opt['slsqp']:.10f} at ({opt['slsqp_x1']:.6f}, {opt['slsqp_x2']:.6f}), g = "
          f"{opt['slsqp_g']:.1e}; feasible fraction {opt['feasible_fraction']:.4f}, mean g "
          f"{opt['mean_g_uniform']:.4f}", file=sys.stderr, flush=True)
    config = {
        "T": T, "seeds": n_seeds, "first_seed": args.first_seed, "gpsampler_seeds": gp_seeds,
        "epoch_length": args.epoch_length,
        "methods": {k: METHODS[k].label for k in methods}, "noise_sd": NOISE_SD,
        "f_star": F_STAR, "x_star": X_STAR, "optimum": opt, "threads": args.threads,
        "python": platform.python_version(), "optuna": optuna.__version__,
        "numpy": np.__version__, "machine": platform.machine(), "cpus": os.cpu_count(),
        "load_start": os.getloadavg()[0],
    }
    print(f"# bench_constrained: {n_seeds} seeds x T={T}, methods {methods} (GPSampler on "
          f"{min(gp_seeds, n_seeds)} seeds), threads={args.threads}, load "
          f"{os.getloadavg()[0]:.2f}", file=sys.stderr, flush=True)
    results: dict[str, list[dict]] = {k: [] for k in methods}
    t_start = time.perf_counter()
    for seed in range(args.first_seed, args.first_seed + n_seeds):
        for name in methods:
            if name.startswith("gpsampler") and seed >= args.first_seed + gp_seeds:
                continue
            r = run_one(name, seed, T, args)
            results[name].append(r)
            k = r["kappa"][-1]
            print(f"# seed {seed} {name:15s} regret/t {r['average_regret'][-1]:7.3f} "
                  f"CV/t {r['average_violation'][-1]:.3f} feasible "
                  f"{np.mean(np.array(r['g']) <= 0):.2f} kappa "
                  f"{'-' if k is None else f'{k:.3g}'} {r['seconds']:6.1f} s "
                  f"(load {os.getloadavg()[0]:.1f}, {time.perf_counter() - t_start:.0f} s total)",
                  file=sys.stderr, flush=True)
        with open(out_base + ".json", "w") as fh:  # checkpoint after every seed
            json.dump({"config": config, "results": results}, fh)
    config["elapsed_seconds"] = time.perf_counter() - t_start
    config["load_end"] = os.getloadavg()[0]
    save_all(config, results, out_base)
    report(config, results, None if args.no_plot else out_base)
    print(f"raw results: {out_base}.json / .npz; {config['elapsed_seconds']:.0f} s",
          file=sys.stderr)


def _jsonable(v: Any) -> Any:
    """Summary rows as strict JSON (NaN -> null, checkpoint keys as strings)."""
    if isinstance(v, dict):
        return {str(k): _jsonable(u) for k, u in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(u) for u in v]
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v

if __name__ == "__main__":
    main()
