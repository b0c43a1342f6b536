"""Random scalarisations for multi-objective studies (Paria, Kandasamy & Poczos, UAI 2019).

Each trial draws a weight vector ``lambda`` uniformly from the simplex and maximises a
scalarisation of the objectives' own acquisitions (upper confidence bounds, or Thompson
draws), all oriented for maximisation and standardised:

* Chebyshev (default): ``s(u) = min_i lambda_i (u_i - z_i)``, with ``z_i`` the lowest observed
  (standardised) value of objective ``i``; every Pareto-optimal point maximises it for some
  ``lambda``, also on a non-convex front;
* linear: ``s(u) = sum_i lambda_i u_i``; reaches only the convex hull of the front.

Both are monotone in every ``u_i``, so a scalarised upper confidence bound is an upper
confidence bound of the scalarised objective, and the paper's Bayes regret bound for the
expected scalarised regret carries over from the single-objective GP-UCB / GP-TS analyses.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

SCALARIZATIONS = ("chebyshev", "linear")


def check_scalarization(name: str) -> str:
    if name not in SCALARIZATIONS:
        raise ValueError(f"scalarization must be one of {SCALARIZATIONS}, got {name!r}.")
    return name


def draw_weights(k: int, rng: np.random.Generator) -> np.ndarray:
    """A weight vector uniform on the ``k``-simplex (``Dirichlet(1, ..., 1)``)."""
    w = rng.exponential(1.0, k)
    return w / w.sum()


class Scalarized:
    """``s(acq_1(x), ..., acq_k(x))`` as one acquisition (``values`` and ``value_grad``).

    Parameters
    ----------
    parts
        One acquisition per objective (each with ``values(X)`` and ``value_grad(x)``).
    weights
        ``lambda``, non-negative, one per objective.
    kind
        ``"chebyshev"`` or ``"linear"``.
    reference
        ``z`` (Chebyshev only): one value per objective, in the parts' units.
    """

    def __init__(self, parts: Sequence[Any], weights: np.ndarray, kind: str = "chebyshev",
                 reference: np.ndarray | None = None) -> None:
        self.parts = list(parts)
        self.weights = np.asarray(weights, dtype=float)
        self.kind = check_scalarization(kind)
        k = len(self.parts)
        if self.weights.shape != (k,) or np.any(self.weights < 0):
            raise ValueError("weights must be non-negative, one per objective.")
        self.reference = np.zeros(k) if reference is None else np.asarray(reference, float)

    def values(self, X: np.ndarray) -> np.ndarray:
        U = np.stack([p.values(X) for p in self.parts])  # (k, m)
        if self.kind == "linear":
            return self.weights @ U
        return np.min(self.weights[:, None] * (U - self.reference[:, None]), axis=0)

    def value_grad(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        vals, grads = zip(*(p.value_grad(x) for p in self.parts))
        v = np.asarray(vals, dtype=float)
        if self.kind == "linear":
            return float(self.weights @ v), sum(w * g for w, g in zip(self.weights, grads))
        terms = self.weights * (v - self.reference)
        i = int(np.argmin(terms))  # the active term (a subgradient where two tie)
        return float(terms[i]), self.weights[i] * np.asarray(grads[i])
