#!/usr/bin/env python
"""Non-stationary objectives: Avanesov's GP-UCB-CPD experiment E1 (regret against horizon).

Problem (the paper's section 4, spec ``change_detection.md`` section 6, experiment E1):

* ``K = 3`` stationary periods of equal length ``T / 3``; period ``k`` plays ``f_k``, an
  independent draw from ``GP(0, k0)``, ``k0`` = Matern-5/2 with lengthscale 1 and unit variance
  on ``[0, 5]`` (a fresh draw per period). ``T`` in {900, 1275, 1650, 2025, 2400}.
* Domain: the draws are made on a grid of 1001 evenly spaced points of ``[0, 5]`` (spacing
  0.005; the paper uses 1000 points) and Optuna sees exactly that grid,
  ``trial.suggest_float("x", 0.0, 5.0, step=0.005)``: the arms are the grid points, ``f`` is
  read at the grid index (no interpolation), and our samplers (``n_candidates=1024``, the
  default of ``AcquisitionSearch``) enumerate
  all 1001 arms, as the paper's arg-max over its grid does. The draw uses the eigendecomposition
  of the (numerically singular) kernel matrix with round-off negative eigenvalues set to zero.
* Observation noise N(0, 0.05^2); the noisy value is told, regret uses the noiseless ``f``:
  dynamic regret ``R_T = sum_t (max f_{k(t)} - f_{k(t)}(x_t))``.
* Every run goes through Optuna's ask/tell on an in-memory study, maximised.

Common random numbers: repetition ``r`` uses the same three functions (``f_k`` seeded by
``(r, k)``), the same noise sequence (seeded by ``r``) and the sampler seed ``r`` for every
``T`` and every method, so differences between methods and between horizons are not draw noise.

Methods (``--methods``):

* ``cpd`` -- ``GPUCBCPDSampler(seed=r, search=AcquisitionSearch(n_candidates=1024))``, everything
  else at the package's defaults (fitted Matern-5/2 GP for the UCB step,
  ``beta=Theorem1(early_factor=1.0)``, scale 0.05; detector ``xi = sqrt(3)``,
  ``theta_0 = 4`` on standardised targets, ``c = 1``, lengthscale 0.2 in unit coordinates = 1 on
  [0, 5]). The subject of the experiment: every ``T``, every repetition.
* ``cpd-paper`` (optional, every ``T``) -- the paper's own settings: fixed kernel (lengthscale
  0.2 in unit coordinates, amplitude 1, noise variance 0.0025), raw targets, ``beta_t' = 0.02
  t'^(2/7) log(T)^4`` on the segment length ``t'``, detector on raw targets with ``theta_0 = 2.6``.
* ``oracle`` -- the same sampler with the detector switched off (``CPDSettings(threshold=inf)``)
  on a fresh study at each true change point: GP-UCB-Oracle, a lower reference.
* ``no-detector`` -- the detector switched off on one study (GP-UCB-NO-Detector): the cost of the
  uniform exploration without its benefit.
* ``gpucb`` -- plain ``GPUCBSampler(seed=r, search=AcquisitionSearch(n_candidates=1024))``, no
  change detection.
* ``gpsampler`` -- Optuna's ``GPSampler(seed=r)`` (logEI), no change detection.

Only ``cpd`` / ``cpd-paper`` run at every horizon. The others run at ``--baseline-T`` only
(default ``T = 900``): the baselines without resets refit a GP on the whole history at every
step (O(n^3); GPSampler's torch fit took 630 s for one ``T = 900`` run on the loaded 2-core
machine, against 27 s for ``cpd``), and the references are not part of the fit. GPSampler also
runs fewer repetitions (``--gpsampler-reps``, default 1). The table says how many runs each cell
has.

Cost of ``cpd`` itself (measured on the loaded 2-core machine, load 5-9): 27 s at ``T = 900``,
176 s at ``T = 2400``, about 470 s for one repetition of all five horizons. The time per trial
grows linearly with the number of stored trials (the change-point replay re-reads every trial),
so a run costs O(T^2). The default (4 repetitions, the references at ``T = 900``, one GPSampler
run) was chosen to take about 45 minutes; it took 51 minutes while other jobs kept the load of
the 2 cores at 3-9 (GPSampler alone 883 s).

Per ``(method, T)``: mean +- standard error of ``R_T`` over repetitions, the mean number of
detected change points, false alarms (detections before the first change, or more than one in
a period), the mean detection delay after each true change (first detection in the period
that follows it; a change with no detection before the next change / the end is "missed" and
not in the mean), and seconds per run. The exponent: least squares ``log R_T = log C + c log
T`` over all ``(T, repetition)`` points of ``cpd`` with a t-based 95% CI (conservative here:
common random numbers make the points of one repetition positively correlated, which the slope
does not feel but the residual variance does), a bootstrap CI that resamples whole
repetitions (2000 resamples, percentile), and for reference the fit over the per-``T`` means.
The paper: ``c = 0.74``, 95% CI (0.64, 0.84), curve ``1.86 T^0.74``.

Outputs in ``benchmarks/results/`` (``--out``): ``cpd.md`` (the table, also on stdout),
``cpd.json`` (config, summary, per-run numbers; checkpointed after every run), ``cpd.npz``
(per-step instantaneous regret and played arms of every run), ``cpd.png`` (``R_T`` against ``T``,
log-log, with the fit; if matplotlib is installed). ``--quick`` writes ``cpd_quick.*``.
Progress goes to stderr. ``--report results/cpd.json`` reprints a saved run.

    pip install -e ".[bench]"
    python benchmarks/bench_cpd.py --quick                  # ~1 min smoke run
    nice -n 10 python benchmarks/bench_cpd.py               # the measured run (see docs/change-detection.md)
    python benchmarks/bench_cpd.py --reps 2 --T 900 --methods cpd cpd-paper oracle no-detector gpucb
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
import warnings
from collections import Counter
from typing import Any

from _common import LogCounter, limit_threads

# Runs are sequential and small: one BLAS / OpenMP thread (set before numpy / torch load).
if __name__ == "__main__":
    limit_threads("1", override=False)

import numpy as np  # noqa: E402
import optuna  # noqa: E402
from optuna.storages import InMemoryStorage  # noqa: E402

from optuna_gpbandit import (  # noqa: E402
    AcquisitionSearch,
    ChangeDetection,
    CPDSettings,
    GPUCBCPDSampler,
    GPUCBSampler,
)

HERE = os.path.dirname(os.path.abspath(__file__))
LOW, HIGH, STEP = 0.0, 5.0, 0.005
N_GRID = int(round((HIGH - LOW) / STEP)) + 1  # 1001
LENGTHSCALE = 1.0  # on [0, 5]
NOISE_SD = 0.05
K_PERIODS = 3
T_LIST = (900, 1275, 1650, 2025, 2400)
PAPER_C, PAPER_CI, PAPER_CONST = 0.74, (0.64, 0.84), 1.86
GRID = np.linspace(LOW, HIGH, N_GRID)
SEARCH = AcquisitionSearch(n_candidates=1024)  # enumerates the 1001 arms

# ------------------------------------------------------------------------------------ problem

_FACTOR: np.ndarray | None = None


def _matern52_factor() -> np.ndarray:
    """``A`` with ``A A^T = K`` for the Matern-5/2 kernel matrix on the grid (eigh, clipped)."""
    global _FACTOR
    if _FACTOR is None:
        s = math.sqrt(5.0) * np.abs(GRID[:, None] - GRID[None, :]) / LENGTHSCALE
        K = (1.0 + s + s * s / 3.0) * np.exp(-s)
        w, V = np.linalg.eigh(K)
        _FACTOR = V * np.sqrt(np.clip(w, 0.0, None))
    return _FACTOR


def draw_function(rep: int, k: int) -> np.ndarray:
    """``f_k`` of repetition ``rep`` on the grid: a unit-variance GP draw (not normalised)."""
    z = np.random.default_rng([rep, 1, k]).standard_normal(N_GRID)
    return _matern52_factor() @ z


def make_problem(rep: int, T: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(functions ``(K, N_GRID)``, period start steps ``(K,)``, noise ``(T,)``)."""
    fs = np.stack([draw_function(rep, k) for k in range(K_PERIODS)])
    starts = np.array([k * T // K_PERIODS for k in range(K_PERIODS)])
    noise = NOISE_SD * np.random.default_rng([rep, 2]).standard_normal(T)
    return fs, starts, noise


# ------------------------------------------------------------------------------------ methods


def _cpd(rep: int, T: int) -> optuna.samplers.BaseSampler:
    return GPUCBCPDSampler(seed=rep, search=SEARCH)


def _cpd_avanesov(rep: int, T: int) -> optuna.samplers.BaseSampler:
    return GPUCBCPDSampler(seed=rep, search=SEARCH, reset=ChangeDetection.avanesov(),
                           n_startup_trials=1)


def _cpd_paper(rep: int, T: int) -> optuna.samplers.BaseSampler:
    return GPUCBCPDSampler.paper(T, noise_var=NOISE_SD**2, seed=rep, search=SEARCH)


def _no_detector(rep: int, T: int) -> optuna.samplers.BaseSampler:
    return GPUCBCPDSampler(seed=rep, search=SEARCH, n_startup_trials=1,
                           reset=ChangeDetection.avanesov(CPDSettings(threshold=math.inf)))


def _gpucb(rep: int, T: int) -> optuna.samplers.BaseSampler:
    return GPUCBSampler(seed=rep, search=SEARCH)


METHODS: dict[str, dict[str, Any]] = {
    # "all_T": runs at every --T; otherwise only at --baseline-T (the whole-history baselines are
    # O(n^3) per step; the oracles / no-detector are references, not the subject of the fit).
    "cpd": {"label": "GPUCBCPDSampler (defaults: residual test)", "make": _cpd,
            "default": True, "all_T": True},
    "cpd-avanesov": {"label": "GPUCBCPDSampler(reset=ChangeDetection.avanesov())",
                     "make": _cpd_avanesov,
                     "default": True, "all_T": True},
    "cpd-paper": {"label": "GP-UCB-CPD, paper settings (GPUCBCPDSampler.paper)",
                  "make": _cpd_paper, "default": False, "all_T": True},
    "oracle": {"label": "Oracle: GPUCBSampler restarted at the true changes", "make": _gpucb,
               "default": True, "oracle": True},
    "oracle-avanesov": {"label": "GP-UCB-Oracle (avanesov, theta = inf, reset at the changes)",
                        "make": _no_detector, "default": False, "oracle": True},
    "no-detector": {"label": "GP-UCB-NO-Detector (avanesov, theta = inf)",
                    "make": _no_detector, "default": False},
    "gpucb": {"label": "GPUCBSampler (no change detection)", "make": _gpucb, "default": True},
    "gpsampler": {"label": "Optuna GPSampler (no change detection)",
                  "make": lambda rep, T: optuna.samplers.GPSampler(seed=rep),
                  "default": False},
}


# ------------------------------------------------------------------------------------ harness


LOG = LogCounter()


def detection_stats(change_points: list[int], starts: np.ndarray, T: int) -> dict[str, Any]:
    """Delays after each true change, missed changes and false alarms of one run."""
    bounds = list(starts[1:]) + [T]
    delays: list[int | None] = []
    for k in range(1, len(starts)):
        hits = [c for c in change_points if starts[k] <= c < bounds[k]]
        delays.append(int(hits[0] - starts[k]) if hits else None)
    # false alarms: detections before the first change, and every detection of a period
    # after its first one
    false = sum(1 for c in change_points if c < starts[1])
    for k in range(1, len(starts)):
        false += max(0, sum(1 for c in change_points if starts[k] <= c < bounds[k]) - 1)
    return {"delays": delays, "missed": sum(d is None for d in delays), "false_alarms": int(false)}


def run_one(method: str, rep: int, T: int, progress: bool = False) -> dict[str, Any]:
    spec = METHODS[method]
    fs, starts, noise = make_problem(rep, T)
    fmax = fs.max(axis=1)
    period = np.searchsorted(starts, np.arange(T), side="right") - 1
    played = np.empty(T, dtype=int)
    ask_s = np.empty(T)
    offsets: list[int] = []  # oracle: trial number offset of each fresh study
    logged_before = LOG.messages.copy()
    study = sampler = None
    change_points: list[int] = []
    t_start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        for t in range(T):
            if study is None or (spec.get("oracle") and t in starts[1:]):
                if study is not None and sampler is not None and hasattr(sampler, "change_points"):
                    change_points += [offsets[-1] + c for c in sampler.change_points(study)]
                sampler = spec["make"](rep, T)
                study = optuna.create_study(direction="maximize", sampler=sampler,
                                            storage=InMemoryStorage())
                offsets.append(t)
            t0 = time.perf_counter()
            trial = study.ask()
            x = trial.suggest_float("x", LOW, HIGH, step=STEP)
            ask_s[t] = time.perf_counter() - t0
            i = int(round((x - LOW) / STEP))
            played[t] = i
            study.tell(trial, float(fs[period[t], i] + noise[t]))
            if progress and (t + 1) % 300 == 0:
                print(f"#   {method} rep {rep} T {T}: step {t + 1}, "
                      f"{time.perf_counter() - t_start:.0f} s", file=sys.stderr, flush=True)
    if hasattr(sampler, "change_points") and not spec.get("oracle"):
        change_points = list(sampler.change_points(study))
    inst = fmax[period] - fs[period, played]
    out = {
        "method": method, "rep": rep, "T": T,
        "regret": float(inst.sum()),
        "regret_per_period": [float(inst[period == k].sum()) for k in range(K_PERIODS)],
        "change_points": [int(c) for c in change_points],
        **detection_stats(change_points if not spec.get("oracle") else [], starts, T),
        "seconds": time.perf_counter() - t_start,
        "ask_seconds_mean": float(ask_s.mean()),
        "ask_seconds_last100": float(ask_s[-100:].mean()),
        "logged": dict(LOG.messages - logged_before),
    }
    out["_inst"] = inst
    out["_played"] = played
    return out


# ------------------------------------------------------------------------------------ statistics


def mean_se(values: Any) -> tuple[float, float]:
    a = np.asarray(values, dtype=float)
    if a.size == 0:
        return float("nan"), float("nan")
    se = float(a.std(ddof=1) / math.sqrt(a.size)) if a.size > 1 else float("nan")
    return float(a.mean()), se


def fit_exponent(Ts: np.ndarray, R: np.ndarray) -> dict[str, float]:
    """OLS of log R on log T: slope, intercept and the t-based 95% CI of the slope."""
    from scipy import stats

    x, y = np.log(np.asarray(Ts, float)), np.log(np.asarray(R, float))
    n = x.size
    X = np.column_stack([np.ones(n), x])
    coef, *_ = np.linalg.lstsq(X, y, rcond=None)
    out = {"c": float(coef[1]), "C": float(math.exp(coef[0])), "n": int(n),
           "lo": float("nan"), "hi": float("nan"), "se": float("nan")}
    if n > 2 and np.ptp(x) > 0:
        resid = y - X @ coef
        s2 = float(resid @ resid) / (n - 2)
        se = math.sqrt(s2 / float(((x - x.mean()) ** 2).sum()))
        q = float(stats.t.ppf(0.975, n - 2))
        out.update(se=se, lo=coef[1] - q * se, hi=coef[1] + q * se)
    return out


def bootstrap_exponent(R_by_rep: np.ndarray, Ts: np.ndarray, n_boot: int = 2000,
                       seed: int = 0) -> tuple[float, float]:
    """Percentile 95% CI of the slope, resampling whole repetitions (rows of ``R_by_rep``)."""
    reps = R_by_rep.shape[0]
    if reps < 2:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    x = np.log(np.asarray(Ts, float))
    xc = x - x.mean()
    slopes = np.empty(n_boot)
    for b in range(n_boot):
        rows = R_by_rep[rng.integers(0, reps, reps)]
        y = np.log(rows).mean(axis=0)  # same design per rep: the pooled OLS slope
        slopes[b] = float(xc @ (y - y.mean()) / (xc @ xc))
    lo, hi = np.percentile(slopes, [2.5, 97.5])
    return float(lo), float(hi)


def summarise(runs: list[dict]) -> list[dict]:
    rows = []
    keys = sorted({(r["method"], r["T"]) for r in runs},
                  key=lambda k: (list(METHODS).index(k[0]), k[1]))
    for method, T in keys:
        rs = sorted((r for r in runs if r["method"] == method and r["T"] == T),
                    key=lambda r: r["rep"])
        n_changes = K_PERIODS - 1
        delays = [[r["delays"][k] for r in rs if r["delays"][k] is not None]
                  for k in range(n_changes)]
        rows.append({
            "method": method, "T": T, "n": len(rs),
            "regret": mean_se([r["regret"] for r in rs]),
            "regret_per_period": [float(np.mean([r["regret_per_period"][k] for r in rs]))
                                  for k in range(K_PERIODS)],
            "n_detections": float(np.mean([len(r["change_points"]) for r in rs])),
            "false_alarms": float(np.mean([r["false_alarms"] for r in rs])),
            "missed": int(sum(r["missed"] for r in rs)),
            "delays": [mean_se(d) for d in delays],
            "delay_median": [float(np.median(d)) if d else float("nan") for d in delays],
            "seconds": float(np.mean([r["seconds"] for r in rs])),
            "ask_last100": float(np.mean([r["ask_seconds_last100"] for r in rs])),
            "detects": method in ("cpd", "cpd-avanesov", "cpd-paper"),
        })
    return rows


def _f(ms: tuple[float, float], digits: int = 1) -> str:
    m, s = ms
    if math.isnan(m):
        return "–"
    if math.isnan(s):
        return f"{m:.{digits}f}"
    return f"{m:.{digits}f} ± {s:.{digits}f}"


def table(rows: list[dict]) -> str:
    out = ["| method | T | runs | dynamic regret R_T | R_T / T | detections | false alarms "
           "| delay after change 1 (med) | delay after change 2 (med) | missed | s / run |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        det = r["detects"]
        delays = [f"{_f(d, 0)} ({m:.0f})" if det and not math.isnan(d[0]) else "–"
                  for d, m in zip(r["delays"], r["delay_median"])]
        out.append(
            f"| {METHODS[r['method']]['label']} | {r['T']} | {r['n']} | {_f(r['regret'])} "
            f"| {r['regret'][0] / r['T']:.3f} "
            f"| {r['n_detections']:.2f} | {r['false_alarms']:.2f} | {delays[0]} | {delays[1]} "
            f"| {r['missed'] if det else '–'}/{r['n'] * (K_PERIODS - 1) if det else '–'} "
            f"| {r['seconds']:.0f} |")
    return "\n".join(out)


def exponent_text(runs: list[dict], method: str = "cpd") -> tuple[str, dict | None]:
    rs = [r for r in runs if r["method"] == method]
    Ts = sorted({r["T"] for r in rs})
    if len(Ts) < 2:
        return f"(exponent: {method} ran at fewer than two horizons)", None
    pooled = fit_exponent(np.array([r["T"] for r in rs]), np.array([r["regret"] for r in rs]))
    means = np.array([np.mean([r["regret"] for r in rs if r["T"] == T]) for T in Ts])
    on_means = fit_exponent(np.array(Ts), means)
    reps = sorted({r["rep"] for r in rs})
    done = {(r["rep"], r["T"]) for r in rs}
    full = [rep for rep in reps if all((rep, T) in done for T in Ts)]
    grid = np.array([[next(r["regret"] for r in rs if r["rep"] == rep and r["T"] == T) for T in Ts]
                     for rep in full])
    b_lo, b_hi = bootstrap_exponent(grid, np.array(Ts)) if len(full) > 1 else (math.nan, math.nan)
    fit = {"pooled": pooled, "means": on_means, "bootstrap": [b_lo, b_hi], "T": Ts,
           "reps_complete": len(full)}
    text = (
        f"Fit log R_T = log C + c log T for {METHODS[method]['label']} over all "
        f"{pooled['n']} (T, rep) points: **c = {pooled['c']:.3f}**, 95% CI "
        f"({pooled['lo']:.3f}, {pooled['hi']:.3f}) (t-based, se {pooled['se']:.3f}); "
        f"bootstrap over "
        f"{len(full)} repetitions ({b_lo:.3f}, {b_hi:.3f}); C = {pooled['C']:.2f}. Over the "
        f"per-T means: c = {on_means['c']:.3f} ({on_means['lo']:.3f}, {on_means['hi']:.3f}), "
        f"C = {on_means['C']:.2f}. Paper: c = {PAPER_C} ({PAPER_CI[0]}, {PAPER_CI[1]}), "
        f"R_T = {PAPER_CONST} T^{PAPER_C}; theory 11/14 = {11 / 14:.3f}."
    )
    return text, fit


def plot(runs: list[dict], fits: dict[str, dict], path: str) -> str | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError:
        return None
    fig, ax = plt.subplots(figsize=(6.4, 4.6))
    all_T = sorted({r["T"] for r in runs})
    Tline = np.geomspace(0.95 * all_T[0], 1.05 * all_T[-1], 50)
    for i, method in enumerate(m for m in METHODS if any(r["method"] == m for r in runs)):
        rs = [r for r in runs if r["method"] == method]
        Ts = sorted({r["T"] for r in rs})
        color = f"C{i}"
        pts = np.array([(r["T"], r["regret"]) for r in rs])
        ax.scatter(pts[:, 0], pts[:, 1], s=8, alpha=0.35, color=color)
        ms = [mean_se([r["regret"] for r in rs if r["T"] == T]) for T in Ts]
        ax.errorbar(Ts, [m for m, _ in ms], yerr=[0 if math.isnan(s) else s for _, s in ms],
                    fmt="o", color=color, capsize=3, label=METHODS[method]["label"])
        fit = fits.get(method)
        if fit is not None:
            p = fit["pooled"]
            ax.plot(Tline, p["C"] * Tline ** p["c"], color=color,
                    label=f"fit {p['C']:.2f} T^{p['c']:.2f} (95% CI {p['lo']:.2f}-{p['hi']:.2f})")
    ax.plot(Tline, PAPER_CONST * Tline ** PAPER_C, "k--", lw=1,
            label=f"paper {PAPER_CONST} T^{PAPER_C}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(all_T, [str(T) for T in all_T])
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_xlabel("horizon T (K = 3 periods)")
    ax.set_ylabel("dynamic regret R_T")
    ax.set_title("GP-UCB-CPD, Matern-5/2 draws (l = 1 on [0, 5]), noise 0.05")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def report(config: dict, runs: list[dict], stem: str | None) -> tuple[str, dict]:
    rows = summarise(runs)
    lines = [
        f"Matern-5/2 GP draws (l = {LENGTHSCALE} on [0, 5], {N_GRID}-point grid), K = {K_PERIODS} "
        f"evenly spaced periods, noise sd {NOISE_SD}; mean ± s.e. over repetitions; delays in "
        "trials after the true change (mean ± s.e. over detected changes, median in brackets); "
        f"runs = repetitions in the cell. {config.get('note', '')}".rstrip(),
        "",
        table(rows),
        "",
    ]
    fits = {}
    for method in ("cpd", "cpd-avanesov", "cpd-paper"):
        if any(r["method"] == method for r in runs):
            text, fit = exponent_text(runs, method)
            lines.append(f"* {text}")
            if fit is not None:
                fits[method] = fit
    warned: Counter[tuple[str, str]] = Counter()
    for r in runs:
        for msg, n in r["logged"].items():
            warned[(r["method"], msg)] += n
    for (name, msg), n in warned.items():
        lines.append(f"* logged ({name}, {n}x): {' '.join(msg.split())}")
    if "elapsed_seconds" in config:
        lines.append(f"* wall time {config['elapsed_seconds']:.0f} s, load average "
                     f"{config.get('load_start', float('nan')):.2f} at the start, "
                     f"{config.get('load_end', float('nan')):.2f} at the end.")
    text = "\n".join(lines)
    if stem is not None:
        with open(stem + ".md", "w") as fh:
            fh.write(text + "\n")
        png = plot(runs, fits, stem + ".png")
        print(f"plot: {png}" if png else "no plot (matplotlib is not installed)", file=sys.stderr)
    return text, fits


# ------------------------------------------------------------------------------------ main


def plan(args: argparse.Namespace) -> list[tuple[str, int, int]]:
    """(method, T, rep) in run order: repetition-major, so a cut run has whole repetitions."""
    tasks = []
    for rep in range(args.reps):
        for method in args.methods:
            if method == "gpsampler" and rep >= args.gpsampler_reps:
                continue
            all_T = METHODS[method].get("all_T") or not args.baseline_T
            tasks += [(method, T, rep) for T in args.T if all_T or T in args.baseline_T]
    return tasks


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.splitlines()[1:]))
    ap.add_argument("--reps", type=int, default=None,
                    help="repetitions 0..N-1 (default 4; 2 with --quick)")
    ap.add_argument("--T", type=int, nargs="+", default=None,
                    help=f"horizons (default {' '.join(map(str, T_LIST))}; "
                         "150 300 450 with --quick)")
    ap.add_argument("--methods", nargs="+", choices=list(METHODS), default=None,
                    help="default: " + " ".join(k for k, v in METHODS.items() if v["default"]))
    ap.add_argument("--baseline-T", type=int, nargs="*", default=None,
                    help="horizons of every method but cpd / cpd-paper (default 900; the "
                         "smallest T with --quick; empty = all)")
    ap.add_argument("--gpsampler-reps", type=int, default=None,
                    help="repetitions of gpsampler (default 1)")
    ap.add_argument("--quick", action="store_true", help="smoke run: T = 150 300 450, 2 reps")
    ap.add_argument("--out", default=os.path.join(HERE, "results"), help="output directory")
    ap.add_argument("--name", default=None, help="file stem (default cpd, cpd_quick)")
    ap.add_argument("--progress", action="store_true", help="a progress line every 300 steps")
    ap.add_argument("--report", metavar="JSON", help="reprint the table / plot of a saved run")
    args = ap.parse_args()

    LOG.install()

    if args.report:
        with open(args.report) as fh:
            saved = json.load(fh)
        text, _ = report(saved["config"], saved["runs"], os.path.splitext(args.report)[0])
        print(text)
        return

    args.reps = args.reps if args.reps is not None else (2 if args.quick else 4)
    args.T = args.T or ([150, 300, 450] if args.quick else list(T_LIST))
    args.methods = args.methods or [k for k, v in METHODS.items() if v["default"]]
    if args.baseline_T is None:
        args.baseline_T = [min(args.T)] if args.quick else [900]
    if args.gpsampler_reps is None:
        args.gpsampler_reps = 1
    stem = os.path.join(args.out, args.name or ("cpd_quick" if args.quick else "cpd"))
    os.makedirs(args.out, exist_ok=True)
    tasks = plan(args)
    config = {
        "reps": args.reps, "T": args.T, "methods": args.methods, "baseline_T": args.baseline_T,
"gpsampler_reps": args.gpsampler_reps,
        "K": K_PERIODS, "n_grid": N_GRID, "step": STEP, "lengthscale": LENGTHSCALE,
        "noise_sd": NOISE_SD, "python": platform.python_version(), "optuna": optuna.__version__,
        "numpy": np.__version__, "cpus": os.cpu_count(), "load_start": os.getloadavg()[0],
        "threads": os.environ.get("OPENBLAS_NUM_THREADS"),
    }
    print(f"# bench_cpd: {len(tasks)} runs, reps {args.reps}, T {args.T}, methods {args.methods}, "
          f"baselines at T {args.baseline_T or 'all'}, load {config['load_start']:.2f}",
          file=sys.stderr, flush=True)
    runs: list[dict] = []
    arrays: dict[str, np.ndarray] = {}
    t_start = time.perf_counter()
    for j, (method, T, rep) in enumerate(tasks):
        r = run_one(method, rep, T, progress=args.progress)
        key = f"{method}_T{T}_rep{rep}"
        arrays[f"inst_{key}"] = r.pop("_inst")
        arrays[f"played_{key}"] = r.pop("_played")
        runs.append(r)
        print(f"# [{j + 1}/{len(tasks)}] {method:11s} T={T:4d} rep {rep}: R_T {r['regret']:7.1f} "
              f"change points {r['change_points']} delays {r['delays']} "
              f"{r['seconds']:6.1f} s ({r['ask_seconds_last100']:.3f} s/ask at the end), "
              f"total {time.perf_counter() - t_start:.0f} s, load {os.getloadavg()[0]:.2f}",
              file=sys.stderr, flush=True)
        with open(stem + ".json", "w") as fh:  # checkpoint
            json.dump({"config": config, "runs": runs}, fh)
    config["elapsed_seconds"] = time.perf_counter() - t_start
    config["load_end"] = os.getloadavg()[0]
    np.savez_compressed(stem + ".npz", **arrays)
    text, fits = report(config, runs, stem)
    with open(stem + ".json", "w") as fh:
        json.dump({"config": config, "summary": summarise(runs), "fits": fits, "runs": runs}, fh)
    print(text)
    print(f"results: {stem}.md / .json / .npz; {config['elapsed_seconds']:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
