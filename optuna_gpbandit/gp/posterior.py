"""Exact GP posterior through a Cholesky factor (Rasmussen & Williams, Alg. 2.1).

``K + noise_var * I = L L^T``; ``alpha = K^{-1} y``. The mean is ``k(x)^T alpha`` and the variance
``k(x, x) - ||L^{-1} k(x)||^2``, clipped at zero. If the factorisation fails, a jitter
``1e-10 * scale`` is added to the diagonal and multiplied by ten until it succeeds (at most
``1e-4 * scale``); beyond that :class:`NumericalError` is raised so the caller can fall back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from optuna_gpbandit.gp.kernels import Kernel

_CHUNK = 4096  # candidate rows per block in batched prediction


class NumericalError(RuntimeError):
    """The kernel matrix could not be factorised even with the largest jitter."""


@dataclass(frozen=True)
class GPParams:
    """Kernel hyperparameters in the encoded, standardised units.

    Attributes
    ----------
    kernel
        ``"matern52"`` or ``"se"``.
    lengthscales
        One lengthscale per encoded dimension.
    scale
        Kernel amplitude (prior variance of f).
    noise_var
        Observation noise variance.
    warp
        Input warping ``(a, b)`` per encoded dimension, shape ``(2, d)``
        (:mod:`optuna_gpbandit.gp.input_warp`); ``None``: none.
    """

    kernel: str
    lengthscales: np.ndarray
    scale: float
    noise_var: float
    warp: np.ndarray | None = None

    def to_json(self) -> dict:
        out = {
            "kernel": self.kernel,
            "lengthscales": [float(v) for v in self.lengthscales],
            "scale": float(self.scale),
            "noise_var": float(self.noise_var),
        }
        if self.warp is not None:
            out["warp"] = [[float(v) for v in row] for row in self.warp]
        return out

    @classmethod
    def from_json(cls, data: dict) -> GPParams:
        return cls(
            kernel=str(data["kernel"]),
            lengthscales=np.asarray(data["lengthscales"], dtype=float),
            scale=float(data["scale"]),
            noise_var=float(data["noise_var"]),
            warp=None if data.get("warp") is None else np.asarray(data["warp"], dtype=float),
        )


def jittered_cholesky(A: np.ndarray, scale: float) -> tuple[np.ndarray, float]:
    """Lower Cholesky factor of ``A``, adding diagonal jitter only if needed.

    Returns the factor and the jitter that was added (0.0 when none was).
    """
    from scipy.linalg import cholesky
    jitter = 0.0
    while True:
        try:
            Aj = A if jitter == 0.0 else A + jitter * np.eye(A.shape[0])
            return cholesky(Aj, lower=True, check_finite=False), jitter
        except np.linalg.LinAlgError:
            jitter = 1e-10 * scale if jitter == 0.0 else jitter * 10.0
            if jitter > 1e-4 * scale:
                raise NumericalError("Cholesky factorisation failed even with jitter.") from None


class GPPosterior:
    """Posterior of a zero-mean GP given data ``(X, y)`` and fixed hyperparameters.

    Parameters
    ----------
    X
        Encoded inputs, shape ``(n, d)``.
    y
        Targets, shape ``(n,)`` (already oriented for maximisation and standardised).
    params
        Kernel hyperparameters.
    is_categorical
        Mask of categorical dimensions of ``X``.
    row_noise
        Extra noise variance per row on top of ``params.noise_var`` (e.g. for imputed labels),
        shape ``(n,)``; ``None`` for none.
    prior_mean
        ``prior_mean(X) -> (n,)``: a prior mean that is constant on pieces of the space (its
        gradient is 0), e.g. one level per branch of a conditional space; ``None``: 0. The GP
        models ``y - prior_mean(X)``, and every mean it returns has ``prior_mean`` added.
    """

    def __init__(
        self, X: np.ndarray, y: np.ndarray, params: GPParams, is_categorical: np.ndarray,
        row_noise: np.ndarray | None = None,
        prior_mean: Callable[[np.ndarray], np.ndarray] | None = None,
    ) -> None:
        from scipy.linalg import solve_triangular
        X = np.asarray(X, dtype=float)
        y = np.asarray(y, dtype=float)
        if not (np.all(np.isfinite(X)) and np.all(np.isfinite(y))):
            raise ValueError("GP inputs and targets must be finite.")
        self.X, self.y, self.params = X, y, params
        self.prior_mean = prior_mean
        self.kernel = Kernel(params.kernel, params.lengthscales, params.scale, is_categorical,
                             params.warp)
        self.X_warped = self.kernel.warped(X)  # the design through the input warp, once
        K = self.kernel.of_warped(self.X_warped, self.X_warped)
        K[np.diag_indices_from(K)] += params.noise_var
        if row_noise is not None:
            row_noise = np.asarray(row_noise, dtype=float)
            if row_noise.shape != y.shape or not np.all(np.isfinite(row_noise) & (row_noise >= 0)):
                raise ValueError("row_noise must be finite, >= 0 and one value per row.")
            K[np.diag_indices_from(K)] += row_noise
        self.L, self.jitter = jittered_cholesky(K, params.scale)
        # Noise variance of each row on the factorised diagonal (jitter included).
        self.noise_diag = np.full(y.shape[0], params.noise_var + self.jitter)
        if row_noise is not None:
            self.noise_diag += row_noise
        resid = y if prior_mean is None else y - prior_mean(X)
        self.alpha = solve_triangular(
            self.L.T, solve_triangular(self.L, resid, lower=True), lower=False
        )

    def offset(self, Xc: np.ndarray) -> np.ndarray | float:
        """The prior mean at the rows of ``Xc`` (0 without one)."""
        return 0.0 if self.prior_mean is None else self.prior_mean(np.atleast_2d(Xc))

    def offset_at(self, x: np.ndarray) -> float:
        """The prior mean at the point ``x`` (0 without one)."""
        if self.prior_mean is None:
            return 0.0
        return float(self.prior_mean(np.asarray(x, dtype=float)[None, :])[0])

    @property
    def n(self) -> int:
        return self.X.shape[0]

    @property
    def effective_noise_var(self) -> float:
        """Noise variance actually on the diagonal (``noise_var`` plus any jitter)."""
        return self.params.noise_var + self.jitter

    def mean_var(self, Xc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Posterior mean and variance at the rows of ``Xc`` (batched, chunked)."""
        from scipy.linalg import solve_triangular
        Xc = np.atleast_2d(np.asarray(Xc, dtype=float))
        mu = np.empty(Xc.shape[0])
        var = np.empty(Xc.shape[0])
        for s in range(0, Xc.shape[0], _CHUNK):
            Kxc = self.kernel.of_warped(self.X_warped, self.kernel.warped(Xc[s : s + _CHUNK]))
            V = solve_triangular(self.L, Kxc, lower=True, check_finite=False)
            mu[s : s + _CHUNK] = Kxc.T @ self.alpha
            var[s : s + _CHUNK] = self.params.scale - np.einsum("ij,ij->j", V, V)
        mu += self.offset(Xc)
        return mu, np.maximum(var, 0.0)

    def mean_var_grad(self, x: np.ndarray) -> tuple[float, float, np.ndarray, np.ndarray]:
        """Mean, variance and their gradients in ``x`` at one encoded point."""
        from scipy.linalg import solve_triangular
        k, J = self.kernel.grad_x(np.asarray(x, dtype=float), self.X, self.X_warped)
        v = solve_triangular(self.L, k, lower=True, check_finite=False)
        w = solve_triangular(self.L.T, v, lower=False, check_finite=False)
        mu = float(k @ self.alpha) + self.offset_at(x)
        var = float(self.params.scale - v @ v)
        return mu, max(var, 0.0), J.T @ self.alpha, -2.0 * (J.T @ w)

    def mean_cov(self, Xc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Posterior mean vector and joint covariance matrix on the rows of ``Xc``."""
        from scipy.linalg import solve_triangular
        Xc = np.atleast_2d(np.asarray(Xc, dtype=float))
        Wc = self.kernel.warped(Xc)
        Kxc = self.kernel.of_warped(self.X_warped, Wc)
        V = solve_triangular(self.L, Kxc, lower=True, check_finite=False)
        C = self.kernel.of_warped(Wc, Wc) - V.T @ V
        return Kxc.T @ self.alpha + self.offset(Xc), 0.5 * (C + C.T)

    def covariance(self, Xc: np.ndarray) -> np.ndarray:
        """Joint posterior covariance matrix on the rows of ``Xc``."""
        return self.mean_cov(Xc)[1]

    def sample_joint(
        self, Xc: np.ndarray, rng: np.random.Generator, n_samples: int = 1, cov_scale: float = 1.0
    ) -> np.ndarray:
        """Joint draws from ``N(mu(Xc), cov_scale^2 * Cov(Xc))``, shape ``(n_samples, m)``.

        The covariance is factorised with growing jitter; if that fails, an eigen-decomposition
        with negative eigenvalues clipped to zero is used.
        """
        mu, C = self.mean_cov(Xc)
        try:
            F, _ = jittered_cholesky(C, max(float(np.max(np.diag(C), initial=0.0)), 1e-12))
        except NumericalError:
            w, U = np.linalg.eigh(C)
            F = U * np.sqrt(np.maximum(w, 0.0))
        z = rng.standard_normal((Xc.shape[0], n_samples))
        return (mu[:, None] + cov_scale * (F @ z)).T

    def information_gain_increments(self) -> np.ndarray:
        """``0.5 log(1 + sigma_{t-1}^2(x_t) / noise)`` for each observation in order.

        By the chain rule (Srinivas et al., Lemma 5.3) these are ``log L_tt - 0.5 log noise``.
        """
        return np.log(np.diag(self.L)) - 0.5 * np.log(self.effective_noise_var)

    def information_gain(self) -> float:
        """``0.5 log det(I + K / noise)`` of the observed design (sum of the increments)."""
        return float(np.sum(self.information_gain_increments()))
