"""Tables, quality-target summary and plots of a result directory (``runs.jsonl``).

Regret. For problems with a known minimum ``f*`` the regret of a value ``y`` is ``y - f*``
(clipped at 0). For the scikit-learn tasks (``minimum`` null) ``f*`` is the best value found by
any run of that problem in the directory, so their regrets are relative to the best
cross-validated error rate seen, and they change if runs are added.

* simple regret after ``t`` trials: ``min_{s <= t} y_s - f*``; the tables give it at ``T``
  (median over seeds, with the interquartile range);
* cumulative regret: ``sum_t (y_t - f*)`` over all ``T`` trials (mean ± standard error);
* s / suggestion: wall time of ``study.ask()`` + the ``suggest_*`` calls, mean over the trials
  and runs; wall s / run: the whole run including the objective, mean over runs.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass

import numpy as np

from .runner import CONFIG_FILE, ERRORS_FILE, RUNS_FILE, read_jsonl
from .samplers import OURS, SAMPLERS

TARGET_VS_GP = 0.6  # ours no worse than GPSampler on >= 60 % of the problems
TARGET_VS_TPE = 0.8  # ours better than TPE on >= 80 % of the problems
GP, TPE = "GPSampler", "TPE"


@dataclass
class Cell:
    """All runs of one (problem, sampler)."""

    seeds: list[int]
    simple: np.ndarray  # (runs, T) simple regret curves
    cumulative: np.ndarray  # (runs,)
    suggest: np.ndarray  # (runs, T) seconds per suggestion
    wall: np.ndarray  # (runs,)

    @property
    def final(self) -> np.ndarray:
        return self.simple[:, -1]

    @property
    def median(self) -> float:
        return float(np.median(self.final))


@dataclass
class ProblemResult:
    name: str
    T: int
    reference: float
    known_minimum: bool
    cells: dict[str, Cell]
    dropped: int  # runs with another number of trials, left out


def load(out_dir: str) -> tuple[dict, list[dict]]:
    cfg_path = os.path.join(out_dir, CONFIG_FILE)
    config = json.load(open(cfg_path)) if os.path.exists(cfg_path) else {}
    runs = {}
    for r in read_jsonl(os.path.join(out_dir, RUNS_FILE)):
        runs[(r["problem"], r["sampler"], r["seed"], r["n_trials"])] = r  # last one wins
    return config, list(runs.values())


def _order(names: set[str], preferred: list[str]) -> list[str]:
    return [n for n in preferred if n in names] + sorted(names - set(preferred))


def summarize(runs: list[dict], config: dict | None = None) -> dict[str, ProblemResult]:
    config = config or {}
    problems = _order({r["problem"] for r in runs}, list(config.get("problems", [])))
    samplers = _order({r["sampler"] for r in runs},
                      list(config.get("samplers", [])) + list(SAMPLERS))
    out = {}
    for prob in problems:
        prs = [r for r in runs if r["problem"] == prob]
        T = max(r["n_trials"] for r in prs)
        kept = [r for r in prs if r["n_trials"] == T and len(r["values"]) == T]
        known = kept[0]["minimum"] is not None
        ref = kept[0]["minimum"] if known else min(min(r["values"]) for r in kept)
        cells = {}
        for s in samplers:
            rs = sorted((r for r in kept if r["sampler"] == s), key=lambda r: r["seed"])
            if not rs:
                continue
            y = np.array([r["values"] for r in rs], dtype=float)
            inst = np.maximum(y - ref, 0.0)
            cells[s] = Cell(
                seeds=[r["seed"] for r in rs],
                simple=np.minimum.accumulate(inst, axis=1),
                cumulative=inst.sum(axis=1),
                suggest=np.array([r["suggest_seconds"] for r in rs], dtype=float),
                wall=np.array([r["wall_seconds"] for r in rs], dtype=float),
            )
        out[prob] = ProblemResult(prob, T, float(ref), known, cells, len(prs) - len(kept))
    return out


# --------------------------------------------------------------------------- markdown
def _g(x: float) -> str:
    if x == 0:
        return "0"
    if abs(x) >= 1e4 or abs(x) < 1e-3:
        return f"{x:.2e}"
    return f"{x:.3g}"


def problem_table(pr: ProblemResult) -> str:
    best = min(c.median for c in pr.cells.values())
    if pr.known_minimum:
        ref = f"known minimum f* = {pr.reference:.10g}"
    else:
        ref = (f"f* = best value over all {sum(len(c.seeds) for c in pr.cells.values())} runs = "
               f"{pr.reference:.6g} (1 - CV accuracy; regret = error rate - f*)")
    lines = [
        f"### {pr.name}  (T = {pr.T}; {ref})",
        "",
        "| sampler | runs | simple regret at T: median [IQR] | cumulative regret: mean ± SE "
        "| s / suggestion | wall s / run |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for s, c in pr.cells.items():
        q1, q3 = np.percentile(c.final, [25, 75])
        n = len(c.seeds)
        se = float(np.std(c.cumulative, ddof=1) / math.sqrt(n)) if n > 1 else float("nan")
        med = _g(c.median)
        if c.median == best:
            med = f"**{med}**"
        lines.append(
            f"| {s} | {n} | {med} [{_g(q1)}, {_g(q3)}] | {_g(float(c.cumulative.mean()))} ± "
            f"{_g(se)} | {c.suggest.mean():.4f} | {c.wall.mean():.1f} |"
        )
    if pr.dropped:
        lines.append(f"\n({pr.dropped} runs with another number of trials left out.)")
    return "\n".join(lines)


def _mark(ok: bool | None) -> str:
    return "n/a" if ok is None else ("yes" if ok else "no")


def targets(results: dict[str, ProblemResult]) -> str:
    """The issue's quality targets on the median simple regret at T."""
    ours = [s for s in OURS if any(s in pr.cells for pr in results.values())]
    if not ours:
        return "No run of our samplers: no quality-target summary."
    lines = [
        "## Quality targets (median simple regret at T)",
        "",
        f"Target: ours no worse than {GP} (median <= {GP}'s) on >= {TARGET_VS_GP:.0%} of the "
        f"problems and better than {TPE} (median < {TPE}'s) on >= {TARGET_VS_TPE:.0%}. Ties "
        "(equal medians, common on the scikit-learn tasks, whose error rates are discrete) count "
        f"as no worse but not as better.",
        "",
        f"| sampler | no worse than {GP} | target | better than {TPE} | target |",
        "|---|---:|---|---:|---|",
    ]
    for s in ours:
        gp = [(pr.cells[s].median, pr.cells[GP].median) for pr in results.values()
              if s in pr.cells and GP in pr.cells]
        tpe = [(pr.cells[s].median, pr.cells[TPE].median) for pr in results.values()
               if s in pr.cells and TPE in pr.cells]

        def frac(n: int, of: int, ties: int, target: float) -> tuple[str, str]:
            if not of:
                return "n/a", "n/a"
            f = n / of
            tied = f"; {ties} tied" if ties else ""
            return f"{n}/{of} ({f:.0%}{tied})", "met" if f >= target else "**missed**"

        a, ta = frac(sum(m <= g for m, g in gp), len(gp), sum(m == g for m, g in gp),
                     TARGET_VS_GP)
        b, tb = frac(sum(m < t for m, t in tpe), len(tpe), sum(m == t for m, t in tpe),
                     TARGET_VS_TPE)
        lines.append(f"| {s} | {a} | {ta} | {b} | {tb} |")
    lines += ["", "Per problem (median simple regret at T; `<=GP` / `<TPE`: comparison holds):",
              ""]
    head = ["problem", GP, TPE] + [f"{s} (<=GP, <TPE)" for s in ours]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|---" * len(head) + "|")
    for pr in results.values():
        row = [pr.name]
        for ref in (GP, TPE):
            row.append(_g(pr.cells[ref].median) if ref in pr.cells else "n/a")
        for s in ours:
            if s not in pr.cells:
                row.append("n/a")
                continue
            m = pr.cells[s].median
            gp = _mark(m <= pr.cells[GP].median if GP in pr.cells else None)
            tpe = _mark(m < pr.cells[TPE].median if TPE in pr.cells else None)
            row.append(f"{_g(m)} ({gp}, {tpe})")
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


