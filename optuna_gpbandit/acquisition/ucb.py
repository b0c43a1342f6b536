"""Upper confidence bound ``mu(x) + width * sigma(x)`` on a GP posterior."""

from __future__ import annotations

import numpy as np

from optuna_gpbandit.gp.posterior import GPPosterior


class UCB:
    """UCB acquisition. ``width`` is ``sqrt(beta_t)`` for GP-UCB and ``beta_t`` for IGP-UCB.

    Provides batched values (for candidate screening) and value + gradient at one point (for
    L-BFGS-B polishing).
    """

    def __init__(self, posterior: GPPosterior, width: float) -> None:
        if not np.isfinite(width) or width < 0:
            raise ValueError(f"UCB width must be finite and non-negative, got {width}.")
        self.posterior = posterior
        self.width = float(width)

    def values(self, X: np.ndarray) -> np.ndarray:
        mu, var = self.posterior.mean_var(X)
        return mu + self.width * np.sqrt(var)

    def value_grad(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        mu, var, dmu, dvar = self.posterior.mean_var_grad(x)
        sd = np.sqrt(var)
        grad = dmu + (self.width * 0.5 / sd) * dvar if sd > 1e-12 else dmu
        return mu + self.width * sd, grad
