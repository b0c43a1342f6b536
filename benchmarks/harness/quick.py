"""The harness's own suites: ``quick``, ``grid`` and ``smoke`` (test functions and two
scikit-learn tasks of ``problems.py``), and their own report sections: the median simple regret
per problem, the issue-era quality targets against GPSampler and TPE, the mean rank, and the
regret and suggestion-time plots.

``quick`` = every problem but the grids x every sampler, 10 seeds x 100 trials; ``grid`` = the
three enumerable grids (every parameter an int or a categorical, at most 512 points) x every
sampler, 20 seeds x 40 trials; ``smoke`` = branin and mixed, 2 seeds x 15 trials (< 1 min).
Scored against the result set's Random runs (``scoring.py``, ``random-runs``).

Regret. For problems with a known minimum ``f*`` the regret of a value ``y`` is ``y - f*``
(clipped at 0). For the scikit-learn tasks (``minimum`` null) ``f*`` is the best value found by
any run of that problem in the result set, so their regrets are relative to the best
cross-validated error rate seen, and they change if runs are added.

* simple regret after ``t`` trials: ``min_{s <= t} y_s - f*``; the tables give it at ``T``
  (median over seeds, with the interquartile range);
* cumulative regret: ``sum_t (y_t - f*)`` over all ``T`` trials (mean ± standard error);
* s / suggestion: wall time of ``study.ask()`` + the ``suggest_*`` calls, mean over the trials
  and runs; wall s / run: the whole run including the objective, mean over runs.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

import numpy as np

from .problems import GRIDS, PROBLEMS
from .samplers import OURS
from .suite import Scoring, Suite, fixed_budgets

TARGET_VS_GP = 0.6  # ours no worse than GPSampler on >= 60 % of the problems
TARGET_VS_TPE = 0.8  # ours better than TPE on >= 80 % of the problems
GP, TPE = "GPSampler", "TPE"
SAMPLER_LIST = ["GP-UCB", "IGP-UCB", "GP-TS", "GPSampler", "TPE", "Random", "GP-UCB-stationary",
                "GP-TS-stationary"]
"""The samplers the quick, grid and smoke suites run by default (the harness's registry before
the peers joined it)."""


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


def _order(names: set[str], preferred: list[str]) -> list[str]:
    return [n for n in preferred if n in names] + sorted(names - set(preferred))


def summarize(runs: list[dict]) -> dict[str, ProblemResult]:
    problems = _order({r["problem"] for r in runs}, list(PROBLEMS))
    samplers = _order({r["sampler"] for r in runs}, SAMPLER_LIST)
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
    samplers = _order(set().union(*(pr.cells for pr in results.values())), SAMPLER_LIST)
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


def sections(data) -> list[str]:
    """The quick suite's own sections: mean ranks, quality targets, per-problem regret tables,
    the plots (beside the report)."""
    results = summarize(data.runs)
    head = ["## Simple regret", "", "Simple regret: best value so far - f*; cumulative regret: "
            "sum of (value - f*) over the T trials; s / suggestion: `ask()` + `suggest_*` (not "
            "the objective); bold: the best median. Timings are wall-clock and grow with the "
            "machine's load.", ""]
    parts = ["\n".join(head), ranks(results), targets(results), "## Per problem\n"]
    parts += [problem_table(pr) + "\n" for pr in results.values()]
    made = plot(results, data.dirs[0])
    if made:
        parts.append("Plots: " + ", ".join(f"`{os.path.basename(p)}`" for p in made) + "\n")
    return "\n".join(p for p in parts if p).split("\n")


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
    samplers = _order(set().union(*(pr.cells for pr in results.values())), SAMPLER_LIST)
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


def _suite(name: str, problems: list[str], seeds: int, trials: int) -> Suite:
    return Suite(
        name=name, title=f"Harness suite `{name}`: test functions and scikit-learn tasks",
        halves={"all": problems}, problem=lambda n, seed: PROBLEMS[n],
        budget=lambda n: trials, scoring=Scoring("random-runs", fixed_budgets(trials)),
        seeds=seeds, samplers=tuple(SAMPLER_LIST),
        modules=("sklearn.svm", "sklearn.model_selection", "sklearn.pipeline",
                 "sklearn.preprocessing", "sklearn.datasets"),
        sections=sections, describe=lambda n: PROBLEMS[n].description,
        notes="The harness's own problems (`benchmarks/harness/problems.py`); the quality "
              "targets below are issue 12's.")


QUICK = _suite("quick", [p for p in PROBLEMS if p not in GRIDS], 10, 100)
GRID = _suite("grid", list(GRIDS), 20, 40)
SMOKE = _suite("smoke", ["branin", "mixed"], 2, 15)