def ranks(results: dict[str, ProblemResult]) -> str:
    """Mean rank of the median simple regret at T over the problems every sampler ran."""
    samplers = _order(set().union(*(pr.cells for pr in results.values())), list(SAMPLERS))
    common = [pr for pr in results.values() if all(s in pr.cells for s in samplers)]
    if len(samplers) < 2 or not common:
        return ""
    from scipy.stats import rankdata

    R = np.array([rankdata([pr.cells[s].median for s in samplers]) for pr in common])
    wall = {s: np.mean([pr.cells[s].suggest.mean() for pr in common]) for s in samplers}
    lines = [
        f"## Overall (mean over the {len(common)} problems every sampler ran)",
        "",
        "| sampler | mean rank of median simple regret (1 = best) | problems ranked first "
        "| mean s / suggestion |",
        "|---|---:|---:|---:|",
    ]
    for i, s in sorted(enumerate(samplers), key=lambda t: R[:, t[0]].mean()):
        lines.append(f"| {s} | {R[:, i].mean():.2f} | {int(np.sum(R[:, i] == R.min(axis=1)))} "
                     f"| {wall[s]:.4f} |")
    return "\n".join(lines) + "\n"


def render(out_dir: str, plots: bool = True) -> str:
    config, runs = load(out_dir)
    if not runs:
        raise SystemExit(f"no finished run in {os.path.join(out_dir, RUNS_FILE)}")
    results = summarize(runs, config)
    n_err = len(read_jsonl(os.path.join(out_dir, ERRORS_FILE)))
    loads = [r["loadavg"] for r in runs if r.get("loadavg") is not None]
    head = [f"# Benchmark report: {os.path.basename(os.path.abspath(out_dir))}", ""]
    if config:
        head.append(
            f"Suite `{config.get('suite')}`: {len(config.get('problems', []))} problems x "
            f"{len(config.get('samplers', []))} samplers x {len(config.get('seeds', []))} seeds x "
            f"{config.get('n_trials')} trials; {len(runs)} runs finished"
            + (f", {n_err} failures logged in {ERRORS_FILE}" if n_err else "")
            + f". optuna {config.get('versions', {}).get('optuna')}, "
            f"{config.get('threads', 1)} BLAS/OpenMP thread(s) per run, "
            f"{config.get('jobs', 1)} worker(s), {config.get('cpus')} CPUs"
            + (f", 1-min load average at the end of the runs {min(loads):.1f}-{max(loads):.1f}"
               if loads else "") + "."
        )
        head.append("")
    head.append(
        "Simple regret: best value so far - f*; cumulative regret: sum of (value - f*) over the "
        "T trials; s / suggestion: `ask()` + `suggest_*` (not the objective); bold: the best "
        "median. Timings are wall-clock and grow with the machine's load."
    )
    head.append("")
    parts = ["\n".join(head), ranks(results), targets(results), "## Per problem\n"]
    parts += [problem_table(pr) + "\n" for pr in results.values()]
    if plots:
        made = plot(results, out_dir)
        if made:
            parts.append("Plots: " + ", ".join(f"`{os.path.basename(p)}`" for p in made) + "\n")
    text = "\n".join(p for p in parts if p)
    with open(os.path.join(out_dir, "report.md"), "w") as fh:
        fh.write(text)
    return text


