"""Srinivas, Krause, Kakade & Seeger (ICML 2010), Fig. 5a: GP-UCB on samples from a GP.

Setting (paper section 6, spec ``gp_ucb.md`` section 7.1):

* f is a sample of GP(0, k_SE) with lengthscale 0.2 and unit variance on D = 1000 evenly spaced
  points of [0, 1] (``f = chol(K + 1e-6 I) z``, ``z ~ N(0, I)`` seeded by the draw index);
* observations ``y = f(x) + N(0, 0.025)`` (noise seed 10000 + draw, the same for every method);
* every method uses the true prior: ``model=GPModel(kernel="se", lengthscale=0.2,
  kernel_scale=1.0, noise_var=0.025, standardize=False)``;
* methods: GP-UCB with the Theorem 1 beta (delta = 0.1, |D| = 1000) divided by 5 (the paper's
  choice, ``beta=Theorem1.paper(scale=0.2)``) and unscaled (``Theorem1.paper()``: no early
  factor), EI (xi = 0), PI/MPI (xi = 0.01), mean only, variance only; the incumbent
  of EI/PI is the best posterior mean at an observed point;
* metric: mean over draws of the average regret ``R_T / T`` from the noiseless f.

The domain is a stepped float, ``suggest_float("x", 0, 1, step=1/999)``: exactly the paper's
1000-point grid, which every sampler enumerates (``AcquisitionSearch(n_candidates=1000)``) and
which gives GP-UCB's Theorem 1 beta ``|D| = 1000`` by itself. The first trial of every run is a
random grid point (our samplers' single startup trial; in the paper t = 1 is a tie between all
points).

    python benchmarks/papers/srinivas_synthetic.py --quick     # T=200, 3 draws    (~20 s)
    python benchmarks/papers/srinivas_synthetic.py --reduced   # T=1000, 5 draws   (~25 min)
    python benchmarks/papers/srinivas_synthetic.py             # the paper: T=1000, 30 draws
                                                               # (~2.3 h; ~1.2 h with --jobs 2)
"""

from __future__ import annotations

import argparse
import functools
import os
import sys

import numpy as np
from optuna.distributions import FloatDistribution

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from baselines import EISampler, MeanOnlySampler, PISampler, VarianceOnlySampler  # noqa: E402

from optuna_gpbandit import (  # noqa: E402
    AcquisitionSearch,
    GPModel,
    GPUCBSampler,
    IgnorePending,
    Theorem1,
)

N_GRID = 1000
LENGTHSCALE = 0.2
NOISE_VAR = 0.025
CHECKPOINTS = (10, 25, 50, 100, 250, 500, 1000)
# (T, draws): the default is the paper's size; "reduced" is the size of the stored results.
PRESETS = {"quick": (200, 3), "reduced": (1000, 5), "default": (1000, 30)}

COMMON = dict(model=GPModel(kernel="se", lengthscale=LENGTHSCALE, kernel_scale=1.0,
                            noise_var=NOISE_VAR, standardize=False),
              search=AcquisitionSearch(n_candidates=N_GRID), n_startup_trials=1,
              pending=IgnorePending())

METHODS = {
    "GP-UCB (beta/5)": lambda seed: GPUCBSampler(
        seed=seed, beta=Theorem1.paper(scale=0.2, delta=0.1), **COMMON),
    "GP-UCB (beta)": lambda seed: GPUCBSampler(seed=seed, beta=Theorem1.paper(delta=0.1),
                                               **COMMON),
    "EI": lambda seed: EISampler(seed=seed, xi=0.0, **COMMON),
    "PI (MPI)": lambda seed: PISampler(seed=seed, xi=0.01, **COMMON),
    "Mean only": lambda seed: MeanOnlySampler(seed=seed, **COMMON),
    "Var only": lambda seed: VarianceOnlySampler(seed=seed, **COMMON),
}

# The reference run of the spec (gp_ucb.md section 7.5; a NumPy reimplementation, 30 draws,
# T = 1000): mean R_T / T at CHECKPOINTS. Not paper numbers: the paper gives a plot only.
SPEC_REFERENCE = {
    "GP-UCB (beta/5)": (0.469, 0.215, 0.117, 0.066, 0.033, 0.020, 0.0130),
    "GP-UCB (beta)": (0.579, 0.289, 0.175, 0.108, 0.058, 0.038, 0.0241),
    "EI": (0.395, 0.180, 0.101, 0.058, 0.028, 0.018, 0.0114),
    "PI (MPI)": (0.414, 0.289, 0.233, 0.185, 0.134, 0.095, 0.0520),
    "Mean only": (0.461, 0.367, 0.333, 0.315, 0.305, 0.301, 0.2997),
    "Var only": (1.053, 1.035, 1.040, 1.039, 1.039, 1.039, 1.0386),
}


@functools.lru_cache(maxsize=1)
def _grid_cholesky() -> tuple[np.ndarray, np.ndarray]:
    grid = np.linspace(0.0, 1.0, N_GRID)
    K = np.exp(-0.5 * (grid[:, None] - grid[None, :]) ** 2 / LENGTHSCALE**2)
    return grid, np.linalg.cholesky(K + 1e-6 * np.eye(N_GRID))


