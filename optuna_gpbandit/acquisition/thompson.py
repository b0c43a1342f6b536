"""Thompson sampling on a finite candidate set (Chowdhury & Gopalan, Algorithm 2)."""

from __future__ import annotations

import numpy as np

from optuna_gpbandit.gp.posterior import GPPosterior


def thompson_choice(
    posterior: GPPosterior, candidates: np.ndarray, scale: float, rng: np.random.Generator
) -> tuple[int, np.ndarray]:
    """Draw ``f_t ~ N(mu, scale^2 Cov)`` jointly on ``candidates``; return its argmax and the draw.

    Ties (e.g. ``scale = 0`` on a flat mean) are broken uniformly with ``rng``.
    """
    draw = posterior.sample_joint(candidates, rng, n_samples=1, cov_scale=scale)[0]
    return argmax_random_tie(draw, rng), draw


def argmax_random_tie(values: np.ndarray, rng: np.random.Generator) -> int:
    """Index of the maximum; among values within ``1e-12 (1 + |max|)`` of it, a uniform pick."""
    vmax = float(np.max(values))
    ties = np.flatnonzero(values >= vmax - 1e-12 * (1.0 + abs(vmax)))
    return int(ties[0] if ties.size == 1 else rng.choice(ties))