# --------------------------------------------------------------------------- plots
def plot(results: dict[str, ProblemResult], out_dir: str) -> list[str]:
    """``regret.png`` (median simple regret with the interquartile band per problem; symlog axis
    for the problems whose f* is the best run's value) and
    ``suggest_time.png`` (median s / suggestion vs trial number, band 25-75 %, over all
    problems and seeds). Skipped, returning [], if matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    samplers = _order(set().union(*(pr.cells for pr in results.values())), list(SAMPLERS))
    colors = {s: plt.get_cmap("tab10")(i % 10) for i, s in enumerate(samplers)}
    styles = {s: ("-" if s in OURS else "--") for s in samplers}

    n = len(results)
    ncols = min(3, n)
    nrows = math.ceil(n / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(5 * ncols, 3.6 * nrows), squeeze=False)
    for ax, pr in zip(axes.flat, results.values()):
        t = np.arange(1, pr.T + 1)
        positive = [c.simple[c.simple > 0] for c in pr.cells.values()]
        positive = np.concatenate(positive) if positive else np.array([])
        floor = float(positive.min()) / 2 if positive.size else 1e-12
        for s, c in pr.cells.items():
            # known f*: log axis, 0 drawn at the floor; unknown f*: the best run has regret 0
            # exactly, so symlog (linear below the smallest positive regret, log above)
            curves = np.maximum(c.simple, floor) if pr.known_minimum else c.simple
            q1, med, q3 = np.percentile(curves, [25, 50, 75], axis=0)
            ax.plot(t, med, styles[s], color=colors[s], label=s, lw=1.5)
            ax.fill_between(t, q1, q3, color=colors[s], alpha=0.15, lw=0)
        if pr.known_minimum:
            ax.set_yscale("log")
            ax.set_ylabel("simple regret")
        else:
            ax.set_yscale("symlog", linthresh=floor * 2)
            ax.set_ylim(bottom=0)
            ax.set_ylabel("simple regret (vs best run)")
        ax.set_title(pr.name)
        ax.set_xlabel("trial")
        ax.grid(alpha=0.3, which="both")
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), frameon=False)
    fig.suptitle("Median simple regret (band: interquartile range over seeds)")
    fig.tight_layout(rect=(0, 0.05, 1, 0.97))
    regret_png = os.path.join(out_dir, "regret.png")
    fig.savefig(regret_png, dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(8.5, 4.2))
    for s in samplers:
        cells = [pr.cells[s] for pr in results.values() if s in pr.cells]
        T = min(c.suggest.shape[1] for c in cells)
        X = np.concatenate([c.suggest[:, :T] for c in cells])
        q1, med, q3 = np.percentile(np.maximum(X, 1e-6), [25, 50, 75], axis=0)
        t = np.arange(1, T + 1)
        ax.plot(t, med, styles[s], color=colors[s], label=s, lw=1.5)
        ax.fill_between(t, q1, q3, color=colors[s], alpha=0.15, lw=0)
    ax.set_yscale("log")
    ax.set_xlabel("trial")
    ax.set_ylabel("s / suggestion (ask + suggest)")
    ax.set_title("Time per suggestion: median over problems and seeds (band: IQR)")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    fig.tight_layout()
    time_png = os.path.join(out_dir, "suggest_time.png")
    fig.savefig(time_png, dpi=110)
    plt.close(fig)
    return [regret_png, time_png]