def draw_function(draw: int) -> tuple[np.ndarray, np.ndarray]:
    """The grid and a GP(0, k_SE) sample on it (seed = draw index)."""
    grid, L = _grid_cholesky()
    return grid, L @ np.random.default_rng(draw).standard_normal(N_GRID)


def run_one(task: harness.Task) -> np.ndarray:
    grid, f = draw_function(task.draw)
    dist = {"x": FloatDistribution(0.0, 1.0, step=1.0 / (N_GRID - 1))}
    played = harness.run_bandit(
        METHODS[task.method](task.draw), dist, grid[:, None], f, np.sqrt(NOISE_VAR), task.T,
        noise_seed=10000 + task.draw, record_arm=False,
    )
    return f.max() - f[played]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    harness.add_common_args(ap, PRESETS)
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    args = ap.parse_args()
    harness.quiet()
    mode, T, draws = harness.resolve_mode(args)

    print(f"Srinivas et al. 2010, Fig. 5a (synthetic GP samples): mode {mode}, T = {T}, "
          f"{draws} draws (paper: T = 1000, 30 draws), {len(args.methods)} methods, "
          f"jobs = {args.jobs}", flush=True)
    stem = harness.output_name("srinivas_synthetic", args)
    tasks = [harness.Task("gp-samples", m, d, T) for d in range(draws) for m in args.methods]
    res, wall = harness.run_or_load(run_one, tasks, args, stem)

    checks = [c for c in CHECKPOINTS if c < T] + [T]
    rows, curves = [], {}
    for m in args.methods:
        r = res[("gp-samples", m)]["regret"]  # (draws, T)
        avg = np.cumsum(r, axis=1) / np.arange(1, T + 1)
        curves[m] = avg
        cells = [m]
        for c in checks:
            cells.append(harness.fmt(*harness.mean_se(avg[:, c - 1])))
        simple = np.minimum.accumulate(r, axis=1)[:, -1]
        cells.append(harness.fmt(*harness.mean_se(simple), digits=4))
        cells.append(f"{np.mean(res[('gp-samples', m)]['seconds']):.1f}")
        rows.append(cells)
    header = ["method"] + [f"R_T/T, T={c}" for c in checks] + [f"simple regret @{T}", "s / run"]
    table = harness.markdown_table(header, rows)

    ref_rows = []
    for m in args.methods:
        ours = curves[m].mean(axis=0)
        cells = [m]
        for c, ref in zip(CHECKPOINTS, SPEC_REFERENCE[m]):
            if c <= T:
                cells.append(f"{ours[c - 1]:.3f} / {ref:.3f}")
        ref_rows.append(cells)
    ref_table = harness.markdown_table(
        ["method"] + [f"T={c}" for c in CHECKPOINTS if c <= T], ref_rows)

    random_play = harness.fmt(*harness.random_play_regret(
        [{"f": draw_function(d)[1]} for d in range(draws)]))
    text = (
        f"Srinivas et al. 2010, Fig. 5a: mode {mode}, T = {T}, {draws} draws (paper: T = 1000, "
        f"30 draws).\n\n"
        f"Mean average regret R_T/T ± standard error over {draws} draws (T = {T}); simple regret "
        f"= min_t r_t at T, mean ± SE.\n\n{table}\n\n"
        f"Uniformly random grid points (no learning) would give R_T/T = max f - mean f = "
        f"{random_play} on these draws.\n\n"
        f"Ours (mean R_T/T) / the spec's NumPy reference run (30 draws, gp_ucb.md 7.5):\n\n"
        f"{ref_table}\n\nwall time {wall:.0f} s\n"
    )
    print("\n" + text)

    plt = harness.load_pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11.5, 4.4))
    ts = np.arange(1, T + 1)
    for ax, log in zip(axes, (False, True)):
        for m in args.methods:
            mean = curves[m].mean(axis=0)
            se = curves[m].std(axis=0, ddof=1) / np.sqrt(draws) if draws > 1 else 0 * mean
            (line,) = ax.plot(ts, mean, label=m)
            ax.fill_between(ts, np.maximum(mean - se, 1e-4), mean + se, color=line.get_color(),
                            alpha=0.2)
        ax.set_xlabel("iterations T")
        ax.set_ylabel("mean average regret R_T / T")
        if log:
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_title("the same, log-log")
        else:
            ax.set_ylim(0, None)
            ax.set_title(f"GP samples, SE l=0.2, |D|=1000 ({draws} draws, ±1 SE)")
    axes[0].legend()
    fig.tight_layout()
    png = os.path.join(args.out, f"{stem}.png")
    os.makedirs(args.out, exist_ok=True)
    fig.savefig(png, dpi=120)
    harness.save_text(os.path.join(args.out, f"{stem}.md"), text)
    print(f"saved {png}")


if __name__ == "__main__":
    main()
